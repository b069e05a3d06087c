"""`manage.py evaluate` end to end on a tiny model, resuming from the command line, the progress
display, and the clear errors for options that do not fit."""

import io
import os

import pytest
from django.core.management import CommandError, call_command

import evaluation.benchmarks
from evaluation import prompting
from evaluation.management.commands.evaluate import ProgressBar
from evaluation.models import EvaluationRun, Prediction
from evaluation.runs import Progress
from tests.conftest import ingest_path
from tests.eval_support import count_model_calls, frozen_version, make_version, use_toy_benchmark

REAL_GET = evaluation.benchmarks.get


@pytest.fixture(autouse=True)
def toy(monkeypatch):
    return use_toy_benchmark(monkeypatch)


@pytest.fixture
def version(db, video, astronaut, curator, tiny_registry):
    image = ingest_path(astronaut, user=curator)
    return make_version("cmd", [("a-clip", {"video": video}, ["open", "parts"]),
                                ("b-image", {"premise": image}, ["open"]),
                                ("c-image", {"premise": image}, ["open"])])


def evaluate(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("evaluate", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_evaluate_runs_a_model_and_a_resume_reuses_everything(version, tiny_models_dir, monkeypatch):
    loader = count_model_calls(monkeypatch)
    qwen = str(tiny_models_dir / "qwen2-vl")
    out, err = evaluate("--benchmark", "cvrr", "--version", "cmd", "--model", qwen, "--frames", "uniform:2@64",
                        "--variants", "open", "--limit", "2", "--max-new-tokens", "4", "--seed", "7",
                        "--batch-size", "1", "--backend-option", "native_video=false", "--backend-option",
                        "device=cpu")
    run = EvaluationRun.objects.get()
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    assert out.startswith(f"Run {run.pk} succeeded: 2/2 predictions, 0 from cache, 0 errors, ")
    assert err.startswith(f"Run {run.pk}: {qwen} on cvrr:cmd (default/standard), 2 predictions for 2 requests")
    assert err.splitlines()[-1].startswith("2/2 predictions (100%), 0 from cache, 0 errors, ")  # progress
    # what the options asked for is what the run recorded and did
    assert run.variants == ["open"] and run.limit == 2 and run.seed == 7 and run.batch_size == 1
    assert run.backend_options == {"native_video": False, "device": "cpu"}
    assert run.frame_policy == {"name": "uniform", "count": 2, "max_side": 64, "parts": {}}
    assert run.generation_params == {"max_new_tokens": 4}
    assert run.resolved_revision == "local"
    assert list(Prediction.objects.filter(run=run).values_list("request_id", flat=True)) == \
        ["a-clip:open", "b-image:open"]
    assert all(len(call) == 1 for backend in loader.loaded for call in backend.calls)  # --batch-size 1
    assert len(loader.requests) == 2 and all(r.params.max_new_tokens == 4 for r in loader.requests)

    out, err = evaluate("--resume", str(run.pk))
    assert out.startswith(f"Run {run.pk} succeeded: 2/2 predictions, 0 from cache, 0 errors")
    assert len(loader.requests) == 2  # nothing was missing
    assert Prediction.objects.filter(run=run).count() == 2


def test_a_failed_run_ends_with_an_error_that_says_how_to_resume(version, tiny_models_dir):
    image = version.items.get(external_id="b-image").media.get().image
    os.remove(image.file.path)
    with pytest.raises(CommandError) as caught:
        evaluate("--benchmark", "cvrr", "--version", "cmd", "--model", str(tiny_models_dir / "causal-lm"),
                 "--backend", "causal_lm", "--variants", "open", "--limit", "2", "--max-new-tokens", "3",
                 "--backend-option", "ignore_media=true")
    run = EvaluationRun.objects.get()
    assert run.status == EvaluationRun.Status.FAILED
    assert str(caught.value) == (f"Run {run.pk} failed: 1 of 2 predictions failed; resume the run to retry them. "
                                 f"Resume it with: manage.py evaluate --resume {run.pk}")
    assert "is missing" in Prediction.objects.get(run=run, request_id="b-image:open").error


@pytest.mark.parametrize(("args", "message"), [
    (["--benchmark", "nope", "--version", "cmd"],
     "Error: argument --benchmark: invalid choice: 'nope' (choose from 'blackswan', 'cvqa', 'cvrr', 'maia', 'nleye')"),
    (["--benchmark", "cvrr", "--version", "v9"], "cvrr has no version 'v9'; its versions: cmd, draft."),
    (["--benchmark", "cvrr", "--version", "draft"], "Version cvrr:draft is not frozen"),
    (["--input", "telepathy"], "toy has no input strategy 'telepathy'; known: default, video, combined, text_only, "
                               "image_to_text."),
    (["--prompting", "shouting"], "toy does not use prompting 'shouting'; known: standard, cot, dscp."),
    (["--variants", "open,bogus"], "toy has no variant 'bogus'; known: open, sampled, parts."),
    (["--frames", "uniform:many"], "Bad frame count 'many' in frame policy 'uniform:many'."),
    (["--frames", "detective:8"], "The 'detective' frame policy is not used by the runner"),
    (["--backend", "bogus"], "qwen2-vl' is registered with the transformers backend, not 'bogus'."),
    (["--backend", "nli"], "qwen2-vl' is registered with the transformers backend, not 'nli'."),
    (["--model", "tiny-nli"], "The model 'tiny-nli' is not registered for evaluation runs"),
    (["--backend-option", "base_url=http://127.0.0.1:1/v1"], "Unknown option 'base_url' for the transformers backend"),
    (["--input", "image_to_text"], "Input strategy 'image_to_text' captions the media first: give a describer model"),
    (["--n-samples", "0"], "n_samples must be at least 1 (got 0)."),
    (["--temperature", "-1"], "temperature must not be negative."),
    (["--backend-option", "dtype"], "--backend-option takes key=value (got 'dtype')."),
    (["--workers", "local", "--model", ""], "Give --model (or --resume RUN_ID)."),
    (["--resume", "999"], "There is no run 999."),
])
def test_bad_options_are_refused_with_a_clear_message(version, tiny_models_dir, curator, args, message):
    from annotation.models import Benchmark, BenchmarkVersion

    BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvrr"), label="draft")
    base = {"--benchmark": "cvrr", "--version": "cmd", "--model": str(tiny_models_dir / "qwen2-vl")}
    for flag in list(base):
        if flag in args:
            base.pop(flag)
    argv = [part for pair in base.items() for part in pair] + args
    with pytest.raises(CommandError) as caught:
        evaluate(*argv)
    assert message in str(caught.value)
    assert not EvaluationRun.objects.exists()


def test_an_unregistered_model_folder_is_refused_before_the_run_exists(version, tmp_path):
    with pytest.raises(CommandError) as caught:
        evaluate("--benchmark", "cvrr", "--version", "cmd", "--model", str(tmp_path / "no-such-model"))
    assert str(caught.value) == (
        f"Unknown model {str(tmp_path / 'no-such-model')!r}: it is not in the model registry; models registered for "
        "evaluation runs (answering, describing media): tiny-causal-lm, tiny-llava, tiny-llava-onevision, "
        "tiny-qwen2-vl.")
    assert not EvaluationRun.objects.exists()


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def progress(done: int, total: int = 4) -> Progress:
    return Progress(run_id=1, status="running", total=total, completed=done, failed=0, cached=0,
                    throughput=2.0, eta_seconds=(total - done) / 2, elapsed_seconds=done / 2)


def test_the_progress_bar_redraws_one_line_on_a_terminal_and_prints_lines_otherwise():
    terminal = FakeTerminal()
    bar = ProgressBar(terminal, width=4)
    for done in range(5):
        bar.update(progress(done))
    bar.finish()
    text = terminal.getvalue()
    assert text.count("\r") == 5 and text.count("\n") == 1
    assert "\r[##..] 2/4 predictions (50%), 0 from cache, 0 errors, 2.00/s, ETA 0:01" in text
    assert text.endswith("[####] 4/4 predictions (100%), 0 from cache, 0 errors, 2.00/s, ETA 0:00\033[K\n")

    log = io.StringIO()
    bar = ProgressBar(log, interval=3600)  # a plain line now, then at most one an hour, and the last one
    for done in range(5):
        bar.update(progress(done))
    bar.finish()
    assert log.getvalue().splitlines() == [
        "0/4 predictions (0%), 0 from cache, 0 errors, 2.00/s, ETA 0:02",
        "4/4 predictions (100%), 0 from cache, 0 errors, 2.00/s, ETA 0:00",
    ]


def test_evaluate_runs_cvrr_with_dscp_through_the_real_module(db, video, tiny_models_dir, tiny_registry, monkeypatch):
    monkeypatch.setattr(evaluation.benchmarks, "get", REAL_GET)
    frozen_version("cvrr", "es-1", [
        (f"q{i}", {"kind": "qa", "dimension": "partial_actions", "video_id": "bikes", "question": question,
                   "answer": "They ride on."}, {"video": video})
        for i, question in enumerate(["What do the riders do next?", "How many bikes are there?"])])
    out, _ = evaluate("--benchmark", "cvrr", "--version", "es-1", "--model", str(tiny_models_dir / "qwen2-vl"),
                      "--prompting", "dscp", "--frames", "uniform:2@64", "--max-new-tokens", "4")
    run = EvaluationRun.objects.get()
    assert out.startswith(f"Run {run.pk} succeeded: 2/2 predictions")
    for prediction in Prediction.objects.filter(run=run):
        step1 = prediction.inputs["context"]
        assert step1["prompt"][0]["content"][-1]["text"] == prompting.DSCP_STEP1
        final = prediction.prompt[0]["content"][-1]["text"]
        assert final.startswith(f"Context for the given video is: {step1['output'].strip()}.")
        assert final.endswith(prediction.item.payload["question"])
