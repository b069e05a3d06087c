"""Results for researchers (`evaluation.results`, `evaluation.plots`, the results pages): the numbers of
the leaderboard are the scorer's, computed from predictions written here by hand so every expected
value is known; each number drills down to exactly the requests it counts; consistency views; charts
are real PNG and SVG images; a run is scored once and again when it changes; only researchers and
admins get in."""

import io
import json
import re
import xml.etree.ElementTree as ET

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.urls import reverse
from PIL import Image as PILImage

from annotation.models import Benchmark as BenchmarkRecord
from annotation.models import BenchmarkVersion
from evaluation import benchmarks, plots, results, scoring
from evaluation.benchmarks.base import RESULTS_SECTIONS, Benchmark, ResultsSection, results_sections_with
from evaluation.benchmarks.maia import benchmark as maia
from evaluation.models import EvaluationRun, Judgment, Prediction
from tests.conftest import cvqa_payload, logged_in_client
from tests.eval_support import frozen_version

pytestmark = pytest.mark.django_db

SUCCEEDED = EvaluationRun.Status.SUCCEEDED


@pytest.fixture(autouse=True)
def _empty_cache():
    """Run ids repeat across tests (each rolls back), so no test may see another's cached results."""
    cache.clear()
    yield
    cache.clear()


def make_run(version, model_id: str = "org/vlm-7b", status=SUCCEEDED, **fields) -> EvaluationRun:
    return EvaluationRun.objects.create(version=version, model_id=model_id, backend="openai", status=status, **fields)


def predict(run: EvaluationRun, answers: dict[str, str], *, failed: tuple[str, ...] = ()) -> dict[str, Prediction]:
    """One stored prediction (sample 0) per request id with the raw output given; `failed` ones have an error."""
    items = {item.external_id: item for item in run.version.items.all()}
    made = {}
    for request_id, text in [*answers.items(), *((rid, "") for rid in failed)]:
        item_id, variant = request_id.split(":")[:2]
        made[request_id] = Prediction.objects.create(
            run=run, request_id=request_id, item=items[item_id], variant=variant, raw_output=text,
            prompt=[{"role": "user", "content": [{"type": "text", "text": f"Question of {request_id}"}]}],
            inputs={"input_strategy": "separate", "media": [{"role": "premise", "kind": "image", "asset_id": 1}]},
            error="timeout" if request_id in failed else "")
    return made


def scored_by_command(tmp_path, run: EvaluationRun) -> dict:
    """What `manage.py score --run` writes for the run (the scorer's own numbers)."""
    out = tmp_path / f"metrics-{run.pk}.json"
    call_command("score", "--run", str(run.pk), "--out", str(out), stdout=io.StringIO(), stderr=io.StringIO())
    return json.loads(out.read_text(encoding="utf-8"))


def cells_by_path(row) -> dict:
    return {cell.path: cell for cell in row.cells}


# --- NL-EYE ---------------------------------------------------------------------------------------------

def triplet(label: int, category: str) -> dict:
    return {"kind": "triplet", "premise": "A wet floor.", "hypothesis1": "A man slips.", "hypothesis2": "A man dances.",
            "label": label, "reasoning_category": category, "time_direction": "forward", "time_duration": "short",
            "explanation": "Wet floors are slippery."}


NLEYE_ANSWERS = {
    # t1 (gold: hypothesis 1): right in both orders
    "t1:triplet:order1": "1. The floor is wet.", "t1:triplet:order2": "Hypothesis 2 is more plausible.",
    # t2 (gold: hypothesis 2; order1 shows it first): always answers 1, so right only in order 1
    "t2:triplet:order1": "1", "t2:triplet:order2": "1",
    # t3: order 1 cannot be read, order 2 is right
    "t3:triplet:order1": "Both seem fine.", "t3:triplet:order2": "2",
    # pairs: t1 gold 8 > 3 (faithful), t2 tie (wrong), t3 missing (wrong)
    "t1:pairs:h1": "Score: 8", "t1:pairs:h2": "3", "t2:pairs:h1": "5", "t2:pairs:h2": "5",
}


@pytest.fixture
def nleye_version():
    return frozen_version("nleye", "n1", [("t1", triplet(1, "Physical"), {}), ("t2", triplet(2, "Physical"), {}),
                                          ("t3", triplet(1, "Social"), {})])


@pytest.fixture
def nleye_run(nleye_version):
    run = make_run(nleye_version, input_strategy="separate")
    predict(run, NLEYE_ANSWERS)
    return run


def test_leaderboard_numbers_are_the_scorers_numbers(tmp_path, nleye_run, nleye_version):
    make_run(nleye_version, model_id="org/unfinished", status=EvaluationRun.Status.FAILED)
    board = results.leaderboard(nleye_version)

    assert [row.run.pk for row in board.rows] == [nleye_run.pk]  # only runs that succeeded
    cells = cells_by_path(board.rows[0])
    expected = scored_by_command(tmp_path, nleye_run)
    for path in ("triplet.consistency_accuracy", "triplet.order1_accuracy", "triplet.order2_accuracy",
                 "pairs.order_faithful_accuracy"):
        assert cells[path].value == results.lookup(expected, path), path
    assert cells["triplet.consistency_accuracy"].value == 1 / 3
    assert (cells["triplet.order1_accuracy"].value, cells["triplet.order2_accuracy"].value) == (2 / 3, 2 / 3)
    assert cells["pairs.order_faithful_accuracy"].value == 1 / 3
    assert cells["triplet.consistency_accuracy"].n == 3 and cells["triplet.order1_accuracy"].n == 3
    assert cells["triplet.consistency_accuracy"].display == "33.3%"
    explanations = cells["triplet.explanations.valid_rate"]
    assert explanations.present and not explanations.computed and "judg" in explanations.reason


@pytest.mark.parametrize("path, request_ids", [
    ("triplet.consistency_accuracy", ["t1:triplet:order1", "t1:triplet:order2", "t2:triplet:order1",
                                      "t2:triplet:order2", "t3:triplet:order1", "t3:triplet:order2"]),
    ("triplet.order1_accuracy", ["t1:triplet:order1", "t2:triplet:order1", "t3:triplet:order1"]),
    ("triplet.order2.missing", []),
    ("triplet.order1.unparsed", ["t3:triplet:order1"]),
    ("pairs.order_faithful_accuracy", ["t1:pairs:h1", "t1:pairs:h2", "t2:pairs:h1", "t2:pairs:h2", "t3:pairs:h1",
                                       "t3:pairs:h2"]),
    ("pairs.missing", ["t3:pairs:h1", "t3:pairs:h2"]),
    ("by_category.physical.triplet.consistency_accuracy", ["t1:triplet:order1", "t1:triplet:order2",
                                                           "t2:triplet:order1", "t2:triplet:order2"]),
    ("by_category.social.pairs.order_faithful_accuracy", ["t3:pairs:h1", "t3:pairs:h2"]),
    # explanations are asked of the correct triplet answers only
    ("triplet.explanations.valid_rate", ["t1:triplet:order1", "t1:triplet:order2", "t2:triplet:order1",
                                         "t3:triplet:order2"]),
])
def test_drill_down_lists_exactly_the_requests_behind_a_number(nleye_run, path, request_ids):
    found = results.drill(nleye_run, path)
    assert [r.request_id for r in found.requests] == request_ids


def test_drill_counts_match_the_groups_the_scorer_counts(nleye_run):
    metrics = results.run_metrics(nleye_run)
    order1 = results.drill(nleye_run, "triplet.order1_accuracy")
    assert len(order1.requests) == metrics["triplet"]["order1"]["n"]
    correct = [r.request_id for r in order1.requests if order1.outcomes[r.request_id].status == results.CORRECT]
    assert len(correct) == metrics["triplet"]["order1"]["correct"] == 2
    assert order1.outcome_counts == {"correct": 2, "unparsed": 1}
    wrong = results.drill(nleye_run, "triplet.consistency_accuracy", outcome_filter=results.WRONG)
    assert [r.request_id for r in wrong.requests] == ["t2:triplet:order2"] and wrong.total == 6


def test_unknown_metrics_cannot_be_drilled(nleye_run):
    for path in ("triplet.no_such_metric", "triplet", "predictions.requests", ""):
        with pytest.raises(results.UnknownMetric):
            results.drill(nleye_run, path)


def test_nleye_order_consistency_view_and_its_cells(nleye_run, nleye_version):
    board = results.leaderboard(nleye_version)
    (name, _title, rows), = results.consistency(board)
    view = rows[0].view
    assert name == "orders" and view["n"] == 3
    assert view["counts"] == {"both": 1, "first_only": 1, "second_only": 1, "neither": 0}
    assert (view["first_accuracy"], view["second_accuracy"], view["both_accuracy"]) == (2 / 3, 2 / 3, 1 / 3)
    assert view["both_accuracy"] == results.run_metrics(nleye_run)["triplet"]["consistency_accuracy"]
    only_first = results.drill(nleye_run, view["path"], view="orders", view_cell="first_only")
    assert [r.request_id for r in only_first.requests] == ["t2:triplet:order1", "t2:triplet:order2"]
    with pytest.raises(results.UnknownMetric):
        results.drill(nleye_run, view["path"], view="orders", view_cell="sideways")


def test_category_series_follow_the_breakdowns(nleye_run, nleye_version):
    by_key = {s.spec.key: s for s in results.series(nleye_version)}
    category = by_key["category-consistency"]
    assert category.groups == ["physical", "social"]
    assert category.rows[0].values == [1 / 2, 0.0]
    assert [c.path for c in category.rows[0].cells] == ["by_category.physical.triplet.consistency_accuracy",
                                                        "by_category.social.triplet.consistency_accuracy"]
    assert [c.n for c in category.rows[0].cells] == [2, 1]


def test_a_run_is_scored_once_and_again_when_its_predictions_change(nleye_run, monkeypatch):
    first = results.run_results(nleye_run)
    calls = []
    real = results.score_run
    monkeypatch.setattr(results.metrics, "score_run", lambda run, **kw: calls.append(run.pk) or real(run, **kw))

    assert results.run_results(nleye_run).metrics == first.metrics and calls == []  # from the cache
    predict(nleye_run, {"t3:pairs:h1": "9", "t3:pairs:h2": "2"})
    again = results.run_results(nleye_run)
    assert calls == [nleye_run.pk]
    assert again.metrics["pairs"]["order_faithful_accuracy"] == 2 / 3  # t3 is now faithful


def test_failed_predictions_count_as_missing(nleye_version):
    run = make_run(nleye_version)
    predict(run, {"t1:triplet:order1": "1"}, failed=("t1:triplet:order2",))
    metrics = results.run_metrics(run)
    assert metrics["triplet"]["order2"]["missing"] == 3
    assert [r.request_id for r in results.drill(run, "triplet.order2.missing").requests] == [
        "t1:triplet:order2", "t2:triplet:order2", "t3:triplet:order2"]


# --- MAIA ------------------------------------------------------------------------------------------------

def maia_question(category: str) -> dict:
    return {"kind": "question", "video": "video1", "category": category, "question": "Che cosa cuoce nel forno?",
            "answers": [f"Una pizza margherita numero {i}" for i in range(8)],
            "true_statements": [f"Nel forno cuoce una pizza {i}." for i in range(8)],
            "false_statements": [f"Nel forno cuoce una torta {i}." for i in range(8)]}


@pytest.fixture
def maia_run():
    version = frozen_version("maia", "m1", [("q1", maia_question("SpazialeParziale_A"), {}),
                                            ("q2", maia_question("SpazialeParziale_B"), {}),
                                            ("q3", maia_question("Sentiment_A"), {})])
    run = make_run(version, seed=5)
    requests = results.planned_requests(run)
    answers = {}
    for request in requests:
        if request.variant == "vsv":
            wrong = request.item_id == "q2" and request.extra["pair_index"] == 0
            answers[request.request_id] = ("B" if request.gold == "A" else "A") if wrong else request.gold
    answers.update({"q1:oevqa": "Una pizza.", "q2:oevqa": "Una torta.", "q3:oevqa": "Una pizza margherita."})
    predict(run, answers)
    return run


def vsv_ids(*questions: str) -> list[str]:
    return [f"{q}:vsv:{i}" for q in questions for i in range(8)]


def test_maia_pool_and_category_numbers_and_their_requests(tmp_path, maia_run):
    row, = results.leaderboard(maia_run.version).rows
    cells = cells_by_path(row)
    expected = scored_by_command(tmp_path, maia_run)
    assert cells["vsv.independent_accuracy"].value == expected["vsv"]["independent_accuracy"] == 23 / 24
    assert cells["vsv.independent_accuracy"].n == 24
    assert cells["vsv.pool_accuracy"].value == expected["vsv"]["pool_accuracy"] == 2 / 3
    assert cells["vsv.pool_accuracy"].n == 3
    assert not cells["oevqa.judge_accuracy"].computed and not cells["aggregate_accuracy"].computed

    path = "categories.SpazialeParziale.vsv.pool_accuracy"
    assert results.lookup(results.run_metrics(maia_run), path) == 1 / 2
    assert [r.request_id for r in results.drill(maia_run, path).requests] == vsv_ids("q1", "q2")
    assert [r.request_id for r in results.drill(maia_run, "categories.Sentiment.aggregate_accuracy").requests] == [
        *vsv_ids("q3"), "q3:oevqa"]
    assert [r.request_id for r in results.drill(maia_run, "macro_categories.spatial.vsv.pairs.correct").requests] \
        == [rid for rid in vsv_ids("q1", "q2") if rid != "q2:vsv:0"]


def test_maia_independent_vs_pool_view(maia_run):
    (name, _title, rows), = results.consistency(results.leaderboard(maia_run.version))
    view = rows[0].view
    assert name == "pools" and (view["n"], view["pairs"], view["size"]) == (3, 24, 8)
    assert view["counts"] == {**{str(k): 0 for k in range(7)}, "7": 1, "8": 2}
    assert (view["independent_accuracy"], view["pool_accuracy"]) == (23 / 24, 2 / 3)
    seven = results.drill(maia_run, view["path"], view="pools", view_cell="7")
    assert [r.request_id for r in seven.requests] == vsv_ids("q2")


def judge(prediction: Prediction, correct: bool, model: str = "judge-lm") -> Judgment:
    return Judgment.objects.create(prediction=prediction, kind="maia", judge_model=model, judge_backend="causal_lm",
                                   prompt=[], raw_verdict=f"Verdict: {'correct' if correct else 'incorrect'}",
                                   verdict={"correct": correct, "reason": ""}, parse_status="ok")


def test_stored_judgments_make_judge_metrics_and_show_in_the_drill(tmp_path, maia_run, researcher_client):
    before = results.run_results(maia_run)
    open_answers = {p.request_id: p for p in maia_run.predictions.filter(variant="oevqa")}
    judge(open_answers["q1:oevqa"], True)
    judge(open_answers["q2:oevqa"], False)
    judge(open_answers["q3:oevqa"], True)

    after = results.run_results(maia_run)
    assert after.key != before.key  # new judgments: scored again
    assert after.judge == {"kind": "maia", "model": "judge-lm", "judgments": 3, "verdicts": 3,
                           "decoding": "free"}
    metrics = after.metrics
    assert metrics["oevqa"]["judge_accuracy"] == 2 / 3
    assert metrics["aggregate_accuracy"] == 2 / 3  # q1 and q3: pool right and judged correct
    # the same numbers as scoring the stored verdicts through the scorer directly
    predictions = [{**p, "judgment": {"correct": p["request_id"] != "q2:oevqa", "reason": "", "status": "ok"}
                    if p["request_id"].endswith("oevqa") else None} for p in scoring.run_predictions(maia_run)]
    direct = scoring.score_predictions(maia.BENCHMARK, results.planned_requests(maia_run), predictions)
    assert direct["aggregate_accuracy"] == metrics["aggregate_accuracy"]
    assert after.outcomes["q2:oevqa"].status == results.WRONG

    page = researcher_client.get(reverse("results-drill", args=[maia_run.pk, "oevqa.judge_accuracy"]))
    html = page.content.decode()
    assert re.findall(r'data-request-id="([^"]+)"', html) == ["q1:oevqa", "q2:oevqa", "q3:oevqa"]
    assert html.count("Judgment: maia") == 3 and "Verdict: incorrect" in html


# --- C-VQA, charts ----------------------------------------------------------------------------------------

@pytest.fixture
def cvqa_runs():
    version = frozen_version("cvqa", "c1", [
        ("q1", cvqa_payload("two"), {}), ("q2", cvqa_payload("3"), {}),
        ("b1", cvqa_payload("yes", type="boolean", new_answer="no"), {})])
    strong, weak = make_run(version, model_id="org/strong"), make_run(version, model_id="org/weak")
    predict(strong, {"q1:original": "2", "q1:counterfactual": "1", "q2:original": "three",
                     "q2:counterfactual": "1", "b1:original": "Yes.", "b1:counterfactual": "no"})
    predict(weak, {"q1:original": "2", "q1:counterfactual": "2", "q2:original": "I cannot tell",
                   "b1:original": "yes", "b1:counterfactual": "yes"})
    return version, strong, weak


def test_cvqa_leaderboard_has_every_run_with_the_scorers_numbers(tmp_path, cvqa_runs):
    version, strong, weak = cvqa_runs
    rows = {row.run.pk: cells_by_path(row) for row in results.leaderboard(version).rows}
    for run in (strong, weak):
        expected = scored_by_command(tmp_path, run)
        for path in ("real.original_accuracy", "real.counterfactual_accuracy", "real.drop"):
            assert rows[run.pk][path].value == results.lookup(expected, path)
    assert rows[strong.pk]["real.counterfactual_accuracy"].value == 1.0
    assert rows[weak.pk]["real.original_accuracy"].value == 2 / 3
    assert rows[weak.pk]["real.drop"].value == 2 / 3 and rows[weak.pk]["real.drop"].display == "66.7%"
    assert not rows[weak.pk]["synthetic.drop"].present  # the version has no synthetic item
    drilled = results.drill(weak, "real.numerical_direct.counterfactual_accuracy")
    assert [r.request_id for r in drilled.requests] == ["q1:counterfactual", "q2:counterfactual"]
    assert [drilled.outcomes[r.request_id].status for r in drilled.requests] == ["wrong", "missing"]
    (name, _title, view_rows), = results.consistency(results.leaderboard(version))
    assert name == "forms" and view_rows[1].view["counts"] == {"both": 0, "first_only": 2, "second_only": 0,
                                                                "neither": 1}


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    with PILImage.open(io.BytesIO(data)) as image:
        image.verify()
        return image.size


def svg_root(data: bytes):
    root = ET.fromstring(data)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


def test_charts_are_valid_png_and_svg_with_every_model(cvqa_runs):
    version = cvqa_runs[0]
    png = results.chart_image(version, "real-counterfactual", "bar", "png")
    width, height = png_size(png)
    assert width > 300 and height > 200
    svg = results.chart_image(version, "real-counterfactual", "bar", "svg").decode()
    svg_root(svg.encode())
    assert f"<!-- #{cvqa_runs[1].pk} strong -->" in svg and f"<!-- #{cvqa_runs[2].pk} weak -->" in svg  # the legend
    with pytest.raises(results.UnknownMetric):
        results.chart_image(version, "real-counterfactual", "radar", "png")  # a radar only where it is offered
    with pytest.raises(results.UnknownMetric):
        results.chart_image(version, "real-counterfactual", "bar", "gif")
    with pytest.raises(results.UnknownMetric):
        results.chart_image(version, "no-such-series", "bar", "png")


def test_plots_draw_bars_radars_and_say_when_there_is_nothing():
    groups = ["SpazialeParziale", "Sentiment", "Incertezza", "Pianificazione"]
    radar = plots.radar_chart("Pool accuracy", groups, [("#1 qwen", [0.5, 1.0, None, 0.25]), ("#2 llava", [0.1] * 4)],
                              fmt="svg")
    svg_root(radar)
    assert radar.count(b"<!-- #1 qwen -->") == 1 and b"<!-- Incertezza -->" in radar
    too_few = plots.radar_chart("Pool", groups[:2], [("#1", [0.5, 0.5])], fmt="svg")
    assert b"<!-- A radar chart needs three categories or more. -->" in too_few
    empty = plots.bar_chart("Nothing", ["a", "b"], [("#1", [None, None])], fmt="svg")
    assert b"<!-- No scored run has a value here yet. -->" in empty and svg_root(empty) is not None
    with pytest.raises(plots.ChartError):
        plots.bar_chart("Bad", ["a", "b"], [("#1", [0.5])])
    with pytest.raises(plots.ChartError):
        plots.bar_chart("Bad", ["a"], [("#1", [0.5])], fmt="jpeg")


# --- BlackSwan and CVRR-ES ---------------------------------------------------------------------------------

SPLIT = {"preevent": 0.5, "event": 3.0, "postevent": 6.5, "end": 9.0}
OPTIONS = ["He slips on the ice and falls.", "He catches the ball.", "The dog takes the ball."]


def blackswan_mcq(hard: bool) -> dict:
    marks = ["no", "no", "no"] if hard else ["no", "yes", "no"]
    return {**SPLIT, "kind": "mcq", "mcq_task": 1, "mcq_options": list(OPTIONS), "mcq_label": 0,
            "task3_checkboxes": marks}


def test_blackswan_hard_and_easy_subsets_drill_to_their_questions(tmp_path):
    version = frozen_version("blackswan", "b1", [
        ("m1", {**blackswan_mcq(True), "id": "m1"}, {}), ("m2", {**blackswan_mcq(False), "id": "m2"}, {}),
        ("m3", {**blackswan_mcq(False), "id": "m3"}, {}),
        ("v1", {**SPLIT, "kind": "video", "id": "v1", "task1_gt": ["He falls.", "He waves.", "He runs."],
                "task2_gt": ["", "", ""], "task2_checkboxes": ["yes", "yes", "yes"], "task3_gt": "He falls."}, {})])
    run = make_run(version, input_strategy="frames")
    gold = {r.request_id: r.gold for r in results.planned_requests(run)}
    wrong = next(letter for letter in "ABC" if letter != gold["m2:detective_mcq"])
    predict(run, {"m1:detective_mcq": f"Answer: {gold['m1:detective_mcq']}", "m2:detective_mcq": wrong,
                  "v1:forecaster_gen": "He slips and falls."})  # m3 is missing

    cells = cells_by_path(results.leaderboard(version).rows[0])
    expected = scored_by_command(tmp_path, run)
    assert cells["detective_mcq.accuracy"].value == expected["detective_mcq"]["accuracy"] == 1 / 3
    assert not cells["forecaster_gen.clip_score"].computed and "CLIP" in cells["forecaster_gen.clip_score"].reason
    assert not cells["reporter_mcq.accuracy"].present
    assert [r.request_id for r in results.drill(run, "detective_mcq.hard.accuracy").requests] == ["m1:detective_mcq"]
    assert [r.request_id for r in results.drill(run, "detective_mcq.easy.accuracy").requests] == [
        "m2:detective_mcq", "m3:detective_mcq"]
    assert [r.request_id for r in results.drill(run, "detective_mcq.missing").requests] == ["m3:detective_mcq"]
    difficulty = next(s for s in results.series(version) if s.spec.key == "mcq-difficulty")
    assert difficulty.rows[0].values == [1.0, 0.0, None, None]


def test_cvrr_dimensions_from_stored_judgments(tmp_path):
    qa = {"kind": "qa", "question": "Does he open the door?", "answer": "No."}
    version = frozen_version("cvrr", "r1", [
        ("p1", {**qa, "dimension": "partial_actions", "video_id": "p1"}, {}),
        ("p2", {**qa, "dimension": "Partial actions", "video_id": "p2"}, {}),
        ("t1", {**qa, "dimension": "time_order_understanding", "video_id": "t1"}, {})])
    run = make_run(version)
    made = predict(run, {"p1:qa": "No, he does not.", "p2:qa": "Yes.", "t1:qa": "He never does."})
    assert not results.leaderboard(version).rows[0].cells[0].computed  # not judged yet
    for request_id, pred, score in (("p1:qa", "correct", 5), ("p2:qa", "incorrect", 1), ("t1:qa", "correct", 4)):
        Judgment.objects.create(prediction=made[request_id], kind="cvrr", judge_model="judge-lm",
                                judge_backend="causal_lm", prompt=[], raw_verdict=str({"pred": pred}),
                                verdict={"pred": pred, "score": score, "reason": ""}, parse_status="ok")

    cells = cells_by_path(results.leaderboard(version).rows[0])
    assert cells["accuracy"].value == (1 / 2 + 1) / 2  # the mean of the two dimensions' accuracies
    assert cells["mean_score"].value == (3 + 4) / 2 and cells["pooled_accuracy"].n == 3
    assert [r.request_id for r in results.drill(run, "dimensions.partial_actions.accuracy").requests] == [
        "p1:qa", "p2:qa"]
    assert [r.request_id for r in results.drill(run, "dimensions.partial_actions.correct").requests] == ["p1:qa"]
    dimension = next(s for s in results.series(version) if s.spec.key == "dimension-accuracy")
    assert dimension.labels == ["Partial actions", "Time order understanding"]
    assert dimension.rows[0].values == [1 / 2, 1.0]


# --- Pages ------------------------------------------------------------------------------------------------

def test_results_page_lists_frozen_versions_with_their_runs(researcher_client, nleye_run, draft_version):
    html = researcher_client.get(reverse("results")).content.decode()
    assert 'data-version="nleye:n1"' in html and "draft-1" not in html
    assert f'href="/runs/{nleye_run.pk}/"' in html
    assert reverse("results-version", args=[nleye_run.version.pk]) in html


def test_leaderboard_page_links_each_number_to_its_predictions(researcher_client, nleye_run):
    html = researcher_client.get(reverse("results-version", args=[nleye_run.version.pk])).content.decode()
    drill_url = reverse("results-drill", args=[nleye_run.pk, "triplet.consistency_accuracy"])
    assert re.search(rf'<a href="{re.escape(drill_url)}">33\.3%</a>\s*<span class="n">n=3</span>', html)
    assert reverse("results-chart", args=[nleye_run.version.pk, "category-consistency", "bar", "svg"]) in html
    assert reverse("results-chart", args=[nleye_run.version.pk, "category-consistency", "bar", "png"]) + "?download=1" \
        in html
    assert f'href="/runs/{nleye_run.pk}/"' in html
    assert "?view=orders&amp;cell=first_only" in html


def test_drill_page_shows_the_predictions_with_their_prompts_and_outputs(researcher_client, nleye_run):
    url = reverse("results-drill", args=[nleye_run.pk, "triplet.order1_accuracy"])
    html = researcher_client.get(url).content.decode()
    assert re.findall(r'data-request-id="([^"]+)"', html) == ["t1:triplet:order1", "t2:triplet:order1",
                                                              "t3:triplet:order1"]
    assert "1. The floor is wet." in html and "Both seem fine." in html
    assert "Question of t3:triplet:order1" in html  # the stored prompt, in its collapsible block
    filtered = researcher_client.get(url, {"outcome": "unparsed"}).content.decode()
    assert re.findall(r'data-request-id="([^"]+)"', filtered) == ["t3:triplet:order1"]
    assert researcher_client.get(reverse("results-drill", args=[nleye_run.pk, "triplet.nothing"])).status_code == 404


def test_every_metric_of_a_run_links_to_its_predictions(researcher_client, nleye_run, cvqa_runs):
    for run in (nleye_run, cvqa_runs[2]):
        html = researcher_client.get(reverse("results-run", args=[run.pk])).content.decode()
        paths = re.findall(r'<tr data-metric="([^"]+)">', html)
        assert len(paths) == len(results.flat_metrics(results.run_metrics(run))) > 20
        for path in paths:
            page = researcher_client.get(reverse("results-drill", args=[run.pk, path]))
            assert page.status_code == 200, path
            shown = re.findall(r'data-request-id="([^"]+)"', page.content.decode())
            assert shown == [r.request_id for r in results.drill(run, path).requests][:40], path


def test_run_metrics_page_and_json(researcher_client, nleye_run):
    html = researcher_client.get(reverse("results-run", args=[nleye_run.pk])).content.decode()
    assert 'data-metric="by_category.social.triplet.order2_accuracy"' in html
    body = researcher_client.get(reverse("results-run-json", args=[nleye_run.pk])).json()
    assert body["triplet"]["consistency_accuracy"] == 1 / 3
    assert body["meta"]["run"] == nleye_run.pk and body["meta"]["benchmark"] == "nleye"


def test_chart_download_sends_an_attachment(researcher_client, cvqa_runs):
    version = cvqa_runs[0]
    url = reverse("results-chart", args=[version.pk, "real-counterfactual", "bar", "png"])
    response = researcher_client.get(url, {"download": "1"})
    assert response["Content-Type"] == "image/png"
    assert response["Content-Disposition"] == 'attachment; filename="cvqa-c1-real-counterfactual-bar.png"'
    png_size(response.content)
    svg = researcher_client.get(reverse("results-chart", args=[version.pk, "real-counterfactual", "bar", "svg"]))
    assert svg["Content-Type"] == "image/svg+xml" and "Content-Disposition" not in svg
    svg_root(svg.content)
    # matplotlib's SVG styles its shapes inline, also when opened on its own; scripts stay this site's only
    policy = svg["Content-Security-Policy"]
    assert "style-src 'self' 'unsafe-inline'" in policy and "script-src 'self';" in policy
    assert researcher_client.get(reverse("results-chart", args=[version.pk, "real-counterfactual", "pie",
                                                                "png"])).status_code == 404


@pytest.mark.parametrize("role_fixture, status", [("annotator", 403), ("curator", 403), ("researcher", 200),
                                                  ("admin_user", 200)])
def test_only_researchers_and_admins_see_results(request, nleye_run, role_fixture, status):
    client = logged_in_client(request.getfixturevalue(role_fixture))
    version = nleye_run.version.pk
    for url in (reverse("results"), reverse("results-version", args=[version]),
                reverse("results-chart", args=[version, "category-consistency", "bar", "png"]),
                reverse("results-run", args=[nleye_run.pk]), reverse("results-run-json", args=[nleye_run.pk]),
                reverse("results-drill", args=[nleye_run.pk, "triplet.consistency_accuracy"])):
        assert client.get(url).status_code == status, url


# --- The sections of a version's page --------------------------------------------------------------------

@pytest.mark.parametrize("slug", benchmarks.slugs())
def test_a_version_page_shows_the_sections_its_benchmark_declares(researcher_client, slug):
    """Each benchmark's results page renders the sections its module declares (`Benchmark.results_sections`),
    in that order and no other; those that need no results (what can be started) show on an empty version."""
    version = BenchmarkVersion.objects.create(benchmark=BenchmarkRecord.objects.get(slug=slug), label="sections")
    response = researcher_client.get(reverse("results-version", args=[version.pk]))
    assert response.status_code == 200
    declared = benchmarks.get(slug).results_sections
    rendered = [template.name for template in response.templates if template.name.startswith("frontend/results/")]
    assert rendered == [section.template for section in declared]
    html = response.content.decode()
    assert "<h2>Leaderboard</h2>" in html and "No run on this version has succeeded yet." in html
    assert all(f'id="{shown}"' in html for shown in ("baselines", "subsets", "human-evaluation"))


def test_the_generic_sections_are_the_default_and_a_benchmark_s_own_go_after_the_judge_agreement():
    assert Benchmark.results_sections == RESULTS_SECTIONS
    own = ResultsSection("ratings", "Ratings")
    kinds = [section.kind for section in results_sections_with(own)]
    assert kinds[:3] == ["leaderboard", "judge_agreement", "ratings"] and len(kinds) == len(RESULTS_SECTIONS) + 1
    assert own.template == "frontend/results/ratings.html"
    for benchmark in benchmarks.registered():
        assert [s.kind for s in benchmark.results_sections if s.kind in {r.kind for r in RESULTS_SECTIONS}] == [
            section.kind for section in RESULTS_SECTIONS]
