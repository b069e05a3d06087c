"""BlackSwanSuite's variants pages for curators: build a preview from a finished staged-reveal study, read it,
and freeze it as a benchmark version. The work is done by `annotation.benchmarks.blackswan.versions` (the
preview is the `blackswan_build_variants` job's result); these pages only start it, show it and pass the
curator's choice on."""

from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse

from annotation.benchmarks.blackswan import caption_study, variants, versions
from annotation.benchmarks.blackswan.selectors import staged_studies
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
