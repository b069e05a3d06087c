"""BlackSwanSuite versions from annotated videos: a preview job, then a frozen version.

1. `start_build(pairs, seed=…, mcq_rules="release"|"paper")` queues the `blackswan_build_variants` job
   over (record, library Video) pairs (`annotation.benchmarks.blackswan.variants`; records marked `multivideo`
   yes are skipped and listed). The job's result is the preview: counts per variant, the
   hard subset, every item as it would be frozen, the MCQs still waiting for fallback distractors
   (`pending`), each such video's fallback state and the problems of the records. Given models
   (`fallback_models={"caption": spec, "rewrite": spec}`), the job also asks them for the captions and
   rewrites the pending MCQs lack (`variants.request_fallbacks`); curators then decide on those
   proposals and a new preview picks up what they accepted or corrected.
2. `freeze_variants(job or preview, label, user)` creates version `label` of benchmark `blackswan`
   from exactly the previewed items, adds them (`annotation.versions.add_item`) and freezes it, all in
   one transaction. It refuses a preview with problems, and one with pending MCQs unless
   `skip_pending=True` (the pending MCQs are then left out, and the description says how many). The
   description names the MCQ rule set and the seed; every item's `source.built_by` records them too,
   and the MCQ options are frozen in their built order. Each video's accepted +P/+PC captions
   (`annotation.benchmarks.blackswan.caption_study`: the latest approved submission of a captions study on the
   same library video) fill the `pc_preevent`, `pc_postevent` and `pc_comp` fields of its `video` item
   where the preview's payload has none (`captions=False` leaves them out); the description says how
   many videos got captions and from which studies. A refusal of the freeze checks (e.g. a staged claim
   that a reviewer rejected after the preview was built: `annotation.benchmarks.blackswan.reviews`) is a
   VariantsError naming the items, and nothing is created.
"""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from annotation import versions
from annotation.benchmarks.blackswan import caption_study, staged, variants
from annotation.benchmarks.blackswan.reviews import claim_origin
from annotation.crowd.models import Claim, Study
from annotation.media import MediaRejected, incoming_from_path, ingest
from annotation.media_import import probe_here
from annotation.models import Benchmark, BenchmarkVersion, MediaAsset, Video
from generation import jobs
from generation.jobs import job_handler
from generation.models import Job

JOB_KIND = "blackswan_build_variants"


def entries(pairs, origins: list[str] | None = None) -> list[dict]:
    """The job's JSON input: one {"record", "video_id", "origin"} per (record, Video) pair."""
    return [{"record": record, "video_id": video.pk if video is not None else None,
             "origin": origins[i] if origins else ""} for i, (record, video) in enumerate(pairs)]


def start_build(pairs, *, seed: int = 0, origins: list[str] | None = None, fallback_models: dict | None = None,
                frames: str = variants.DEFAULT_CAPTION_FRAMES, user=None, here: bool = False,
                mcq_rules: str = variants.RELEASE_RULES) -> Job:
    """Queue the preview job (sent when the transaction commits), or with `here` run it in this process.
    VariantsError for an unknown MCQ rule set."""
    params = {"entries": entries(pairs, origins), "seed": int(seed), "fallback_models": fallback_models or {},
              "frames": frames, "mcq_rules": variants.check_rules(mcq_rules)}
    if here:
        job = jobs.create(JOB_KIND, params=params, user=user)
        return jobs.run_job(job.pk)
    return jobs.enqueue(JOB_KIND, params=params, user=user)


def _pairs(found: list[dict]) -> tuple[list, list[str]]:
    videos = Video.objects.in_bulk([e["video_id"] for e in found if e.get("video_id") is not None])
    return ([(e["record"], videos.get(e.get("video_id"))) for e in found],
            [e.get("origin") or f"record {i}" for i, e in enumerate(found)])


def preview(pairs, *, seed: int = 0, origins: list[str] | None = None,
            mcq_rules: str = variants.RELEASE_RULES) -> dict:
    """The preview of (record, Video) pairs, computed here (what the job stores)."""
    return variants.build_variants(pairs, seed=seed, origins=origins, mcq_rules=mcq_rules).as_preview()


def summary(preview_data: dict) -> str:
    counts = preview_data["counts"]
    shown = ", ".join(f"{n} {name}" for name, n in counts["variants"].items() if not name.endswith("_gen"))
    pending = sum(counts["pending"].values())
    skipped = counts.get("skipped", 0)
    return (f"{counts['videos']} videos ({counts['hard']['videos']} hard): {counts['items']} items ({shown}); "
            f"{pending} MCQs pending; {counts['problems']} problems"
            + (f"; {skipped} multivideo records skipped" if skipped else ""))


@job_handler(JOB_KIND, queue="default", label="Build BlackSwanSuite task variants (preview)")
def build_variants_job(context: jobs.JobContext, *, entries: list, seed: int = 0, fallback_models: dict | None = None,
                       frames: str = variants.DEFAULT_CAPTION_FRAMES, mcq_rules: str = variants.RELEASE_RULES) -> dict:
    pairs, origins = _pairs(entries)
    context.progress(10, f"Reading {len(pairs)} annotated videos ({mcq_rules} MCQ rules)")
    build = variants.build_variants(pairs, seed=seed, origins=origins, mcq_rules=mcq_rules)
    requested = {}
    fallback_models = fallback_models or {}
    if fallback_models and any(f.state in (variants.CAPTION_NEEDED, variants.REWRITE_NEEDED) for f in build.fallbacks):
        context.progress(60, "Asking the models for fallback distractors")
        requested = variants.request_fallbacks(
            build, caption_model=fallback_models.get("caption"), rewrite_model=fallback_models.get("rewrite"),
            frames=frames, user=context.job.requested_by)
        context.log(f"fallback proposals: captions for {requested['captions']}, rewrites for {requested['rewrites']}")
        build = variants.build_variants(pairs, seed=seed, origins=origins, mcq_rules=mcq_rules)  # after asking
    result = {**build.as_preview(), "requested": requested}
    return {"message": summary(result), **result}


def preview_of(source) -> dict:
    """The preview held by a finished build job (a Job or its id), or a preview dict as it is."""
    if isinstance(source, dict):
        return source
    job = source if isinstance(source, Job) else Job.objects.filter(pk=source).first()
    if job is None:
        raise variants.VariantsError(f"There is no job {source}.")
    job.refresh_from_db()
    if job.kind != JOB_KIND:
        raise variants.VariantsError(f"Job #{job.pk} is a {job.kind} job, not a {JOB_KIND} job.")
    if job.status != Job.Status.SUCCEEDED:
        raise variants.VariantsError(f"Job #{job.pk} has not succeeded ({job.status}: {job.message}).")
    return job.result


def freeze_variants(source, label: str, user=None, *, description: str = "", skip_pending: bool = False,
                    captions: bool = True) -> BenchmarkVersion:
    """A frozen `blackswan` version `label` holding exactly the previewed items (see the module docstring)."""
    data = preview_of(source)
    label = (label or "").strip()
    if data.get("benchmark") != "blackswan" or "items" not in data:
        raise variants.VariantsError("This is not a BlackSwanSuite variants preview.")
    if not label:
        raise variants.VariantsError("A version label is needed.")
    if data["problems"]:
        raise variants.VariantsError(f"{len(data['problems'])} problem(s) in the records: "
                                     + "; ".join(data["problems"][:5]))
    if data["pending"] and not skip_pending:
        raise variants.VariantsError(
            f"{len(data['pending'])} MCQ(s) still wait for fallback distractors (curators decide on the proposals, "
            "then preview again), or leave them out with skip_pending.")
    if not data["items"]:
        raise variants.VariantsError("The preview holds no items.")
    videos = Video.objects.in_bulk({item["media"]["video"] for item in data["items"]})
    missing = sorted({item["media"]["video"] for item in data["items"]} - set(videos))
    if missing:
        raise variants.VariantsError(f"Video(s) {missing} are no longer in the library.")
    job_note = f" (job #{source.pk if isinstance(source, Job) else source})" if not isinstance(source, dict) else ""
    left_out = f"; {len(data['pending'])} MCQs waiting for distractors left out" if data["pending"] else ""
    rules = data.get("mcq_rules", variants.PAPER_RULES)  # previews from before rule sets used the paper's
    skipped = f"; {len(data['skipped'])} multivideo records skipped" if data.get("skipped") else ""
    text = description or (f"Built from {data['counts']['videos']} annotated videos by {variants.BUILDER}{job_note}, "
                           f"MCQ rules {rules}, seed {data['seed']}{left_out}{skipped}.")
    items = data["items"]
    if captions:
        items, filled = caption_study.fill_items(items)
        if filled["videos"]:
            text = f"{text}\n{caption_study.describe(filled['videos'], filled['of_videos'], filled['studies'])}"
    try:
        with transaction.atomic():
            if BenchmarkVersion.objects.filter(benchmark__slug="blackswan", label=label).exists():
                raise variants.VariantsError(f"blackswan already has a version {label!r}; choose another label.")
            version = BenchmarkVersion.objects.create(
                benchmark=Benchmark.objects.get(slug="blackswan"), label=label, description=text,
                source=BenchmarkVersion.Source.CURATION, created_by=user if user is not None and user.pk else None)
            for item in items:
                versions.add_item(version, item["external_id"], item["payload"],
                                  {role: videos[pk] for role, pk in item["media"].items()})
            version = versions.freeze(version)
    except versions.FreezeRefused as exc:
        raise variants.VariantsError("Nothing was frozen: " + "; ".join(exc.messages)) from None
    return version


def staged_pairs(study) -> tuple[list, list[str]]:
    """(record, Video) pairs of a staged-reveal study (`annotation.benchmarks.blackswan.staged`), with their
    origins: the release record of every finished, not rejected claim, and the item's whole video."""
    if not isinstance(study, Study):
        found = Study.objects.filter(slug=study).first()
        if found is None:
            raise variants.VariantsError(f"There is no study {study!r}.")
        study = found
    if not staged.is_staged(study):
        raise variants.VariantsError(f"Study {study.slug!r} is not a BlackSwanSuite staged-reveal study.")
    claims = (Claim.objects.filter(study=study, status__in=[Claim.Status.SUBMITTED, Claim.Status.APPROVED])
              .select_related("study", "item", "item__video").order_by("item__external_id", "pk"))
    pairs, origins = [], []
    for claim in claims:
        try:
            record = staged.release_record(claim)
        except (ValueError, staged.CrowdError) as exc:
            raise variants.VariantsError(f"{study.slug} claim {claim.pk}: {exc}") from exc
        pairs.append((record, claim.item.video))
        origins.append(claim_origin(study.slug, claim.pk))
    if not pairs:
        raise variants.VariantsError(f"Study {study.slug!r} has no finished claims.")
    return pairs, origins


def library_video(path: Path, user=None) -> Video:
    """The library's Video for a file: ingested and probed here, or the one already holding these bytes."""
    incoming = incoming_from_path(Path(path))
    try:
        video = ingest(incoming, user=user, expected_kind="video", source=MediaAsset.Source.IMPORT, probe=False)
    except MediaRejected as exc:
        if exc.existing is None:
            raise variants.VariantsError(f"{path}: {exc.message}") from exc
        return exc.existing
    finally:
        incoming.fileobj.close()
    job = probe_here(video, user=user)
    if job.status != Job.Status.SUCCEEDED:
        raise variants.VariantsError(f"{path}: {job.message}")
    video.refresh_from_db()
    return video
