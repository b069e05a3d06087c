"""C-VQA-Real end to end (seeds/001 §3–§4; SPEC §2): easy-vqa's real questions and images, with two numerical
questions, are imported as source questions; the images get subgroup labels; a text model proposes
counterfactuals that a curator accepts, corrects or rejects, and one numerical-indirect item is written by hand;
two verifiers check every item (agreeing, correcting, disagreeing, removing one as ambiguous) and a curator
adjudicates the disputed one; the verified version is frozen, the tiny VLM answers the original and the
counterfactual question of every item, and the metrics (accuracy per group and per subgroup, the drop) are
checked against answers written to order; the version exports in the release layout and imports back."""

import csv
import json
import shutil

import pytest
from django.core.management import call_command
from easy_vqa import get_test_image_paths, get_test_questions
from PIL import Image as PILImage

from annotation import versions
from annotation.benchmarks.cvqa import counterfactuals, subgroups, verification
from annotation.crowd import assignment, submissions
from annotation.curation_models import CurationRecord
from evaluation import demo, runner, runs
from evaluation.models import EvaluationRun, Prediction
from generation import proposals
from tests.benchmarks.cvqa.test_counterfactuals import CounterfactualBackend, run
from tests.conftest import make_user
from tests.release_fixtures import run_import
from tests.scripted_backend import install

pytestmark = pytest.mark.django_db
RIGHT = {"about_image": "yes", "answer_right": "right", "corrected_answer": "", "notes": ""}
BOOLEANS = 4


def sources_folder(tmp_path):
    """A CSV of four easy-vqa yes/no questions (about four different images) and two numerical questions about
    drawn dots."""
    questions, answers, image_ids = get_test_questions()
    paths = get_test_image_paths()
    rows, seen = [], set()
    for question, answer, image_id in zip(questions, answers, image_ids, strict=True):
        if answer in ("yes", "no") and image_id not in seen and len(rows) < BOOLEANS:
            seen.add(image_id)
            rows.append((f"{image_id}.png", question, answer))
    for name, _question, _answer in rows:
        shutil.copy(paths[int(name.split(".")[0])], tmp_path / name)
    for number, dots in ((0, 3), (1, 5)):
        picture = PILImage.new("RGB", (64, 64), "white")
        for dot in range(dots):
            picture.paste((0, 0, 0), (6 + 11 * dot, 30, 12 + 11 * dot, 36))
        picture.save(tmp_path / f"dots{number}.png")
        rows.append((f"dots{number}.png", "How many dots are there?", str(dots)))
    with (tmp_path / "questions.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["image", "question", "answer", "question_id"])
        writer.writerows([*row, f"q{number}"] for number, row in enumerate(rows))
    return tmp_path / "questions.csv", rows


def test_real_sources_become_a_verified_frozen_scored_release(tmp_path, tiny_models_dir, monkeypatch,
                                                              django_capture_on_commit_callbacks):
    curator, adjudicator = make_user("cora", "curator"), make_user("ada", "curator")
    verifiers = [make_user("vera", "annotator"), make_user("victor", "annotator")]
    folder = tmp_path / "sources"
    folder.mkdir()
    table, rows = sources_folder(folder)

    # 1. Source questions and the images' subgroup labels.
    call_command("cvqa_import_sources", str(table), "--version", "sources", "--curator", curator.username)
    labels = folder / "labels.csv"
    labels.write_text("image,label\n" + "".join(f"{name},{'group-a' if n % 2 else 'group-b'}\n"
                                                for n, (name, _q, _a) in enumerate(rows)))
    assert subgroups.import_labels(labels, curator).set == len(rows)
    source_version = counterfactuals.sources.source_versions().get(label="sources")
    assert source_version.items.count() == 6

    # 2. One numerical-indirect item by hand, proposals for the rest; a curator decides.
    dots1 = source_version.items.get(external_id="source:q5")
    counterfactuals.write_indirect(curator, dots1.pk, "How many dots would there be if the last dot were erased?",
                                   "4", presupposition="if the last dot were erased")
    install(monkeypatch, CounterfactualBackend)
    pset = run(django_capture_on_commit_callbacks, source_version, curator)
    made = {proposal.inputs["external_id"]: proposal for proposal in pset.proposals.all()}
    assert sorted(made) == [f"source:q{n}" for n in range(5)]
    for external_id, proposal in made.items():
        if external_id == "source:q4":
            proposals.decide(proposal, curator, "correct", fields={"new_answer": "6"})  # 3 dots + 2 → 5, set wrong
        elif external_id == "source:q3":
            proposals.decide(proposal, curator, "reject", reason="The presupposition is not about the image.")
        else:
            proposals.decide(proposal, curator, "accept")
    version = counterfactuals.target_version(counterfactuals.DEFAULT_LABEL, lock=False)
    assert version.items.count() == 5 and not version.frozen
    with pytest.raises(versions.FreezeRefused, match="two people verify each one"):
        versions.freeze(version)

    # 3. Two verifiers per item: q4's wrong answer is corrected by both; q1 is disputed; q2 is ambiguous.
    study = verification.create_verification_study(version, curator).study
    by_source = {record.working["counterfactual"]["source_external_id"]: record.item
                 for record in CurationRecord.objects.filter(item__version=version)}
    plans = {"source:q4": [{**RIGHT, "answer_right": "wrong", "corrected_answer": "5"}] * 2,
             "source:q1": [RIGHT, {**RIGHT, "about_image": "no", "notes": "There is no such shape."}],
             "source:q2": [{**RIGHT, "answer_right": "ambiguous"}] * 2}
    for number, worker in enumerate(verifiers):
        while (claim := assignment.claim_next(study, worker)) is not None:
            source_id = next(key for key, item in by_source.items() if item.pk == claim.item.benchmark_item_id)
            submissions.submit(claim, worker, plans.get(source_id, [RIGHT, RIGHT])[number])
    stages = {key: CurationRecord.objects.get(item=item).stage for key, item in by_source.items()}
    assert stages == {"source:q0": "verified", "source:q1": "adjudication", "source:q2": "removed",
                      "source:q4": "verified", "source:q5": "verified"}
    verification.adjudicate(adjudicator, by_source["source:q1"].pk, "keep", note="The shape is in the image.")
    version.refresh_from_db()
    assert sorted(version.items.values_list("external_id", flat=True)) == [
        "boolean:source:q0", "boolean:source:q1", "direct:source:q4", "indirect:source:q5"]
    assert version.items.get(external_id="direct:source:q4").payload["new_answer"] == "5"

    # 4. Frozen, answered by the tiny VLM: both questions of every item.
    version = versions.freeze(version)
    model_run = runs.create_run(version, model_id=str(tiny_models_dir / "qwen2-vl"), **demo.RUN_OPTIONS)
    model_run = runs.start_run(model_run, workers="local")
    assert model_run.status == EvaluationRun.Status.SUCCEEDED, model_run.message
    requests = {plan.request.request_id: plan.request for plan in runner.plan(model_run)}
    stored = Prediction.objects.filter(run=model_run, sample_index=0)
    assert len(requests) == stored.count() == 8 and not any(p.error for p in stored)
    kinds = ("boolean", "boolean", "direct", "indirect")
    assert sorted((r.extra["form"], r.extra["type"]) for r in requests.values()) == sorted(
        (form, kind) for form in ("original", "counterfactual") for kind in kinds)
    assert all(r.extra["subgroup_from"] == "label" for r in requests.values())
    out = tmp_path / "metrics.json"
    call_command("score", "--run", str(model_run.pk), "--out", str(out))
    scored = json.loads(out.read_text())
    assert scored["real"]["n"] == 4 and set(scored["subgroups"]) == {"group-a", "group-b"}

    # 5. Answers written to order: every original right, only the boolean counterfactuals right.
    exported = tmp_path / "requests.jsonl"
    call_command("export_requests", "--benchmark", "cvqa", "--version", version.label, "--out", str(exported))
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    answers = {line["request_id"]: str(line["gold"]) if line["request_id"].endswith(":original")
               or requests[line["request_id"]].extra["type"] == "boolean" else "99" for line in lines}
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"request_id": rid, "response": text}) + "\n"
                                   for rid, text in answers.items()))
    call_command("score", "--benchmark", "cvqa", "--version", version.label, "--predictions", str(predictions),
                 "--out", str(out))
    metrics = json.loads(out.read_text())
    real = metrics["real"]
    assert (real["original_accuracy"], real["counterfactual_accuracy"], real["drop"]) == (1.0, 0.5, 0.5)
    assert real["boolean"]["drop"] == 0.0 and real["numerical_direct"]["drop"] == 1.0
    assert real["numerical_indirect"]["counterfactual_accuracy"] == 0.0
    subgroup_of = {f"{name}": "group-a" if n % 2 else "group-b" for n, (name, _q, _a) in enumerate(rows)}
    expected = {}
    for item in version.items.all():
        numerical = item.payload["type"] != "boolean"
        expected.setdefault(subgroup_of[item.payload["img_path"]], []).append(1.0 if numerical else 0.0)
    assert {name: block["diff"] for name, block in metrics["subgroups"].items()} == {
        name: sum(drops) / len(drops) for name, drops in expected.items()}

    # 6. Exported in the release layout, imported back as a release.
    release = tmp_path / "release"
    call_command("export_benchmark", "cvqa", "--version", version.label, str(release))
    again = run_import("cvqa", release, "real-reimported")
    assert sorted(item.payload["new_query"] for item in again.items.all()) == sorted(
        item.payload["new_query"] for item in version.items.all())
