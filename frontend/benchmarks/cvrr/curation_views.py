"""The CVRR-ES curation pages, for curators (seeds/003 §3.2; SPEC §4 "Curation"):

- `/cvrr/`: the hub, a list of the pipeline's pages (`HUB_LINKS`);
- `/cvrr/dimensions/` and `/cvrr/dimensions/<key>/`: the 11 dimensions as data, each with its name,
  description, caption guideline and QA-generation instruction, edited with who and when
  (`annotation.benchmarks.cvrr.dimension_records`);
- `/cvrr/videos/`: the video pool, and a ready library video assigned to a dimension with its source
  and metadata (`annotation.benchmarks.cvrr.video_pool`);
- `/cvrr/captions/`: the captioning studies, a new one over the videos awaiting a caption
  (`annotation.benchmarks.cvrr.captions`), and the videos whose captions are in;
  `/cvrr/captions/studies/<slug>/` the same for one study; `/cvrr/captions/<item id>/` both captions
  beside the video, to pick one or merge them (`annotation.benchmarks.cvrr.caption_choice`).

Views only read the request, call those services and render; a refusal is shown with its status.
"""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from annotation import selectors as media_selectors
from annotation.benchmarks.cvrr import caption_choice, captions, dimension_records, stages, video_pool
from annotation.benchmarks.cvrr.dimensions import DIMENSIONS
from annotation.benchmarks.cvrr.payload import VIDEO_SOURCES
from annotation.benchmarks.cvrr.pools import CurationError, find_video_pool
from annotation.crowd.errors import CrowdError
from annotation.models import MediaAsset, Video
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from frontend import category_editor
from frontend.refusals import refused

CURATORS = (CURATOR, ADMIN)
CRUMBS = (("CVRR-ES curation", "cvrr-curation"),)  # above a refusal on its pages
MEDIA_CHOICES = 200  # the newest ready videos offered for assignment

# The pipeline's pages, in the paper's order: (label, URL name, what it is for). A later step of the
# pipeline adds its page here.
HUB_LINKS = [
    ("Dimensions", "cvrr-dimensions",
     "The 11 evaluation dimensions: descriptions, caption guidelines and QA-generation instructions."),
    ("Videos in dimensions", "cvrr-videos",
     "The video pool: library videos assigned to a dimension with their source and metadata."),
    ("Captioning", "cvrr-captions",
     "Captioning studies (two annotators per video) and the captions to merge or pick for QA generation."),
    ("QA pairs", "cvrr-qa",
     "QA pairs proposed by a text model from the chosen captions, and their filtration studies (keep, fix, "
     "remove with a reason)."),
    ("Filtration noise", "cvrr-qa-noise",
     "Per dimension, the pairs proposed, kept, fixed and removed (by reason) in filtration."),
    ("Expert assessment", "cvrr-experts",
     "Experts (the cvrr-expert group) judge a sample of QA pairs covering every video; the three rates per "
     "dimension, agreement, and the pairs sent back to filtration."),
]


def _names() -> dict:
    return {row.key: row.name for row in dimension_records.ensure_dimensions()}


def _refused(request, exc):
    return refused(request, exc.message, exc.status, CRUMBS)


@roles_allowed(*CURATORS)
@require_safe
def hub(request):
    pool = find_video_pool()
    counts = {stage: 0 for stage, _ in stages.STAGES}
    for item in video_pool.pool_items():
        record = getattr(item, "curation", None)
        if record is not None and record.stage in counts:
            counts[record.stage] += 1
    return render(request, "cvrr/hub.html", {
        "links": [{"label": label, "url": reverse(name), "about": about} for label, name, about in HUB_LINKS],
        "pool": pool, "stage_counts": [(label, counts[stage]) for stage, label in stages.STAGES[:2]]})


@roles_allowed(*CURATORS)
@require_safe
def dimensions_page(request):
    return render(request, "cvrr/dimensions.html", {"rows": dimension_records.ensure_dimensions()})


dimension_page = category_editor.edit_view(category_editor.CategoryEditor(
    find=dimension_records.dimension,
    blank_form=lambda row: dimension_records.DimensionForm(initial=dimension_records.initial(row)),
    save=dimension_records.edit_dimension, refusal=CurationError, invalid=dimension_records.DimensionInvalid,
    list_url="cvrr-dimensions", crumbs=(*CRUMBS, ("dimensions", "cvrr-dimensions")), form_id="dimension-form"))


def _videos_context(dimension: str = "") -> dict:
    names = _names()
    return {
        "rows": [video_pool.row(item, names) for item in video_pool.pool_items(dimension)],
        "dimensions": list(names.items()), "filter": dimension,
        "sources": [(value, video_pool.SOURCE_LABELS[value]) for value in VIDEO_SOURCES],
        "videos": media_selectors.library_assets(Video, status=MediaAsset.Status.READY)[:MEDIA_CHOICES],
        "metadata_limit": video_pool.MAX_METADATA_BYTES,
    }


@roles_allowed(*CURATORS)
def videos_page(request):
    """GET: the video pool (`?dimension=` filters it) and the assignment form. POST: assign a video (400
    naming the problem, 409 for a frozen pool; nothing written then)."""
    dimension = (request.GET.get("dimension") or "").strip()
    if dimension and dimension not in DIMENSIONS:
        return refused(request, f"{dimension[:80]!r} is not a CVRR-ES dimension.", 400, CRUMBS)
    if request.method != "POST":
        return render(request, "cvrr/videos.html", _videos_context(dimension))
    data = request.POST
    try:
        item = video_pool.assign_video(request.user, data.get("video", ""), data.get("dimension", ""),
                                       data.get("source", ""), data.get("metadata", ""))
    except CurationError as exc:
        return render(request, "cvrr/videos.html", {**_videos_context(dimension), "error": exc.message,
                                                    "posted": data}, status=exc.status)
    messages.success(request, f"Video {item.external_id} is in the pool.")
    return redirect("cvrr-videos")


def _captions_context(study=None) -> dict:
    return {"listing": caption_choice.listed(study, _names()), "study": study,
            "studies": caption_choice.caption_studies(), "awaiting": captions.awaiting_caption().count(),
            "captioners": captions.CAPTIONERS}


@roles_allowed(*CURATORS)
@require_safe
def captions_page(request):
    return render(request, "cvrr/captions.html", _captions_context())


@roles_allowed(*CURATORS)
@require_safe
def caption_study_page(request, slug):
    try:
        study = caption_choice.captioning_study(slug)
    except CurationError as exc:
        return _refused(request, exc)
    return render(request, "cvrr/captions.html", _captions_context(study))


def _k(raw) -> int:
    text = str(raw or captions.CAPTIONERS).strip()
    if not text.isdigit():
        raise CrowdError("Annotators per video is a whole number.")
    return int(text)


@roles_allowed(*CURATORS)
@require_POST
def caption_study_new(request):
    """A captioning study over every video awaiting a caption (a draft, or open with `open`); 400 on bad
    settings, 409 when no video awaits a caption."""
    data = request.POST
    try:
        study = captions.create_caption_study(
            request.user, (data.get("name") or "").strip(), k=_k(data.get("k")),
            open_now=bool(data.get("open")))
    except CrowdError as exc:
        return render(request, "cvrr/captions.html", {**_captions_context(), "error": exc.message},
                      status=exc.status)
    messages.success(request, f"Captioning study “{study.name}” created with {study.items.count()} video(s).")
    return redirect("crowd-study-detail", slug=study.slug)


def _caption_context(item, names=None) -> dict:
    row = video_pool.row(item, names or _names())
    found = caption_choice.captions(item)
    chosen = (row["record"].working or {}).get("caption") if row["record"] else None
    return {"row": row, "item": item, "captions": found, "chosen": chosen, "editable": not item.version.frozen,
            "merge_text": row["caption"] or "\n\n".join(caption.text for caption in found),
            "limits": (captions.MIN_CAPTION, captions.MAX_CAPTION)}


@roles_allowed(*CURATORS)
def caption_page(request, item_id):
    """GET: the video with its captions side by side. POST: pick one (`how=picked`, `submission`) or save
    a merged text (`how=merged`, `submission` repeated, `text`); 400 on bad input, 404 for an item that
    is no pool video, 409 for a frozen pool (nothing written then)."""
    try:
        item = video_pool.pool_item(item_id)
    except CurationError as exc:
        return _refused(request, exc)
    if request.method != "POST":
        return render(request, "cvrr/caption.html", _caption_context(item))
    data = request.POST
    try:
        item = caption_choice.choose_caption(item.pk, request.user, how=data.get("how", ""),
                                             sources=data.getlist("submission"), text=data.get("text", ""))
    except CurationError as exc:
        return render(request, "cvrr/caption.html", {**_caption_context(item), "error": exc.message,
                                                     "merge_text": data.get("text", "")}, status=exc.status)
    messages.success(request, f"The caption of {item.external_id} is saved.")
    return redirect("cvrr-caption", item_id=item.pk)
