"""The language of the pages a worker sees.

A study sets the language of its pages (`Study.language`); a worker who picks another one with the
switch on the worker pages keeps it: in a cookie for this browser and, when signed in, on their
profile, so it follows them to another device. The worker's choice wins over the study's; pages not
about one study (the task list) use the choice or else the browser's Accept-Language, as Django's
LocaleMiddleware picks it. The REST calls of the task page send the page's language as
Accept-Language, so their messages come back in the language of the page without a database read.
"""

from django.conf import settings
from django.utils import translation

from annotation.crowd.models import WorkerProfile

CODES = frozenset(code for code, _ in settings.LANGUAGES)
COOKIE_MAX_AGE = 365 * 24 * 3600


def chosen(request) -> str:
    """The worker's own choice: this browser's cookie, else the one kept on their profile; empty if none."""
    code = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME, "")
    if code in CODES:
        return code
    if request.user.is_authenticated:
        code = WorkerProfile.objects.filter(user=request.user).values_list("language", flat=True).first()
    return code if code in CODES else ""


def page_language(request, study=None) -> str:
    """The worker's choice, else the study's language, else what the browser asks for."""
    code = chosen(request)
    if not code and study is not None and study.language in CODES:
        code = study.language
    return code or translation.get_language_from_request(request)


def activate_for(request, study=None) -> str:
    """Render the rest of this request in the worker's page language; returns it."""
    code = page_language(request, study)
    translation.activate(code)
    request.LANGUAGE_CODE = code
    return code


def choose(request, response, code: str) -> None:
    """Remember the worker's choice: a cookie on `response` and, when signed in, on their profile."""
    response.set_cookie(settings.LANGUAGE_COOKIE_NAME, code, max_age=COOKIE_MAX_AGE, path=settings.LANGUAGE_COOKIE_PATH,
                        samesite=settings.LANGUAGE_COOKIE_SAMESITE, secure=settings.LANGUAGE_COOKIE_SECURE or None,
                        httponly=settings.LANGUAGE_COOKIE_HTTPONLY)
    if request.user.is_authenticated:
        WorkerProfile.objects.update_or_create(user=request.user, defaults={"language": code})
