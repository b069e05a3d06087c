"""The parser choice end to end: `score --parser` and its record in metrics.json, the count and the
drill-down of answers the two parsers read differently, the readings stored on every prediction
(written by the runner and the baselines, re-scored under another parser), the headline metrics
printed by `score` and `evaluate`, and the CLIP score / BERTScore `score --run` keeps with the run
for the results pages and exports."""

import io
import json

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.urls import reverse

from evaluation import baseline_runs, results
from evaluation.management.commands.evaluate import Command as Evaluate
from evaluation.models import EvaluationRun, Prediction, RunModelMetric
from tests.conftest import cvqa_payload
from tests.eval_support import frozen_version

pytestmark = pytest.mark.django_db

# (request id, response, authors' reading, strict reading); golds: original 2, counterfactual 1
ANSWERS = {
    "q1:original": "There are 2 cups and 3 plates.",  # authors: 2 (right); strict: two numbers, unparsed
    "q1:counterfactual": "If one is removed, there would be 1 cup.",  # both: 1 (right)
    "q2:original": "The table is full of cups.",  # yes/no? no: q2 is numerical; both unparsed
}


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def cvqa_run():
    version = frozen_version("cvqa", "c1", [("q1", cvqa_payload("two"), {}), ("q2", cvqa_payload("3"), {})])
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", backend="openai",
                                       status=EvaluationRun.Status.SUCCEEDED)
    items = {item.external_id: item for item in version.items.all()}
    for request_id, text in ANSWERS.items():
        Prediction.objects.create(run=run, request_id=request_id, item=items[request_id.split(":")[0]],
                                  variant=request_id.split(":")[1], prompt=[], raw_output=text)
    return run


def score_run(tmp_path, run, *args) -> tuple[dict, str]:
    out_path, out = tmp_path / "metrics.json", io.StringIO()
    call_command("score", "--run", str(run.pk), "--out", str(out_path), *args, stdout=out, stderr=io.StringIO())
    return json.loads(out_path.read_text(encoding="utf-8")), out.getvalue()


def test_score_uses_the_authors_parser_by_default_and_the_strict_one_by_name(tmp_path, cvqa_run):
    metrics, out = score_run(tmp_path, cvqa_run)
    assert metrics["meta"]["parser"] == metrics["predictions"]["parser"] == "authors"
    assert metrics["predictions"]["parser_disagreements"] == 1
    assert metrics["real"]["original"]["correct"] == 1 and metrics["real"]["original"]["unparsed"] == 1

    strict, _ = score_run(tmp_path, cvqa_run, "--parser", "strict")
    assert strict["meta"]["parser"] == strict["predictions"]["parser"] == "strict"
    assert strict["predictions"]["parser_disagreements"] == 1
    assert strict["real"]["original"]["correct"] == 0 and strict["real"]["original"]["unparsed"] == 2
    with pytest.raises(Exception, match="invalid choice: 'loose'"):
        score_run(tmp_path, cvqa_run, "--parser", "loose")


def test_score_prints_the_headline_metrics_with_n_and_unparsed(tmp_path, cvqa_run):
    _, out = score_run(tmp_path, cvqa_run)
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("metric"))
    assert lines[header].split() == ["metric", "value", "n", "unparsed"]
    rows = {line.split("  ")[0].strip(): line.split() for line in lines[header + 1:] if line.startswith("Real")}
    assert rows["Real original"][-3:] == ["50.0%", "2", "1"]  # 1 of 2 right, 1 unparsed
    assert rows["Real counterfactual"][-3:] == ["50.0%", "2", "0"]  # q2's counterfactual is missing
    assert "parser: authors (1 answers read differently" in out


def test_rescoring_stores_the_other_parsers_reading_beside_the_first(tmp_path, cvqa_run):
    first = Prediction.objects.get(run=cvqa_run, request_id="q1:original")
    assert first.parses == {} and first.parse_status == ""  # written by hand, before any scoring
    score_run(tmp_path, cvqa_run)
    first.refresh_from_db()
    assert (first.parsed_answer, first.parse_status) == (2, "ok")
    assert first.parses == {"authors": {"value": 2, "status": "ok"}}
    score_run(tmp_path, cvqa_run, "--parser", "strict")
    first.refresh_from_db()
    assert first.parses == {"authors": {"value": 2, "status": "ok"}, "strict": {"value": None, "status": "unparsed"}}
    assert (first.parsed_answer, first.parse_status) == (2, "ok")  # the default parser's reading stays


def test_baseline_predictions_are_stored_with_their_reading(tmp_path):
    boolean = cvqa_payload("yes", type="boolean", query="Is there a cup?", new_query="Is there a cup if it fell?",
                           new_answer="no")
    version = frozen_version("cvqa", "c1", [("q1", boolean, {})])
    run = baseline_runs.run_baseline(version, "random", seed=3)
    rows = list(Prediction.objects.filter(run=run))
    assert rows and all(row.parses["authors"]["status"] == row.parse_status == "ok" for row in rows)
    assert all(row.parses["authors"]["value"] == row.parsed_answer for row in rows)


def test_results_page_chooses_the_parser_and_drills_into_the_disagreements(cvqa_run, researcher_client):
    page = researcher_client.get(reverse("results-run", args=[cvqa_run.pk])).content.decode()
    assert 'id="run-parser"><strong>authors</strong>' in page
    assert "1 answer read differently by the two parsers" in page
    strict = researcher_client.get(reverse("results-run", args=[cvqa_run.pk]) + "?parser=strict")
    assert '<strong>strict</strong>' in strict.content.decode()
    assert results.run_results(cvqa_run, "strict").metrics["real"]["original"]["unparsed"] == 2
    assert results.run_results(cvqa_run).metrics["real"]["original"]["unparsed"] == 1
    bad = researcher_client.get(reverse("results-run", args=[cvqa_run.pk]) + "?parser=loose")
    assert bad.status_code == 400

    drill = researcher_client.get(reverse("results-disagreements", args=[cvqa_run.pk])).content.decode()
    assert 'data-request-id="q1:original"' in drill and 'data-request-id="q1:counterfactual"' not in drill
    assert '<td class="reading authors"><code>2</code> (ok)' in drill
    assert '<td class="reading strict"><code>—</code> (unparsed)' in drill

    json_page = researcher_client.get(reverse("results-run-json", args=[cvqa_run.pk]) + "?parser=strict").json()
    assert json_page["meta"]["parser"] == json_page["predictions"]["parser"] == "strict"


def test_evaluate_prints_the_headline_metrics_of_a_finished_run(cvqa_run):
    out = io.StringIO()
    command = Evaluate(stdout=out, stderr=io.StringIO())
    command._headlines(cvqa_run, "strict")
    text = out.getvalue()
    assert "Real original" in text and "parser: strict" in text
    assert Prediction.objects.get(run=cvqa_run, request_id="q1:original").parses["strict"]["status"] == "unparsed"


def test_bertscore_of_score_run_is_kept_with_the_run_for_its_pages(tmp_path, tiny_models_dir, tiny_registry,
                                                                  researcher_client):
    payload = {"kind": "question", "video": "video1", "category": "Sentiment_A", "question": "Chi ride?",
               "answers": [f"Un bambino ride {i}" for i in range(8)]}
    version = frozen_version("maia", "m1", [("q1", payload, {})])
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", backend="openai",
                                       status=EvaluationRun.Status.SUCCEEDED)
    Prediction.objects.create(run=run, request_id="q1:oevqa", item=version.items.get(), variant="oevqa", prompt=[],
                              raw_output="Un bambino ride 3")
    before = results.run_results(run).metrics["oevqa"]["similarity"]["bertscore"]
    assert before["computed"] is False

    model = str(tiny_models_dir / "nli")
    metrics, out = score_run(tmp_path, run, "--bertscore-model", model, "--device", "cpu")
    assert f"Kept bertscore ({model}) with run {run.pk}" in out
    kept = RunModelMetric.objects.get(run=run, kind="bertscore")
    assert (kept.model_id, kept.parser) == (model, "authors")
    assert kept.values["oevqa.similarity.bertscore"] == metrics["oevqa"]["similarity"]["bertscore"]

    shown = results.run_results(run)
    assert shown.metrics["oevqa"]["similarity"]["bertscore"] == pytest.approx(1.0)
    assert shown.model_metrics[0]["model"] == model and shown.model_metrics[0]["current"] is True
    page = researcher_client.get(reverse("results-run", args=[run.pk])).content.decode()
    assert 'data-metric="oevqa.similarity.bertscore"' in page and f"computed with <code>{model}</code>" in page
    cell = next(c for c in results.flat_metrics(shown.metrics) if c.path == "oevqa.similarity.bertscore")
    assert cell.computed and cell.value == pytest.approx(1.0)

    # a prediction written later makes the kept value stale: not computed, with the reason
    Prediction.objects.create(run=run, request_id="q1:oevqa", sample_index=1, item=version.items.get(),
                              variant="oevqa", prompt=[], raw_output="Altro")
    stale = results.run_results(run).metrics["oevqa"]["similarity"]["bertscore"]
    assert stale["computed"] is False and "predictions changed" in stale["reason"]


def test_the_admin_shows_the_model_metrics_kept_with_a_run(cvqa_run, admin_client):
    RunModelMetric.objects.create(run=cvqa_run, kind="clip", model_id="openai/clip-vit-large-patch14",
                                  parser="authors", values={"detective_gen.clip_score": 0.8}, predictions_state="x")
    page = admin_client.get(reverse("admin:evaluation_runmodelmetric_changelist")).content.decode()
    assert "openai/clip-vit-large-patch14" in page
