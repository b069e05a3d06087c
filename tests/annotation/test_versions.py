"""Benchmark versions: fill a draft, freeze it, and nothing about it can change afterwards."""

import pytest
from django.contrib.admin.sites import site as admin_site
from django.core.exceptions import ValidationError
from django.db.models.deletion import ProtectedError
from django.test import RequestFactory

from annotation import versions
from annotation.benchmarks import registry
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, FrozenError, ItemMedia
from annotation.payloads import validate_payload
from evaluation.freeze_checks import requests_check
from tests.conftest import cvqa_payload, ingest_path, logged_in_client

pytestmark = pytest.mark.django_db


def make_version(label: str, user=None) -> BenchmarkVersion:
    return BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label=label,
                                           created_by=user)


def fill(version, image, *, answer="two"):
    versions.add_item(version, "q-001", cvqa_payload(answer), media={"image": image})
    versions.add_item(version, "q-002", cvqa_payload("yes", type="boolean", new_answer="no"))
    return version


@pytest.fixture
def frozen(curator, image):
    version = fill(make_version("v1", curator), image)
    return versions.freeze(version)


def test_freeze_sets_checksum_and_count(frozen):
    assert frozen.frozen is True
    assert frozen.frozen_at is not None
    assert frozen.item_count == 2
    assert len(frozen.checksum) == 64
    assert versions.content_checksum(frozen) == frozen.checksum


def test_frozen_items_cannot_change(frozen):
    item = frozen.items.get(external_id="q-001")
    original = dict(item.payload)

    item.payload["answer"] = "three"
    with pytest.raises(FrozenError):
        item.save()
    with pytest.raises(FrozenError):
        item.delete()
    with pytest.raises(FrozenError):
        BenchmarkItem.objects.filter(version=frozen).update(payload={})
    with pytest.raises(FrozenError):
        BenchmarkItem.objects.filter(pk=item.pk).delete()
    with pytest.raises(FrozenError):
        BenchmarkItem.objects.create(version=frozen, external_id="q-003", payload=cvqa_payload())
    with pytest.raises(FrozenError):
        versions.add_item(frozen, "q-003", cvqa_payload())

    assert BenchmarkItem.objects.get(pk=item.pk).payload == original
    assert frozen.items.count() == 2


def test_frozen_item_media_cannot_change(frozen, image, coffee, curator):
    other = ingest_path(coffee, user=curator, probe=False)
    link = ItemMedia.objects.get(item__version=frozen)
    item = link.item

    link.image = other
    with pytest.raises(FrozenError):
        link.save()
    with pytest.raises(FrozenError):
        link.delete()
    with pytest.raises(FrozenError):
        ItemMedia.objects.filter(pk=link.pk).update(role="renamed")
    with pytest.raises(FrozenError):
        ItemMedia.objects.filter(item__version=frozen).delete()
    with pytest.raises(FrozenError):
        ItemMedia.objects.create(item=item, role="extra", image=other)

    link.refresh_from_db()
    assert (link.role, link.image_id) == ("image", image.pk)
    assert ItemMedia.objects.filter(item__version=frozen).count() == 1
    # The media themselves are protected while a version uses them.
    with pytest.raises(ProtectedError):
        image.delete()


def test_frozen_version_cannot_change_or_go(frozen):
    checksum = frozen.checksum
    frozen.label = "v1-renamed"
    with pytest.raises(FrozenError, match="label cannot change"):
        frozen.save()
    frozen.refresh_from_db()
    frozen.checksum = "0" * 64
    with pytest.raises(FrozenError, match="checksum"):
        frozen.save()
    frozen.refresh_from_db()
    with pytest.raises(FrozenError):
        frozen.delete()
    with pytest.raises(FrozenError, match="already frozen"):
        versions.freeze(frozen)

    frozen.refresh_from_db()
    assert (frozen.label, frozen.checksum, frozen.frozen) == ("v1", checksum, True)
    # Fields that do not define the content (the description) may still be edited.
    frozen.description = "Release notes"
    frozen.save()
    assert BenchmarkVersion.objects.get(pk=frozen.pk).description == "Release notes"


def test_frozen_version_cannot_change_or_go_in_bulk(frozen):
    with pytest.raises(FrozenError):
        BenchmarkVersion.objects.filter(pk=frozen.pk).update(label="renamed", frozen=False)
    with pytest.raises(FrozenError):
        BenchmarkVersion.objects.filter(pk=frozen.pk).delete()
    frozen.refresh_from_db()
    assert (frozen.label, frozen.frozen, frozen.items.count()) == ("v1", True, frozen.item_count)


def test_draft_version_can_change(curator, image):
    version = fill(make_version("draft", curator), image)
    item = version.items.get(external_id="q-002")
    item.payload["answer"] = "no"
    item.save()
    BenchmarkItem.objects.filter(pk=item.pk).update(external_id="q-002b")
    version.label = "draft-renamed"
    version.save()
    ItemMedia.objects.filter(item__version=version).delete()
    assert version.items.filter(external_id="q-002b").exists()
    version.delete()
    assert not BenchmarkItem.objects.filter(pk=item.pk).exists()


def test_add_item_validates_the_payload(curator):
    version = make_version("draft", curator)
    with pytest.raises(ValidationError) as excinfo:
        versions.add_item(version, "bad", {"kind": "real", "query": "Q?", "type": "sideways"})
    messages = excinfo.value.messages
    assert "cvqa/real: missing field 'answer'" in messages
    assert any("field 'type' must be one of" in m for m in messages)
    assert version.items.count() == 0


def test_every_rule_accepts_a_complete_payload():
    """Sanity check of the payload rules used throughout: each kind has a valid example."""
    examples = {
        ("blackswan", "video"): {"id": "v1", "preevent": 0.0, "event": 1.5, "postevent": 3},
        ("blackswan", "mcq"): {"id": "v1", "mcq_task": 1, "mcq_options": ["a", "b", "c"], "mcq_label": 2},
        ("blackswan", "yn"): {"id": "v1", "def_task": 2, "exp": "because", "def_label": "no"},
        ("cvqa", "real"): cvqa_payload(),
        ("cvqa", "synthetic"): cvqa_payload(kind="synthetic", type="abs_counting_3"),
        ("cvqa", "source"): {"question": "How many dogs?", "answers": ["2", "2", "3"], "answer": "2",
                             "type": "numerical"},
        ("nleye", "triplet"): {"premise": "p", "hypothesis1": "a", "hypothesis2": "b", "label": 1},
        ("nleye", "brief"): {"brief": "Write about cooking.", "suggested_category": "physical",
                             "suggested_direction": "forward", "suggested_duration": "short",
                             "suggested_domain": "education"},
        ("cvrr", "qa"): {"dimension": "d", "video_id": "v", "question": "q", "answer": "a"},
        ("cvrr", "video"): {"dimension": "d", "video_id": "v", "source": "charades", "metadata": {"scene": "kitchen"}},
        ("maia", "question"): {"video": "v", "category": "c", "question": "q", "answers": list("abcdefgh")},
        ("maia", "question_draft"): {"video": "v", "category": "c", "question": "q", "answers": list("abc")},
    }
    assert {(b.slug, k) for b in registry.all() for k in b.kinds} == set(examples)
    for (benchmark, kind), fields in examples.items():
        validate_payload(benchmark, {"kind": kind, **fields})
    with pytest.raises(ValidationError, match="needs 'kind'"):
        validate_payload("cvqa", {"query": "q"})


# --- Checksums ------------------------------------------------------------------------------

def test_checksum_is_stable_and_content_addressed(curator, image, coffee):
    first = versions.freeze(fill(make_version("a", curator), image))
    same = versions.freeze(fill(make_version("b", curator), image))
    other_answer = versions.freeze(fill(make_version("c", curator), image, answer="three"))
    other_image = ingest_path(coffee, user=curator, probe=False)
    other_media = versions.freeze(fill(make_version("d", curator), other_image))

    assert first.checksum == same.checksum
    assert other_answer.checksum != first.checksum
    assert other_media.checksum != first.checksum
    assert len({first.checksum, other_answer.checksum, other_media.checksum}) == 3


# --- API ------------------------------------------------------------------------------------

def test_api_create_fill_freeze(curator_api, image):
    created = curator_api.post("/api/versions/", {"benchmark": "cvqa", "label": "api-1"}, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["created_by"] == "cur" and created.json()["frozen"] is False
    version_id = created.json()["id"]
    items_url = f"/api/versions/{version_id}/items/"

    added = curator_api.post(items_url, {"external_id": "q-1", "payload": cvqa_payload(),
                                         "media_refs": [{"role": "image", "kind": "image", "asset_id": image.pk}]},
                             format="json")
    assert added.status_code == 201, added.json()
    assert added.json()["media"] == [{"role": "image", "kind": "image", "asset_id": image.pk}]

    duplicate = curator_api.post(items_url, {"external_id": "q-1", "payload": cvqa_payload()}, format="json")
    assert duplicate.status_code == 409 and "already exists" in duplicate.json()["error"]

    invalid = curator_api.post(items_url, {"external_id": "q-2", "payload": {"kind": "real"}}, format="json")
    assert invalid.status_code == 400
    assert "missing field 'query'" in invalid.json()["error"]
    assert "cvqa/real: missing field 'answer'" in invalid.json()["errors"]

    frozen = curator_api.post(f"/api/versions/{version_id}/freeze/")
    assert frozen.status_code == 200, frozen.json()
    assert frozen.json()["frozen"] is True and frozen.json()["item_count"] == 1
    assert len(frozen.json()["checksum"]) == 64

    refused = curator_api.post(items_url, {"external_id": "q-9", "payload": cvqa_payload()}, format="json")
    assert refused.status_code == 409
    assert "frozen" in refused.json()["error"]
    again = curator_api.post(f"/api/versions/{version_id}/freeze/")
    assert again.status_code == 409 and "already frozen" in again.json()["error"]
    assert BenchmarkItem.objects.filter(version_id=version_id).count() == 1

    listed = curator_api.get(items_url).json()
    assert [row["external_id"] for row in listed["results"]] == ["q-1"]


def test_api_freezing_an_empty_version_lists_the_problem(curator_api, draft_version):
    response = curator_api.post(f"/api/versions/{draft_version.pk}/freeze/")
    assert response.status_code == 400
    assert response.json()["errors"] == ["a version needs at least one item"]
    assert isinstance(response.json()["error"], str) and "at least one item" in response.json()["error"]
    draft_version.refresh_from_db()
    assert draft_version.frozen is False and draft_version.checksum == ""


def test_api_freezing_with_invalid_payloads_lists_every_problem(curator_api, draft_version):
    # Items written around add_item (e.g. an old import) are checked again when freezing.
    BenchmarkItem.objects.create(version=draft_version, external_id="ok", payload=cvqa_payload())
    BenchmarkItem.objects.create(version=draft_version, external_id="broken", payload={"kind": "real", "query": ""})
    response = curator_api.post(f"/api/versions/{draft_version.pk}/freeze/")
    assert response.status_code == 400
    problems = response.json()["errors"]
    assert "broken: cvqa/real: field 'query' must be a non-empty string (got '')" in problems
    assert "broken: cvqa/real: missing field 'answer'" in problems
    assert not any(p.startswith("ok:") for p in problems)
    draft_version.refresh_from_db()
    assert draft_version.frozen is False


def test_api_researcher_reads_but_cannot_write(researcher_api, frozen):
    assert researcher_api.get(f"/api/versions/{frozen.pk}/").json()["checksum"] == frozen.checksum
    assert researcher_api.post(f"/api/versions/{frozen.pk}/freeze/").status_code == 403
    refused = researcher_api.post(f"/api/versions/{frozen.pk}/items/",
                                  {"external_id": "x", "payload": cvqa_payload()}, format="json")
    assert refused.status_code == 403 and refused.json()["error"] == "Only curators add items."


# --- Django admin ---------------------------------------------------------------------------

def test_admin_shows_frozen_items_read_only(admin_user, frozen):
    item = frozen.items.get(external_id="q-001")
    model_admin = admin_site._registry[BenchmarkItem]
    request = RequestFactory().get("/")
    request.user = admin_user
    assert model_admin.has_change_permission(request, item) is False
    assert model_admin.has_delete_permission(request, item) is False
    assert model_admin.has_view_permission(request, item) is True
    assert admin_site._registry[BenchmarkVersion].has_change_permission(request, frozen) is False

    client = logged_in_client(admin_user)
    url = f"/admin/annotation/benchmarkitem/{item.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    assert page.context["has_change_permission"] is False
    assert b'name="_save"' not in page.content

    original = dict(item.payload)
    posted = client.post(url, {
        "version": frozen.pk, "external_id": "hacked", "payload": '{"kind": "real"}',
        "media-TOTAL_FORMS": "0", "media-INITIAL_FORMS": "0", "media-MIN_NUM_FORMS": "0",
        "media-MAX_NUM_FORMS": "1000",
    })
    assert posted.status_code == 403
    item.refresh_from_db()
    assert (item.external_id, item.payload) == ("q-001", original)

    assert client.post(f"/admin/annotation/benchmarkitem/{item.pk}/delete/", {"post": "yes"}).status_code == 403
    version_post = client.post(f"/admin/annotation/benchmarkversion/{frozen.pk}/change/",
                               {"benchmark": frozen.benchmark_id, "label": "renamed", "source": "curation"})
    assert version_post.status_code == 403
    assert BenchmarkItem.objects.filter(pk=item.pk).exists()
    assert BenchmarkVersion.objects.get(pk=frozen.pk).label == "v1"


def test_admin_can_edit_a_draft_item(admin_user, draft_version):
    """The control case: the same POST on a draft item goes through."""
    item = versions.add_item(draft_version, "q-001", cvqa_payload())
    client = logged_in_client(admin_user)
    response = client.post(f"/admin/annotation/benchmarkitem/{item.pk}/change/", {
        "version": draft_version.pk, "external_id": "q-001-edited",
        "payload": '{"kind": "real", "query": "Q?", "answer": "A", "new_query": "N?", "new_answer": "B", '
                   '"type": "direct"}',
        "media-TOTAL_FORMS": "0", "media-INITIAL_FORMS": "0", "media-MIN_NUM_FORMS": "0",
        "media-MAX_NUM_FORMS": "1000",
    })
    assert response.status_code == 302, response.content[:2000]
    item.refresh_from_db()
    assert item.external_id == "q-001-edited"
    assert item.payload["answer"] == "A"


def test_admin_bulk_delete_of_frozen_versions_is_refused(admin_user, frozen):
    client = logged_in_client(admin_user)
    response = client.post("/admin/annotation/benchmarkversion/", {
        "action": "delete_selected", "_selected_action": [frozen.pk], "post": "yes"})
    assert response.status_code == 403  # Django's delete action asks has_delete_permission per object
    assert BenchmarkVersion.objects.filter(pk=frozen.pk).exists()
    assert frozen.items.count() == 2


# --- A version that cannot produce its evaluation requests is never frozen -----------------------

def unevaluable(version, image):
    """Valid payloads (annotation.payloads accepts them) that the C-VQA request builder refuses."""
    versions.add_item(version, "q-001", cvqa_payload(), media={"image": image})
    versions.add_item(version, "q-002", cvqa_payload(new_answer="a few"), media={"image": image})
    versions.add_item(version, "q-003", cvqa_payload("perhaps", type="boolean"), media={"image": image})
    return version


def test_freezing_builds_every_items_requests_and_names_those_that_fail(curator, image):
    version = unevaluable(make_version("v1", curator), image)

    with pytest.raises(versions.FreezeRefused) as refused:
        versions.freeze(version)

    assert refused.value.messages == [
        "item 'q-002' cannot be evaluated: C-VQA numerical answer 'a few' is not a number.",
        "item 'q-003' cannot be evaluated: C-VQA boolean answer 'perhaps' is not yes or no."]
    assert [external_id for external_id, _reason in refused.value.items] == ["q-002", "q-003"]
    version.refresh_from_db()
    assert version.frozen is False and version.checksum == ""


def test_the_evaluation_app_registers_the_requests_check():
    assert requests_check in versions._freeze_checks


def test_a_refusal_names_the_first_items_and_counts_the_rest(curator, image, monkeypatch):
    version = unevaluable(make_version("v1", curator), image)
    monkeypatch.setattr(versions, "SHOWN_ITEMS", 1)
    with pytest.raises(versions.FreezeRefused) as refused:
        versions.freeze(version)
    assert refused.value.messages[1:] == ["… and 1 more item(s) that cannot be evaluated"]


def test_api_freezing_an_unevaluable_version_names_the_items(curator_api, curator, image):
    version = unevaluable(make_version("api-1", curator), image)
    response = curator_api.post(f"/api/versions/{version.pk}/freeze/")
    assert response.status_code == 400
    assert "item 'q-002' cannot be evaluated: C-VQA numerical answer 'a few' is not a number." in \
        response.json()["errors"]
    version.refresh_from_db()
    assert version.frozen is False


def test_admin_freezing_an_unevaluable_version_names_the_items(admin_user, curator, image):
    version = unevaluable(make_version("admin-1", curator), image)
    client = logged_in_client(admin_user)
    response = client.post("/admin/annotation/benchmarkversion/", {
        "action": "freeze_versions", "_selected_action": [version.pk]}, follow=True)
    shown = [str(message) for message in response.context["messages"]]
    assert any("cvqa:admin-1" in text and "item 'q-003' cannot be evaluated" in text for text in shown), shown
    version.refresh_from_db()
    assert version.frozen is False
