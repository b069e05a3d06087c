"""The C-VQA-Real grammar pass (SPEC §2 "C-VQA-Real Verification"): a text model suggests each counterfactual
question with its grammar and spelling corrected; its output is read strictly (one line `Question: …`, malformed
with the reason otherwise); flags point at suggestions that change a number, change nothing or are no question;
what a person accepts or corrects becomes the item's new question with the wording before and its provenance
kept. Jobs run through the real backend registry: on `GrammarBackend` (defined here, whose answers the tests
choose) and on the tiny causal LM (whose random output must be marked malformed)."""

import csv
import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from PIL import Image as PILImage

from annotation.benchmarks.cvqa import counterfactuals, grammar, sources
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem, BenchmarkVersion
from generation import proposals
from generation.models import Job, Proposal, ProposalSet
from generation.proposals import ProposalError
from tests.conftest import logged_in_client
from tests.registry_support import register_models
from tests.scripted_backend import ScriptedBackend, install

pytestmark = pytest.mark.django_db
TASK = grammar.TASK
SOURCES = [  # (question, answer, the counterfactual's new question, its new answer)
    ("How many dogs are in the picture?", "2", "how many dog would be in the picture if the TV was off?", "1"),
    ("How many cups are on the table?", "3", "How many cup would be on the table if 2 was broken?", "1"),
    ("How many birds are in the sky?", "4", "How many birds would be in the sky if 1 flew away?", "3"),
]
FIXES = {"how many dog ": "How many dogs ", "cup would": "cups would", "2 was": "2 were"}


@pytest.fixture
def version(tmp_path, curator):
    """A counterfactuals version with three numerical-indirect questions written by hand (stage written)."""
    folder = tmp_path / "sources"
    folder.mkdir()
    with (folder / "questions.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["image", "question", "answer", "question_id"])
        for number, (question, answer, _, _) in enumerate(SOURCES):
            PILImage.new("RGB", (32, 32), (40 * number, 90, 160)).save(folder / f"img{number}.png")
            writer.writerow([f"img{number}.png", question, answer, f"q{number}"])
    source_version = sources.import_sources(folder / "questions.csv", "sources-1").version
    for number, (_, _, new_query, new_answer) in enumerate(SOURCES):
        counterfactuals.write_indirect(curator, source_version.items.get(external_id=f"source:q{number}").pk,
                                       new_query, new_answer, presupposition="if something changed")
    return BenchmarkVersion.objects.get(benchmark__slug="cvqa", label=counterfactuals.DEFAULT_LABEL)


def item(version, number: int) -> BenchmarkItem:
    return version.items.get(external_id=f"indirect:source:q{number}")


class GrammarBackend(ScriptedBackend):
    """Fixes the grammar mistakes of `FIXES` and repeats the rest; `REPLIES[needle]` overrides it for a
    question that holds `needle`."""

    name = "cvqa_grammar_script"

    @staticmethod
    def searched(text: str) -> str:
        return text.split("\n\n")[1]

    @staticmethod
    def default(text: str) -> str:
        question = text.split("\n\n")[1].splitlines()[0].split(": ", 1)[1]
        for wrong, right in FIXES.items():
            question = question.replace(wrong, right)
        return f"Question: {question}"


@pytest.fixture
def scripted(db, monkeypatch):
    register_models("cvqa_grammar_script", "scripted/grammar", "scripted/cli", "m")  # what forms and commands pick
    return install(monkeypatch, GrammarBackend)


MODEL = {"backend": "cvqa_grammar_script", "model_id": "scripted/grammar"}


def run(capture, version, user, **kwargs) -> ProposalSet:
    with capture(execute=True):
        pset = grammar.start_grammar(version, user=user, **{**MODEL, **kwargs})
    assert Job.objects.get(pk=pset.job_id).status == Job.Status.SUCCEEDED
    return pset


def proposal_of(pset, version, number: int) -> Proposal:
    return pset.proposals.get(inputs__item_id=item(version, number).pk)


# --- The prompt and the strict reader ---------------------------------------------------------------------------

INPUTS = {"item_id": 1, "version_id": 1, "external_id": "indirect:source:q0", "query": "How many dogs are there?",
          "new_query": "How many dog would there be if 2 more came?", "new_answer": "4"}


def test_the_prompt_asks_for_grammar_only_in_one_line():
    [message] = TASK.messages(INPUTS, {"instruction": grammar.INSTRUCTION})
    text = message.parts[0].text
    assert text.startswith("Correct only the grammar and spelling of the question below.")
    assert "Do not change its meaning, any of its numbers or what it asks: its answer must stay the same." in text
    assert text.endswith("Question: How many dog would there be if 2 more came?\nIts answer: 4\n\n"
                         "Reply with exactly one line, and nothing else:\nQuestion: <the corrected question>")
    assert "How many dogs are there?" not in text  # the original question is for reviewers only
    assert TASK.shown_inputs(INPUTS) == {key: INPUTS[key] for key in ("external_id", "query", "new_query",
                                                                      "new_answer")}


def parse(raw, inputs=INPUTS):
    [parsed] = TASK.parse(raw, inputs)
    return parsed.status, parsed.fields, parsed.error


@pytest.mark.parametrize("raw", [
    "Question: How many dogs would there be if 2 more came?",
    "\n  question :  How many dogs would there be if 2 more came?  \n\n",
    "```\nQuestion: How many dogs would there be if 2 more came?\n```",
])
def test_one_question_line_parses(raw):
    assert parse(raw) == ("ok", {"question": "How many dogs would there be if 2 more came?"}, "")


@pytest.mark.parametrize(("raw", "reason"), [
    ("How many dogs would there be if 2 more came?", "the line must start with 'Question:'"),
    ("Corrected question: How many dogs would there be?", "the line must start with 'Question:', not 'Corrected"),
    ("Sure! Here it is:\nQuestion: How many dogs would there be?", "expected exactly one line ('Question: …'), got 2"),
    ("Question: How many dogs would there be?\nAnswer: 4", "expected exactly one line ('Question: …'), got 2"),
    ("Question: How many dogs?\nQuestion: How many cats?", "got 2"),
    ("Question:", "'Question' is empty"),
    ("Question:    ", "'Question' is empty"),
    ('{"question": "How many dogs would there be?"}', "the line must start with 'Question:'"),
    ("Question: " + "very " * 120 + "many?", "longer than 500 characters"),
])
def test_anything_else_is_malformed_with_its_reason_and_never_guessed(raw, reason):
    status, fields, error = parse(raw)
    assert (status, fields) == ("malformed", {}) and reason in error, error


def test_empty_output_is_empty():
    assert parse("  \n")[0] == "empty"
    assert parse("```\n\n```")[0] == "empty"


@pytest.mark.parametrize(("suggestion", "expected"), [
    ("How many dogs would there be if 2 more came?", []),
    ("How many dogs would there be if two more came?", []),  # the same number in words
    ("How many dogs would there be if 3 more came?", ["The suggestion changes a number (2 → 3)."]),
    ("How many dogs would there be if three more came?", ["The suggestion changes a number (2 → 3)."]),
    ("How many dogs would there be if more came?", ["The suggestion changes a number (2 → none)."]),
    (INPUTS["new_query"], ["No change needed: the suggestion is the current wording."]),
    ("How many dogs would there be if 2 more came.", ["The suggestion does not end with a question mark."]),
    ("How many dogs if 12 came", ["The suggestion changes a number (2 → 12).",
                                  "The suggestion does not end with a question mark."]),
])
def test_flags_and_the_word_diff_for_reviewers(suggestion, expected):
    assert TASK.flags_for({"question": suggestion}, INPUTS) == expected
    [diff] = TASK.comparisons(INPUTS, {"question": suggestion})
    assert (diff.source, diff.original, diff.value) == ("new_query", INPUTS["new_query"], suggestion)


# --- Generation and decisions ------------------------------------------------------------------------------------

def test_accepting_a_suggestion_rewrites_the_new_question_with_its_provenance(version, curator, scripted,
                                                                               django_capture_on_commit_callbacks):
    pset = run(django_capture_on_commit_callbacks, version, curator)
    made = {p.inputs["external_id"]: p for p in pset.proposals.all()}
    assert set(made) == {f"indirect:source:q{n}" for n in range(3)} and len(scripted.prompts_seen) == 3
    first = made["indirect:source:q0"]
    assert first.inputs == {"item_id": item(version, 0).pk, "version_id": version.pk,
                            "external_id": "indirect:source:q0", "new_query": SOURCES[0][2],
                            "query": SOURCES[0][0], "new_answer": "1"}
    assert first.source_key == f"cvqa:{item(version, 0).pk}:grammar"
    assert first.fields == {"question": "How many dogs would be in the picture if the TV was off?"}
    assert TASK.flags_for(made["indirect:source:q2"].fields, made["indirect:source:q2"].inputs) == [
        "No change needed: the suggestion is the current wording."]
    assert pset.task_options == {"instruction": grammar.INSTRUCTION}
    with pytest.raises(ProposalError, match="No counterfactual question of counterfactuals waits"):
        grammar.start_grammar(version, user=curator, **MODEL)  # each suggestion waits for a decision

    decision = proposals.decide(first, curator, "accept")
    accepted = item(version, 0)
    assert accepted.payload == {"kind": "real", "img_path": "img0.png", "query": SOURCES[0][0], "answer": "2",
                                "new_query": "How many dogs would be in the picture if the TV was off?",
                                "new_answer": "1", "type": "indirect"}
    working = CurationRecord.objects.get(item=accepted).working["counterfactual"]
    assert working["grammar"]["before"] == SOURCES[0][2]
    assert working["grammar"]["after"] == "How many dogs would be in the picture if the TV was off?"
    source = working["grammar"]["source"]
    assert (source["proposal"], source["decision"], source["outcome"]) == (first.pk, decision.pk, "accepted")
    assert (source["model_id"], source["decided_by"]) == ("scripted/grammar", curator.username)
    assert working["presupposition"] == "if something changed" and working["written"]["by"] == curator.username
    assert CurationRecord.objects.get(item=accepted).stage == counterfactuals.WRITTEN  # the stage stays

    # a polished question waits for no other pass; a question whose suggestion was rejected does
    proposals.decide(made["indirect:source:q2"], curator, "reject", reason="No change needed.")
    assert item(version, 2).payload["new_query"] == SOURCES[2][2]
    assert "grammar" not in CurationRecord.objects.get(item=item(version, 2)).working["counterfactual"]
    again = run(django_capture_on_commit_callbacks, version, curator)
    assert [p.inputs["external_id"] for p in again.proposals.all()] == ["indirect:source:q2"]


def test_a_correction_wins_and_a_later_rejection_puts_the_wording_back(version, curator, scripted,
                                                                        django_capture_on_commit_callbacks):
    pset = run(django_capture_on_commit_callbacks, version, curator)
    proposal = proposal_of(pset, version, 1)
    assert proposal.fields == {"question": "How many cups would be on the table if 2 were broken?"}
    mine = "How many cups would be left on the table if 2 were broken?"
    proposals.decide(proposal, curator, "correct", fields={"question": mine})
    record = CurationRecord.objects.get(item=item(version, 1))
    assert item(version, 1).payload["new_query"] == mine
    assert record.working["counterfactual"]["grammar"]["before"] == SOURCES[1][2]
    assert record.working["counterfactual"]["grammar"]["source"]["outcome"] == "corrected"
    # a later decision on the applied suggestion starts from the wording before it
    proposals.decide(proposal, curator, "accept")
    record.refresh_from_db()
    assert item(version, 1).payload["new_query"] == proposal.fields["question"]
    assert record.working["counterfactual"]["grammar"]["before"] == SOURCES[1][2]
    proposals.decide(proposal, curator, "reject", reason="It changes the meaning.")
    record.refresh_from_db()
    assert item(version, 1).payload["new_query"] == SOURCES[1][2]
    assert "grammar" not in record.working["counterfactual"]
    assert record.working["counterfactual"]["group"] == "indirect"
    with pytest.raises(ProposalError, match="single line"):
        proposals.decide(proposal, curator, "correct", fields={"question": "How many\ncups?"})
    assert item(version, 1).payload["new_query"] == SOURCES[1][2]


def test_a_rejection_changes_nothing(version, curator, scripted, django_capture_on_commit_callbacks):
    pset = run(django_capture_on_commit_callbacks, version, curator)
    before = {n: (item(version, n).payload, CurationRecord.objects.get(item=item(version, n)).working)
              for n in range(3)}
    for number in range(3):
        proposals.decide(proposal_of(pset, version, number), curator, "reject", reason="Not better.")
    assert {n: (item(version, n).payload, CurationRecord.objects.get(item=item(version, n)).working)
            for n in range(3)} == before
    assert set(pset.proposals.values_list("outcome", flat=True)) == {"rejected"}


def test_frozen_removed_and_changed_items_are_refused(version, curator, scripted,
                                                      django_capture_on_commit_callbacks):
    pset = run(django_capture_on_commit_callbacks, version, curator)
    # the new question changed since the suggestion was made
    changed = item(version, 0)
    BenchmarkItem.objects.filter(pk=changed.pk).update(payload={**changed.payload, "new_query": "How many dogs?"})
    with pytest.raises(ProposalError, match="changed since this suggestion was made"):
        proposals.decide(proposal_of(pset, version, 0), curator, "accept")
    # removed
    CurationRecord.objects.filter(item=item(version, 1)).update(stage=counterfactuals.REMOVED)
    with pytest.raises(ProposalError, match=r"was removed \(stage 'removed'\)"):
        proposals.decide(proposal_of(pset, version, 1), curator, "correct", fields={"question": "How many cups?"})
    # frozen
    BenchmarkVersion.objects.filter(pk=version.pk).update(frozen=True, checksum="0" * 64)
    with pytest.raises(ProposalError, match="is frozen"):
        proposals.decide(proposal_of(pset, version, 2), curator, "accept")
    assert not Proposal.objects.filter(proposal_set=pset).exclude(outcome="undecided").exists()
    assert item(version, 0).payload["new_query"] == "How many dogs?"
    assert [item(version, n).payload["new_query"] for n in (1, 2)] == [SOURCES[1][2], SOURCES[2][2]]
    records = CurationRecord.objects.filter(item__version=version)
    assert not any("grammar" in record.working["counterfactual"] for record in records)
    # a stale suggestion that was never applied can still be rejected (and so stops waiting)
    proposals.decide(proposal_of(pset, version, 0), curator, "reject", reason="The question changed.")
    assert item(version, 0).payload["new_query"] == "How many dogs?"


def test_a_tiny_causal_lm_s_output_is_marked_malformed_not_guessed(tiny_models_dir, version, curator,
                                                                   django_capture_on_commit_callbacks):
    pset = run(django_capture_on_commit_callbacks, version, curator, backend="causal_lm",
               model_id=str(tiny_models_dir / "causal-lm"), params={"max_new_tokens": 12},
               backend_options={"device": "cpu"})
    made = list(pset.proposals.order_by("pk"))
    assert len(made) == 3
    for proposal in made:
        assert proposal.raw_output.strip() and (proposal.status, proposal.fields) == ("malformed", {})
        assert proposal.parse_error
        assert proposal.inputs["new_query"] in proposal.prompt[-1]["content"][0]["text"]
    with pytest.raises(ProposalError, match="malformed has no fields to accept"):
        proposals.decide(made[0], curator, "accept")
    assert [item(version, n).payload["new_query"] for n in range(3)] == [s[2] for s in SOURCES]
    # a person who writes the question in a correction is the source
    target = made[0]
    proposals.decide(target, curator, "correct", fields={"question": "How many dogs would be in the picture?"})
    changed = BenchmarkItem.objects.get(pk=target.inputs["item_id"])
    assert changed.payload["new_query"] == "How many dogs would be in the picture?"
    assert changed.curation.working["counterfactual"]["grammar"]["source"]["outcome"] == "corrected"


def test_starting_is_refused_for_others_and_when_nothing_waits(version, curator, annotator, scripted):
    with pytest.raises(ProposalError, match="Only curators and admins start a grammar pass"):
        grammar.start_grammar(version, user=annotator, **MODEL)
    sources_version = BenchmarkVersion.objects.get(label="sources-1")
    with pytest.raises(ProposalError, match=f"no C-VQA counterfactuals version #{sources_version.pk}"):
        grammar.start_grammar(sources_version, user=curator, **MODEL)
    CurationRecord.objects.filter(item__version=version).update(stage=counterfactuals.REMOVED)
    with pytest.raises(ProposalError, match="No counterfactual question of counterfactuals waits"):
        grammar.start_grammar(version, user=curator, **MODEL)
    CurationRecord.objects.filter(item=item(version, 2)).update(stage=counterfactuals.VERIFIED)
    BenchmarkVersion.objects.filter(pk=version.pk).update(frozen=True, checksum="0" * 64)
    with pytest.raises(counterfactuals.CounterfactualError, match="is frozen") as refused:
        grammar.start_grammar(BenchmarkVersion.objects.get(pk=version.pk), user=curator, **MODEL)
    assert refused.value.status == 409
    assert not ProposalSet.objects.exists()


# --- Pages -------------------------------------------------------------------------------------------------------

def test_the_console_starts_a_pass_and_shows_what_was_accepted(version, curator_client, curator, scripted,
                                                               django_capture_on_commit_callbacks):
    url = reverse("cvqa-grammar-console", kwargs={"version_id": version.pk})
    page = curator_client.get(url).content.decode()
    assert "Suggest corrections (3 question(s))" in page and SOURCES[1][2] in page
    with django_capture_on_commit_callbacks(execute=True):
        response = curator_client.post(reverse("cvqa-grammar-start", kwargs={"version_id": version.pk}),
                                       {**MODEL, "max_new_tokens": "40"})
    assert response.status_code == 201, response.json()
    answer = response.json()
    assert Job.objects.get(pk=answer["job"]).status == "succeeded" and "kind=cvqa_grammar" in answer["queue_url"]
    pset = ProposalSet.objects.get(pk=answer["set"])
    assert pset.params["max_new_tokens"] == 40 and pset.proposals.count() == 3
    page = curator_client.get(url).content.decode()
    assert f'data-set-id="{pset.pk}"' in page and "Suggest corrections (0 question(s))" in page
    assert page.count(">suggestion waiting<") == 3
    queue = curator_client.get(answer["queue_url"]).content.decode()
    assert "No change needed: the suggestion is the current wording." in queue
    decided = curator_client.post(reverse("proposal-decide", kwargs={"pk": proposal_of(pset, version, 1).pk}),
                                  {"verdict": "accept"})
    assert decided.status_code == 200, decided.content
    page = curator_client.get(url).content.decode()
    assert (f"<del>{SOURCES[1][2]}</del> → <ins>How many cups would be on the table if 2 were broken?</ins>"
            in page)
    version_page = curator_client.get(reverse("version-detail", args=[version.pk])).content.decode()
    assert url in version_page
    sources_page = curator_client.get(reverse("version-detail", args=[BenchmarkVersion.objects.get(
        label="sources-1").pk])).content.decode()
    assert "/grammar/" not in sources_page


@pytest.mark.parametrize(("data", "message"), [
    ({"backend": "cvqa_grammar_script", "model_id": ""}, "Choose a model"),
    ({"backend": "nope", "model_id": "m"}, "registered with the cvqa_grammar_script backend, not 'nope'"),
    ({**MODEL, "max_new_tokens": "x"}, "Max new tokens"),
])
def test_the_start_endpoint_answers_bad_input_with_a_400_and_creates_nothing(version, curator_client, scripted,
                                                                             data, message):
    response = curator_client.post(reverse("cvqa-grammar-start", kwargs={"version_id": version.pk}), data)
    assert response.status_code == 400 and message in response.json()["error"], response.json()
    assert not ProposalSet.objects.exists()


def test_the_pages_are_for_curators(version, role_users, scripted):
    url = reverse("cvqa-grammar-console", kwargs={"version_id": version.pk})
    start = reverse("cvqa-grammar-start", kwargs={"version_id": version.pk})
    for role, user in role_users.items():
        assert logged_in_client(user).get(url).status_code == (200 if role in ("curator", "admin") else 403), role
    annotator = logged_in_client(role_users["annotator"])
    assert annotator.post(start, MODEL).status_code == 403
    curator = logged_in_client(role_users["curator"])
    sources_version = BenchmarkVersion.objects.get(label="sources-1")
    assert curator.get(reverse("cvqa-grammar-console", kwargs={"version_id": sources_version.pk})).status_code == 404
    assert curator.post(reverse("cvqa-grammar-start", kwargs={"version_id": sources_version.pk}),
                        MODEL).status_code == 404
    BenchmarkVersion.objects.filter(pk=version.pk).update(frozen=True, checksum="0" * 64)
    assert "This version is frozen" in curator.get(url).content.decode()
    refused = curator.post(start, MODEL)
    assert refused.status_code == 409 and "is frozen" in refused.json()["error"]
    assert not ProposalSet.objects.exists()


# --- The command line ----------------------------------------------------------------------------------------------

def test_the_command_starts_a_pass(version, curator, annotator, scripted, django_capture_on_commit_callbacks):
    def command(*args) -> str:
        out = io.StringIO()
        with django_capture_on_commit_callbacks(execute=True):
            call_command("cvqa_grammar", *args, stdout=out)
        return out.getvalue()

    model = ["--user", curator.username, "--backend", "cvqa_grammar_script", "--model", "scripted/cli"]
    CurationRecord.objects.filter(item=item(version, 2)).update(stage=counterfactuals.REMOVED)
    out = command("start", "--version", counterfactuals.DEFAULT_LABEL, *model, "--max-new-tokens", "30")
    pset = ProposalSet.objects.get()
    assert out.strip() == f"Proposal set {pset.pk} (2 question(s)): job {pset.job_id} queued"
    assert pset.params["max_new_tokens"] == 30 and pset.model_id == "scripted/cli" and pset.created_by == curator
    assert {p.inputs["external_id"] for p in pset.proposals.all()} == {"indirect:source:q0", "indirect:source:q1"}
    with pytest.raises(CommandError, match="is not a curator"):
        command("start", "--version", counterfactuals.DEFAULT_LABEL, "--user", annotator.username, "--backend",
                "cvqa_grammar_script", "--model", "m")
    with pytest.raises(CommandError, match="No counterfactual question of counterfactuals waits"):
        command("start", "--version", counterfactuals.DEFAULT_LABEL, *model)
    with pytest.raises(CommandError, match="There is no C-VQA counterfactuals version 'sources-1'"):
        command("start", "--version", "sources-1", *model)
    assert ProposalSet.objects.count() == 1
