"""The curator's split timeline of a library video (BlackSwanSuite's V_pre / V_main / V_post).

The page draws the video, a thumbnail strip with the scene cuts, and the two boundaries; frontend/
static/frontend/split.js asks the JSON endpoints below for the timeline, for the plan of the
boundaries as they move (`annotation.benchmarks.blackswan.timeline.plan`, the split job's own planning) and for
the splits of the video while their jobs run. "Split" records a `VideoSplit` and queues its job
(`annotation.benchmarks.blackswan.splits.split_library_video`); a flagged (multi-scene) split is filtered out or
split anyway (`resolve_flagged`). The timeline carries the split a localization study suggests (with a
link to the study's report), which "Accept the suggestion" splits with, the authors' 0.17 s trimmed from the
start of V_pre and the end of V_post (`trim_start`, `trim_end`). Curators and admins only.
"""

from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from annotation import selectors
from annotation.benchmarks.blackswan import splits, timeline
from annotation.models import Video
from config.json_bodies import JsonBodyError, request_json
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from generation.splitting import SplitError

IMAGE_CACHE = "private, max-age=600"
DECISIONS = ("split_anyway", "filter_out")


def _error(exc: SplitError | JsonBodyError) -> JsonResponse:
    if isinstance(exc, JsonBodyError):
        return JsonResponse({"error": exc.message}, status=exc.status)
    status = 409 if isinstance(exc, timeline.NotSplittable) else 400
    return JsonResponse({"error": str(exc)}, status=status)


def _request_data(request) -> dict:
    """A POST's fields, sent as JSON (through the JSON body guard) or as a form."""
    if request.content_type == "application/json":
        data = request_json(request)
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise SplitError("The request body must be a JSON object.")
        return data
    return request.POST.dict()


def _with_links(row: dict) -> dict:
    for clip in row["clips"]:
        clip["url"] = reverse("video-detail", kwargs={"pk": clip["video_id"]})
    if row["job"] is not None:
        row["job"]["url"] = reverse("job-detail", kwargs={"pk": row["job"]["id"]})
    row["resolve_url"] = reverse("video-split-resolve", kwargs={"pk": row["id"]})
    return row


def _splits_payload(video: Video) -> dict:
    return {"splits": [_with_links(row) for row in timeline.split_rows(video)]}


@roles_allowed(CURATOR, ADMIN)
@require_safe
def split_page(request, pk):
    video = get_object_or_404(Video, pk=pk)
    return render(request, "frontend/video_split.html", {"video": video})


@roles_allowed(CURATOR, ADMIN)
@require_safe
def split_timeline(request, pk):
    video = get_object_or_404(Video, pk=pk)
    try:
        data = timeline.timeline(video)
    except SplitError as exc:
        return _error(exc)
    data["thumbnails_url"] = reverse("video-split-thumbnails", kwargs={"pk": video.pk})
    if data["suggestion"] is not None:
        data["suggestion"]["url"] = reverse("blackswan-localization", kwargs={"slug": data["suggestion"]["study"]})
    first_frame = reverse("video-split-frame", kwargs={"pk": video.pk, "index": 0})
    data["frame_url"] = first_frame.rsplit("/", 1)[0] + "/{index}.jpg"  # the page fills the index in
    return JsonResponse(data)


@roles_allowed(CURATOR, ADMIN)
@require_safe
def split_thumbnails(request, pk):
    """The thumbnail sprite (`?count=N` tiles); its frame indices are in the X-Frame-Indices header."""
    video = get_object_or_404(Video, pk=pk)
    raw = request.GET.get("count", str(timeline.DEFAULT_THUMBNAILS))
    try:
        if not raw.strip().isdigit():
            raise SplitError(f"The number of thumbnails must be a whole number from 1 to {timeline.MAX_THUMBNAILS}.")
        strip = timeline.thumbnail_strip(video, int(raw))
    except SplitError as exc:
        return _error(exc)
    response = HttpResponse(strip.jpeg, content_type="image/jpeg")
    response["X-Frame-Indices"] = ",".join(map(str, strip.indices))
    response["X-Tile-Size"] = f"{strip.tile_width}x{strip.tile_height}"
    response["Cache-Control"] = IMAGE_CACHE
    return response


@roles_allowed(CURATOR, ADMIN)
@require_safe
def split_frame(request, pk, index):
    video = get_object_or_404(Video, pk=pk)
    try:
        data = timeline.frame_jpeg(video, index)
    except timeline.NotSplittable as exc:
        return _error(exc)
    except SplitError as exc:
        raise Http404(str(exc)) from exc
    response = HttpResponse(data, content_type="image/jpeg")
    response["Cache-Control"] = IMAGE_CACHE
    return response


@roles_allowed(CURATOR, ADMIN)
@require_safe
def split_plan(request, pk):
    """The plan for `start_frame`/`end_frame` (or `start`/`end` in seconds) and `snap`; 400 if refused."""
    video = get_object_or_404(Video, pk=pk)
    try:
        result = timeline.plan_from_request(video, request.GET)
    except SplitError as exc:
        return _error(exc)
    return JsonResponse(result, status=200 if result["ok"] else 400)


@roles_allowed(CURATOR, ADMIN)
@require_POST
def split_create(request, pk):
    """Record a split and queue its job; refused (400, nothing recorded) when the plan is."""
    video = get_object_or_404(Video, pk=pk)
    try:
        data = _request_data(request)
        result = timeline.plan_from_request(video, data)
        if not result["ok"]:
            return JsonResponse(result, status=400)
        split = splits.split_library_video(video, result["event_start"], result["event_end"], request.user,
                                           snap=result["snap"], trim_start=result["trim_start"],
                                           trim_end=result["trim_end"])
    except (SplitError, JsonBodyError) as exc:
        return _error(exc)
    return JsonResponse({"split": _with_links(timeline.split_row(split)), "plan": result}, status=201)


@roles_allowed(CURATOR, ADMIN)
@require_safe
def split_list(request, pk):
    return JsonResponse(_splits_payload(get_object_or_404(Video, pk=pk)))


@roles_allowed(CURATOR, ADMIN)
@require_POST
def split_resolve(request, pk):
    """A flagged split: `decision` = "split_anyway" (a new split that allows several scenes) or "filter_out"."""
    split = get_object_or_404(selectors.splits(), pk=pk)
    try:
        data = _request_data(request)
    except (SplitError, JsonBodyError) as exc:
        return _error(exc)
    decision = str(data.get("decision") or "")
    if decision not in DECISIONS:
        return JsonResponse({"error": "Say what to do with the flagged split: decision = 'split_anyway' or "
                                      "'filter_out'."}, status=400)
    try:
        new = splits.resolve_flagged(split, split_anyway=decision == "split_anyway", user=request.user,
                                     reason=str(data.get("reason") or "")[:2000])
    except SplitError as exc:  # the split is not (or no longer) flagged
        return JsonResponse({"error": str(exc)}, status=409)
    payload = _splits_payload(split.video)
    payload["new_split"] = None if new is None else new.pk
    return JsonResponse(payload)
