"""A few objects of each kind the API serves, so that a test which calls every operation (the Schemathesis run
in tests/config/test_api_fuzz.py) meets real ids and slugs: one user per role with an API token, a video and
pictures, a draft and a frozen version with items, a succeeded run with predictions, a failure tag and a
judge reference, a running run, jobs, an open study with a submission and an active claim, a closed study, a
qualification test, and an NL-EYE triplet under curation with its image attempts. Some fields are left null
on purpose (a version nobody created, a submission not yet reviewed, an attempt not chosen), so that the
responses show them."""

from dataclasses import dataclass
from pathlib import Path

from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.benchmarks.nleye import stages
from annotation.crowd import assignment, submissions
from annotation.crowd.models import Qualification, QualificationTest
from annotation.curation_models import CurationRecord, ImageAttempt
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, ItemMedia
from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER
from evaluation import failure_analysis, judge_references
from evaluation.models import EvaluationRun
from generation.models import Job
from tests.conftest import create_study, cvqa_payload, ingest_path, make_user
from tests.eval_support import frozen_version
from tests.evaluation.test_human_eval import make_run, predict

FORM = {"fields": [{"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}
SLOTS = ("premise", "hypothesis1", "hypothesis2")
TRIPLET = {"kind": "triplet", "premise": "A man lies in a hospital bed with a cast on his leg.",
           "hypothesis1": "A man slips on a wet floor.", "hypothesis2": "A man walks on a dry floor.", "label": 1,
           "reasoning_category": "physical", "time_direction": "backward", "time_duration": "short",
           "explanation": "A wet floor makes people slip."}
ANSWERS = {"t1:triplet:order1": "2. He dances.", "t1:triplet:order2": "2. The floor is wet.",
           "t2:triplet:order1": "1", "t2:triplet:order2": "I cannot tell."}


@dataclass
class ApiData:
    users: dict  # role -> user
    tokens: dict  # role -> API token key
    ids: list[int]  # the ids of every object made here (a path id that exists somewhere)
    slugs: list[str]  # the studies' and benchmarks' slugs


def make_api_data(*, video_file: Path, picture_files: list[Path]) -> ApiData:
    users = {role: make_user(name, role) for role, name in
             ((ANNOTATOR, "ann"), (CURATOR, "cur"), (RESEARCHER, "res"), (ADMIN, "adm"))}
    curator, annotator = users[CURATOR], users[ANNOTATOR]
    made = list(users.values())

    video = ingest_path(video_file, user=curator)
    pictures = [ingest_path(path, user=curator) for path in picture_files]
    made += [video, *pictures]

    draft = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="draft",
                                            created_by=curator)
    made += [draft, BenchmarkItem.objects.create(version=draft, external_id="q1", payload=cvqa_payload())]

    frozen = frozen_version("nleye", "frozen", [("t1", TRIPLET, {}), ("t2", {**TRIPLET, "label": 2}, {})])
    run = make_run(frozen, "org/alpha", input_strategy="text_only", variants=["triplet"], created_by=curator)
    predictions = predict(run, ANSWERS)
    wrong = predictions[("t1:triplet:order1", 0)]
    running = EvaluationRun.objects.create(version=frozen, model_id="org/beta", backend="openai",
                                           status=EvaluationRun.Status.RUNNING, created_by=users[RESEARCHER])
    made += [frozen, run, running, *predictions.values(),
             failure_analysis.tag(curator, wrong, next(iter(failure_analysis.factors_of(
                 failure_analysis.benchmark_of(run)))), "slipped"),
             judge_references.approve(curator, frozen.items.get(external_id="t1"), "A wet floor makes people slip.")[0]]

    now = timezone.now()
    made += [Job.objects.create(kind="probe_video", status=Job.Status.SUCCEEDED, progress=100, requested_by=annotator,
                                started_at=now, finished_at=now),
             Job.objects.create(kind="probe_video", status=Job.Status.RUNNING, requested_by=curator, started_at=now)]

    study = create_study("pets", form=FORM, items=3, created_by=curator)
    first = assignment.claim_next(study, annotator)
    submission, _created, _feedback = submissions.submit(first, annotator, {"label": "cat"})
    made += [study, first, submission, assignment.claim_next(study, annotator)]
    made.append(create_study("closed-pets", form=FORM, items=1, state="closed", created_by=curator))

    qualification = Qualification.objects.create(name="pets-expert")
    made.append(QualificationTest.objects.create(
        qualification=qualification, name="Pets", questions=[
            {"id": "q1", "prompt": "Which one barks?", "choices": ["cat", "dog"], "answer": "dog"}]))

    pool = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="nleye"), label="pool",
                                           source=BenchmarkVersion.Source.CURATION, created_by=curator)
    triplet = BenchmarkItem.objects.create(version=pool, external_id="p1", payload={
        key: value for key, value in TRIPLET.items() if key in ("kind", *SLOTS, "label")})
    for slot, picture in zip(SLOTS, pictures, strict=False):
        ItemMedia.objects.create(item=triplet, role=slot, image=picture)
        made.append(ImageAttempt.objects.create(
            item=triplet, slot=slot, mode=ImageAttempt.Mode.TEXT_TO_IMAGE, prompt=TRIPLET[slot], seed=7,
            model_id="tiny/sd", created_by=curator, status=ImageAttempt.Status.DONE))
    CurationRecord.objects.create(item=triplet, stage=stages.IMAGES_CHOSEN, author=curator, working={})
    made += [pool, triplet]

    tokens = {role: Token.objects.create(user=user).key for role, user in users.items()}
    slugs = [study.slug, "closed-pets", *Benchmark.objects.values_list("slug", flat=True)]
    return ApiData(users=users, tokens=tokens, ids=sorted({obj.pk for obj in made}), slugs=slugs)
