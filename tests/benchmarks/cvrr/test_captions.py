"""CVRR-ES curation, first steps (SPEC §4 "Curation" 1–2, seeds/003 §3.1–3.2): the 11 dimensions as data
(defaults, curators' edits, idempotence), library videos assigned to dimensions in the video pool
(source, metadata, duplicates, permissions, the pool never frozen), the captioning study (k = 2,
validation) and the caption a curator picks or merges for QA generation."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import versions
from annotation.benchmarks.cvrr import (
    caption_choice,
    captions,
    demo,
    dimension_records,
    dimensions,
    expert_group,
    pools,
    qa_generation,
    qa_pool,
    stages,
    video_pool,
)
from annotation.crowd import assignment, review, submissions
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.models import Study
from annotation.curation_models import CategoryDefinition, CurationRecord
from annotation.models import BenchmarkItem, BenchmarkVersion, ItemMedia, MediaAsset
from annotation.versions import add_item
from config.roles import ANNOTATOR
from evaluation.benchmarks.cvrr import benchmark as cvrr_evaluation
from frontend.navigation import entries_for
from generation.models import Proposal, ProposalSet
from tests.conftest import ingest_path, logged_in_client, make_user

pytestmark = pytest.mark.django_db

CAPTION_A = ("A cartoon rabbit walks out of his burrow onto a green meadow, stretches and smiles at a "
             "butterfly; his shadow falls on the grass to his left.")
CAPTION_B = ("A big white rabbit leaves a hole under a tree, yawns in the sunshine and watches a butterfly "
             "flying past; the trees cast long shadows.")
MERGED = ("A big white cartoon rabbit walks out of his burrow under a tree onto a green meadow, stretches, "
          "and smiles at a butterfly flying past; shadows fall to the left.")
# the study-creation page's form for a captioning study
STUDY_FORM = {"step_kind": captions.STUDY_KIND, "form_schema": "{}", "annotators_per_item": 2,
              "count_accepted_only": "on", "lease_seconds": 1800, "estimated_minutes": 4, "pay_per_item": "0",
              "currency": "USD", "gold_share": 0, "expert_share": 0, "expert_first": 0, "min_accept_rate": 0,
              "min_reviews_for_exclusion": 3, "recruitment_platform": "none", "required_submissions": 1}


@pytest.fixture
def bunny(db, bigbuckbunny, curator):
    return ingest_path(bigbuckbunny, user=curator)


@pytest.fixture
def pool_item(curator, bunny):
    return video_pool.assign_video(curator, bunny, "interpretation_of_visual_context", "internet",
                                   "title: Big Buck Bunny\nlicence: CC BY 3.0")


def _submit(study, worker, data):
    claim = assignment.claim_next(study, worker)
    assert claim is not None
    claim = submissions.load_claim(claim.pk)
    submission, created, _ = submissions.submit(claim, worker, data)
    assert created
    return submission


@pytest.fixture
def captioned(curator, pool_item):
    """An open captioning study over the pool video with both captions in."""
    study = captions.create_caption_study(curator, "Caption the videos", open_now=True)
    first = _submit(study, make_user("writer1", ANNOTATOR), {"caption": CAPTION_A})
    second = _submit(study, make_user("writer2", ANNOTATOR), {"caption": CAPTION_B})
    return study, first, second


# --- Dimensions as data ---------------------------------------------------------------------------

def test_the_evaluation_reads_the_dimensions_from_the_annotation_layer():
    assert cvrr_evaluation.DIMENSIONS is dimensions.DIMENSIONS
    assert len(dimensions.DIMENSIONS) == 11
    assert set(dimensions.DEFAULTS) == set(dimensions.DIMENSIONS)
    for texts in dimensions.DEFAULTS.values():
        assert all(texts[part].strip() for part in ("description", "caption", "qa"))


def test_ensure_dimensions_makes_the_defaults_once_and_keeps_curators_edits(curator):
    rows = dimension_records.ensure_dimensions()
    assert [row.key for row in rows] == list(dimensions.DIMENSIONS)
    assert all(row.updated_by is None for row in rows)  # nobody edited the defaults yet
    partial = next(row for row in rows if row.key == "partial_actions")
    assert partial.name == "Partial actions" and "cracking an egg" in partial.description
    caption = partial.instructions["caption"]
    assert "follow-up" in caption and dimensions.CAPTION_COMMON in caption
    assert "robustness" in partial.instructions["qa"].lower()
    dimension_records.edit_dimension("partial_actions", {
        "name": "Partial actions (edited)", "description": "Mine.", "caption": "Say where it stops.",
        "qa": "Ask about what follows."}, curator)
    CategoryDefinition.objects.filter(key="time_order_understanding").delete()
    again = dimension_records.ensure_dimensions()
    assert len(again) == 11 and CategoryDefinition.objects.filter(benchmark__slug=pools.SLUG).count() == 11
    edited = CategoryDefinition.objects.get(key="partial_actions")
    assert (edited.name, edited.description, edited.instructions) == (
        "Partial actions (edited)", "Mine.", {"caption": "Say where it stops.", "qa": "Ask about what follows."})
    assert edited.updated_by == curator
    assert CategoryDefinition.objects.get(key="time_order_understanding").name == "Time order understanding"


def test_the_dimension_pages_list_and_edit_with_who_and_when(curator, curator_client):
    page = curator_client.get(reverse("cvrr-dimensions"))
    assert page.status_code == 200
    text = page.content.decode()
    assert text.count('data-key="') == 11 and "Understanding of emotional context" in text
    url = reverse("cvrr-dimension", args=["understanding_emotional_context"])
    form = curator_client.get(url).content.decode()
    assert "tears of joy" in form and "QA-generation instruction" in form
    response = curator_client.post(url, {"name": "Emotional context", "description": "Edited.",
                                         "caption": "Describe faces.", "qa": "Ask why they feel so."})
    assert response.status_code == 302
    row = CategoryDefinition.objects.get(key="understanding_emotional_context")
    assert row.name == "Emotional context" and row.instructions["caption"] == "Describe faces."
    listing = curator_client.get(reverse("cvrr-dimensions")).content.decode()
    assert "Emotional context" in listing and curator.username in listing
    assert f"Last edited by {curator.username}" in curator_client.get(url).content.decode()


@pytest.mark.parametrize("bad", [
    {"name": "", "caption": "x", "qa": "y"},
    {"name": "   ", "caption": "x", "qa": "y"},
    {"name": "N", "caption": "", "qa": "y"},
    {"name": "N", "caption": "x", "qa": ""},
    {"name": "N", "caption": "x" * (dimension_records.MAX_INSTRUCTION + 1), "qa": "y"},
    {"name": "N" * 201, "caption": "x", "qa": "y"},
])
def test_a_bad_dimension_edit_is_400_and_writes_nothing(curator_client, bad):
    before = {row.key: (row.name, row.instructions) for row in dimension_records.ensure_dimensions()}
    response = curator_client.post(reverse("cvrr-dimension", args=["partial_actions"]), bad)
    assert response.status_code == 400
    assert 'class="field-error"' in response.content.decode()
    after = {row.key: (row.name, row.instructions) for row in CategoryDefinition.objects.all()}
    assert after == before


def test_dimension_pages_refuse_unknown_keys_and_other_roles(annotator_client, researcher_client, curator_client):
    assert curator_client.get(reverse("cvrr-dimension", args=["no_such_dimension"])).status_code == 404
    url = reverse("cvrr-dimension", args=["partial_actions"])
    for client in (annotator_client, researcher_client):
        assert client.get(url).status_code == 403
        assert client.post(url, {"name": "x", "caption": "x", "qa": "x"}).status_code == 403
    assert not CategoryDefinition.objects.filter(name="x").exists()


# --- Videos assigned to dimensions ----------------------------------------------------------------

def test_a_curator_assigns_a_library_video_to_a_dimension_on_the_page(curator, curator_client, bunny):
    page = curator_client.get(reverse("cvrr-videos")).content.decode()
    assert f'value="{bunny.pk}"' in page and "Something-Something-v2" in page
    response = curator_client.post(reverse("cvrr-videos"), {
        "video": bunny.pk, "dimension": "partial_actions", "source": "charades",
        "metadata": '{"script": "A person cracks an egg.", "actions": ["c061", "c154"]}'})
    assert response.status_code == 302
    item = BenchmarkItem.objects.get(version__label=pools.VIDEO_POOL_LABEL)
    assert item.version.source == BenchmarkVersion.Source.CURATION and not item.version.frozen
    assert item.external_id == "partial_actions/bigbuckbunny"
    assert item.payload == {"kind": "video", "dimension": "partial_actions", "video_id": "bigbuckbunny",
                            "source": "charades",
                            "metadata": {"script": "A person cracks an egg.", "actions": ["c061", "c154"]}}
    assert ItemMedia.objects.get(item=item).video == bunny and ItemMedia.objects.get(item=item).role == "video"
    record = CurationRecord.objects.get(item=item)
    assert record.stage == stages.VIDEO_ASSIGNED and record.author == curator
    assert record.working["assigned"]["by"] == curator.username
    listing = curator_client.get(reverse("cvrr-videos") + "?dimension=partial_actions").content.decode()
    assert "Charades" in listing and "Assigned to a dimension" in listing


def test_key_value_metadata_and_the_same_video_in_a_second_dimension(curator, bunny, pool_item):
    assert pool_item.payload["metadata"] == {"title": "Big Buck Bunny", "licence": "CC BY 3.0"}
    second = video_pool.assign_video(curator, bunny.pk, "partial_actions", "yfcc100m", "")
    assert second.payload["video_id"] == pool_item.payload["video_id"] and "metadata" not in second.payload
    assert second.version_id == pool_item.version_id


def test_a_video_is_assigned_to_a_dimension_once(curator, curator_client, bunny, pool_item):
    response = curator_client.post(reverse("cvrr-videos"), {
        "video": bunny.pk, "dimension": "interpretation_of_visual_context", "source": "other", "metadata": ""})
    assert response.status_code == 400
    assert "already assigned" in response.content.decode()
    assert BenchmarkItem.objects.filter(version__label=pools.VIDEO_POOL_LABEL).count() == 1


@pytest.mark.parametrize("change, phrase", [
    ({"dimension": "nonsense"}, "Choose one of the CVRR-ES dimensions"),
    ({"dimension": ""}, "Choose one of the CVRR-ES dimensions"),
    ({"source": "youtube"}, "Choose where the video comes from"),
    ({"video": "98765"}, "There is no video #98765"),
    ({"video": "abc"}, "There is no video"),
    ({"metadata": "{not json"}, "not valid JSON"),
    ({"metadata": "[1, 2]"}, "must be a JSON object"),
    ({"metadata": "title Big Buck Bunny"}, "Metadata line 1 is not"),
    ({"metadata": "a: 1\na: 2"}, "repeats the key"),
    ({"metadata": json.dumps({"long": "x" * (video_pool.MAX_METADATA_BYTES + 1)})}, "at most"),
    ({"metadata": json.dumps({f"k{n}": n for n in range(video_pool.MAX_METADATA_KEYS + 1)})}, "keys"),
    ({"metadata": json.dumps({"a": {"b": {"c": {"d": {"e": 1}}}}})}, "nested"),
])
def test_bad_assignments_are_400_and_write_nothing(curator_client, bunny, change, phrase):
    form = {"video": bunny.pk, "dimension": "partial_actions", "source": "ssv2", "metadata": "", **change}
    response = curator_client.post(reverse("cvrr-videos"), form)
    assert response.status_code == 400
    assert phrase in response.content.decode()
    assert not BenchmarkItem.objects.filter(version__benchmark__slug=pools.SLUG).exists()
    assert not CurationRecord.objects.exists()


def test_a_video_still_being_probed_cannot_be_assigned(curator, bikes):
    probing = ingest_path(bikes, user=curator, probe=False)
    assert probing.status == MediaAsset.Status.PROBING
    with pytest.raises(pools.CurationError) as refused:
        video_pool.assign_video(curator, probing, "partial_actions", "ssv2")
    assert refused.value.status == 400 and "being probed" in refused.value.message


def test_only_curators_assign_videos(annotator, researcher, annotator_client, researcher_client, bunny):
    for user in (annotator, researcher):
        with pytest.raises(pools.CurationError) as refused:
            video_pool.assign_video(user, bunny, "partial_actions", "ssv2")
        assert refused.value.status == 403
    for client in (annotator_client, researcher_client):
        assert client.post(reverse("cvrr-videos"), {"video": bunny.pk, "dimension": "partial_actions",
                                                    "source": "ssv2"}).status_code == 403
    assert not BenchmarkItem.objects.filter(version__benchmark__slug=pools.SLUG).exists()


def test_the_video_pool_is_never_frozen(pool_item):
    with pytest.raises(versions.FreezeRefused) as refused:
        versions.freeze(pool_item.version)
    assert "not a question" in " ".join(refused.value.messages)
    pool_item.version.refresh_from_db()
    assert not pool_item.version.frozen


def test_the_assign_command_mirrors_the_page(curator, bunny, capsys):
    call_command("cvrr_assign_video", "--curator", curator.username, "--video", str(bunny.pk),
                 "--dimension", "time_order_understanding", "--source", "ssv2", "--metadata", "label: pushing")
    item = BenchmarkItem.objects.get(external_id="time_order_understanding/bigbuckbunny")
    assert item.payload["metadata"] == {"label": "pushing"} and item.external_id in capsys.readouterr().out
    with pytest.raises(CommandError, match="already assigned"):
        call_command("cvrr_assign_video", "--curator", curator.username, "--video", str(bunny.pk),
                     "--dimension", "time_order_understanding", "--source", "ssv2")


# --- The captioning study -------------------------------------------------------------------------

def test_a_captioning_study_shows_each_video_with_its_guideline_and_metadata(curator, pool_item):
    dimension_records.edit_dimension("interpretation_of_visual_context", {
        "name": "Visual context", "description": "", "caption": "Describe every shadow.", "qa": "Ask."}, curator)
    study = captions.create_caption_study(curator, "Caption the videos")
    assert study.step_kind == captions.STUDY_KIND and study.annotators_per_item == 2
    assert study.form_schema == captions.FORM and study.state == Study.State.DRAFT
    item = study.items.get()
    assert item.benchmark_item_id == pool_item.pk and item.video == video_pool.video_of(pool_item)
    assert item.payload == {"dimension": "Visual context", "caption_guideline": "Describe every shadow.",
                            "video_source": "Internet",
                            "metadata": {"title": "Big Buck Bunny", "licence": "CC BY 3.0"}}


def test_the_worker_page_shows_the_video_the_guideline_and_the_metadata(curator, pool_item):
    study = captions.create_caption_study(curator, "Caption the videos", open_now=True)
    worker = make_user("writer", ANNOTATOR)
    page = logged_in_client(worker).post(reverse("crowd-work", args=[study.slug]), follow=True)
    assert page.status_code == 200
    text = page.content.decode()
    assert "<video" in text and "Caption guideline" in text and "Big Buck Bunny" in text
    assert "Detailed caption of the video" in text


def test_two_annotators_caption_each_video(curator, pool_item):
    study = captions.create_caption_study(curator, "Caption the videos", open_now=True)
    _submit(study, make_user("w1", ANNOTATOR), {"caption": CAPTION_A})
    _submit(study, make_user("w2", ANNOTATOR), {"caption": CAPTION_B})
    assert assignment.claim_next(study, make_user("w3", ANNOTATOR)) is None
    assert [c.text for c in caption_choice.captions(pool_item)] == [CAPTION_A, CAPTION_B]


@pytest.mark.parametrize("data", [
    {}, {"caption": ""}, {"caption": "   "}, {"caption": "Too short."},
    {"caption": "x" * 60},  # long enough, yet one word
    {"caption": "word " * 1000}, {"caption": CAPTION_A, "extra": "field"}, {"caption": 12345},
])
def test_bad_captions_are_refused(curator, pool_item, data):
    study = captions.create_caption_study(curator, "Caption the videos", open_now=True)
    worker = make_user("w1", ANNOTATOR)
    claim = submissions.load_claim(assignment.claim_next(study, worker).pk)
    with pytest.raises(InvalidSubmission) as refused:
        submissions.submit(claim, worker, data)
    assert refused.value.status == 400
    assert not caption_choice.captions(pool_item)


def test_a_bad_caption_through_the_api_is_400(curator, pool_item):
    study = captions.create_caption_study(curator, "Caption the videos", open_now=True)
    worker = make_user("w1", ANNOTATOR)
    claim = assignment.claim_next(study, worker)
    api = logged_in_client(worker)
    response = api.post(reverse("api-claim-submit", args=[claim.pk]), {"data": {"caption": "short"}},
                        content_type="application/json")
    assert response.status_code == 400
    response = api.post(reverse("api-claim-submit", args=[claim.pk]), {"data": {"caption": CAPTION_A}},
                        content_type="application/json")
    assert response.status_code in (200, 201)


def test_the_study_page_creates_a_captioning_study(curator, curator_client, pool_item):
    response = curator_client.post(reverse("crowd-study-new"), {**STUDY_FORM, "name": "Captions from the page"})
    assert response.status_code == 302, response.content.decode()[:2000]
    study = Study.objects.get(name="Captions from the page")
    assert study.form_schema == captions.FORM and study.items.get().benchmark_item_id == pool_item.pk
    detail = curator_client.get(reverse("crowd-study-detail", args=[study.slug])).content.decode()
    assert reverse("cvrr-caption-study", args=[study.slug]) in detail


def test_a_captioning_study_needs_videos_awaiting_a_caption(curator, curator_client):
    with pytest.raises(CrowdError) as refused:
        captions.create_caption_study(curator, "Nothing to caption")
    assert refused.value.status == 409 and "assign videos" in refused.value.message
    response = curator_client.post(reverse("cvrr-captions-new"), {"name": "Nothing", "k": "2"})
    assert response.status_code == 409 and not Study.objects.exists()
    response = curator_client.post(reverse("crowd-study-new"), {**STUDY_FORM, "name": "Nothing"})
    assert response.status_code == 409 and "assign videos" in response.content.decode()
    assert not Study.objects.exists()


def test_the_captions_page_creates_a_study_and_refuses_bad_settings(curator_client, pool_item):
    assert curator_client.post(reverse("cvrr-captions-new"), {"name": "", "k": "2"}).status_code == 400
    assert curator_client.post(reverse("cvrr-captions-new"), {"name": "X", "k": "two"}).status_code == 400
    assert curator_client.post(reverse("cvrr-captions-new"), {"name": "X", "k": "0"}).status_code == 400
    assert not Study.objects.exists()
    response = curator_client.post(reverse("cvrr-captions-new"), {"name": "Round 1", "k": "2", "open": "1"})
    assert response.status_code == 302
    study = Study.objects.get(name="Round 1")
    assert study.state == Study.State.OPEN and study.items.count() == 1


def test_only_curators_create_captioning_studies(annotator, pool_item):
    with pytest.raises(CrowdError) as refused:
        captions.create_caption_study(annotator, "Mine")
    assert refused.value.status == 403 and not Study.objects.exists()
    with pytest.raises(CrowdError) as unknown:
        captions.create_caption_study(pool_item.curation.author, "Bad items", items=[987654])
    assert unknown.value.status == 404 and not Study.objects.exists()


def test_the_caption_study_command(curator, pool_item, capsys):
    call_command("cvrr_caption_study", "--name", "Captions by command", "--curator", curator.username,
                 "--item", str(pool_item.pk), "--open")
    study = Study.objects.get(name="Captions by command")
    assert study.annotators_per_item == 2 and study.state == Study.State.OPEN and study.items.count() == 1
    assert study.slug in capsys.readouterr().out
    with pytest.raises(CommandError, match="There is no user"):
        call_command("cvrr_caption_study", "--name", "X", "--curator", "nobody")


# --- Picking or merging the caption ---------------------------------------------------------------

def test_the_captions_list_shows_videos_with_both_captions_in(curator_client, captioned, pool_item):
    study, _first, _second = captioned
    text = curator_client.get(reverse("cvrr-captions")).content.decode()
    assert f'data-item-id="{pool_item.pk}"' in text and study.name in text
    per_study = curator_client.get(reverse("cvrr-caption-study", args=[study.slug])).content.decode()
    assert f'data-item-id="{pool_item.pk}"' in per_study
    assert curator_client.get(reverse("cvrr-caption-study", args=["no-such"])).status_code == 404


def test_a_curator_picks_one_caption(curator, curator_client, captioned, pool_item):
    _study, first, second = captioned
    page = curator_client.get(reverse("cvrr-caption", args=[pool_item.pk])).content.decode()
    assert CAPTION_A in page and CAPTION_B in page and "<video" in page
    response = curator_client.post(reverse("cvrr-caption", args=[pool_item.pk]),
                                   {"how": "picked", "submission": str(second.pk)})
    assert response.status_code == 302
    pool_item.refresh_from_db()
    assert pool_item.payload["caption"] == CAPTION_B
    record = CurationRecord.objects.get(item=pool_item)
    assert record.stage == stages.CAPTIONED
    provenance = record.working["caption"]
    assert provenance["from"] == [second.pk] and provenance["how"] == "picked" and provenance["by"] == curator.username
    assert provenance["at"]
    assert record.working["assigned"]["by"] == curator.username  # the earlier working fields stay
    shown = curator_client.get(reverse("cvrr-caption", args=[pool_item.pk])).content.decode()
    assert "Picked by" in shown and "Caption chosen" in shown


def test_a_curator_merges_the_captions(curator, captioned, pool_item):
    _study, first, second = captioned
    caption_choice.choose_caption(pool_item.pk, curator, how="merged", sources=[str(first.pk), str(second.pk)],
                                  text=f"  {MERGED}  ")
    pool_item.refresh_from_db()
    assert pool_item.payload["caption"] == MERGED
    assert pool_item.payload["kind"] == "video" and pool_item.payload["source"] == "internet"
    record = CurationRecord.objects.get(item=pool_item)
    assert record.working["caption"]["from"] == sorted([first.pk, second.pk])
    assert record.working["caption"]["how"] == "merged" and record.stage == stages.CAPTIONED
    assert caption_choice.listed()["ready"][0]["caption"] == MERGED


@pytest.mark.parametrize("form, phrase", [
    ({"how": "averaged", "submission": "FIRST"}, "how must be one of"),
    ({"how": "picked"}, "Name the caption"),
    ({"how": "picked", "submission": ["FIRST", "SECOND"]}, "Pick exactly one"),
    ({"how": "picked", "submission": "abc"}, "submission numbers"),
    ({"how": "picked", "submission": "987654"}, "is not a caption of"),
    ({"how": "merged", "submission": ["FIRST", "SECOND"], "text": "too short"}, "The merged caption"),
    ({"how": "merged", "submission": ["FIRST", "SECOND"], "text": "x" * 5000}, "The merged caption"),
    ({"how": "merged", "submission": ["FIRST", "SECOND"]}, "The merged caption"),
])
def test_bad_choices_are_400_and_write_nothing(curator_client, captioned, pool_item, form, phrase):
    _study, first, second = captioned
    ids = {"FIRST": str(first.pk), "SECOND": str(second.pk)}
    raw = form.get("submission")
    if raw is not None:
        form = {**form, "submission": [ids.get(v, v) for v in raw] if isinstance(raw, list) else ids.get(raw, raw)}
    response = curator_client.post(reverse("cvrr-caption", args=[pool_item.pk]), form)
    assert response.status_code == 400
    assert phrase in response.content.decode()
    pool_item.refresh_from_db()
    assert "caption" not in pool_item.payload
    assert CurationRecord.objects.get(item=pool_item).stage == stages.VIDEO_ASSIGNED


def test_a_caption_of_another_video_or_a_rejected_one_does_not_count(curator, bikes, captioned, pool_item):
    study, first, _second = captioned
    other_video = ingest_path(bikes, user=curator)
    other = video_pool.assign_video(curator, other_video, "multiple_actions_in_a_single_video", "hmdb51")
    with pytest.raises(pools.CurationError) as foreign:
        caption_choice.choose_caption(other.pk, curator, how="picked", sources=[first.pk])
    assert foreign.value.status == 400
    review.reject(first, curator, reason="describes another video")
    assert [c.id for c in caption_choice.captions(pool_item)] == [_second.pk]
    with pytest.raises(pools.CurationError):
        caption_choice.choose_caption(pool_item.pk, curator, how="picked", sources=[first.pk])
    assert caption_choice.listed()["ready"] == []


def test_choosing_is_for_curators_on_pool_videos_of_an_unfrozen_pool(curator, annotator, annotator_client,
                                                                      curator_client, captioned, pool_item):
    _study, first, _second = captioned
    url = reverse("cvrr-caption", args=[pool_item.pk])
    assert annotator_client.get(url).status_code == 403
    assert annotator_client.post(url, {"how": "picked", "submission": first.pk}).status_code == 403
    with pytest.raises(pools.CurationError) as refused:
        caption_choice.choose_caption(pool_item.pk, annotator, how="picked", sources=[first.pk])
    assert refused.value.status == 403
    qa = add_item(pool_item.version, "qa-1", {"kind": "qa", "dimension": "partial_actions", "video_id": "v",
                                              "question": "q", "answer": "a"})
    assert curator_client.get(reverse("cvrr-caption", args=[qa.pk])).status_code == 404
    assert curator_client.post(reverse("cvrr-caption", args=[987654]), {"how": "picked"}).status_code == 404
    BenchmarkVersion.objects.filter(pk=pool_item.version_id).update(frozen=True, checksum="x")
    response = curator_client.post(url, {"how": "picked", "submission": first.pk})
    assert response.status_code == 409 and "frozen" in response.content.decode()
    pool_item.refresh_from_db()
    assert "caption" not in pool_item.payload


# --- The hub, the navigation and the demo ---------------------------------------------------------

def test_the_hub_lists_the_curation_pages_for_curators(curator, annotator, researcher, curator_client, pool_item):
    text = curator_client.get(reverse("cvrr-curation")).content.decode()
    for name in ("cvrr-dimensions", "cvrr-videos", "cvrr-captions"):
        assert reverse(name) in text
    assert "Assigned to a dimension: 1" in text
    assert "CVRR-ES curation" in [entry.label for entry in entries_for(curator)]
    assert "CVRR-ES curation" not in [entry.label for entry in entries_for(annotator)]
    assert "CVRR-ES curation" not in [entry.label for entry in entries_for(researcher)]
    version_page = curator_client.get(reverse("version-detail", args=[pool_item.version_id])).content.decode()
    assert reverse("cvrr-curation") in version_page


def test_the_demo_assigns_the_sample_videos_and_opens_a_captioning_study(curator, bunny, video):
    made = demo.demo_studies(curator)
    assert [study.slug for study in made] == [demo.DEMO_CAPTIONS_SLUG, demo.DEMO_FILTRATION_SLUG,
                                              demo.DEMO_EXPERTS_SLUG]
    study = made[0]
    assert study.slug == demo.DEMO_CAPTIONS_SLUG and study.state == Study.State.OPEN
    assert study.annotators_per_item == 2 and study.items.count() == 2
    assert {item.payload["dimension"] for item in video_pool.pool_items()} == {
        "interpretation_of_visual_context", "multiple_actions_in_a_single_video"}
    assert demo.demo_studies(curator) == made
    assert video_pool.pool_items().count() == 2 and CategoryDefinition.objects.count() == 11


def test_items_added_later_name_a_pool_video(curator, curator_client, curator_api, bunny, pool_item):
    study = captions.create_caption_study(curator, "Caption the videos")
    other = video_pool.assign_video(curator, bunny, "partial_actions", "ssv2")
    url = reverse("crowd-study-items", args=[study.slug])
    refused = curator_client.post(url, {"source": "media", "video": [bunny.pk]})
    assert refused.status_code == 400 and "video_item" in refused.content.decode()
    upload = SimpleUploadedFile("items.jsonl", b'{"external_id": "again", "payload": {"video_item": %d}}\n'
                                b'{"external_id": "nope", "payload": {"video_item": 987654}}\n' % pool_item.pk)
    refused = curator_client.post(url, {"source": "file", "file": upload})
    assert refused.status_code == 400
    assert "already has video" in refused.content.decode() and "not a CVRR-ES video" in refused.content.decode()
    assert study.items.count() == 1
    api = curator_api.post(reverse("api-study-items", args=[study.slug]),
                           [{"external_id": "x", "payload": {"title": "free"}}], format="json")
    assert api.status_code == 400 and study.items.count() == 1
    added = curator_api.post(reverse("api-study-items", args=[study.slug]),
                             [{"external_id": "second", "payload": {"video_item": other.pk}}], format="json")
    assert added.status_code == 201
    item = study.items.get(external_id="second")
    assert item.benchmark_item_id == other.pk and item.video_id == bunny.pk
    assert item.payload["dimension"] == "Partial actions" and item.payload["video_source"] == "Something-Something-v2"


def test_the_demo_filters_and_assesses_pairs_written_for_it_with_no_model(curator, bunny, video):
    make_user("annotator", ANNOTATOR)
    demo.demo_studies(curator)
    for item in video_pool.pool_items():
        record = CurationRecord.objects.get(item=item)
        assert item.payload["caption"] and record.stage == "captioned"
        assert record.working["caption"]["how"] == "written" and record.working["caption"]["from"] == []
        assert "demo" in record.working["caption"]["note"]
    sets = ProposalSet.objects.all()
    assert [(s.backend, s.model_id, s.job) for s in sets] == [("imported", demo.DEMO_WRITER, None)]
    pairs = Proposal.objects.filter(proposal_set__in=sets)
    assert pairs.count() == 6 and set(pairs.values_list("status", flat=True)) == {"ok"}
    flagged = [p for p in pairs if qa_generation.flags(p.fields, p.inputs)]
    assert len(flagged) == 2  # one pair per video whose question contains its answer
    assert sorted(pairs.values_list("fields__question_kind", flat=True)).count("robustness") == 2

    review = Study.objects.get(slug=demo.DEMO_FILTRATION_SLUG)
    assert (review.state, review.step_kind) == (Study.State.OPEN, "cvrr_filtration")
    assert set(review.items.values_list("proposal__outcome", flat=True)) == {"undecided"}
    assert review.items.count() == 4 and {p.pk for p in flagged} <= set(review.items.values_list("proposal", flat=True))
    kept = qa_pool.records()
    assert kept.count() == 2 and {r.working["source"]["model_id"] for r in kept} == {demo.DEMO_WRITER}
    assert {r.working["source"]["backend"] for r in kept} == {"imported"}
    experts = Study.objects.get(slug=demo.DEMO_EXPERTS_SLUG)
    assert (experts.state, experts.step_kind, experts.items.count()) == (Study.State.OPEN, "cvrr_expert_assessment", 2)
    assert [user.username for user in expert_group.members()] == ["annotator"]
    before = (Proposal.objects.count(), Study.objects.count(), kept.count())
    demo.demo_studies(curator)
    assert (Proposal.objects.count(), Study.objects.count(), qa_pool.records().count()) == before


def test_a_written_caption_needs_a_curator_and_its_note(curator, annotator, pool_item):
    text = "A big cartoon rabbit comes out of his burrow in a green meadow."
    with pytest.raises(pools.CurationError) as refused:
        caption_choice.write_caption(pool_item.pk, annotator, text, note="written for the demo")
    assert refused.value.status == 403
    with pytest.raises(pools.CurationError, match="where the written caption comes from"):
        caption_choice.write_caption(pool_item.pk, curator, text, note=" ")
    with pytest.raises(pools.CurationError, match="merged caption"):
        caption_choice.write_caption(pool_item.pk, curator, "", note="written for the demo")
    pool_item.refresh_from_db()
    assert "caption" not in pool_item.payload and CurationRecord.objects.get(item=pool_item).stage != "captioned"
    caption_choice.write_caption(pool_item.pk, curator, text, note="written for the demo")
    record = CurationRecord.objects.get(item=pool_item)
    assert record.item.payload["caption"] == text and record.stage == "captioned"
    assert {k: record.working["caption"][k] for k in ("from", "how", "by", "note")} == {
        "from": [], "how": "written", "by": curator.username, "note": "written for the demo"}
