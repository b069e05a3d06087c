"""The plain "Not found" page, also while DEBUG is on (the demo runs with it).

With DEBUG, Django answers an unknown address or a view's `Http404` with its technical page, which
lists the project's URL patterns. This middleware (last in `MIDDLEWARE`) answers both with the
project's `404.html` instead, the page production shows; `CommonMiddleware` still adds a missing
trailing slash first, since it sees the 404 on the way out.
"""

from django.conf import settings
from django.http import Http404
from django.urls import Resolver404, get_urlconf, resolve
from django.views.defaults import page_not_found


class PlainNotFoundMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if settings.DEBUG:
            try:
                resolve(request.path_info, getattr(request, "urlconf", None) or get_urlconf())
            except Resolver404 as exc:
                return page_not_found(request, exc)
        return self.get_response(request)

    def process_exception(self, request, exception):
        if settings.DEBUG and isinstance(exception, Http404):
            return page_not_found(request, exception)
        return None
