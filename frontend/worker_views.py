"""Curators' worker pages: workers with their attributes, one worker's attributes to edit, and the
import of a crowd platform's demographics file onto workers' attributes
(`annotation.crowd.worker_profiles`, `annotation.crowd.attribute_import`)."""

from urllib.parse import urlencode

from django.http import Http404
from django.shortcuts import redirect, render

from annotation.crowd import attribute_import, worker_attributes, worker_profiles
from annotation.crowd.worker_forms import AttributeImportForm, WorkerAttributesForm
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR

CURATORS = (CURATOR, ADMIN)


@roles_allowed(*CURATORS)
def workers(request):
    query = request.GET.get("q", "")
    page = worker_profiles.page_of_profiles(query, request.GET.get("page"))
    return render(request, "crowd/workers.html", {
        "page": page, "query": query, "extra": urlencode({"q": query}) if query else "",
        "known": list(worker_attributes.KNOWN.values()),
        "rows": [(profile, [(profile.attributes or {}).get(name, "") for name in worker_attributes.KNOWN])
                 for profile in page]})


@roles_allowed(*CURATORS)
def worker_attributes_page(request, username):
    """GET: a worker's known attributes as a form. POST: save them (unreadable values: 400, nothing saved)."""
    profile = worker_profiles.profile_of(username)
    if profile is None:
        raise Http404("No such worker.")
    form = WorkerAttributesForm(request.POST or None, initial=worker_profiles.known_values(profile))
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                worker_profiles.set_known(profile, form.cleaned_data)
                return redirect("crowd-workers")
            except worker_profiles.AttributesRefused as exc:
                for name, message in exc.details.items():
                    form.add_error(name, message)
        status = 400
    others = {k: v for k, v in (profile.attributes or {}).items() if k not in worker_attributes.KNOWN}
    return render(request, "crowd/worker_attributes.html",
                  {"profile": profile, "form": form, "others": others}, status=status)


@roles_allowed(*CURATORS)
def import_attributes(request):
    """GET: the upload form. POST: import the file and show the report; a malformed file or mapping
    is 400 with the reason and writes nothing."""
    form = AttributeImportForm(request.POST or None, request.FILES or None)
    report, status = None, 200
    if request.method == "POST":
        if form.is_valid():
            try:
                report = attribute_import.import_attributes(
                    form.cleaned_data["file"].read(), platform=form.cleaned_data["platform"],
                    mapping=form.cleaned_data["mapping"] or None)
            except attribute_import.ImportRefused as exc:
                form.add_error(None, exc.message)
        if report is None:
            status = 400
    return render(request, "crowd/worker_import.html", {"form": form, "report": report}, status=status)
