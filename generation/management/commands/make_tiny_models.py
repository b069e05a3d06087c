import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from generation.tiny_models import TINY_MODEL_NAMES, build_tiny_model, folder_size


class Command(BaseCommand):
    help = ("Build tiny, randomly initialised models of real architectures (Qwen2.5-VL, LLaVA-OneVision, "
            "LLaVA 1.5, a Qwen2 chat LM, a BERT NLI classifier, CLIP, Stable Diffusion text-to-image and "
            "inpainting pipelines) into <folder>/<name>, loadable offline with from_pretrained like hub ids. "
            "For tests and demos: the weights are random.")

    def add_arguments(self, parser):
        parser.add_argument("folder", type=Path)
        parser.add_argument("--only", nargs="+", choices=TINY_MODEL_NAMES, metavar="NAME",
                            help=f"Build only these ({', '.join(TINY_MODEL_NAMES)}).")
        parser.add_argument("--force", action="store_true", help="Rebuild models that are already there.")

    def handle(self, folder: Path, only: list[str] | None, force: bool, **options):
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")

        if folder.exists() and not folder.is_dir():
            raise CommandError(f"{folder} exists and is not a folder.")
        folder.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        for name in only or TINY_MODEL_NAMES:
            began = time.monotonic()
            path = build_tiny_model(name, folder, force=force)
            self.stdout.write(f"{name:16} {folder_size(path) / 1024:8.0f} KiB  {time.monotonic() - began:5.1f} s  "
                              f"{path}")
        self.stdout.write(self.style.SUCCESS(f"Done in {time.monotonic() - started:.1f} s."))
