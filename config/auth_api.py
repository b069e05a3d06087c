from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import Throttled
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from config import login_throttle
from config.client_address import client_address
from config.json_bodies import body_fields
from config.roles import ANY_ROLE, user_roles


class TokenView(ObtainAuthToken):
    """Exchange a username and password for an API token (send it as `Authorization: Token <key>`).

    Failed attempts are throttled per username and per address (`config.login_throttle`): 429.
    """

    permission_classes = [AllowAny]
    allowed_roles = "public"
    rate_limited = True
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES  # DRF's own view names its parsers; use the guarded ones

    def post(self, request, *args, **kwargs):
        username = str(body_fields(request).get("username") or "")
        wait = login_throttle.retry_after(username, client_address(request))
        if wait:
            raise Throttled(wait=wait, detail=login_throttle.REFUSAL)  # DRF adds the wait
        response = super().post(request, *args, **kwargs)  # a wrong password is counted where Django reports it
        login_throttle.record_success(username)
        return response


class WhoAmIView(APIView):
    allowed_roles = ANY_ROLE

    @extend_schema(responses=inline_serializer("WhoAmI", {
        "username": serializers.CharField(), "roles": serializers.ListField(child=serializers.CharField())}))
    def get(self, request):
        return Response({"username": request.user.username, "roles": sorted(user_roles(request.user))})
