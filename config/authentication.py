"""API token authentication that reads the token, its user and the user's roles in one statement.

DRF's `TokenAuthentication` loads the token with its user, and the role check then reads the
user's groups: two ORM queries on every API request. Crowd workers make many small requests,
so here one hand-written query returns the user's row once per group (`Manager.raw` builds the
users, the fields it does not read deferred), and the roles are attached to the user
(`config.roles.user_roles` reads them from there).
"""

from functools import wraps

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.http import HttpResponse
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authentication import get_authorization_header
from rest_framework.authtoken.models import Token

from config.roles import roles_from

USER_FIELDS = ("id", "is_superuser", "username", "is_staff", "is_active")
GROUP = "platform_group"  # the group's name, on each row's user


def _query() -> str:
    user_model = get_user_model()
    quote = connection.ops.quote_name
    memberships = user_model.groups.through._meta.db_table
    columns = ", ".join(f"u.{quote(user_model._meta.get_field(name).column)}" for name in USER_FIELDS)
    return (f"SELECT {columns}, g.name AS {GROUP} FROM {quote(Token._meta.db_table)} t"
            f" JOIN {quote(user_model._meta.db_table)} u ON u.id = t.user_id"
            f" LEFT JOIN {quote(memberships)} m ON m.user_id = u.id"
            f" LEFT JOIN {quote(Group._meta.db_table)} g ON g.id = m.group_id WHERE t.key = %s")


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate_credentials(self, key):
        if "\x00" in key:  # PostgreSQL refuses NUL in text; no token holds one
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        found = list(get_user_model()._default_manager.raw(_query(), [key]))
        if not found:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user = found[0]
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        groups = [getattr(row, GROUP) for row in found]
        user._platform_roles = roles_from(user.is_superuser, [name for name in groups if name])
        return user, key


def accepts_api_token(view):
    """Let a page or file view (not an API view) also take `Authorization: Token <key>`.

    A request without a session but with a token header is signed in as the token's user for this
    request only; the view's own role and object checks then run as for a session. A wrong token is
    401, like the API's answer.
    """

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated and get_authorization_header(request):
            try:
                found = TokenAuthentication().authenticate(request)
            except exceptions.AuthenticationFailed as exc:
                response = HttpResponse(str(exc.detail), status=401, content_type="text/plain; charset=utf-8")
                response["WWW-Authenticate"] = "Token"
                return response
            if found is not None:
                request.user = found[0]
        return view(request, *args, **kwargs)

    return wrapper
