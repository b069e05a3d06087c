"""CVRR-ES QA generation and filtration (seeds/003 §3.2 Stages 2-3; SPEC §4 "Curation" 3-4).

A text model reads a captioned video's caption and its dimension's instruction and proposes QA pairs
(proposal kind `cvrr_qa`); people keep, fix or remove each pair with a reason in a filtration study
(study kind `cvrr_filtration`); kept and fixed pairs become `qa` items of the QA pool only through
those decisions. Jobs run through the real backend registry: on `CaptionBackend` (defined here, whose
answers the tests choose), on the tiny causal LM (whose random output must be marked malformed) and on
the OpenAI-compatible test server (valid JSON, end to end through the pages). Celery is eager in tests:
a job runs when its transaction commits.
"""

import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.benchmarks.cvrr import filtration, qa_generation, qa_pool, stages
from annotation.benchmarks.cvrr.noise_report import noise_report
from annotation.crowd import assignment, forms, submissions
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.models import StudyItem
from annotation.curation_models import CategoryDefinition, CurationRecord
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, ItemMedia
from annotation.versions import freeze
from config.roles import ANNOTATOR
from evaluation.benchmarks.cvrr.benchmark import DIMENSIONS
from generation import proposals
from generation.backends import registry
from generation.backends.base import ChatResult
from generation.models import Job, Proposal, ProposalDecision, ProposalSet
from generation.proposals import ProposalError
from tests.conftest import create_study, logged_in_client, make_user
from tests.openai_test_server import Reply, openai_test_server
from tests.registry_support import register_api_model, register_models

pytestmark = pytest.mark.django_db

DIMENSION = "interpretation_of_social_context"
CAPTION = "An old man waits at a crossing; a girl takes his arm and walks him across the busy road."
OTHER_DIMENSION = "partial_actions"
OTHER_CAPTION = "A woman cracks an egg over a bowl in a kitchen and puts the shell aside."
PAIRS = [
    {"question": "Why does the girl take the old man's arm?",
     "answer": "To help him cross the busy road safely.", "question_kind": "reasoning"},
    {"question": "Why does the girl push the old man into the road?",
     "answer": "She does not push him; she helps him across the road.", "question_kind": "robustness"},
    {"question": "Does the girl help the old man cross the busy road?",
     "answer": "The girl does help the old man cross the busy road.", "question_kind": "reasoning"},
]


# --- Videos under curation -----------------------------------------------------------------------------

def cvrr() -> Benchmark:
    return Benchmark.objects.get(slug="cvrr")


def video_pool(label: str = "video-pool") -> BenchmarkVersion:
    return BenchmarkVersion.objects.get_or_create(benchmark=cvrr(), label=label)[0]


def make_video(video_id: str, *, dimension: str = DIMENSION, caption: str | None = CAPTION,
               stage: str = stages.CAPTIONED, media=None, version=None) -> BenchmarkItem:
    payload = {"kind": "video", "dimension": dimension, "video_id": video_id, "source": "internet"}
    if caption is not None:
        payload["caption"] = caption
    item = BenchmarkItem.objects.create(version=version or video_pool(), external_id=f"{dimension}/{video_id}",
                                        payload=payload)
    if media is not None:
        ItemMedia.objects.create(item=item, role="video", video=media)
    CurationRecord.objects.create(item=item, stage=stage)
    return item


@pytest.fixture
def captioned(video):
    return make_video("v1", media=video)


# --- A backend whose answers the tests choose ------------------------------------------------------------

class CaptionBackend:
    """Answers each prompt with `REPLIES[caption]` for the first caption the prompt holds."""

    name = "caption_script"
    REPLIES: dict = {}
    prompts_seen: list = []

    def __init__(self, model_id: str, revision: str = "", **options):
        self.model_id, self.revision = model_id, revision or "rev-3"

    def generate(self, requests):
        results = []
        for request in requests:
            text = request.messages[-1].parts[-1].text
            type(self).prompts_seen.append(text)
            reply = next(reply for caption, reply in type(self).REPLIES.items() if caption in text)
            results.append(ChatResult(texts=[reply], latency_s=0.01))
        return results


@pytest.fixture
def scripted(db, monkeypatch):
    register_models("caption_script", "scripted/qa", "scripted/cli", "m")  # what the forms and the command pick
    monkeypatch.setitem(registry.LOADERS, "caption_script", ("tests.benchmarks.cvrr.test_qa", "CaptionBackend"))
    monkeypatch.setattr(CaptionBackend, "REPLIES", {})
    monkeypatch.setattr(CaptionBackend, "prompts_seen", [])
    return CaptionBackend


def generate(items, user, capture, **options) -> ProposalSet:
    options = {"backend": "caption_script", "model_id": "scripted/qa", **options}
    with capture(execute=True):
        pset = qa_generation.start_qa_generation([item.pk for item in items], user=user, **options)
    assert Job.objects.get(pk=pset.job_id).status == Job.Status.SUCCEEDED
    return pset


@pytest.fixture
def proposed(captioned, curator, scripted, django_capture_on_commit_callbacks):
    """The three pairs proposed for the captioned video, in order, undecided."""
    scripted.REPLIES[CAPTION] = json.dumps(PAIRS)
    pset = generate([captioned], curator, django_capture_on_commit_callbacks)
    found = list(pset.proposals.order_by("record_index"))
    assert [p.status for p in found] == ["ok"] * 3
    return found


def filter_pair(study, worker, answers):
    """The worker claims the study's next pair and submits these answers; the pair's proposal."""
    claim = assignment.claim_next(study, worker)
    submission, created, _ = submissions.submit(claim, worker, answers)
    assert created
    return claim.item.proposal


def pool_record(proposal) -> CurationRecord | None:
    return qa_pool.record_of(proposal.pk)


# --- The prompt -----------------------------------------------------------------------------------------

def prompt_text(inputs: dict, options=None) -> str:
    [message] = qa_generation.QA_TASK.messages(inputs, options)
    return message.parts[0].text


def test_the_prompt_holds_the_caption_the_dimension_its_instruction_and_the_answer_format():
    info = qa_generation.DEFAULT_DIMENSIONS[DIMENSION]
    text = prompt_text({"item_id": 1, "dimension": DIMENSION, "dimension_name": info.name,
                        "dimension_description": info.description, "instruction": "Ask about kindness.",
                        "caption": CAPTION}, {"pairs": 4})
    assert f'evaluation dimension "{info.name}": {info.description}' in text
    assert "Instruction for this dimension: Ask about kindness." in text
    assert f"Caption of the video:\n{CAPTION}" in text
    assert "reasoning:" in text and "robustness: misleading or confusing questions" in text
    assert "Never put the answer in the question." in text
    assert text.endswith('Write 4 pairs, of both kinds. Reply with a JSON list only, one object per pair, in this '
                         'format: [{"question": "<question>", "answer": "<answer>", "question_kind": '
                         '"reasoning or robustness"}]')


def test_the_instruction_comes_from_the_dimension_s_definition_or_else_the_default(captioned, video):
    [entry] = qa_generation.video_entries([captioned.pk])
    default = qa_generation.DEFAULT_DIMENSIONS[DIMENSION]
    assert entry == {"key": f"cvrr:{captioned.pk}:qa", "inputs": {
        "item_id": captioned.pk, "dimension": DIMENSION, "dimension_name": default.name,
        "dimension_description": default.description, "instruction": default.instruction, "video": "v1",
        "caption": CAPTION, "video_id": video.pk}}
    CategoryDefinition.objects.create(benchmark=cvrr(), key=DIMENSION, name="Social context",
                                      description="", instructions={"qa": "  Ask why people help each other. "})
    [entry] = qa_generation.video_entries([captioned.pk])
    inputs = entry["inputs"]
    assert (inputs["dimension_name"], inputs["dimension_description"], inputs["instruction"]) == (
        "Social context", default.description, "Ask why people help each other.")
    assert "Instruction for this dimension: Ask why people help each other." in prompt_text(entry["inputs"])
    CategoryDefinition.objects.filter(key=DIMENSION).update(instructions={"caption": "Describe the people."})
    assert qa_generation.video_entries([captioned.pk])[0]["inputs"]["instruction"] == default.instruction
    unknown = make_video("v9", dimension="a_new_dimension")
    inputs = qa_generation.video_entries([unknown.pk])[0]["inputs"]
    assert (inputs["dimension_name"], inputs["instruction"]) == ("A new dimension", qa_generation.FALLBACK_INSTRUCTION)


def test_every_release_dimension_has_a_default_instruction():
    assert set(qa_generation.DEFAULT_DIMENSIONS) == set(DIMENSIONS)
    assert all(d.instruction and d.description for d in qa_generation.DEFAULT_DIMENSIONS.values())


# --- Parsing ------------------------------------------------------------------------------------------

def parse(raw: str):
    return [(p.status, p.fields, p.error) for p in qa_generation.QA_TASK.parse(raw)]


def test_a_json_list_of_pairs_gives_one_record_per_pair():
    raw = json.dumps([{**PAIRS[0], "question_kind": " Reasoning "}, PAIRS[1]])
    assert parse(raw) == [("ok", PAIRS[0], ""), ("ok", PAIRS[1], "")]
    assert parse(f"```json\n{json.dumps(PAIRS[:1])}\n```") == [("ok", PAIRS[0], "")]


def test_a_bad_record_is_malformed_on_its_own():
    raw = json.dumps([PAIRS[0], {"question": "Why?", "answer": "Because."},
                      {**PAIRS[1], "question_kind": "trick"}, {**PAIRS[2], "extra": 1}, "a text"])
    records = parse(raw)
    assert records[0] == ("ok", PAIRS[0], "")
    assert records[1] == ("malformed", {}, "record 2 of 5: missing question_kind")
    assert records[2][:2] == ("malformed", {})
    assert "'question_kind' must be one of reasoning, robustness" in records[2][2]
    assert records[3] == ("malformed", {}, "record 4 of 5: unexpected extra")
    assert records[4] == ("malformed", {}, "record 5 of 5: expected a JSON object with question, answer, "
                                           "question_kind, got a string")


@pytest.mark.parametrize(("raw", "status", "reason"), [
    ("", "empty", "the model returned no text"),
    ("[]", "empty", "the model proposed an empty list"),
    ("```json\n\n```", "empty", "the model returned an empty code block"),
    (f"Here are the pairs: {json.dumps(PAIRS)}", "malformed", "not valid JSON"),
    (f"{json.dumps(PAIRS)}\nHope this helps!", "malformed", "not valid JSON"),
    (json.dumps(PAIRS[0]), "malformed", "expected a JSON list of objects, got an object"),
])
def test_empty_outputs_and_text_around_the_json_are_never_guessed(raw, status, reason):
    [(found, fields, error)] = parse(raw)
    assert (found, fields) == (status, {}) and error.startswith(reason)


# --- The answer-in-question flag --------------------------------------------------------------------------

@pytest.mark.parametrize(("question", "answer", "flagged"), [
    ("Is the man holding a red umbrella?", "Yes, the man is holding a red umbrella.", True),
    ("What colour is the RED car?", "red!", True),  # case and punctuation do not count
    ("Does the girl wear a t-shirt?", "A T-shirt.", True),  # hyphens split words the same way on both sides
    ("Does she say “don't go” to him?", "She says don’t go.", False),  # "says" is not "say": no stemming
    ("Doesn't the café open?", "The CAFÉ doesn’t open.", True),  # Unicode folding, apostrophes inside words
    ("Why is the man swimming?", "The man is not swimming.", False),  # the negation is content
    ("Is there a dog?", "No.", False),
    ("Is there a dog?", "Yes.", False),  # an answer without content words flags nothing
    ("Is the car in the cart?", "The car.", True),
    ("What is in the cart?", "A car.", False),  # whole words only: "car" is not in "cart"
    ("How many people cross?", "Three people cross.", False),
    ("How many people cross, 3 or 4?", "3 people cross.", True),
    ("Why does the baby cry?", "", False),
])
def test_the_flag_marks_a_question_that_contains_every_content_word_of_its_answer(question, answer, flagged):
    assert qa_generation.answer_in_question(question, answer) is flagged
    expected = [qa_generation.ANSWER_IN_QUESTION_FLAG] if flagged else []
    assert qa_generation.QA_TASK.flags_for({"question": question, "answer": answer}, {}) == expected


def test_kinds_without_a_check_flag_nothing():
    assert proposals.task_kind("caption").flags_for({"caption": "x"}, {}) == []
    assert qa_generation.QA_TASK.flags_for({}, {}) == []


# --- Generation ------------------------------------------------------------------------------------------

def test_generation_asks_about_the_chosen_videos_and_keeps_each_pair_apart(
        curator, scripted, django_capture_on_commit_callbacks, video):
    first = make_video("v1", media=video)
    second = make_video("v2", dimension=OTHER_DIMENSION, caption=OTHER_CAPTION)
    scripted.REPLIES[CAPTION] = json.dumps(PAIRS)
    scripted.REPLIES[OTHER_CAPTION] = "Sure! " + json.dumps(PAIRS[:1])
    pset = generate([first, second], curator, django_capture_on_commit_callbacks, pairs=3)
    assert pset.task_options == {"pairs": 3} and pset.task_kind == "cvrr_qa"
    assert len(scripted.prompts_seen) == 2 and all("Write 3 pairs" in text for text in scripted.prompts_seen)
    mine = pset.proposals.filter(source_key=f"cvrr:{first.pk}:qa").order_by("record_index")
    assert [p.fields for p in mine] == PAIRS
    [theirs] = pset.proposals.filter(source_key=f"cvrr:{second.pk}:qa")
    assert theirs.status == "malformed" and theirs.parse_error.startswith("not valid JSON")
    assert not qa_pool.records().exists()  # nothing reaches the pool before a person decides


@pytest.mark.parametrize(("ids", "message"), [
    ([], "Choose at least one captioned video"),
    ([987654], "No captioned CVRR-ES video under curation with id 987654"),
])
def test_generation_refuses_what_is_not_a_captioned_video(curator, ids, message):
    with pytest.raises(ProposalError, match=message):
        qa_generation.start_qa_generation(ids, user=curator, backend="caption_script", model_id="m")


def test_generation_refuses_uncaptioned_or_frozen_videos_bad_counts_and_non_curators(curator, annotator, captioned):
    not_yet = make_video("v3", stage=stages.VIDEO_ASSIGNED)
    no_text = make_video("v4", caption=None)
    frozen_version = video_pool("old-videos")
    frozen = make_video("v5", version=frozen_version)
    BenchmarkVersion.objects.filter(pk=frozen_version.pk).update(frozen=True, checksum="x")
    for item in (not_yet, frozen):
        with pytest.raises(ProposalError, match=f"No captioned CVRR-ES video under curation with id {item.pk}"):
            qa_generation.start_qa_generation([item.pk], user=curator, backend="caption_script", model_id="m")
    with pytest.raises(ProposalError, match=f"Video #{no_text.pk} has no caption yet"):
        qa_generation.start_qa_generation([no_text.pk], user=curator, backend="caption_script", model_id="m")
    for pairs in ("0", "31", "many"):
        with pytest.raises(ProposalError, match="pairs per video|1 to 30 pairs"):
            qa_generation.start_qa_generation([captioned.pk], user=curator, backend="caption_script", model_id="m",
                                              pairs=pairs)
    with pytest.raises(ProposalError, match="Only curators and admins"):
        qa_generation.start_qa_generation([captioned.pk], user=annotator, backend="caption_script", model_id="m")
    assert not ProposalSet.objects.exists()


def test_the_queue_shows_the_flag_and_the_removal_reasons(curator_client, proposed):
    page = curator_client.get(reverse("generation"), {"kind": "cvrr_qa"}).content.decode()
    assert page.count(qa_generation.ANSWER_IN_QUESTION_FLAG) == 1  # the third pair only
    assert '<option value="not_answerable">not answerable from the caption</option>' in page


# --- Filtration -----------------------------------------------------------------------------------------

@pytest.fixture
def study(proposed, curator):
    return filtration.create_filtration_study(proposed, curator=curator, name="Filtration").study


def test_the_filtration_item_shows_video_caption_dimension_description_pair_and_flag(study, proposed, video,
                                                                                      annotator_client):
    items = {item.proposal_id: item for item in StudyItem.objects.filter(study=study)}
    flagged = items[proposed[2].pk]
    info = qa_generation.DEFAULT_DIMENSIONS[DIMENSION]
    assert flagged.video == video
    assert flagged.payload == {
        "task": "CVRR-ES: QA pairs from a video caption", "input_dimension_name": info.name,
        "input_dimension_description": info.description, "input_video": "v1", "input_caption": CAPTION,
        "proposed_question": PAIRS[2]["question"], "proposed_answer": PAIRS[2]["answer"],
        "proposed_question_kind": "reasoning", "flags": [qa_generation.ANSWER_IN_QUESTION_FLAG]}
    assert "flags" not in items[proposed[0].pk].payload
    assert study.step_kind == "cvrr_filtration"
    fields = {field["name"]: field for field in study.form_schema["fields"]}
    assert [o["text"].split(":")[0] for o in fields["verdict"]["options"]] == ["Keep", "Fix", "Remove"]
    assert [o["id"] for o in fields["reason"]["options"]] == ["unrelated", "not_answerable", "answer_in_question"]

    page = annotator_client.post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True).content.decode()
    assert f'src="{reverse("media-video-file", kwargs={"pk": video.pk})}"' in page
    for text in (CAPTION, info.name, info.description, PAIRS[0]["question"], "answer in the question"):
        assert text.replace("'", "&#x27;") in page


def test_keep_fix_and_remove_make_items_only_through_the_decisions(study, proposed, curator, video):
    workers = [make_user(f"filterer{n}", ANNOTATOR) for n in range(3)]
    # the pairs are handed out in the order they were proposed
    kept = filter_pair(study, workers[0], {"verdict": "accept"})
    removed = filter_pair(study, workers[1], {"verdict": "reject", "reason": "unrelated"})
    fixed = filter_pair(study, workers[2], {
        "verdict": "correct", "reason": "answer_in_question", "verdict_explanation": "rephrased",
        "corrected_question": "What does the girl do for the old man?"})
    assert [kept, removed, fixed] == proposed
    assert not qa_pool.records().exists()  # submitted, not yet recorded

    report = filtration.record_decisions(study, user=curator)
    assert len(report["applied"]) == 3 and report["invalid"] == {}
    pool = qa_pool.pool_version()
    assert (pool.label, pool.frozen) == ("qa-pool", False)

    record = pool_record(kept)
    assert record.stage == stages.FILTERED and record.author == workers[0]
    assert record.item.version == pool
    assert record.item.payload == {"kind": "qa", "dimension": DIMENSION, "video_id": "v1", "caption": CAPTION,
                                   **kept.fields}
    assert record.item.media.get().role == "video" and record.item.media.get().video == video
    source = record.working["source"]
    assert (source["proposal"], source["outcome"], source["verdict"], source["origin"], source["study"],
            source["model_id"], source["decided_by"]) == (kept.pk, "accepted", "accept", "review", study.slug,
                                                          "scripted/qa", "filterer0")

    record = pool_record(fixed)
    assert record.item.payload["question"] == "What does the girl do for the old man?"
    assert record.item.payload["answer"] == fixed.fields["answer"]
    assert record.working["proposed"] == fixed.fields  # the model's pair, beside the fix
    assert (record.working["source"]["criterion"], record.working["source"]["reason"]) == (
        "answer_in_question", "rephrased")
    assert record.working["flags"] == []  # the fix took the answer out of the question

    assert pool_record(removed) is None
    decision = removed.decisions.get()
    assert (decision.verdict, decision.criterion, decision.reason) == ("reject", "unrelated",
                                                                       "unrelated to the dimension")
    assert qa_pool.records().count() == 2


@pytest.mark.parametrize(("answers", "field", "message"), [
    ({"verdict": "reject"}, "reason", "A removal names its reason"),
    ({"verdict": "reject", "verdict_explanation": "Off topic."}, "reason", "A removal names its reason"),
    ({"verdict": "reject", "reason": "boring"}, "reason", "choose one of the options"),
    ({"verdict": "accept", "reason": "unrelated"}, "reason", "kept as it is names no reason"),
    ({"verdict": "correct"}, "verdict", "no corrected field"),
    ({"verdict": "accept", "corrected_answer": "Other."}, "verdict", "verdict is 'accept'"),
    ({"verdict": "correct", "corrected_question_kind": "trick"}, "verdict", "must be one of"),
    ({"verdict": "correct", "corrected_question_kind": "reasoning"}, "verdict", "the fix changes nothing"),
    ({}, "verdict", "choose one of the options"),
])
def test_a_removal_needs_its_reason_and_bad_answers_are_refused_on_submit(study, annotator, answers, field, message):
    claim = assignment.claim_next(study, annotator)
    with pytest.raises(InvalidSubmission) as refused:
        submissions.submit(claim, annotator, answers)
    assert refused.value.status == 400
    assert message in json.dumps(refused.value.details), refused.value.details
    assert field in refused.value.details
    assert not ProposalDecision.objects.exists()


def test_the_submit_endpoint_answers_a_removal_without_reason_with_a_400(study, annotator_client, annotator):
    claim = assignment.claim_next(study, annotator)
    response = annotator_client.post(reverse("api-claim-submit", kwargs={"pk": claim.pk}),
                                     {"data": {"verdict": "reject"}}, content_type="application/json")
    assert response.status_code == 400, response.content
    assert "removal names its reason" in response.content.decode()


def test_a_later_removal_takes_the_kept_pair_out_of_the_pool_unless_it_is_frozen(proposed, curator):
    first, second = proposed[0], proposed[1]
    proposals.decide(first, curator, "accept")
    record = pool_record(first)
    with pytest.raises(ProposalError, match="A removal names its reason"):
        proposals.decide(first, curator, "reject", reason="Wrong.")
    proposals.decide(first, curator, "reject", criterion="not_answerable")
    assert pool_record(first) is None and not BenchmarkItem.objects.filter(pk=record.item_id).exists()

    proposals.decide(second, curator, "accept")
    freeze(qa_pool.pool_version())
    with pytest.raises(ProposalError, match="is frozen"):
        proposals.decide(second, curator, "reject", criterion="unrelated")
    assert second.decisions.count() == 1 and pool_record(second) is not None
    # a new pair goes to a new pool version
    proposals.decide(first, curator, "accept")
    assert pool_record(first).item.version.label == "qa-pool-2"


def test_the_queue_decides_with_a_named_reason_and_refuses_a_removal_without_one(curator_client, proposed):
    url = reverse("proposal-decide", kwargs={"pk": proposed[1].pk})
    refused = curator_client.post(url, {"verdict": "reject", "reason": "No."})
    assert refused.status_code == 400 and "A removal names its reason" in refused.json()["error"]
    assert curator_client.post(url, {"verdict": "reject", "criterion": "bogus"}).status_code == 400
    done = curator_client.post(url, {"verdict": "reject", "criterion": "not_answerable"})
    assert done.status_code == 200 and done.json()["outcome"] == "rejected"
    fixed = curator_client.post(reverse("proposal-decide", kwargs={"pk": proposed[2].pk}), {
        "verdict": "correct", "criterion": "answer_in_question", "field_question": "What does the girl do?"})
    assert fixed.status_code == 200
    assert pool_record(proposed[2]).item.payload["question"] == "What does the girl do?"


# --- Pairs sent back ---------------------------------------------------------------------------------------

def test_a_pair_sent_back_is_filtered_again_and_its_new_decision_counts(study, proposed, curator):
    keeper, expert, second = (make_user(name, ANNOTATOR) for name in ("keeper", "expert", "refilterer"))
    kept = filter_pair(study, keeper, {"verdict": "accept"})
    filtration.record_decisions(study, user=curator)
    item = pool_record(kept).item

    with pytest.raises(CrowdError, match="Say why"):
        filtration.return_to_filtration(item, "  ", expert)
    added = filtration.return_to_filtration(item, "The answer is wrong: she holds his hand.", expert)
    record = pool_record(kept)
    assert record.stage == stages.RETURNED
    assert [(r["reason"], r["by"]) for r in record.working["returned"]] == [
        ("The answer is wrong: she holds his hand.", "expert")]
    returns = added.study
    assert (returns.name, returns.step_kind, returns.state, added.proposal) == (
        filtration.RETURNS_NAME, "cvrr_filtration", "open", kept)
    assert added.payload["sent_back_because"] == "The answer is wrong: she holds his hand."
    assert list(filtration.returned_pairs()) == [record]
    # sent back again while it waits: no second item
    assert filtration.return_to_filtration(item, "Still wrong.", expert) is None
    assert StudyItem.objects.filter(proposal=kept).count() == 2

    fixed = filter_pair(returns, second, {"verdict": "correct", "corrected_answer": "To help him cross; she holds "
                                                                                    "his hand."})
    assert fixed == kept
    report = filtration.record_decisions(returns, user=curator)
    assert len(report["applied"]) == 1
    kept.refresh_from_db()
    assert kept.outcome == "corrected"  # the latest round settles it, not a dispute with the first
    record = pool_record(kept)
    assert record.stage == stages.FILTERED and record.item_id == item.pk
    assert record.item.payload["answer"] == "To help him cross; she holds his hand."
    assert len(record.working["returned"]) == 2  # the history of the returns stays

    # sent back once more, and removed this time: the item leaves the pool
    again = filtration.return_to_filtration(record.item, "Not answerable from the caption.", expert)
    assert again.study == returns and again.external_id == f"proposal-{kept.pk}-return-3"
    filter_pair(returns, make_user("third", ANNOTATOR), {"verdict": "reject", "reason": "not_answerable"})
    filtration.record_decisions(returns, user=curator)
    kept.refresh_from_db()
    assert kept.outcome == "rejected" and pool_record(kept) is None


def test_a_pair_sent_back_is_not_frozen_until_the_filtration_keeps_it_again(study, proposed, curator):
    keeper, expert, second = (make_user(name, ANNOTATOR) for name in ("keeper", "expert", "refilterer"))
    kept = filter_pair(study, keeper, {"verdict": "accept"})
    filtration.record_decisions(study, user=curator)
    item = pool_record(kept).item
    returns = filtration.return_to_filtration(item, "The answer is wrong: she holds his hand.", expert).study

    with pytest.raises(ValidationError) as refused:
        freeze(item.version)
    assert refused.value.items == [(item.external_id, refused.value.items[0][1])]
    assert refused.value.items[0][1].startswith("sent back to filtration in the CVRR-ES curation by expert on ")
    assert refused.value.items[0][1].endswith(": The answer is wrong: she holds his hand.")

    filter_pair(returns, second, {"verdict": "correct", "corrected_answer": "To help him cross."})
    filtration.record_decisions(returns, user=curator)
    frozen = freeze(item.version)  # the filtration's new decision is the latest: the pair is kept
    assert frozen.frozen and frozen.items.get().payload["answer"] == "To help him cross."


def test_only_kept_pairs_of_unfrozen_pools_go_back(proposed, curator, captioned):
    with pytest.raises(CrowdError, match="no CVRR-ES QA pair kept in filtration"):
        filtration.return_to_filtration(captioned, "wrong", curator)
    proposals.decide(proposed[0], curator, "accept")
    item = pool_record(proposed[0]).item
    freeze(item.version)
    with pytest.raises(CrowdError, match="is frozen") as refused:
        filtration.return_to_filtration(item, "wrong", curator)
    assert refused.value.status == 409 and pool_record(proposed[0]).stage == stages.FILTERED


# --- The noise report --------------------------------------------------------------------------------------

def test_the_noise_report_counts_per_dimension_against_hand_computed_values(
        curator, scripted, django_capture_on_commit_callbacks):
    social, partial = make_video("s1"), make_video("p1", dimension=OTHER_DIMENSION, caption=OTHER_CAPTION)
    scripted.REPLIES[CAPTION] = json.dumps(PAIRS + [PAIRS[0]])  # 4 pairs, the third flagged
    egg = [{"question": f"What happens to the egg {n}?", "answer": "It is cracked.", "question_kind": "reasoning"}
           for n in range(5)]
    scripted.REPLIES[OTHER_CAPTION] = json.dumps(egg + [{"question": "Why?"}])  # 5 pairs and a malformed record
    pset = generate([social, partial], curator, django_capture_on_commit_callbacks)
    mine = list(pset.proposals.filter(source_key=f"cvrr:{social.pk}:qa").order_by("record_index"))
    theirs = list(pset.proposals.filter(source_key=f"cvrr:{partial.pk}:qa", status="ok").order_by("record_index"))
    # social context: kept 1, fixed 1 (answer in the question), removed 1 (unrelated), 1 undecided
    proposals.decide(mine[0], curator, "accept")
    proposals.decide(mine[2], curator, "correct", fields={"question": "What does the girl do?"},
                     criterion="answer_in_question")
    proposals.decide(mine[1], curator, "reject", criterion="unrelated")
    # partial actions: kept 2, removed 3 (two not answerable, one first kept then removed as unrelated)
    proposals.decide(theirs[0], curator, "accept")
    proposals.decide(theirs[1], curator, "accept")
    proposals.decide(theirs[2], curator, "reject", criterion="not_answerable")
    proposals.decide(theirs[3], curator, "reject", criterion="not_answerable")
    proposals.decide(theirs[4], curator, "accept")
    proposals.decide(theirs[4], curator, "reject", criterion="unrelated")

    report = noise_report()
    rows = {row["dimension"]: row for row in report["dimensions"]}
    assert [row["dimension"] for row in report["dimensions"]] == [OTHER_DIMENSION, DIMENSION]  # the paper's order
    social_row, partial_row, total = rows[DIMENSION], rows[OTHER_DIMENSION], report["total"]
    assert {k: social_row[k] for k in ("proposed", "kept", "fixed", "removed", "undecided", "decided", "flagged",
                                       "unparsed")} == {"proposed": 4, "kept": 1, "fixed": 1, "removed": 1,
                                                        "undecided": 1, "decided": 3, "flagged": 1, "unparsed": 0}
    assert social_row["removed_by_reason"] == {"unrelated": 1, "not_answerable": 0, "answer_in_question": 0,
                                               "unnamed": 0}
    assert social_row["fixed_by_reason"]["answer_in_question"] == 1
    assert (social_row["removed_share"], social_row["fixed_share"], social_row["noisy_share"]) == (
        pytest.approx(1 / 3), pytest.approx(1 / 3), pytest.approx(2 / 3))
    assert {k: partial_row[k] for k in ("proposed", "kept", "fixed", "removed", "decided", "unparsed")} == {
        "proposed": 5, "kept": 2, "fixed": 0, "removed": 3, "decided": 5, "unparsed": 1}
    assert partial_row["removed_by_reason"] == {"unrelated": 1, "not_answerable": 2, "answer_in_question": 0,
                                                "unnamed": 0}
    assert (partial_row["removed_share"], partial_row["fixed_share"]) == (pytest.approx(0.6), 0.0)
    assert {k: total[k] for k in ("proposed", "kept", "fixed", "removed", "decided", "unparsed")} == {
        "proposed": 9, "kept": 3, "fixed": 1, "removed": 4, "decided": 8, "unparsed": 1}
    assert (total["removed_share"], total["fixed_share"], total["noisy_share"]) == (0.5, 0.125, 0.625)
    assert noise_report(ProposalSet.objects.create(task_kind="cvrr_qa", backend="b", model_id="m"))["total"][
        "removed_share"] is None


def test_the_noise_page_and_the_command_show_the_report(curator_client, proposed, curator):
    proposals.decide(proposed[0], curator, "accept")
    proposals.decide(proposed[1], curator, "reject", criterion="not_answerable")
    page = curator_client.get(reverse("cvrr-qa-noise")).content.decode()
    assert f'<tr data-dimension="{DIMENSION}">' in page and "50.0%" in page
    assert "not answerable from the caption" in page
    pset = proposed[0].proposal_set
    assert curator_client.get(reverse("cvrr-qa-noise"), {"set": pset.pk}).status_code == 200
    assert curator_client.get(reverse("cvrr-qa-noise"), {"set": "x"}).status_code == 400
    assert curator_client.get(reverse("cvrr-qa-noise"), {"set": "987654"}).status_code == 404

    out = io.StringIO()
    call_command("cvrr_qa", "noise", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("dimension | proposed | kept | fixed | removed | unrelated to the dimension")
    assert f"{DIMENSION} | 3 | 1 | 0 | 1 | 0 | 1 | 0 | 0 | 50.0% | 0.0% | 50.0%" in lines
    out = io.StringIO()
    call_command("cvrr_qa", "noise", "--json", "--set", str(pset.pk), stdout=out)
    assert json.loads(out.getvalue())["total"]["removed"] == 1


# --- Real models --------------------------------------------------------------------------------------------

def test_a_tiny_causal_lm_s_output_is_marked_malformed_and_cannot_be_kept(
        tiny_models_dir, captioned, curator, django_capture_on_commit_callbacks):
    model = str(tiny_models_dir / "causal-lm")
    pset = generate([captioned], curator, django_capture_on_commit_callbacks, backend="causal_lm", model_id=model,
                    params={"max_new_tokens": 8}, backend_options={"device": "cpu"})
    [proposal] = pset.proposals.all()
    assert proposal.raw_output.strip()  # the random model said something
    assert (proposal.status, proposal.fields) == ("malformed", {})
    assert proposal.parse_error.startswith("not valid JSON")
    assert CAPTION in proposal.prompt[-1]["content"][0]["text"]
    with pytest.raises(ProposalError, match="malformed has no fields to accept"):
        proposals.decide(proposal, curator, "accept")
    with pytest.raises(CrowdError, match="None of these proposals is ready"):
        filtration.create_filtration_study([proposal], curator=curator)
    assert noise_report()["total"]["unparsed"] == 1


def test_an_openai_compatible_server_s_pairs_go_from_the_page_through_filtration_to_the_pool(
        curator_client, annotator_client, annotator, captioned, django_capture_on_commit_callbacks):
    completion = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-test",
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps(PAIRS[:2])},
                               "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 10, "completion_tokens": 40, "total_tokens": 50}}
    with openai_test_server() as server:
        register_api_model(server)
        server.script(Reply(body=completion))
        with django_capture_on_commit_callbacks(execute=True):
            response = curator_client.post(reverse("cvrr-qa-generate"), {
                "item": str(captioned.pk), "pairs": "2", "backend": "openai", "model_id": "gpt-test",
                "max_new_tokens": "300"})
        assert response.status_code == 201, response.json()
        [body] = server.bodies
    answer = response.json()
    assert Job.objects.get(pk=answer["job"]).status == "succeeded" and "kind=cvrr_qa" in answer["queue_url"]
    text = body["messages"][-1]["content"][0]["text"]
    assert CAPTION in text and "Write 2 pairs" in text and body["max_tokens"] == 300
    made = list(Proposal.objects.filter(proposal_set_id=answer["set"]).order_by("record_index"))
    assert [(p.status, p.fields, p.backend) for p in made] == [("ok", PAIRS[0], "openai"), ("ok", PAIRS[1], "openai")]

    opened = curator_client.post(reverse("cvrr-qa-filtration", kwargs={"pk": answer["set"]}))
    assert opened.status_code == 201, opened.json()
    slug = opened.json()["study"]
    for answers in ({"verdict": "accept"}, {"verdict": "reject", "reason": "not_answerable"}):
        claim = assignment.claim_next(filtration.studies().get(slug=slug), annotator)
        submitted = annotator_client.post(reverse("api-claim-submit", kwargs={"pk": claim.pk}), {"data": answers},
                                          content_type="application/json")
        assert submitted.status_code in (200, 201), submitted.content
    console = curator_client.get(reverse("cvrr-qa")).content.decode()
    assert f'data-study="{slug}"' in console and '<td data-role="waiting">2</td>' in console
    recorded = curator_client.post(reverse("cvrr-qa-record", kwargs={"slug": slug}))
    assert recorded.status_code == 200 and recorded.json()["message"].startswith("2 decision(s) recorded")
    [record] = qa_pool.records()
    assert record.item.payload["question"] == PAIRS[0]["question"]
    assert record.working["source"]["model_id"] == "gpt-test" and record.author == annotator


# --- The generic pieces: optional choices, named reasons, review rounds ----------------------------------

def test_an_optional_choice_left_open_is_no_answer_and_a_required_one_must_be_chosen():
    field = {"name": "why", "type": "single_choice", "options": ["a", "b"]}
    assert forms.validate({"fields": [{**field, "required": False}]}, {}, {}) == {}
    assert forms.validate({"fields": [{**field, "required": False}]}, {}, {"why": "b"}) == {"why": "b"}
    with pytest.raises(InvalidSubmission):
        forms.validate({"fields": [{**field, "required": False}]}, {}, {"why": "c"})
    with pytest.raises(InvalidSubmission):
        forms.validate({"fields": [field]}, {}, {})


def test_a_kind_without_reasons_refuses_a_named_one(generic_proposal, curator):
    with pytest.raises(ProposalError, match="names no reasons"):
        proposals.decide(generic_proposal, curator, "reject", reason="Bad.", criterion="unrelated")
    decision = proposals.decide(generic_proposal, curator, "reject", reason="Bad.")
    assert decision.criterion == ""


@pytest.fixture
def generic_proposal(db):
    pset = proposals.create_proposal_set("caption", [{"inputs": {"media": {"type": "video", "path": "/x.mp4"}}}],
                                         backend="openai", model_id="m")
    proposal = pset.proposals.get()
    Proposal.objects.filter(pk=proposal.pk).update(status="ok", fields={"caption": "A road."})
    proposal.refresh_from_db()
    return proposal


def test_the_latest_review_round_settles_and_a_direct_decision_settles_its_own_round(proposed, curator):
    first = proposed[0]
    one, two = make_user("round-1", ANNOTATOR), make_user("round-2", ANNOTATOR)
    proposals.decide(first, one, "accept", origin="review", study_slug="s", review_item_id=1)
    proposals.decide(first, two, "reject", criterion="unrelated", origin="review", study_slug="s", review_item_id=1)
    first.refresh_from_db()
    assert first.outcome == "disputed"  # one round, two reviewers who disagree
    proposals.decide(first, curator, "accept")
    first.refresh_from_db()
    assert first.outcome == "accepted"  # the curator settles it
    # a late answer of the same round does not overturn the curator
    proposals.decide(first, make_user("round-3", ANNOTATOR), "reject", criterion="unrelated", origin="review",
                     study_slug="s", review_item_id=1)
    first.refresh_from_db()
    assert first.outcome == "accepted"
    # a new round (the pair sent back and reviewed again) settles it again
    proposals.decide(first, one, "reject", criterion="not_answerable", origin="review", study_slug="s",
                     review_item_id=2)
    first.refresh_from_db()
    assert first.outcome == "rejected" and pool_record(first) is None


# --- Pages, permissions, bad input -----------------------------------------------------------------------

def test_the_console_lists_captioned_videos_sets_and_returned_pairs(curator_client, proposed, captioned, curator):
    proposals.decide(proposed[0], curator, "accept")
    filtration.return_to_filtration(pool_record(proposed[0]).item, "Wrong answer.", curator)
    page = curator_client.get(reverse("cvrr-qa")).content.decode()
    assert f'<tr data-item-id="{captioned.pk}">' in page
    assert f'data-set-id="{proposed[0].proposal_set_id}"' in page
    assert "Wrong answer." in page and filtration.RETURNS_NAME in page
    hub = curator_client.get(reverse("cvrr-curation")).content.decode()  # linked from the CVRR-ES hub
    assert reverse("cvrr-qa") in hub and reverse("cvrr-qa-noise") in hub


def test_the_pages_are_for_curators(client, role_users, captioned):
    for role, user in role_users.items():
        status = 200 if role in ("curator", "admin") else 403
        assert logged_in_client(user).get(reverse("cvrr-qa")).status_code == status, role
        assert logged_in_client(user).get(reverse("cvrr-qa-noise")).status_code == status, role
    assert client.get(reverse("cvrr-qa")).status_code == 302
    annotator = logged_in_client(role_users["annotator"])
    assert annotator.post(reverse("cvrr-qa-generate"), {"item": str(captioned.pk)}).status_code == 403


@pytest.mark.parametrize(("data", "message"), [
    ({}, "Choose at least one captioned video"),
    ({"item": "abc"}, "Videos are chosen by their item numbers"),
    ({"item": "987654", "backend": "caption_script", "model_id": "m"}, "No captioned CVRR-ES video"),
    ({"item": "CAPTIONED", "backend": "caption_script", "model_id": "m", "pairs": "0"}, "1 to 30 pairs"),
    ({"item": "CAPTIONED", "backend": "caption_script", "model_id": "m", "batch_size": "x"}, "Batch size"),
    ({"item": "CAPTIONED", "backend": "nope", "model_id": "m"}, "backend"),
])
def test_the_generate_endpoint_answers_bad_input_with_a_400_and_creates_nothing(curator_client, captioned, scripted,
                                                                               data, message):
    data = {key: str(captioned.pk) if value == "CAPTIONED" else value for key, value in data.items()}
    response = curator_client.post(reverse("cvrr-qa-generate"), data)
    assert response.status_code == 400 and message in response.json()["error"]
    assert not ProposalSet.objects.exists() and not Job.objects.filter(kind__startswith="make_proposals").exists()


def test_the_filtration_record_and_return_endpoints_refuse_bad_input(curator_client, proposed, curator):
    assert curator_client.post(reverse("cvrr-qa-filtration", kwargs={"pk": 987654})).status_code == 404
    pset = proposed[0].proposal_set
    assert curator_client.post(reverse("cvrr-qa-filtration", kwargs={"pk": pset.pk}),
                               {"reviewers": "0"}).status_code == 400
    assert curator_client.post(reverse("cvrr-qa-filtration", kwargs={"pk": pset.pk})).status_code == 201
    again = curator_client.post(reverse("cvrr-qa-filtration", kwargs={"pk": pset.pk}))
    assert again.status_code == 400 and "None of these proposals is ready" in again.json()["error"]
    assert curator_client.post(reverse("cvrr-qa-record", kwargs={"slug": "nope"})).status_code == 404
    plain = create_study("plain", form={"fields": [{"name": "q", "type": "free_text"}]})
    refused = curator_client.post(reverse("cvrr-qa-record", kwargs={"slug": plain.slug}))
    assert refused.status_code == 400 and "not a CVRR-ES filtration study" in refused.json()["error"]
    assert curator_client.post(reverse("cvrr-qa-return", kwargs={"item_id": 987654}),
                               {"reason": "x"}).status_code == 404
    proposals.decide(proposed[0], curator, "accept")
    item = pool_record(proposed[0]).item
    missing = curator_client.post(reverse("cvrr-qa-return", kwargs={"item_id": item.pk}), {"reason": " "})
    assert missing.status_code == 400 and pool_record(proposed[0]).stage == stages.FILTERED
    sent = curator_client.post(reverse("cvrr-qa-return", kwargs={"item_id": item.pk}), {"reason": "Wrong."})
    assert sent.status_code == 200 and pool_record(proposed[0]).stage == stages.RETURNED


# --- The command line -------------------------------------------------------------------------------------

def test_the_command_lists_generates_opens_records_and_returns(captioned, curator, annotator, scripted,
                                                             django_capture_on_commit_callbacks):
    out = io.StringIO()
    call_command("cvrr_qa", "videos", stdout=out)
    assert f"#{captioned.pk} {DIMENSION}/v1 [video-pool]: 0 pair(s) proposed, 0 kept" in out.getvalue()

    scripted.REPLIES[CAPTION] = json.dumps(PAIRS[:1])
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("cvrr_qa", "generate", "--items", str(captioned.pk), "--user", curator.username,
                     "--backend", "caption_script", "--model", "scripted/cli", "--pairs", "1", stdout=out)
    pset = ProposalSet.objects.get()
    assert f"Proposal set {pset.pk} (1 video(s)): job {pset.job_id} queued" in out.getvalue()
    out = io.StringIO()
    call_command("cvrr_qa", "filtration", "--set", str(pset.pk), "--user", curator.username, stdout=out)
    study = filtration.studies().get()
    assert f"Study {study.slug}: 1 pair(s) to filter, 0 left out" in out.getvalue()
    filter_pair(study, annotator, {"verdict": "accept"})
    out = io.StringIO()
    call_command("cvrr_qa", "record", "--study", study.slug, "--user", curator.username, stdout=out)
    assert out.getvalue().startswith("1 decision(s) recorded")
    [record] = qa_pool.records()
    out = io.StringIO()
    call_command("cvrr_qa", "videos", stdout=out)
    assert f"#{captioned.pk} {DIMENSION}/v1 [video-pool]: 1 pair(s) proposed, 1 kept" in out.getvalue()
    out = io.StringIO()
    call_command("cvrr_qa", "return", "--item", str(record.item_id), "--reason", "wrong", "--user",
                 curator.username, stdout=out)
    assert "sent back to filtration" in out.getvalue()
    assert qa_pool.records().get().stage == stages.RETURNED

    with pytest.raises(CommandError, match="No captioned CVRR-ES video under curation with id 987654"):
        call_command("cvrr_qa", "generate", "--items", "987654", "--user", curator.username,
                     "--backend", "caption_script", "--model", "m")
    with pytest.raises(CommandError, match="is no curator or admin"):
        call_command("cvrr_qa", "filtration", "--set", str(pset.pk), "--user", annotator.username)
    with pytest.raises(CommandError, match="No CVRR-ES QA proposal set 987654"):
        call_command("cvrr_qa", "noise", "--set", "987654")
