"""The services behind the crowd pages: instructions Markdown, payment rows, the task page's form
state, completion, and the curators' readable answers and queue pages (no HTTP)."""

import csv
import io

import pytest

from annotation.crowd import answers, assignment, curation, instructions, payments, review, submissions, task_page
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Study, StudyItem, WorkerProfile
from config.roles import ANNOTATOR, CURATOR
from tests.conftest import create_study, make_user

FORM = {"fields": [
    {"name": "note", "type": "free_text", "label": "Describe it.", "max_length": 300},
    {"name": "person", "type": "single_choice", "label": "Is there a person?",
     "options": [{"id": "y", "text": "Yes, someone"}, {"id": "n", "text": "Nobody"}], "certainty": True,
     "explanation": "optional"},
    {"name": "objects", "type": "multi_select", "label": "Objects", "candidates_from": "candidates", "shuffle": False},
    {"name": "clarity", "type": "likert", "label": "Clarity", "min": 1, "max": 3, "labels": {"1": "low", "3": "high"}},
    {"name": "facts", "type": "yes_no_statements", "label": "Facts", "statements_from": "statements"},
]}
PAYLOAD = {"query": "What is on the table?",
           "candidates": [{"id": "c1", "text": "a cup"}, {"id": "c2", "text": "a pen"}],
           "statements": [{"id": "s1", "text": "It is day."}], "tags": ["kitchen", 2], "meta": {"source": "x"}}
ANSWERS = {"note": "A cup and a pen.", "person": "n", "person_certainty": "certain", "objects": ["c2", "c1"],
           "clarity": 3, "facts": {"s1": "no"}}


def study_with(slug="services", **fields) -> Study:
    study = create_study(slug, form=FORM, items=2, payload=lambda n: dict(PAYLOAD), pay_per_item="0.40",
                         currency="EUR", **fields)
    return Study.objects.get(pk=study.pk)  # as a page loads it: pay as a Decimal


def submitted(study, worker, data=ANSWERS, active_seconds=12.5):
    claim = assignment.claim_next(study, worker)
    submission, _, _ = submissions.submit(claim, worker, data, active_seconds=active_seconds)
    return submission


# --- Instructions -----------------------------------------------------------------------------

def test_markdown_renders_formatting_and_safe_links():
    html = instructions.render_markdown("# Steps\n\n1. Look **closely**\n2. Write [to us](mailto:team@example.org)")
    assert "<h1>Steps</h1>" in html and "<strong>closely</strong>" in html and "<ol>" in html
    assert '<a href="mailto:team@example.org" rel="noopener noreferrer">to us</a>' in html


def test_markdown_shows_raw_html_as_text_and_drops_script_links():
    html = instructions.render_markdown('<script>alert(1)</script>\n\n[x](javascript:alert(2)) '
                                        '![i](data:image/png;base64,AAAA) <i onclick="y">z</i> [ok](https://a.example/)')
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "javascript:" not in html and "data:image" not in html
    assert '<a rel="noopener noreferrer">x</a>' in html and '<img alt="i">' in html
    assert "<i onclick" not in html
    assert '<a href="https://a.example/" rel="noopener noreferrer">ok</a>' in html


def test_empty_instructions_render_to_nothing():
    assert instructions.render_markdown("") == "" and instructions.render_markdown(None) == ""


# --- Payments ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "shown"), [
    ("=SUM(A1)", "'=SUM(A1)"), ("+1", "'+1"), ("-2", "'-2"), ("@cmd", "'@cmd"), ("\tx", "'\tx"),
    ("plain", "plain"), ("a=b", "a=b"), (None, ""), (7, "7"),
])
def test_spreadsheet_text_neutralises_formulas(value, shown):
    assert payments.spreadsheet_text(value) == shown


@pytest.mark.django_db
def test_payment_rows_list_approved_work_only_with_the_pay():
    study = study_with()
    alice, bob = make_user("=alice", ANNOTATOR), make_user("bob", ANNOTATOR)
    curator = make_user("cur", CURATOR)
    WorkerProfile.objects.create(user=alice, platform="prolific", platform_worker_id="PID-1")
    approved, rejected = submitted(study, alice), submitted(study, bob)
    review.approve(approved, curator)
    review.reject(rejected, curator, reason="empty")

    rows = list(payments.payment_rows(study))

    assert rows[0] == payments.PAYMENT_COLUMNS
    assert rows[1:] == [["'=alice", "prolific", "PID-1", approved.claim.item.external_id,
                         approved.submitted_at.isoformat(), "12.5", f"{approved.wall_seconds:.1f}", "0.40", "EUR"]]


@pytest.mark.django_db
def test_payment_csv_lines_parse_back_and_local_workers_are_marked_local():
    study = study_with()
    worker, curator = make_user("carol", ANNOTATOR), make_user("cur", CURATOR)
    review.approve(submitted(study, worker), curator)

    parsed = list(csv.DictReader(io.StringIO("".join(payments.payment_csv_lines(study)))))

    assert [(r["worker"], r["platform"], r["platform_worker_id"], r["pay"]) for r in parsed] == [
        ("carol", "local", "", "0.40")]
    assert payments.payment_filename(study) == "services-payments.csv"


# --- The task page ----------------------------------------------------------------------------

def test_payload_rows_hide_the_lists_the_form_draws():
    rows = {row["key"]: row for row in task_page.payload_rows(PAYLOAD, FORM)}
    assert set(rows) == {"query", "tags", "meta"}
    assert rows["query"] == {"key": "query", "label": "Query", "kind": "text", "value": "What is on the table?"}
    assert rows["tags"]["kind"] == "list" and rows["tags"]["value"] == ["kitchen", "2"]
    assert rows["meta"]["kind"] == "json" and '"source": "x"' in rows["meta"]["value"]


def test_decorated_fields_carry_the_saved_answers():
    from annotation.crowd import forms

    fields = task_page.decorate_fields(forms.render_fields(FORM, PAYLOAD, {}, ANSWERS), ANSWERS)
    by_name = {field["name"]: field for field in fields}

    assert [field["dom_id"] for field in fields] == [f"field-{n}" for n in range(1, 6)]
    assert by_name["note"]["text"] == "A cup and a pen." and by_name["note"]["max_length"] == 300
    assert [(c["id"], c["checked"]) for c in by_name["person"]["choices"]] == [("y", False), ("n", True)]
    assert [(c["value"], c["checked"]) for c in by_name["person"]["certainty"]] == [
        ("certain", True), ("somewhat certain", False), ("uncertain", False)]
    assert by_name["person"]["explanation_mode"] == "optional"
    assert {c["id"]: c["checked"] for c in by_name["objects"]["choices"]} == {"c1": True, "c2": True}
    assert [(p["value"], p["checked"]) for p in by_name["clarity"]["scale"]] == [(1, False), (2, False), (3, True)]
    assert (by_name["clarity"]["low_label"], by_name["clarity"]["high_label"]) == ("low", "high")
    assert by_name["facts"]["statements"] == [{"id": "s1", "text": "It is day.", "answer": "no"}]


@pytest.mark.django_db
def test_task_context_restores_the_draft_and_opens_instructions_on_the_first_item_only():
    study = study_with(instructions="Read **all** of it.")
    worker = make_user("dan", ANNOTATOR)
    claim = assignment.claim_next(study, worker)
    submissions.save_draft(claim, worker, {"note": "half done"})

    first = task_page.task_context(study, claim)
    assert first["claim"] == claim and first["item"] == claim.item and first["preview"] is False
    assert first["draft"].data == {"note": "half done"}
    assert next(f for f in first["fields"] if f["name"] == "note")["text"] == "half done"
    assert "<strong>all</strong>" in first["instructions"]
    assert (first["show_instructions"], first["items_done"]) == (True, 0)

    submissions.submit(claim, worker, ANSWERS)
    second = task_page.task_context(study, assignment.claim_next(study, worker))
    assert second["draft"] is None
    assert (second["show_instructions"], second["items_done"]) == (False, 1)


@pytest.mark.django_db
def test_preview_shows_the_first_regular_item_of_an_open_study_only():
    study = study_with()
    context = task_page.preview_context(study)
    assert context["preview"] is True and context["claim"] is None
    assert context["item"] == study.items.filter(role=StudyItem.Role.REGULAR).order_by("id").first()

    study.state = Study.State.PAUSED
    study.save()
    with pytest.raises(CrowdError, match="is paused") as refused:
        task_page.preview_context(study)
    assert refused.value.status == 409

    empty = create_study("empty", form=FORM, items=0)
    with pytest.raises(CrowdError, match="no item to show"):
        task_page.preview_context(empty)


@pytest.mark.django_db
def test_attach_assignment_moves_only_an_active_claim_to_the_new_assignment():
    study = study_with()
    worker = make_user("eve", ANNOTATOR)
    claim = assignment.claim_next(study, worker, platform_assignment_id="ASSIGN-1")

    task_page.attach_assignment(claim, "ASSIGN-2")
    assert Claim.objects.get(pk=claim.pk).platform_assignment_id == "ASSIGN-2"

    submissions.submit(claim, worker, ANSWERS)
    task_page.attach_assignment(claim, "ASSIGN-3")
    assert Claim.objects.get(pk=claim.pk).platform_assignment_id == "ASSIGN-2"


@pytest.mark.django_db
def test_completion_offers_mturk_submission_once_the_assignment_has_work():
    study = study_with(completion_code="DONE-7")
    worker = make_user("fay", ANNOTATOR)
    claim = assignment.claim_next(study, worker, platform_assignment_id="ASSIGN-9")

    before = task_page.completion_context(study, worker)
    # the code only once the worker has handed in what the study asks for
    assert before["completion_code"] == "" and before["submitted_count"] == 0 and not before["complete"]
    assert before["mturk"] == {"action": "https://www.mturk.com/mturk/externalSubmit", "assignment_id": "ASSIGN-9",
                               "ready": False}

    submissions.submit(claim, worker, ANSWERS)
    after = task_page.completion_context(study, worker)
    assert after["submitted_count"] == 1 and after["mturk"]["ready"] is True
    assert after["completion_code"] == "DONE-7" and after["complete"]

    local = make_user("gus", ANNOTATOR)
    assert "mturk" not in task_page.completion_context(study, local)


# --- Curator pages ----------------------------------------------------------------------------

def test_answers_read_as_text_in_the_forms_order():
    rows = answers.format_answers(FORM, PAYLOAD, ANSWERS)
    assert [(row["label"], row["value"], row["extra"]) for row in rows] == [
        ("Describe it.", "A cup and a pen.", []),
        ("Is there a person?", "Nobody", ["certainty: certain"]),
        ("Objects", "a pen; a cup", []),
        ("Clarity", "3", []),
        ("Facts", "It is day.: no", []),
    ]


def test_missing_empty_and_unknown_answers_stay_visible():
    rows = answers.format_answers(FORM, PAYLOAD, {"person": "maybe", "person_explanation": "blurry", "objects": []})
    values = {row["label"]: (row["value"], row["extra"]) for row in rows}
    assert values["Describe it."] == ("—", [])
    assert values["Is there a person?"] == ("maybe", ["explanation: blurry"])
    assert values["Objects"] == ("(none)", [])
    assert answers.format_answers(FORM, PAYLOAD, None)[0]["value"] == "—"


@pytest.mark.django_db
def test_queue_context_pages_submissions_with_their_answers_and_decidability():
    study = study_with()
    alice, bob, curator = make_user("alice", ANNOTATOR), make_user("bob", ANNOTATOR), make_user("cur", CURATOR)
    pending, decided = submitted(study, alice), submitted(study, bob)
    review.approve(decided, curator)

    context = curation.queue_context(study, "all", "pending")
    (shown,) = list(context["page"])
    assert shown.pk == pending.pk and shown.decidable is True
    assert shown.answers == answers.format_answers(FORM, PAYLOAD, pending.final_data)
    assert shown.edit["shape"] == "form" and shown.queues == ["all"]
    note = next(field for field in shown.edit["fields"] if field["name"] == "note")
    assert note["text"] == "A cup and a pen." and note["dom_id"].startswith(f"s{pending.pk}-")
    assert [(t["name"], t["count"]) for t in context["state_tabs"]] == [("pending", 1), ("approved", 1),
                                                                        ("rejected", 0)]
    assert (context["queue_label"], context["state_label"]) == ("All submissions", "Awaiting review")

    (approved,) = list(curation.queue_context(study, "all", "approved")["page"])
    assert approved.pk == decided.pk and approved.decidable is False


@pytest.mark.django_db
@pytest.mark.parametrize(("queue", "state"), [("nope", "pending"), ("all", "done")])
def test_unknown_queue_or_state_is_refused(queue, state):
    with pytest.raises(CrowdError, match="Unknown queue") as refused:
        curation.queue_context(study_with(), queue, state)
    assert refused.value.status == 400


@pytest.mark.django_db
def test_study_list_and_summary_count_claims_per_status_and_items_per_role():
    study = study_with()
    worker = make_user("hal", ANNOTATOR)
    submitted(study, worker)
    assignment.claim_next(study, worker)

    (row,) = curation.studies_context()["studies"]
    assert row.item_count == 2
    counts = {cell["status"]: cell["count"] for cell in row.status_cells}
    assert counts == {"active": 1, "submitted": 1, "approved": 0, "rejected": 0, "returned": 0, "expired": 0}

    summary = curation.study_summary(study)
    assert [q["name"] for q in summary["queues"]] == curation.QUEUE_ORDER
    assert summary["queues"][0]["counts"]["pending"] == 1
    assert {r["label"]: r["count"] for r in summary["item_roles"]}[StudyItem.Role.REGULAR.label] == 2
    assert summary["status_cells"] == row.status_cells
