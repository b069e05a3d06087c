"""BlackSwanSuite pages for curators.

- Variants: build a preview from a finished staged-reveal study, read it, and freeze it as a benchmark
  version. The work is done by `annotation.benchmarks.blackswan.versions` (the preview is the
  `blackswan_build_variants` job's result); these pages only start it, show it and pass the curator's
  choice on.
- Localization: a localization study's videos with their annotators' marks, the time the authors' rule
  gives, the agreement and the suggested split (`annotation.benchmarks.blackswan.localization_study`), poorly
  agreed videos flagged and, on request (`?hide_poor=1`), hidden; each links its split timeline. `?rule=spread`
  reads the marks with the other agreement rule (`localization.RULES`).
- Captions: the accepted +P/+PC captions of a captions study (`annotation.benchmarks.blackswan.caption_study`),
  applied to an unfrozen version.
"""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_safe

from annotation.benchmarks.blackswan import caption_study, localization, localization_study, variants, versions
from annotation.benchmarks.blackswan.selectors import localization_studies, staged_studies
from annotation.crowd.errors import CrowdError
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from generation.models import Job
from generation.selectors import jobs_of_kind

RECENT_JOBS = 20
SAMPLE_SIZE = 12  # MCQs and Y/N rows shown on the preview page, each
MCQ_RULE_CHOICES = (  # the first is the default
    (variants.RELEASE_RULES, "release (the authors' construction, Table 1's counts)"),
    (variants.PAPER_RULES, "paper (the paper's text)"),
)


def build_jobs():
    return jobs_of_kind(versions.JOB_KIND)


def _variants_page(request, error: str = "", status: int = 200):
    return render(request, "blackswan/variants.html",
                  {"studies": staged_studies(), "jobs": build_jobs().order_by("-created_at")[:RECENT_JOBS],
                   "mcq_rule_choices": MCQ_RULE_CHOICES, "error": error}, status=status)


@roles_allowed(CURATOR, ADMIN)
def variants_page(request):
    """GET: the staged-reveal studies and the recent preview jobs. POST `study` (and `mcq_rules`, default
    release): build a preview of its claims."""
    if request.method != "POST":
        return _variants_page(request)
    slug = (request.POST.get("study") or "").strip()
    if not slug:
        return _variants_page(request, "Choose a staged-reveal study to build a preview from.", 400)
    try:
        rules = variants.check_rules((request.POST.get("mcq_rules") or variants.RELEASE_RULES).strip())
        pairs, origins = versions.staged_pairs(slug)
        job = versions.start_build(pairs, origins=origins, user=request.user, mcq_rules=rules)
    except variants.VariantsError as exc:
        return _variants_page(request, str(exc), 400)
    return redirect("blackswan-variants-preview", pk=job.pk)


def proposals_url() -> str:
    try:
        return reverse("admin:generation_proposal_changelist")
    except NoReverseMatch:
        return ""


def sample(items: list[dict]) -> dict:
    """The first MCQs (options with the correct one marked) and Y/N rows of the preview."""
    mcqs, yes_no = [], []
    for item in items:
        payload = item["payload"]
        if payload["kind"] == "mcq" and len(mcqs) < SAMPLE_SIZE:
            options = [(text, i == payload["mcq_label"]) for i, text in enumerate(payload["mcq_options"])]
            mcqs.append({"external_id": item["external_id"], "video_id": payload["id"],
                         "task": variants.TASK_NAMES.get(payload["mcq_task"], payload["mcq_task"]), "options": options})
        elif payload["kind"] == "yn" and len(yes_no) < SAMPLE_SIZE:
            yes_no.append({"external_id": item["external_id"], "video_id": payload["id"],
                           "task": variants.TASK_NAMES.get(payload["def_task"], payload["def_task"]),
                           "statement": payload["exp"], "label": payload["def_label"]})
    return {"mcqs": mcqs, "yes_no": yes_no}


@roles_allowed(CURATOR, ADMIN)
def preview_page(request, pk):
    """GET: the preview held by build job `pk`. POST `label` (and `skip_pending`): freeze it as a version."""
    job = get_object_or_404(build_jobs(), pk=pk)
    error, status = "", 200
    label, skip_pending = "", False
    if request.method == "POST":
        label = (request.POST.get("label") or "").strip()
        skip_pending = request.POST.get("skip_pending") in ("on", "1", "true", "yes")
        try:
            version = versions.freeze_variants(job, label, request.user, skip_pending=skip_pending)
        except variants.VariantsError as exc:
            error, status = str(exc), 400
        else:
            return redirect("version-detail", pk=version.pk)
    ready = job.status == Job.Status.SUCCEEDED and isinstance(job.result, dict) and "counts" in job.result
    context = {"job": job, "ready": ready, "error": error, "label": label, "skip_pending": skip_pending,
               "proposals_url": proposals_url()}
    if ready:
        result = job.result
        counts = result["counts"]
        context.update({
            "result": result,
            "counts": counts,
            "variant_rows": [(name, n) for name, n in counts["variants"].items()],
            "hard_rows": [(name, n) for name, n in counts["hard"].items() if name != "videos"],
            "pending_rows": [(name, n) for name, n in counts["pending"].items()],
            "sample": sample(result["items"]),
            "captions": caption_study.fill_items(result["items"])[1],
        })
    return render(request, "blackswan/variants.html", context, status=status)


@roles_allowed(CURATOR, ADMIN)
@require_safe
def localization_page(request, slug):
    """A localization study's report: per video its marks, time, agreement, flag and suggested split."""
    study = get_object_or_404(localization_studies(), slug=slug)
    hide_poor = request.GET.get("hide_poor") in ("1", "on", "true", "yes")
    rule = (request.GET.get("rule") or localization.DEFAULT_RULE).strip()
    try:
        report = localization_study.localization_report(study, rule)
    except CrowdError as exc:
        return render(request, "crowd/error.html", {"study": study, "message": exc.message, "status": exc.status,
                                                    "title": "No such agreement rule"}, status=exc.status)
    videos = localization_study.shown_videos(report, hide_poor=hide_poor)
    for row in videos:
        row["split_url"] = reverse("video-split", kwargs={"pk": row["video_id"]}) if row["video_id"] else ""
    return render(request, "blackswan/localization.html",
                  {"study": study, "report": report, "videos": videos, "hide_poor": hide_poor,
                   "hidden": len(report["videos"]) - len(videos), "rules": localization.RULES})


def _captions_page(request, study, error: str = "", status: int = 200, version_label: str = ""):
    return render(request, "blackswan/captions.html",
                  {"study": study, "rows": caption_study.study_rows(study),
                   "versions": caption_study.unfrozen_versions(), "error": error,
                   "version_label": version_label}, status=status)


@roles_allowed(CURATOR, ADMIN)
def captions_page(request, slug):
    """GET: the videos of +P/+PC captions study `slug` with their accepted captions. POST `version` (a label):
    fill the accepted captions into that unfrozen BlackSwanSuite version (404 for no such version, 409 for
    a frozen one)."""
    try:
        study = caption_study.caption_study(slug)
    except CrowdError as exc:
        raise Http404(exc.message) from None
    if request.method != "POST":
        return _captions_page(request, study)
    label = (request.POST.get("version") or "").strip()
    if not label:
        return _captions_page(request, study, "Choose an unfrozen BlackSwanSuite version.", 400)
    try:
        applied = caption_study.apply_captions(label, request.user)
    except CrowdError as exc:
        return _captions_page(request, study, exc.message, exc.status, label)
    messages.success(request, applied.message)
    return redirect("blackswan-captions", slug=study.slug)
