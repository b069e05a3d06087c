"""C-VQA demo: a small synthetic version and an open two-person verification study (`demo_studies`).

- `DEMO_SYNTHETIC_LABEL`: the synthetic generator's set (`synthetic.writer`, one item per template, seed 0),
  imported as a release and frozen, the way a researcher imports `make_cvqa_synthetic`'s output.
- `DEMO_VERIFICATION_SLUG`: source questions about the bundled scikit-image pictures (`DEMO_SOURCES`,
  imported into the sources version `DEMO_SOURCES_LABEL`); their counterfactuals, written for the demo (no
  text model is reachable), are imported as `cvqa_counterfactual` proposals by `DEMO_WRITER` and accepted by
  the curator, so they reach the counterfactuals version `DEMO_COUNTERFACTUALS_LABEL` the way accepted model
  output does; the open study asks two verifiers to check each one.

Both are made once; nothing is made when the pictures are not in the library.
"""

from __future__ import annotations

import csv
import shutil
import tempfile
from pathlib import Path

from django.db import transaction

from annotation.benchmarks.cvqa import counterfactual_generation as generation
from annotation.benchmarks.cvqa import sources, verification
from annotation.benchmarks.cvqa.synthetic.writer import write_synthetic_set
from annotation.crowd import studies
from annotation.crowd.models import Study
from annotation.importers.release import import_release
from annotation.models import BenchmarkVersion, Image, MediaAsset
from generation import proposal_import, proposals
from generation.models import Proposal

SLUG = sources.SLUG
DEMO_SYNTHETIC_LABEL = "demo-synthetic"
DEMO_SYNTHETIC_SEED = 0
DEMO_SOURCES_LABEL = "demo-sources"
DEMO_COUNTERFACTUALS_LABEL = "demo-counterfactuals"
DEMO_VERIFICATION_SLUG = "demo-cvqa-verification"
DEMO_WRITER = "written for the demo (no model)"
# picture → (question, answer, the counterfactual as the reader's lines)
DEMO_SOURCES = {
    "chelsea.png": ("How many cats are in the picture?", "1",
                    "Presupposition: if two more cats jumped in\n"
                    "New question: How many cats would be in the picture if two more cats jumped in?\nNew answer: 3"),
    "coins.png": ("How many rows of coins are there?", "4",
                  "Presupposition: if the bottom row of coins were taken away\n"
                  "New question: How many rows of coins would there be if the bottom row were taken away?\n"
                  "New answer: 3"),
    "coffee.png": ("Is there a cup in the picture?", "yes",
                   "Flipped answer: no\nPresupposition: if the cup were taken off the table\n"
                   "New question: Would there be a cup in the picture if the cup were taken off the table?"),
    "rocket.jpg": ("Is the rocket on the launch pad?", "yes",
                   "Flipped answer: no\nPresupposition: if the rocket had already lifted off\n"
                   "New question: Would the rocket be on the launch pad if it had already lifted off?"),
}


def _synthetic_version() -> BenchmarkVersion:
    found = BenchmarkVersion.objects.filter(benchmark__slug=SLUG, label=DEMO_SYNTHETIC_LABEL).first()
    if found is not None:
        return found
    with tempfile.TemporaryDirectory(prefix="cvqa-demo-") as folder:
        write_synthetic_set(Path(folder), 1, DEMO_SYNTHETIC_SEED)
        return import_release(SLUG, Path(folder), DEMO_SYNTHETIC_LABEL, freeze=True,
                              description="C-VQA-Synthetic made by the generator (one item per template, "
                                          f"seed {DEMO_SYNTHETIC_SEED}).").version


def _pictures() -> dict:
    return {image.original_name: image for image in Image.objects.filter(
        original_name__in=list(DEMO_SOURCES), status=MediaAsset.Status.READY).order_by("pk")}


def _sources_version(curator, pictures: dict) -> BenchmarkVersion:
    with tempfile.TemporaryDirectory(prefix="cvqa-demo-") as folder:
        folder = Path(folder)
        with (folder / "questions.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["image", "question", "answer", "question_id"])
            for number, (name, (question, answer, _lines)) in enumerate(DEMO_SOURCES.items()):
                if name in pictures:
                    shutil.copy(pictures[name].file.path, folder / name)
                    writer.writerow([name, question, answer, f"demo{number}"])
        return sources.import_sources(folder / "questions.csv", DEMO_SOURCES_LABEL, user=curator).version


def _verification_study(curator) -> Study | None:
    study = Study.objects.filter(slug=DEMO_VERIFICATION_SLUG).first()
    if study is not None:
        return study
    pictures = _pictures()
    if not pictures:
        return None
    version = _sources_version(curator, pictures)
    lines = {question: text for question, _answer, text in DEMO_SOURCES.values()}
    with transaction.atomic():
        rows = [{"inputs": entry["inputs"], "source_key": entry["key"],
                 "raw_output": lines[entry["inputs"]["question"]]}
                for entry in generation.entries(version, target=DEMO_COUNTERFACTUALS_LABEL)]
        imported = proposal_import.import_proposals(generation.KIND, rows, user=curator, model_id=DEMO_WRITER,
                                                    name="C-VQA: counterfactuals written for the demo")
        for proposal in Proposal.objects.filter(proposal_set=imported, status=Proposal.Status.OK).order_by("pk"):
            proposals.decide(proposal, curator, "accept")
        try:
            return verification.create_verification_study(
                DEMO_COUNTERFACTUALS_LABEL, curator, name="C-VQA: check the counterfactual questions",
                slug=DEMO_VERIFICATION_SLUG).study
        except studies.SlugTaken:  # seeded by a concurrent run meanwhile
            return Study.objects.get(slug=DEMO_VERIFICATION_SLUG)


def demo_studies(curator) -> list[Study]:
    """The demo's synthetic version (made once) and its open C-VQA verification study."""
    _synthetic_version()
    study = _verification_study(curator)
    return [study] if study is not None else []
