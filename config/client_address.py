"""The client's address for per-address limits (failed logins, crowd entry links): the connection's
REMOTE_ADDR, or, behind a proxy, the header named by `CLIENT_ADDRESS_HEADER` (deploy/nginx.conf sets
X-Real-IP). A header holding a list (X-Forwarded-For) gives its last entry, the one the proxy saw."""

from django.conf import settings


def client_address(request) -> str:
    header = settings.CLIENT_ADDRESS_HEADER
    if header:
        forwarded = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        if forwarded.strip():
            return forwarded.split(",")[-1].strip()[:64]
    return request.META.get("REMOTE_ADDR", "") or "unknown"
