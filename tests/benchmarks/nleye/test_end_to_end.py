"""NL-EYE from a written triplet to metrics: scene writing and filtering, prompt augmentation through
an OpenAI-compatible server, the image studio on the tiny Stable Diffusion pipelines (text-to-image,
image-to-image, inpainting), the explanation, a second curator's validation, freezing, a tiny-model
run in both hypothesis orders and in the pairs setup, and the release export read back by the importer."""

import io
import json

import numpy as np
import pytest
import torch
from django.core.exceptions import ValidationError
from django.core.management import call_command
from PIL import Image as PILImage

from annotation import image_studio as studio
from annotation import versions
from annotation.benchmarks.nleye import explanation, prompts, scenes, stages, validation
from annotation.crowd import assignment, review, submissions
from annotation.curation_models import CurationRecord, ImageAttempt
from annotation.models import BenchmarkItem
from config.roles import CURATOR
from evaluation import demo, results, runs
from evaluation.models import EvaluationRun
from generation import diffusion, proposals
from tests.conftest import make_user
from tests.openai_test_server import Reply, openai_test_server
from tests.release_fixtures import run_import

pytestmark = pytest.mark.django_db

SIZE, STEPS = 64, 3
WRITTEN = {
    "premise": "A boy stands in a kitchen holding a full glass of milk.",
    "plausible": "The boy drinks the milk and leaves a white mustache on his lip.",
    "implausible": "The boy pours the milk into a flower pot in the garden at night.",
    "reasoning_category": "physical", "time_direction": "forward", "time_duration": "short",
    "domain": "daily life & hospitality",
}
PROMPTS = {
    "components": "a young boy in a red t-shirt; a full glass of milk",
    "environment": "a bright kitchen",
    "premise": "A young boy in a red t-shirt holds a full glass of milk in a bright kitchen",
    "hypothesis1": "A young boy in a red t-shirt with a milk mustache holds an empty glass in a bright kitchen",
    "hypothesis2": "A young boy in a red t-shirt pours a glass of milk into a flower pot at night",
}


@pytest.fixture(autouse=True)
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def completion(content: str) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 40, "total_tokens": 50}}


def written_triplet(curator, author) -> BenchmarkItem:
    """An author writes the scenes; a curator filters them in: the pool's triplet."""
    study = scenes.create_scene_study(curator, "Write NL-EYE scenes", k=1, open_now=True)
    claim = submissions.load_claim(assignment.claim_next(study, author).pk)
    submission, created, _ = submissions.submit(claim, author, WRITTEN)
    assert created
    review.approve(submission, curator)
    return BenchmarkItem.objects.get(version=study.output_version)


def augmented(item, curator, capture):
    """A text model rewrites the scenes into prompts; the curator accepts them."""
    label = item.payload["label"]
    answer = {**PROMPTS}
    if label == 2:  # the prompts follow the item's order of hypotheses
        answer["hypothesis1"], answer["hypothesis2"] = answer["hypothesis2"], answer["hypothesis1"]
    with openai_test_server() as server:
        server.script(Reply(body=completion(json.dumps(answer))))
        with capture(execute=True):
            pset = prompts.start_augmentation([item.pk], user=curator, backend="openai", model_id="gpt-test",
                                              backend_options={"base_url": server.base_url, "max_retries": 0})
    proposal = pset.proposals.get()
    assert (proposal.status, proposal.fields) == ("ok", answer)
    proposals.decide(proposal, curator, "accept")
    record = CurationRecord.objects.get(item=item)
    assert record.stage == stages.PROMPTS_APPROVED
    return record.working["prompts"]


def settings(model: str, mode: str, prompt: str, seed: int, **extra) -> studio.AttemptSettings:
    return studio.parse_settings({"mode": mode, "prompt": prompt, "suffix": diffusion.PHOTOREALISTIC_SUFFIX,
                                  "seed": str(seed), "steps": str(STEPS), "guidance": "7.5", "width": str(SIZE),
                                  "height": str(SIZE), "strength": "0.8", "model_id": model, **extra})


def finished(attempt: ImageAttempt) -> ImageAttempt:
    attempt.refresh_from_db()
    assert attempt.status == ImageAttempt.Status.DONE, attempt.error
    return attempt


def rgb(field) -> np.ndarray:
    with field.open("rb") as handle:
        return np.asarray(PILImage.open(handle).convert("RGB"))


def mask_upload():
    mask = PILImage.new("L", (SIZE, SIZE), 0)
    mask.paste(255, (16, 16, 48, 48))
    buffer = io.BytesIO()
    mask.save(buffer, format="PNG")
    buffer.seek(0)
    buffer.name = "mask.png"
    return buffer


def generated_images(item, curator, prompts_by_slot, seed, tiny_sd, capture) -> dict:
    """Text-to-image for the premise, image-to-image from it for one hypothesis and inpainting for the
    other, all with the triplet's seed; each picked as its slot's final image."""
    with capture(execute=True):
        premise = studio.start_attempt(item, "premise", settings(tiny_sd.text2image, "text2image",
                                                                 prompts_by_slot["premise"], seed), user=curator)
    premise = finished(premise)
    with capture(execute=True):
        first = studio.start_attempt(item, "hypothesis1", settings(tiny_sd.text2image, "image2image",
                                                                   prompts_by_slot["hypothesis1"], seed),
                                     user=curator, parent=studio.Parent(attempt=premise))
    with capture(execute=True):
        second = studio.start_attempt(item, "hypothesis2", settings(tiny_sd.inpaint, "inpaint",
                                                                    prompts_by_slot["hypothesis2"], seed),
                                      user=curator, parent=studio.Parent(attempt=premise), mask_upload=mask_upload())
    first, second = finished(first), finished(second)

    tree = {(a.slot, a.mode, a.parent_id) for a in ImageAttempt.objects.filter(item=item)}
    assert tree == {("premise", "text2image", None), ("hypothesis1", "image2image", premise.pk),
                    ("hypothesis2", "inpaint", premise.pk)}
    assert {a.seed for a in (premise, first, second)} == {seed}
    assert not np.array_equal(rgb(first.image), rgb(premise.image))
    outside = np.ones((SIZE, SIZE), dtype=bool)
    outside[16:48, 16:48] = False
    assert np.array_equal(rgb(second.image)[outside], rgb(premise.image)[outside])
    assert not np.array_equal(rgb(second.image)[~outside], rgb(premise.image)[~outside])
    return {attempt.slot: studio.pick_final(attempt, curator).image for attempt in (premise, first, second)}


def test_an_authored_triplet_becomes_a_frozen_evaluated_exported_version(
        curator, annotator, tiny_sd, tiny_sd_registry, tiny_models_dir, tmp_path, media_root,
        django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    validator = make_user("vera", CURATOR)

    item = written_triplet(curator, annotator)
    record = CurationRecord.objects.get(item=item)
    assert (record.stage, record.author) == (stages.SCENES_ACCEPTED, annotator)
    approved = augmented(item, curator, capture)
    images = generated_images(item, curator, approved, record.working["seed"], tiny_sd, capture)

    pool = item.version
    with pytest.raises(ValidationError, match="not validated"):
        versions.freeze(pool)  # no explanation, no checks yet: the gate refuses
    explanation.write_explanation(item.pk, {
        "explanation": "A boy holding milk is likely to drink it, which leaves a milk mustache.",
        "reasoning_category": "physical", "time_direction": "forward", "time_duration": "short",
        "domain": "daily life & hospitality"}, curator)
    with pytest.raises(validation.SecondPersonRule):  # the designer does not validate their own images
        validation.record_checks(item.pk, curator, {"image:premise": ("pass", "")})
    aspects = ("image:premise", "image:hypothesis1", "image:hypothesis2", "plausibility")
    validation.record_checks(item.pk, validator, dict.fromkeys(aspects, ("pass", "matches its scene")))
    assert CurationRecord.objects.get(item=item).stage == stages.VALIDATED

    frozen = versions.freeze(pool)
    assert frozen.frozen and frozen.item_count == 1
    payload = BenchmarkItem.objects.get(pk=item.pk).payload
    assert {"sample_id", "premise", "hypothesis1", "hypothesis2", "label", "explanation"} <= set(payload)

    run = runs.create_run(frozen, model_id=str(tiny_models_dir / "qwen2-vl"), **demo.RUN_OPTIONS)
    run = runs.start_run(run, workers="local")
    assert run.status == EvaluationRun.Status.SUCCEEDED
    request_ids = set(run.predictions.values_list("request_id", flat=True))
    sample = payload["sample_id"]
    assert {f"{sample}:triplet:order1", f"{sample}:triplet:order2"} <= request_ids  # both orders
    assert any(":pairs:" in request_id for request_id in request_ids)  # and the pairs setup
    metrics = {cell.path: cell for cell in results.flat_metrics(results.run_results(run).metrics)}
    for path in ("triplet.consistency_accuracy", "triplet.order1_accuracy", "pairs.order_faithful_accuracy"):
        assert path in metrics and metrics[path].present, path

    out = tmp_path / "release"
    call_command("export_benchmark", "nleye", "--version", frozen.label, str(out))
    again = run_import("nleye", out, "reimported")
    [back] = again.items.prefetch_related("media__image")
    imported = dict(back.payload)
    imported.pop("source")
    assert imported == payload
    links = {link.role: link.image for link in back.media.all()}
    assert {role: image.checksum for role, image in links.items()} == {
        role: image.checksum for role, image in images.items()}
