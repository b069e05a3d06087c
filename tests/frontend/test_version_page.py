"""The version page: payloads as labelled fields (not Python reprs), media previews, search and
paging; freezing from the page only with an explicit confirmation, for curators."""

import pytest
from django.urls import reverse

from annotation import version_pages, versions
from annotation.models import BenchmarkVersion
from config.roles import CURATOR, RESEARCHER
from tests.conftest import cvqa_payload, logged_in_client, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def filled(draft_version, image):
    for n in range(version_pages.ITEMS_PER_PAGE + 5):
        versions.add_item(draft_version, f"cup-{n:02d}", cvqa_payload(answer=str(n)), media={"image": image})
    versions.add_item(draft_version, "zebra", cvqa_payload(query="Stripes on the striped animal?", answer="40"))
    return draft_version


def page_of(user, version, **params) -> str:
    response = logged_in_client(user).get(reverse("version-detail", kwargs={"pk": version.pk}), params)
    assert response.status_code == 200
    return response.content.decode()


def test_payloads_are_labelled_fields_with_media_previews(filled, image):
    page = page_of(make_user("rhea", RESEARCHER), filled)
    assert "{&#x27;kind&#x27;" not in page and "{'kind'" not in page  # no Python repr
    assert "<dt>Query</dt><dd>How many cups are on the table?</dd>" in page
    assert "<dt>New answer</dt><dd>one</dd>" in page
    assert f'<img src="{reverse("media-image-file", kwargs={"pk": image.pk})}"' in page
    assert "freeze-form" not in page  # researchers do not freeze


def test_readable_payload_follows_the_schema_order_and_keeps_extra_fields():
    rows = version_pages.readable_payload("cvqa", {**cvqa_payload(), "note": {"a": 1}, "tags": ["x", "y"]})
    labels = [row["label"] for row in rows]
    assert labels[:4] == ["Query", "Answer", "New query", "New answer"]
    assert {"name": "tags", "label": "Tags", "kind": "list", "value": ["x", "y"]} in rows
    assert any(row["name"] == "note" and row["kind"] == "json" for row in rows)
    assert "kind" not in [row["name"] for row in rows]


def test_search_and_paging(filled):
    user = make_user("rhea", RESEARCHER)
    first = page_of(user, filled)
    assert 'data-item="cup-00"' in first and "Page 1 of 2" in first and 'data-item="zebra"' not in first
    second = page_of(user, filled, page=2)
    assert 'data-item="zebra"' in second and 'data-item="cup-00"' not in second
    found = page_of(user, filled, q="striped")
    assert 'data-item="zebra"' in found and 'data-item="cup-01"' not in found and "1 matching" in found
    assert 'data-item="cup-07"' in page_of(user, filled, q="CUP-07")
    assert "No item matches" in page_of(user, filled, q="nothing like this")


def test_freezing_needs_the_confirmation(filled):
    curator = make_user("cora", CURATOR)
    page = page_of(curator, filled)
    assert 'id="freeze-form"' in page and 'name="confirm" value="yes" required' in page
    url = reverse("version-freeze", kwargs={"pk": filled.pk})
    client = logged_in_client(curator)
    refused = client.post(url, {})
    assert refused.status_code == 400 and "Tick the box to confirm" in refused.content.decode()
    assert BenchmarkVersion.objects.get(pk=filled.pk).frozen is False

    done = client.post(url, {"confirm": "yes"})
    assert done.status_code == 302, done.content.decode()[:2000]
    frozen = BenchmarkVersion.objects.get(pk=filled.pk)
    assert frozen.frozen is True and frozen.checksum
    assert "freeze-form" not in page_of(curator, frozen)
    again = client.post(url, {"confirm": "yes"})
    assert again.status_code == 409 and "already frozen" in again.content.decode()


def test_researchers_cannot_freeze(filled):
    response = logged_in_client(make_user("rhea", RESEARCHER)).post(
        reverse("version-freeze", kwargs={"pk": filled.pk}), {"confirm": "yes"})
    assert response.status_code == 403
    assert BenchmarkVersion.objects.get(pk=filled.pk).frozen is False
