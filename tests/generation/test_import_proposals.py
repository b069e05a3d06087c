"""Imported proposals: outputs made elsewhere, parsed by the kind's own parser, never generated here."""

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.benchmarks.cvrr import qa_generation
from generation import proposal_import, proposals
from generation.models import Job, Proposal, ProposalSet
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

QA_INPUTS = {"item_id": 1, "dimension": "multiple_actions_in_a_single_video", "instruction": "Ask about actions.",
             "caption": "A man rides a bicycle along a street and then parks it against a wall."}
TWO_PAIRS = json.dumps([
    {"question": "What does the man do after riding?", "answer": "He parks the bicycle against a wall.",
     "question_kind": "reasoning"},
    {"question": "Why does the man fall off?", "answer": "He does not fall off; he parks the bicycle.",
     "question_kind": "robustness"},
])
ONE_BAD = json.dumps([
    {"question": "Where does he park?", "answer": "Against a wall.", "question_kind": "reasoning"},
    {"question": "Who rides?", "answer": "A man."},
])


def qa_row(raw: str, **extra) -> dict:
    return {"inputs": QA_INPUTS, "raw_output": raw, **extra}


def statuses(proposal_set) -> list[tuple[int, str]]:
    return list(Proposal.objects.filter(proposal_set=proposal_set).order_by("pk")
                .values_list("record_index", "status"))


def test_outputs_are_parsed_like_generated_ones_and_many_records_split(curator):
    rows = [qa_row(TWO_PAIRS, source_key="video-1", params={"temperature": 0.7}), qa_row(ONE_BAD),
            qa_row("Here are the pairs: []"), qa_row("   "), qa_row("```json\n" + TWO_PAIRS + "\n```")]
    made = proposal_import.import_proposals(qa_generation.KIND, rows, user=curator, model_id="big-model-72b",
                                            revision="abc123")
    assert (made.backend, made.model_id, made.revision, made.job) == ("imported", "big-model-72b", "abc123", None)
    assert made.created_by == curator and made.task_kind == "cvrr_qa"
    found = list(Proposal.objects.filter(proposal_set=made).order_by("pk"))
    expected = [parsed for row in rows for parsed in qa_generation.QA_TASK.parse(row["raw_output"])]
    assert [(p.status, p.fields, p.parse_error) for p in found] == [(e.status, e.fields, e.error) for e in expected]
    assert statuses(made) == [(0, "ok"), (1, "ok"), (0, "ok"), (1, "malformed"), (0, "malformed"), (0, "empty"),
                              (0, "ok"), (1, "ok")]
    assert "missing question_kind" in found[3].parse_error
    assert all(p.backend == "imported" and p.model_id == "big-model-72b" and p.job is None for p in found)
    assert found[0].source_key == found[1].source_key == "video-1" and found[0].params == {"temperature": 0.7}
    assert found[0].raw_output == found[1].raw_output == TWO_PAIRS and found[0].inputs == QA_INPUTS
    assert not Job.objects.exists()


def test_a_text_kind_is_parsed_whole(curator):
    made = proposal_import.import_proposals(
        "statement", [{"inputs": {"question": "Who?", "answer": "A man."}, "raw_output": "A man rides.\n"},
                      {"inputs": {"question": "Who?", "answer": "A man."}, "raw_output": "line one\nline two"}],
        user=curator, model_id="written by hand", name="Hand statements")
    assert made.name == "Hand statements"
    rows = list(Proposal.objects.filter(proposal_set=made).order_by("pk"))
    assert (rows[0].status, rows[0].fields) == ("ok", {"statement": "A man rides."})
    assert rows[1].status == "malformed" and "single line" in rows[1].parse_error


@pytest.mark.parametrize("rows, problems", [
    ([qa_row(TWO_PAIRS), "not an object"], [(2, "not a JSON object")]),
    ([{"inputs": {"item_id": 1}, "raw_output": "[]"}, qa_row(TWO_PAIRS)], [(1, "inputs lack dimension")]),
    ([qa_row(TWO_PAIRS), {"raw_output": "[]"}, qa_row(TWO_PAIRS, extra=1)],
     [(2, "no inputs"), (3, "unknown key(s) extra")]),
    ([qa_row(123)], [(1, "raw_output must be text")]),
    ([{"inputs": QA_INPUTS}], [(1, "no raw_output")]),
    ([qa_row("[]", params=[1])], [(1, "params must be a JSON object")]),
])
def test_bad_rows_are_refused_with_their_numbers_and_nothing_is_written(curator, rows, problems):
    with pytest.raises(proposal_import.ImportRefused) as refused:
        proposal_import.import_proposals(qa_generation.KIND, rows, user=curator, model_id="m")
    assert [number for number, _ in refused.value.problems] == [number for number, _ in problems]
    for (_, message), (_, phrase) in zip(refused.value.problems, problems, strict=True):
        assert phrase in message
    assert f"row {problems[0][0]}" in str(refused.value)
    assert not ProposalSet.objects.exists() and not Proposal.objects.exists()


@pytest.mark.parametrize("task, model_id, rows, phrase", [
    ("no_such_kind", "m", [qa_row("[]")], "Unknown proposal task"),
    (qa_generation.KIND, "  ", [qa_row("[]")], "Say who or what wrote the outputs"),
    (qa_generation.KIND, "m", [], "no rows"),
])
def test_an_unknown_kind_no_author_or_no_rows_is_refused(curator, task, model_id, rows, phrase):
    with pytest.raises(proposals.ProposalError, match=phrase):
        proposal_import.import_proposals(task, rows, user=curator, model_id=model_id)
    assert not ProposalSet.objects.exists()


def test_jsonl_rows_are_counted_and_bad_json_named():
    assert proposal_import.rows_from_jsonl('{"a": 1}\n\n{"b": 2}\n') == [{"a": 1}, {"b": 2}]
    with pytest.raises(proposal_import.ImportRefused) as refused:
        proposal_import.rows_from_jsonl('{"a": 1}\n{oops\n[1]\n{"c": \n')
    assert [number for number, _ in refused.value.problems] == [2, 4]
    with pytest.raises(proposals.ProposalError, match="no rows"):
        proposal_import.rows_from_jsonl("\n  \n")


@pytest.mark.parametrize("role", ["annotator", "researcher"])
def test_only_curators_and_admins_import(role):
    user = make_user(f"someone-{role}", role)
    with pytest.raises(proposals.ProposalError, match="Only curators and admins"):
        proposal_import.import_proposals(qa_generation.KIND, [qa_row(TWO_PAIRS)], user=user, model_id="m")
    assert not ProposalSet.objects.exists()
    admin = make_user("an-admin", "admin")
    assert proposal_import.import_proposals(qa_generation.KIND, [qa_row(TWO_PAIRS)], user=admin, model_id="m")


def test_no_generation_runs_on_an_imported_set(curator, curator_client):
    made = proposal_import.import_proposals(qa_generation.KIND, [qa_row(TWO_PAIRS)], user=curator, model_id="m")
    with pytest.raises(proposals.ProposalError, match="imported outputs"):
        proposals.start_generation(made, user=curator)
    response = curator_client.post(reverse("proposal-set-generate", args=[made.pk]))
    assert response.status_code == 409 and "imported outputs" in response.json()["error"]
    assert not Job.objects.exists()
    with pytest.raises(proposals.ProposalError, match="Imported proposals come with their outputs"):
        proposals.create_proposal_set("statement", [{"inputs": {"question": "q", "answer": "a"}}],
                                      backend=proposals.IMPORTED_BACKEND, model_id="m")
    assert "imported" not in proposals.proposal_backends()
    page = curator_client.get(reverse("generation")).content.decode()
    assert "Imported outputs: no model runs here." in page
    assert reverse("proposal-set-generate", args=[made.pk]) not in page


def test_imported_proposals_are_decided_like_generated_ones(curator):
    made = proposal_import.import_proposals("statement", [{"inputs": {"question": "Who?", "answer": "A man."},
                                                           "raw_output": "A man rides."}],
                                            user=curator, model_id="written by hand")
    proposal = Proposal.objects.get(proposal_set=made)
    proposals.decide(proposal, curator, "accept")
    proposal.refresh_from_db()
    assert (proposal.outcome, proposal.final_fields) == ("accepted", {"statement": "A man rides."})


def write_rows(tmp_path, rows) -> str:
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows) + "\n")
    return str(path)


def test_the_command_imports_a_file(curator, tmp_path):
    out = io.StringIO()
    call_command("import_proposals", "--task", "cvrr_qa", "--file", write_rows(tmp_path, [qa_row(TWO_PAIRS),
                                                                                          qa_row(ONE_BAD)]),
                 "--model-id", "offline-run", "--user", curator.username, "--name", "Offline", stdout=out)
    made = ProposalSet.objects.get()
    assert (made.name, made.backend, made.model_id) == ("Offline", "imported", "offline-run")
    assert "2 rows, 4 proposals (3 ok, 1 malformed)" in out.getvalue()


def test_the_command_refuses_bad_rows_and_non_curators(curator, annotator, tmp_path):
    path = write_rows(tmp_path, [qa_row(TWO_PAIRS), "[1, 2]"])
    with pytest.raises(CommandError, match="row 2: not a JSON object"):
        call_command("import_proposals", "--task", "cvrr_qa", "--file", path, "--model-id", "m",
                     "--user", curator.username)
    with pytest.raises(CommandError, match="Only curators"):
        call_command("import_proposals", "--task", "cvrr_qa", "--file", write_rows(tmp_path, [qa_row(TWO_PAIRS)]),
                     "--model-id", "m", "--user", annotator.username)
    with pytest.raises(CommandError, match="No user"):
        call_command("import_proposals", "--task", "cvrr_qa", "--file", path, "--model-id", "m", "--user", "nobody")
    assert not ProposalSet.objects.exists()


def upload(rows) -> SimpleUploadedFile:
    text = "\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows)
    return SimpleUploadedFile("rows.jsonl", text.encode(), content_type="application/jsonl")


def test_the_page_uploads_a_file(curator_client):
    page = curator_client.get(reverse("generation")).content.decode()
    assert 'id="import-form"' in page and reverse("proposals-import") in page
    response = curator_client.post(reverse("proposals-import"), {
        "task": "cvrr_qa", "model_id": "written by hand", "file": upload([qa_row(TWO_PAIRS)])})
    assert response.status_code == 302
    made = ProposalSet.objects.get()
    assert (made.backend, made.model_id, made.proposals.count()) == ("imported", "written by hand", 2)
    shown = curator_client.get(response["Location"]).content.decode()
    assert "He parks the bicycle against a wall." in shown and "written by hand" in shown


def test_the_page_shows_refused_rows_and_writes_nothing(curator_client):
    response = curator_client.post(reverse("proposals-import"), {
        "task": "cvrr_qa", "model_id": "m",
        "file": upload([qa_row(TWO_PAIRS), {"inputs": {"item_id": 3}, "raw_output": "[]"}, "{broken"])})
    assert response.status_code == 400
    html = response.content.decode()
    assert 'data-row="3"' in html and "Row 3: not valid JSON" in html
    response = curator_client.post(reverse("proposals-import"), {
        "task": "cvrr_qa", "model_id": "m", "file": upload([qa_row(TWO_PAIRS), {"inputs": {"item_id": 3},
                                                                                "raw_output": "[]"}])})
    assert response.status_code == 400
    assert "Row 2: cvrr_qa: inputs lack dimension, instruction, caption" in response.content.decode()
    response = curator_client.post(reverse("proposals-import"), {"task": "cvrr_qa", "model_id": "m"})
    assert response.status_code == 400 and "Choose the file" in response.content.decode()
    assert not ProposalSet.objects.exists()


def test_other_roles_cannot_upload(annotator_client, researcher_client):
    for client in (annotator_client, researcher_client):
        response = client.post(reverse("proposals-import"), {
            "task": "cvrr_qa", "model_id": "m", "file": upload([qa_row(TWO_PAIRS)])})
        assert response.status_code in (302, 403)
    assert not ProposalSet.objects.exists()
