"""MAIA evaluation requests: eight seeded A/B statement pairs and one open question per item."""

from collections import Counter

import pytest

from annotation import versions
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion
from evaluation import benchmarks
from evaluation.benchmarks.base import RequestOptions, derived_seed, shuffle_options
from evaluation.benchmarks.maia import benchmark as maia
from tests.conftest import ingest_path

QUESTION = "Che cosa sta cuocendo nel forno?"
ANSWERS = [f"Una pizza margherita ({i})" for i in range(8)]
TRUES = [f"Nel forno cuoce una pizza, versione {i}." for i in range(8)]
FALSES = [f"Nel forno cuoce una torta, versione {i}." for i in range(8)]


def maia_item(external_id="video1-q03", *, statements=True, **overrides) -> BenchmarkItem:
    payload = {"kind": "question", "video": "video1", "category": "SpazialeParziale_A", "question": QUESTION,
               "answers": list(ANSWERS)}
    if statements:
        payload |= {"true_statements": list(TRUES), "false_statements": list(FALSES)}
    payload.update(overrides)
    return BenchmarkItem(external_id=external_id, payload=payload)


def build(item, seed=0, prompting="standard"):
    return maia.BENCHMARK.requests(item, RequestOptions(seed=seed, prompting=prompting))


def vsv(requests):
    return [r for r in requests if r.variant == "vsv"]


def test_registry_returns_the_maia_benchmark():
    assert benchmarks.get("maia") is maia.BENCHMARK
    assert maia.BENCHMARK.variants == ("vsv", "oevqa")


def test_eight_statement_pairs_and_one_open_question():
    requests = build(maia_item())

    assert [r.request_id for r in requests] == [f"video1-q03:vsv:{i}" for i in range(8)] + ["video1-q03:oevqa"]
    assert Counter(r.variant for r in requests) == {"vsv": 8, "oevqa": 1}
    assert {r.item_id for r in requests} == {"video1-q03"}
    assert all(r.extra["pool"] == "video1-q03" for r in requests)
    assert [r.extra["pair_index"] for r in vsv(requests)] == list(range(8))


def test_each_pair_shows_its_true_and_false_statement_and_gold_is_the_true_letter():
    for request in vsv(build(maia_item(), seed=3)):
        index = request.extra["pair_index"]
        assert request.answer_type == "letter"
        assert list(request.options) == ["A", "B"]
        assert sorted(request.options.values()) == sorted([TRUES[index], FALSES[index]])
        assert request.options[request.gold] == TRUES[index]
        other = "B" if request.gold == "A" else "A"
        assert request.options[other] == FALSES[index]
        assert request.extra["order"] == (["true", "false"] if request.gold == "A" else ["false", "true"])


def test_the_order_comes_from_the_seed_and_the_request_id():
    for request in vsv(build(maia_item(), seed=11)):
        index = request.extra["pair_index"]
        expected = shuffle_options([TRUES[index], FALSES[index]], 0, 11, request.request_id)
        assert (request.options, request.gold) == (expected.options, expected.gold)
        assert request.extra["option_seed"] == derived_seed(11, request.request_id)
        assert request.extra["seed"] == 11


def test_same_seed_same_requests_other_seed_other_orders():
    first, again = build(maia_item(), seed=5), build(maia_item(), seed=5)
    assert [(r.request_id, r.prompt, r.options, r.gold) for r in first] == \
        [(r.request_id, r.prompt, r.options, r.gold) for r in again]

    golds_by_seed = {seed: [r.gold for r in vsv(build(maia_item(), seed=seed))] for seed in range(6)}
    assert len({tuple(golds) for golds in golds_by_seed.values()}) > 1


def test_true_statement_is_not_always_under_the_same_letter():
    golds = Counter(r.gold for seed in range(5) for item_id in ("a", "b", "c")
                    for r in vsv(build(maia_item(item_id), seed=seed)))
    assert sum(golds.values()) == 120
    assert 40 <= golds["A"] <= 80


def test_vsv_prompt_lists_the_statements_in_the_order_shown():
    request = vsv(build(maia_item(), seed=2))[4]
    assert request.prompt == maia.VSV_PROMPT.format(a=request.options["A"], b=request.options["B"])
    assert request.prompt.index(f"A: {request.options['A']}") < request.prompt.index(f"B: {request.options['B']}")
    assert "Rispondi solo con la lettera" in request.prompt
    assert request.text == QUESTION


def test_open_question_asks_for_one_italian_sentence_and_keeps_the_eight_answers():
    (request,) = [r for r in build(maia_item()) if r.variant == "oevqa"]

    assert request.prompt == maia.OEVQA_PROMPT.format(question=QUESTION)
    assert request.prompt.endswith(f"Domanda: {QUESTION}")
    assert "una sola frase in italiano" in request.prompt
    assert request.gold == ANSWERS
    assert request.answer_type == "free"
    assert request.options is None


def test_questions_without_statements_give_only_the_open_question():
    requests = build(maia_item(statements=False))
    assert [r.request_id for r in requests] == ["video1-q03:oevqa"]


def test_mismatched_statement_lists_are_refused():
    with pytest.raises(ValueError, match="8 true but 7 false"):
        build(maia_item(false_statements=FALSES[:7]))


@pytest.mark.parametrize(("release", "category", "macro"), [
    ("SpazialeParziale_A", "spatial_partial", "spatial"),
    ("SpazialeTotale_B", "spatial_total", "spatial"),
    ("TemporaleDurata_A", "temporal_duration", "temporal"),
    ("TemporaleParziale_B", "temporal_partial", "temporal"),
    ("Incertezza_A", "uncertainty", "uncertainty"),
    ("OutofScope_B", "out_of_scope", "out_of_scope"),
    ("Pianificazione_A", "planning", "planning"),
    ("Sentiment_B", "sentiment", "sentiment"),
    ("CausaleEsplicita_A", "causal", "causal"),
    ("Controfattuale_B", "counterfactual", "counterfactual"),
    ("ImplicitoParziale_A", "implicit_partial", "implicit"),
    ("ImplicitoTot", "implicit_total", "implicit"),
])
def test_release_category_names_map_to_category_and_macro_category(release, category, macro):
    requests = build(maia_item(category=release))
    assert {(r.extra["category"], r.extra["macro_category"], r.extra["category_release"]) for r in requests} == {
        (category, macro, release)}


def test_twelve_categories_in_nine_table_groups():
    categories = {maia.category(name) for name in (
        "SpazialeParziale", "SpazialeTotale", "TemporaleDurata", "TemporaleParziale", "Incertezza", "OutofScope",
        "Pianificazione", "Sentiment", "CausaleEsplicita", "Controfattuale", "ImplicitoParziale", "ImplicitoTot")}
    assert len({name for name, _ in categories}) == 12
    macros = Counter(macro for _, macro in categories)
    assert len(macros) == 9
    assert {macro for macro, count in macros.items() if count == 2} == {"spatial", "temporal", "implicit"}


def test_unknown_category_is_refused_by_name():
    with pytest.raises(ValueError, match="Spaziale3D_A"):
        build(maia_item(category="Spaziale3D_A"))


def test_other_prompting_strategies_are_refused():
    with pytest.raises(ValueError, match="cot"):
        build(maia_item(), prompting="cot")


@pytest.mark.django_db
def test_every_request_shows_the_items_video(bikes, curator):
    video = ingest_path(bikes, user=curator, probe=False)
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="v1")
    item = versions.add_item(version, "video1-q03", maia_item().payload, media={"video": video})

    requests = build(BenchmarkItem.objects.prefetch_related("media").get(pk=item.pk))

    assert len(requests) == 9
    assert {(m.role, m.kind, m.asset_id) for r in requests for m in r.media} == {("video", "video", video.pk)}
