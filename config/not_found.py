"""The 404 answer: the API's error body (`{"error": "Not found."}`) under /api/, the plain "Not found" page
elsewhere, also while DEBUG is on (the demo runs with it).

`not_found` is the project's `handler404`: an address no route matches (an API id with a dot or out of
range, `config.ids`, included) or a view's `Http404`. With DEBUG, Django would answer both with its
technical page, which lists the project's URL patterns; the middleware (last in `MIDDLEWARE`) answers them
with `not_found` instead, as production does; `CommonMiddleware` still adds a missing trailing slash first,
since it sees the 404 on the way out.
"""

from django.conf import settings
from django.http import Http404, JsonResponse
from django.urls import Resolver404, get_urlconf, resolve
from django.views.defaults import page_not_found
from rest_framework.exceptions import NotFound

from config.middleware import API_PREFIX


def not_found(request, exception=None):
    if request.path.startswith(API_PREFIX):
        message = str(NotFound.default_detail)
        return JsonResponse({"error": message, "detail": message}, status=404)
    return page_not_found(request, exception)


class PlainNotFoundMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if settings.DEBUG:
            try:
                resolve(request.path_info, getattr(request, "urlconf", None) or get_urlconf())
            except Resolver404 as exc:
                return not_found(request, exc)
        return self.get_response(request)

    def process_exception(self, request, exception):
        if settings.DEBUG and isinstance(exception, Http404):
            return not_found(request, exception)
        return None
