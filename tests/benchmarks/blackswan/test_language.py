"""BlackSwanSuite's staged step pages in the study's language: an Italian study shows its three steps,
its MTurk preview and the worker's past answer in Italian, the staged API answers in the page's
language, and the worker's switch to English wins. English studies keep their English pages."""

import html

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.benchmarks.blackswan import staged
from annotation.benchmarks.blackswan.staged import DETECTIVE, DONE, FORECASTER, REPORTER
from annotation.crowd.models import Claim, Study
from config.models import StateChange
from config.roles import ANNOTATOR
from tests.annotation.test_worker_language import _lang
from tests.benchmarks.blackswan.test_staged import SCENARIOS, advance, claim_for, make_split, step_url, submit
from tests.conftest import logged_in_client, make_user

pytestmark = pytest.mark.django_db

# per step: Italian texts of its instructions, questions, players and buttons
ITALIAN = {
    FORECASTER: ["Istruzioni per la fase 1: Previsore", "Fase 1 di 3: Previsore", "Vedrai questo video in tre fasi.",
                 "<strong>Ora vedi solo l'inizio.</strong>", "<strong>Che cosa potrebbe succedere dopo?</strong>",
                 "Scenario 1</label>", "Scenario 3</label>", "Inizio del video</figcaption>",
                 "Salta dalla rampa e atterra dolcemente sull'erba.", ">Invia la fase 1</button>"],
    DETECTIVE: ["Istruzioni per la fase 2: Detective", "<strong>Ora vedi l'inizio e la fine;",
                "La tua previsione 1</legend>", "> Valida: è coerente con la fine</label>",
                "> Non valida: non può portare alla fine</label>",
                "Nuova ipotesi 2: che cosa è successo nel mezzo?</label>",
                "La parte centrale del video è nascosta", "Fine del video</figcaption>", ">Invia la fase 2</button>"],
    REPORTER: ["Istruzioni per la fase 3: Cronista", "<strong>Ora il video viene riprodotto per intero.</strong>",
               "Ipotesi 1 <span", "la tua nuova ipotesi</span>", "la tua previsione, mantenuta</span>",
               "> Valida: è ciò che è successo</label>", "> Non valida</label>",
               "Didascalia: che cosa succede nell'intero video?</label>", "Il video intero</figcaption>",
               ">Invia l'ultima fase</button>"],
}
ENGLISH = {FORECASTER: ["Instructions for step 1: Forecaster", "Beginning of the video", ">Submit step 1</button>"],
           DETECTIVE: ["Valid: it fits the end", "The middle of the video is hidden", ">Submit step 2</button>"],
           REPORTER: ["Caption: what happens in the whole video?", ">Submit the last step</button>"]}
EVERY_STEP_ITALIAN = ["Restituisci questo video</button>", "Per ora ho finito</a>", "Fasi di questo video",
                      "Circa 6 min per video", "Una fase inviata è definitiva", "Video 1 di 1</span>",
                      'data-saving="Salvataggio…"', 'data-opening-next-step="Apertura della fase successiva…"',
                      'data-reload-to-see="{message} Ricarica la pagina per vedere a che punto è questo video."',
                      'data-step-cannot-change="questa fase non può più essere modificata"']


@pytest.fixture
def split(tmp_path, curator):
    return make_split(tmp_path / "clips", curator)


def staged_study(split, curator, language):
    return staged.create_staged_study([split], f"Eventi {language}", curator, open_now=True, expert_share=0.0,
                                      expert_first=0, language=language)


@pytest.fixture
def italian(split, curator):
    return staged_study(split, curator, "it")


@pytest.fixture
def worker(db):
    return make_user("bianca", ANNOTATOR)


def api_for(worker, language: str) -> APIClient:
    """The step page's script sends the page's language with each request."""
    api = APIClient(HTTP_ACCEPT_LANGUAGE=language)
    api.force_authenticate(worker)
    return api


def step_page(worker, study) -> str:
    response = logged_in_client(worker).get(reverse("crowd-work", args=[study.slug]))
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("step", [FORECASTER, DETECTIVE, REPORTER])
def test_an_italian_staged_study_shows_each_step_in_italian(italian, worker, step):
    api = api_for(worker, "it")
    claim = claim_for(api, italian)
    advance(api, claim, step)
    page = step_page(worker, italian)
    assert _lang(page) == "it"
    for text in ITALIAN[step] + EVERY_STEP_ITALIAN:
        assert text in page, text
    for text in ENGLISH[step] + ["Return this video", "What you can see now", "A submitted step is final"]:
        assert text not in page, text
    # the answers the page sends stay the same in every language
    if step != FORECASTER:
        assert 'value="yes"' in page and 'value="no"' in page
    assert '<button type="submit" class="link" name="language" value="en" lang="en">English</button>' in page


def test_the_staged_api_refuses_in_the_pages_language(italian, worker):
    api = api_for(worker, "it")
    claim = claim_for(api, italian)
    same = submit(api, claim, FORECASTER, {"scenarios": [SCENARIOS[0], "", SCENARIOS[0].upper()]})
    assert same.status_code == 400
    assert same.json()["error"] == "Alcune risposte mancano o non sono valide."
    assert same.json()["details"] == {"scenarios.1": "questa risposta è obbligatoria",
                                      "scenarios.2": "è uguale allo scenario 1: scrivine uno diverso"}
    early = submit(api, claim, REPORTER)
    assert early.status_code == 409
    assert early.json()["error"] == ("La fase 3 (Cronista) si apre dopo che avrai inviato la fase 1 (Previsore); "
                                     "non puoi ancora inviarla.")
    draft = api.put(step_url(claim, FORECASTER, "draft"), {"data": {"scenarios": ["x" * (staged.MAX_TEXT + 1)]}},
                    format="json")
    assert draft.status_code == 400
    assert draft.json()["error"] == "Questa bozza non può essere salvata."
    assert draft.json()["details"] == {"scenarios.0": f"un testo di al massimo {staged.MAX_TEXT} caratteri"}
    advance(api, claim, DETECTIVE)
    marks = submit(api, claim, DETECTIVE, {"forecast_valid": ["no", "maybe", "yes"], "new_hypotheses": ["", "", ""]})
    assert marks.json()["details"] == {"new_hypotheses.0": "questa risposta è obbligatoria",
                                       "forecast_valid.1": "segnala come valida o non valida"}
    again = submit(api, claim, FORECASTER)
    assert again.json()["error"] == ("La fase 1 (Previsore) è già stata inviata; le fasi inviate non si possono "
                                     "modificare.")
    stage = api.get(reverse("api-claim-stage", kwargs={"pk": claim.pk})).json()
    assert [s["label"] for s in stage["steps"]] == ["Previsore", "Detective", "Cronista"]
    assert [p["label"] for p in stage["parts"]] == ["Inizio del video", "Fine del video"]
    # the same refusal for a page in English, and the records stay English
    english = submit(api_for(worker, "en"), claim, REPORTER)
    assert english.json()["error"] == ("Step 3 (Reporter) opens after you submit step 2 (Detective); it cannot be "
                                       "submitted yet.")
    reasons = set(StateChange.objects.of(Claim, claim.pk).values_list("reason", flat=True))
    assert {"step 1 of 3 (Forecaster) opened", "step 1 of 3 (Forecaster) submitted"} <= reasons


def test_the_workers_switch_to_english_wins_on_the_step_pages(italian, worker):
    api = api_for(worker, "it")
    claim = claim_for(api, italian)
    advance(api, claim, DETECTIVE)
    client = logged_in_client(worker)
    work = reverse("crowd-work", args=[italian.slug])
    assert 'lang="it"' in client.get(work).content.decode()[:200]
    switched = client.post(reverse("set-language"), {"language": "en", "next": work})
    assert switched.status_code == 302 and switched["Location"] == work
    page = client.get(work).content.decode()
    assert _lang(page) == "en"
    for text in ENGLISH[DETECTIVE] + ["Instructions for step 2: Detective", "Return this video</button>",
                                      'data-opening-next-step="Opening the next step…"']:
        assert text in page, text
    for text in ITALIAN[DETECTIVE] + EVERY_STEP_ITALIAN:
        assert text not in page, text
    assert '<button type="submit" class="link" name="language" value="it" lang="it">Italiano</button>' in page


def test_an_italian_staged_studys_preview_and_past_answer_are_in_italian(italian, worker, client):
    Study.objects.filter(pk=italian.pk).update(recruitment_platform=Study.Recruitment.MTURK)
    preview = client.get(reverse("crowd-entry-mturk", args=[italian.slug]),
                         {"workerId": "W1", "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H1"})
    page = preview.content.decode()
    assert preview.status_code == 200 and _lang(page) == "it"
    for text in ("<strong>Anteprima.</strong> Questa è la prima di tre fasi.", "Fase 1 di 3: Previsore",
                 "L'inizio del video compare qui quando accetti l'attività.", "Scenario 2</label>"):
        assert text in page, text
    api = api_for(worker, "it")
    claim = claim_for(api, italian)
    advance(api, claim, DONE)
    past = logged_in_client(worker).get(reverse("crowd-past-answer", args=[claim.pk])).content.decode()
    assert _lang(past) == "it" and "Sola lettura." in past and html.escape(SCENARIOS[0], quote=True) in past


def test_an_english_staged_study_stays_english(split, curator, worker):
    study = staged_study(split, curator, "en")
    api = api_for(worker, "en")
    claim_for(api, study)
    page = step_page(worker, study)
    assert _lang(page) == "en"
    for text in ENGLISH[FORECASTER] + ["Return this video</button>", "Beginning of the video</figcaption>",
                                       'data-steps-handed-in="All three steps of this video are handed in."']:
        assert text in page, text
    assert "Previsore" not in page and "Invia la fase" not in page
    assert '<button type="submit" class="link" name="language" value="it" lang="it">Italiano</button>' in page
    assert Claim.objects.get(worker=worker).study == study
