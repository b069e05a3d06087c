"""MAIA false statements: structural minimality, NLI contradiction, recorded checks and curator edits."""

import pytest

from annotation.benchmarks.maia import minimal_pairs as mp
from annotation.curation_models import ItemCheck
from annotation.models import Benchmark, BenchmarkVersion, FrozenError
from annotation.versions import add_item, freeze
from generation.backends import registry

TRUE = [f"L'uomo taglia {n} pomodori sul tavolo." for n in range(8)]
FALSE = [f"La donna taglia {n} pomodori sul tavolo." for n in range(8)]


def payload(falses=None):
    return {"kind": "question", "video": "video1", "category": "Sentiment_A", "question": "Che cosa fa l'uomo?",
            "answers": [f"Taglia pomodori {n}." for n in range(8)], "true_statements": list(TRUE),
            "false_statements": list(falses or FALSE)}


def unfrozen_item(falses=None, label="mp-1"):
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label=label)
    return add_item(version, "q1", payload(falses), {})


class ForcedNLI:
    """An NLI stand-in whose most probable label is `label` for every pair."""

    labels = ["contradiction", "entailment", "neutral"]

    def __init__(self, label):
        self.label = label

    def probabilities(self, premises, hypotheses):
        return [{name: (0.8 if name == self.label else 0.1) for name in self.labels} for _ in premises]


def test_tokens_split_italian_elisions_and_drop_punctuation():
    assert mp.tokens("L’uomo, dell'auto è lì!") == ["l'", "uomo", "dell'", "auto", "è", "lì"]


@pytest.mark.parametrize("a,b,expected", [
    ("il gatto dorme", "il gatto dorme", 0),
    ("il gatto dorme", "il cane dorme", 1),
    ("il gatto dorme", "il gatto non dorme", 1),
    ("l'uomo corre", "la donna corre", 2),
    ("a b c d", "d c b a", 4),
])
def test_word_edit_distance(a, b, expected):
    assert mp.edit_distance(mp.tokens(a), mp.tokens(b)) == expected


def test_structural_bounds_and_length_ratio():
    ok = mp.check_pair("L'uomo taglia i pomodori.", "La donna taglia i pomodori.")
    assert ok.ok and ok.edits == 2 and ok.contradiction is None
    same = mp.check_pair("Il cuoco taglia.", "il cuoco  taglia")
    assert same.reasons == ["the false statement does not change the true one"]
    far = mp.check_pair("Il cuoco taglia i pomodori rossi.", "Una bambina lava piatti blu sporchi.")
    assert any("more than 4" in r for r in far.reasons)
    short = mp.check_pair("Il cuoco taglia i pomodori rossi", "Il cuoco", bounds=mp.Bounds(max_edits=10))
    assert short.edits == 4 and any("length ratio 0.33" in r for r in short.reasons)
    three = mp.check_pair("a b c d e f", "x y z d e f", bounds=mp.Bounds(max_edits=2))
    assert three.reasons[0].startswith("3 word edits")
    with pytest.raises(ValueError):
        mp.Bounds(min_edits=3, max_edits=2)


def test_contradiction_through_forced_labels():
    assert mp.check_pair("Il gatto dorme.", "Il cane dorme.", ForcedNLI("contradiction")).ok
    neutral = mp.check_pair("Il gatto dorme.", "Il cane dorme.", ForcedNLI("neutral"))
    assert not neutral.ok and neutral.nli_label == "neutral"
    assert neutral.reasons == ["NLI reads the false statement as neutral with the true one (contradiction 0.10)"]


def test_contradiction_with_the_tiny_nli_model(tiny_models_dir, monkeypatch):
    nli = registry.load_backend("nli", str(tiny_models_dir / "nli"), device="cpu")
    check = mp.check_pair("Il gatto dorme.", "Il cane dorme.", nli)
    probs = nli.probabilities(["Il gatto dorme."], ["Il cane dorme."])[0]
    assert check.contradiction == pytest.approx(probs["contradiction"])
    assert check.ok == (max(probs, key=probs.get) == "contradiction")
    monkeypatch.setattr(nli, "probabilities", ForcedNLI("entailment").probabilities)
    assert "entailment" in mp.check_pair("Il gatto dorme.", "Il cane dorme.", nli).reasons[0]


@pytest.mark.django_db
def test_check_item_records_failures_for_review_and_edit_fixes_them(curator, annotator):
    falses = list(FALSE)
    falses[3] = TRUE[3]  # unchanged
    falses[5] = "Un bambino lava piatti sporchi in cucina."  # not minimal
    item = unfrozen_item(falses)
    checks = mp.check_item(item, ForcedNLI("contradiction"), by=curator)
    assert [c.ok for c in checks] == [True, True, True, False, True, False, True, True]
    rows = ItemCheck.objects.filter(item=item)
    assert rows.count() == 8
    failed = rows.get(aspect="statement:5")
    assert failed.verdict == "fail" and "not a minimal pair" in failed.note
    assert failed.subject["false"] == falses[5] and failed.subject["true"] == TRUE[5]

    listed = mp.failing_pairs(item.version)
    assert [(f.item.pk, [p.index for p in f.pairs]) for f in listed] == [(item.pk, [3, 5])]

    check = mp.edit_false_statement(curator, item, 5, "L'uomo lava 5 pomodori sul tavolo.")
    assert check.ok and check.edits == 1
    item.refresh_from_db()
    assert item.payload["false_statements"][5] == "L'uomo lava 5 pomodori sul tavolo."
    assert [p.index for p in mp.failing_pairs(item.version)[0].pairs] == [3]
    bad = mp.edit_false_statement(curator, item, 3, TRUE[3] + " E poi canta una canzone molto lunga.")
    assert not bad.ok
    assert [p.index for p in mp.failing_pairs(item.version)[0].pairs] == [3]
    assert ItemCheck.objects.filter(item=item, aspect="statement:3").count() == 2


@pytest.mark.django_db
def test_edits_refuse_bad_input_and_frozen_versions(curator):
    item = unfrozen_item()
    for index, text, message in ((0, "  ", "Write the false statement"), (8, "x", "no statement pair 8"),
                                 (0, "x" * 3000, "at most")):
        with pytest.raises(mp.StatementError, match=message):
            mp.edit_false_statement(curator, item, index, text)
    item.refresh_from_db()
    assert item.payload["false_statements"] == FALSE
    freeze(item.version)
    with pytest.raises(FrozenError):
        mp.edit_false_statement(curator, item, 0, "Il gatto dorme.")


@pytest.mark.django_db
def test_items_without_statements_record_nothing(curator):
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="mp-2")
    bare = payload()
    del bare["true_statements"], bare["false_statements"]
    item = add_item(version, "q2", bare, {})
    assert mp.check_item(item, by=curator) == []
    assert not ItemCheck.objects.filter(item=item).exists()


@pytest.mark.django_db
def test_curator_page_lists_failing_pairs_and_saves_an_edit(client, curator, annotator):
    falses = list(FALSE)
    falses[2] = "Un bambino lava piatti sporchi in cucina."
    item = unfrozen_item(falses)
    mp.check_item(item, by=curator)
    url = f"/maia/versions/{item.version_id}/statements/"
    client.force_login(annotator)
    assert client.get(url).status_code == 403
    assert client.post(f"/maia/items/{item.pk}/statements/2/", {"text": "x"}).status_code == 403
    client.force_login(curator)
    page = client.get(url).content.decode()
    assert 'data-index="2"' in page and "not a minimal pair" in page and 'data-index="1"' not in page

    bad = client.post(f"/maia/items/{item.pk}/statements/2/", {"text": "  "})
    assert bad.status_code == 400 and "Write the false statement" in bad.content.decode()
    assert client.post(f"/maia/items/{item.pk}/statements/9/", {"text": "x"}).status_code == 400
    done = client.post(f"/maia/items/{item.pk}/statements/2/", {"text": "L'uomo lava 2 pomodori sul tavolo."})
    assert done.status_code == 302 and done.url == url
    item.refresh_from_db()
    assert item.payload["false_statements"][2] == "L'uomo lava 2 pomodori sul tavolo."
    assert "No false statement of this version fails" in client.get(url).content.decode()

    freeze(item.version)
    assert client.post(f"/maia/items/{item.pk}/statements/2/", {"text": "Il gatto dorme."}).status_code == 400
