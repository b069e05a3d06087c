"""`blackswan_build_version`: annotated videos → BlackSwanSuite task variants → a frozen version. Its old name,
`build_blackswan_version`, is an alias.

    manage.py blackswan_build_version (--records FILE.json --videos FOLDER | --study SLUG) --label L [--seed N]
        [--mcq-rules release|paper] [--preview] [--skip-pending] [--user NAME]
        [--caption-model ID [--caption-backend transformers]] [--rewrite-model ID [--rewrite-backend causal_lm]]

`FILE.json` is a JSON list of per-video records in the release shape (see `annotation.benchmarks.blackswan.variants`);
`FOLDER` holds each whole video as `<id>.mp4` (or another video extension), put into the library (a
file already there is reused). `--study SLUG` takes the records from the finished claims of a
staged-reveal study instead (`annotation.benchmarks.blackswan.staged.release_record`), with the items' videos.

`--mcq-rules` picks how MCQs are made: `release` (default; the authors' construction, which gives
Table 1's counts) or `paper` (the paper's text); see `annotation.benchmarks.blackswan.variants`. Records marked
`multivideo` yes are skipped either way. The preview job runs here; `--preview` prints what would be
built and stops. Otherwise the version is frozen, unless MCQs still wait for fallback distractors (then
nothing is frozen, or with `--skip-pending` they are left out). With `--caption-model` /
`--rewrite-model` the missing V_pre captions and rewrites are asked for (their generation jobs are
queued); curators decide on them, and a later run uses what they accepted or corrected.
"""

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.blackswan import variants, versions
from annotation.importers.base import text
from annotation.importers.files import FileIndex
from annotation.management.commands._model_options import registered_model
from config import json_text
from generation.media_probe import VIDEO_EXTENSIONS
from generation.models import Job


class Command(BaseCommand):
    help = "Build BlackSwanSuite's task variants from annotated videos and freeze them as a version."

    def add_arguments(self, parser):
        parser.add_argument("--records", type=Path, help="JSON list of per-video records")
        parser.add_argument("--videos", type=Path, help="folder with <id>.mp4 per record")
        parser.add_argument("--study", default="", help="a staged-reveal study whose finished claims give the records")
        parser.add_argument("--label", default="", help="label of the new version (not needed with --preview)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the distractor draws and option order")
        parser.add_argument("--mcq-rules", choices=variants.MCQ_RULES, default=variants.RELEASE_RULES,
                            help="release (default: the authors' MCQ construction) or paper (the paper's text)")
        parser.add_argument("--preview", action="store_true", help="print what would be built; freeze nothing")
        parser.add_argument("--skip-pending", action="store_true",
                            help="freeze without the MCQs that still wait for fallback distractors")
        parser.add_argument("--user", default="", help="username recorded as the version's creator")
        parser.add_argument("--caption-model", default="", help="registered VLM that captions V_pre (its name, or the "
                                                                "hub id or local folder an entry holds)")
        parser.add_argument("--caption-backend", default="", help="default: the registered model's")
        parser.add_argument("--caption-frames", default=variants.DEFAULT_CAPTION_FRAMES,
                            help="frame policy for the V_pre caption")
        parser.add_argument("--rewrite-model", default="", help="registered LLM that rewrites the caption as a "
                                                                "distractor")
        parser.add_argument("--rewrite-backend", default="", help="default: the registered model's")
        parser.add_argument("--max-new-tokens", type=int, default=128, help="for the fallback models")

    def handle(self, *args, **options):
        user = self._user(options["user"])
        if not options["preview"] and not options["label"].strip():
            raise CommandError("Give --label (or --preview).")
        if options["study"]:
            if options["records"] or options["videos"]:
                raise CommandError("Give either --study or --records with --videos.")
            try:
                pairs, origins = versions.staged_pairs(options["study"])
            except variants.VariantsError as exc:
                raise CommandError(str(exc)) from None
        else:
            if not (options["records"] and options["videos"]):
                raise CommandError("Give --records FILE.json and --videos FOLDER (or --study SLUG).")
            records = self._records(options["records"])
            pairs, origins = self._pairs(records, options["records"], options["videos"], user)
        fallback_models = {}
        params = {"max_new_tokens": options["max_new_tokens"]}
        for role in ("caption", "rewrite"):
            if options[f"{role}_model"]:
                chosen = registered_model({"model": options[f"{role}_model"], "backend": options[f"{role}_backend"],
                                           "revision": "", "backend_option": []})
                fallback_models[role] = {**chosen, "params": params}
        job = versions.start_build(pairs, seed=options["seed"], origins=origins, fallback_models=fallback_models,
                                   frames=options["caption_frames"], user=user, here=True,
                                   mcq_rules=options["mcq_rules"])
        if job.status != Job.Status.SUCCEEDED:
            raise CommandError(f"The preview job #{job.pk} failed: {job.message}")
        self._report(job)
        if options["preview"]:
            return
        try:
            version = versions.freeze_variants(job, options["label"], user, skip_pending=options["skip_pending"])
        except variants.VariantsError as exc:
            raise CommandError(f"Nothing was frozen: {exc}") from None
        self.stdout.write(self.style.SUCCESS(
            f"Froze {version}: {version.item_count} items, checksum {version.checksum[:12]}."))

    @staticmethod
    def _user(username: str):
        if not username:
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"There is no user {username!r}.")
        return user

    @staticmethod
    def _records(path: Path) -> list:
        try:
            records = json_text.load(path)
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror or exc}.") from None
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno}, column {exc.colno}"
            raise CommandError(f"{path}: not valid JSON ({exc.msg} at {where}).") from None
        if not isinstance(records, list) or not records:
            raise CommandError(f"{path} must hold a non-empty JSON list of per-video records.")
        return records

    @staticmethod
    def _pairs(records: list, records_path: Path, folder: Path, user) -> tuple[list, list[str]]:
        if not folder.is_dir():
            raise CommandError(f"{folder}: not a folder.")
        index = FileIndex(folder)
        pairs, origins, missing = [], [], []
        for position, record in enumerate(records):
            video_id = text(record.get("id")) if isinstance(record, dict) else ""
            found = sorted(index.by_stem(video_id, VIDEO_EXTENSIONS),
                           key=lambda p: (p.suffix.lower() != ".mp4", str(p))) if video_id else []
            if video_id and not found:
                missing.append(f"{records_path.name}[{position}]: no video {video_id}.* in {folder}")
            try:
                video = versions.library_video(found[0], user) if found else None
            except variants.VariantsError as exc:
                raise CommandError(str(exc)) from None
            pairs.append((record, video))
            origins.append(f"{records_path.name}[{position}]")
        if missing:
            raise CommandError(f"{len(missing)} video(s) missing; nothing was built:\n"
                               + "\n".join(f"  - {line}" for line in missing))
        return pairs, origins

    def _report(self, job: Job) -> None:
        data = job.result
        counts = data["counts"]
        self.stdout.write(f"Preview (job #{job.pk}, seed {data['seed']}, MCQ rules {data.get('mcq_rules')}): "
                          f"{counts['videos']} videos, {counts['items']} items")
        for entry in data.get("skipped") or []:
            self.stdout.write(f"  skipped {entry['origin']} (video {entry['video_id']}): {entry['reason']}")
        for name, n in counts["variants"].items():
            hard = f" ({counts['hard'][name]} hard)" if name in counts["hard"] else ""
            self.stdout.write(f"  {name:<15} {n}{hard}")
        self.stdout.write(f"  hard videos     {counts['hard']['videos']}")
        pending = counts["pending"]
        if any(pending.values()):
            self.stdout.write(f"Pending MCQs (waiting for fallback distractors): {pending['detective_mcq']} "
                              f"Detective, {pending['reporter_mcq']} Reporter")
        for fallback in data["fallbacks"]:
            if fallback["state"] != variants.READY:
                proposals = (f", proposals to decide: {fallback['open_proposals']}" if fallback["open_proposals"]
                             else "")
                self.stdout.write(f"  video {fallback['video_id']}: lacks {fallback['needed'] - fallback['usable']} "
                                  f"distractor(s), {fallback['state']}{proposals}")
        requested = data.get("requested") or {}
        if requested.get("jobs"):
            self.stdout.write(f"Asked for captions of {requested['captions']} and rewrites for {requested['rewrites']} "
                              f"(jobs {requested['jobs']})")
        for problem in data["problems"]:
            self.stdout.write(self.style.ERROR(f"  problem: {problem}"))
