"""MAIA answer-pool checks: lexical diversity by hand, NLI checks (tiny model and a forced contradiction),
the review queue, the agreement report, the command and the pages' permissions."""

import json
from math import isclose

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import versions
from annotation.benchmarks.maia import pool_checks
from annotation.benchmarks.maia.pool_checks import content_words, jaccard, lexical_stats, tokens
from annotation.curation_models import ItemCheck
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion

QUESTION = "Dove si trova il coniglio?"
POOL = ["L'acqua è fredda.", "dell'acqua calda"] + ["Nel prato."] * 6
AGREEING = ["In un prato.", "Su un prato verde.", "In mezzo all'erba.", "Vicino agli alberi.",
            "All'aperto.", "Sul prato.", "In un campo erboso.", "Nell'erba."]
ODD_ANSWER = "Nel deserto."


def payload(category, answers, question=QUESTION):
    return {"kind": "question", "video": "v1", "category": category, "question": question, "answers": answers}


@pytest.fixture
def version(db):
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="pools-1")
    for external_id, category, answers in [
        ("p1", "Sentiment_A", AGREEING),
        ("p2", "Sentiment_A", AGREEING[:7] + [ODD_ANSWER]),
        ("p3", "Spaziale_B", AGREEING),
    ]:
        BenchmarkItem.objects.create(version=version, external_id=external_id, payload=payload(category, answers))
    return version


class ForcedScorer:
    """Contradiction (0.9) exactly when the hypothesis is the question followed by ODD_ANSWER and the premise
    is another answer; entailment otherwise."""

    model_id = "forced"

    def __init__(self):
        self.calls = []

    def probabilities(self, premises, hypotheses):
        self.calls.append((list(premises), list(hypotheses)))
        odd = pool_checks.framed(QUESTION, ODD_ANSWER)
        return [{"contradiction": 0.9, "entailment": 0.05, "neutral": 0.05}
                if h == odd and p not in (odd, QUESTION) else
                {"contradiction": 0.1, "entailment": 0.8, "neutral": 0.1}
                for p, h in zip(premises, hypotheses, strict=True)]


# --- lexical ---------------------------------------------------------------------------------------

def test_tokens_lower_case_split_on_non_letters_and_elisions():
    assert tokens("L'acqua è fredda, 3 gradi!") == ["l", "acqua", "è", "fredda", "gradi"]
    assert content_words("L'acqua è fredda, 3 gradi!") == ["acqua", "fredda", "gradi"]
    assert content_words("Dell'auto, un'ora c'è") == ["auto", "ora"]
    assert content_words("Perché è così?") == ["perché", "così"]


def test_jaccard_by_hand():
    assert jaccard({"acqua", "fredda"}, {"acqua", "calda"}) == 1 / 3
    assert jaccard(set(), set()) == 1.0
    assert jaccard({"prato"}, set()) == 0.0


def test_lexical_stats_by_hand():
    # pairs: acqua/fredda vs acqua/calda = 1/3; 12 pairs with "prato" and another = 0; 15 prato pairs = 1
    stats = lexical_stats(POOL)
    assert stats["pairs"] == 28
    assert isclose(stats["overlap"], (1 / 3 + 15) / 28)
    assert isclose(stats["overlap"], 23 / 42)
    # content tokens: acqua fredda acqua calda + 6 × prato = 10; types: acqua fredda calda prato = 4
    assert stats["content_tokens"] == 10
    assert stats["ttr"] == 0.4
    assert lexical_stats(["è", "il"] + ["la"] * 6)["ttr"] == 0.0


# --- NLI ---------------------------------------------------------------------------------------------

def test_check_pool_frames_every_ordered_pair_and_each_answer_with_its_question():
    scorer = ForcedScorer()
    contradictions, inconsistent = pool_checks.check_pool(payload("X_A", AGREEING[:7] + [ODD_ANSWER]), scorer)
    premises, hypotheses = scorer.calls[0]
    assert len(premises) == 8 + 56
    assert premises[:8] == [QUESTION] * 8 and hypotheses[0] == f"{QUESTION} In un prato."
    assert inconsistent == []
    assert [(c["premise"], c["hypothesis"]) for c in contradictions] == [(i, 7) for i in range(7)]
    assert all(c["p"] == 0.9 for c in contradictions)


def test_tiny_nli_model_records_one_check_per_pool(version, curator, tiny_models_dir, tiny_registry):
    scorer = pool_checks.load_scorer(str(tiny_models_dir / "nli"))
    results = pool_checks.run_checks(version, curator, scorer, model_id="tiny", threshold=0.5)
    assert [r.external_id for r in results] == ["p1", "p2", "p3"]
    checks = ItemCheck.objects.filter(item__version=version, aspect=pool_checks.ASPECT)
    assert checks.count() == 3
    for result in results:
        check = checks.get(item_id=result.item_id)
        assert check.checked_by == curator
        assert check.verdict == (ItemCheck.Verdict.PASS if result.agrees else ItemCheck.Verdict.FAIL)
        assert check.subject["model"] == "tiny" and len(check.subject["answers"]) == 8
        for c in check.subject["contradictions"]:
            assert 0 <= c["premise"] < 8 and 0 <= c["hypothesis"] < 8 and c["premise"] != c["hypothesis"]
            assert c["p"] >= 0.5
        assert {r.item_id for r in results if not r.agrees} == {i.pk for i, _ in pool_checks.review_queue(version)}


def test_missing_model_and_bad_threshold_are_refused(version, curator, settings):
    settings.MAIA_NLI_MODEL = ""
    with pytest.raises(pool_checks.PoolCheckError, match="Name an NLI model"):
        pool_checks.load_scorer("")
    with pytest.raises(pool_checks.PoolCheckError, match="threshold"):
        pool_checks.run_checks(version, curator, ForcedScorer(), threshold=0)
    assert not ItemCheck.objects.exists()


# --- review and report -----------------------------------------------------------------------------

def test_forced_contradiction_goes_to_review_and_the_report_counts_it(version, curator):
    assert pool_checks.report(version)["overall"] == {"pools": 3, "checked": 0, "agree": 0, "share": None}
    pool_checks.run_checks(version, curator, ForcedScorer(), model_id="forced")
    queue = pool_checks.review_queue(version)
    assert [item.external_id for item, _ in queue] == ["p2"]
    check = queue[0][1]
    assert check.verdict == ItemCheck.Verdict.FAIL and check.checked_by == curator
    assert "answer 1 «In un prato.» contradicts answer 8 «Nel deserto.»" in check.note

    data = pool_checks.report(version)
    assert data["overall"] == {"pools": 3, "checked": 3, "agree": 2, "share": 2 / 3}
    assert data["categories"] == [
        {"category": "Sentiment_A", "pools": 2, "checked": 2, "agree": 1, "share": 0.5},
        {"category": "Spaziale_B", "pools": 1, "checked": 1, "agree": 1, "share": 1.0}]
    assert isclose(data["means"]["ttr"], mean_ttr := sum(r["ttr"] for r in data["pools"]) / 3)
    assert mean_ttr == pytest.approx((2 * lexical_stats(AGREEING)["ttr"]
                                      + lexical_stats(AGREEING[:7] + [ODD_ANSWER])["ttr"]) / 3)

    override = pool_checks.review(queue[0][0].pk, curator, pool_checks.REVIEW_OVERRIDE, "deserto is a joke")
    assert override.verdict == ItemCheck.Verdict.PASS and override.subject["of_check"] == check.pk
    assert pool_checks.review_queue(version) == []
    assert pool_checks.report(version)["overall"]["share"] == 1.0
    with pytest.raises(pool_checks.PoolCheckError, match="not waiting for review"):
        pool_checks.review(queue[0][0].pk, curator, pool_checks.REVIEW_CONFIRM)


def test_a_changed_pool_is_unchecked_again(version, curator):
    pool_checks.run_checks(version, curator, ForcedScorer())
    item = version.items.get(external_id="p2")
    item.payload = payload("Sentiment_A", AGREEING)
    item.save()
    data = pool_checks.report(version)
    assert data["overall"] == {"pools": 3, "checked": 2, "agree": 2, "share": 1.0}
    assert pool_checks.review_queue(version) == []


def test_a_pool_whose_contradiction_a_curator_confirmed_is_not_frozen(curator):
    """The NLI check finds answer 8 of p2 contradicting the others and a curator confirms it in review: freezing
    the version is refused, naming p2 and the review; once a curator overrides it, the version freezes."""
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="pools-2")
    for external_id, answers in (("p1", AGREEING), ("p2", AGREEING[:7] + [ODD_ANSWER])):
        versions.add_item(version, external_id, payload("Sentiment_A", answers))
    pool_checks.run_checks(version, curator, ForcedScorer(), model_id="forced")
    [(item, _check)] = pool_checks.review_queue(version)
    pool_checks.review(item.pk, curator, pool_checks.REVIEW_CONFIRM, "Nel deserto contradicts the meadow.")

    with pytest.raises(versions.FreezeRefused) as refused:
        versions.freeze(version)

    [(external_id, reason)] = refused.value.items
    assert external_id == "p2"
    assert reason.startswith("confirmed the contradiction in the review of the MAIA pool checks by cur on ")
    assert reason.endswith(": Nel deserto contradicts the meadow.")
    version.refresh_from_db()
    assert not version.frozen

    pool_checks.run_checks(version, curator, ForcedScorer(), model_id="forced")  # a new automatic check, failing
    with pytest.raises(versions.FreezeRefused):
        versions.freeze(version)  # the curator's review is still the latest decision on the same answers
    pool_checks.review(item.pk, curator, pool_checks.REVIEW_OVERRIDE, "A desert meadow, after all.")
    assert versions.freeze(version).frozen


# --- command -----------------------------------------------------------------------------------------

def test_command_runs_and_reports(version, curator, annotator, tiny_models_dir, tiny_registry, capsys):
    call_command("maia_pool_checks", "run", "--version", "pools-1", "--nli-model", str(tiny_models_dir / "nli"),
                 "--user", curator.username)
    assert "3 pool(s) checked" in capsys.readouterr().out
    call_command("maia_pool_checks", "report", "--version", "pools-1", "--json")
    data = json.loads(capsys.readouterr().out)
    assert data["overall"]["checked"] == 3 and len(data["pools"]) == 3
    call_command("maia_pool_checks", "report", "--version", "pools-1")
    assert "of 3 checked pools in full agreement" in capsys.readouterr().out
    with pytest.raises(CommandError, match="not a curator"):
        call_command("maia_pool_checks", "run", "--version", "pools-1", "--nli-model", "x",
                     "--user", annotator.username)
    with pytest.raises(CommandError, match="no MAIA version"):
        call_command("maia_pool_checks", "report", "--version", "nope")
    with pytest.raises(CommandError, match="Unknown model '/no/such/model': it is not in the model registry"):
        call_command("maia_pool_checks", "run", "--version", "pools-1", "--nli-model", "/no/such/model",
                     "--user", curator.username)
    assert ItemCheck.objects.count() == 3


# --- pages ---------------------------------------------------------------------------------------------

def test_pages_show_the_report_and_take_a_decision(version, curator, curator_client, annotator_client):
    pool_checks.run_checks(version, curator, ForcedScorer(), model_id="forced")
    report_url = reverse("maia-pool-report", kwargs={"pk": version.pk})
    review_url = reverse("maia-pool-review", kwargs={"pk": version.pk})
    assert annotator_client.get(report_url).status_code == 403
    page = curator_client.get(report_url)
    assert page.status_code == 200 and b'data-category="Sentiment_A"' in page.content
    page = curator_client.get(review_url)
    assert b'data-item="p2"' in page.content and b'data-item="p1"' not in page.content
    p2 = version.items.get(external_id="p2")
    decide = reverse("maia-pool-decide", kwargs={"pk": version.pk, "item_id": p2.pk})
    assert annotator_client.post(decide, {"decision": "confirm"}).status_code == 403
    assert curator_client.post(decide, {"decision": "maybe"}).status_code == 400
    other = version.items.get(external_id="p1")
    wrong = reverse("maia-pool-decide", kwargs={"pk": version.pk, "item_id": other.pk})
    assert curator_client.post(wrong, {"decision": "confirm"}).status_code == 400
    assert ItemCheck.objects.count() == 3
    response = curator_client.post(decide, {"decision": "confirm", "note": "really contradicts"})
    assert response.status_code == 302
    latest = pool_checks.latest_check(p2)
    assert latest.verdict == ItemCheck.Verdict.FAIL and latest.subject["review"] == "confirm"
    assert latest.note == "really contradicts"
    assert b"No pool waits for review" in curator_client.get(review_url).content
