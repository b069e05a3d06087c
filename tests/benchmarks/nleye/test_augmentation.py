"""NL-EYE prompt augmentation (seeds/002 App. E.1; SPEC §3 Curation 2) and the NL-EYE curation console.

A text model rewrites a triplet's three scenes into image prompts (proposal kind `nleye_prompts`); the
prompts reach the triplet's `CurationRecord` only when a person accepts or corrects the proposal, with
its provenance. Jobs run through the real backend registry: on `TripletBackend` (defined here, whose
answers the tests choose), on the tiny causal LM (whose random output must be marked malformed) and on
the OpenAI-compatible test server (valid JSON, end to end through the pages). Celery is eager in tests:
a job runs when its transaction commits.
"""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.benchmarks.nleye import prompts, stages
from annotation.crowd import proposal_review
from annotation.curation_models import CurationRecord, ImageAttempt, ItemCheck
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, ItemMedia
from config.roles import ANNOTATOR
from frontend import navigation
from generation import proposals
from generation.backends import registry
from generation.backends.base import ChatResult
from generation.models import Job, Proposal, ProposalDecision, ProposalSet
from generation.proposals import ProposalError, ProposalField, ProposalTask, chat
from generation.text_diff import word_diff
from tests.conftest import make_user
from tests.generation.test_proposals import submit_review
from tests.openai_test_server import Reply, openai_test_server
from tests.registry_support import register_api_model, register_models

pytestmark = pytest.mark.django_db

SCENES = {"premise": "The boy is crying.", "hypothesis1": "The boy fell off his bike.",
          "hypothesis2": "The boy won a prize."}
GOOD = {"components": "a curly redhead boy in a striped green t-shirt; a red bike",
        "environment": "a quiet park path",
        "premise": "The curly redhead boy with the striped green t-shirt is crying.",
        "hypothesis1": "The curly redhead boy with the striped green t-shirt fell off his red bike.",
        "hypothesis2": "The curly redhead boy with the striped green t-shirt won a prize."}
CHANGED = {**GOOD, "premise": "The curly redhead teenager with the striped green t-shirt is crying."}


# --- Triplets under curation ------------------------------------------------------------------------

def pool_version(label: str = "pool-1", **fields) -> BenchmarkVersion:
    return BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="nleye"), label=label, **fields)


def make_triplet(version, external_id: str, *, label: int = 1, scenes=None, stage=stages.SCENES_ACCEPTED,
                 author=None, payload_scenes=None, **payload) -> BenchmarkItem:
    """An NL-EYE item with a curation record whose working scenes are `scenes` (the scene writer's)."""
    scenes = SCENES if scenes is None else scenes
    item = BenchmarkItem.objects.create(version=version, external_id=external_id, payload={
        "kind": "triplet", "sample_id": external_id, "label": label, **(payload_scenes or scenes), **payload})
    CurationRecord.objects.create(item=item, stage=stage, author=author, working={"scenes": dict(scenes), "seed": 7})
    return item


@pytest.fixture
def version(db):
    return pool_version()


@pytest.fixture
def triplet(version, annotator):
    return make_triplet(version, "t-1", author=annotator)


def record_of(item) -> CurationRecord:
    return CurationRecord.objects.get(item=item)


# --- A backend whose answers the tests choose ------------------------------------------------------

class TripletBackend:
    """Answers each prompt with `REPLIES[sample]`, where `sample` is the first key of REPLIES whose
    premise scene the prompt contains (a text, or an Exception for a failed request)."""

    name = "triplet_script"
    REPLIES: dict = {}
    prompts_seen: list = []

    def __init__(self, model_id: str, revision: str = "", **options):
        self.model_id, self.revision = model_id, revision or "rev-7"

    def generate(self, requests):
        results = []
        for request in requests:
            text = request.messages[-1].parts[-1].text
            type(self).prompts_seen.append(text)
            reply = next(reply for scene, reply in type(self).REPLIES.items() if scene in text)
            if isinstance(reply, Exception):
                results.append(ChatResult(texts=[], error=str(reply), latency_s=0.01))
            else:
                results.append(ChatResult(texts=[reply], latency_s=0.01))
        return results


@pytest.fixture
def scripted(db, monkeypatch):
    register_models("triplet_script", "scripted/augmenter", "scripted/cli", "m")  # what the forms and command pick
    monkeypatch.setitem(registry.LOADERS, "triplet_script", (__name__, "TripletBackend"))
    monkeypatch.setattr(TripletBackend, "REPLIES", {})
    monkeypatch.setattr(TripletBackend, "prompts_seen", [])
    return TripletBackend


def augment(items, user, capture, **options) -> ProposalSet:
    options = {"backend": "triplet_script", "model_id": "scripted/augmenter", **options}
    with capture(execute=True):
        pset = prompts.start_augmentation([item.pk for item in items], user=user, **options)
    assert Job.objects.get(pk=pset.job_id).status == Job.Status.SUCCEEDED
    return pset


@pytest.fixture
def proposed(triplet, curator, scripted, django_capture_on_commit_callbacks):
    """The triplet's prompt proposal, generated with GOOD as the model's answer and not decided yet."""
    scripted.REPLIES[SCENES["premise"]] = json.dumps(GOOD)
    pset = augment([triplet], curator, django_capture_on_commit_callbacks)
    [proposal] = pset.proposals.all()
    assert proposal.status == Proposal.Status.OK, proposal.parse_error
    return proposal


# --- The prompt --------------------------------------------------------------------------------------

def prompt_text(inputs: dict) -> str:
    [message] = prompts.PROMPTS.messages(inputs)
    return message.parts[0].text


def test_the_prompt_is_the_paper_s_with_the_named_components_and_the_slots_of_the_answer():
    text = prompt_text({"item_id": 1, **SCENES, "plausible": 1, "components": ["boy", "bike"],
                        "environment": "park"})
    assert text.startswith("Describe visually a specific looks of boy, bike and park. keep it short and concise, "
                           "and avoid NSFW words. and integrate these details into every reference of them in the "
                           "following captions smoothly and consistently. do not change the content of the captions "
                           "besides the visual description integrations. return in a JSON format: ")
    assert "Note: integrate the environment only if it fits the context of the caption." in text
    # the paper's worked example, answered in the kind's JSON
    assert ("For example: interacting component1: little child, interacting component2: vaccine, environment: "
            "nurse room, first image caption: a child gets a vaccine., plausible second image caption: a child "
            "cries after getting a vaccine., implausible second image caption: a child smiles after getting a "
            "vaccine. Response: {") in text
    assert '"hypothesis1": "<improved plausible second image caption>"' in text
    assert text.endswith("interacting component1: boy, interacting component2: bike, environment: park, first image "
                         "caption: The boy is crying., plausible second image caption: The boy fell off his bike., "
                         "implausible second image caption: The boy won a prize. Response:")


def test_the_answer_format_follows_which_hypothesis_is_plausible_and_unnamed_components_are_asked_for():
    text = prompt_text({"item_id": 1, **SCENES, "plausible": 2})
    assert text.startswith(f"Describe visually a specific looks of {prompts.UNNAMED_SUBJECTS}.")
    answer = text.split("return in a JSON format: ", 1)[1].split(". Reply with", 1)[0]
    assert json.loads(answer) == {
        "components": "<the specific looks of the interacting components>",
        "environment": "<the specific looks of the environment>",
        "premise": "<improved first image caption>",
        "hypothesis1": "<improved implausible second image caption>",
        "hypothesis2": "<improved plausible second image caption>"}
    assert text.endswith("first image caption: The boy is crying., plausible second image caption: The boy won a "
                         "prize., implausible second image caption: The boy fell off his bike. Response:")
    with pytest.raises(ValueError, match="plausible must be 1 or 2"):
        prompt_text({"item_id": 1, **SCENES, "plausible": 3})


# --- Strict parsing ----------------------------------------------------------------------------------

def parse(raw: str):
    [parsed] = prompts.PROMPTS.parse(raw)
    return parsed


def test_a_json_object_with_exactly_the_fields_parses():
    parsed = parse(json.dumps(GOOD))
    assert (parsed.status, parsed.fields) == ("ok", GOOD)
    assert parse(f"```json\n{json.dumps(GOOD)}\n```").fields == GOOD


@pytest.mark.parametrize(("raw", "reason"), [
    ("The boy is crying in a park.", "not valid JSON"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "hypothesis2"}), "missing hypothesis2"),
    (json.dumps({"premise": "A boy.", "hypothesis1": "B.", "hypothesis2": "C."}), "missing components, environment"),
    (json.dumps({**GOOD, "style": "photo"}), "unexpected style"),
    (json.dumps({**GOOD, "premise": ""}), "'premise' is empty"),
    (json.dumps({**GOOD, "premise": ["a", "b"]}), "'premise' must be a string, not a list"),
    (f"Here are the prompts: {json.dumps(GOOD)}", "not valid JSON"),
    (f"{json.dumps(GOOD)}\nI hope this helps!", "not valid JSON"),
    (json.dumps([GOOD]), "expected a JSON object"),
])
def test_anything_else_is_malformed_with_its_reason_and_no_fields(raw, reason):
    parsed = parse(raw)
    assert parsed.status == "malformed" and parsed.fields == {}
    assert reason in parsed.error


# --- The word diff and the comparison hook ------------------------------------------------------------

def test_the_word_diff_marks_changed_words_and_keeps_added_details_apart():
    changed = word_diff("The boy is crying.", "The curly redhead teenager is crying.")
    assert changed.removed == ["boy"]
    assert changed.added == ["curly", "redhead", "teenager"]
    kept = "".join(piece.text + piece.space for piece in changed.pieces if piece.op != "delete")
    assert kept == "The curly redhead teenager is crying."

    added_only = word_diff("The boy is crying.", "The curly redhead boy with the striped green t-shirt is crying.")
    assert added_only.removed == [] and added_only.changed
    assert added_only.added == ["curly", "redhead", "with", "the", "striped", "green", "t", "-", "shirt"]
    dropped = word_diff("A child gets a vaccine.", "A child gets a shot.")
    assert (dropped.removed, dropped.added) == (["vaccine"], ["shot"])
    assert not word_diff("Same words here.", "Same words here.").changed


def test_any_kind_can_compare_its_fields_with_the_inputs_they_rewrite():
    task = ProposalTask(name="test_rewrite", label="Rewrite", fields=(ProposalField("text"), ProposalField("note")),
                        build_prompt=lambda inputs, options: chat([inputs["source"]]),
                        compare_with={"text": "source"})
    [comparison] = task.comparisons({"source": "A red car."}, {"text": "A blue car.", "note": "colour"})
    assert (comparison.field.name, comparison.source, comparison.diff.removed) == ("text", "source", ["red"])
    assert task.comparisons({"source": "A red car."}, {}) == []
    with pytest.raises(ValueError, match="compare_with names fields it does not have: nothing"):
        ProposalTask(name="test_bad", label="Bad", fields=(ProposalField("text"),),
                     build_prompt=lambda inputs, options: [], compare_with={"nothing": "source"})


# --- Starting an augmentation ------------------------------------------------------------------------

def test_an_augmentation_asks_the_model_about_the_scenes_the_writer_wrote(version, curator, scripted,
                                                                           django_capture_on_commit_callbacks):
    # the payload still holds the release's text; the scene writer's scenes are the ones asked about
    item = make_triplet(version, "t-9", label=2, payload_scenes=dict.fromkeys(stages.SLOTS, "old"))
    scripted.REPLIES[SCENES["premise"]] = json.dumps(GOOD)
    pset = augment([item], curator, django_capture_on_commit_callbacks, components="boy, bike ",
                   environment=" park")
    [proposal] = pset.proposals.all()
    assert (pset.task_kind, pset.created_by) == ("nleye_prompts", curator)
    assert proposal.source_key == f"nleye:{item.pk}:prompts"
    assert proposal.inputs == {"item_id": item.pk, "sample_id": "t-9", **SCENES, "plausible": 2,
                               "components": ["boy", "bike"], "environment": "park"}
    [asked] = scripted.prompts_seen
    assert "Describe visually a specific looks of boy, bike and park." in asked
    assert (proposal.model_id, proposal.revision, proposal.status) == ("scripted/augmenter", "rev-7", "ok")


@pytest.mark.parametrize(("ids", "message"), [
    ([], "Choose at least one triplet."),
    ([987654], "No NL-EYE triplet under curation with id 987654."),
])
def test_an_augmentation_refuses_what_is_not_a_triplet_under_curation(version, curator, ids, message):
    with pytest.raises(ProposalError, match=message):
        prompts.start_augmentation(ids, user=curator, backend="causal_lm", model_id="m")
    assert not ProposalSet.objects.exists()


def test_an_augmentation_refuses_items_without_record_frozen_versions_bad_labels_and_non_curators(
        version, triplet, curator, annotator):
    bare = BenchmarkItem.objects.create(version=version, external_id="bare", payload={
        "kind": "triplet", **SCENES, "label": 1})
    other = BenchmarkItem.objects.create(version=BenchmarkVersion.objects.create(
        benchmark=Benchmark.objects.get(slug="cvqa"), label="c"), external_id="q", payload={"kind": "real"})
    CurationRecord.objects.create(item=other, stage="x")
    unlabelled = make_triplet(version, "t-2", label=1)
    BenchmarkItem.objects.filter(pk=unlabelled.pk).update(payload={"kind": "triplet", **SCENES})
    half = make_triplet(version, "t-3", scenes={**SCENES, "hypothesis2": " "}, payload_scenes={**SCENES,
                                                                                             "hypothesis2": ""})
    frozen = pool_version("frozen")
    old = make_triplet(frozen, "t-4")
    BenchmarkVersion.objects.filter(pk=frozen.pk).update(frozen=True, checksum="x" * 64)
    for ids, message in (([bare.pk], f"id {bare.pk}"), ([other.pk, triplet.pk], f"id {other.pk}"),
                         ([unlabelled.pk], "does not say which hypothesis is plausible"),
                         ([half.pk], "has no hypothesis2 scene"), ([old.pk], "belongs to frozen version")):
        with pytest.raises(ProposalError, match=message):
            prompts.start_augmentation(ids, user=curator, backend="causal_lm", model_id="m")
    with pytest.raises(ProposalError, match="Only curators and admins"):
        prompts.start_augmentation([triplet.pk], user=annotator, backend="causal_lm", model_id="m")
    with pytest.raises(ProposalError, match="at most 6 interacting components"):
        prompts.start_augmentation([triplet.pk], user=curator, backend="causal_lm", model_id="m",
                                   components=",".join("abcdefg"))
    assert not ProposalSet.objects.exists()


# --- Approval ----------------------------------------------------------------------------------------

def test_nothing_is_written_before_a_person_decides(proposed, triplet):
    record = record_of(triplet)
    assert record.stage == stages.SCENES_ACCEPTED
    assert record.working == {"scenes": SCENES, "seed": 7}
    assert BenchmarkItem.objects.get(pk=triplet.pk).payload == triplet.payload


def test_accepting_writes_the_prompts_with_their_provenance_and_never_the_item(proposed, triplet, curator):
    decision = proposals.decide(proposed, curator, "accept")
    record = record_of(triplet)
    assert record.stage == stages.PROMPTS_APPROVED
    assert record.working["prompts"] == {slot: GOOD[slot] for slot in stages.SLOTS}
    assert record.working["prompt_looks"] == {"components": GOOD["components"], "environment": GOOD["environment"]}
    assert record.working["prompts_provenance"] == {
        "proposal": proposed.pk, "proposal_set": proposed.proposal_set_id, "decision": decision.pk,
        "outcome": "accepted", "backend": "triplet_script", "model_id": "scripted/augmenter", "revision": "rev-7",
        "decided_by": curator.username, "decided_by_id": curator.pk, "decided_at": decision.decided_at.isoformat()}
    assert (record.working["scenes"], record.working["seed"]) == (SCENES, 7)
    assert BenchmarkItem.objects.get(pk=triplet.pk).payload == triplet.payload


def test_a_correction_keeps_the_person_s_text_and_a_later_rejection_takes_the_prompts_back(
        proposed, triplet, curator):
    mine = "The boy with red curls is crying on the path."
    decision = proposals.decide(proposed, curator, "correct", fields={"premise": mine})
    record = record_of(triplet)
    assert record.working["prompts"] == {"premise": mine, "hypothesis1": GOOD["hypothesis1"],
                                         "hypothesis2": GOOD["hypothesis2"]}
    assert (record.working["prompts_provenance"]["outcome"], record.working["prompts_provenance"]["decision"]) == (
        "corrected", decision.pk)
    proposed.refresh_from_db()
    assert proposed.fields == GOOD  # the model's answer stays as it was

    proposals.decide(proposed, curator, "reject", reason="the premise lost the bike")
    record = record_of(triplet)
    assert record.stage == stages.SCENES_ACCEPTED
    assert record.working == {"scenes": SCENES, "seed": 7}


def test_rejecting_a_proposal_whose_prompts_are_not_in_use_changes_nothing(
        proposed, triplet, curator, scripted, django_capture_on_commit_callbacks):
    proposals.decide(proposed, curator, "accept")
    scripted.REPLIES[SCENES["premise"]] = json.dumps(CHANGED)
    [second] = augment([triplet], curator, django_capture_on_commit_callbacks).proposals.all()
    proposals.decide(second, curator, "reject", reason="the boy became a teenager")
    record = record_of(triplet)
    assert record.working["prompts"]["premise"] == GOOD["premise"]
    assert record.working["prompts_provenance"]["proposal"] == proposed.pk


def test_approval_is_refused_for_a_frozen_version_and_leaves_no_decision(proposed, triplet, curator, version):
    BenchmarkVersion.objects.filter(pk=version.pk).update(frozen=True, checksum="x" * 64)
    with pytest.raises(ProposalError, match="is frozen"):
        proposals.decide(proposed, curator, "accept")
    proposed.refresh_from_db()
    assert (proposed.outcome, proposed.decisions.count()) == ("undecided", 0)
    assert "prompts" not in record_of(triplet).working


def test_approval_is_refused_when_the_triplet_is_no_longer_under_curation(proposed, triplet, curator):
    CurationRecord.objects.filter(item=triplet).delete()
    with pytest.raises(ProposalError, match="is not a triplet under curation"):
        proposals.decide(proposed, curator, "accept")
    assert not ProposalDecision.objects.exists()
    proposals.decide(proposed, curator, "reject", reason="gone")  # a rejection needs no record


def test_a_review_study_s_accepted_answer_writes_the_prompts_with_the_reviewer(proposed, triplet, curator):
    made = proposal_review.create_review_study([proposed], curator=curator, name="Prompts")
    reviewer = make_user("reviewer", ANNOTATOR)
    _, submission = submit_review(made.study, reviewer, {"verdict": "accept"})
    report = proposal_review.apply_review_submissions(made.study, user=curator)
    assert len(report["applied"]) == 1
    provenance = record_of(triplet).working["prompts_provenance"]
    assert (provenance["decided_by"], provenance["outcome"]) == ("reviewer", "accepted")
    assert provenance["decided_at"] == submission.submitted_at.isoformat()


# --- The proposals queue -----------------------------------------------------------------------------

def test_the_queue_shows_each_prompt_as_a_word_diff_against_its_scene(curator_client, curator, triplet, scripted,
                                                                     django_capture_on_commit_callbacks):
    scripted.REPLIES[SCENES["premise"]] = json.dumps(CHANGED)
    [proposal] = augment([triplet], curator, django_capture_on_commit_callbacks).proposals.all()
    response = curator_client.get(reverse("generation"), {"kind": "nleye_prompts"})
    assert response.status_code == 200
    html = response.content.decode()
    [row] = response.context["rows"]
    by_field = {c.field.name: c for c in row["comparisons"]}
    assert by_field["premise"].diff.removed == ["boy"]
    assert by_field["hypothesis1"].diff.removed == [] and by_field["hypothesis1"].source == "hypothesis1"
    assert "<del>boy</del>" in html and "<ins>teenager</ins>" in html
    assert "Dropped or changed: boy" in html
    assert 'name="field_premise"' in html  # edit, then approve

    response = curator_client.post(reverse("proposal-decide", kwargs={"pk": proposal.pk}), {
        "verdict": "correct", "field_premise": GOOD["premise"]})
    assert response.status_code == 200, response.json()
    assert record_of(triplet).working["prompts"]["premise"] == GOOD["premise"]
    html = curator_client.get(reverse("generation"), {"kind": "nleye_prompts"}).content.decode()
    assert "Dropped or changed" not in html  # the diff shows the corrected text


def test_the_queue_refuses_an_approval_for_a_frozen_version_with_a_400(curator_client, proposed, version):
    BenchmarkVersion.objects.filter(pk=version.pk).update(frozen=True, checksum="x" * 64)
    response = curator_client.post(reverse("proposal-decide", kwargs={"pk": proposed.pk}), {"verdict": "accept"})
    assert response.status_code == 400 and "is frozen" in response.json()["error"]


# --- The console pages --------------------------------------------------------------------------------

def test_the_triplets_page_lists_triplets_with_their_progress_and_filters_by_stage(
        curator_client, curator, version, triplet, image):
    approved = make_triplet(version, "t-2", stage=stages.PROMPTS_APPROVED)
    CurationRecord.objects.filter(item=approved).update(working={"scenes": SCENES, "prompts": {
        slot: GOOD[slot] for slot in stages.SLOTS}})
    ItemMedia.objects.create(item=approved, role="premise", image=image)
    ImageAttempt.objects.create(item=approved, slot="hypothesis1", mode="text2image", prompt="p", seed=7,
                                model_id="sd", created_by=curator, chosen_by=curator,
                                chosen_at="2025-01-01T00:00:00Z", status="done")
    other = make_triplet(pool_version("pool-2"), "t-3", stage=stages.VALIDATED, explanation="Falling hurts.")

    response = curator_client.get(reverse("nleye-triplets"))
    assert response.status_code == 200
    rows = {t.item.pk: t for t in response.context["rows"]}
    assert set(rows) == {triplet.pk, approved.pk, other.pk}
    assert (rows[approved.pk].images_chosen, bool(rows[approved.pk].prompts)) == (2, True)
    assert (rows[triplet.pk].images_chosen, bool(rows[triplet.pk].prompts)) == (0, False)
    assert rows[other.pk].validated and rows[other.pk].explanation == "Falling hurts."
    html = response.content.decode()
    assert reverse("nleye-triplet", kwargs={"item_id": approved.pk}) in html
    assert 'action="/nleye/triplets/augment/"' in html and 'name="model_id"' in html

    def listed(**query):
        answer = curator_client.get(reverse("nleye-triplets"), query)
        assert answer.status_code == 200
        return {t.item.pk for t in answer.context["rows"]}

    assert listed(stage="prompts_approved") == {approved.pk}
    assert listed(version=version.pk) == {triplet.pk, approved.pk}
    assert listed(version=version.pk, stage="validated") == set()
    for query, status in (({"stage": "painted"}, 400), ({"version": "one"}, 400), ({"version": "987654"}, 404)):
        assert curator_client.get(reverse("nleye-triplets"), query).status_code == status


def test_the_triplet_page_shows_scenes_prompts_provenance_slots_and_the_next_steps(
        curator_client, proposed, triplet, curator):
    page = reverse("nleye-triplet", kwargs={"item_id": triplet.pk})
    html = curator_client.get(page).content.decode()
    assert SCENES["hypothesis1"] in html
    assert 'id="no-prompts"' in html and 'action="/nleye/triplets/augment/"' in html
    assert f'name="item" value="{triplet.pk}"' in html

    proposals.decide(proposed, curator, "correct", fields={"premise": "The teenager is crying."})
    response = curator_client.get(page)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="no-prompts"' not in html
    assert "<del>boy</del>" in html and "<ins>teenager</ins>" in html
    assert f"Proposal #{proposed.pk}" in html and "scripted/augmenter" in html and f"corrected by {curator}" in html
    for slot in stages.SLOTS:
        assert f'href="/studio/items/{triplet.pk}/{slot}/"' in html
    assert f'href="/nleye/triplets/{triplet.pk}/explain/"' in html
    assert f'href="/nleye/triplets/{triplet.pk}/validate/"' in html
    assert "Prompts approved" in html


def test_the_triplet_page_shows_the_latest_check_per_aspect(curator_client, triplet, curator):
    ItemCheck.objects.create(item=triplet, aspect="plausibility", verdict="fail", note="unclear", checked_by=curator)
    ItemCheck.objects.create(item=triplet, aspect="plausibility", verdict="pass", checked_by=curator)
    response = curator_client.get(reverse("nleye-triplet", kwargs={"item_id": triplet.pk}))
    [check] = response.context["triplet"].checks
    assert check.verdict == "pass"


def test_the_console_is_for_curators_and_unknown_triplets_are_404(
        curator_client, annotator_client, researcher_client, admin_client_role, triplet, version):
    bare = BenchmarkItem.objects.create(version=version, external_id="bare", payload={"kind": "triplet", **SCENES,
                                                                                       "label": 1})
    for client in (annotator_client, researcher_client):
        assert client.get(reverse("nleye-triplets")).status_code == 403
        assert client.get(reverse("nleye-triplet", kwargs={"item_id": triplet.pk})).status_code == 403
        assert client.post(reverse("nleye-triplets-augment"), {"item": triplet.pk}).status_code == 403
    assert admin_client_role.get(reverse("nleye-triplet", kwargs={"item_id": triplet.pk})).status_code == 200
    for pk in (987654, bare.pk):
        assert curator_client.get(reverse("nleye-triplet", kwargs={"item_id": pk})).status_code == 404
    entry = next(entry for entry in navigation.entries() if entry.url_name == "nleye-triplets")
    assert set(entry.roles) == {"curator", "admin"}


@pytest.mark.parametrize(("data", "message"), [
    ({}, "Choose at least one triplet."),
    ({"item": "x"}, "Triplets are chosen by their item numbers."),
    ({"item": "987654"}, "No NL-EYE triplet under curation with id 987654."),
    ({"item": "TRIPLET", "backend": "clip"}, "registered with the causal_lm backend, not 'clip'"),
    ({"item": "TRIPLET", "backend": "nope"}, "registered with the causal_lm backend, not 'nope'"),
    ({"item": "TRIPLET", "model_id": ""}, "Choose a model"),
    ({"item": "TRIPLET", "model_id": "other/model"}, "Unknown model 'other/model'"),
    ({"item": "TRIPLET", "max_new_tokens": "0"}, "Max new tokens must be a whole number of at least 1."),
    ({"item": "TRIPLET", "backend_options": "base_url"}, "A backend option takes key=value"),
    ({"item": "TRIPLET", "backend_options": "base_url=http://10.0.0.1/v1"}, "option 'base_url'"),
])
def test_the_augment_endpoint_answers_bad_input_with_a_400_and_creates_nothing(curator_client, triplet, data,
                                                                              message, register_model):
    register_model("some/model", backend="causal_lm")
    form = {"backend": "causal_lm", "model_id": "some/model", **data}
    if form.get("item") == "TRIPLET":
        form["item"] = str(triplet.pk)
    response = curator_client.post(reverse("nleye-triplets-augment"), form)
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert not ProposalSet.objects.exists() and not Job.objects.exists()


# --- Real models -------------------------------------------------------------------------------------

def test_a_tiny_causal_lm_s_output_is_marked_malformed_and_cannot_be_accepted(
        tiny_models_dir, triplet, curator, django_capture_on_commit_callbacks):
    model = str(tiny_models_dir / "causal-lm")
    pset = augment([triplet], curator, django_capture_on_commit_callbacks, backend="causal_lm", model_id=model,
                   params={"max_new_tokens": 8}, backend_options={"device": "cpu"})
    [proposal] = pset.proposals.all()
    assert proposal.raw_output.strip()  # the random model said something
    assert (proposal.status, proposal.fields) == ("malformed", {})
    assert proposal.parse_error.startswith("not valid JSON")
    assert "Describe visually a specific looks of" in proposal.prompt[-1]["content"][0]["text"]
    with pytest.raises(ProposalError, match="malformed has no fields to accept"):
        proposals.decide(proposal, curator, "accept")
    assert record_of(triplet).working == {"scenes": SCENES, "seed": 7}


def test_an_openai_compatible_server_s_json_goes_from_the_page_to_the_triplet(
        curator_client, curator, triplet, django_capture_on_commit_callbacks):
    completion = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-test",
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps(GOOD)},
                               "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 10, "completion_tokens": 40, "total_tokens": 50}}
    with openai_test_server() as server:
        register_api_model(server)
        server.script(Reply(body=completion))
        with django_capture_on_commit_callbacks(execute=True):
            response = curator_client.post(reverse("nleye-triplets-augment"), {
                "item": str(triplet.pk), "backend": "openai", "model_id": "gpt-test", "max_new_tokens": "300",
                "components": "boy, bike", "environment": "park"})
        assert response.status_code == 201, response.json()
        [body] = server.bodies
    answer = response.json()
    job = Job.objects.get(pk=answer["job"])
    assert (job.kind, job.status) == ("make_proposals_api", "succeeded")
    assert "kind=nleye_prompts" in answer["queue_url"]
    assert body["model"] == "gpt-test" and body["max_tokens"] == 300
    assert "Describe visually a specific looks of boy, bike and park." in body["messages"][-1]["content"][0]["text"]
    [proposal] = Proposal.objects.filter(proposal_set_id=answer["set"])
    assert (proposal.status, proposal.fields, proposal.backend) == ("ok", GOOD, "openai")
    assert "prompts" not in record_of(triplet).working

    decided = curator_client.post(reverse("proposal-decide", kwargs={"pk": proposal.pk}), {"verdict": "accept"})
    assert decided.status_code == 200
    record = record_of(triplet)
    assert record.stage == stages.PROMPTS_APPROVED
    assert record.working["prompts"] == {slot: GOOD[slot] for slot in stages.SLOTS}
    assert record.working["prompts_provenance"]["model_id"] == "gpt-test"


# --- The command line --------------------------------------------------------------------------------

def test_the_command_lists_triplets_and_starts_an_augmentation(triplet, curator, scripted,
                                                               django_capture_on_commit_callbacks):
    out = io.StringIO()
    call_command("nleye_triplets", "list", "--stage", "scenes_accepted", stdout=out)
    assert f"#{triplet.pk} t-1 [pool-1] scenes_accepted: prompts none, images 0/3" in out.getvalue()
    assert "1 triplet(s)" in out.getvalue()

    scripted.REPLIES[SCENES["premise"]] = json.dumps(GOOD)
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("nleye_triplets", "augment", "--items", str(triplet.pk), "--user", curator.username,
                     "--backend", "triplet_script", "--model", "scripted/cli", "--components", "boy, bike",
                     stdout=out)
    pset = ProposalSet.objects.get()
    assert f"Proposal set {pset.pk} (1 triplet(s)): job {pset.job_id} queued" in out.getvalue()
    assert pset.proposals.get().inputs["components"] == ["boy", "bike"]
    with pytest.raises(CommandError, match="No NL-EYE triplet under curation with id 987654"):
        call_command("nleye_triplets", "augment", "--items", "987654", "--user", curator.username,
                     "--backend", "triplet_script", "--model", "m")
    with pytest.raises(CommandError, match="No user 'nobody'"):
        call_command("nleye_triplets", "augment", "--items", str(triplet.pk), "--user", "nobody",
                     "--backend", "triplet_script", "--model", "m")
