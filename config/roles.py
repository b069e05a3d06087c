"""The four roles of the platform and how a user's role set is read.

Roles are Django groups. A superuser has every role. Views declare the roles that may use
them (`allowed_roles`); `config.permissions` enforces it for API views and
`frontend.views.RoleRequiredMixin` for pages.
"""

ANNOTATOR = "annotator"
CURATOR = "curator"
RESEARCHER = "researcher"
ADMIN = "admin"

ALL_ROLES = (ANNOTATOR, CURATOR, RESEARCHER, ADMIN)
STAFF_ROLES = (CURATOR, RESEARCHER, ADMIN)
ANY_ROLE = ALL_ROLES

# Django model permissions given to each role's group (app_label.codename).
GROUP_PERMISSIONS = {
    ANNOTATOR: [],
    CURATOR: [
        "annotation.add_video", "annotation.change_video", "annotation.view_video",
        "annotation.add_image", "annotation.change_image", "annotation.view_image",
        "annotation.view_benchmark", "annotation.add_benchmarkversion",
        "annotation.change_benchmarkversion", "annotation.view_benchmarkversion",
        "annotation.add_benchmarkitem", "annotation.change_benchmarkitem",
        "annotation.view_benchmarkitem", "generation.view_job",
    ],
    RESEARCHER: [
        "annotation.view_video", "annotation.view_image", "annotation.view_benchmark",
        "annotation.view_benchmarkversion", "annotation.view_benchmarkitem", "generation.view_job",
        "evaluation.view_evaluationrun", "evaluation.view_prediction", "evaluation.view_judgment",
        "annotation.view_submission",
    ],
    ADMIN: ["*"],
}


def user_roles(user) -> set[str]:
    if user is None or not user.is_authenticated or not user.is_active:
        return set()
    cached = getattr(user, "_platform_roles", None)
    if cached is not None:
        return cached
    names = () if user.is_superuser else user.groups.values_list("name", flat=True)
    user._platform_roles = roles_from(user.is_superuser, names)
    return user._platform_roles


def roles_from(is_superuser: bool, group_names) -> set[str]:
    """The roles of a user with these group names: a superuser or an admin has every role."""
    roles = set(ALL_ROLES) if is_superuser else set(group_names) & set(ALL_ROLES)
    return set(ALL_ROLES) if ADMIN in roles else roles


def has_role(user, *roles: str) -> bool:
    return bool(user_roles(user) & set(roles))


def primary_role(user) -> str | None:
    """The role whose navigation a user sees first (the most privileged one)."""
    roles = user_roles(user)
    for role in (ADMIN, CURATOR, RESEARCHER, ANNOTATOR):
        if role in roles:
            return role
    return None
