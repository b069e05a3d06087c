"""`manage.py cvqa_make_synthetic --per-template N --seed S --out DIR`: a C-VQA-Synthetic set made by
the seeded generator (`annotation.benchmarks.cvqa.synthetic`), written as
`DIR/C-VQA-Synthetic/C-VQA-Synthetic_questions.csv` with its pictures and `scenes.jsonl`; it imports
with `import_benchmark` like the release. Its old name, `make_cvqa_synthetic`, is an alias."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.cvqa.synthetic.templates import TEMPLATES
from annotation.benchmarks.cvqa.synthetic.writer import SyntheticSetError, write_synthetic_set


class Command(BaseCommand):
    help = ("Generate C-VQA-Synthetic: N pictures per template (six templates, flower and dot counting) with "
            "original and counterfactual multiple-choice questions, their scenes in scenes.jsonl; the same "
            "seed writes the same bytes.")

    def add_arguments(self, parser):
        parser.add_argument("--per-template", type=int, default=500, help="items per template (the paper: 500)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--out", type=Path, required=True, help="folder that receives C-VQA-Synthetic/")

    def handle(self, *args, **options):
        try:
            folder = write_synthetic_set(options["out"], options["per_template"], options["seed"])
        except SyntheticSetError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"Wrote {options['per_template'] * len(TEMPLATES)} items to {folder}.")
