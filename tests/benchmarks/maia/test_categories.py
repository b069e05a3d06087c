"""MAIA's 12 reasoning categories as data (seeds/004 §3.2, App. A.1; SPEC §5): the paper's defaults,
idempotent creation that keeps curators' edits, the curator pages (permissions, 4xx on bad input) and
the `maia_categories` command."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.benchmarks.maia import categories, demo, yes_no
from annotation.curation_models import CategoryDefinition
from annotation.models import Benchmark, BenchmarkVersion
from evaluation.benchmarks.maia import benchmark as maia_evaluation
from frontend import navigation

pytestmark = pytest.mark.django_db

RELEASE_NAMES = ["SpazialeParziale", "SpazialeTotale", "TemporaleDurata", "TemporaleParziale", "Incertezza",
                 "OutofScope", "Pianificazione", "Sentiment", "CausaleEsplicita", "Controfattuale",
                 "ImplicitoParziale", "ImplicitoTot"]


def _edit(**changes) -> dict:
    data = {"name": "Planning", "name_it": "Pianificazione", "description": "Steps to a goal.",
            "question": "Ask what someone should do.",
            "examples": json.dumps([{"question_it": "Cosa dovrebbe fare?", "answer_it": "Correre."}])}
    return {**data, **changes}


def test_twelve_categories_from_the_paper():
    assert len(categories.DEFAULTS) == 12
    macros = {texts["macro_category"] for texts in categories.DEFAULTS.values()}
    assert macros == {"causal", "counterfactual", "implicit", "out_of_scope", "planning", "sentiment", "spatial",
                      "temporal", "uncertainty"}
    # every release name of the SPEC and of the evaluation resolves, with or without its A/B suffix
    for name in RELEASE_NAMES:
        assert categories.category_key(f"{name}_A") == categories.category_key(f"{name}_B") == \
            categories.category_key(name)
    for name in maia_evaluation.CATEGORIES:
        assert categories.category_key(name) in categories.DEFAULTS
    assert categories.category_key("SpazialeTotale_A") == "spazialetotale"
    assert categories.category_key("Sentiment_B") == "sentiment"
    assert categories.category_key("Pianificazione_A") == "pianificazione"
    assert categories.category_key("CausaleEsplicita_A") == categories.category_key("CausaleImplicita_B") == "causale"
    # the same grouping as the evaluation's macro-categories
    for name, (_, macro) in maia_evaluation.CATEGORIES.items():
        assert categories.DEFAULTS[categories.category_key(name)]["macro_category"] == macro
    causal = categories.DEFAULTS["causale"]
    assert [s["name"] for s in causal["subtypes"]] == ["Implicit Causal", "Explicit Causal"]
    assert causal["examples"][0]["question_it"] == "Per quale motivo la persona prende l'ombrello?"
    for texts in categories.DEFAULTS.values():
        assert texts["description"].strip() and texts["name_it"].strip() and texts["examples"]


def test_the_demo_questions_have_categories_and_are_open():
    for questions in demo.DEMO_QUESTIONS.values():
        for category, question, *_ in questions:
            assert categories.category_key(category) in categories.DEFAULTS
            assert not yes_no.is_yes_no(question), question


@pytest.mark.parametrize("bad", ["", "Nuova_A", "Spaziale", None, "x" * 500])
def test_unknown_release_names_are_refused(bad):
    with pytest.raises(categories.CategoryError) as refused:
        categories.category_key(bad)
    assert refused.value.status == 400 and len(refused.value.message) < 600


def test_ensure_categories_makes_the_defaults_once_and_keeps_curators_edits(curator):
    rows = categories.ensure_categories()
    assert [row.key for row in rows] == list(categories.DEFAULTS)
    assert all(row.updated_by is None and row.benchmark.slug == "maia" for row in rows)
    out = next(row for row in rows if row.key == "outofscope")
    assert out.name == "Out-of-Scope" and "negation" in out.description
    assert out.instructions["name_it"] and out.instructions["release_names"] == ["OutofScope"]
    assert out.instructions["examples"][0]["question_it"] == "Di che colore è la macchina?"
    assert "yes/no" in out.instructions["question"]
    categories.edit_category("pianificazione", _edit(name="Planning (edited)"), curator)
    CategoryDefinition.objects.filter(benchmark__slug="maia", key="sentiment").delete()
    again = categories.ensure_categories()
    assert len(again) == 12 and CategoryDefinition.objects.filter(benchmark__slug="maia").count() == 12
    edited = CategoryDefinition.objects.get(benchmark__slug="maia", key="pianificazione")
    assert edited.name == "Planning (edited)" and edited.updated_by == curator
    assert edited.instructions["examples"] == [{"question_it": "Cosa dovrebbe fare?", "answer_it": "Correre."}]
    assert edited.instructions["release_names"] == ["Pianificazione"]  # fields the form does not edit stay
    assert CategoryDefinition.objects.get(benchmark__slug="maia", key="sentiment").name == "Sentiment"
    assert categories.ensure_categories() == again


def test_the_pages_list_and_edit_with_who_and_when(curator, curator_client):
    page = curator_client.get(reverse("maia-categories"))
    assert page.status_code == 200
    text = page.content.decode()
    assert text.count('data-key="') == 12 and "Temporal Duration" in text and "Implicit Causal" in text
    url = reverse("maia-category", args=["incertezza"])
    form = curator_client.get(url).content.decode()
    assert "Quanti anni ha il cane?" in form and "Question-writing guideline" in form
    response = curator_client.post(url, _edit(name="Uncertain", name_it="Incerto"))
    assert response.status_code == 302
    row = CategoryDefinition.objects.get(benchmark__slug="maia", key="incertezza")
    assert row.name == "Uncertain" and row.instructions["name_it"] == "Incerto"
    listing = curator_client.get(reverse("maia-categories")).content.decode()
    assert "Uncertain" in listing and curator.username in listing
    assert f"Last edited by {curator.username}" in curator_client.get(url).content.decode()


@pytest.mark.parametrize("bad", [
    {"name": ""},
    {"name": "   "},
    {"name_it": ""},
    {"description": ""},
    {"question": ""},
    {"question": "x" * (categories.MAX_GUIDELINE + 1)},
    {"name": "N" * 201},
    {"examples": ""},
    {"examples": "not json"},
    {"examples": "{}"},
    {"examples": json.dumps([{"question_it": "Dove?", "extra": "x"}])},
    {"examples": json.dumps([{"question_it": ""}])},
    {"examples": json.dumps([{"question_it": 3}])},
    {"examples": json.dumps(["Dove va?"])},
    {"examples": json.dumps([{"question_it": "Dove?"}] * (categories.MAX_EXAMPLES + 1))},
])
def test_a_bad_edit_is_400_and_writes_nothing(curator_client, bad):
    before = {row.key: (row.name, row.description, row.instructions) for row in categories.ensure_categories()}
    response = curator_client.post(reverse("maia-category", args=["pianificazione"]), _edit(**bad))
    assert response.status_code == 400
    assert 'class="field-error"' in response.content.decode()
    after = {row.key: (row.name, row.description, row.instructions)
             for row in CategoryDefinition.objects.filter(benchmark__slug="maia")}
    assert after == before


def test_pages_refuse_unknown_keys_and_other_roles(annotator_client, researcher_client, curator_client, client):
    assert curator_client.get(reverse("maia-category", args=["no_such_category"])).status_code == 404
    assert curator_client.post(reverse("maia-category", args=["Pianificazione_A"]), _edit()).status_code == 404
    url = reverse("maia-category", args=["pianificazione"])
    for who in (annotator_client, researcher_client):
        assert who.get(reverse("maia-categories")).status_code == 403
        assert who.get(url).status_code == 403
        assert who.post(url, _edit(name="x")).status_code == 403
    assert client.get(url).status_code in (302, 403)
    assert curator_client.put(url).status_code == 405
    assert not CategoryDefinition.objects.filter(name="x").exists()


def test_the_command_lists_and_ensures(curator, capsys):
    call_command("maia_categories", "ensure")
    assert "made 12" in capsys.readouterr().out
    categories.edit_category("sentiment", _edit(name="Mood"), curator)
    call_command("maia_categories", "ensure")
    assert "made 0" in capsys.readouterr().out
    call_command("maia_categories", "list")
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 12
    sentiment = next(line for line in out if line.startswith("sentiment\t"))
    assert "Mood" in sentiment and f"edited by {curator.username}" in sentiment
    assert any(line.startswith("spazialetotale\tSpatial Total\tSpaziale totale\tSpazialeTotale\t") for line in out)
    with pytest.raises(CommandError):
        call_command("maia_categories", "delete")


def test_the_categories_page_is_maia_curation_s_first_page_with_every_version(curator_client, curator):
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="pool-1",
                                              created_by=curator)
    page = curator_client.get(reverse("maia-categories")).content.decode()
    title = page[page.index("<title>"):page.index("</title>")]
    assert "MAIA categories" in title and "<section" not in title
    versions = page[page.index('id="maia-versions"'):]
    assert page.count('id="maia-versions"') == 1
    for name in ("maia-pool-report", "maia-pool-review", "maia-statements"):
        assert reverse(name, args=[version.pk]) in versions
    assert any(entry.url_name == "maia-categories" for entry in navigation.entries())
