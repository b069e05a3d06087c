"""`manage.py split_video`: cut a video into BlackSwanSuite's parts in a folder (see generation.splitting)."""

import argparse
from pathlib import Path

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError

from generation import splitting


class Command(BaseCommand):
    help = ("Split a video (a file, or the id of a library video) into V_pre / V_main / V_post around the "
            "unexpected event, and write pre.mp4, main.mp4, post.mp4, detective.mp4 (V_main blacked out) and "
            "full.mp4 into --out. Frame-accurate: a part holds the frames i with start_frame <= i < end_frame; "
            "each part must last at least 1 s. Audio is dropped. Files of those names in --out are replaced.")

    def add_arguments(self, parser):
        parser.add_argument("video", help="path of a video file, or the id of a video in the library")
        parser.add_argument("--event-start", type=float, required=True, help="seconds: the event begins")
        parser.add_argument("--event-end", type=float, required=True, help="seconds: the event ends")
        parser.add_argument("--out", type=Path, required=True, help="folder for the five clips (created if needed)")
        parser.add_argument("--snap", action=argparse.BooleanOptionalAction, default=True,
                            help="move each boundary to a scene cut within --snap-tolerance (default: on)")
        parser.add_argument("--snap-tolerance", type=float, default=splitting.DEFAULT_SNAP_TOLERANCE,
                            help=f"seconds (default {splitting.DEFAULT_SNAP_TOLERANCE:g})")
        parser.add_argument("--allow-multi-scene", action="store_true",
                            help="split even a video with several scenes (refused otherwise)")
        parser.add_argument("--trim-start", type=float, default=0.0,
                            help="seconds cut from the start of V_pre (the authors' split: 0.17; default 0)")
        parser.add_argument("--trim-end", type=float, default=0.0,
                            help="seconds cut from the end of V_post (the authors' split: 0.17; default 0)")

    def handle(self, video: str, event_start: float, event_end: float, out: Path, snap: bool,
               snap_tolerance: float, allow_multi_scene: bool, trim_start: float, trim_end: float, **options):
        source = self._source(video)
        try:
            analysis = splitting.analyse_video(source)
            result = splitting.split_video(source, event_start, event_end, out, snap=snap,
                                           snap_tolerance=snap_tolerance, allow_multi_scene=allow_multi_scene,
                                           analysis=analysis, trim_start=trim_start, trim_end=trim_end)
        except splitting.MultiSceneError as exc:
            raise CommandError(f"{exc} Pass --allow-multi-scene to split it anyway.") from exc
        except splitting.SplitError as exc:
            raise CommandError(str(exc)) from exc
        plan = result.plan
        cuts = ", ".join(f"{t:.3f} s (frame {c})" for c, t in zip(analysis.scene_cuts, analysis.cut_times,
                                                                     strict=True)) or "none"
        self.stdout.write(f"{source}: {analysis.frame_count} frames at {float(analysis.fps):g} fps, "
                          f"{analysis.width}x{analysis.height}, {analysis.end_time:.3f} s; scene cuts: {cuts}")
        snapped = [f"{edge} → cut at frame {frame}" for edge, frame in plan.snapped.items() if frame is not None]
        self.stdout.write(f"event {plan.event_start:g}–{plan.event_end:g} s → frames {plan.unsnapped[0]} and "
                          f"{plan.unsnapped[1]}" + (f"; snapped: {', '.join(snapped)}" if snapped else ""))
        self.stdout.write(f"{'clip':10} {'frames [start, end)':>20} {'count':>6} {'from s':>8} {'to s':>8}  file")
        for name in splitting.CLIPS:
            start, end = plan.frames(name)
            self.stdout.write(f"{name:10} {f'[{start}, {end})':>20} {end - start:6d} {analysis.time_of(start):8.3f} "
                              f"{analysis.time_of(end):8.3f}  {result.files[name]}")
        self.stdout.write(self.style.SUCCESS(
            f"Detective: frames [{plan.main_start}, {plan.main_end}) black. ffmpeg {splitting.ffmpeg_version()}."))

    def _source(self, video: str) -> Path:
        path = Path(video)
        if path.is_file():
            return path
        if video.isdigit():
            # A library id only tells where the file is; the split itself is plain file work.
            Video = apps.get_model("annotation", "Video")
            found = Video.objects.filter(pk=int(video)).first()
            if found is None:
                raise CommandError(f"No file {video} and no library video #{video}.")
            if not found.file or not Path(found.file.path).is_file():
                raise CommandError(f"Library video #{video} has no stored file.")
            return Path(found.file.path)
        raise CommandError(f"{video} is not a file (nor a library video id).")
