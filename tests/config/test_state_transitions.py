"""One way to change state: declared transitions per model, one `transition` service, one
insert-only history table (`config.StateChange`), used by the callers and the admin."""

import ast
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import curation_stages
from annotation.crowd import assignment, submissions
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from annotation.curation_models import CurationRecord
from annotation.models import Image, MediaAsset, Video, VideoSplit
from config import state
from config.models import StateChange
from config.roles import CURATOR
from evaluation import runs
from evaluation.models import EvaluationRun, RunChunk
from generation import jobs
from generation.models import Job, Proposal
from tests.conftest import create_study, ingest_path, logged_in_api, make_user
from tests.eval_support import make_version, use_toy_benchmark

ROOT = Path(__file__).resolve().parents[2]
FORM = {"fields": [{"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}


@pytest.fixture
def curator(db):
    return make_user("curator", CURATOR)


@pytest.fixture
def root(django_user_model):
    return django_user_model.objects.create_superuser("root", "root@example.org", "pw")


# --- The mechanism --------------------------------------------------------------------------------

def test_a_state_machine_knows_its_moves():
    machine = state.StateMachine("status", {"a": {"b", "c"}, "b": {"c"}, "c": set()})
    assert machine.states == {"a", "b", "c"}
    assert machine.allows("a", "b") and not machine.allows("c", "a") and not machine.allows("x", "a")
    assert machine.targets("a") == {"b", "c"} and machine.sources("c") == ("a", "b")
    assert machine.source("b") == "a"
    with pytest.raises(ValueError, match="2 source states"):
        machine.source("c")


def test_an_allowed_move_is_saved_and_recorded_with_actor_and_reason(curator):
    study = create_study("s", form=FORM, state=Study.State.DRAFT)
    change = state.transition(study, Study.State.OPEN, curator, "ready to go", scope=study)
    study.refresh_from_db()
    assert study.state == Study.State.OPEN
    assert (change.target, change.from_state, change.to_state, change.actor, change.reason, change.scope) == (
        study, "draft", "open", curator, "ready to go", study)
    assert list(StateChange.objects.of(study)) == [change]


def test_a_move_the_declaration_does_not_allow_is_refused_and_writes_nothing(curator):
    study = create_study("s", form=FORM, state=Study.State.CLOSED)
    with pytest.raises(state.TransitionRefused, match="is closed; it cannot become open") as refused:
        state.transition(study, Study.State.OPEN, curator)
    assert refused.value.status == 409
    study.refresh_from_db()
    assert study.state == Study.State.CLOSED and not StateChange.objects.exists()
    assert state.try_transition(study, Study.State.OPEN, curator) is None


def test_the_service_reads_the_state_from_the_row_not_from_the_object(curator):
    """A stale object in memory cannot move a study its row says is closed."""
    study = create_study("s", form=FORM, state=Study.State.OPEN)
    Study.objects.filter(pk=study.pk).update(state=Study.State.CLOSED)
    with pytest.raises(state.TransitionRefused):
        state.transition(study, Study.State.PAUSED, curator)  # study.state is still "open" in memory


def test_the_history_is_insert_only_in_the_model_layer(curator):
    study = create_study("s", form=FORM, state=Study.State.DRAFT)
    change = state.transition(study, Study.State.OPEN, curator)
    change.reason = "rewritten"
    with pytest.raises(PermissionError):
        change.save()
    with pytest.raises(PermissionError):
        change.delete()
    with pytest.raises(PermissionError):
        StateChange.objects.filter(pk=change.pk).update(reason="rewritten")
    with pytest.raises(PermissionError):
        StateChange.objects.all().delete()


def _rewrite_raw(change):
    table = StateChange._meta.db_table
    with pytest.raises(DatabaseError, match="insert-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET reason = 'rewritten' WHERE id = %s", [change.pk])
    if connection.vendor == "postgresql":
        with pytest.raises(DatabaseError, match="insert-only"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {table} WHERE id = %s", [change.pk])
    assert StateChange.objects.get(pk=change.pk).reason == ""


def test_the_database_refuses_to_rewrite_the_history(curator):
    study = create_study("s", form=FORM, state=Study.State.DRAFT)
    _rewrite_raw(state.transition(study, Study.State.OPEN, curator))


@pytest.mark.postgres
def test_postgresql_refuses_updates_and_deletes_of_the_history(curator):
    study = create_study("s", form=FORM, state=Study.State.DRAFT)
    _rewrite_raw(state.transition(study, Study.State.OPEN, curator))


# --- Each model's declaration, used by its callers ------------------------------------------------

def test_every_workflow_model_declares_its_states_over_its_own_choices():
    for model in (Study, Claim, Submission, VideoSplit, EvaluationRun, Job):
        machine = state.machine_of(model)
        choices = {value for value, _label in model._meta.get_field(machine.field).choices}
        assert machine.states == choices, model


def test_the_study_api_moves_through_the_declaration_and_records_it(curator):
    study = create_study("s", form=FORM, state=Study.State.DRAFT)
    api = logged_in_api(curator)
    refused = api.post(f"/api/studies/{study.slug}/pause/")
    assert refused.status_code == 409 and refused.json()["error"] == "A draft study cannot pause."
    assert api.post(f"/api/studies/{study.slug}/open/").status_code == 200
    assert api.post(f"/api/studies/{study.slug}/close/").status_code == 200
    assert [(c.from_state, c.to_state, c.actor) for c in StateChange.objects.of(study)] == [
        ("draft", "open", curator), ("open", "closed", curator)]
    assert api.post(f"/api/studies/{study.slug}/open/").status_code == 409


def test_the_claim_loop_takes_its_moves_from_the_declaration(monkeypatch, db):
    """Submitting ends the claim only from the state `Claim.STATES` says may become submitted."""
    worker = make_user("w")
    study = create_study("s", form=FORM, items=1)
    claim = assignment.claim_next(study, worker)
    # a declaration under which nothing becomes submitted from "active": the conditional UPDATE misses
    monkeypatch.setattr(Claim, "STATES", state.StateMachine("status", {
        Claim.Status.RETURNED: {Claim.Status.SUBMITTED}}))
    assert submissions._finish_claim(claim, claim.claimed_at) is False
    monkeypatch.undo()
    submission, created, _ = submissions.submit(claim, worker, {"label": "cat"})
    assert created
    assert [(c.from_state, c.to_state) for c in StateChange.objects.of(claim)] == [("", "active"),
                                                                                  ("active", "submitted")]
    assert StateChange.objects.of(submission).get().scope == study


def test_a_job_records_its_moves_and_a_cancelled_job_stays_cancelled(db):
    @jobs.job_handler("test_state_cancels_itself")
    def cancels_itself(context):
        jobs.cancel(context.job)
        return {"message": "finished anyway"}

    job = jobs.create("test_state_cancels_itself")
    jobs.run_job(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED
    assert [(c.from_state, c.to_state) for c in StateChange.objects.of(job)] == [
        ("queued", "running"), ("running", "cancelled")]
    assert jobs.cancel(job) is False and StateChange.objects.of(job).count() == 2


# --- The admin ------------------------------------------------------------------------------------

def test_the_admin_cannot_set_a_study_state_slots_or_review_state_directly(client, root):
    client.force_login(root)
    worker = make_user("w")
    study = create_study("s", form=FORM, items=1, state=Study.State.DRAFT)
    item = study.items.get()
    page = client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    assert 'name="state"' not in page
    page = client.get(f"/admin/annotation/studyitem/{item.pk}/change/").content.decode()
    assert 'name="open_slots"' not in page and 'name="completed_count"' not in page
    Study.objects.filter(pk=study.pk).update(state=Study.State.OPEN)
    claim = assignment.claim_next(study, worker)
    submission, _, _ = submissions.submit(claim, worker, {"label": "cat"})
    page = client.get(f"/admin/annotation/submission/{submission.pk}/change/").content.decode()
    assert 'name="review_state"' not in page

    # a forged POST with the fields changes nothing
    client.post(f"/admin/annotation/studyitem/{item.pk}/change/", {
        "study": study.pk, "external_id": item.external_id, "payload": "{}", "role": "regular",
        "answer_key": "{}", "open_slots": 99, "completed_count": 42})
    item.refresh_from_db()
    assert (item.open_slots, item.completed_count) == (0, 1)


def test_the_admin_actions_go_through_the_service_and_write_history(client, root):
    client.force_login(root)
    empty = create_study("empty", form=FORM, items=0, state=Study.State.DRAFT)
    ready = create_study("ready", form=FORM, items=1, state=Study.State.DRAFT)
    response = client.post("/admin/annotation/study/", {
        "action": "move_to_open", "_selected_action": [empty.pk, ready.pk]}, follow=True)
    text = response.content.decode()
    assert "1 moved to open." in text and "Add items before opening the study." in text
    ready.refresh_from_db(), empty.refresh_from_db()
    assert (ready.state, empty.state) == (Study.State.OPEN, Study.State.DRAFT)
    change = StateChange.objects.of(ready).get()
    assert (change.from_state, change.to_state, change.actor, change.reason) == (
        "draft", "open", root, "changed in the admin")
    assert not StateChange.objects.of(empty).exists()

    worker = make_user("w")
    claim = assignment.claim_next(ready, worker)
    submission, _, _ = submissions.submit(claim, worker, {"label": "cat"})
    client.post("/admin/annotation/submission/", {"action": "move_to_rejected", "_selected_action": [submission.pk]})
    submission.refresh_from_db()
    assert submission.review_state == Submission.Review.REJECTED
    assert StateChange.objects.of(submission).last().actor == root
    assert StudyItem.objects.get(study=ready).open_slots == 1  # the review service gave the place back


# --- The history that existed before --------------------------------------------------------------

BEFORE = [("annotation", "0010_benchmark_slug_from_registry"), ("evaluation", "0008_judgment_kind_from_registry")]


@pytest.mark.django_db(transaction=True)
def test_existing_history_rows_move_into_the_one_history_table():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    User = apps.get_model("auth", "User")
    Study = apps.get_model("annotation", "Study")
    HistoryEntry = apps.get_model("annotation", "HistoryEntry")
    Benchmark = apps.get_model("annotation", "Benchmark")
    BenchmarkVersion = apps.get_model("annotation", "BenchmarkVersion")
    EvaluationRun = apps.get_model("evaluation", "EvaluationRun")
    RunTransition = apps.get_model("evaluation", "RunTransition")
    curator = User.objects.create(username="old-curator")
    study = Study.objects.create(name="Old", slug="old")
    HistoryEntry.objects.create(entity="study", entity_id=study.pk, study=study, from_state="draft",
                                to_state="open", actor=curator, reason="long ago")
    HistoryEntry.objects.create(entity="worker", entity_id=curator.pk, study=study, from_state="in_pool",
                                to_state="excluded", reason="spam")
    benchmark, _ = Benchmark.objects.get_or_create(slug="cvqa", defaults={"name": "cvqa"})
    run = EvaluationRun.objects.create(version=BenchmarkVersion.objects.create(benchmark=benchmark, label="v"),
                                       model_id="org/vlm")
    RunTransition.objects.create(run=run, from_status="pending", to_status="running", reason="Started", by=curator)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    moved = [(c.content_type.model, c.object_id, c.from_state, c.to_state, c.actor_id, c.reason, c.scope_id)
             for c in StateChange.objects.order_by("id")]
    assert moved == [("study", study.pk, "draft", "open", curator.pk, "long ago", study.pk),
                     ("user", curator.pk, "in_pool", "excluded", None, "spam", study.pk),
                     ("evaluationrun", run.pk, "pending", "running", curator.pk, "Started", None)]


# --- Curation stages, run chunks, proposals' parse status, media status ---------------------------

# The models' workflow fields that move only through `config.state` (with `annotation.curation_stages`
# for curation records): what names them in an assignment, an UPDATE or a `save(update_fields=…)`.
GUARDED_ENUMS = ("RunChunk.Status", "Proposal.Status", "MediaAsset.Status", "Video.Status", "Image.Status")
GUARDED_RECEIVERS = re.compile(r"\b(chunks?|RunChunk|proposals?|Proposal|videos?|Video|images?|Image|clip|"
                               r"assets?|MediaAsset)\b")
THE_SERVICE = {"config/state.py", "annotation/curation_stages.py"}


def _writes_of_guarded_states(path: Path, root: Path = ROOT) -> list[str]:
    source = path.read_text()
    name = path.relative_to(root)
    found = []

    def text(node) -> str:
        return ast.get_source_segment(source, node) or ""

    def guarded_status(value, receiver) -> bool:
        return any(enum in text(value) for enum in GUARDED_ENUMS) or bool(GUARDED_RECEIVERS.search(text(receiver)))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            while any(isinstance(target, (ast.Tuple, ast.List, ast.Starred)) for target in targets):
                targets = [part for target in targets for part in (
                    target.elts if isinstance(target, (ast.Tuple, ast.List)) else
                    [target.value] if isinstance(target, ast.Starred) else [target])]
            for attribute in targets:
                if isinstance(attribute, ast.Attribute) and (attribute.attr == "stage" or (
                        attribute.attr == "status" and guarded_status(node.value, attribute.value))):
                    found.append(f"{name}:{node.lineno}: {text(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = node.func.value
            if node.func.attr in ("update", "bulk_update"):
                for keyword in node.keywords:
                    if keyword.arg == "stage" or (keyword.arg == "status" and guarded_status(keyword.value, receiver)):
                        found.append(f"{name}:{node.lineno}: {text(node)}")
                if node.func.attr == "bulk_update" and len(node.args) > 1 and (
                        '"stage"' in text(node.args[1]) or ('"status"' in text(node.args[1])
                                                          and GUARDED_RECEIVERS.search(text(receiver)))):
                    found.append(f"{name}:{node.lineno}: {text(node)}")
            if node.func.attr in ("create", "get_or_create", "update_or_create", "bulk_create") and (
                    "CurationRecord" in text(receiver)):  # a record starts at its first stage, recorded
                found.append(f"{name}:{node.lineno}: {text(node)}")
            if node.func.attr == "save":
                for keyword in node.keywords:
                    if keyword.arg == "update_fields" and (
                            '"stage"' in text(keyword.value) or ('"status"' in text(keyword.value)
                                                                 and GUARDED_RECEIVERS.search(text(receiver)))):
                        found.append(f"{name}:{node.lineno}: {text(node)}")
    return found


def test_curation_stages_chunk_proposal_and_media_states_are_written_only_by_the_service():
    """`CurationRecord.stage`, `RunChunk.status`, `Proposal.status` and `MediaAsset.status` are never
    assigned, updated or saved by name outside `config.state` (and `annotation.curation_stages`, which
    alone creates curation records)."""
    found = []
    for package in ("annotation", "evaluation", "generation", "config", "frontend"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts or str(path.relative_to(ROOT)) in THE_SERVICE:
                continue
            found += _writes_of_guarded_states(path)
    assert found == []


def test_the_scan_finds_each_kind_of_direct_write(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "record.stage = 'x'\n"
        "record.working, record.stage = {}, 'x'\n"
        "CurationRecord.objects.filter(pk=1).update(stage='x')\n"
        "RunChunk.objects.filter(pk=1).update(status=RunChunk.Status.DONE)\n"
        "run.chunks.filter(pk=1).update(status='done')\n"
        "proposal.status = Proposal.Status.OK\n"
        "video.status = MediaAsset.Status.READY\n"
        "chunk.save(update_fields=['status'])\n".replace("'status'", '"status"')
        + "record.save(update_fields=[\"stage\"])\n"
        "CurationRecord.objects.create(item=item, stage='x')\n"
        # not these: other models' status fields, reads and other creations
        "job.status = Job.Status.RUNNING\n"
        "Claim.objects.filter(pk=1).update(status=Claim.Status.SUBMITTED)\n"
        "run.status = EvaluationRun.Status.RUNNING\n"
        "RunChunk.objects.create(run=run, index=0)\n"
        "if record.stage == 'x': pass\n")
    found = _writes_of_guarded_states(probe, tmp_path)
    assert sorted(int(line.split(":")[1]) for line in found) == list(range(1, 11))


def _moves(obj) -> list[tuple[str, str]]:
    return [(change.from_state, change.to_state) for change in StateChange.objects.of(obj)]


def test_every_new_workflow_declares_its_states_over_its_own_choices():
    for model, field in ((RunChunk, "status"), (Proposal, "status"), (Video, "status"), (Image, "status")):
        machine = state.machine_of(model, field)
        assert machine.states == {value for value, _label in model._meta.get_field(field).choices}, model
    assert state.machine_of(Proposal) is Proposal.STATES and Proposal.STATES.field == "outcome"
    assert not Proposal.STATES.states & Proposal.PARSE_STATES.states  # one history, told apart by its states
    with pytest.raises(TypeError, match="no states for 'kind'"):
        state.machine_of(Proposal, "kind")


def _studies(n: int, *, prefix: str):
    return [create_study(f"{prefix}-{i}", form=FORM, items=0, state=Study.State.DRAFT) for i in range(n)]


def test_a_bulk_transition_records_each_row_in_the_same_number_of_queries_for_any_number(curator):
    closed = create_study("closed", form=FORM, items=0, state=Study.State.CLOSED)
    few, many = _studies(2, prefix="few"), _studies(6, prefix="many")
    ContentType.objects.get_for_model(Study)  # the history's content type, cached per process
    with CaptureQueriesContext(connection) as for_few:
        moved = state.transition_many(Study.objects.filter(pk__in=[s.pk for s in [*few, closed]]), Study.State.OPEN,
                                      curator, "all at once")
    assert moved == [s.pk for s in few]  # the closed study may not open: left as it is, nothing recorded
    with CaptureQueriesContext(connection) as for_many:
        state.transition_many(Study.objects.filter(pk__in=[s.pk for s in many]), Study.State.OPEN, curator)
    assert len(for_few) == len(for_many)
    for study in [*few, *many]:
        study.refresh_from_db()
        assert study.state == Study.State.OPEN and _moves(study) == [("draft", "open")]
    assert StateChange.objects.of(few[0]).get().reason == "all at once"
    closed.refresh_from_db()
    assert closed.state == Study.State.CLOSED and not StateChange.objects.of(closed).exists()


def test_curation_stages_move_through_the_declared_moves_and_are_recorded(monkeypatch, curator):
    use_toy_benchmark(monkeypatch)
    monkeypatch.setattr(CurationRecord, "STATES", state.StateMachine("stage", {}))
    curation_stages.declare({"drafted": {"checked"}, "checked": {"done", "drafted"}})
    version = make_version("curated", [(f"q{i}", {}, ["open"]) for i in range(3)])
    first, *others = [curation_stages.start(item=item, stage="drafted", by=curator) for item in version.items.all()]
    assert _moves(first) == [("", "drafted")] and StateChange.objects.of(first).get().actor == curator

    curation_stages.move(first, "drafted", working={"note": "same stage: no move"})
    curation_stages.move(first, "checked", by=curator, reason="looked at", working={"note": "checked"})
    first.refresh_from_db()
    assert (first.stage, first.working) == ("checked", {"note": "checked"})
    assert _moves(first) == [("", "drafted"), ("drafted", "checked")]
    with pytest.raises(state.TransitionRefused):
        curation_stages.move(first, "drafted_twice")

    moved = curation_stages.move_many(CurationRecord.objects.filter(item__version=version), "checked", by=curator)
    assert moved == [record.pk for record in others]  # the one already checked stays where it is
    for record in others:
        assert _moves(record) == [("", "drafted"), ("drafted", "checked")]


def _run_with_chunks(statuses):
    version = make_version("chunked", [("c0", {}, ["open"])])
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", status=EvaluationRun.Status.RUNNING)
    return run, [RunChunk.objects.create(run=run, index=index, status=status) for index, status in enumerate(statuses)]


def test_run_chunks_record_every_move(settings, monkeypatch, db):
    use_toy_benchmark(monkeypatch)
    settings.EVAL_CHUNK_SILENT_AFTER_SECONDS = 60
    run, (silent, pending, done) = _run_with_chunks(["running", "pending", "done"])
    RunChunk.objects.filter(pk=silent.pk).update(attempts=1, started_at=timezone.now() - timedelta(minutes=5),
                                                 heartbeat_at=timezone.now() - timedelta(minutes=5))
    EvaluationRun.objects.filter(pk=run.pk).update(workers="celery")
    sent = []
    assert runs.requeue_silent_chunks(sent.extend)["requeued"] == [silent.pk] and sent == [silent.pk]
    assert _moves(silent) == [("running", "pending")]
    assert StateChange.objects.of(silent).get().reason.startswith("Re-queued: its worker")

    assert runs.transition(run, EvaluationRun.Status.CANCELLED, reason="enough")
    for chunk in (silent, pending, done):
        chunk.refresh_from_db()
    assert (silent.status, pending.status, done.status) == ("cancelled", "cancelled", "done")
    assert _moves(pending) == [("pending", "cancelled")] and not StateChange.objects.of(done).exists()
    assert StateChange.objects.of(pending).get().reason == "The run cancelled: enough"


def test_probing_media_records_its_move_to_ready(astronaut, curator):
    image = ingest_path(astronaut, user=curator)
    assert image.status == MediaAsset.Status.READY
    change = StateChange.objects.of(image).get()
    assert (change.from_state, change.to_state, change.actor, change.reason) == ("probing", "ready", curator, "probed")
