"""The evaluation runner on tiny real models (CPU, offline): what each input strategy sends, the
two-pass strategies (image-to-text, DSCP), sampling, the response cache, failed requests,
cancellation, progress, and Celery chunks.

The models are random, so nothing checks what they answer: only what they were asked, what was
recorded, and that each (request, sample) gets exactly one prediction.
"""

import os

import pytest
from PIL import Image, ImageChops

import evaluation.benchmarks
from evaluation import prompting, runs
from evaluation.inputs import CANVAS_GAP, CANVAS_LABEL_HEIGHT, draw_canvas, image_fingerprint
from evaluation.models import EvaluationRun, Prediction, ResponseCache, RunChunk
from generation.backends.base import ImagePart, TextPart, VideoPart
from generation.frames import read_all_frames_reference, segment_range
from generation.models import Job
from tests.conftest import ingest_path
from tests.eval_support import DESCRIBE, PARTS, count_model_calls, frozen_version, make_version, use_toy_benchmark

SHORT = {"max_new_tokens": 5}
REAL_GET = evaluation.benchmarks.get


@pytest.fixture(autouse=True)
def toy(monkeypatch):
    return use_toy_benchmark(monkeypatch)


@pytest.fixture
def loader(monkeypatch):
    return count_model_calls(monkeypatch)


@pytest.fixture
def triplet(db, astronaut, coffee, skimage_data, curator):
    """Three real images under NL-EYE's roles."""
    return {"premise": ingest_path(astronaut, user=curator), "hypothesis1": ingest_path(coffee, user=curator),
            "hypothesis2": ingest_path(skimage_data / "chelsea.png", user=curator)}


def model(tiny_models_dir, name: str) -> str:
    return str(tiny_models_dir / name)


def start(version, tiny_models_dir, name="qwen2-vl", *, backend="transformers", **options):
    options.setdefault("generation_params", SHORT)
    run = runs.create_run(version, model_id=model(tiny_models_dir, name), backend=backend, **options)
    return runs.start_run(run, workers="local")


def user_parts(request) -> tuple:
    (message,) = request.messages
    assert message.role == "user"
    return message.parts


def frame_range(video, part: str) -> range:
    segment = next(span for role, span, _ in PARTS if role == part)
    return range(*segment_range(segment, video.frame_count, video.fps))


# --- Videos ---------------------------------------------------------------------------------------

def test_qwen_on_video_parts_as_separate_frame_groups(video, tiny_models_dir, loader, bikes):
    version = make_version("parts", [("clip-1", {"video": video}, ["parts"])])
    run = start(version, tiny_models_dir, frame_policy="uniform:4@112", backend_options={"native_video": False})
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message

    (request,) = loader.requests
    parts = user_parts(request)
    # pre and post as two frame groups, the hidden middle left out, then the prompt
    assert [type(p) for p in parts] == [VideoPart, VideoPart, TextPart]
    pre, post = parts[0], parts[1]
    assert len(pre.frames) == len(post.frames) == 4
    assert set(pre.frame_indices) <= set(frame_range(video, "pre"))
    assert set(post.frame_indices) <= set(frame_range(video, "post"))
    assert max(pre.frames[0].size) == 112
    reference = read_all_frames_reference(bikes, pre.frame_indices, max_side=112)
    assert all(not ImageChops.difference(a, b).getbbox() for a, b in zip(pre.frames, reference, strict=True))
    assert loader.loaded[0].inner.native_video is False  # the frames went in as separate images

    (prediction,) = Prediction.objects.filter(run=run)
    assert prediction.request_id == "clip-1:parts" and prediction.sample_index == 0 and not prediction.error
    assert prediction.raw_output.strip() and prediction.prompt_tokens > 0 and prediction.completion_tokens > 0
    media = prediction.inputs["media"]
    assert [(m["role"], m["hidden"], m["sent"]) for m in media] == [
        ("pre", False, True), ("main", True, False), ("post", False, True)]
    assert media[0]["frames"] == list(pre.frame_indices) and media[2]["frames"] == list(post.frame_indices)
    assert "frames" not in media[1]
    assert prediction.inputs["order"] == ["pre", "post"]
    assert prediction.inputs["frame_policy"] == "uniform:4@112"
    assert prediction.prompt == request.describe()
    assert prediction.prompt[0]["content"][-1] == {"type": "text", "text": f"{request.messages[0].parts[-1].text}"}
    assert prediction.params["max_new_tokens"] == 5 and prediction.params["temperature"] == 0.0


def test_qwen_native_video_shows_the_hidden_part_as_black_frames(video, tiny_models_dir, loader):
    version = make_version("native", [("clip-1", {"video": video}, ["parts"])])
    run = start(version, tiny_models_dir, input_strategy="video", frame_policy="uniform:3@96")
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    assert loader.loaded[0].inner.native_video is True

    (request,) = loader.requests
    parts = user_parts(request)
    assert [type(p) for p in parts] == [VideoPart, TextPart]  # one video of the three parts
    clip = parts[0]
    assert len(clip.frames) == 9 and len({f.size for f in clip.frames}) == 1
    black = [f.getextrema() == ((0, 0), (0, 0), (0, 0)) for f in clip.frames]
    assert black == [False] * 3 + [True] * 3 + [False] * 3
    assert list(clip.frame_indices) == sorted(clip.frame_indices)
    assert set(clip.frame_indices[3:6]) <= set(frame_range(video, "main"))

    (prediction,) = Prediction.objects.filter(run=run)
    assert not prediction.error and prediction.raw_output.strip()
    media = prediction.inputs["media"]
    assert [m["sent"] for m in media] == [True, True, True]
    assert media[1]["blank"] == [True] * 3 and media[0]["blank"] == [False] * 3
    assert sum((m["frames"] for m in media), []) == list(clip.frame_indices)
    assert media[0]["joined_fingerprint"] == clip.fingerprint
    assert prediction.prompt[0]["content"][0]["type"] == "video"
    assert prediction.prompt[0]["content"][0]["frame_indices"] == list(clip.frame_indices)


def test_a_parts_policy_counts_frames_per_role_and_images_take_the_size_cap(video, image, toy):
    from evaluation.benchmarks.base import EvalRequest, MediaInput
    from evaluation.inputs import InputError, MediaResolver, MediaSettings
    from generation.frames import FramePolicy

    parts = [MediaInput(role=role, kind="video", asset_id=video.pk, segment=segment, hidden=hidden)
             for role, segment, hidden in PARTS]
    photo = MediaInput(role="photo", kind="image", asset_id=image.pk)
    request = EvalRequest(request_id="r", item_id="i", variant="v", text="", prompt="", media=[*parts, photo])
    resolver = MediaResolver(MediaSettings("default", FramePolicy.parse("parts:pre=2,post=3@80")))
    resolved = resolver.resolve(request)
    pre, post, picture = resolved.parts
    assert (len(pre.frames), len(post.frames)) == (2, 3)
    assert max(pre.frames[0].size) == 80 and max(picture.image.size) == 80
    assert picture.fingerprint == image_fingerprint(image.checksum, {"max_side": 80})
    assert picture.fingerprint != image_fingerprint(image.checksum, {})
    assert resolved.record["order"] == ["pre", "post", "photo"]

    joined = MediaResolver(MediaSettings("video", FramePolicy.parse("parts:pre=2,post=3")))
    with pytest.raises(InputError, match="gives no frame count for part 'main'"):
        joined.resolve(request)  # the hidden part is shown (black) in one video, so it needs a count too


# --- Images ---------------------------------------------------------------------------------------

def test_llava_onevision_gets_separate_images_premise_first(triplet, tiny_models_dir, loader):
    version = make_version("separate", [("t-1", triplet, ["open"])])
    run = start(version, tiny_models_dir, "llava-onevision")
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message

    (request,) = loader.requests
    parts = user_parts(request)
    assert [type(p) for p in parts] == [ImagePart, ImagePart, ImagePart, TextPart]
    roles = ["premise", "hypothesis1", "hypothesis2"]
    assert [p.fingerprint for p in parts[:3]] == [image_fingerprint(triplet[r].checksum, {}) for r in roles]
    with Image.open(triplet["premise"].file.path) as premise:
        assert not ImageChops.difference(parts[0].image, premise.convert("RGB")).getbbox()

    (prediction,) = Prediction.objects.filter(run=run)
    assert [m["role"] for m in prediction.inputs["media"]] == roles == prediction.inputs["order"]
    assert [m["checksum"] for m in prediction.inputs["media"]] == [triplet[r].checksum for r in roles]
    assert [c["type"] for c in prediction.prompt[0]["content"]] == ["image", "image", "image", "text"]


def test_llava_gets_one_combined_canvas_with_the_premise_on_the_left(triplet, tiny_models_dir, loader):
    version = make_version("canvas", [("t-1", triplet, ["open"])])
    run = start(version, tiny_models_dir, "llava", input_strategy="combined", frame_policy="uniform:8@128")
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message

    (request,) = loader.requests
    parts = user_parts(request)
    assert [type(p) for p in parts] == [ImagePart, TextPart]
    canvas = parts[0].image
    with Image.open(triplet["premise"].file.path) as opened:
        premise = opened.convert("RGB")
    panel = premise.resize((round(premise.width * 128 / premise.height), 128), Image.Resampling.BICUBIC)
    left = canvas.crop((CANVAS_GAP, CANVAS_LABEL_HEIGHT, CANVAS_GAP + panel.width, CANVAS_LABEL_HEIGHT + 128))
    assert not ImageChops.difference(left, panel).getbbox()  # the premise is the leftmost panel
    label_band = canvas.crop((0, 0, canvas.width, CANVAS_LABEL_HEIGHT))
    assert label_band.convert("L").getextrema()[0] < 128  # the labels are drawn

    # deterministic: drawing the same panels again gives the same pixels
    images = [Image.open(triplet[r].file.path).convert("RGB") for r in ("premise", "hypothesis1", "hypothesis2")]
    again = draw_canvas(list(zip(images, ["Premise", "Hypothesis 1", "Hypothesis 2"], strict=True)), panel_height=128)
    assert not ImageChops.difference(canvas, again).getbbox()

    (prediction,) = Prediction.objects.filter(run=run)
    record = prediction.inputs["canvas"]
    assert record["order"] == ["premise", "hypothesis1", "hypothesis2"]
    assert [p["label"] for p in record["panels"]] == ["Premise", "Hypothesis 1", "Hypothesis 2"]
    assert record["fingerprint"] == parts[0].fingerprint == prediction.prompt[0]["content"][0]["fingerprint"]
    assert record["size"] == list(canvas.size)


# --- Text only, image-to-text, DSCP, sampling ----------------------------------------------------

def test_text_only_requests_send_no_media(triplet, tiny_models_dir, loader):
    version = make_version("text", [("t-1", triplet, ["open"]), ("t-2", triplet, ["open"])])
    run = start(version, tiny_models_dir, "causal-lm", backend="causal_lm", input_strategy="text_only")
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    assert len(loader.requests) == 2 and all(r.text_only() for r in loader.requests)
    predictions = list(Prediction.objects.filter(run=run))
    assert [p.request_id for p in predictions] == ["t-1:open", "t-2:open"]
    assert all(p.inputs["text_only"] and p.inputs["media"] == [] for p in predictions)
    for prediction, item in zip(predictions, ["t-1", "t-2"], strict=True):
        text = {"type": "text", "text": f"What happens in the scene? [{item} open]"}
        assert prediction.prompt == [{"role": "user", "content": [text]}]


def test_image_to_text_captions_each_image_then_asks_text_only(triplet, tiny_models_dir, loader):
    version = make_version("i2t", [("t-1", triplet, ["open"])])
    describer = {"model_id": model(tiny_models_dir, "qwen2-vl"), "backend": "transformers"}
    run = start(version, tiny_models_dir, "causal-lm", backend="causal_lm", input_strategy="image_to_text",
                describer=describer)
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message

    describer_backend, predictor = loader.loaded  # captions first, then the predictor
    assert describer_backend.model_id.endswith("qwen2-vl") and predictor.model_id.endswith("causal-lm")
    captions = [r for call in describer_backend.calls for r in call]
    assert len(captions) == 3
    for caption_request, role in zip(captions, ["premise", "hypothesis1", "hypothesis2"], strict=True):
        parts = user_parts(caption_request)
        assert [type(p) for p in parts] == [ImagePart, TextPart] and parts[1].text == DESCRIBE
        assert parts[0].fingerprint == image_fingerprint(triplet[role].checksum, {})

    (final,) = [r for call in predictor.calls for r in call]
    assert final.text_only()
    (prediction,) = Prediction.objects.filter(run=run)
    recorded = prediction.inputs["captions"]
    assert list(recorded) == ["premise", "hypothesis1", "hypothesis2"]
    text = user_parts(final)[0].text
    assert "{caption:" not in text
    for role, caption in recorded.items():
        assert caption["output"].strip() and f"{role}: {caption['output'].strip()}" in text
        assert caption["model"] == describer["model_id"] and caption["prompt"][0]["content"][1]["text"] == DESCRIBE
    assert prediction.prompt == final.describe()


def test_dscp_asks_twice_and_the_second_prompt_holds_the_first_answer(video, tiny_models_dir, loader):
    version = make_version("dscp", [("clip-1", {"video": video}, ["open"]), ("clip-2", {"video": video}, ["open"])])
    run = start(version, tiny_models_dir, prompting="dscp", frame_policy="uniform:2@64")
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message

    sent = loader.requests
    assert len(sent) == 3  # two requests share one identical step 1, which is asked once
    step1 = sent[0]
    assert user_parts(step1)[-1].text == prompting.DSCP_STEP1
    assert isinstance(user_parts(step1)[0], VideoPart)
    predictions = list(Prediction.objects.filter(run=run))
    assert len(predictions) == 2
    for prediction in predictions:
        context = prediction.inputs["context"]
        answer = context["output"].strip()
        assert answer and context["prompt"] == step1.describe()
        final_text = prediction.prompt[0]["content"][-1]["text"]
        assert final_text.startswith(f"Context for the given video is: {answer}.")
        assert final_text.endswith(f"What happens in the scene? [{prediction.item.external_id} open]")
        assert prediction.prompt[0]["content"][0]["type"] == "video"  # step 2 sees the same media


def test_three_samples_per_request_are_drawn_at_temperature_0_7(triplet, tiny_models_dir, loader):
    version = make_version("sampled", [("t-1", triplet, ["sampled", "open"])])
    run = start(version, tiny_models_dir, "causal-lm", backend="causal_lm", input_strategy="text_only")
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    assert run.total_requests == 2 and run.total_predictions == 4
    sampled = list(Prediction.objects.filter(run=run, variant="sampled"))
    assert [p.sample_index for p in sampled] == [0, 1, 2]
    assert all(p.params["n"] == 3 and p.params["temperature"] == 0.7 and p.params["n_samples"] == 3
               for p in sampled)
    assert all(p.raw_output.strip() for p in sampled)
    (call,) = [r for r in loader.requests if r.params.n == 3]
    assert call.params.sampling
    # sampled answers are never cached; the greedy one is
    assert ResponseCache.objects.count() == 1


# --- Cache, failures, cancellation, progress ------------------------------------------------------

def test_a_rerun_of_a_finished_deterministic_run_makes_no_model_call(video, triplet, tiny_models_dir, loader):
    version = make_version("cache", [("clip-1", {"video": video}, ["open"]), ("t-1", triplet, ["open"])])
    options = {"frame_policy": "uniform:2@64", "prompting": "dscp"}
    first = start(version, tiny_models_dir, **options)
    assert first.status == EvaluationRun.Status.SUCCEEDED, first.message
    calls_before = len(loader.requests)
    assert calls_before == 4  # step 1 and step 2 of two requests

    second = start(version, tiny_models_dir, **options)
    assert second.status == EvaluationRun.Status.SUCCEEDED, second.message
    assert len(loader.requests) == calls_before  # not one call more
    assert len(loader.loaded) == 1  # the model was not even loaded again
    old = {p.request_id: p for p in Prediction.objects.filter(run=first)}
    new = list(Prediction.objects.filter(run=second))
    assert len(new) == 2 and all(p.from_cache for p in new)
    assert not any(p.from_cache for p in old.values())
    for prediction in new:
        assert prediction.raw_output == old[prediction.request_id].raw_output
        assert prediction.prompt == old[prediction.request_id].prompt
        assert prediction.inputs["context"]["from_cache"] is True
    assert second.cached_predictions == 2 and second.completed_predictions == 2


def test_failed_requests_are_recorded_and_retried_on_resume(triplet, video, tiny_models_dir, loader):
    version = make_version("failing", [("clip-1", {"video": video}, ["open"]), ("t-1", triplet, ["open"])])
    path = triplet["premise"].file.path
    hidden_away = path + ".away"
    os.rename(path, hidden_away)
    run = start(version, tiny_models_dir, frame_policy="uniform:2@64")
    assert run.status == EvaluationRun.Status.FAILED
    assert "1 of 2 predictions failed" in run.message
    failed = Prediction.objects.get(run=run, request_id="t-1:open")
    assert "is missing" in failed.error and failed.raw_output == ""
    assert not ResponseCache.objects.filter(texts=[""]).exists()
    ok = Prediction.objects.get(run=run, request_id="clip-1:open")
    assert not ok.error and run.completed_predictions == 1 and run.failed_predictions == 1
    calls = len(loader.requests)

    os.rename(hidden_away, path)
    run = runs.start_run(run, workers="local")
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    assert len(loader.requests) == calls + 1  # only the failed request was asked again
    rows = list(Prediction.objects.filter(run=run).values_list("request_id", "sample_index", "error"))
    assert rows == [("clip-1:open", 0, ""), ("t-1:open", 0, "")]
    assert Prediction.objects.get(pk=ok.pk).raw_output == ok.raw_output  # kept as it was
    history = list(run.transitions.values_list("from_state", "to_state"))
    assert history == [("pending", "running"), ("running", "failed"), ("failed", "running"),
                       ("running", "succeeded")]


def test_cancelling_stops_before_the_next_batch_and_resume_finishes(triplet, tiny_models_dir, loader):
    items = [(f"t-{i}", triplet, ["open"]) for i in range(6)]
    version = make_version("cancel", items)
    run = runs.create_run(version, model_id=model(tiny_models_dir, "causal-lm"), backend="causal_lm",
                          input_strategy="text_only", batch_size=1, chunk_size=2, generation_params=SHORT)
    seen = []

    def cancel_after_two(progress):
        seen.append(progress.completed)
        if progress.completed == 2:
            runs.cancel_run(run, reason="enough")

    run = runs.start_run(run, workers="local", on_progress=cancel_after_two)
    assert run.status == EvaluationRun.Status.CANCELLED and run.message == "enough"
    assert Prediction.objects.filter(run=run).count() == 2
    assert list(run.chunks.values_list("status", flat=True)) == ["cancelled"] * 3
    assert Job.objects.get(pk=run.job_id).status == Job.Status.CANCELLED

    run = runs.start_run(run, workers="local")
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    assert sorted(Prediction.objects.filter(run=run).values_list("request_id", flat=True)) == \
        [f"t-{i}:open" for i in range(6)]
    assert len(loader.requests) == 6  # nothing asked twice


def test_progress_throughput_and_eta_reach_the_run_and_its_job(triplet, tiny_models_dir, loader):
    version = make_version("progress", [(f"t-{i}", triplet, ["open"]) for i in range(4)])
    run = runs.create_run(version, model_id=model(tiny_models_dir, "causal-lm"), backend="causal_lm",
                          input_strategy="text_only", batch_size=1, chunk_size=3, generation_params=SHORT)
    seen = []
    run = runs.start_run(run, workers="local", on_progress=seen.append)
    assert [p.completed for p in seen] == [1, 2, 3, 4, 4]  # after each batch, and when the run is settled
    assert all(p.total == 4 for p in seen)
    assert seen[0].throughput > 0 and seen[0].eta_seconds > 0 and seen[-1].eta_seconds == 0
    assert run.status == EvaluationRun.Status.SUCCEEDED
    assert run.completed_predictions == 4 and run.throughput > 0 and run.eta_seconds == 0
    job = Job.objects.get(pk=run.job_id)
    assert (job.kind, job.queue, job.status, job.progress) == ("evaluation_run", "gpu", Job.Status.SUCCEEDED, 100)
    assert job.result["predictions"] == 4 and job.result["run"] == run.pk
    assert list(run.chunks.values_list("request_ids", "status")) == [
        (["t-0:open", "t-1:open", "t-2:open"], "done"), (["t-3:open"], "done")]


# --- Celery -----------------------------------------------------------------------------------------

def test_celery_runs_one_late_acked_task_per_chunk_on_the_gpu_queue(triplet, tiny_models_dir, loader,
                                                                    django_capture_on_commit_callbacks, monkeypatch):
    from evaluation import tasks

    assert tasks.run_chunk.acks_late is True and tasks.run_chunk.reject_on_worker_lost is True
    sent = []
    original = tasks.run_chunk.apply_async
    monkeypatch.setattr(tasks.run_chunk, "apply_async",
                        lambda *a, **kw: sent.append(kw) or original(*a, **kw))
    version = make_version("celery", [(f"t-{i}", triplet, ["open"]) for i in range(5)])
    run = runs.create_run(version, model_id=model(tiny_models_dir, "causal-lm"), backend="causal_lm",
                          input_strategy="text_only", chunk_size=2, generation_params=SHORT)
    with django_capture_on_commit_callbacks(execute=True):
        run = runs.start_run(run, workers="celery")
        assert run.status == EvaluationRun.Status.RUNNING and not sent  # sent once the transaction commits
    chunk_ids = list(RunChunk.objects.filter(run=run).order_by("index").values_list("pk", flat=True))
    assert sent == [{"args": [pk], "queue": "gpu"} for pk in chunk_ids] and len(chunk_ids) == 3
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    assert Prediction.objects.filter(run=run).count() == 5
    job = Job.objects.get(pk=run.job_id)
    assert job.status == Job.Status.SUCCEEDED and job.progress == 100
    assert len(loader.requests) == 5
    # a chunk delivered again (its worker died before acknowledging it) only fills in what is missing
    assert runs.transition(run, EvaluationRun.Status.RUNNING, reason="redelivered")
    RunChunk.objects.filter(pk=chunk_ids[0]).update(status=RunChunk.Status.RUNNING)
    tasks.run_chunk.apply(args=[chunk_ids[0]])
    assert Prediction.objects.filter(run=run).count() == 5
    assert len(loader.requests) == 5
    assert RunChunk.objects.get(pk=chunk_ids[0]).attempts == 2
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.SUCCEEDED


# --- Through the real benchmark modules -----------------------------------------------------------

@pytest.fixture
def real_benchmarks(toy, monkeypatch):
    """The benchmark registry as it is (undoing the toy benchmark of this module)."""
    monkeypatch.setattr(evaluation.benchmarks, "get", REAL_GET)


def blackswan_record(video_id: str) -> dict:
    return {"kind": "video", "id": video_id, "preevent": 0.0, "event": 3.0, "postevent": 6.0,
            "task1_gt": ["a", "b", "c"], "task2_gt": ["d", "e", "f"], "task2_checkboxes": ["yes", "no", "no"],
            "task3_gt": "g"}


def test_blackswan_detective_on_native_video_and_on_frames(real_benchmarks, video, tiny_models_dir, loader):
    version = frozen_version("blackswan", "bs-1", [("v1", blackswan_record("v1"), {"video": video})])
    native = start(version, tiny_models_dir, input_strategy="video", variants=["detective_gen"],
                   frame_policy="uniform:2@64")
    assert native.status == EvaluationRun.Status.SUCCEEDED, native.message
    (request,) = loader.requests
    assert request.params.n == 3 and request.params.temperature == 0.7  # Detective draws three responses
    (clip, _) = user_parts(request)
    assert isinstance(clip, VideoPart) and len(clip.frames) == 6
    assert [f.getextrema() == ((0, 0), (0, 0), (0, 0)) for f in clip.frames] == [False, False, True, True,
                                                                                  False, False]
    predictions = list(Prediction.objects.filter(run=native))
    assert [(p.request_id, p.sample_index) for p in predictions] == [("v1:detective_gen", i) for i in range(3)]
    for p in predictions:  # every prediction is stored with its reading (free text: the text itself)
        assert p.parse_status in ("ok", "empty") and p.parses == {"authors": {"value": p.parsed_answer,
                                                                              "status": p.parse_status}}
        assert p.parsed_answer == (p.raw_output.strip() or None)

    frames = start(version, tiny_models_dir, input_strategy="frames", variants=["detective_gen"],
                   frame_policy="uniform:2@64")
    assert frames.status == EvaluationRun.Status.SUCCEEDED, frames.message
    parts = user_parts(loader.requests[-1])
    assert [type(p) for p in parts] == [VideoPart, VideoPart, TextPart]  # V_pre and V_post; V_main left out
    assert set(parts[1].frame_indices) <= set(frame_range(video, "post"))


def test_nleye_canvas_follows_the_order_shown_and_captions_are_made_once(real_benchmarks, triplet, tiny_models_dir,
                                                                        loader):
    payload = {"kind": "triplet", "premise": "A man holds an umbrella.", "hypothesis1": "It rains.",
               "hypothesis2": "It is sunny.", "label": 1}
    version = frozen_version("nleye", "ne-1", [("s1", payload, triplet)])
    canvas = start(version, tiny_models_dir, "llava", input_strategy="combined", variants=["triplet"],
                   frame_policy="uniform:8@64")
    assert canvas.status == EvaluationRun.Status.SUCCEEDED, canvas.message
    records = {p.request_id: p.inputs["canvas"] for p in Prediction.objects.filter(run=canvas)}
    assert records["s1:triplet:order1"]["order"] == ["premise", "hypothesis1", "hypothesis2"]
    assert records["s1:triplet:order2"]["order"] == ["premise", "hypothesis2", "hypothesis1"]
    assert [p["label"] for p in records["s1:triplet:order2"]["panels"]] == ["Premise", "Hypothesis 1",
                                                                            "Hypothesis 2"]
    assert all(len(user_parts(r)) == 2 and isinstance(user_parts(r)[0], ImagePart) for r in loader.requests)

    describer = {"model_id": model(tiny_models_dir, "qwen2-vl")}
    captioned = start(version, tiny_models_dir, "causal-lm", backend="causal_lm", input_strategy="image_to_text",
                      describer=describer)
    assert captioned.status == EvaluationRun.Status.SUCCEEDED, captioned.message
    describer_backend = next(b for b in loader.loaded if b.model_id.endswith("qwen2-vl"))
    # four requests show ten images in all, but only three different images: three captions
    assert sum(len(call) for call in describer_backend.calls) == 3
    for prediction in Prediction.objects.filter(run=captioned):
        text = prediction.prompt[0]["content"][0]["text"]
        for role, caption in prediction.inputs["captions"].items():
            assert caption["output"].strip() in text, role
        assert "{caption:" not in text


# --- Admin ----------------------------------------------------------------------------------------

def test_the_admin_shows_a_run_with_its_chunks_and_history_and_cancels_it(triplet, tiny_models_dir, client,
                                                                          django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.org", "pw"))
    admin_client = client
    version = make_version("admin", [("t-1", triplet, ["open"])])
    run = runs.create_run(version, model_id=model(tiny_models_dir, "causal-lm"), backend="causal_lm",
                          input_strategy="text_only")
    page = admin_client.get(f"/admin/evaluation/evaluationrun/{run.pk}/change/")
    assert page.status_code == 200
    response = admin_client.post("/admin/evaluation/evaluationrun/", {
        "action": "cancel_runs", "_selected_action": [run.pk]}, follow=True)
    assert response.status_code == 200 and "1 run(s) cancelled." in response.content.decode()
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.CANCELLED
    assert list(run.transitions.values_list("from_state", "to_state", "reason")) == [
        ("pending", "cancelled", "Cancelled in the admin")]
