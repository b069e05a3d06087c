"""Crowd work pages: the worker's task page and completion page, the crowd platforms' entry links,
and the curators' study, review-queue and payment pages.

Views stay thin: they parse the request, check roles, call the crowd engine (`annotation.crowd`) and
render. What a page shows is built in `annotation.crowd.task_page` (worker pages) and
`annotation.crowd.curation` (curator pages); instructions are rendered by
`annotation.crowd.instructions` and the payment file by `annotation.crowd.payments`. The browser talks
to the engine's REST endpoints from `frontend/static/frontend/task.js`.
"""

from csp.constants import SELF
from django.contrib.auth import login
from django.http import HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.crowd import (
    assignment,
    curation,
    kinds,
    language,
    payments,
    platforms,
    selectors,
    study_state,
    task_page,
    worker_attributes,
)
from annotation.crowd.access import SUBMISSION_READERS, can_review_submissions
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study
from annotation.crowd.study_forms import StudySettingsForm, WorkerListsForm, save_settings
from annotation.crowd.worker_forms import AttributeRulesForm
from config.content_security import replace_directives
from config.permissions import roles_allowed
from config.roles import ADMIN, ANNOTATOR, CURATOR

WORKERS = (ANNOTATOR, CURATOR, ADMIN)
CURATORS = (CURATOR, ADMIN)
MTURK_ORIGINS = [f"https://{host}" for host in sorted(platforms.MTURK_SUBMIT_HOSTS)]
# MTurk frames its workers' pages, and the completion page's form hands the assignment back to MTurk.
MTURK_FRAMED = {"frame-ancestors": [SELF, *MTURK_ORIGINS], "form-action": [SELF, *MTURK_ORIGINS]}

# the "My tasks" and "Queues" pages of frontend.views build their context here


def public(view):
    """Mark a page that anyone may open, signed in or not (like config.auth_api.TokenView)."""
    view.allowed_roles = "public"
    return view


def _refused(request, exc: CrowdError, study: Study | None = None, *, title: str = ""):
    """A refusal of the crowd engine as a page with its HTTP status (403, 409, 400…), never a 500."""
    titles = {400: _("This link does not work"), 403: _("Not available to you"), 404: _("Not found"),
              409: _("Not available right now"), 413: _("Too large"), 429: _("Too many requests")}
    return render(request, "crowd/error.html", {
        "study": study, "message": exc.message,
        "title": title or getattr(exc, "title", "") or titles.get(exc.status, _("Not available")),
        "status": exc.status,
    }, status=exc.status)


def _unreached(request, study: Study):
    """The refusal page (403) when a platform worker's browser session did not enter this study by its link
    (`platforms.check_reach`), else None."""
    try:
        platforms.check_reach(request, study)
    except CrowdError as exc:
        return _refused(request, exc, study)
    return None


def _frameable_by_mturk(response):
    """MTurk shows an ExternalQuestion inside an iframe on its own site; allow exactly that."""
    response.xframe_options_exempt = True
    return replace_directives(response, MTURK_FRAMED)


# --- Worker pages ----------------------------------------------------------------------------------

@roles_allowed(*WORKERS)
@require_http_methods(["GET", "HEAD", "POST"])
def work(request, slug):
    """GET: the worker's current item (a reload shows the same one), or a page whose button asks for the
    next one, or 'nothing left'; opening the page never claims. POST: claim the next item (or keep the
    current one) and show it."""
    study = get_object_or_404(Study, slug=slug)
    language.activate_for(request, study)
    if (refused := _unreached(request, study)) is not None:
        return refused
    visit = platforms.recalled(request.session, slug)
    assignment_id = visit.assignment_id if visit else ""
    if study.state == Study.State.OPEN and task_page.needs_consent(study, request.user):
        response = render(request, "crowd/consent.html", task_page.consent_context(study))
    elif request.method == "POST":
        response = _claim(request, study, visit)
    else:
        response = _current_or_start(request, study, visit)
    return _frameable_by_mturk(response) if assignment_id else response


def _claim(request, study: Study, visit):
    """Claim the worker's next item (their current one if they hold one), then show it with a GET."""
    try:
        claim = assignment.claim_next(study, request.user, platform_assignment_id=visit.assignment_id if visit else "")
    except CrowdError as exc:
        return _refused(request, exc, study)
    if claim is None:
        return render(request, "crowd/no_items.html", task_page.completion_context(study, request.user, visit))
    return redirect("crowd-work", slug=study.slug)


def _current_or_start(request, study: Study, visit):
    """The worker's current item; without one, the page that starts the next item, or 'nothing left'."""
    claim = assignment.current_claim(study, request.user)
    if claim is None:
        try:
            context = task_page.start_context(study, request.user, visit)
        except CrowdError as exc:
            return _refused(request, exc, study)
        if not context["progress"].has_work:
            return render(request, "crowd/no_items.html", task_page.completion_context(study, request.user, visit))
        return render(request, "crowd/start.html", context)
    task_page.attach_assignment(claim, visit.assignment_id if visit else "")
    if task_page.is_staged(study):
        try:
            context = task_page.staged_task_context(study, claim)
        except CrowdError as exc:
            return _refused(request, exc, study)
        return _private(render(request, "blackswan/step.html", {**context, "visit": visit}))
    return render(request, "crowd/task.html", {**task_page.task_context(study, claim), "visit": visit})


def _private(response):
    """A staged step's page names the clips of that step only: no cache may keep it for a later visit."""
    add_never_cache_headers(response)
    response["Cache-Control"] = "private, no-store, no-cache, must-revalidate, max-age=0"
    return response


@roles_allowed(*WORKERS)
@require_POST
def work_consent(request, slug):
    """The worker agrees to the study's consent / introduction page and goes on to their first item."""
    study = get_object_or_404(Study, slug=slug)
    language.activate_for(request, study)
    if (refused := _unreached(request, study)) is not None:
        return refused
    task_page.give_consent(study, request.user)
    visit = platforms.recalled(request.session, slug)
    response = _claim(request, study, visit)
    return _frameable_by_mturk(response) if visit and visit.assignment_id else response


@roles_allowed(*WORKERS)
def work_done(request, slug):
    """Completion: the study's code and link; MTurk workers' assignment goes back to MTurk."""
    study = get_object_or_404(Study, slug=slug)
    language.activate_for(request, study)
    if (refused := _unreached(request, study)) is not None:
        return refused
    context = task_page.completion_context(study, request.user, platforms.recalled(request.session, slug))
    response = render(request, "crowd/done.html", context)
    return _frameable_by_mturk(response) if "mturk" in context else response


@roles_allowed(*WORKERS)
def past_answer(request, pk):
    """One of the worker's own handed-in items with their answer, read-only; anyone else's is a 404, and so is
    one a platform worker's session does not reach (`platforms.reachable_claims`)."""
    claim = get_object_or_404(platforms.reachable_claims(request, selectors.handed_in_claims_of(request.user)), pk=pk)
    language.activate_for(request, claim.study)
    return render(request, "crowd/past_answer.html", task_page.past_answer_context(claim))


@public
@require_POST
def set_language(request):
    """The language switch of the worker pages: remember the worker's choice and go back to `next`."""
    code = request.POST.get("language", "")
    if code not in language.CODES:
        return HttpResponseBadRequest("Unknown language.")
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        target = reverse("my-tasks")
    response = redirect(target)
    language.choose(request, response, code)
    return response


# --- Crowd platform entry links (public) ----------------------------------------------------------

def _enter(request, study: Study, visit):
    user = platforms.worker_for(visit)
    platforms.enter(study, visit, user)  # 409 for another session of the worker's run: nobody is signed in
    login(request, user, backend=platforms.BACKEND)
    platforms.remember(request.session, study.slug, visit)
    return redirect("crowd-work", slug=study.slug)


def _entry_study(request, slug, platform) -> Study:
    """The study an entry link leads to: 429 past the rate limit, 404 unless it recruits on `platform`."""
    platforms.admit(request)
    study = selectors.study_by_slug(slug)
    if study is None:
        raise CrowdError(_("There is no such study."), status=404)
    language.activate_for(request, study)
    platforms.recruiting(study, platform)
    return study


@public
def prolific_entry(request, slug):
    """`/crowd/prolific/<slug>/?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…`: sign the worker in, go to work.
    Only for a study recruited on Prolific with this STUDY_ID (else 404, nothing created)."""
    study = None
    try:
        study = _entry_study(request, slug, platforms.PROLIFIC)
        visit = platforms.parse_prolific(request.GET)
        platforms.check_run(study, visit)
        return _enter(request, study, visit)
    except CrowdError as exc:
        return _refused(request, exc, study if exc.status != 404 else None)


@public
def mturk_entry(request, slug):
    """`/crowd/mturk/<slug>/?workerId=…&assignmentId=…&hitId=…&turkSubmitTo=…`, for a study recruited
    on Mechanical Turk (and of this HIT, where the study names one; else 404).

    While a worker only previews the HIT (assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE) the page shows
    an example item with the form disabled: no account, no claim.
    """
    study = None
    try:
        study = _entry_study(request, slug, platforms.MTURK)
        visit = platforms.parse_mturk(request.GET)
        platforms.check_run(study, visit)
        if visit.preview and task_page.is_staged(study):
            response = render(request, "blackswan/step.html", task_page.staged_preview_context(study))
        elif visit.preview:
            response = render(request, "crowd/task.html", task_page.preview_context(study))
        else:
            response = _enter(request, study, visit)
    except CrowdError as exc:
        response = _refused(request, exc, study if exc.status != 404 else None)
    return _frameable_by_mturk(response)


# --- Curator pages ---------------------------------------------------------------------------------

@roles_allowed(*CURATORS)
def studies(request):
    return render(request, "crowd/studies.html", curation.studies_context())


@roles_allowed(*CURATORS)
def study_detail(request, slug):
    study = get_object_or_404(selectors.studies_with_settings(), slug=slug)
    base = request.build_absolute_uri("/").rstrip("/")
    return render(request, "crowd/study_detail.html", {
        **curation.study_summary(study),
        "verbs": study_state.moves(study), "rule_lines": worker_attributes.describe(study.required_attributes),
        "prolific_link": base + reverse("crowd-entry-prolific", kwargs={"slug": study.slug})
        + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        "mturk_link": base + reverse("crowd-entry-mturk", kwargs={"slug": study.slug}),
    })


@roles_allowed(*CURATORS)
def study_settings_page(request, slug):
    """GET: a study's settings as a form. POST: save them; values out of range are 400 and a frozen
    setting changed after work started is 409, each with the field's reason (nothing saved)."""
    study = get_object_or_404(Study, slug=slug)
    form = StudySettingsForm(request.POST or None, instance=study)
    lists = WorkerListsForm(request.POST or None, study=study)
    rows_posted = AttributeRulesForm.MARK in request.POST  # a request without the rows keeps the rules
    rules = AttributeRulesForm(request.POST if rows_posted else None, rules=study.required_attributes)
    status = 200
    if request.method == "POST":
        if study.state == Study.State.CLOSED:
            form.add_error(None, "A closed study cannot change.")
            status = 409
        elif all([form.is_valid(), lists.is_valid(), not rows_posted or rules.is_valid()]):
            save_settings(form, lists, rules.rules if rows_posted and rules.has_changed() else None)
            return redirect("crowd-study-detail", slug=study.slug)
        else:
            status = 409 if form.frozen else 400
    return render(request, "crowd/study_settings.html",
                  {"study": study, "form": form, "lists": lists, "rules": rules,
                   "rule_lines": worker_attributes.describe(study.required_attributes),
                   "known_attributes": worker_attributes.KNOWN.values(), "form_kinds": kinds.with_forms(),
                   "output_kinds": kinds.with_output()}, status=status)


@roles_allowed(*SUBMISSION_READERS)
def study_queue(request, slug):
    """One review queue of a study, for whoever may read submissions (annotation.crowd.access); reviewers
    also get the decision controls, which go through the REST endpoints (annotation.crowd.review)."""
    study = get_object_or_404(Study, slug=slug)
    try:
        context = curation.queue_context(study, request.GET.get("queue", "all"), request.GET.get("state", "pending"),
                                         request.GET.get("page"))
    except CrowdError as exc:
        return _refused(request, exc, study)
    return render(request, "crowd/queue.html", {**context, "can_review": can_review_submissions(request.user)})


@roles_allowed(*CURATORS)
def payments_csv(request, slug):
    """Approved work, one row per submission, streamed."""
    study = get_object_or_404(Study, slug=slug)
    response = StreamingHttpResponse(payments.payment_csv_lines(study), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{payments.payment_filename(study)}"'
    return response
