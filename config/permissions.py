from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

from config.roles import has_role, user_roles


class HasRole(BasePermission):
    """Allow a request when the user holds one of the view's `allowed_roles`.

    A view may narrow the roles per action with `action_roles = {"create": (...), ...}`.
    A view that declares nothing refuses everybody: every endpoint must be classified.
    """

    message = "Your role does not allow this."

    def has_permission(self, request, view):
        allowed = roles_for(view)
        if allowed is None:
            return False
        return bool(user_roles(request.user) & set(allowed))


def roles_for(view):
    action_roles = getattr(view, "action_roles", None) or {}
    action = getattr(view, "action", None)
    if action in action_roles:
        return action_roles[action]
    return getattr(view, "allowed_roles", None)


def roles_allowed(*roles: str):
    """Page and file views: anonymous users go to the login page, other roles get 403."""

    def decorate(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not has_role(request.user, *roles):
                raise PermissionDenied("Your role does not allow this page.")
            return view(request, *args, **kwargs)

        wrapper.allowed_roles = roles
        return wrapper

    return decorate


class RoleRequiredMixin:
    """The same rule for class-based pages: set `allowed_roles` on the view."""

    allowed_roles: tuple[str, ...] = ()

    def dispatch(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not self.allowed_roles or not has_role(request.user, *self.allowed_roles):
            raise PermissionDenied("Your role does not allow this page.")
        return super().dispatch(request, *args, **kwargs)
