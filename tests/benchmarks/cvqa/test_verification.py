"""C-VQA-Real two-person verification (seeds/001 §3.2; SPEC §2 "Verification"): every counterfactual item is
checked by at least two verifiers (still about the image? answer right, else the right one); agreed verdicts
keep, correct or remove it, disagreements go to adjudication by a curator who did not verify it; removed items
keep their reason in a companion version; only verified items can be frozen."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from PIL import Image as PILImage

from annotation import versions
from annotation.benchmarks.cvqa import counterfactuals, sources, verification
from annotation.crowd import assignment, review, submissions
from annotation.crowd.errors import InvalidSubmission
from annotation.crowd.models import Study, Submission
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem
from generation import proposals
from tests.benchmarks.cvqa.test_counterfactuals import QUESTIONS, CounterfactualBackend, run, source
from tests.conftest import logged_in_client, make_user
from tests.release_fixtures import run_import
from tests.scripted_backend import install

pytestmark = pytest.mark.django_db
RIGHT = {"about_image": "yes", "answer_right": "right", "corrected_answer": "", "notes": ""}


def wrong(answer: str) -> dict:
    return {**RIGHT, "answer_right": "wrong", "corrected_answer": answer}


NOT_ABOUT = {**RIGHT, "about_image": "no"}
AMBIGUOUS = {**RIGHT, "answer_right": "ambiguous"}


@pytest.fixture
def counterfactual_items(tmp_path, curator, monkeypatch, django_capture_on_commit_callbacks):
    """Four counterfactual items of version `counterfactuals`: two numerical ones written by hand (q0: 2 → 4,
    q1: 3 → 1) and two boolean ones accepted from proposals (q2: yes → no, q3: no → yes)."""
    folder = tmp_path / "sources"
    folder.mkdir()
    rows = ["image,question,answer,question_id"]
    for number, (question, answer) in enumerate(QUESTIONS):
        PILImage.new("RGB", (32, 32), (40 * number, 90, 160)).save(folder / f"img{number}.png")
        rows.append(f"img{number}.png,{question},{answer},q{number}")
    (folder / "questions.csv").write_text("\n".join(rows) + "\n")
    version = sources.import_sources(folder / "questions.csv", "sources-1").version
    counterfactuals.write_indirect(curator, source(version, 0).pk, "How many dogs if two more came?", "4")
    counterfactuals.write_indirect(curator, source(version, 1).pk, "How many cups if two were taken?", "1")
    install(monkeypatch, CounterfactualBackend)
    pset = run(django_capture_on_commit_callbacks, version, curator)
    for proposal in pset.proposals.all():
        proposals.decide(proposal, curator, "accept")
    items = {record.working["counterfactual"]["source_external_id"]: record.item
             for record in CurationRecord.objects.filter(working__has_key="counterfactual").select_related("item")}
    assert sorted(items) == ["source:q0", "source:q1", "source:q2", "source:q3"]
    return items


def verify(study, worker, data):
    claim = assignment.claim_next(study, worker)
    assert claim is not None
    submission, created, _ = submissions.submit(claim, worker, data)
    assert created
    return claim.item.benchmark_item_id


def verify_item(study, worker, wanted: BenchmarkItem, data):
    """Claim until `wanted` comes up (other items are answered right), then answer it with `data`."""
    while (claim := assignment.claim_next(study, worker)) is not None:
        mine = claim.item.benchmark_item_id == wanted.pk
        submissions.submit(claim, worker, data if mine else RIGHT)
        if mine:
            return
    raise AssertionError(f"{worker} never got {wanted.external_id}")


def stage(item) -> str:
    return CurationRecord.objects.get(item_id=item.pk).stage


@pytest.fixture
def verifiers(db):
    return [make_user(f"verifier{n}", "annotator") for n in range(3)]


@pytest.fixture
def study(counterfactual_items, curator):
    version = next(iter(counterfactual_items.values())).version
    return verification.create_verification_study(version, curator).study


# --- The form -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("payload_type", "data", "message"), [
    ("direct", {"answer_right": "right"}, "about_image"),
    ("direct", {**RIGHT, "answer_right": "wrong"}, "say what the right answer is"),
    ("direct", wrong("four"), "whole number"),
    ("boolean", wrong("maybe"), "yes or no"),
    ("direct", wrong("4"), "this is the answer given"),
    ("direct", {**RIGHT, "corrected_answer": "5"}, "leave this empty"),
])
def test_answers_are_checked_for_the_item_s_group(payload_type, data, message):
    payload = {"type": payload_type, "new_answer": "4", "query": "q", "answer": "2", "new_query": "nq"}
    with pytest.raises(InvalidSubmission) as caught:
        verification.clean_answers({}, payload, data)
    assert message in json.dumps(caught.value.details)


def test_corrected_answers_are_stored_in_their_group_s_form():
    numerical = {"type": "direct", "new_answer": "4"}
    assert verification.clean_answers({}, numerical, wrong(" 05 "))["corrected_answer"] == "5"
    boolean = {"type": "boolean", "new_answer": "no"}
    assert verification.clean_answers({}, boolean, wrong("Yes"))["corrected_answer"] == "yes"
    assert verification.verdict_of(NOT_ABOUT) == ("remove", "not_about_image")
    assert verification.verdict_of(AMBIGUOUS) == ("remove", "ambiguous")
    assert verification.verdict_of(wrong("5")) == ("correct", "5")
    assert verification.verdict_of(RIGHT) == ("keep", "")


# --- Two verifiers, then an outcome ----------------------------------------------------------------------

def test_a_study_holds_every_waiting_item_once_with_two_verifiers_and_its_image(study, counterfactual_items):
    assert study.annotators_per_item == 2 and study.step_kind == verification.STUDY_KIND
    rows = list(study.items.order_by("external_id"))
    assert sorted(row.benchmark_item_id for row in rows) == sorted(item.pk for item in counterfactual_items.values())
    assert all(row.image_id for row in rows)
    item = counterfactual_items["source:q0"]
    row = study.items.get(benchmark_item=item)
    assert row.payload == {"query": "How many dogs are in the picture?", "answer": "2",
                           "new_query": "How many dogs if two more came?", "new_answer": "4", "type": "indirect"}
    shown = [entry["label"] for entry in verification.item_rows(row.payload)]
    assert shown == ["Kind of question", "Original question", "Original answer", "New question", "New answer"]
    with pytest.raises(verification.VerificationError, match="waits for a verification study"):
        verification.create_verification_study(item.version, study.created_by)


def test_fewer_than_two_verifiers_per_item_are_refused(counterfactual_items, curator, annotator):
    version = counterfactual_items["source:q0"].version
    with pytest.raises(verification.VerificationError, match="at least 2 verifiers"):
        verification.create_verification_study(version, curator, k=1)
    with pytest.raises(verification.VerificationError) as caught:
        verification.create_verification_study(version, annotator)
    assert caught.value.status == 403
    assert not Study.objects.exists()


def test_one_verifier_decides_nothing_and_two_agreeing_verify_the_item(study, verifiers, counterfactual_items):
    item = counterfactual_items["source:q0"]
    verify_item(study, verifiers[0], item, RIGHT)
    assert stage(item) == counterfactuals.WRITTEN
    verify_item(study, verifiers[1], item, RIGHT)
    assert stage(item) == counterfactuals.VERIFIED
    recorded = CurationRecord.objects.get(item=item).working["verification"]
    assert recorded["outcome"] == "agreed" and [v["by"] for v in recorded["verdicts"]] == ["verifier0", "verifier1"]


def test_two_verifiers_giving_the_same_correction_correct_the_answer(study, verifiers, counterfactual_items):
    item = counterfactual_items["source:q1"]
    for worker in verifiers[:2]:
        verify_item(study, worker, item, wrong("0"))
    item.refresh_from_db()
    assert item.payload["new_answer"] == "0" and stage(item) == counterfactuals.VERIFIED
    assert CurationRecord.objects.get(item=item).working["verification"]["corrected"] == {"from": "1", "to": "0"}


def test_a_disagreement_goes_to_adjudication_and_freezing_waits_for_it(study, verifiers, counterfactual_items):
    item = counterfactual_items["source:q2"]
    verify_item(study, verifiers[0], item, RIGHT)
    verify_item(study, verifiers[1], item, wrong("yes"))
    assert stage(item) == counterfactuals.ADJUDICATION
    item.refresh_from_db()
    assert item.payload["new_answer"] == "no"  # nothing applied before a curator decides
    state = verification.state_of(item)
    assert state.outcome == "disagreed" and [v.text for v in state.verdicts] == [
        "keep as it is", "correct the answer to yes"]
    with pytest.raises(versions.FreezeRefused, match="adjudicates it"):
        versions.freeze(item.version)


def test_agreed_removal_moves_the_item_out_with_its_reason(study, verifiers, counterfactual_items):
    item = counterfactual_items["source:q3"]
    version = item.version
    for worker in verifiers[:2]:
        verify_item(study, worker, item, AMBIGUOUS)
    item.refresh_from_db()
    assert item.version.label == "counterfactuals-removed" and stage(item) == counterfactuals.REMOVED
    removed = CurationRecord.objects.get(item=item).working["verification"]["removed"]
    assert removed["reason"] == "ambiguous" and removed["from_label"] == "counterfactuals"
    assert not version.items.filter(pk=item.pk).exists()
    with pytest.raises(versions.FreezeRefused, match="removed during verification"):
        versions.freeze(item.version)
    assert verification.counterfactual_versions().get() == version


def test_a_removal_after_the_item_was_verified_keeps_it_out_of_the_freeze(study, verifiers, counterfactual_items,
                                                                           curator):
    """Two verifiers keep every item; a reviewer rejects the first one's answer on q2, which reopens its slot, and
    a third verifier removes q2 (not about the image): freezing is refused, naming q2 and that removal, and q2
    waits for adjudication; once a curator keeps it, the version freezes."""
    for worker in verifiers[:2]:
        while (claim := assignment.claim_next(study, worker)) is not None:
            submissions.submit(claim, worker, RIGHT)
    item = counterfactual_items["source:q2"]
    assert stage(item) == counterfactuals.VERIFIED
    first = Submission.objects.get(claim__worker=verifiers[0], claim__item__benchmark_item=item)
    review.reject(first, curator, reason="Answered without looking at the image.")
    verify_item(study, verifiers[2], item, NOT_ABOUT)

    with pytest.raises(versions.FreezeRefused) as refused:
        versions.freeze(item.version)

    turned_down = [reason for external_id, reason in refused.value.items
                   if external_id == item.external_id and reason.startswith("removed")]
    assert len(turned_down) == 1
    assert turned_down[0].startswith("removed in the C-VQA verification by verifier2 on ")
    assert turned_down[0].endswith(": remove: the new question is not about the image")
    assert {external_id for external_id, _reason in refused.value.items} == {item.external_id}
    assert stage(item) == counterfactuals.ADJUDICATION

    verification.adjudicate(curator, item.pk, verification.KEEP, note="It is about the image.")
    assert versions.freeze(item.version).frozen


def test_different_removal_reasons_are_a_disagreement(study, verifiers, counterfactual_items):
    item = counterfactual_items["source:q3"]
    verify_item(study, verifiers[0], item, AMBIGUOUS)
    verify_item(study, verifiers[1], item, NOT_ABOUT)
    assert stage(item) == counterfactuals.ADJUDICATION


# --- Adjudication ------------------------------------------------------------------------------------------

@pytest.fixture
def disputed(study, verifiers, counterfactual_items):
    item = counterfactual_items["source:q0"]
    verify_item(study, verifiers[0], item, RIGHT)
    verify_item(study, verifiers[1], item, wrong("5"))
    assert stage(item) == counterfactuals.ADJUDICATION
    return item


def test_a_curator_corrects_a_disputed_answer(disputed, curator):
    assert verification.adjudicate(curator, disputed.pk, "correct", answer="5") == counterfactuals.VERIFIED
    disputed.refresh_from_db()
    assert disputed.payload["new_answer"] == "5"
    decided = CurationRecord.objects.get(item=disputed).working["verification"]["adjudication"]
    assert decided["decision"] == "correct" and decided["by"] == curator.username
    with pytest.raises(verification.VerificationError) as caught:
        verification.adjudicate(curator, disputed.pk, "keep")
    assert caught.value.status == 409


def test_a_curator_removes_a_disputed_item_with_a_reason(disputed, curator):
    with pytest.raises(verification.VerificationError, match="Name the reason"):
        verification.adjudicate(curator, disputed.pk, "remove")
    with pytest.raises(verification.VerificationError, match="in the note"):
        verification.adjudicate(curator, disputed.pk, "remove", reason="other")
    assert stage(disputed) == counterfactuals.ADJUDICATION
    verification.adjudicate(curator, disputed.pk, "remove", reason="other", note="Two dogs are hidden.")
    disputed.refresh_from_db()
    assert disputed.version.label.endswith("-removed")
    removed = CurationRecord.objects.get(item=disputed).working["verification"]["removed"]
    assert removed["note"] == "Two dogs are hidden." and removed["by"] == curator.username


@pytest.mark.parametrize(("decision", "kwargs", "status", "message"), [
    ("correct", {"answer": "four"}, 400, "whole number"),
    ("correct", {"answer": "4"}, 400, "keep it instead"),
    ("maybe", {}, 400, "keep, correct or remove"),
])
def test_bad_adjudications_are_refused_and_change_nothing(disputed, curator, decision, kwargs, status, message):
    with pytest.raises(verification.VerificationError, match=message) as caught:
        verification.adjudicate(curator, disputed.pk, decision, **kwargs)
    assert caught.value.status == status and stage(disputed) == counterfactuals.ADJUDICATION


def test_verifiers_and_annotators_cannot_adjudicate(disputed, verifiers, annotator):
    for person in (annotator, verifiers[0]):
        with pytest.raises(verification.VerificationError) as caught:
            verification.adjudicate(person, disputed.pk, "keep")
        assert caught.value.status == 403
    curator_verifier = make_user("curious", "curator", "annotator")
    study = Study.objects.get(step_kind=verification.STUDY_KIND)
    other = BenchmarkItem.objects.get(pk=verify(study, curator_verifier, NOT_ABOUT))
    if stage(other) != counterfactuals.ADJUDICATION:  # its first verifier answered it right
        verify_item(study, make_user("late", "annotator"), other, RIGHT)
    assert stage(other) == counterfactuals.ADJUDICATION
    with pytest.raises(verification.VerificationError, match="another curator adjudicates it"):
        verification.adjudicate(curator_verifier, other.pk, "keep")
    with pytest.raises(verification.VerificationError) as caught:
        verification.adjudicate(make_user("boss", "curator"), 999999, "keep")
    assert caught.value.status == 404


# --- Freezing and export -----------------------------------------------------------------------------------

def test_a_verified_version_freezes_and_exports_in_the_release_layout(study, verifiers, counterfactual_items,
                                                                      curator, tmp_path):
    for worker in verifiers[:2]:
        while (claim := assignment.claim_next(study, worker)) is not None:
            about_dogs = claim.item.benchmark_item_id == counterfactual_items["source:q0"].pk
            submissions.submit(claim, worker, AMBIGUOUS if about_dogs else RIGHT)
    version = counterfactual_items["source:q1"].version
    assert sorted(version.items.values_list("curation__stage", flat=True)) == ["verified"] * 3
    versions.freeze(version)
    out = tmp_path / "export"
    call_command("export_benchmark", "cvqa", "--version", version.label, str(out))
    table = (out / "C-VQA" / "C-VQA-Real" / "C-VQA-Real_questions.csv").read_text()
    assert table.splitlines()[0] == "img_path,query,answer,new query,new answer,type"
    assert "How many cups if two were taken?" in table and "dogs" not in table
    again = run_import("cvqa", out, "re-imported")
    assert sorted((item.payload["new_query"], item.payload["new_answer"], item.payload["type"])
                  for item in again.items.all()) == sorted(
        (item.payload["new_query"], item.payload["new_answer"], item.payload["type"]) for item in version.items.all())
    assert all(item.media.get(role="image").image.checksum == version.items.get(
        payload__new_query=item.payload["new_query"]).media.get(role="image").image.checksum
        for item in again.items.all())


# --- Pages and command -----------------------------------------------------------------------------------

def test_the_command_creates_a_study_reports_and_adjudicates(counterfactual_items, curator, capsys):
    version = counterfactual_items["source:q0"].version
    call_command("cvqa_verification", "study", "--version", version.label, "--user", curator.username)
    study = Study.objects.get(step_kind=verification.STUDY_KIND)
    assert study.items.count() == 4
    call_command("cvqa_verification", "status", "--version", version.label)
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["stages"] == {"proposed": 2, "written": 2} and report["items"] == 4
    with pytest.raises(CommandError, match="not waiting for adjudication"):
        call_command("cvqa_verification", "adjudicate", "--item", str(counterfactual_items["source:q0"].pk),
                     "--decision", "keep", "--user", curator.username)


def test_the_verification_page_lists_items_and_adjudicates(disputed, curator, annotator):
    client = logged_in_client(curator)
    page = client.get(reverse("cvqa-verification-version", kwargs={"version_id": disputed.version_id}))
    text = page.content.decode()
    assert page.status_code == 200 and "Adjudication" in text and disputed.external_id in text
    assert "correct the answer to 5" in text
    bad = client.post(reverse("cvqa-adjudicate", kwargs={"item_id": disputed.pk}),
                      {"decision": "correct", "answer": "many"})
    assert bad.status_code == 400 and "whole number" in bad.content.decode()
    done = client.post(reverse("cvqa-adjudicate", kwargs={"item_id": disputed.pk}),
                       {"decision": "correct", "answer": "5"})
    assert done.status_code == 302 and stage(disputed) == counterfactuals.VERIFIED
    refused = logged_in_client(annotator).get(reverse("cvqa-verification-version",
                                                      kwargs={"version_id": disputed.version_id}))
    assert refused.status_code == 403


def test_the_adjudication_page_removes_an_item_with_its_reason(disputed, curator):
    client = logged_in_client(curator)
    home = disputed.version_id
    adjudicate = reverse("cvqa-adjudicate", kwargs={"item_id": disputed.pk})
    no_reason = client.post(adjudicate, {"decision": "remove"})
    assert no_reason.status_code == 400 and "Name the reason" in no_reason.content.decode()
    assert stage(disputed) == counterfactuals.ADJUDICATION
    done = client.post(adjudicate, {"decision": "remove", "reason": "ambiguous", "note": "Dogs hide behind the car."})
    assert done.status_code == 302 and stage(disputed) == counterfactuals.REMOVED
    page = client.get(reverse("cvqa-verification-version", kwargs={"version_id": home})).content.decode()
    removed = page.split('id="removed"')[1].split("</section>")[0]
    assert disputed.external_id in removed
    assert "the new question has no single right answer (ambiguous)" in removed
    assert "Dogs hide behind the car." in removed and f"by {curator.username}" in removed


def test_the_overview_creates_a_verification_study(counterfactual_items, curator):
    client = logged_in_client(curator)
    assert client.get(reverse("cvqa-verification")).status_code == 200
    version = counterfactual_items["source:q0"].version
    bad = client.post(reverse("cvqa-verification"), {"version": version.pk, "k": 1})
    assert bad.status_code == 400 and not Study.objects.exists()
    made = client.post(reverse("cvqa-verification"), {"version": version.pk, "k": 3, "open_now": "on"})
    assert made.status_code == 302
    study = Study.objects.get()
    assert study.annotators_per_item == 3 and study.state == Study.State.OPEN and study.items.count() == 4
