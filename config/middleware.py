"""Guards every request passes before its view: bodies over their limit, NUL characters, and query parameters
the API does not take.

A body over its limit is answered 413 before it is read (`config.uploads`), with the API's error body under
/api/ (or for a JSON body) and a page elsewhere; so is Django's refusal of a form the guards below read (fields over
`DATA_UPLOAD_MAX_MEMORY_SIZE`: 413; too many fields or files: 400), since they read it first.

Requests whose address, query string or form fields hold a NUL character are answered 400.

PostgreSQL refuses NUL in text (the driver raises before the query runs), so a NUL that reached a
filter or a lookup would end as a server error. Pages' forms are checked whether urlencoded or
multipart; the API's multipart uploads are left to DRF, whose serializers' text fields refuse NUL
(and whose upload views must not have their files parsed early). JSON bodies get the same check,
and more, in `config.json_bodies`.

An API operation refuses query parameters its schema does not list (400 naming them: `config.query_parameters`).
"""

from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from config import query_parameters, uploads

API_PREFIX = "/api/"
FORM_TYPE = "application/x-www-form-urlencoded"
MULTIPART_TYPE = uploads.MULTIPART_TYPE


class RefuseOversizedBodiesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        refused = uploads.declared_too_large(request)
        if refused is None and request.method == "POST" and _is_checked_form(request):
            try:
                request.POST  # noqa: B018  (read here, where a refusal of the form can still be answered)
            except uploads.FORM_REFUSALS as exc:
                refused = exc
        if refused is None:
            return self.get_response(request)
        status, message = uploads.form_refusal(refused)
        if request.path.startswith(API_PREFIX) or uploads.is_json(request.content_type or ""):
            return JsonResponse({"error": message}, status=status)
        return render(request, "crowd/error.html", {"title": _("Too large"), "message": message, "status": status},
                      status=status)


def nul_in_request(request) -> str:
    """Where the request carries a NUL character ("" when it carries none)."""
    if "\x00" in request.path:
        return "the address"
    if _has_nul(request.GET):
        return "the query string"
    if request.method == "POST" and _is_checked_form(request) and _has_nul(request.POST):
        return "the form"
    return ""


def _is_checked_form(request) -> bool:
    return request.content_type == FORM_TYPE or (
        request.content_type == MULTIPART_TYPE and not request.path.startswith(API_PREFIX))


def _has_nul(data) -> bool:
    return any("\x00" in key or any("\x00" in value for value in values) for key, values in data.lists())


class RefuseNulCharactersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        where = nul_in_request(request)
        if not where:
            return self.get_response(request)
        message = f"A NUL character (%00) in {where} is not allowed."
        if request.path.startswith(API_PREFIX):
            return JsonResponse({"error": message}, status=400)
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")


class RefuseUnknownQueryParametersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if not request.path.startswith(API_PREFIX) or not request.GET:
            return None
        body = query_parameters.refusal(view_func, request.method, request.GET.keys())
        return JsonResponse(body, status=400) if body else None
