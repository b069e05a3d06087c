"""Model proposals for curation: strict parsing, the batched proposal job, review studies and decisions.

The job runs through the real backend registry: on the tiny causal LM (whose random output must be
recorded as it came and never turned into fields it does not hold), and on `ScriptedBackend`, a
backend defined here whose outputs the tests choose, to reach well-formed, malformed, empty and
failed outputs on purpose.
"""

import io

import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.urls import reverse

from annotation.crowd import assignment, forms, proposal_review, review, submissions
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study, StudyItem
from config import state
from config.models import StateChange
from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER
from generation import jobs, proposals
from generation.backends import registry
from generation.backends.base import ChatRequest, ChatResult, GenerationParams, ImagePart
from generation.models import Job, Proposal, ProposalDecision, ProposalSet
from generation.proposals import ProposalError, ProposalField, ProposalTask, chat
from tests.conftest import logged_in_client, make_user

pytestmark = pytest.mark.django_db

# --- Task kinds of these tests ------------------------------------------------------------------

QA_PAIRS = proposals.register(ProposalTask(
    name="test_qa_pairs", label="QA pairs from a caption", many=True, required_inputs=("caption",),
    fields=(ProposalField("question"), ProposalField("answer"),
            ProposalField("kind", type="choice", choices=("reasoning", "robustness"))),
    build_prompt=lambda inputs, options: chat([f"Caption: {inputs['caption']}\nPropose QA pairs as a JSON list."]),
), replace=True)

FACT = proposals.register(ProposalTask(
    name="test_fact", label="A fact with a label", required_inputs=("caption",),
    fields=(ProposalField("statement", single_line=True), ProposalField("label", type="boolean"),
            ProposalField("objects", type="integer")),
    build_prompt=lambda inputs, options: chat([f"Caption: {inputs['caption']}\nState one fact as JSON."]),
), replace=True)


class ScriptedBackend:
    """A backend whose answer to a prompt is `REPLIES[caption]` (a text, a list of n texts, or an
    `Exception` for a failed request); it records every call and the job progress it saw."""

    name = "scripted"
    REPLIES: dict = {}
    calls: list = []
    progress_seen: list = []
    on_call = None  # called with the call number before answering

    def __init__(self, model_id: str, revision: str = "", **options):
        self.model_id, self.revision, self.options = model_id, revision or "rev-1", options

    def generate(self, requests: list[ChatRequest]) -> list[ChatResult]:
        type(self).calls.append(requests)
        type(self).progress_seen.append(Job.objects.order_by("-pk").values_list("progress", flat=True).first())
        if type(self).on_call:
            type(self).on_call(len(type(self).calls))
        results = []
        for request in requests:
            text = request.messages[-1].parts[-1].text
            caption = text.split("\n")[0].removeprefix("Caption: ")
            reply = type(self).REPLIES[caption]
            if isinstance(reply, Exception):
                results.append(ChatResult(texts=[], error=str(reply), latency_s=0.01))
            else:
                results.append(ChatResult(texts=reply if isinstance(reply, list) else [reply], latency_s=0.01))
        return results

    def score_logprob(self, texts, *, prefix=""):
        raise NotImplementedError


def use_scripted_backend(monkeypatch) -> type[ScriptedBackend]:
    """Register `ScriptedBackend` as the `scripted` backend for one test, with no replies or calls yet."""
    monkeypatch.setitem(registry.LOADERS, "scripted", ("tests.generation.test_proposals", "ScriptedBackend"))
    monkeypatch.setattr(ScriptedBackend, "REPLIES", {})
    monkeypatch.setattr(ScriptedBackend, "calls", [])
    monkeypatch.setattr(ScriptedBackend, "progress_seen", [])
    monkeypatch.setattr(ScriptedBackend, "on_call", None)
    return ScriptedBackend


@pytest.fixture
def scripted(monkeypatch):
    return use_scripted_backend(monkeypatch)


def run_set(proposal_set, user=None, capture=None) -> Job:
    """Start generation and run the job as a worker would (Celery is eager in tests)."""
    with capture(execute=True):
        job = proposals.start_generation(proposal_set, user=user)
    job.refresh_from_db()
    return job


def scripted_set(scripted, replies: dict, *, kind="test_qa_pairs", batch_size=2, user=None, params=None):
    scripted.REPLIES.update(replies)
    entries = [{"key": f"video-{n}", "inputs": {"caption": caption}} for n, caption in enumerate(replies)]
    return proposals.create_proposal_set(kind, entries, backend="scripted", model_id="scripted/model",
                                         batch_size=batch_size, user=user, params=params or {"max_new_tokens": 64})


GOOD_PAIRS = ('[{"question": "What does the man hold?", "answer": "A red umbrella.", "kind": "reasoning"},'
              ' {"question": "Why is the dog flying?", "answer": "The dog is not flying.", "kind": "Robustness"}]')


# --- Strict parsing -----------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "fields"), [
    ('{"statement": "Two cups stand on a table.", "label": true, "objects": 2}',
     {"statement": "Two cups stand on a table.", "label": True, "objects": 2}),
    ('```json\n{"statement": " A cat sleeps. ", "label": false, "objects": 1}\n```',
     {"statement": "A cat sleeps.", "label": False, "objects": 1}),
])
def test_well_formed_output_parses_to_exact_fields(raw, fields):
    [parsed] = FACT.parse(raw)
    assert (parsed.status, parsed.fields, parsed.error) == ("ok", fields, "")


@pytest.mark.parametrize(("raw", "reason"), [
    ('Sure! {"statement": "A cat.", "label": true, "objects": 1}', "not valid JSON"),
    ('{"statement": "A cat.", "label": true, "objects": 1} Hope this helps', "not valid JSON"),
    ('{"statement": "A cat.", "label": true}', "missing objects"),
    ('{"statement": "A cat.", "label": true, "objects": 1, "confidence": 0.9}', "unexpected confidence"),
    ('{"statement": "A cat.", "label": "true", "objects": 1}', "'label' must be true or false, not a string"),
    ('{"statement": "A cat.", "label": true, "objects": 1.0}', "'objects' must be an integer"),
    ('{"statement": "A cat.", "label": true, "objects": true}', "'objects' must be an integer, not a boolean"),
    ('{"statement": "A cat.\\nA dog.", "label": true, "objects": 2}', "must be a single line"),
    ('{"statement": "   ", "label": true, "objects": 0}', "'statement' is empty"),
    ('["A cat."]', "expected a JSON object"),
    ("```\nnot json\n```", "not valid JSON"),
])
def test_malformed_output_is_marked_with_its_reason_and_no_fields(raw, reason):
    [parsed] = FACT.parse(raw)
    assert parsed.status == "malformed"
    assert parsed.fields == {}
    assert reason in parsed.error


@pytest.mark.parametrize("raw", ["", "   \n\t", "```json\n```", "```json\n  \n```"])
def test_empty_output_is_empty(raw):
    [parsed] = FACT.parse(raw)
    assert (parsed.status, parsed.fields) == ("empty", {})
    assert parsed.error


def test_a_list_kind_parses_each_record_on_its_own():
    records = QA_PAIRS.parse('[{"question": "Q1?", "answer": "A1.", "kind": "REASONING"},'
                             ' {"question": "Q2?", "kind": "robustness"},'
                             ' {"question": "Q3?", "answer": "A3.", "kind": "trick"}]')
    assert [r.status for r in records] == ["ok", "malformed", "malformed"]
    assert records[0].fields == {"question": "Q1?", "answer": "A1.", "kind": "reasoning"}  # canonical spelling
    assert records[1].error == "record 2 of 3: missing answer"
    assert "record 3 of 3" in records[2].error and "must be one of reasoning, robustness" in records[2].error
    [not_a_list] = QA_PAIRS.parse('{"question": "Q?", "answer": "A.", "kind": "reasoning"}')
    assert (not_a_list.status, not_a_list.error) == ("malformed", "expected a JSON list of objects, got an object")
    [nothing] = QA_PAIRS.parse("[]")
    assert nothing.status == "empty"


def test_text_kinds_take_the_whole_output_strictly():
    assert proposals.STATEMENT.parse("  The man holds a red umbrella.  ")[0].fields == {
        "statement": "The man holds a red umbrella."}
    two_lines = proposals.STATEMENT.parse("The man holds an umbrella.\nIt is red.")[0]
    assert (two_lines.status, two_lines.fields) == ("malformed", {})
    assert proposals.STATEMENT.parse("\n")[0].status == "empty"
    caption = proposals.CAPTION.parse("A man walks.\nThen he runs.")[0]
    assert caption.fields == {"caption": "A man walks.\nThen he runs."}  # captions may span lines


def test_task_definitions_are_checked():
    with pytest.raises(ValueError, match="choice field needs its choices"):
        ProposalField("kind", type="choice")
    with pytest.raises(ValueError, match="exactly one field"):
        ProposalTask(name="bad", label="bad", output="text", build_prompt=lambda i, o: [],
                     fields=(ProposalField("a"), ProposalField("b")))
    with pytest.raises(ValueError, match="already registered"):
        proposals.register(QA_PAIRS)


# --- Sets ---------------------------------------------------------------------------------------

def test_a_set_checks_its_kind_inputs_backend_and_parameters(curator):
    good = [{"key": "q1", "inputs": {"question": "Is it raining?", "answer": "Yes."}}]
    with pytest.raises(ProposalError, match="Unknown proposal task"):
        proposals.create_proposal_set("no_such_kind", good, backend="causal_lm", model_id="m")
    with pytest.raises(ProposalError, match="inputs lack answer"):
        proposals.create_proposal_set("statement", [{"inputs": {"question": "Q?"}}], backend="causal_lm", model_id="m")
    with pytest.raises(ProposalError, match="Unknown backend"):
        proposals.create_proposal_set("statement", good, backend="nope", model_id="m")
    with pytest.raises(ProposalError, match="Bad generation parameters"):
        proposals.create_proposal_set("statement", good, backend="causal_lm", model_id="m", params={"beams": 4})
    with pytest.raises(ProposalError, match="top_p"):
        proposals.create_proposal_set("statement", good, backend="causal_lm", model_id="m", params={"top_p": 0})
    assert not ProposalSet.objects.exists()
    pset = proposals.create_proposal_set("statement", good, backend="causal_lm", model_id="m", user=curator,
                                         params={"max_new_tokens": 12})
    [pending] = pset.proposals.all()
    assert (pending.status, pending.source_key, pending.inputs) == ("pending", "q1", good[0]["inputs"])
    assert pset.params == {**GenerationParams().as_dict(), "max_new_tokens": 12}
    assert pset.created_by == curator


# --- The proposal job ---------------------------------------------------------------------------

def test_job_on_a_real_tiny_lm_records_exactly_what_the_model_said(tiny_models_dir, curator,
                                                                   django_capture_on_commit_callbacks):
    from generation.backends.registry import load_backend

    model = str(tiny_models_dir / "causal-lm")
    questions = [("What colour is the car?", "Red."), ("How many people are there?", "Three."),
                 ("Where is the cat?", "On the sofa."), ("Is the door open?", "No."), ("What is he eating?", "Bread.")]
    entries = [{"key": f"q{n}", "inputs": {"question": q, "answer": a}} for n, (q, a) in enumerate(questions)]
    options = {"instruction": "Riscrivi la domanda e la risposta come una sola frase.",
               "examples": [{"question": "Dove è il gatto?", "answer": "Sul divano.",
                             "statement": "Il gatto è sul divano."}]}
    pset = proposals.create_proposal_set("statement", entries, backend="causal_lm", model_id=model, batch_size=2,
                                         params={"max_new_tokens": 8}, backend_options={"device": "cpu"}, user=curator,
                                         task_options=options)
    job = run_set(pset, curator, django_capture_on_commit_callbacks)

    assert (job.kind, job.queue, job.status, job.progress) == ("make_proposals", "gpu", "succeeded", 100)
    assert job.requested_by == curator
    assert (job.result["inputs"], job.result["batches"], job.result["revision"]) == (5, 3, "local")
    assert [line.split("] ", 1)[1] for line in job.log.splitlines() if "batch " in line] == [
        "batch 1: 2 inputs (2 of 5)", "batch 2: 2 inputs (4 of 5)", "batch 3: 1 inputs (5 of 5)"]
    rows = list(pset.proposals.order_by("pk"))
    assert len(rows) == 5 and all(p.status != "pending" for p in rows)
    assert sum(job.result["proposals"].values()) == 5

    # the same requests, in the same batches, straight through the backend: the very same texts
    backend = load_backend("causal_lm", model, device="cpu")
    params = GenerationParams(max_new_tokens=8)
    expected = []
    for start in range(0, 5, 2):
        batch = [ChatRequest(messages=proposals.STATEMENT.messages(p.inputs, options), params=params)
                 for p in rows[start:start + 2]]
        expected += [result.texts[0] for result in backend.generate(batch)]
    assert [p.raw_output for p in rows] == expected
    for proposal, (question, answer) in zip(rows, questions, strict=True):
        assert (proposal.backend, proposal.model_id, proposal.revision) == ("causal_lm", model, "local")
        assert proposal.params == params.as_dict()
        assert proposal.job == job and proposal.generated_at is not None and proposal.latency_s > 0
        prompt_text = proposal.prompt[-1]["content"][0]["text"]
        assert prompt_text == (f"{options['instruction']}\n\nQuestion: Dove è il gatto?\nAnswer: Sul divano.\n"
                               f"Statement: Il gatto è sul divano.\n\nQuestion: {question}\nAnswer: {answer}\n"
                               "Statement:")
        [parsed] = proposals.STATEMENT.parse(proposal.raw_output)
        assert (proposal.status, proposal.fields, proposal.parse_error) == (parsed.status, parsed.fields, parsed.error)


def test_job_on_a_real_tiny_lm_never_guesses_fields_from_output_that_is_not_json(tiny_models_dir,
                                                                                 django_capture_on_commit_callbacks):
    entries = [{"key": "c1", "inputs": {"caption": "A man opens an umbrella in the rain."}},
               {"key": "c2", "inputs": {"caption": "A dog jumps into a lake."}}]
    pset = proposals.create_proposal_set("test_qa_pairs", entries, backend="causal_lm",
                                         model_id=str(tiny_models_dir / "causal-lm"), params={"max_new_tokens": 8},
                                         backend_options={"device": "cpu"})
    job = run_set(pset, capture=django_capture_on_commit_callbacks)
    assert job.status == "succeeded"
    rows = list(pset.proposals.all())
    assert len(rows) == 2
    for proposal in rows:
        assert proposal.raw_output.strip()  # the random model said something
        assert proposal.status == "malformed" and proposal.fields == {}
        assert proposal.parse_error.startswith("not valid JSON")


def test_job_batches_reports_progress_and_records_every_outcome(scripted, curator, django_capture_on_commit_callbacks):
    replies = {
        "A man with an umbrella.": GOOD_PAIRS,
        "A dog in a lake.": '[{"question": "Q?", "answer": "A.", "kind": "reasoning"}, {"question": "Only Q"}]',
        "A child on a bike.": "Here are some questions: what is the child doing?",
        "An empty street.": "   ",
        "A storm at sea.": RuntimeError("HTTP 503 after 4 attempts"),
    }
    pset = scripted_set(scripted, replies, user=curator)
    job = run_set(pset, curator, django_capture_on_commit_callbacks)

    assert job.status == "succeeded" and job.progress == 100
    assert [len(call) for call in scripted.calls] == [2, 2, 1]
    assert scripted.progress_seen == [0, 40, 80]  # each batch saved and reported before the next one
    assert job.result["proposals"] == {"ok": 3, "malformed": 2, "empty": 1, "failed": 1}
    assert "5 inputs in 3 batch(es)" in job.message

    by_key = {}
    for proposal in pset.proposals.order_by("pk"):
        by_key.setdefault(proposal.source_key, []).append(proposal)
        assert (proposal.model_id, proposal.revision, proposal.backend) == ("scripted/model", "rev-1", "scripted")
    umbrella = by_key["video-0"]
    assert [(p.record_index, p.status) for p in umbrella] == [(0, "ok"), (1, "ok")]
    assert umbrella[1].fields == {"question": "Why is the dog flying?", "answer": "The dog is not flying.",
                                  "kind": "robustness"}
    assert umbrella[0].raw_output == umbrella[1].raw_output == GOOD_PAIRS
    assert umbrella[0].prompt == umbrella[1].prompt and umbrella[0].inputs == umbrella[1].inputs
    lake = by_key["video-1"]
    assert [(p.status, p.parse_error) for p in lake] == [
        ("ok", ""), ("malformed", "record 2 of 2: missing answer, kind")]
    [prose] = by_key["video-2"]
    assert (prose.status, prose.fields) == ("malformed", {}) and "not valid JSON" in prose.parse_error
    [empty] = by_key["video-3"]
    assert (empty.status, empty.raw_output) == ("empty", "   ")
    [failed] = by_key["video-4"]
    assert (failed.status, failed.parse_error, failed.raw_output) == ("failed", "HTTP 503 after 4 attempts", "")
    assert proposals.status_counts(pset)["status"] == {"ok": 3, "malformed": 2, "empty": 1, "failed": 1}
    # each pending row filled in records the move of its parse status; the further records are made as they are
    assert [history(p) for p in (umbrella[0], umbrella[1], prose, failed)] == [
        [("pending", "ok", "")], [], [("pending", "malformed", prose.parse_error)],
        [("pending", "failed", "HTTP 503 after 4 attempts")]]


def history(proposal) -> list[tuple[str, str, str]]:
    return [(change.from_state, change.to_state, change.reason) for change in StateChange.objects.of(proposal)]


def test_n_samples_become_one_proposal_each(scripted, django_capture_on_commit_callbacks):
    pset = scripted_set(scripted, {"A cat.": ['{"statement": "A cat sits.", "label": true, "objects": 1}',
                                             "no idea"]}, kind="test_fact", params={"n": 2, "temperature": 0.7})
    run_set(pset, capture=django_capture_on_commit_callbacks)
    rows = list(pset.proposals.order_by("sample_index"))
    assert [(p.sample_index, p.status) for p in rows] == [(0, "ok"), (1, "malformed")]
    assert rows[0].params["n"] == 2 and rows[0].params["temperature"] == 0.7


def test_an_input_the_kind_cannot_prompt_with_fails_alone(scripted, tmp_path, django_capture_on_commit_callbacks):
    scripted.REPLIES["Describe in detail what the image shows: the people, objects, actions and setting."] = "x"
    entries = [{"key": "gone", "inputs": {"media": {"type": "image", "path": str(tmp_path / "missing.png")}}}]
    pset = proposals.create_proposal_set("caption", entries, backend="scripted", model_id="m")
    job = run_set(pset, capture=django_capture_on_commit_callbacks)
    assert job.status == "succeeded"
    [proposal] = pset.proposals.all()
    assert proposal.status == "failed" and proposal.parse_error.startswith("could not build the prompt")
    assert scripted.calls == []  # nothing was sent to the model


def test_caption_prompt_carries_the_image_and_records_its_fingerprint(scripted, astronaut,
                                                                      django_capture_on_commit_callbacks):
    import hashlib

    prompt = "Describe in detail what the image shows: the people, objects, actions and setting."
    scripted.REPLIES[prompt] = "An astronaut in a white suit holds a helmet."
    pset = proposals.create_proposal_set(
        "caption", [{"key": "astronaut", "inputs": {"media": {"type": "image", "path": str(astronaut)}}}],
        backend="scripted", model_id="m")
    run_set(pset, capture=django_capture_on_commit_callbacks)
    [proposal] = pset.proposals.all()
    [[request]] = scripted.calls
    image_part = request.messages[-1].parts[0]
    assert isinstance(image_part, ImagePart) and image_part.image.size == (512, 512)
    digest = hashlib.sha256(astronaut.read_bytes()).hexdigest()
    assert proposal.prompt[-1]["content"][0] == {"type": "image", "fingerprint": f"sha256:{digest}"}
    assert proposal.fields == {"caption": "An astronaut in a white suit holds a helmet."}


def test_caption_of_a_video_segment_samples_frames_under_its_policy(scripted, bikes,
                                                                    django_capture_on_commit_callbacks):
    scripted.REPLIES["Describe in detail what the video shows: the people, objects, actions and setting."] = "Bikes."
    media = {"type": "video", "path": str(bikes), "policy": "uniform:4@64", "segment": [2, 6], "checksum": "abc"}
    pset = proposals.create_proposal_set("caption", [{"key": "pre", "inputs": {"media": media}}],
                                         backend="scripted", model_id="m")
    run_set(pset, capture=django_capture_on_commit_callbacks)
    [[request]] = scripted.calls
    video = request.messages[-1].parts[0]
    # 25 fps: [2 s, 6 s) is frames 50..149; 4 uniform frames are the centres of 4 slices of 25
    assert video.frame_indices == (62, 87, 112, 137) and max(video.frames[0].size) == 64
    [proposal] = pset.proposals.all()
    assert proposal.prompt[-1]["content"][0]["frame_indices"] == [62, 87, 112, 137]
    assert proposal.status == "ok" and proposal.fields == {"caption": "Bikes."}


def test_caption_job_on_a_real_tiny_vlm(tiny_models_dir, astronaut, django_capture_on_commit_callbacks):
    from generation.backends.registry import load_backend

    model = str(tiny_models_dir / "qwen2-vl")
    inputs = {"media": {"type": "image", "path": str(astronaut)}, "instruction": "What does this photo show?"}
    pset = proposals.create_proposal_set("caption", [{"key": "astronaut", "inputs": inputs}], backend="transformers",
                                         model_id=model, params={"max_new_tokens": 6},
                                         backend_options={"device": "cpu"})
    job = run_set(pset, capture=django_capture_on_commit_callbacks)
    assert job.status == "succeeded", job.message
    [proposal] = pset.proposals.all()
    [parsed] = proposals.CAPTION.parse(proposal.raw_output)
    assert (proposal.status, proposal.fields) == (parsed.status, parsed.fields)
    assert proposal.prompt[-1]["content"][1] == {"type": "text", "text": "What does this photo show?"}
    direct = load_backend("transformers", model, device="cpu").generate(
        [ChatRequest(messages=proposals.CAPTION.messages(inputs), params=GenerationParams(max_new_tokens=6))])
    assert proposal.raw_output == direct[0].texts[0]


def test_api_backends_run_on_the_generation_queue(scripted, monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(proposals, "API_BACKENDS", {"scripted"})
    pset = scripted_set(scripted, {"A cat.": '{"statement": "A cat.", "label": true, "objects": 1}'}, kind="test_fact")
    job = run_set(pset, capture=django_capture_on_commit_callbacks)
    assert (job.kind, job.queue, job.status) == ("make_proposals_api", "generation", "succeeded")


def test_a_cancelled_job_is_resumed_without_redoing_saved_batches(scripted, curator,
                                                                  django_capture_on_commit_callbacks):
    replies = {f"Scene {n}.": f'{{"statement": "Fact {n}.", "label": true, "objects": {n}}}' for n in range(5)}
    pset = scripted_set(scripted, replies, kind="test_fact", user=curator)

    def cancel_during_second_batch(call):
        if call == 2:
            jobs.cancel(pset.job)

    scripted.on_call = cancel_during_second_batch
    first = run_set(pset, curator, django_capture_on_commit_callbacks)
    assert first.status == "cancelled"
    assert pset.proposals.filter(status="ok").count() == 4  # the batch under way was still saved

    scripted.on_call = None
    second = run_set(pset, curator, django_capture_on_commit_callbacks)
    assert second.status == "succeeded" and second.result["inputs"] == 1
    assert [len(call) for call in scripted.calls] == [2, 2, 1]
    assert pset.proposals.count() == 5 and not pset.proposals.filter(status="pending").exists()
    assert sorted(p.fields["objects"] for p in pset.proposals.all()) == [0, 1, 2, 3, 4]
    with pytest.raises(ProposalError, match="no pending inputs"):
        proposals.start_generation(pset)


def test_one_generation_job_per_set_at_a_time(scripted, curator, django_capture_on_commit_callbacks):
    pset = scripted_set(scripted, {"A cat.": "{}"}, kind="test_fact")
    with django_capture_on_commit_callbacks(execute=False):
        queued = proposals.start_generation(pset, user=curator)
        with pytest.raises(ProposalError, match=f"Job #{queued.pk} is already making proposals"):
            proposals.start_generation(pset, user=curator)
    assert Job.objects.filter(kind="make_proposals").count() == 1


# --- Decisions ----------------------------------------------------------------------------------

@pytest.fixture
def generated(scripted, curator, django_capture_on_commit_callbacks):
    """A generated QA set: three ok pairs (two from one caption), two malformed, one empty, one failed."""
    replies = {
        "A man with an umbrella.": GOOD_PAIRS,
        "A dog in a lake.": '[{"question": "Is the dog wet?", "answer": "Yes.", "kind": "reasoning"}, {"q": 1}]',
        "A child on a bike.": "Questions: what is the child doing?",
        "An empty street.": "",
        "A storm at sea.": RuntimeError("HTTP 503"),
    }
    pset = scripted_set(scripted, replies, user=curator)
    run_set(pset, curator, django_capture_on_commit_callbacks)
    return pset


def parsed(proposal_set):
    """The parsed proposals of a set in input order: (umbrella 1, umbrella 2, lake 1) for `generated`."""
    return proposal_set.proposals.filter(status="ok").order_by("source_key", "sample_index", "record_index")


def test_direct_decisions_follow_the_rules(generated, curator, annotator):
    ok = parsed(generated)
    malformed = generated.proposals.filter(status="malformed").first()
    first, second, third = ok
    with pytest.raises(ProposalError, match="Only curators and admins"):
        proposals.decide(first, annotator, "accept")
    with pytest.raises(ProposalError, match="needs a reason"):
        proposals.decide(first, curator, "reject", reason="  ")
    with pytest.raises(ProposalError, match="no fields to accept"):
        proposals.decide(malformed, curator, "accept")
    with pytest.raises(ProposalError, match="unchanged"):
        proposals.decide(first, curator, "correct", fields={"kind": "Reasoning"})
    with pytest.raises(ProposalError, match="not valid: 'kind' must be one of"):
        proposals.decide(first, curator, "correct", fields={"kind": "trick"})
    with pytest.raises(ProposalError, match="not valid: missing answer, kind"):
        proposals.decide(malformed, curator, "correct", fields={"question": "What is the child riding?"})
    assert not ProposalDecision.objects.exists()

    proposals.decide(first, curator, "accept")
    decision = proposals.decide(second, curator, "correct", fields={"answer": "Nothing is flying."})
    proposals.decide(third, curator, "reject", reason="The question gives the answer away.")
    fixed = proposals.decide(malformed, curator, "correct", fields={
        "question": "What is the child riding?", "answer": "A bike.", "kind": "reasoning"})
    for proposal in (first, second, third, malformed):
        proposal.refresh_from_db()
    assert (first.outcome, first.final_fields) == ("accepted", first.fields)
    assert second.outcome == "corrected"
    assert second.fields["answer"] == "The dog is not flying."  # the model's version is kept
    assert second.final_fields == decision.fields == {**second.fields, "answer": "Nothing is flying."}
    assert (third.outcome, third.final_fields) == ("rejected", None)
    assert (malformed.outcome, malformed.fields, malformed.final_fields) == ("corrected", {}, fixed.fields)
    assert all(d.decided_by == curator and d.origin == "direct" and d.decided_at
               for d in ProposalDecision.objects.all())


def test_an_outcome_moves_through_its_declared_transitions_with_history(generated, curator):
    first = parsed(generated)[0]
    proposals.decide(first, curator, "accept")
    proposals.decide(first, curator, "reject", reason="On a second look the answer is wrong.")
    first.refresh_from_db()
    assert first.outcome == "rejected" and first.final_fields is None
    changes = list(state.history(first, "outcome").values_list("from_state", "to_state", "actor", "reason"))
    assert changes == [("undecided", "accepted", curator.pk, "Curator, directly: accept"),
                       ("accepted", "rejected", curator.pk, "Curator, directly: reject")]
    assert not Proposal.STATES.allows("accepted", "undecided")  # a decision is never taken back to none


def test_the_database_guards_decisions(generated, curator):
    proposal = generated.proposals.filter(status="ok").first()
    with pytest.raises(IntegrityError), transaction.atomic():
        ProposalDecision.objects.create(proposal=proposal, verdict="reject", reason="", decided_by=curator,
                                        decided_at=proposal.created_at)
    with pytest.raises(IntegrityError), transaction.atomic():
        ProposalDecision.objects.create(proposal=proposal, verdict="correct", decided_by=curator,
                                        decided_at=proposal.created_at)
    with pytest.raises(IntegrityError), transaction.atomic():
        Proposal.objects.filter(pk=proposal.pk).update(outcome="accepted", final_fields=None)
    decision = proposals.decide(proposal, curator, "accept")
    decision.reason = "changed my mind"
    with pytest.raises(PermissionError):
        decision.save()
    with pytest.raises(PermissionError):
        decision.delete()


# --- Review studies -----------------------------------------------------------------------------

def test_only_curators_and_admins_create_review_studies(generated, annotator, researcher, admin_user):
    for user in (annotator, researcher):
        with pytest.raises(PermissionDenied):
            proposal_review.create_review_study(generated.proposals.all(), curator=user, name="Review")
    assert not Study.objects.exists()
    made = proposal_review.create_review_study(generated.proposals.all(), curator=admin_user, name="Review")
    assert made.study.created_by == admin_user


def test_review_study_holds_only_parsed_proposals(generated, curator):
    made = proposal_review.create_review_study(generated.proposals.all(), curator=curator, name="QA review",
                                               k=2)
    study = made.study
    ok = list(parsed(generated))
    assert {item.proposal for item in StudyItem.objects.filter(study=study)} == set(ok)
    unparsed = generated.proposals.exclude(status="ok")
    assert set(made.excluded) == {p.pk for p in unparsed}
    assert {made.excluded[p.pk].split(":")[0] for p in unparsed} == {
        "output malformed", "output empty", "output failed"}
    assert (study.state, study.annotators_per_item, study.slug) == ("open", 2, "qa-review")
    assert forms.validate_schema(study.form_schema) == []
    item = StudyItem.objects.get(study=study, proposal=ok[1])
    assert item.payload == {"task": "QA pairs from a caption", "input_caption": "A man with an umbrella.",
                            "proposed_question": "Why is the dog flying?", "proposed_answer": "The dog is not flying.",
                            "proposed_kind": "robustness"}
    assert item.open_slots == 2 and item.external_id == f"proposal-{ok[1].pk}"

    with pytest.raises(CrowdError, match="None of these proposals is ready") as refused:
        proposal_review.create_review_study(generated.proposals.all(), curator=curator, name="QA review again")
    assert all(reason.startswith(("already under review in qa-review", "output"))
               for reason in refused.value.details.values())


def test_review_item_shows_the_library_image_and_hides_media_specs(scripted, curator, image, astronaut,
                                                                   django_capture_on_commit_callbacks):
    prompt = "Describe in detail what the image shows: the people, objects, actions and setting."
    scripted.REPLIES[prompt] = "An astronaut."
    inputs = {"media": {"type": "image", "path": str(astronaut)}, "image_id": image.pk}
    pset = proposals.create_proposal_set("caption", [{"inputs": inputs}], backend="scripted", model_id="m")
    run_set(pset, capture=django_capture_on_commit_callbacks)
    made = proposal_review.create_review_study(pset.proposals.all(), curator=curator, name="Captions")
    [item] = made.items
    assert item.image == image
    assert item.payload == {"task": "Caption of an image or video", "input_image_id": image.pk,
                            "proposed_caption": "An astronaut."}


def submit_review(study, worker, answers):
    claim = assignment.claim_next(study, worker)
    submission, created, _ = submissions.submit(claim, worker, answers)
    assert created
    return claim.item.proposal, submission


def test_reviewers_answers_become_decisions_with_the_person_and_time(generated, curator):
    # items are handed out in the order given: umbrella 1, umbrella 2 (a robustness pair), lake 1
    made = proposal_review.create_review_study(list(parsed(generated)), curator=curator, name="QA")
    study = made.study
    workers = [make_user(f"reviewer{n}", ANNOTATOR) for n in range(4)]
    accepted, accept_sub = submit_review(study, workers[0], {"verdict": "accept"})
    corrected, correct_sub = submit_review(study, workers[1], {
        "verdict": "correct", "verdict_explanation": "wrong kind", "corrected_kind": " Reasoning ",
        "corrected_answer": "Nobody flies."})
    no_reason, bad_sub = submit_review(study, workers[2], {"verdict": "reject"})

    report = proposal_review.apply_review_submissions(study, user=curator)
    assert len(report["applied"]) == 2 and report["invalid"] == {bad_sub.pk: "a rejection needs a reason"}
    for proposal in (accepted, corrected, no_reason):
        proposal.refresh_from_db()
    [accept] = accepted.decisions.all()
    assert (accept.verdict, accept.decided_by, accept.decided_at, accept.origin, accept.study_slug,
            accept.submission_id) == ("accept", workers[0], accept_sub.submitted_at, "review", "qa", accept_sub.pk)
    assert (accepted.outcome, accepted.final_fields) == ("accepted", accepted.fields)
    [correction] = corrected.decisions.all()
    assert correction.decided_by == workers[1] and correction.reason == "wrong kind"
    assert corrected.fields["kind"] == "robustness"  # the original stays
    assert corrected.final_fields == correction.fields == {**corrected.fields, "kind": "reasoning",
                                                            "answer": "Nobody flies."}
    assert (no_reason.outcome, no_reason.decisions.count()) == ("undecided", 0)

    again = proposal_review.apply_review_submissions(study)
    assert again["applied"] == [] and again["already"] == 2 and ProposalDecision.objects.count() == 2

    # the curator rejects the unusable submission; its place goes to another reviewer, who decides
    review.reject(bad_sub, curator, reason="Say why you reject it.")
    _, redo = submit_review(study, workers[3], {"verdict": "reject", "verdict_explanation": "Off topic."})
    final = proposal_review.apply_review_submissions(study)
    assert final["skipped"] == [bad_sub.pk] and len(final["applied"]) == 1
    no_reason.refresh_from_db()
    assert no_reason.outcome == "rejected"
    assert no_reason.decisions.get().decided_by == workers[3]

    with pytest.raises(PermissionDenied):
        proposal_review.apply_review_submissions(study, user=workers[0])


@pytest.mark.parametrize(("answers", "reason"), [
    ({"verdict": "correct"}, "no corrected field"),
    ({"verdict": "accept", "corrected_answer": "Something else."}, "verdict is 'accept'"),
    ({"verdict": "correct", "corrected_kind": "trick"}, "'kind' must be one of"),
    ({"verdict": "correct", "corrected_kind": "reasoning"}, "unchanged"),  # the first pair already is reasoning
])
def test_review_answers_that_make_no_valid_decision_are_reported(generated, curator, annotator, answers, reason):
    first = parsed(generated).first()
    study = proposal_review.create_review_study([first], curator=curator, name="One").study
    _, submission = submit_review(study, annotator, answers)
    report = proposal_review.apply_review_submissions(study)
    assert reason in report["invalid"][submission.pk]
    assert not ProposalDecision.objects.exists()


def test_reviewers_who_disagree_leave_a_dispute_that_a_curator_settles(generated, curator):
    first = parsed(generated).first()
    study = proposal_review.create_review_study([first], curator=curator, name="Pair", k=2).study
    one, two = make_user("rev-a", ANNOTATOR), make_user("rev-b", ANNOTATOR)
    submit_review(study, one, {"verdict": "accept"})
    proposal_review.apply_review_submissions(study)
    first.refresh_from_db()
    assert first.outcome == "accepted"  # one reviewer so far
    submit_review(study, two, {"verdict": "reject", "verdict_explanation": "The man holds nothing."})
    proposal_review.apply_review_submissions(study)
    first.refresh_from_db()
    assert (first.outcome, first.final_fields) == ("disputed", None)
    proposals.decide(first, curator, "correct", fields={"answer": "Nothing."})
    first.refresh_from_db()
    assert first.outcome == "corrected" and first.final_fields["answer"] == "Nothing."
    assert [d.origin for d in first.decisions.all()] == ["review", "review", "direct"]


def test_agreeing_reviewers_settle_the_outcome(generated, curator):
    first = parsed(generated).first()
    study = proposal_review.create_review_study([first], curator=curator, name="Agree", k=2).study
    for name in ("rev-c", "rev-d"):
        submit_review(study, make_user(name, ANNOTATOR),
                      {"verdict": "correct", "corrected_answer": "A black umbrella."})
    proposal_review.apply_review_submissions(study)
    first.refresh_from_db()
    assert first.outcome == "corrected" and first.final_fields["answer"] == "A black umbrella."
    assert first.decisions.count() == 2


# --- Admin ----------------------------------------------------------------------------------------

def test_admin_pages_and_actions_are_for_curators(generated, role_users):
    changelist = reverse("admin:generation_proposal_changelist")
    for role, user in role_users.items():
        response = logged_in_client(user).get(changelist)
        assert response.status_code == (200 if role in (CURATOR, ADMIN) else 403 if role == RESEARCHER else 302), role
    curator = role_users[CURATOR]
    client = logged_in_client(curator)
    unparsed = list(generated.proposals.exclude(status="ok").values_list("pk", flat=True))
    ok_first = parsed(generated).first()
    client.post(changelist, {"action": "reject_unparsed", "_selected_action": unparsed + [ok_first.pk]})
    assert set(ProposalDecision.objects.values_list("proposal_id", flat=True)) == set(unparsed)
    assert all(d.reason.startswith("model output ") and d.decided_by == curator
               for d in ProposalDecision.objects.all())
    client.post(changelist, {"action": "accept", "_selected_action": [ok_first.pk]})
    ok_first.refresh_from_db()
    assert ok_first.outcome == "accepted" and ok_first.decisions.get().decided_by == curator
    detail = client.get(reverse("admin:generation_proposal_change", args=[ok_first.pk]))
    assert detail.status_code == 200 and "A red umbrella." in detail.content.decode()


def test_admin_action_starts_generation(scripted, curator, django_capture_on_commit_callbacks):
    pset = scripted_set(scripted, {"A cat.": '{"statement": "A cat.", "label": true, "objects": 1}'}, kind="test_fact")
    client = logged_in_client(curator)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:generation_proposalset_changelist"),
                    {"action": "generate", "_selected_action": [pset.pk]})
    pset.refresh_from_db()
    assert pset.job.status == "succeeded" and pset.job.requested_by == curator
    assert pset.proposals.get().fields == {"statement": "A cat.", "label": True, "objects": 1}
    listing = client.get(reverse("admin:generation_proposalset_changelist")).content.decode()
    assert "1 ok | 1 undecided" in listing


def test_review_proposals_command_creates_the_study_and_applies_decisions(generated, curator, annotator):
    out = io.StringIO()
    call_command("review_proposals", "create", "--set", str(generated.pk), "--user", curator.username,
                 "--slug", "qa-cli", stdout=out)
    study = Study.objects.get(slug="qa-cli")
    assert f"Study qa-cli: {parsed(generated).count()} proposals to review" in out.getvalue()
    assert study.items.count() == parsed(generated).count()
    proposal, _ = submit_review(study, make_user("cli-reviewer", ANNOTATOR), {"verdict": "accept"})

    with pytest.raises(CommandError, match="curators and admins"):
        call_command("review_proposals", "apply", "--study", "qa-cli", "--user", annotator.username)
    out = io.StringIO()
    call_command("review_proposals", "apply", "--study", "qa-cli", "--user", curator.username, stdout=out)
    assert out.getvalue().startswith("1 decisions recorded")
    proposal.refresh_from_db()
    assert proposal.outcome == "accepted"
    with pytest.raises(CommandError, match="No proposal set 999999"):
        call_command("review_proposals", "create", "--set", "999999", "--user", curator.username)
