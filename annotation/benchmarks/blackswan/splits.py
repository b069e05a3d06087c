"""Splitting a library video into BlackSwanSuite's parts, as a background job that stores the clips.

`split_library_video(video, event_start, event_end, user)` records a `VideoSplit` and queues a
`blackswan_split` job on the `generation` queue (`trim_start` / `trim_end` seconds are cut from the
start of V_pre and the end of V_post: a localization study's suggestion trims the authors' 0.17 s).
The job decodes the video once, finds its scene cuts and plans the frame boundaries
(`generation.splitting`), then:

- a video with more than one scene is **flagged**, not split: the curator either filters it out
  or has it split anyway (`resolve_flagged`), which queues a new split that allows it;
- otherwise it cuts V_pre, V_main, V_post, the Detective clip and the full clip, and ingests each
  as a library `Video` (source "derived") whose `provenance` names the parent video (id and
  checksum), the part, its frame range and times, the event as given, the split parameters and
  the encoder (ffmpeg version and settings). The five videos and the split's state are committed
  together; if anything fails, no clip row and no stored file is left behind. A clip whose bytes
  are already in the library (the same full clip cut again, say) is reused, not stored twice.

Splitting again with other boundaries makes a new `VideoSplit`; earlier ones are kept as
history. Every state change is checked against `VideoSplit.STATES` and appended to the
insert-only state history (`config.StateChange`).
"""

import os
import tempfile
from pathlib import Path

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from annotation.media import Incoming, MediaRejected, ingest
from annotation.models import MediaAsset, Video, VideoSplit
from config import state
from generation import jobs, splitting
from generation.jobs import job_handler
from generation.media_probe import MediaError, poster_jpeg, probe_video
from generation.splitting import CLIPS, PART_LABELS, SplitError

JOB_KIND = "blackswan_split"
FINISHED = {VideoSplit.Status.DONE, VideoSplit.Status.FLAGGED, VideoSplit.Status.FAILED,
            VideoSplit.Status.REJECTED, VideoSplit.Status.OVERRIDDEN}


def transition(split: VideoSplit, to_state: str, *, actor=None, reason: str = "", **fields) -> VideoSplit:
    """Move a split to another state (if `VideoSplit.STATES` allows it) and record the change."""
    if to_state in FINISHED:
        fields.setdefault("finished_at", timezone.now())
    try:
        state.transition(split, to_state, actor, reason[:2000], **fields)
    except state.TransitionRefused as refused:
        raise SplitError(f"Split #{split.pk} is {VideoSplit.Status(refused.current).label.lower()}; "
                         f"it cannot become {VideoSplit.Status(to_state).label.lower()}.") from None
    split.refresh_from_db()
    return split


def split_library_video(video: Video, event_start: float, event_end: float, user=None, *, snap: bool = True,
                        snap_tolerance: float = splitting.DEFAULT_SNAP_TOLERANCE,
                        allow_multi_scene: bool = False, trim_start: float = 0.0,
                        trim_end: float = 0.0) -> VideoSplit:
    """Record a split of `video` and queue its job (sent when the transaction commits).

    Returns the new `VideoSplit`; its `job` is the queued `blackswan_split` job. Raises
    `SplitError` at once, recording nothing, for times that cannot be right whatever the frames
    say (not numbers, negative, out of order, past the end of the probed video) and for a video
    that is not ready; frame-exact checks (each part ≥ 1 s) run in the job.
    """
    try:
        event_start, event_end = float(event_start), float(event_end)
    except (TypeError, ValueError) as exc:
        raise SplitError("The event start and end must be numbers of seconds.") from exc
    if event_start < 0:
        raise SplitError(f"The event start ({event_start:g} s) is before the start of the video.")
    if event_start >= event_end:
        raise SplitError(f"The event start ({event_start:g} s) must come before its end ({event_end:g} s).")
    if video.status != MediaAsset.Status.READY or not video.file:
        raise SplitError(f"“{video.title}” is not ready yet (it is still being probed).")
    if video.duration and event_end > video.duration + 1 / (video.fps or 25):
        raise SplitError(f"The event end ({event_end:g} s) is past the end of the video ({video.duration:g} s).")
    if snap_tolerance < 0:
        raise SplitError("The snap tolerance must be ≥ 0 s.")
    trim_start, trim_end = splitting.read_trims(trim_start, trim_end)
    if trim_start >= event_start or (video.duration and video.duration - trim_end <= event_end):
        raise SplitError(f"The trims ({trim_start:g} s at the start, {trim_end:g} s at the end) must leave V_pre "
                         f"before the event start ({event_start:g} s) and V_post after its end ({event_end:g} s).")
    with transaction.atomic():
        split = VideoSplit.objects.create(
            video=video, event_start=event_start, event_end=event_end, snap=snap, snap_tolerance=snap_tolerance,
            allow_multi_scene=allow_multi_scene, trim_start=trim_start, trim_end=trim_end,
            requested_by=user if user is not None and user.pk else None,
        )
        job = jobs.enqueue(JOB_KIND, params={"split_id": split.pk}, user=user)
        VideoSplit.objects.filter(pk=split.pk).update(job=job)
        split.job = job
        trims = f", trimmed {trim_start:g} s / {trim_end:g} s" if trim_start or trim_end else ""
        state.record(VideoSplit, split.pk, "", VideoSplit.Status.QUEUED, by=user,
                       reason=f"event {event_start:g}–{event_end:g} s{trims}")
    return split


def resolve_flagged(split: VideoSplit, *, split_anyway: bool, user, reason: str = "") -> VideoSplit | None:
    """The curator's decision on a multi-scene video: filter it out, or split it anyway (a new split)."""
    with transaction.atomic():
        if not split_anyway:
            transition(split, VideoSplit.Status.REJECTED, actor=user, reason=reason or "several scenes")
            return None
        transition(split, VideoSplit.Status.OVERRIDDEN, actor=user, reason=reason or "split anyway")
        return split_library_video(split.video, split.event_start, split.event_end, user, snap=split.snap,
                                   snap_tolerance=split.snap_tolerance, allow_multi_scene=True,
                                   trim_start=split.trim_start, trim_end=split.trim_end)


def current_split(video: Video) -> VideoSplit | None:
    """The latest finished split of a video (earlier ones are history)."""
    return video.splits.filter(status=VideoSplit.Status.DONE).order_by("-created_at", "-id").first()


@job_handler(JOB_KIND, queue="generation", label="Split a video into BlackSwanSuite parts")
def split_video_job(job, *, split_id: int):
    split = VideoSplit.objects.select_related("video", "requested_by").filter(pk=split_id).first()
    if split is None:
        raise SplitError(f"Split #{split_id} no longer exists.")
    transition(split, VideoSplit.Status.RUNNING)
    try:
        return _run(job, split)
    except Exception as exc:
        message = "Cancelled" if isinstance(exc, jobs.JobCancelled) else (str(exc) or exc.__class__.__name__)
        split.refresh_from_db(fields=["status"])
        if VideoSplit.STATES.allows(split.status, VideoSplit.Status.FAILED):
            transition(split, VideoSplit.Status.FAILED, reason=message, message=message)
        raise


def _run(job, split: VideoSplit) -> dict:
    video = split.video
    path = Path(video.file.path)
    if not path.is_file():
        raise SplitError(f"The file of “{video.title}” is missing from the media store.")
    job.progress(5, f"Decoding {video.original_name} and looking for scene cuts")
    analysis = splitting.analyse_video(path)
    cuts = [{"frame": c, "time": round(analysis.time_of(c), 4), "difference": round(analysis.differences[c], 4)}
            for c in analysis.scene_cuts]
    VideoSplit.objects.filter(pk=split.pk).update(
        frame_count=analysis.frame_count, fps=round(float(analysis.fps), 4), scene_cuts=cuts,
        multi_scene=analysis.is_multi_scene, parameters={"detector": analysis.detector},
    )
    if analysis.is_multi_scene and not split.allow_multi_scene:
        where = ", ".join(f"{cut['time']:.2f} s (frame {cut['frame']})" for cut in cuts)
        message = (f"Flagged, not split: {video.title} holds {len(cuts) + 1} scenes (cuts at {where}). "
                   "A curator filters it out or has it split anyway.")
        transition(split, VideoSplit.Status.FLAGGED, reason=message, message=message)
        return {"message": message, "split_id": split.pk, "status": VideoSplit.Status.FLAGGED, "scene_cuts": cuts}
    job.progress(20, "Planning the parts")
    plan = splitting.plan_split(analysis, split.event_start, split.event_end, snap=split.snap,
                                snap_tolerance=split.snap_tolerance, trim_start=split.trim_start,
                                trim_end=split.trim_end)
    parameters = {
        "detector": analysis.detector, **plan.parameters, "allow_multi_scene": split.allow_multi_scene,
        "unsnapped_frames": list(plan.unsnapped), "snapped_to_cut": plan.snapped,
        "encoding": splitting.encoding_record(plan),
        "convention": "a part holds the source frames i with start_frame <= i < end_frame",
    }
    job.progress(30, f"Cutting {plan.frame_count} frames at {plan.main_start} and {plan.main_end}")
    with tempfile.TemporaryDirectory(prefix="blackswan-split-") as folder:
        files = splitting.cut_clips(path, plan, folder)
        job.progress(70, "Storing the clips in the library")
        clips = _store_clips(split, analysis, plan, parameters, files)
    counts = {name: plan.frame_total(name) for name in CLIPS}
    message = (f"Split at frames {plan.main_start} and {plan.main_end} of {plan.frame_count}: "
               f"V_pre {counts['pre']}, V_main {counts['main']}, V_post {counts['post']} frames")
    return {"message": message, "split_id": split.pk, "status": VideoSplit.Status.DONE,
            "videos": {name: clip.pk for name, clip in clips.items()}, "frames": counts, "scene_cuts": cuts}


def _provenance(split: VideoSplit, analysis, plan, parameters: dict, name: str) -> dict:
    start, end = plan.frames(name)
    record = {
        "kind": JOB_KIND, "split_id": split.pk, "part": name,
        "parent_video_id": split.video.pk, "parent_checksum": split.video.checksum,
        "start_frame": start, "end_frame": end, "frame_count": end - start,
        "start_time": round(analysis.time_of(start), 6), "end_time": round(analysis.time_of(end), 6),
        "event": {"start": split.event_start, "end": split.event_end},
        "parameters": parameters,
    }
    if name == "detective":
        record["black_frames"] = [plan.main_start, plan.main_end]
    return record


def _store_clips(split: VideoSplit, analysis, plan, parameters: dict, files: dict) -> dict:
    """Ingest the five clips and finish the split in one transaction; on failure remove stored files."""
    stem = Path(split.video.original_name).stem or f"video-{split.video.pk}"
    stored = []  # files written by this call, removed again if the transaction does not commit
    try:
        with transaction.atomic():
            clips = {}
            for name in CLIPS:
                path = Path(files[name])
                with open(path, "rb") as handle:
                    incoming = Incoming(fileobj=handle, name=f"{stem}-split{split.pk}-{name}.mp4",
                                        size=os.path.getsize(path))
                    try:
                        clip = ingest(incoming, user=split.requested_by, expected_kind="video", probe=False,
                                      title=f"{split.video.title} — {PART_LABELS[name]}",
                                      source=MediaAsset.Source.DERIVED)
                    except MediaRejected as exc:
                        if exc.existing is None:
                            raise SplitError(f"The {PART_LABELS[name]} clip was refused: {exc.message}") from exc
                        clips[name] = exc.existing  # the same bytes are already in the library
                        continue
                stored.append(clip.file)
                try:
                    facts = probe_video(clip.file.path)
                    poster = poster_jpeg(clip.file.path)
                except MediaError as exc:
                    raise SplitError(f"The {PART_LABELS[name]} clip cannot be read back: {exc}") from exc
                for field, value in vars(facts).items():
                    setattr(clip, field, value)
                clip.poster.save(f"{clip.checksum[:2]}/{clip.checksum}.jpg", ContentFile(poster), save=False)
                stored.append(clip.poster)
                clip.provenance = _provenance(split, analysis, plan, parameters, name)
                clip.save()
                state.transition(clip, MediaAsset.Status.READY, split.requested_by, f"cut from split #{split.pk}")
                clips[name] = clip
            transition(
                split, VideoSplit.Status.DONE, reason=f"frames {plan.main_start}/{plan.main_end}",
                main_start_frame=plan.main_start, main_end_frame=plan.main_end, parameters=parameters,
                message=f"V_pre [{plan.pre_start}, {plan.main_start}), V_main [{plan.main_start}, {plan.main_end}), "
                        f"V_post [{plan.main_end}, {plan.post_end}) of {plan.frame_count} frames",
                **{f"{name}_video": clips[name] for name in CLIPS},
            )
    except BaseException:
        for field in stored:
            if field and field.name and field.storage.exists(field.name):
                field.storage.delete(field.name)
        raise
    return clips
