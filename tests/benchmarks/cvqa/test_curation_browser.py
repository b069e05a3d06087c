"""C-VQA curation in a real browser: a curator imports easy-vqa source questions with their images from
the sources page, then labels one of the images on the subgroup page."""

import csv
import shutil

import pytest
from easy_vqa import get_test_image_paths, get_test_questions
from playwright.sync_api import expect

from annotation.models import BenchmarkVersion, Image, SubgroupLabel
from config.roles import CURATOR

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]


def test_curator_imports_sources_and_labels_an_image(live_server, browser_page, media_root, make_user, login,
                                                     tmp_path):

    questions, answers, image_ids = get_test_questions()
    paths = get_test_image_paths()
    rows = list(zip(questions, answers, image_ids, strict=True))[:12]
    images = []
    with (tmp_path / "questions.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["image", "question", "answer"])
        for question, answer, image_id in rows:
            target = tmp_path / f"{image_id}.png"
            if not target.exists():
                shutil.copy(paths[image_id], target)
                images.append(str(target))
            writer.writerow([target.name, question, answer])
    kept = [row for row in rows if row[1] in ("yes", "no")]

    page = browser_page
    login(page, make_user("cora", CURATOR))
    page.get_by_role("navigation", name="Main").get_by_role("link", name="C-VQA curation", exact=True).click()
    page.get_by_role("link", name="Source questions").click()
    form = page.locator("#sources-form")
    form.locator("select[name=format]").select_option("csv")
    form.locator("input[name=table]").set_input_files(str(tmp_path / "questions.csv"))
    form.locator("input[name=images]").set_input_files(images)
    form.get_by_role("button", name="Import").click()
    expect(page.locator("#import-report")).to_contain_text(f"{len(kept)} question")
    expect(page.locator("#source-questions tbody tr")).to_have_count(len(kept))
    version = BenchmarkVersion.objects.get(label="sources")
    assert version.items.count() == len(kept) and not version.frozen

    image = Image.objects.order_by("pk").first()
    page.locator(".crumbs").get_by_role("link", name="C-VQA curation").click()
    page.get_by_role("link", name="Subgroup labels").click()
    setter = page.locator("#label-set-form")
    setter.get_by_label("Library image #").fill(str(image.pk))
    setter.get_by_label("Label").fill("circle-scene")
    setter.get_by_role("button", name="Save").click()
    expect(page.locator(f'#labels tr[data-image-id="{image.pk}"]')).to_contain_text("circle-scene")
    assert SubgroupLabel.objects.get(image=image).label == "circle-scene"
    assert page.js_errors == []
