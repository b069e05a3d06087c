"""MAIA statements (seeds/004 §3 "Statement Collection"; SPEC §5 Curation 6): a text model proposes a
question's 8 true statements in one prompt and a minimal-pair false statement per true statement; people
accept them in the proposals queue and only then do they reach the question, with their provenance; the
pairs are checked (structure and NLI contradiction) by a background job or a command; failing pairs are
edited or regenerated; questions whose pairs all pass are ready to freeze.

Jobs run through the real backend registry: on `StatementBackend` (defined here, whose answers the
tests choose), on the tiny causal LM (whose random output must be marked malformed), on the
OpenAI-compatible test server (end to end through the console) and, for the checks, on `ForcedNLI`
(defined here) and the tiny NLI model. Celery is eager in tests: a job runs when its transaction commits.
"""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.benchmarks.maia import (
    minimal_pairs,
    pool_checks,
    stages,
    statement_checks,
    statement_generation,
    statements,
)
from annotation.curation_models import CurationRecord, ItemCheck
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion
from annotation.versions import freeze
from generation import proposal_import, proposals
from generation.backends import registry
from generation.models import Job, Proposal, ProposalSet
from generation.proposals import ProposalError
from tests.conftest import logged_in_client
from tests.openai_test_server import Reply, openai_test_server
from tests.registry_support import register_api_model, register_models
from tests.scripted_backend import ScriptedBackend, install

pytestmark = pytest.mark.django_db

TRUE_TASK, FALSE_TASK = statement_generation.TRUE_TASK, statement_generation.FALSE_TASK


def question_text(q: int) -> str:
    return f"Come si sente la bambina numero {q} al parco?"


def answers_of(q: int) -> list[str]:
    return [f"Risposta {q}.{n}: è felice." for n in range(1, 9)]


def trues_of(q: int) -> list[str]:
    return [f"La bambina {q} al parco {n} è felice." for n in range(1, 9)]


def false_of(true: str) -> str:
    return true.replace("felice", "triste")


# --- Questions under curation ------------------------------------------------------------------------

@pytest.fixture
def version(db) -> BenchmarkVersion:
    return BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="curation-1")


def make_question(version, q: int, by, *, stage=stages.POOL_CHECKED, pool="pass", category="CausaleImplicita_A"):
    payload = {"kind": "question", "video": "video1", "category": category, "question": question_text(q),
               "answers": answers_of(q)}
    item = BenchmarkItem.objects.create(version=version, external_id=f"video1:{category}:{q}", payload=payload)
    CurationRecord.objects.create(item=item, stage=stage, author=by)
    if pool:
        ItemCheck.objects.create(item=item, aspect=pool_checks.ASPECT, checked_by=by,
                                 verdict=ItemCheck.Verdict.PASS if pool == "pass" else ItemCheck.Verdict.FAIL,
                                 subject={"question": payload["question"], "answers": payload["answers"]})
    return item


@pytest.fixture
def ready(version, curator):
    """A question at POOL_CHECKED whose pool passed."""
    return make_question(version, 1, curator)


def imported_version(label: str) -> BenchmarkVersion:
    """A frozen version with one question and its statements, as a release import makes it."""
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label=label)
    BenchmarkItem.objects.create(version=version, external_id="q1", payload={
        "kind": "question", "video": "video1", "category": "Sentiment_A", "question": question_text(1),
        "answers": answers_of(1), "true_statements": trues_of(1),
        "false_statements": [false_of(t) for t in trues_of(1)]})
    freeze(version)
    return version


def record_of(item) -> CurationRecord:
    return CurationRecord.objects.get(item=item)


def reload(item) -> BenchmarkItem:
    return BenchmarkItem.objects.get(pk=item.pk)


# --- A backend whose answers the tests choose ------------------------------------------------------------

class StatementBackend(ScriptedBackend):
    """True-statement prompts get the numbered `trues_of(q)` of their question; false-statement prompts get
    `false_of` their true statement; `REPLIES[needle]` overrides both for a prompt holding `needle`."""

    name = "maia_script"

    @staticmethod
    def default(text: str) -> str:
        lines = text.splitlines()
        if "Risposte:" in lines:
            question = next(line.removeprefix("Domanda: ") for line in lines if line.startswith("Domanda: "))
            q = int(question.split("numero ")[1].split()[0])
            return "\n".join(f"{n}. {text}" for n, text in enumerate(trues_of(q), 1))
        prefix = "Affermazione vera: "
        true = next(line.removeprefix(prefix) for line in lines if line.startswith(prefix))
        return false_of(true)


class ForcedNLI:
    """An NLI stand-in loaded as backend `nli`: model id "forced:<label>" makes <label> the most probable
    label of every pair."""

    labels = ["contradiction", "entailment", "neutral"]

    def __init__(self, model_id: str, revision: str = "", **options):
        self.model_id, self.label = model_id, model_id.removeprefix("forced:")

    def probabilities(self, premises, hypotheses):
        return [{name: (0.8 if name == self.label else 0.1) for name in self.labels} for _ in premises]


@pytest.fixture
def scripted(db, monkeypatch):
    register_models("maia_script", "scripted/statements", "scripted/cli", "m")  # what forms and commands pick
    return install(monkeypatch, StatementBackend)


@pytest.fixture
def forced_nli(db, monkeypatch):
    register_models("nli", *(f"forced:{label}" for label in ForcedNLI.labels))  # registered NLI models
    monkeypatch.setitem(registry.LOADERS, "nli", ("tests.benchmarks.maia.test_statements", "ForcedNLI"))


MODEL = {"backend": "maia_script", "model_id": "scripted/statements"}


def run(start, capture, *args, **kwargs) -> ProposalSet:
    with capture(execute=True):
        pset = start(*args, **{**MODEL, **kwargs})
    assert Job.objects.get(pk=pset.job_id).status == Job.Status.SUCCEEDED
    return pset


def accept_all(pset, user):
    for proposal in pset.proposals.order_by("pk"):
        proposals.decide(proposal, user, "accept")


@pytest.fixture
def with_trues(ready, curator, scripted, django_capture_on_commit_callbacks):
    """The ready question with its accepted true statements."""
    pset = run(statement_generation.start_true_statements, django_capture_on_commit_callbacks, ready.version,
               user=curator)
    accept_all(pset, curator)
    return reload(ready)


@pytest.fixture
def with_pairs(with_trues, curator, scripted, django_capture_on_commit_callbacks):
    """The question with its 8 accepted false statements (`false_of` each true one)."""
    pset = run(statement_generation.start_false_statements, django_capture_on_commit_callbacks,
               with_trues.version, user=curator)
    accept_all(pset, curator)
    return reload(with_trues)


# --- The prompts -------------------------------------------------------------------------------------------

def prompt_text(task, inputs, options=None) -> str:
    [message] = task.messages(inputs, options)
    return message.parts[0].text


def test_one_prompt_holds_the_question_its_category_and_its_8_answers_in_order(ready):
    [entry] = statement_generation.true_entries(ready.version)
    inputs = entry["inputs"]
    assert entry["key"] == f"maia:{ready.pk}:true"
    assert inputs["answers"] == answers_of(1) and inputs["item_id"] == ready.pk
    assert inputs["category_name"] == "Causale (Causal)"
    assert "Implicit Causal: The inferred cause" in inputs["category_definition"]  # the release name's sub-type
    text = prompt_text(TRUE_TASK, inputs)
    assert text.startswith(statement_generation.TRUE_INSTRUCTION)
    assert f"Domanda: {question_text(1)}" in text
    numbered = "Risposte:\n" + "\n".join(f"{n}. {a}" for n, a in enumerate(answers_of(1), 1))
    assert numbered in text
    assert text.endswith("Rispondi solo con l'elenco numerato, un'affermazione per riga, in questa forma:\n"
                         "1. <affermazione 1>\n2. <affermazione 2>\n3. <affermazione 3>\n4. <affermazione 4>\n"
                         "5. <affermazione 5>\n6. <affermazione 6>\n7. <affermazione 7>\n8. <affermazione 8>")
    with pytest.raises(ValueError, match="needs its 8 answers"):
        TRUE_TASK.messages({**inputs, "answers": answers_of(1)[:7]})


def test_the_false_prompt_holds_the_category_definition_and_the_true_statement():
    inputs = {"item_id": 1, "index": 2, "question": "Dove va il cane?", "category": "SpazialeTotale_A",
              **statement_generation.category_inputs("SpazialeTotale_A"), "true_statement": "Il cane va al mare."}
    assert inputs["category_name"] == "Spaziale totale (Spatial Total)"
    text = prompt_text(FALSE_TASK, inputs)
    assert "cambia soltanto l'elemento dell'affermazione su cui verte la categoria" in text
    assert "Categoria: Spaziale totale (Spatial Total). The position of entities in space" in text
    assert "Affermazione vera: Il cane va al mare." in text and "non ripeterla" not in text
    assert text.endswith("Rispondi solo con l'affermazione falsa, su una sola riga.")
    again = prompt_text(FALSE_TASK, {**inputs, "previous_false_statement": "Il gatto va al mare.",
                                     "previous_problem": "NLI reads it as neutral"})
    assert ("Questa affermazione falsa non ha superato i controlli (NLI reads it as neutral): non ripeterla.\n"
            "Il gatto va al mare.") in again


# --- Strict parsing -------------------------------------------------------------------------------------

EIGHT = [f"Affermazione {n}." for n in range(1, 9)]


def parse_true(raw):
    [parsed] = TRUE_TASK.parse(raw)
    return parsed.status, parsed.fields, parsed.error


@pytest.mark.parametrize("raw", [
    "\n".join(f"{n}. {s}" for n, s in enumerate(EIGHT, 1)),
    "\n\n".join(f"{n}) {s}" for n, s in enumerate(EIGHT, 1)) + "\n",
    json.dumps(EIGHT),
    f"```json\n{json.dumps(EIGHT)}\n```",
])
def test_eight_numbered_lines_or_a_json_list_of_eight_parse(raw):
    assert parse_true(raw) == ("ok", dict(zip(statements.TRUE_FIELDS, EIGHT, strict=True)), "")


@pytest.mark.parametrize(("raw", "reason"), [
    ("\n".join(f"{n}. {s}" for n, s in enumerate(EIGHT[:7], 1)), "expected 8 numbered statements, got 7"),
    ("\n".join(f"{n}. {s}" for n, s in enumerate([*EIGHT, "Nove."], 1)), "expected 8 numbered statements, got 9"),
    ("Ecco le affermazioni:\n" + "\n".join(f"{n}. {s}" for n, s in enumerate(EIGHT, 1)),
     "line 1 is not a numbered statement"),
    ("\n".join(f"{n}. {s}" for n, s in zip([1, 2, 4, 3, 5, 6, 7, 8], EIGHT, strict=True)), "line 3 is numbered 4"),
    ("\n".join(f"- {s}" for s in EIGHT), "line 1 is not a numbered statement"),
    (json.dumps(EIGHT[:7]), "expected a JSON list of 8 statements, got 7"),
    (json.dumps([*EIGHT[:7], 8]), "statement 8 of the JSON list is not a string"),
    (json.dumps([*EIGHT[:7], "  "]), "'statement_8' is empty"),
    ('["uno", "due"', "not valid JSON"),
    (json.dumps({"statements": EIGHT}), "line 1 is not a numbered statement"),
])
def test_anything_else_is_malformed_with_its_reason_and_never_guessed(raw, reason):
    status, fields, error = parse_true(raw)
    assert (status, fields) == ("malformed", {}) and reason in error


def test_a_false_statement_is_one_line_and_empty_output_is_empty():
    [ok] = FALSE_TASK.parse("  La bambina è triste.\n")
    assert (ok.status, ok.fields) == ("ok", {"false_statement": "La bambina è triste."})
    [two] = FALSE_TASK.parse("La bambina è triste.\nOppure arrabbiata.")
    assert two.status == "malformed" and "single line" in two.error
    assert [p.status for p in TRUE_TASK.parse("  ")] == [p.status for p in FALSE_TASK.parse("")] == ["empty"]


def test_reviewers_see_flags_and_the_word_diff():
    fields = dict(zip(statements.TRUE_FIELDS, [*EIGHT[:6], EIGHT[1].upper(), "È felice?"], strict=True))
    assert TRUE_TASK.flags_for(fields, {}) == ["Statement 7 repeats statement 2.",
                                              "Statement 8 is a question, not a statement."]
    true = "La bambina al parco è felice."
    assert FALSE_TASK.flags_for({"false_statement": "La bambina al parco è triste."}, {"true_statement": true}) == []
    [flag] = FALSE_TASK.flags_for({"false_statement": "Un uomo lava i piatti in una cucina buia."},
                                  {"true_statement": true})
    assert flag.startswith("Not a minimal pair of its true statement:") and "more than 4" in flag
    [diff] = FALSE_TASK.comparisons({"true_statement": true}, {"false_statement": "La bambina al parco è triste."})
    assert diff.source == "true_statement" and diff.original == true
    with pytest.raises(ValueError, match="reader"):
        proposals.ProposalTask(name="x", label="x", fields=(proposals.ProposalField("a"),),
                               build_prompt=lambda i, o: [], output="text", reader=lambda text: {})


# --- True statements: generation and acceptance ------------------------------------------------------------

def test_true_statements_are_asked_for_ready_questions_only_once_each(version, curator, scripted,
                                                                      django_capture_on_commit_callbacks):
    ready = make_question(version, 1, curator)
    overridden = make_question(version, 2, curator, pool="fail")
    pool_checks.review(overridden.pk, curator, pool_checks.REVIEW_OVERRIDE, "They agree.")
    make_question(version, 3, curator, pool="fail")  # contradicting pool
    make_question(version, 4, curator, pool="")  # pool not checked
    make_question(version, 5, curator, stage=stages.POOL_COMPLETE)
    pset = run(statement_generation.start_true_statements, django_capture_on_commit_callbacks, version, user=curator)
    made = list(pset.proposals.order_by("pk"))
    assert [p.inputs["item_id"] for p in made] == [ready.pk, overridden.pk]
    assert len(scripted.prompts_seen) == 2  # one prompt per question, its 8 answers in it
    assert all(p.status == "ok" and len(p.fields) == 8 for p in made)
    assert made[0].fields["statement_3"] == trues_of(1)[2]
    assert pset.job.kind == proposals.MAKE_PROPOSALS
    with pytest.raises(ProposalError, match="No question of curation-1 waits for its true statements"):
        statement_generation.start_true_statements(version, user=curator, **MODEL)  # both wait for a decision
    proposals.decide(made[1], curator, "reject", reason="Too loose.")
    again = run(statement_generation.start_true_statements, django_capture_on_commit_callbacks, version,
                user=curator)
    assert [p.inputs["item_id"] for p in again.proposals.all()] == [overridden.pk]


def test_a_pool_check_moves_a_complete_question_to_pool_checked_and_a_passing_one_is_ready(version, curator,
                                                                                           forced_nli):
    complete = make_question(version, 1, curator, stage=stages.POOL_COMPLETE, pool="")
    drafted = make_question(version, 2, curator, stage=stages.QUESTION_WRITTEN, pool="")
    assert statement_generation.true_entries(version) == []
    pool_checks.run_checks(version, curator, pool_checks.load_scorer("forced:entailment"))
    assert record_of(complete).stage == stages.POOL_CHECKED
    assert record_of(drafted).stage == stages.QUESTION_WRITTEN  # only complete questions move
    assert [e["inputs"]["item_id"] for e in statement_generation.true_entries(version)] == [complete.pk]


def test_generation_refuses_non_curators_and_frozen_versions(version, ready, annotator, curator):
    with pytest.raises(ProposalError, match="Only curators and admins"):
        statement_generation.start_true_statements(version, user=annotator, **MODEL)
    frozen = imported_version("frozen-1")
    with pytest.raises(ProposalError, match="is frozen"):
        statement_generation.start_false_statements(frozen, user=curator, **MODEL)
    with pytest.raises(ProposalError, match="No true statement of curation-1 waits"):
        statement_generation.start_false_statements(version, user=curator, **MODEL)
    assert not ProposalSet.objects.exists()


def test_accepting_writes_the_true_statements_with_their_provenance(ready, curator, scripted,
                                                                   django_capture_on_commit_callbacks):
    pset = run(statement_generation.start_true_statements, django_capture_on_commit_callbacks, ready.version,
               user=curator)
    [proposal] = pset.proposals.all()
    assert "true_statements" not in reload(ready).payload  # nothing before a person decides
    corrected = {"statement_2": "La bambina 1 al parco 2 è molto felice."}
    decision = proposals.decide(proposal, curator, "correct", fields=corrected)
    item = reload(ready)
    assert item.payload["true_statements"] == [*trues_of(1)[:1], corrected["statement_2"], *trues_of(1)[2:]]
    record = record_of(ready)
    assert record.stage == stages.STATEMENTS
    true = record.working["statements"]["true"]
    assert true["source"]["proposal"] == proposal.pk and true["source"]["decision"] == decision.pk
    assert true["source"]["model_id"] == "scripted/statements" and true["source"]["outcome"] == "corrected"
    assert true["source"]["decided_by"] == curator.username
    assert true["proposed"] == trues_of(1)  # the model's own statements stay beside the correction

    # a later rejection takes them back while no false statement was accepted on them
    proposals.decide(proposal, curator, "reject", reason="Wrong after all.")
    assert "true_statements" not in reload(ready).payload and record_of(ready).stage == stages.POOL_CHECKED
    proposals.decide(proposal, curator, "accept")
    assert reload(ready).payload["true_statements"] == trues_of(1)


def test_statements_written_elsewhere_are_imported_parsed_and_accepted_the_same_way(ready, curator):
    [entry] = statement_generation.true_entries(ready.version)
    good = "\n".join(f"{n}. {text}" for n, text in enumerate(trues_of(1), 1))
    made = proposal_import.import_proposals(statement_generation.TRUE_KIND, [
        {"inputs": entry["inputs"], "source_key": entry["key"], "raw_output": good},
        {"inputs": entry["inputs"], "source_key": entry["key"], "raw_output": "Ecco:\n" + good}],
        user=curator, model_id="gpt-4o (offline)")
    first, second = made.proposals.order_by("pk")
    assert (first.status, second.status) == ("ok", "malformed")
    proposals.decide(first, curator, "accept")
    assert reload(ready).payload["true_statements"] == trues_of(1)
    source = record_of(ready).working["statements"]["true"]["source"]
    assert (source["backend"], source["model_id"]) == ("imported", "gpt-4o (offline)")


def test_acceptance_is_refused_for_a_question_not_waiting_for_it(version, curator, scripted,
                                                               django_capture_on_commit_callbacks):
    first, second = make_question(version, 1, curator), make_question(version, 2, curator)
    one = run(statement_generation.start_true_statements, django_capture_on_commit_callbacks, version,
              user=curator)
    proposal_one, proposal_two = one.proposals.order_by("pk")
    # a second proposal for a question that has its true statements
    proposals.decide(proposal_one, curator, "accept")
    CurationRecord.objects.filter(item=first).update(stage=stages.POOL_CHECKED)
    extra = proposals.create_proposal_set(statement_generation.TRUE_KIND, [{"inputs": proposal_one.inputs}],
                                          backend="maia_script", model_id="other")
    duplicate = extra.proposals.get()
    Proposal.objects.filter(pk=duplicate.pk).update(status="ok", fields=proposal_one.fields)
    with pytest.raises(ProposalError, match=f"already has its true statements from proposal #{proposal_one.pk}"):
        proposals.decide(duplicate, curator, "accept")
    duplicate.refresh_from_db()
    assert duplicate.outcome == "undecided"  # nothing recorded
    # the answers changed since the proposal was made
    BenchmarkItem.objects.filter(pk=second.pk).update(payload={**second.payload, "answers": answers_of(9)})
    with pytest.raises(ProposalError, match="changed since this proposal was made"):
        proposals.decide(proposal_two, curator, "accept")
    # the pool's check no longer passes
    BenchmarkItem.objects.filter(pk=second.pk).update(payload=second.payload)
    ItemCheck.objects.create(item=second, aspect=pool_checks.ASPECT, checked_by=curator, verdict="fail",
                             subject={"question": second.payload["question"], "answers": second.payload["answers"]})
    with pytest.raises(ProposalError, match="is not waiting for its true statements"):
        proposals.decide(proposal_two, curator, "accept")
    assert "true_statements" not in reload(second).payload


# --- False statements: per pair, assembled when all 8 are accepted -----------------------------------

def test_false_statements_wait_in_the_record_until_all_8_are_accepted(with_trues, curator, scripted,
                                                                      django_capture_on_commit_callbacks):
    item = with_trues
    pset = run(statement_generation.start_false_statements, django_capture_on_commit_callbacks, item.version,
               user=curator)
    made = list(pset.proposals.order_by("pk"))
    assert [p.inputs["index"] for p in made] == list(range(8))
    assert [p.fields["false_statement"] for p in made] == [false_of(t) for t in trues_of(1)]
    assert made[4].source_key == f"maia:{item.pk}:false:4" and made[4].inputs["answer"] == answers_of(1)[4]
    assert "Implicit Causal" in scripted.prompts_seen[-1]  # the category's element, by its definition
    with pytest.raises(ProposalError, match="waits for its false statement"):
        statement_generation.start_false_statements(item.version, user=curator, **MODEL)

    order = [5, 0, 7, 1, 2, 6, 3]
    for index in order:
        proposals.decide(made[index], curator, "accept")
        assert "false_statements" not in reload(item).payload
    working = record_of(item).working["statements"]["false"]
    assert sorted(working, key=int) == [str(i) for i in sorted(order)]
    assert working["5"]["source"]["proposal"] == made[5].pk and working["5"]["text"] == false_of(trues_of(1)[5])
    assert stages.freeze_check(item.version) == [(item.external_id, "has no true and false statements yet")]
    proposals.decide(made[4], curator, "correct", fields={"false_statement": "La bambina 1 al parco 5 è arrabbiata."})
    payload = reload(item).payload
    expected = [false_of(t) for t in trues_of(1)]
    expected[4] = "La bambina 1 al parco 5 è arrabbiata."
    assert payload["false_statements"] == expected  # in pair order, whatever order they were accepted in
    assert record_of(item).stage == stages.STATEMENTS
    assert stages.freeze_check(item.version) == []
    # true statements cannot change under accepted false statements
    [true_proposal] = Proposal.objects.filter(task_kind=statement_generation.TRUE_KIND)
    with pytest.raises(ProposalError, match="they stay"):
        proposals.decide(true_proposal, curator, "reject", reason="No.")


def test_taking_a_false_statement_back_unwrites_the_list_and_keeps_edits(with_pairs, curator):
    item = with_pairs
    statements.edit_false_statement(curator, item, 2, "La bambina 1 al parco 3 è annoiata.")
    third = Proposal.objects.get(task_kind=statement_generation.FALSE_KIND, inputs__index=6)
    proposals.decide(third, curator, "reject", reason="Not a contradiction.")
    payload = reload(item).payload
    assert "false_statements" not in payload and payload["true_statements"] == trues_of(1)
    working = record_of(item).working["statements"]
    assert "6" not in working["false"] and working["false"]["2"]["text"] == "La bambina 1 al parco 3 è annoiata."
    assert working["edits"][0]["index"] == 2 and working["edits"][0]["by"] == curator.username
    proposals.decide(third, curator, "accept")
    assert reload(item).payload["false_statements"][2] == "La bambina 1 al parco 3 è annoiata."


def test_a_false_statement_for_a_changed_true_statement_is_refused(with_trues, curator, scripted,
                                                                  django_capture_on_commit_callbacks):
    pset = run(statement_generation.start_false_statements, django_capture_on_commit_callbacks,
               with_trues.version, user=curator)
    [true_proposal] = Proposal.objects.filter(task_kind=statement_generation.TRUE_KIND)
    proposals.decide(true_proposal, curator, "correct", fields={"statement_1": "La bambina ride al parco."})
    first = pset.proposals.get(inputs__index=0)
    with pytest.raises(ProposalError, match="True statement 1 of .* changed since"):
        proposals.decide(first, curator, "accept")
    # the pair is asked about again, for its new true statement
    again = run(statement_generation.start_false_statements, django_capture_on_commit_callbacks,
                with_trues.version, user=curator)
    [entry] = again.proposals.all()
    assert entry.inputs["true_statement"] == "La bambina ride al parco."


# --- Checks ---------------------------------------------------------------------------------------------

def test_the_checks_job_from_the_page_makes_passing_questions_ready(with_pairs, version, curator, curator_client,
                                                                   forced_nli, scripted,
                                                                   django_capture_on_commit_callbacks):
    failing = make_question(version, 2, curator)
    trues = run(statement_generation.start_true_statements, django_capture_on_commit_callbacks, version,
                user=curator)
    accept_all(trues, curator)
    falses = run(statement_generation.start_false_statements, django_capture_on_commit_callbacks, version,
                 user=curator)
    for proposal in falses.proposals.order_by("pk"):
        if proposal.inputs["index"] == 3:
            proposals.decide(proposal, curator, "correct",
                             fields={"false_statement": "Un uomo lava i piatti sporchi in una cucina buia."})
        else:
            proposals.decide(proposal, curator, "accept")
    url = reverse("maia-statements", kwargs={"version_id": version.pk})
    with django_capture_on_commit_callbacks(execute=True):
        response = curator_client.post(reverse("maia-statement-checks", kwargs={"version_id": version.pk}),
                                       {"nli_model": "forced:contradiction"})
    assert response.status_code == 302 and response.url == url
    job = Job.objects.get(kind=statement_checks.JOB_KIND)
    assert job.status == Job.Status.SUCCEEDED, job.message
    assert job.message == "16 pair(s) of 2 question(s) checked, 1 failing; 1 question(s) ready."
    assert job.requested_by == curator and job.queue == "gpu"
    assert record_of(with_pairs).stage == stages.READY and record_of(failing).stage == stages.STATEMENTS
    page = curator_client.get(url).content.decode()
    assert f'id="item-{failing.pk}"' in page and 'data-index="3"' in page and "not a minimal pair" in page
    assert f'value="{failing.pk}:3"' in page and f"job #{job.pk}" in page
    assert ("16 pair(s) in 2 question(s): 15 pass, 1 fail, 0 not checked. Questions under curation: statements "
            "written 1, ready to freeze 1.") in page

    # nothing waits for a check now: refused, nothing queued
    again = curator_client.post(reverse("maia-statement-checks", kwargs={"version_id": version.pk}),
                                {"nli_model": "forced:contradiction"})
    assert again.status_code == 400 and "No statement pair of curation-1 waits for a check" in again.content.decode()

    # a person's fix makes the question ready without another check
    fixed = curator_client.post(reverse("maia-statement-edit", kwargs={"item_id": failing.pk, "index": 3}),
                                {"text": "La bambina 2 al parco 4 è arrabbiata."})
    assert fixed.status_code == 302
    assert record_of(failing).stage == stages.READY
    assert ItemCheck.objects.filter(item=failing, aspect="statement:0").count() == 1


def test_the_nli_check_fails_a_pair_that_does_not_contradict(with_pairs, curator, forced_nli):
    result = statement_checks.run_checks(with_pairs.version, curator, pool_checks.load_scorer("forced:neutral"))
    assert result == {"questions": 1, "pairs": 8, "failed": 8, "ready": 0}
    [failures] = minimal_pairs.failing_pairs(with_pairs.version)
    assert "NLI reads the false statement as neutral" in failures.pairs[0].check.note
    assert record_of(with_pairs).stage == stages.STATEMENTS


def test_checks_need_a_model_and_a_curator(with_pairs, curator, annotator, curator_client, settings):
    settings.MAIA_NLI_MODEL = ""
    with pytest.raises(statement_checks.StatementCheckError, match="Name an NLI model"):
        statement_checks.start_checks(with_pairs.version, curator)
    with pytest.raises(statement_checks.StatementCheckError, match="Only curators and admins"):
        statement_checks.start_checks(with_pairs.version, annotator, "forced:contradiction")
    refused = curator_client.post(reverse("maia-statement-checks", kwargs={"version_id": with_pairs.version_id}))
    assert refused.status_code == 400 and "Name an NLI model" in refused.content.decode()
    assert not Job.objects.filter(kind=statement_checks.JOB_KIND).exists()


def test_the_command_runs_with_the_tiny_nli_model_and_reports(with_pairs, curator, annotator, tiny_models_dir,
                                                             tiny_registry):
    out = io.StringIO()
    call_command("maia_statement_checks", "run", "curation-1", "--user", curator.username,
                 "--nli-model", str(tiny_models_dir / "nli"), stdout=out)
    assert out.getvalue().startswith("8 pair(s) of 1 question(s) checked, ")
    checks = minimal_pairs.current_checks(reload(with_pairs))
    assert sorted(checks) == list(range(8)) and all(c.subject["contradiction"] is not None for c in checks.values())
    passing = sum(c.verdict == "pass" for c in checks.values())
    assert (record_of(with_pairs).stage == stages.READY) == (passing == 8)
    out = io.StringIO()
    call_command("maia_statement_checks", "report", "curation-1", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"curation-1: 8 pair(s) in 1 question(s): {passing} pass, {8 - passing} fail, 0 not checked."
    assert lines[1].startswith(f"  {with_pairs.external_id} [")
    out = io.StringIO()
    call_command("maia_statement_checks", "report", "curation-1", "--json", stdout=out)
    assert json.loads(out.getvalue())["total"]["pairs"] == 8
    with pytest.raises(CommandError, match="is not a curator"):
        call_command("maia_statement_checks", "run", "curation-1", "--user", annotator.username, "--nli-model", "x")
    with pytest.raises(CommandError, match="There is no MAIA version 'nope'"):
        call_command("maia_statement_checks", "report", "nope")
    with pytest.raises(CommandError, match="Unknown model '/no/such/model': it is not in the model registry; "
                                          "models registered for nli classifier: tiny-nli"):
        call_command("maia_statement_checks", "run", "curation-1", "--user", curator.username,
                     "--nli-model", "/no/such/model")


def test_imported_questions_are_checked_without_a_stage(curator, forced_nli):
    version = imported_version("release")
    assert statement_checks.run_checks(version, curator, pool_checks.load_scorer("forced:contradiction")) == {
        "questions": 1, "pairs": 8, "failed": 0, "ready": 0}
    assert statement_checks.report(version)["total"] == {"questions": 1, "pairs": 8, "pass": 8, "fail": 0,
                                                         "unchecked": 0}


# --- Regenerating a failing pair ------------------------------------------------------------------------

def test_regenerate_makes_a_proposal_that_replaces_the_pair_once_accepted(with_pairs, curator, curator_client,
                                                                          forced_nli, scripted,
                                                                          django_capture_on_commit_callbacks):
    item = with_pairs
    statements.edit_false_statement(curator, item, 5, "Un uomo lava i piatti sporchi in una cucina buia.")
    statement_checks.run_checks(item.version, curator, pool_checks.load_scorer("forced:contradiction"))
    assert record_of(item).stage == stages.STATEMENTS
    scripted.REPLIES["Affermazione vera: " + trues_of(1)[5]] = "La bambina 1 al parco 6 è spaventata."
    url = reverse("maia-statement-regenerate", kwargs={"version_id": item.version_id})
    with django_capture_on_commit_callbacks(execute=True):
        response = curator_client.post(url, {"pair": f"{item.pk}:5", **MODEL})
    assert response.status_code == 201, response.json()
    answer = response.json()
    assert Job.objects.get(pk=answer["job"]).status == "succeeded"
    assert "kind=maia_false_statements" in answer["queue_url"]
    [proposal] = Proposal.objects.filter(proposal_set_id=answer["set"])
    assert proposal.inputs["previous_false_statement"] == "Un uomo lava i piatti sporchi in una cucina buia."
    assert "not a minimal pair" in proposal.inputs["previous_problem"]
    assert "non ripeterla" in scripted.prompts_seen[-1]
    assert reload(item).payload["false_statements"][5] != "La bambina 1 al parco 6 è spaventata."  # not yet
    first_source = record_of(item).working["statements"]["false"]["5"]["source"]["proposal"]

    proposals.decide(proposal, curator, "accept")
    assert reload(item).payload["false_statements"][5] == "La bambina 1 al parco 6 è spaventata."
    entry = record_of(item).working["statements"]["false"]["5"]
    assert entry["source"]["proposal"] == proposal.pk and entry["replaces"] == first_source
    assert record_of(item).stage == stages.STATEMENTS
    assert statement_checks.run_checks(item.version, curator, pool_checks.load_scorer("forced:contradiction")) == {
        "questions": 1, "pairs": 1, "failed": 0, "ready": 1}  # only the new pair is checked
    assert record_of(item).stage == stages.READY


def test_regenerate_refuses_bad_input(with_trues, version, curator_client, curator, scripted):
    url = reverse("maia-statement-regenerate", kwargs={"version_id": version.pk})
    for data, status, message in (
            ({"pair": "x"}, 400, "Choose the pair"),
            ({"pair": "987654:1"}, 404, "has no question #987654"),
            ({"pair": f"{with_trues.pk}:1", **MODEL}, 400, "does not have its 8 statement pairs"),
    ):
        response = curator_client.post(url, data)
        assert response.status_code == status and message in response.json()["error"], response.json()
    other = BenchmarkVersion.objects.create(benchmark=version.benchmark, label="other")
    elsewhere = reverse("maia-statement-regenerate", kwargs={"version_id": other.pk})
    assert curator_client.post(elsewhere, {"pair": f"{with_trues.pk}:1"}).status_code == 404
    item = make_question(version, 3, curator, stage=stages.STATEMENTS)
    BenchmarkItem.objects.filter(pk=item.pk).update(payload={
        **item.payload, "true_statements": trues_of(3), "false_statements": trues_of(3)})
    bad = curator_client.post(url, {"pair": f"{item.pk}:8", **MODEL})
    assert bad.status_code == 400 and "has no statement pair 8" in bad.json()["error"]
    assert not ProposalSet.objects.filter(task_kind=statement_generation.FALSE_KIND).exists()


# --- Real models ---------------------------------------------------------------------------------------

def test_a_tiny_causal_lm_s_output_is_marked_malformed_and_cannot_be_accepted(
        tiny_models_dir, ready, curator, django_capture_on_commit_callbacks):
    model = str(tiny_models_dir / "causal-lm")
    pset = run(statement_generation.start_true_statements, django_capture_on_commit_callbacks, ready.version,
               user=curator, backend="causal_lm", model_id=model, params={"max_new_tokens": 8},
               backend_options={"device": "cpu"})
    [proposal] = pset.proposals.all()
    assert proposal.raw_output.strip() and (proposal.status, proposal.fields) == ("malformed", {})
    assert proposal.parse_error
    assert question_text(1) in proposal.prompt[-1]["content"][0]["text"]
    with pytest.raises(ProposalError, match="malformed has no fields to accept"):
        proposals.decide(proposal, curator, "accept")
    assert "true_statements" not in reload(ready).payload
    # a person who writes all 8 statements in a correction is a source too
    proposals.decide(proposal, curator, "correct", fields=dict(zip(statements.TRUE_FIELDS, trues_of(1), strict=True)))
    assert reload(ready).payload["true_statements"] == trues_of(1)


def test_the_console_starts_generation_on_an_openai_compatible_server(ready, curator_client, curator,
                                                                     django_capture_on_commit_callbacks):
    reply = "\n".join(f"{n}. {text}" for n, text in enumerate(trues_of(1), 1))
    completion = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-test",
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                               "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 10, "completion_tokens": 40, "total_tokens": 50}}
    url = reverse("maia-statement-console", kwargs={"version_id": ready.version_id})
    page = curator_client.get(url).content.decode()
    assert f'data-item-id="{ready.pk}" data-stage="pool_checked"' in page
    assert "Propose true statements (1 question(s))" in page
    with openai_test_server() as server:
        register_api_model(server)
        server.script(Reply(body=completion))
        with django_capture_on_commit_callbacks(execute=True):
            response = curator_client.post(
                reverse("maia-statement-generate", kwargs={"version_id": ready.version_id}),
                {"statements": "true", "backend": "openai", "model_id": "gpt-test", "max_new_tokens": "400"})
        assert response.status_code == 201, response.json()
        [body] = server.bodies
    answer = response.json()
    assert Job.objects.get(pk=answer["job"]).status == "succeeded"
    assert "kind=maia_true_statements" in answer["queue_url"]
    text = body["messages"][-1]["content"][0]["text"]
    assert all(a in text for a in answers_of(1)) and body["max_tokens"] == 400
    [proposal] = Proposal.objects.filter(proposal_set_id=answer["set"])
    assert proposal.status == "ok" and proposal.backend == "openai"
    waiting = curator_client.get(url).content.decode()
    assert '<td data-role="waiting">1</td>' in waiting and "Propose true statements (0 question(s))" in waiting
    # the queue shows it for a decision; accepting it there writes the statements
    queue = curator_client.get(answer["queue_url"]).content.decode()
    assert trues_of(1)[0] in queue and question_text(1) in queue
    decided = curator_client.post(reverse("proposal-decide", kwargs={"pk": proposal.pk}), {"verdict": "accept"})
    assert decided.status_code == 200, decided.content
    assert reload(ready).payload["true_statements"] == trues_of(1)
    assert record_of(ready).working["statements"]["true"]["source"]["model_id"] == "gpt-test"
    page = curator_client.get(url).content.decode()
    assert f'data-set-id="{answer["set"]}"' in page and 'data-stage="statements"' in page
    assert "Propose false statements (8 pair(s))" in page


# --- The command line -------------------------------------------------------------------------------------

def test_the_command_lists_generates_and_regenerates(ready, curator, annotator, scripted,
                                                    django_capture_on_commit_callbacks):
    def command(*args) -> str:
        out = io.StringIO()
        with django_capture_on_commit_callbacks(execute=True):
            call_command("maia_statements", *args, stdout=out)
        return out.getvalue()

    model = ["--user", curator.username, "--backend", "maia_script", "--model", "scripted/cli"]
    assert command("questions", "curation-1").splitlines() == [
        f"#{ready.pk} {ready.external_id} [Pool checked]: true statements none, 0 of 8 false, 0 proposal(s) waiting",
        "1 question(s); 1 wait for true statements, 0 pair(s) for a false statement"]
    out = command("generate", "curation-1", "--statements", "true", *model)
    [pset] = ProposalSet.objects.all()
    assert out.strip() == f"Proposal set {pset.pk} (1 input(s)): job {pset.job_id} queued"
    accept_all(pset, curator)
    command("generate", "curation-1", "--statements", "false", *model, "--max-new-tokens", "40")
    accept_all(ProposalSet.objects.latest("pk"), curator)
    assert reload(ready).payload["false_statements"] == [false_of(t) for t in trues_of(1)]
    out = command("regenerate", "--item", str(ready.pk), "--index", "7", *model)
    again = ProposalSet.objects.latest("pk")
    assert f"Proposal set {again.pk} (1 input(s))" in out
    assert again.proposals.get().inputs["previous_false_statement"] == false_of(trues_of(1)[7])

    with pytest.raises(CommandError, match="is not a curator"):
        command("generate", "curation-1", "--statements", "true", "--user", annotator.username,
                "--backend", "maia_script", "--model", "m")
    with pytest.raises(CommandError, match="No question of curation-1 waits"):
        command("generate", "curation-1", "--statements", "true", *model)
    with pytest.raises(CommandError, match="There is no MAIA version 'nope'"):
        command("questions", "nope")
    with pytest.raises(CommandError, match="No MAIA question 987654"):
        command("regenerate", "--item", "987654", "--index", "0", *model)


# --- Pages and permissions ---------------------------------------------------------------------------------

def test_the_pages_are_for_curators_and_linked_from_the_maia_curation_page(client, role_users, ready):
    version_id = ready.version_id
    pages = [reverse("maia-statement-console", kwargs={"version_id": version_id}),
             reverse("maia-statements", kwargs={"version_id": version_id})]
    for role, user in role_users.items():
        status = 200 if role in ("curator", "admin") else 403
        for url in pages:
            assert logged_in_client(user).get(url).status_code == status, (role, url)
    assert client.get(pages[0]).status_code == 302
    annotator = logged_in_client(role_users["annotator"])
    for name in ("maia-statement-generate", "maia-statement-checks", "maia-statement-regenerate"):
        assert annotator.post(reverse(name, kwargs={"version_id": version_id}), {}).status_code == 403
    hub = logged_in_client(role_users["curator"]).get(reverse("maia-categories")).content.decode()
    assert pages[0] in hub and pages[1] in hub
    assert not ProposalSet.objects.exists() and not Job.objects.exists()


@pytest.mark.parametrize(("data", "message"), [
    ({}, "Choose true or false statements"),
    ({"statements": "maybe", **MODEL}, "Choose true or false statements"),
    ({"statements": "true", "backend": "maia_script", "model_id": ""}, "Choose a model"),
    ({"statements": "true", "backend": "nope", "model_id": "m"}, "registered with the maia_script backend, not 'nope'"),
    ({"statements": "true", "backend": "nli", "model_id": "m"}, "registered with the maia_script backend, not 'nli'"),
    ({"statements": "true", **MODEL, "batch_size": "x"}, "Batch size"),
    ({"statements": "false", **MODEL}, "No true statement of curation-1 waits"),
])
def test_the_generate_endpoint_answers_bad_input_with_a_400_and_creates_nothing(curator_client, ready, scripted,
                                                                               data, message):
    response = curator_client.post(reverse("maia-statement-generate", kwargs={"version_id": ready.version_id}), data)
    assert response.status_code == 400 and message in response.json()["error"], response.json()
    assert not ProposalSet.objects.exists() and not Job.objects.exists()


def test_a_frozen_version_has_no_generation(curator_client, curator, scripted):
    version = imported_version("frozen")
    page = curator_client.get(reverse("maia-statement-console", kwargs={"version_id": version.pk})).content.decode()
    assert "This version is frozen" in page and 'id="start-form"' not in page
    response = curator_client.post(reverse("maia-statement-generate", kwargs={"version_id": version.pk}),
                                   {"statements": "true", **MODEL})
    assert response.status_code == 400 and "is frozen" in response.json()["error"]
    other = Benchmark.objects.get(slug="cvrr")
    cvrr_version = BenchmarkVersion.objects.create(benchmark=other, label="not-maia")
    assert curator_client.get(reverse("maia-statement-console",
                                      kwargs={"version_id": cvrr_version.pk})).status_code == 404
