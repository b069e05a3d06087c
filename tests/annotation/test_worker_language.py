"""The worker pages in the study's language (English or Italian), the worker's language switch, and
the Italian catalogue: complete, compiled, and holding every string the worker pages mark."""

import re
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.crowd import study_copy, submissions
from annotation.crowd.models import Claim, Study, WorkerProfile
from annotation.crowd.serializers import StudySerializer
from annotation.crowd.study_forms import StudySettingsForm
from config.roles import ANNOTATOR
from tests.annotation.test_crowd_pages import GOOD, client_for, make_study
from tests.conftest import make_user

ROOT = Path(settings.BASE_DIR)
PO = ROOT / "locale" / "it" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
PLACEHOLDER = re.compile(r"%\([a-z_]+\)s|\{[a-z_]+\}")


def _lang(page: str) -> str:
    match = re.search(r'<html lang="([^"]+)">', page)
    assert match, "the page has no html lang attribute"
    return match.group(1)


# --- The catalogue --------------------------------------------------------------------------------

def _translations(entries) -> dict:
    out = {}
    for entry in entries:
        if entry.msgid == "" or entry.obsolete:
            continue
        out[(entry.msgctxt, entry.msgid)] = (
            tuple(entry.msgstr_plural[i] for i in sorted(entry.msgstr_plural)) if entry.msgid_plural else entry.msgstr)
    return out


def test_the_italian_catalogue_is_complete_and_its_placeholders_match():
    po = polib.pofile(str(PO))
    assert len(po) > 100
    assert not po.untranslated_entries(), [e.msgid for e in po.untranslated_entries()]
    assert not po.fuzzy_entries(), [e.msgid for e in po.fuzzy_entries()]
    assert not po.obsolete_entries()
    assert po.metadata["Language"] == "it" and "nplurals=2" in po.metadata["Plural-Forms"]
    for entry in po:
        wanted = sorted(PLACEHOLDER.findall(entry.msgid))
        for text in (entry.msgstr_plural.values() if entry.msgid_plural else [entry.msgstr]):
            assert sorted(PLACEHOLDER.findall(text)) == wanted, entry.msgid
            assert text.count("<") == entry.msgid.count("<"), f"markup lost in: {entry.msgid}"


def test_the_committed_mo_is_the_compiled_po():
    """The .mo Django reads holds exactly the .po's translations (after `make messages`)."""
    compiled = _translations(polib.mofile(str(MO)))
    assert compiled == _translations(polib.pofile(str(PO)))
    assert compiled[(None, "Submit")] == "Invia"


@pytest.mark.skipif(shutil.which("xgettext") is None or shutil.which("msgmerge") is None,
                    reason="GNU gettext (xgettext, msgmerge) is not installed")
def test_every_marked_string_is_in_the_catalogue(tmp_path):
    """makemessages over a copy of the project finds exactly the catalogue's strings: nothing marked is
    missing (run `make messages` after marking strings) and nothing stale is left."""
    copy = tmp_path / "project"
    keep = shutil.ignore_patterns("*.pyc", "__pycache__", "static", "migrations", "media", "*.mo", "*.po")
    for name in ("annotation", "config", "evaluation", "frontend", "generation"):
        shutil.copytree(ROOT / name, copy / name, ignore=keep)
    shutil.copy(ROOT / "manage.py", copy / "manage.py")
    (copy / "locale").mkdir()
    subprocess.run([sys.executable, "manage.py", "makemessages", "-l", "it", "--no-location"], cwd=copy, check=True,
                   capture_output=True, timeout=240)
    fresh = {(e.msgctxt, e.msgid, e.msgid_plural) for e in polib.pofile(str(copy / PO.relative_to(ROOT)))}
    committed = {(e.msgctxt, e.msgid, e.msgid_plural) for e in polib.pofile(str(PO)) if not e.obsolete}
    assert fresh - committed == set(), "marked strings missing from the catalogue: run `make messages`"
    assert committed - fresh == set(), "strings in the catalogue that nothing marks: run `make messages`"
    assert (None, "Your answers", "") in fresh


# --- The pages ------------------------------------------------------------------------------------

@pytest.fixture
def worker(db):
    return make_user("lucia", ANNOTATOR)


@pytest.fixture
def italian(db):
    return make_study("quadri", language="it", required_submissions=2)


def test_an_italian_study_shows_its_task_page_in_italian(italian, worker):
    page = client_for(worker).post(reverse("crowd-work", args=[italian.slug]), follow=True).content.decode()
    assert _lang(page) == "it"
    for text in ("Istruzioni", "Le tue risposte", ">Invia<", "Restituisci questo elemento", "Per ora ho finito",
                 "Circa 2 min per elemento", "Spiegazione (facoltativa)", "Quanto sei sicuro?", "abbastanza sicuro",
                 "Seleziona tutte le voci pertinenti.", "> Sì</label>", "Riservato a te fino alle"):
        assert text in page, text
    # the script's texts come in the page's language too
    assert 'data-saving="Salvataggio…"' in page
    assert 'data-server-refused="Il server ha rifiutato le risposte ({status})."' in page
    assert "Your answers" not in page and "Instructions" not in page
    # the values the form sends stay the same in every language
    assert 'value="somewhat certain"' in page and 'value="yes"' in page
    assert '<button type="submit" class="link" name="language" value="en" lang="en">English</button>' in page


def test_an_italian_studys_completion_pages_are_in_italian(italian, worker):
    client = client_for(worker)
    client.post(reverse("crowd-work", args=[italian.slug]), follow=True)
    done = client.get(reverse("crowd-work-done", args=[italian.slug])).content.decode()
    assert _lang(done) == "it"
    assert "Non hai ancora finito" in done
    assert "Questo studio richiede 2 elementi consegnati; ne hai consegnati 0. Consegnane ancora 2" in done
    for _ in range(2):
        claim = Claim.objects.get(worker=worker, status=Claim.Status.ACTIVE)
        submissions.submit(claim, worker, GOOD)
        client.post(reverse("crowd-work", args=[italian.slug]), follow=True)
    done = client.get(reverse("crowd-work-done", args=[italian.slug])).content.decode()
    assert "Grazie!" in done and "2 elementi consegnati" in done and "Il tuo codice di completamento:" in done


def test_validation_errors_and_refusals_come_back_in_the_pages_language(italian, worker):
    client_for(worker).post(reverse("crowd-work", args=[italian.slug]), follow=True)
    claim = Claim.objects.get(worker=worker)
    api = APIClient(HTTP_ACCEPT_LANGUAGE="it")  # the task page's script asks for the page's language
    api.force_authenticate(worker)
    answer = api.post(reverse("api-claim-submit", args=[claim.pk]),
                      {"data": {**GOOD, "description": "", "clarity": 9}}, format="json")
    assert answer.status_code == 400
    assert answer.json()["error"] == "Alcune risposte mancano o non sono valide."
    assert answer.json()["details"]["description"] == "scrivi almeno 5 caratteri"
    assert answer.json()["details"]["clarity"] == "scegli un valore da 1 a 5"
    Claim.objects.filter(pk=claim.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    late = api.put(reverse("api-claim-draft", args=[claim.pk]), {"data": GOOD}, format="json")
    assert late.status_code == 409
    assert late.json()["error"].startswith("Il tempo per questo elemento è scaduto")
    assert "non può più essere modificato. Chiedi un nuovo elemento." in late.json()["error"]
    # the same refusal for a worker whose page is in English
    english = APIClient(HTTP_ACCEPT_LANGUAGE="en")
    english.force_authenticate(worker)
    again = english.put(reverse("api-claim-draft", args=[claim.pk]), {"data": GOOD}, format="json")
    assert again.json()["error"] == "This item is timed out; it can no longer change."


def test_an_eligibility_refusal_is_in_the_studys_language(worker):
    study = make_study("solo-nativi", language="it", required_attributes={"native_language": ["it", "es"]})
    response = client_for(worker).get(reverse("crowd-work", args=[study.slug]))
    assert response.status_code == 403
    page = response.content.decode()
    assert _lang(page) == "it" and "Non disponibile per te" in page
    assert "Questo studio richiede partecipanti con lingua madre it o es." in page


def test_the_workers_switch_wins_over_the_study_and_is_remembered(italian, worker):
    client = client_for(worker)
    work = reverse("crowd-work", args=[italian.slug])
    switched = client.post(reverse("set-language"), {"language": "en", "next": work})
    assert switched.status_code == 302 and switched["Location"] == work
    assert switched.cookies[settings.LANGUAGE_COOKIE_NAME].value == "en"
    page = client.post(work, follow=True).content.decode()
    assert _lang(page) == "en" and "Your answers" in page and "Le tue risposte" not in page
    assert _lang(client.get(reverse("crowd-work-done", args=[italian.slug])).content.decode()) == "en"
    # signed in elsewhere (no cookie): the choice kept on the profile still wins
    assert WorkerProfile.objects.get(user=worker).language == "en"
    elsewhere = client_for(worker).get(work).content.decode()
    assert _lang(elsewhere) == "en" and "Instructions" in elsewhere
    # and back to Italian on an English study
    english = make_study("pictures-en")
    client.post(reverse("set-language"), {"language": "it", "next": "/"})
    assert _lang(client.get(reverse("crowd-work", args=[english.slug])).content.decode()) == "it"


def test_the_switch_refuses_unknown_languages_and_foreign_addresses(worker):
    client = client_for(worker)
    assert client.post(reverse("set-language"), {"language": "fr"}).status_code == 400
    away = client.post(reverse("set-language"), {"language": "it", "next": "https://elsewhere.example/"})
    assert away["Location"] == reverse("my-tasks")
    # before signing in (a Mechanical Turk preview) the choice is kept in the cookie only
    anonymous = client_for(None)
    assert anonymous.post(reverse("set-language"), {"language": "en", "next": "/"}).status_code == 302
    assert list(WorkerProfile.objects.values_list("user__username", "language")) == [("lucia", "it")]


def test_an_english_study_stays_english(worker):
    study = make_study("pictures-en")
    page = client_for(worker).post(reverse("crowd-work", args=[study.slug]), follow=True).content.decode()
    assert _lang(page) == "en"
    assert "Your answers" in page and "Instructions" in page and "Le tue risposte" not in page
    assert '<button type="submit" class="link" name="language" value="it" lang="it">Italiano</button>' in page


def test_the_task_list_follows_the_choice_or_the_browser(italian, worker):
    client = client_for(worker)
    tasks = reverse("my-tasks")
    assert _lang(client.get(tasks).content.decode()) == "en"
    page = client.get(tasks, HTTP_ACCEPT_LANGUAGE="it-IT,it;q=0.9").content.decode()
    assert _lang(page) == "it" and "Le mie attività" in page and "Studi aperti a te" in page
    assert "3 elementi rimasti" in page
    client.post(reverse("set-language"), {"language": "en", "next": tasks})
    assert "My tasks" in client.get(tasks, HTTP_ACCEPT_LANGUAGE="it").content.decode()


def test_the_study_language_is_a_setting_of_the_page_the_api_and_a_copy(italian, worker):
    form = StudySettingsForm(instance=italian)
    assert form["language"].value() == "it"
    assert [code for code, _ in form.fields["language"].choices] == ["en", "it"]
    form.cleaned_data = {"language": ""}  # a post that leaves the language out keeps the study's
    assert form.clean_language() == "it"
    serializer = StudySerializer(italian, data={"language": "fr"}, partial=True)
    assert not serializer.is_valid() and "language" in serializer.errors
    serializer = StudySerializer(italian, data={"language": "en"}, partial=True)
    assert serializer.is_valid(), serializer.errors
    assert serializer.save().language == "en"
    italian.language = "it"
    italian.save(update_fields=["language"])
    assert study_copy.duplicate(italian, worker).language == "it"
    assert Study._meta.get_field("language").default == "en"
