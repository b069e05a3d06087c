"""Who may work on a study."""

from annotation.crowd.errors import NotEligible
from annotation.crowd.models import Study, StudyExclusion, WorkerProfile


def profile_for(user) -> WorkerProfile:
    profile, _ = WorkerProfile.objects.get_or_create(user=user)
    return profile


def check(study: Study, user) -> None:
    """Raise NotEligible with the reason a worker may not take items of this study."""
    if StudyExclusion.objects.filter(study=study, worker=user).exists():
        raise NotEligible("You are no longer part of this study's pool. Thank you for your work.")
    if study.exclude_workers.filter(pk=user.pk).exists():
        raise NotEligible("This study is not open to your account.")
    if study.include_workers.exists() and not study.include_workers.filter(pk=user.pk).exists():
        raise NotEligible("This study is open to invited workers only.")
    # Read the profile without creating one: a refused request writes nothing.
    profile = WorkerProfile.objects.filter(user=user).first()
    if study.required_qualification_id and not (profile and profile.qualifications.filter(
        pk=study.required_qualification_id
    ).exists()):
        raise NotEligible(f"This study needs the qualification '{study.required_qualification.name}'.")
    attributes = (profile.attributes if profile else None) or {}
    for attribute, wanted in (study.required_attributes or {}).items():
        have = attributes.get(attribute)
        allowed = wanted if isinstance(wanted, list) else [wanted]
        if have not in allowed:
            raise NotEligible(f"This study needs workers with {attribute.replace('_', ' ')} "
                              f"{' or '.join(map(str, allowed))}.")


def is_eligible(study: Study, user) -> bool:
    try:
        check(study, user)
    except NotEligible:
        return False
    return True
