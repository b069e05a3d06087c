"""C-VQA-Real counterfactuals (seeds/001 §3.1; SPEC §2 "Generation"): curators keep in-context examples per
group; a text model prompted with them and the step-by-step decomposition proposes one counterfactual per
source question; its output is read strictly (malformed, with the reason, never guessed); what a person
accepts becomes a `real` item with its image and provenance; numerical-indirect items are also written by
hand. Jobs run through the real backend registry: on `CounterfactualBackend` (defined here, whose answers
the tests choose) and on the tiny causal LM (whose random output must be marked malformed)."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from PIL import Image as PILImage

from annotation import versions
from annotation.benchmarks.cvqa import counterfactual_generation as generation
from annotation.benchmarks.cvqa import counterfactual_groups as groups
from annotation.benchmarks.cvqa import counterfactuals, sources
from annotation.curation_models import CategoryDefinition, CurationRecord
from annotation.models import BenchmarkItem, BenchmarkVersion
from generation import proposal_import, proposals
from generation.models import Job, Proposal, ProposalSet
from generation.proposals import ProposalError
from tests.conftest import logged_in_client
from tests.registry_support import register_models
from tests.scripted_backend import ScriptedBackend, install

pytestmark = pytest.mark.django_db
TASK = generation.TASK
QUESTIONS = [  # (question, answer)
    ("How many dogs are in the picture?", "2"),
    ("How many cups are on the table?", "3"),
    ("Is the door open?", "yes"),
    ("Is it raining?", "no"),
]


@pytest.fixture
def source_version(tmp_path):
    """A sources version with two numerical and two boolean questions, each with its own image."""
    folder = tmp_path / "sources"
    folder.mkdir()
    with (folder / "questions.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["image", "question", "answer", "question_id"])
        for number, (question, answer) in enumerate(QUESTIONS):
            PILImage.new("RGB", (32, 32), (40 * number, 90, 160)).save(folder / f"img{number}.png")
            writer.writerow([f"img{number}.png", question, answer, f"q{number}"])
    return sources.import_sources(folder / "questions.csv", "sources-1").version


def source(version, number: int) -> BenchmarkItem:
    return version.items.get(external_id=f"source:q{number}")


class CounterfactualBackend(ScriptedBackend):
    """Numerical prompts get "2 more" added; boolean ones the flipped answer; `REPLIES[needle]` overrides both
    for a prompt whose question holds `needle`."""

    name = "cvqa_script"

    @staticmethod
    def searched(text: str) -> str:
        return text.split("\n\n")[-2]

    @staticmethod
    def default(text: str) -> str:
        blocks = text.split("\n\n")
        question, answer = [line.split(": ", 1)[1] for line in blocks[-2].splitlines()]
        stem = question.rstrip("?")
        if "Flipped answer:" in blocks[-1]:
            flipped = "no" if answer == "yes" else "yes"
            return f"Flipped answer: {flipped}\nPresupposition: if things were different\nNew question: {stem} " \
                   "if things were different?"
        return f"Presupposition: if 2 more were added\nNew question: {stem} if 2 more were added?\n" \
               f"New answer: {int(answer) + 2}"


@pytest.fixture
def scripted(db, monkeypatch):
    register_models("cvqa_script", "scripted/counterfactuals", "scripted/cli", "m")  # what forms and commands pick
    return install(monkeypatch, CounterfactualBackend)


MODEL = {"backend": "cvqa_script", "model_id": "scripted/counterfactuals"}


def run(capture, version, user, **kwargs) -> ProposalSet:
    with capture(execute=True):
        pset = generation.start_counterfactuals(version, user=user, **{**MODEL, **kwargs})
    assert Job.objects.get(pk=pset.job_id).status == Job.Status.SUCCEEDED
    return pset


def proposal_of(pset, number: int, version) -> Proposal:
    return pset.proposals.get(inputs__item_id=source(version, number).pk)


# --- Groups and their examples -----------------------------------------------------------------------

def test_the_three_groups_are_data_with_valid_default_examples():
    rows = groups.ensure_groups()
    assert [row.key for row in rows] == ["numerical_direct", "numerical_indirect", "boolean"]
    for row in rows:
        examples = row.instructions["examples"]
        assert len(examples) >= 5 and row.instructions["instruction"] and row.instructions["decomposition"]
        group = groups.GROUP_OF_KEY[row.key]
        form = groups.form_for(row, {**groups.initial(row)})
        assert form.is_valid(), form.errors  # the defaults pass their own validation
        for example in examples:
            assert set(example) == set(groups.EXAMPLE_FIELDS)
            assert groups.check_answers(group, example["answer"], example["new_answer"]) == example["new_answer"]
    assert "flip the answer first" in rows[2].instructions["decomposition"]
    assert groups.ensure_groups()[0].pk == rows[0].pk and CategoryDefinition.objects.count() == 3


@pytest.mark.parametrize(("key", "examples", "message"), [
    ("boolean", [{"question": "Is it on?", "answer": "yes", "presupposition": "if it broke",
                  "new_question": "Would it be on if it broke?", "new_answer": "yes"}], "was not flipped"),
    ("boolean", [{"question": "Is it on?", "answer": "maybe", "presupposition": "p", "new_question": "q?",
                  "new_answer": "no"}], "must be yes or no"),
    ("numerical_direct", [{"question": "How many?", "answer": "2", "presupposition": "if one left",
                           "new_question": "How many if one left?", "new_answer": "one"}], "whole number"),
    ("numerical_indirect", [{"question": "How many?", "answer": "two", "presupposition": "p",
                             "new_question": "q?", "new_answer": "1"}], "whole number"),
    ("numerical_direct", [{"question": "How many?", "answer": "2"}], "must be an object with exactly"),
    ("numerical_direct", [{"question": "How many?", "answer": "2", "presupposition": " ", "new_question": "q?",
                           "new_answer": "1"}], "non-empty text"),
])
def test_a_group_edit_with_a_bad_example_is_refused_and_writes_nothing(curator_client, key, examples, message):
    row = groups.group_row(key)
    data = {**groups.initial(row), "examples": json.dumps(examples)}
    response = curator_client.post(reverse("cvqa-group", kwargs={"key": key}), data)
    assert response.status_code == 400 and message in response.content.decode()
    assert CategoryDefinition.objects.get(pk=row.pk).instructions == row.instructions


def test_curators_edit_a_group_s_examples_on_its_page(curator_client, curator):
    row = groups.group_row("numerical_direct")
    added = {"question": "How many apples are there?", "answer": "4", "presupposition": "if 1 apple was eaten",
             "new_question": "How many apples would there be if 1 apple was eaten?", "new_answer": "3"}
    examples = [*row.instructions["examples"], added] * 30  # curators keep up to a few hundred
    response = curator_client.post(reverse("cvqa-group", kwargs={"key": row.key}),
                                   {**groups.initial(row), "examples": json.dumps(examples)})
    assert response.status_code == 302 and response.url == reverse("cvqa-groups")
    saved = CategoryDefinition.objects.get(pk=row.pk)
    assert saved.instructions["examples"] == examples and saved.updated_by == curator
    page = curator_client.get(reverse("cvqa-groups")).content.decode()
    assert 'data-key="numerical_direct"' in page and f"{len(examples)}<br>" in page
    too_many = json.dumps([added] * (groups.MAX_EXAMPLES + 1))
    refused = curator_client.post(reverse("cvqa-group", kwargs={"key": row.key}),
                                  {**groups.initial(row), "examples": too_many})
    assert refused.status_code == 400 and "at most 250 examples" in refused.content.decode()
    assert curator_client.get(reverse("cvqa-group", kwargs={"key": "nope"})).status_code == 404


# --- Prompts -------------------------------------------------------------------------------------------

def prompt_text(inputs: dict, options: dict | None = None) -> str:
    [message] = TASK.messages(inputs, options or generation.task_options())
    return message.parts[0].text


@pytest.mark.parametrize("group", ["direct", "indirect"])
def test_a_numerical_prompt_holds_the_instruction_decomposition_and_examples_in_order(group):
    texts = groups.group_texts(group)
    text = prompt_text({"item_id": 1, "group": group, "question": "How many dogs are there?", "answer": "2"})
    assert text.startswith(texts["instruction"] + "\n\n" + texts["decomposition"])
    first = texts["examples"][0]
    assert (f"Question: {first['question']}\nAnswer: {first['answer']}\nPresupposition: {first['presupposition']}\n"
            f"New question: {first['new_question']}\nNew answer: {first['new_answer']}") in text
    assert all(example["new_question"] in text for example in texts["examples"])
    assert "Flipped answer" not in text
    assert text.endswith("Question: How many dogs are there?\nAnswer: 2\n\n"
                         "Reply with exactly these lines, in this order, and nothing else:\n"
                         "Presupposition: <the counterfactual presupposition>\nNew question: <the new question>\n"
                         "New answer: <the new answer, a whole number>")


def test_a_boolean_prompt_flips_the_answer_first_and_the_set_keeps_its_examples():
    texts = groups.group_texts("boolean")
    options = generation.task_options(max_examples=2)
    text = prompt_text({"item_id": 1, "group": "boolean", "question": "Is the door open?", "answer": "yes"}, options)
    assert texts["decomposition"] in text and "(2) flip the answer first" in text
    first = texts["examples"][0]
    assert (f"Question: {first['question']}\nAnswer: {first['answer']}\nFlipped answer: {first['new_answer']}\n"
            f"Presupposition: {first['presupposition']}\nNew question: {first['new_question']}") in text
    assert texts["examples"][2]["question"] not in text  # at most 2 examples
    assert text.endswith("Flipped answer: <yes or no, the flipped answer>\nPresupposition: "
                         "<the counterfactual presupposition>\nNew question: <the new question>")
    # a later edit of the group does not change the prompts of a set made before it
    row = groups.group_row("boolean")
    CategoryDefinition.objects.filter(pk=row.pk).update(instructions={**row.instructions, "instruction": "Edited."})
    assert prompt_text({"item_id": 1, "group": "boolean", "question": "Is it?", "answer": "no"}, options) \
        .startswith(texts["instruction"])
    assert generation.task_options()["groups"]["boolean"]["instruction"] == "Edited."


# --- The strict reader -------------------------------------------------------------------------------------

NUMERICAL = {"item_id": 1, "group": "direct", "question": "How many dogs are there?", "answer": "2"}
BOOLEAN = {"item_id": 1, "group": "boolean", "question": "Is the door open?", "answer": "yes"}
GOOD_NUMERICAL = ("Presupposition: if 2 dogs were added\nNew question: How many dogs would there be if 2 dogs were "
                  "added?\nNew answer: 4")
GOOD_BOOLEAN = ("Flipped answer: no\nPresupposition: if someone closed it\nNew question: Would the door be open if "
                "someone closed it?")


def parse(raw, inputs):
    [parsed] = TASK.parse(raw, inputs)
    return parsed.status, parsed.fields, parsed.error


@pytest.mark.parametrize(("raw", "inputs", "fields"), [
    (GOOD_NUMERICAL, NUMERICAL, {"presupposition": "if 2 dogs were added",
                                 "new_question": "How many dogs would there be if 2 dogs were added?",
                                 "new_answer": "4"}),
    ("\n" + GOOD_NUMERICAL.replace("\n", "\n\n").replace("New answer: 4", "new answer:  04") + "\n", NUMERICAL,
     {"presupposition": "if 2 dogs were added", "new_question": "How many dogs would there be if 2 dogs were added?",
      "new_answer": "4"}),
    (f"```\n{GOOD_NUMERICAL}\n```", {**NUMERICAL, "group": "indirect"}, None),
    (GOOD_BOOLEAN, BOOLEAN, {"presupposition": "if someone closed it", "new_answer": "no",
                             "new_question": "Would the door be open if someone closed it?"}),
    (GOOD_BOOLEAN.replace("no", "No", 1), BOOLEAN, None),
])
def test_outputs_in_the_group_s_format_parse(raw, inputs, fields):
    status, parsed, error = parse(raw, inputs)
    assert (status, error) == ("ok", "")
    if fields is not None:
        assert parsed == fields
    assert parsed["new_answer"] in ("4", "no")


@pytest.mark.parametrize(("raw", "inputs", "reason"), [
    (GOOD_NUMERICAL.rsplit("\n", 1)[0], NUMERICAL, "missing the line 'New answer:'"),
    ("Presupposition: if 2 dogs were added", NUMERICAL, "missing the lines 'New question:', 'New answer:'"),
    (GOOD_NUMERICAL + "\nExplanation: 2 + 2 = 4", NUMERICAL, "expected 3 lines"),
    ("Sure! Here it is:\n" + GOOD_NUMERICAL, NUMERICAL, "line 1 must start with 'Presupposition:'"),
    ("New question: How many?\nPresupposition: if\nNew answer: 4", NUMERICAL,
     "line 1 must start with 'Presupposition:'"),
    (GOOD_NUMERICAL.replace("New answer: 4", "New answer: four"), NUMERICAL, "must be a whole number, not 'four'"),
    (GOOD_NUMERICAL.replace("New answer: 4", "New answer: 4.5"), NUMERICAL, "must be a whole number, not '4.5'"),
    (GOOD_NUMERICAL.replace("New answer: 4", "New answer: -1"), NUMERICAL, "must be a whole number, not '-1'"),
    (GOOD_NUMERICAL.replace("New answer: 4", "New answer: 4 dogs"), NUMERICAL, "whole number, not '4 dogs'"),
    (GOOD_NUMERICAL.replace("New answer: 4", "New answer:"), NUMERICAL, "'New answer' is empty"),
    (GOOD_NUMERICAL, BOOLEAN, "line 1 must start with 'Flipped answer:'"),
    (GOOD_BOOLEAN, NUMERICAL, "line 1 must start with 'Presupposition:'"),
    (GOOD_BOOLEAN.replace("Flipped answer: no", "Flipped answer: maybe"), BOOLEAN,
     "must be yes or no, not 'maybe'"),
    (GOOD_BOOLEAN.replace("Flipped answer: no", "Flipped answer: yes"), BOOLEAN,
     "the flipped answer 'yes' is the original answer: the answer was not flipped"),
    (GOOD_BOOLEAN.replace("Flipped answer: no", "Flipped answer: no."), BOOLEAN, "must be yes or no, not 'no.'"),
    (GOOD_BOOLEAN, {**BOOLEAN, "group": "sideways"}, "names no counterfactual group"),
    ('{"presupposition": "p", "new_question": "q?", "new_answer": "4"}', NUMERICAL,
     "line 1 must start with 'Presupposition:'"),
])
def test_anything_else_is_malformed_with_its_reason_and_never_guessed(raw, inputs, reason):
    status, fields, error = parse(raw, inputs)
    assert (status, fields) == ("malformed", {}) and reason in error, error


def test_empty_output_is_empty_and_reviewers_see_flags_and_the_diff():
    assert parse("  \n", NUMERICAL)[0] == "empty"
    same = {"presupposition": "if nothing", "new_question": NUMERICAL["question"], "new_answer": "2"}
    assert TASK.flags_for(same, NUMERICAL) == ["The new question is the original question.",
                                               "The new answer is the original answer: the presupposition changes "
                                               "nothing."]
    assert TASK.flags_for({**same, "new_question": "How many dogs if none left"}, BOOLEAN) == [
        "The new question does not end with a question mark."]
    [diff] = TASK.comparisons(NUMERICAL, parse(GOOD_NUMERICAL, NUMERICAL)[1])
    assert diff.source == "question" and diff.original == NUMERICAL["question"]
    with pytest.raises(ValueError, match="reads_inputs"):
        proposals.ProposalTask(name="x", label="x", fields=(proposals.ProposalField("a"),),
                               build_prompt=lambda i, o: [], reads_inputs=True)


# --- Generation and acceptance -------------------------------------------------------------------------------

def test_one_proposal_per_source_question_in_its_group(source_version, curator, scripted,
                                                       django_capture_on_commit_callbacks):
    pset = run(django_capture_on_commit_callbacks, source_version, curator)
    made = {p.inputs["external_id"]: p for p in pset.proposals.all()}
    assert {key: p.inputs["group"] for key, p in made.items()} == {
        "source:q0": "direct", "source:q1": "direct", "source:q2": "boolean", "source:q3": "boolean"}
    assert all(p.status == "ok" for p in made.values()) and len(scripted.prompts_seen) == 4
    assert made["source:q1"].fields["new_answer"] == "5" and made["source:q3"].fields["new_answer"] == "yes"
    image = source(source_version, 0).media.get().image
    assert made["source:q0"].inputs["image_id"] == image.pk
    assert pset.task_options["groups"]["direct"]["examples"] == groups.group_texts("direct")["examples"]
    with pytest.raises(ProposalError, match="No source question of sources-1 waits"):
        generation.start_counterfactuals(source_version, user=curator, **MODEL)  # all wait for a decision
    proposals.decide(made["source:q0"], curator, "reject", reason="Not about the image.")
    again = run(django_capture_on_commit_callbacks, source_version, curator, numerical_group="indirect")
    [redo] = again.proposals.all()
    assert (redo.inputs["external_id"], redo.inputs["group"]) == ("source:q0", "indirect")
    assert "How many cats would be in the image if the TV was off?" in scripted.prompts_seen[-1]  # indirect examples


def test_accepting_creates_the_real_item_with_its_image_and_provenance(source_version, curator, scripted,
                                                                       django_capture_on_commit_callbacks):
    pset = run(django_capture_on_commit_callbacks, source_version, curator, target="cf-1")
    numeric, boolean = proposal_of(pset, 1, source_version), proposal_of(pset, 2, source_version)
    assert not BenchmarkVersion.objects.filter(label="cf-1").exists()  # nothing before a person decides
    decision = proposals.decide(numeric, curator, "accept")
    version = BenchmarkVersion.objects.get(benchmark__slug="cvqa", label="cf-1")
    assert not version.frozen and version.source == BenchmarkVersion.Source.CURATION
    item = version.items.get()
    assert item.external_id == "direct:source:q1"
    assert item.payload == {"kind": "real", "img_path": "img1.png", "query": "How many cups are on the table?",
                            "answer": "3", "new_query": "How many cups are on the table if 2 more were added?",
                            "new_answer": "5", "type": "direct"}
    assert item.media.get().image == source(source_version, 1).media.get().image
    record = CurationRecord.objects.get(item=item)
    assert record.stage == counterfactuals.PROPOSED and record.author == curator
    working = record.working["counterfactual"]
    assert working["source_item"] == source(source_version, 1).pk and working["group"] == "direct"
    assert working["presupposition"] == "if 2 more were added"
    assert working["source"]["proposal"] == numeric.pk and working["source"]["decision"] == decision.pk
    assert working["source"]["model_id"] == "scripted/counterfactuals" and working["source"]["decided_by"] == \
        curator.username

    # a boolean correction must still flip the answer; a later correction rewrites the item
    with pytest.raises(ProposalError, match="the answer was not flipped"):
        proposals.decide(boolean, curator, "correct", fields={"new_answer": "yes"})
    assert boolean.decisions.count() == 0 and version.items.count() == 1
    proposals.decide(boolean, curator, "correct", fields={"new_question": "Would the door be open if it was shut?"})
    flipped = version.items.get(external_id="boolean:source:q2")
    assert (flipped.payload["new_query"], flipped.payload["new_answer"], flipped.payload["type"]) == (
        "Would the door be open if it was shut?", "no", "boolean")
    proposals.decide(numeric, curator, "correct", fields={"new_answer": "6"})
    assert version.items.get(external_id="direct:source:q1").payload["new_answer"] == "6"
    record.refresh_from_db()
    assert record.working["counterfactual"]["source"]["outcome"] == "corrected"
    assert record.working["counterfactual"]["proposed"]["new_answer"] == "5"
    with pytest.raises(ProposalError, match="whole number"):
        proposals.decide(numeric, curator, "correct", fields={"new_answer": "six"})
    # a later rejection takes the item back
    proposals.decide(numeric, curator, "reject", reason="Ambiguous.")
    assert not version.items.filter(external_id="direct:source:q1").exists()
    # an unverified counterfactual is never frozen
    with pytest.raises(versions.FreezeRefused) as refused:
        versions.freeze(version)
    assert "not verified yet" in str(refused.value.messages)


def test_a_source_gets_one_counterfactual_and_a_frozen_target_is_refused(source_version, curator, scripted,
                                                                        django_capture_on_commit_callbacks):
    pset = run(django_capture_on_commit_callbacks, source_version, curator)
    proposals.decide(proposal_of(pset, 0, source_version), curator, "accept")
    item = counterfactuals.items_from([source(source_version, 0).pk])[source(source_version, 0).pk]
    extra = proposals.create_proposal_set(generation.KIND, [{"inputs": proposal_of(pset, 0, source_version).inputs}],
                                          **MODEL)
    duplicate = extra.proposals.get()
    Proposal.objects.filter(pk=duplicate.pk).update(status="ok", fields=proposal_of(pset, 0, source_version).fields)
    with pytest.raises(ProposalError, match=f"already has its counterfactual question \\({item.external_id}\\)"):
        proposals.decide(duplicate, curator, "accept")
    # the source question changed since the proposal was made
    other = source(source_version, 1)
    BenchmarkItem.objects.filter(pk=other.pk).update(payload={**other.payload, "answer": "7"})
    with pytest.raises(ProposalError, match="changed since this proposal was made"):
        proposals.decide(proposal_of(pset, 1, source_version), curator, "accept")
    BenchmarkVersion.objects.filter(label=counterfactuals.DEFAULT_LABEL).update(frozen=True, checksum="0" * 64)
    with pytest.raises(ProposalError, match="is frozen"):
        proposals.decide(proposal_of(pset, 2, source_version), curator, "accept")
    with pytest.raises(ProposalError, match="is frozen"):
        generation.start_counterfactuals(source_version, user=curator, target=counterfactuals.DEFAULT_LABEL, **MODEL)


def test_imported_outputs_are_read_against_their_inputs(source_version, curator):
    [entry] = [e for e in generation.entries(source_version) if e["inputs"]["group"] == "boolean"][:1]
    made = proposal_import.import_proposals(generation.KIND, [
        {"inputs": entry["inputs"], "source_key": entry["key"],
         "raw_output": "Flipped answer: no\nPresupposition: if it was shut\nNew question: Would it be open if shut?"},
        {"inputs": entry["inputs"], "source_key": entry["key"],
         "raw_output": "Flipped answer: yes\nPresupposition: p\nNew question: q?"}],
        user=curator, model_id="gpt-3.5 (offline)")
    good, unflipped = made.proposals.order_by("pk")
    assert good.status == "ok" and unflipped.status == "malformed" and "not flipped" in unflipped.parse_error


def test_a_tiny_causal_lm_s_output_is_marked_malformed_not_guessed(tiny_models_dir, source_version, curator,
                                                                   django_capture_on_commit_callbacks):
    pset = run(django_capture_on_commit_callbacks, source_version, curator, backend="causal_lm",
               model_id=str(tiny_models_dir / "causal-lm"), params={"max_new_tokens": 12},
               backend_options={"device": "cpu"}, max_examples=2)
    made = list(pset.proposals.order_by("pk"))
    assert len(made) == 4
    for proposal in made:
        assert proposal.raw_output.strip() and (proposal.status, proposal.fields) == ("malformed", {})
        assert proposal.parse_error
        assert proposal.inputs["question"] in proposal.prompt[-1]["content"][0]["text"]
    with pytest.raises(ProposalError, match="malformed has no fields to accept"):
        proposals.decide(made[0], curator, "accept")
    assert not BenchmarkVersion.objects.filter(label=counterfactuals.DEFAULT_LABEL).exists()
    # a person who writes every field in a correction is a source too
    target = next(p for p in made if p.inputs["group"] == "direct")
    proposals.decide(target, curator, "correct", fields={"presupposition": "if one dog left",
                                                         "new_question": "How many dogs would be there if one left?",
                                                         "new_answer": "1"})
    [item] = BenchmarkVersion.objects.get(label=counterfactuals.DEFAULT_LABEL).items.all()
    assert item.payload["new_answer"] == "1" and item.curation.working["counterfactual"]["source"]["outcome"] == \
        "corrected"


# --- Indirect items written by hand ----------------------------------------------------------------------------

def test_a_curator_writes_a_numerical_indirect_item_on_its_page(source_version, curator_client, curator):
    numeric = source(source_version, 0)
    url = reverse("cvqa-indirect-write", kwargs={"item_id": numeric.pk})
    page = curator_client.get(url).content.decode()
    assert "How many dogs are in the picture?" in page and 'id="indirect-form"' in page
    response = curator_client.post(url, {"presupposition": "if the TV was off", "target": "cf-hand",
                                         "new_query": "How many dogs would be in the picture if the TV was off?",
                                         "new_answer": "1"})
    assert response.status_code == 302
    assert response.url == reverse("cvqa-counterfactual-console", kwargs={"version_id": source_version.pk})
    item = BenchmarkVersion.objects.get(label="cf-hand").items.get()
    assert item.external_id == "indirect:source:q0"
    assert (item.payload["type"], item.payload["new_answer"], item.payload["answer"]) == ("indirect", "1", "2")
    assert item.media.get().image == numeric.media.get().image
    record = item.curation
    assert record.stage == counterfactuals.WRITTEN and record.author == curator
    assert record.working["counterfactual"]["written"]["by"] == curator.username
    assert record.working["counterfactual"]["presupposition"] == "if the TV was off"
    assert "already has its counterfactual" in curator_client.get(url).content.decode()
    again = curator_client.post(url, {"new_query": "How many?", "new_answer": "0"})
    assert again.status_code == 409 and "already has its counterfactual question" in again.content.decode()


@pytest.mark.parametrize(("number", "data", "status", "message"), [
    (2, {"new_query": "Would the door be open?", "new_answer": "1"}, 400, "indirect counterfactuals are written "
                                                                          "for numerical questions"),
    (0, {"new_query": "How many dogs if the TV was off?", "new_answer": "one"}, 400, "whole number"),
    (0, {"new_query": "  ", "new_answer": "1"}, 400, "Write the new question"),
    (0, {"new_query": "q" * 501, "new_answer": "1"}, 400, "at most 500 characters"),
    (0, {"new_query": "How many?", "new_answer": "1", "target": "sources-1"}, 400, "holds source questions"),
])
def test_a_bad_hand_written_item_is_refused_and_writes_nothing(source_version, curator_client, number, data,
                                                               status, message):
    url = reverse("cvqa-indirect-write", kwargs={"item_id": source(source_version, number).pk})
    response = curator_client.post(url, data)
    assert response.status_code == status and message in response.content.decode()
    assert not BenchmarkItem.objects.filter(payload__kind="real").exists()


def test_only_curators_write_by_hand(source_version, annotator, curator):
    with pytest.raises(counterfactuals.CounterfactualError, match="Only curators"):
        counterfactuals.write_indirect(annotator, source(source_version, 0).pk, "How many?", "1")
    with pytest.raises(counterfactuals.CounterfactualError, match="no C-VQA source question"):
        counterfactuals.write_indirect(curator, 987654, "How many?", "1")
    assert not BenchmarkItem.objects.filter(payload__kind="real").exists()


# --- Pages ---------------------------------------------------------------------------------------------------

def test_the_console_starts_a_set_and_shows_it(source_version, curator_client, curator, scripted,
                                               django_capture_on_commit_callbacks):
    url = reverse("cvqa-counterfactual-console", kwargs={"version_id": source_version.pk})
    page = curator_client.get(url).content.decode()
    assert "Propose counterfactuals (4 question(s))" in page
    assert reverse("cvqa-indirect-write", kwargs={"item_id": source(source_version, 0).pk}) in page
    assert reverse("cvqa-indirect-write", kwargs={"item_id": source(source_version, 2).pk}) not in page
    with django_capture_on_commit_callbacks(execute=True):
        start = reverse("cvqa-counterfactual-generate", kwargs={"version_id": source_version.pk})
        response = curator_client.post(start, {**MODEL, "group": "indirect", "max_examples": "3",
                                               "max_new_tokens": "60"})
    assert response.status_code == 201, response.json()
    answer = response.json()
    assert Job.objects.get(pk=answer["job"]).status == "succeeded" and "kind=cvqa_counterfactual" in answer["queue_url"]
    pset = ProposalSet.objects.get(pk=answer["set"])
    assert {p.inputs["group"] for p in pset.proposals.all()} == {"indirect", "boolean"}
    assert all(len(g["examples"]) == 3 for g in pset.task_options["groups"].values())
    page = curator_client.get(url).content.decode()
    assert f'data-set-id="{pset.pk}"' in page and "Propose counterfactuals (0 question(s))" in page
    queue = curator_client.get(answer["queue_url"]).content.decode()
    assert "How many dogs are in the picture? if 2 more were added?" not in queue  # the stem loses its "?"
    assert "How many dogs are in the picture if 2 more were added?" in queue
    image = source(source_version, 0).media.get().image
    assert reverse("media-image-file", kwargs={"pk": image.pk}) in queue  # reviewers see the image
    proposal = proposal_of(pset, 0, source_version)
    decided = curator_client.post(reverse("proposal-decide", kwargs={"pk": proposal.pk}), {"verdict": "accept"})
    assert decided.status_code == 200, decided.content
    page = curator_client.get(url).content.decode()
    assert "How many dogs are in the picture if 2 more were added? → 4" in page


@pytest.mark.parametrize(("data", "message"), [
    ({"backend": "cvqa_script", "model_id": ""}, "Choose a model"),
    ({"backend": "nope", "model_id": "m"}, "registered with the cvqa_script backend, not 'nope'"),
    ({**MODEL, "backend_options": "api_key_env=DATABASE_URL"}, "option 'api_key_env'"),
    ({**MODEL, "group": "boolean"}, "go to group direct or indirect"),
    ({**MODEL, "max_examples": "x"}, "number of examples"),
    ({**MODEL, "target": "sources-1"}, "holds source questions"),
    ({**MODEL, "target": "x" * 65}, "at most 64 characters"),
])
def test_the_generate_endpoint_answers_bad_input_with_a_400_and_creates_nothing(source_version, curator_client,
                                                                               scripted, data, message):
    response = curator_client.post(reverse("cvqa-counterfactual-generate", kwargs={"version_id": source_version.pk}),
                                   data)
    assert response.status_code == 400 and message in response.json()["error"], response.json()
    assert not ProposalSet.objects.exists()
    assert not Job.objects.filter(kind__in=(proposals.MAKE_PROPOSALS, proposals.MAKE_PROPOSALS_API)).exists()


def test_the_pages_are_for_curators_and_linked_from_the_hub(client, role_users, source_version):
    pages = [reverse("cvqa-groups"), reverse("cvqa-group", kwargs={"key": "boolean"}),
             reverse("cvqa-counterfactual-console", kwargs={"version_id": source_version.pk}),
             reverse("cvqa-indirect-write", kwargs={"item_id": source(source_version, 0).pk})]
    for role, user in role_users.items():
        status = 200 if role in ("curator", "admin") else 403
        for url in pages:
            assert logged_in_client(user).get(url).status_code == status, (role, url)
    assert client.get(pages[0]).status_code == 302
    annotator = logged_in_client(role_users["annotator"])
    assert annotator.post(reverse("cvqa-counterfactual-generate", kwargs={"version_id": source_version.pk}),
                          MODEL).status_code == 403
    assert annotator.post(pages[3], {"new_query": "How many?", "new_answer": "1"}).status_code == 403
    hub = logged_in_client(role_users["curator"]).get(reverse("cvqa-curation")).content.decode()
    assert pages[0] in hub and pages[2] in hub
    version_page = logged_in_client(role_users["curator"]).get(reverse("version-detail", args=[source_version.pk]))
    assert pages[2] in version_page.content.decode()
    real = BenchmarkVersion.objects.create(benchmark=source_version.benchmark, label="not-sources")
    curator = logged_in_client(role_users["curator"])
    assert curator.get(reverse("cvqa-counterfactual-console", kwargs={"version_id": real.pk})).status_code == 404
    assert not ProposalSet.objects.exists() and not BenchmarkItem.objects.filter(payload__kind="real").exists()


# --- The command line ------------------------------------------------------------------------------------------

def test_the_command_lists_generates_and_writes(source_version, curator, annotator, scripted,
                                               django_capture_on_commit_callbacks):
    def command(*args) -> str:
        out = io.StringIO()
        with django_capture_on_commit_callbacks(execute=True):
            call_command("cvqa_counterfactuals", *args, stdout=out)
        return out.getvalue()

    model = ["--user", curator.username, "--backend", "cvqa_script", "--model", "scripted/cli"]
    numeric = source(source_version, 0)
    out = command("write-indirect", "--item", str(numeric.pk), "--new-query", "How many dogs if the TV was off?",
                  "--new-answer", "1", "--presupposition", "if the TV was off", "--user", curator.username)
    assert out.strip().startswith("indirect:source:q0 written into counterfactuals")
    out = command("generate", "sources-1", *model, "--group", "indirect", "--examples", "1", "--max-new-tokens", "50")
    pset = ProposalSet.objects.get()
    assert out.strip() == f"Proposal set {pset.pk} (3 input(s)): job {pset.job_id} queued"
    assert pset.params["max_new_tokens"] == 50
    assert {p.inputs["external_id"]: p.inputs["group"] for p in pset.proposals.all()} == {
        "source:q1": "indirect", "source:q2": "boolean", "source:q3": "boolean"}
    lines = command("questions", "sources-1").splitlines()
    assert lines[0] == (f"#{numeric.pk} source:q0 [numerical] How many dogs are in the picture?: indirect:source:q0 "
                        "(indirect): How many dogs if the TV was off? → 1")
    assert lines[1].endswith(": proposal waiting") and lines[-1] == "4 question(s); 1 with a counterfactual"

    with pytest.raises(CommandError, match="is not a curator"):
        command("generate", "sources-1", "--user", annotator.username, "--backend", "cvqa_script", "--model", "m")
    with pytest.raises(CommandError, match="No source question of sources-1 waits"):
        command("generate", "sources-1", *model)
    with pytest.raises(CommandError, match="There is no C-VQA sources version 'nope'"):
        command("questions", "nope")
    with pytest.raises(CommandError, match="is a boolean question"):
        command("write-indirect", "--item", str(source(source_version, 2).pk), "--new-query", "q?", "--new-answer",
                "1", "--user", curator.username)
