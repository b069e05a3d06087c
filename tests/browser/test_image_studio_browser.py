"""The image studio in a real browser: a curator paints a mask over the premise's image (brush, undo,
clear), starts an inpainting job with the tiny inpainting pipeline, watches its progress while the
worker thread runs it, compares the new image with its parent and picks it as the slot's final image."""

import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage
from playwright.sync_api import expect

from config.roles import CURATOR
from generation import diffusion
from tests.conftest import ingest_path

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT = Path("/tmp/image_studio_page.png")
SIZE = 64


@pytest.fixture
def held_generation(monkeypatch):
    """Generation waits until the test lets it go, so that the page can be seen following a running job."""
    release = threading.Event()
    started = threading.Event()
    generate = diffusion.generate

    def held(request, device=None):
        started.set()
        assert release.wait(60), "the test never let the generation go"
        return generate(request, device)

    monkeypatch.setattr(diffusion, "generate", held)
    yield started, release
    release.set()


def drag(page, canvas, points):
    """Paint a stroke through points given as fractions of the canvas's width and height."""
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + points[0][0] * box["width"], box["y"] + points[0][1] * box["height"])
    page.mouse.down()
    for x, y in points[1:]:
        page.mouse.move(box["x"] + x * box["width"], box["y"] + y * box["height"], steps=4)
    page.mouse.up()


def painted(page) -> int:
    return page.evaluate("paintedPixels()")


def test_curator_paints_a_mask_inpaints_watches_compares_and_picks_the_final_image(
        live_server, browser_page, celery_worker, media_root, make_user, login, tiny_sd, tiny_sd_registry,
        held_generation, tmp_path):
    from annotation.curation_models import ImageAttempt
    from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, ItemMedia

    started, release = held_generation
    curator = make_user("cora", CURATOR)
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="nleye"), label="studio")
    item = BenchmarkItem.objects.create(version=version, external_id="t-1", payload={
        "kind": "triplet", "premise": "A boy holds a glass of milk.", "hypothesis1": "The glass is empty.",
        "hypothesis2": "The glass is on the floor.", "label": 1})
    source = tmp_path / "premise.png"
    PILImage.fromarray(np.random.default_rng(3).integers(0, 255, (SIZE, SIZE, 3), dtype=np.uint8)).save(source)
    premise = ingest_path(source, user=curator)
    ItemMedia.objects.create(item=item, role="premise", image=premise)

    page = login(browser_page, curator)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Image studio", exact=True).click()
    page.locator(f'tr[data-item-id="{item.pk}"] a[data-slot="premise"]').click()
    expect(page.get_by_role("heading", name="t-1 · premise")).to_be_visible()
    expect(page.locator("#studio-parent")).to_have_value(f"image:{premise.pk}")  # the slot's current image
    canvas = page.locator("#mask-canvas")
    expect(canvas).to_be_visible()
    expect(page.locator("#mask-status")).to_contain_text(f"{SIZE}×{SIZE}")
    assert canvas.evaluate("c => [c.width, c.height]") == [SIZE, SIZE]

    # paint, undo, paint, clear, paint again: the tools work on the canvas
    page.locator("#mask-brush").evaluate("(el) => { el.value = 6; el.dispatchEvent(new Event('input')); }")
    expect(page.locator("#mask-brush-size")).to_have_text("6")
    drag(page, canvas, [(0.2, 0.2), (0.4, 0.25)])
    assert painted(page) > 0
    page.get_by_role("button", name="Undo").click()
    assert painted(page) == 0
    drag(page, canvas, [(0.6, 0.6), (0.6, 0.8)])
    page.get_by_role("button", name="Clear").click()
    assert painted(page) == 0
    drag(page, canvas, [(0.25, 0.25), (0.5, 0.25), (0.5, 0.5)])
    page.locator("#mask-eraser").check()
    drag(page, canvas, [(0.5, 0.5), (0.5, 0.45)])  # erase a little of it
    page.locator('input[name="mask-tool"][value="brush"]').check()
    strokes = painted(page)
    assert 0 < strokes < SIZE * SIZE / 2

    page.locator("#studio-steps").fill("3")
    page.locator("#studio-inpaint-model").select_option("tiny-sd-inpaint")
    page.locator("#studio-prompt").fill("a boy holds an empty glass")
    with page.expect_response(lambda r: r.url.endswith("/attempts/") and r.request.method == "POST") as answer:
        page.get_by_role("button", name="Inpaint the painted region").click()
    assert answer.value.status == 201, answer.value.text()
    created = answer.value.json()
    expect(page.locator("#studio-form-message")).to_contain_text(f"Attempt #{created['id']} queued")

    # the node appears under its parent (the library image) and follows the job while it runs
    node = page.locator(f"#attempt-{created['id']}")
    expect(node).to_have_count(1)
    assert node.evaluate("li => li.parentElement.closest('li').dataset.key") == f"image:{premise.pk}"
    assert started.wait(30), "the worker did not start the generation"
    expect(node.locator("progress")).to_have_attribute("value", "10", timeout=15_000)
    expect(node.locator(".job-message")).to_contain_text("Generating with")
    release.set()
    expect(page.locator(f'#attempt-{created["id"]}[data-status="done"]')).to_have_count(1, timeout=60_000)
    node = page.locator(f"#attempt-{created['id']}")
    expect(node.locator(".node-thumb img")).to_be_visible()
    assert not page.js_errors, page.js_errors

    attempt = ImageAttempt.objects.get(pk=created["id"])
    assert (attempt.mode, attempt.parent_image_id, attempt.created_by) == ("inpaint", premise.pk, curator)
    with attempt.mask.open("rb") as handle:
        mask = np.asarray(PILImage.open(handle).convert("L"))
    assert mask.shape == (SIZE, SIZE) and set(np.unique(mask)) == {0, 255}
    assert abs(int((mask == 255).sum()) - strokes) <= strokes // 10 + 4  # the PNG holds what was painted
    assert mask[16, 16] == 255 and mask[SIZE - 4, SIZE - 4] == 0

    # compare it with its parent, then pick it
    node.get_by_role("link", name="compare with parent").click()
    expect(page.locator("#compare-left")).to_have_attribute("data-key", f"attempt:{attempt.pk}")
    expect(page.locator("#compare-right")).to_have_attribute("data-key", f"image:{premise.pk}")
    expect(page.locator('#compare-facts tr[data-fact="Mode"]')).to_have_class("differs")
    for side in ("#compare-left", "#compare-right"):
        page.wait_for_function("selector => { const img = document.querySelector(selector); "
                               "return img && img.complete && img.naturalWidth > 0; }", arg=f"{side} img")
        assert page.locator(f"{side} img").evaluate("img => img.naturalWidth") == SIZE
    page.locator("#overlay-fade").fill("80")
    assert page.locator("#overlay-top").evaluate("img => img.style.opacity") == "0.8"
    page.get_by_role("button", name=f"Pick #{attempt.pk} as final premise").click()
    expect(page.locator("#compare-message")).to_contain_text(f"Attempt #{attempt.pk} is now the premise image")
    linked = ItemMedia.objects.get(item=item, role="premise")
    assert linked.image.provenance["image_attempt"] == attempt.pk

    page.locator("#back-to-studio").click()
    expect(page.locator(f'#attempt-{attempt.pk} [data-role="final-badge"]')).to_be_visible()
    expect(page.locator(".studio-current")).to_have_attribute("data-image-id", str(linked.image_id))
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert not page.js_errors, page.js_errors
