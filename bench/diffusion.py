"""Image generation: the first job of a worker process (load + generate) against later jobs, which
reuse the cached pipeline (generation.diffusion).

    .venv/bin/python bench/diffusion.py                       # tiny pipelines, 64x64, 4 steps, 8 jobs per mode
    .venv/bin/python bench/diffusion.py --model stable-diffusion-v1-5/stable-diffusion-v1-5 \\
        --inpaint-model stable-diffusion-v1-5/stable-diffusion-inpainting --size 512 --steps 30 --device cuda

Without --model it builds the tiny Stable Diffusion pipelines (`generation.tiny_models`:
sd-text2image, sd-inpaint) into a temporary folder. Then, in this one process and with the
pipeline cache emptied first, it runs --jobs jobs of each mode through `generation.diffusion.generate`:

    text2image   the first loads the text-to-image checkpoint, the later ones reuse it
    image2image  on the text-to-image checkpoint's components (built from the cache: nothing loaded)
    inpaint      the first loads the inpainting checkpoint, the later ones reuse it

every job with its own seed (the tiny pipelines on one torch thread: on a busy machine more threads
only wait for each other), and prints the first job's seconds, the later jobs' median and
fastest, the checkpoint loads counted by the cache, and how much faster a later job is than the
first (diffusers is imported before the first job, so its time is loading and generating). Exit
status 1 when a later job did not reuse the cached pipeline, or when the same request twice gave
different pixels.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from generation import diffusion  # noqa: E402
from generation.tiny_models import build_tiny_models  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", help="text-to-image checkpoint (hub id or folder); default: the tiny one")
    p.add_argument("--inpaint-model", help="inpainting checkpoint; default: the tiny one, or --model when given")
    p.add_argument("--size", type=int, default=64, help="width and height in pixels (a multiple of 8)")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--jobs", type=int, default=8, help="jobs per mode (the first one loads)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: cuda when available)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads (default: 1 for the tiny pipelines, torch's own with --model)")
    p.add_argument("--json", type=Path, help="write every figure to this file")
    return p.parse_args(argv)


def run_mode(mode: str, model: str, args, parent=None, mask=None) -> dict:
    timings, reused, images = [], [], []
    for job in range(args.jobs):
        request = diffusion.ImageRequest(
            model=model, prompt="a woman holds a red cup in a kitchen" + diffusion.PHOTOREALISTIC_SUFFIX,
            seed=1000 + job, steps=args.steps, width=args.size, height=args.size,
            init_image=parent if mode != "text2image" else None, mask=mask if mode == "inpaint" else None,
        )
        started = time.perf_counter()
        result = diffusion.generate(request, device=args.device)
        timings.append(time.perf_counter() - started)
        reused.append(result.reused_pipeline)
        images.append(result.image)
        device, dtype = result.provenance["device"], result.provenance["dtype"]
    # The first job's request again: the same pixels.
    again = diffusion.generate(diffusion.ImageRequest(
        model=model, prompt="a woman holds a red cup in a kitchen" + diffusion.PHOTOREALISTIC_SUFFIX, seed=1000,
        steps=args.steps, width=args.size, height=args.size, init_image=parent if mode != "text2image" else None,
        mask=mask if mode == "inpaint" else None), device=args.device)
    later = timings[1:]
    return {
        "mode": mode, "model": model, "device": device, "dtype": dtype, "first_s": timings[0],
        "later_median_s": statistics.median(later) if later else None, "later_min_s": min(later) if later else None,
        "first_reused": reused[0], "later_reused": all(reused[1:]),
        "repeatable": np.array_equal(np.asarray(images[0]), np.asarray(again.image)),
        "first_image": images[0],
    }


def print_table(rows: list[dict], loads: int) -> None:
    print(f"{'mode':12} {'first job':>10} {'later median':>13} {'later min':>10} {'speed-up':>9}  first reused  "
          f"later reused  repeatable")
    for row in rows:
        speedup = row["first_s"] / row["later_median_s"] if row["later_median_s"] else float("nan")
        median = f"{row['later_median_s']:.3f} s" if row["later_median_s"] is not None else "-"
        fastest = f"{row['later_min_s']:.3f} s" if row["later_min_s"] is not None else "-"
        print(f"{row['mode']:12} {row['first_s']:8.3f} s {median:>13} {fastest:>10} {speedup:8.1f}x  "
              f"{row['first_reused']!s:12}  {row['later_reused']!s:12}  {row['repeatable']}")
    print(f"checkpoints loaded: {loads}")


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.model:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.jobs < 1:
        sys.exit("--jobs must be at least 1")
    import diffusers  # noqa: F401 - imported before timing: the first job's time is loading and generating
    import torch

    threads = args.threads if args.threads is not None else (None if args.model else 1)
    if threads:
        torch.set_num_threads(threads)
    with tempfile.TemporaryDirectory(prefix="bench-diffusion-") as folder:
        if args.model:
            model, inpaint_model = args.model, args.inpaint_model or args.model
        else:
            started = time.perf_counter()
            built = build_tiny_models(folder, ["sd-text2image", "sd-inpaint"])
            print(f"tiny pipelines built in {time.perf_counter() - started:.2f} s under {folder}")
            model, inpaint_model = str(built["sd-text2image"]), args.inpaint_model or str(built["sd-inpaint"])
        print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, torch threads {torch.get_num_threads()}, "
              f"CUDA {'yes: ' + torch.cuda.get_device_name() if torch.cuda.is_available() else 'no'}", flush=True)
        print(f"{args.size}x{args.size}, {args.steps} steps, {args.jobs} jobs per mode", flush=True)
        diffusion.clear_pipeline_cache()
        rows = [run_mode("text2image", model, args)]
        parent = rows[0]["first_image"]
        mask = Image.new("L", parent.size, 0)
        mask.paste(255, (parent.width // 4, parent.height // 4, 3 * parent.width // 4, 3 * parent.height // 4))
        rows.append(run_mode("image2image", model, args, parent=parent))
        rows.append(run_mode("inpaint", inpaint_model, args, parent=parent, mask=mask))
        loads = diffusion.cache_info()["loads"]
        diffusion.clear_pipeline_cache()
    print()
    print_table(rows, loads)
    for row in rows:
        row.pop("first_image")
    if args.json:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "loads": loads,
                                         "rows": rows}, indent=2))
    failed = [row["mode"] for row in rows if not row["later_reused"] or not row["repeatable"]]
    if failed:
        print(f"FAILED: {', '.join(failed)}: a later job loaded again, or the same request gave other pixels")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
