"""The image studio (annotation/image_studio.py, frontend/studio_views.py): attempts of an item's image
slots with the tiny Stable Diffusion pipelines (64x64, a few steps, on the CPU), their tree, inpainting
that keeps the parent outside the mask, picking a slot's final image, and every refusal.

Jobs run for real: Celery is eager in tests, and a job is sent when its transaction commits
(`django_capture_on_commit_callbacks(execute=True)`).
"""

import io
import re

import lxml.html
import numpy as np
import pytest
from django.urls import reverse
from PIL import Image as PILImage

from annotation import image_studio as studio
from annotation import image_studio_selectors as selectors
from annotation.curation_models import CurationRecord, ImageAttempt
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, Image, ItemMedia, MediaAsset
from generation import diffusion
from generation.models import Job
from tests.conftest import files_under, ingest_path, logged_in_api, logged_in_client

pytestmark = pytest.mark.django_db

SIZE = 64
STEPS = 3
SEED = 1234
PREMISE = "A boy holds a glass of milk in a kitchen."
AUGMENTED = "A young boy in a red t-shirt holds a full glass of milk in a bright kitchen"


@pytest.fixture
def version(curator):
    return BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="nleye"), label="studio-draft",
                                           created_by=curator)


@pytest.fixture
def item(version, tiny_sd_registry):
    item = BenchmarkItem.objects.create(version=version, external_id="t-1", payload={
        "kind": "triplet", "premise": PREMISE, "hypothesis1": "The glass is empty and the boy smiles.",
        "hypothesis2": "The glass is full and on the floor.", "label": 1})
    CurationRecord.objects.create(item=item, stage="images", working={"prompts": {"premise": AUGMENTED},
                                                                      "seed": SEED})
    return item


def studio_url(item, slot="premise"):
    return reverse("studio-slot", kwargs={"item_id": item.pk, "slot": slot})


def start_url(item, slot="premise"):
    return reverse("studio-attempt-start", kwargs={"item_id": item.pk, "slot": slot})


def form(model, mode="text2image", **fields):
    data = {"mode": mode, "prompt": "a kitchen", "suffix": diffusion.PHOTOREALISTIC_SUFFIX, "seed": str(SEED),
            "steps": str(STEPS), "guidance": "7.5", "width": str(SIZE), "height": str(SIZE), "strength": "0.8",
            "model_id": model}
    data.update({key: value for key, value in fields.items() if value is not None})
    return data


def start(client, capture, item, slot="premise", mask=None, **data):
    """POST the studio's form as its script does (JSON answer); the job runs when the request's transaction
    commits."""
    if mask is not None:
        data["mask"] = mask
    with capture(execute=True):
        response = client.post(start_url(item, slot), data, HTTP_ACCEPT="application/json")
    return response


def png_file(picture: PILImage.Image, name="mask.png"):
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    buffer.seek(0)
    buffer.name = name
    return buffer


def box_mask(size=SIZE, box=(16, 16, 48, 48)) -> PILImage.Image:
    mask = PILImage.new("L", (size, size), 0)
    mask.paste(255, box)
    return mask


def attempt_of(response) -> ImageAttempt:
    assert response.status_code == 201, response.content
    return ImageAttempt.objects.get(pk=response.json()["id"])


def pixels(field) -> np.ndarray:
    with field.open("rb") as handle:
        return np.asarray(PILImage.open(handle).convert("RGB"))


@pytest.fixture
def premise_done(curator_client, django_capture_on_commit_callbacks, item, tiny_sd):
    attempt = attempt_of(start(curator_client, django_capture_on_commit_callbacks, item,
                               **form(str(tiny_sd.text2image), prompt=AUGMENTED)))
    attempt.refresh_from_db()
    assert attempt.status == ImageAttempt.Status.DONE, attempt.error
    return attempt


# --- The page and its defaults -----------------------------------------------------------------------

def test_the_studio_starts_from_the_augmented_prompt_the_suffix_and_the_triplet_s_seed(curator_client, item):
    html = curator_client.get(studio_url(item)).content.decode()
    page = lxml.html.fromstring(html)
    assert page.get_element_by_id("studio-prompt").text_content() == AUGMENTED
    assert page.get_element_by_id("studio-suffix").get("value") == diffusion.PHOTOREALISTIC_SUFFIX
    assert page.get_element_by_id("studio-seed").get("value") == str(SEED)
    assert PREMISE in page.get_element_by_id("slot-text").text_content()
    assert [a.get("data-slot-tab") for a in page.xpath("//*[@data-slot-tab]")] == ["premise", "hypothesis1",
                                                                                   "hypothesis2"]
    schedulers = [o.get("value") for o in page.get_element_by_id("studio-scheduler").xpath(".//option")]
    assert schedulers == ["", *diffusion.schedulers()]
    # a slot without an augmented prompt starts from the payload's scene
    html = curator_client.get(studio_url(item, "hypothesis1")).content.decode()
    assert lxml.html.fromstring(html).get_element_by_id("studio-prompt").text_content() == item.payload["hypothesis1"]


def test_an_unknown_slot_or_item_is_404(curator_client, item):
    assert curator_client.get(studio_url(item, "hypothesis3")).status_code == 404
    assert curator_client.get(reverse("studio-slot", kwargs={"item_id": 987654, "slot": "premise"})).status_code == 404


def test_a_benchmark_without_image_slots_offers_the_roles_its_items_hold_images_under(draft_version, image):
    item = BenchmarkItem.objects.create(version=draft_version, external_id="c-1", payload={"kind": "real"})
    assert studio.image_slots(item) == []
    ItemMedia.objects.create(item=item, role="image", image=image)
    assert studio.image_slots(item) == ["image"]


def test_the_index_lists_items_with_their_slots_and_attempt_counts(curator_client, premise_done, item):
    page = lxml.html.fromstring(curator_client.get(reverse("studio")).content)
    row = page.xpath(f'//tr[@data-item-id="{item.pk}"]')[0]
    counts = {cell.get("data-slot"): cell.xpath('.//*[@data-field="attempts"]')[0].text_content().strip()
              for cell in row.xpath(".//*[@data-slot]")}
    assert counts == {"premise": "1 attempt", "hypothesis1": "0 attempts", "hypothesis2": "0 attempts"}


# --- The attempt tree ----------------------------------------------------------------------------------

def test_the_tree_records_every_attempt_with_its_parent_mask_prompt_seed_model_params_duration_and_who(
        curator_client, curator, django_capture_on_commit_callbacks, item, tiny_sd, premise_done):
    premise = premise_done
    assert premise.prompt == AUGMENTED + diffusion.PHOTOREALISTIC_SUFFIX
    assert (premise.seed, premise.model_id, premise.created_by) == (SEED, str(tiny_sd.text2image), curator)
    assert premise.params == {"steps": STEPS, "guidance": 7.5, "width": SIZE, "height": SIZE,
                              "suffix": diffusion.PHOTOREALISTIC_SUFFIX}
    assert premise.duration_s > 0 and premise.image and not premise.mask
    assert premise.provenance["mode"] == "text2image" and premise.provenance["seed"] == SEED
    assert premise.revision == premise.provenance["revision"]
    assert Job.objects.get(pk=premise.job_id).status == Job.Status.SUCCEEDED
    assert Job.objects.get(pk=premise.job_id).queue == "gpu"

    # a hypothesis conditioned on the premise, with the same seed (the form's default)
    hypothesis = attempt_of(start(curator_client, django_capture_on_commit_callbacks, item, "hypothesis1",
                                  **form(str(tiny_sd.text2image), "image2image", parent=f"attempt:{premise.pk}",
                                         prompt="the glass is empty", seed="", strength="0.6")))
    hypothesis.refresh_from_db()
    assert hypothesis.status == ImageAttempt.Status.DONE, hypothesis.error
    assert (hypothesis.parent, hypothesis.slot, hypothesis.seed, hypothesis.mode) == (premise, "hypothesis1", SEED,
                                                                                      "image2image")
    assert hypothesis.params["strength"] == 0.6

    # inpainting of the hypothesis with a mask
    edit = attempt_of(start(curator_client, django_capture_on_commit_callbacks, item, "hypothesis1",
                            mask=png_file(box_mask()),
                            **form(str(tiny_sd.inpaint), "inpaint", parent=f"attempt:{hypothesis.pk}",
                                   prompt="an empty glass", negative_prompt="blurry", scheduler="DDIMScheduler")))
    edit.refresh_from_db()
    assert edit.status == ImageAttempt.Status.DONE, edit.error
    assert (edit.parent, edit.negative_prompt, edit.scheduler) == (hypothesis, "blurry", "DDIMScheduler")
    with edit.mask.open("rb") as handle:
        assert np.array_equal(np.asarray(PILImage.open(handle).convert("L")), np.asarray(box_mask()))
    assert edit.provenance["mask_sha256"] and edit.provenance["scheduler"] == "DDIMScheduler"

    roots = selectors.attempt_tree(item)
    assert [node.attempt for node in roots] == [premise]
    assert [node.attempt for node in roots[0].children] == [hypothesis]
    assert [node.attempt for node in roots[0].children[0].children] == [edit]

    # the page shows the same nesting, with what each attempt was made with
    page = lxml.html.fromstring(curator_client.get(studio_url(item, "hypothesis1")).content)
    node = page.get_element_by_id(f"attempt-{edit.pk}")
    assert [li.get("id") for li in node.iterancestors("li")] == [f"attempt-{hypothesis.pk}", f"attempt-{premise.pk}"]
    text = node.text_content()
    assert "an empty glass" in text and str(SEED) in text and str(tiny_sd.inpaint) in text and "cur" in text
    assert node.xpath(f'.//a[@href="{reverse("studio-attempt-mask", kwargs={"pk": edit.pk})}"]')
    image = curator_client.get(reverse("studio-attempt-image", kwargs={"pk": edit.pk}))
    assert image.status_code == 200 and image["Content-Type"] == "image/png"


def test_inpainting_through_the_studio_keeps_every_pixel_outside_the_mask(
        curator_client, django_capture_on_commit_callbacks, item, tiny_sd, premise_done):
    mask = box_mask(box=(8, 24, 40, 56))
    edit = attempt_of(start(curator_client, django_capture_on_commit_callbacks, item, mask=png_file(mask),
                            **form(str(tiny_sd.inpaint), "inpaint", parent=f"attempt:{premise_done.pk}")))
    edit.refresh_from_db()
    assert edit.status == ImageAttempt.Status.DONE, edit.error
    before, after = pixels(premise_done.image), pixels(edit.image)
    outside = np.asarray(mask) == 0
    assert after.shape == before.shape == (SIZE, SIZE, 3)
    assert np.array_equal(after[outside], before[outside])
    assert not np.array_equal(after[~outside], before[~outside])


def test_a_library_image_of_the_item_can_be_the_parent(curator_client, django_capture_on_commit_callbacks, item,
                                                       tiny_sd, curator, tmp_path):
    path = tmp_path / "premise.png"
    PILImage.fromarray(np.random.default_rng(0).integers(0, 255, (SIZE, SIZE, 3), dtype=np.uint8)).save(path)
    library = ingest_path(path, user=curator)
    ItemMedia.objects.create(item=item, role="premise", image=library)
    attempt = attempt_of(start(curator_client, django_capture_on_commit_callbacks, item, "hypothesis2",
                               **form(str(tiny_sd.text2image), "image2image", parent=f"image:{library.pk}")))
    attempt.refresh_from_db()
    assert attempt.status == ImageAttempt.Status.DONE, attempt.error
    assert (attempt.parent, attempt.parent_image) == (None, library)
    roots = selectors.attempt_tree(item)
    assert roots[0].image == library and roots[0].roles == ["premise"]
    assert [node.attempt for node in roots[0].children] == [attempt]


def test_a_second_job_in_the_same_worker_reuses_the_loaded_pipeline(curator_client, django_capture_on_commit_callbacks,
                                                                   item, tiny_sd):
    diffusion.clear_pipeline_cache()
    first = attempt_of(start(curator_client, django_capture_on_commit_callbacks, item, **form(str(tiny_sd.text2image))))
    second = attempt_of(start(curator_client, django_capture_on_commit_callbacks, item,
                              **form(str(tiny_sd.text2image), seed="7")))
    first_job, second_job = Job.objects.get(pk=first.job_id), Job.objects.get(pk=second.job_id)
    assert first_job.status == second_job.status == Job.Status.SUCCEEDED
    assert first_job.result["reused_pipeline"] is False
    assert second_job.result["reused_pipeline"] is True
    assert "pipeline already loaded" in second_job.log


def test_a_generation_that_fails_leaves_the_attempt_failed_with_the_reason_and_no_image(
        curator_client, django_capture_on_commit_callbacks, item, media_root, register_model):
    # a registered hub id passes the checks, but offline and not in the cache it cannot be loaded
    register_model("nobody/no-such-model", backend="diffusion")
    attempt = attempt_of(start(curator_client, django_capture_on_commit_callbacks, item,
                               **form("nobody/no-such-model")))
    attempt.refresh_from_db()
    assert attempt.status == ImageAttempt.Status.FAILED
    assert "Cannot load 'nobody/no-such-model'" in attempt.error
    assert not attempt.image and attempt.duration_s is None
    assert Job.objects.get(pk=attempt.job_id).status == Job.Status.FAILED
    assert files_under(media_root / "attempts") == []
    node = lxml.html.fromstring(curator_client.get(studio_url(item)).content).get_element_by_id(f"attempt-{attempt.pk}")
    assert "Cannot load" in node.xpath('.//*[@data-role="attempt-error"]')[0].text_content()


# --- Picking the final image ---------------------------------------------------------------------------

def test_picking_a_final_image_attaches_it_to_the_item_as_a_probed_library_image(
        curator_client, curator, django_capture_on_commit_callbacks, item, tiny_sd, premise_done):
    with django_capture_on_commit_callbacks(execute=True):
        response = curator_client.post(reverse("studio-attempt-final", kwargs={"pk": premise_done.pk}),
                                       HTTP_ACCEPT="application/json")
    assert response.status_code == 200, response.content
    linked = ItemMedia.objects.get(item=item, role="premise")
    library = linked.image
    assert response.json()["image"] == library.pk
    assert library.status == MediaAsset.Status.READY and library.thumbnail  # probed like an upload
    assert (library.source, library.width, library.height, library.format) == ("derived", SIZE, SIZE, "png")
    assert library.provenance["image_attempt"] == premise_done.pk
    assert library.provenance["generation"]["seed"] == SEED
    with library.file.open("rb") as handle:
        assert np.array_equal(np.asarray(PILImage.open(handle).convert("RGB")), pixels(premise_done.image))
    premise_done.refresh_from_db()
    assert premise_done.chosen_by == curator and premise_done.chosen_at is not None

    # another attempt replaces it; the library keeps both
    other = attempt_of(start(curator_client, django_capture_on_commit_callbacks, item,
                             **form(str(tiny_sd.text2image), seed="99")))
    with django_capture_on_commit_callbacks(execute=True):
        curator_client.post(reverse("studio-attempt-final", kwargs={"pk": other.pk}))
    assert ItemMedia.objects.get(item=item, role="premise").image.provenance["image_attempt"] == other.pk
    assert Image.objects.count() == 2
    page = lxml.html.fromstring(curator_client.get(studio_url(item)).content)
    assert page.get_element_by_id(f"attempt-{other.pk}").xpath('.//*[@data-role="final-badge"]')
    assert not page.get_element_by_id(f"attempt-{premise_done.pk}").xpath('.//*[@data-role="final-badge"]')
    assert page.xpath("//figure[@data-image-id]")[0].get("data-image-id") == str(
        ItemMedia.objects.get(item=item, role="premise").image_id)


def test_an_unfinished_attempt_cannot_be_picked(curator_client, curator, item):
    queued = ImageAttempt.objects.create(item=item, slot="premise", mode="text2image", prompt="p", seed=1,
                                         model_id="m", created_by=curator)
    response = curator_client.post(reverse("studio-attempt-final", kwargs={"pk": queued.pk}),
                                   HTTP_ACCEPT="application/json")
    assert response.status_code == 409 and "queued" in response.json()["error"]
    assert not ItemMedia.objects.filter(item=item).exists()


# --- Refusals ------------------------------------------------------------------------------------------

def test_annotators_and_researchers_may_not_use_the_studio(annotator_client, researcher_client, annotator, item,
                                                           tiny_sd, premise_done):
    for client in (annotator_client, researcher_client):
        assert client.get(studio_url(item)).status_code == 403
        assert client.get(reverse("studio")).status_code == 403
        assert client.post(start_url(item), form(str(tiny_sd.text2image))).status_code == 403
        assert client.post(reverse("studio-attempt-final", kwargs={"pk": premise_done.pk})).status_code == 403
        assert client.get(reverse("studio-attempt-image", kwargs={"pk": premise_done.pk})).status_code == 403
    with pytest.raises(studio.StudioError) as refused:
        studio.start_attempt(item, "premise", studio.parse_settings(form(str(tiny_sd.text2image))), user=annotator)
    assert refused.value.status == 403
    assert ImageAttempt.objects.count() == 1


def test_a_frozen_version_refuses_new_attempts_and_picks(curator_client, django_capture_on_commit_callbacks, item,
                                                         tiny_sd, premise_done, media_root):
    BenchmarkVersion.objects.filter(pk=item.version_id).update(frozen=True, checksum="0" * 64)
    before = files_under(media_root)
    response = start(curator_client, django_capture_on_commit_callbacks, item, **form(str(tiny_sd.text2image)))
    assert response.status_code == 409 and "frozen" in response.json()["error"]
    response = curator_client.post(reverse("studio-attempt-final", kwargs={"pk": premise_done.pk}),
                                   HTTP_ACCEPT="application/json")
    assert response.status_code == 409 and "frozen" in response.json()["error"]
    assert ImageAttempt.objects.count() == 1 and not ItemMedia.objects.exists() and not Image.objects.exists()
    assert files_under(media_root) == before
    page = curator_client.get(studio_url(item))  # still readable, without the form
    assert page.status_code == 200 and b'id="frozen-notice"' in page.content and b'id="studio-form"' not in page.content


def _jpeg(size=SIZE):
    buffer = io.BytesIO()
    PILImage.new("RGB", (size, size), "white").save(buffer, format="JPEG")
    buffer.seek(0)
    buffer.name = "mask.png"
    return buffer


@pytest.mark.parametrize(("mask", "error"), [
    (lambda: None, "needs a mask"),
    (_jpeg, "must be a PNG"),
    (lambda: png_file(box_mask(size=SIZE * 2)), "128×128 pixels; the parent image is 64×64"),
    (lambda: png_file(PILImage.new("L", (SIZE, SIZE), 0)), "empty"),
    (lambda: png_file(PILImage.new("RGBA", (SIZE, SIZE), (255, 255, 255, 0))), "empty"),  # transparent = keep
    (lambda: io.BytesIO(b"\x89PNG\r\n\x1a\n" + b"\x00" * 200), "not a readable PNG"),
])
def test_bad_masks_are_refused_with_400_and_leave_nothing(curator_client, django_capture_on_commit_callbacks, item,
                                                          tiny_sd, premise_done, media_root, mask, error):
    before = files_under(media_root)
    upload = mask()
    if upload is not None and not hasattr(upload, "name"):
        upload.name = "mask.png"
    response = start(curator_client, django_capture_on_commit_callbacks, item, mask=upload,
                     **form(str(tiny_sd.inpaint), "inpaint", parent=f"attempt:{premise_done.pk}"))
    assert response.status_code == 400, response.content
    assert error in response.json()["error"]
    assert ImageAttempt.objects.count() == 1 and Job.objects.filter(kind=studio.JOB_KIND).count() == 1
    assert files_under(media_root) == before


@pytest.mark.parametrize(("fields", "error"), [
    ({"seed": "-1"}, "seed must be between"),
    ({"steps": "many"}, "Steps must be a whole number"),
    ({"guidance": "nan"}, "finite"),
    ({"scheduler": "MagicScheduler"}, "Unknown scheduler"),
    ({"width": "60"}, "multiple of 8"),
    ({"prompt": "  "}, "Write a prompt"),
    ({"model_id": "/no/such/folder"}, "Unknown model '/no/such/folder': it is not in the model registry"),
    ({"model_id": "tiny-sd-inpaint"}, "not registered for image generation"),
    ({"revision": "main"}, "registered without a revision"),
    ({"mode": "image2image"}, "starts from a parent image"),
    ({"mode": "image2image", "parent": "attempt:987654"}, "is not an attempt of item"),
    ({"mode": "image2image", "parent": "video:1"}, "Unknown parent"),
    ({"mode": "collage"}, "Choose a mode"),
])
def test_bad_requests_are_refused_with_400_and_leave_nothing(curator_client, django_capture_on_commit_callbacks, item,
                                                             tiny_sd, media_root, fields, error):
    response = start(curator_client, django_capture_on_commit_callbacks, item,
                     **{**form(str(tiny_sd.text2image)), **fields})
    assert response.status_code == 400, response.content
    assert error in response.json()["error"]
    assert not ImageAttempt.objects.exists() and not Job.objects.exists()
    assert files_under(media_root) == []


def test_a_parent_whose_sides_are_not_multiples_of_8_is_refused(curator_client, curator,
                                                               django_capture_on_commit_callbacks, item, tiny_sd,
                                                               tmp_path):
    path = tmp_path / "odd.png"
    PILImage.new("RGB", (60, 44), "gray").save(path)
    odd = ingest_path(path, user=curator)
    ItemMedia.objects.create(item=item, role="premise", image=odd)
    response = start(curator_client, django_capture_on_commit_callbacks, item, "hypothesis1",
                     **form(str(tiny_sd.text2image), "image2image", parent=f"image:{odd.pk}"))
    assert response.status_code == 400
    assert "60×44 pixels" in response.json()["error"] and "multiple of 8" in response.json()["error"]
    assert not ImageAttempt.objects.exists()


def test_text_to_image_with_a_parent_is_refused_by_the_service(curator, item, tiny_sd, premise_done):
    with pytest.raises(studio.StudioError, match="Text-to-image starts from the prompt alone"):
        studio.start_attempt(item, "premise", studio.parse_settings(form(str(tiny_sd.text2image))), user=curator,
                             parent=studio.Parent(attempt=premise_done))


def test_without_javascript_a_refusal_comes_back_as_the_page_with_the_error(curator_client, item, tiny_sd):
    response = curator_client.post(start_url(item), form(str(tiny_sd.text2image), seed="-5", prompt="my own words"))
    assert response.status_code == 400
    page = lxml.html.fromstring(response.content)
    assert "seed must be between" in page.get_element_by_id("studio-error").text_content()
    assert page.get_element_by_id("studio-prompt").text_content() == "my own words"  # what was typed is kept


# --- Comparison, live parts, API -----------------------------------------------------------------------

def test_an_attempt_is_compared_with_its_parent_side_by_side(curator_client, django_capture_on_commit_callbacks,
                                                             item, tiny_sd, premise_done):
    child = attempt_of(start(curator_client, django_capture_on_commit_callbacks, item, "hypothesis1",
                             **form(str(tiny_sd.text2image), "image2image", parent=f"attempt:{premise_done.pk}",
                                    prompt="the glass is empty")))
    url = reverse("studio-compare", kwargs={"item_id": item.pk}) + f"?a=attempt:{child.pk}"
    page = lxml.html.fromstring(curator_client.get(url).content)
    assert page.get_element_by_id("compare-left").get("data-key") == f"attempt:{child.pk}"
    assert page.get_element_by_id("compare-right").get("data-key") == f"attempt:{premise_done.pk}"
    differing = {row.get("data-fact") for row in page.xpath('//table[@id="compare-facts"]//tr[@class="differs"]')}
    assert {"Prompt", "Mode", "Slot", "Parent"} <= differing
    assert "Seed" not in differing and "Model" not in differing
    assert page.xpath('//*[@id="compare-left"]//form[@data-studio-final]')
    other_item = BenchmarkItem.objects.create(version=item.version, external_id="t-2", payload=item.payload)
    wrong = reverse("studio-compare", kwargs={"item_id": other_item.pk}) + f"?a=attempt:{child.pk}"
    assert curator_client.get(wrong).status_code == 404


def test_the_live_parts_follow_a_running_attempt(curator_client, curator, item):
    job = Job.objects.create(kind=studio.JOB_KIND, queue="gpu", status=Job.Status.RUNNING, progress=40,
                             message="Generating")
    running = ImageAttempt.objects.create(item=item, slot="premise", mode="text2image", prompt="p", seed=1,
                                          model_id="m", created_by=curator, job=job, status="running")
    data = curator_client.get(studio_url(item) + "?part=live").json()
    assert data["running"] == [running.pk]
    node = lxml.html.fromstring(data["tree"]).xpath(f'//*[@id="attempt-{running.pk}"]')[0]
    assert node.get("data-job-id") == str(job.pk)
    assert node.xpath(".//progress")[0].get("value") == "40"
    Job.objects.filter(pk=job.pk).update(status=Job.Status.CANCELLED)  # a job that ended without running it
    data = curator_client.get(studio_url(item) + "?part=live").json()
    assert data["running"] == []
    assert 'data-status="failed"' in data["tree"]
    detail = curator_client.get(reverse("studio-attempt", kwargs={"pk": running.pk})).json()
    assert detail["status"] == "failed" and detail["job"] == job.pk


def test_the_api_mirrors_the_studio(curator, django_capture_on_commit_callbacks, item, tiny_sd, annotator):
    api = logged_in_api(curator)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/image-attempts/", {"item": item.pk, "slot": "premise", "mode": "text2image",
                                                     "prompt": "a kitchen", "model_id": str(tiny_sd.text2image),
                                                     "steps": STEPS, "width": SIZE, "height": SIZE}, format="json")
    assert response.status_code == 201, response.content
    attempt = ImageAttempt.objects.get(pk=response.json()["id"])
    attempt.refresh_from_db()
    assert attempt.status == "done"
    # the defaults of the page: the photorealistic suffix and the triplet's seed
    assert (attempt.prompt, attempt.seed) == ("a kitchen" + diffusion.PHOTOREALISTIC_SUFFIX, SEED)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/image-attempts/", {
            "item": item.pk, "slot": "hypothesis1", "mask": png_file(box_mask()),
            **form(str(tiny_sd.inpaint), "inpaint", parent=f"attempt:{attempt.pk}")}, format="multipart")
    assert response.status_code == 201, response.content
    listed = api.get(f"/api/image-attempts/?item={item.pk}&slot=hypothesis1").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [(row["parent"], row["has_mask"], row["status"]) for row in rows] == [(attempt.pk, True, "done")]
    with django_capture_on_commit_callbacks(execute=True):
        picked = api.post(f"/api/image-attempts/{attempt.pk}/final/")
    assert picked.status_code == 200 and picked.json()["chosen_by"] == curator.username
    assert ItemMedia.objects.filter(item=item, role="premise").exists()
    bad = api.post("/api/image-attempts/", {"item": item.pk, "slot": "nowhere", **form(str(tiny_sd.text2image))})
    assert bad.status_code == 404 and "not an image slot" in bad.json()["error"]
    assert logged_in_api(annotator).get("/api/image-attempts/").status_code == 403


def test_the_navigation_offers_the_studio_to_curators(curator_client, researcher_client):
    assert re.search(r'data-nav="Image studio"', curator_client.get("/").content.decode())
    assert not re.search(r'data-nav="Image studio"', researcher_client.get("/").content.decode())


def test_the_studio_page_renders_for_an_admin(admin_user, item):
    assert logged_in_client(admin_user).get(studio_url(item)).status_code == 200
