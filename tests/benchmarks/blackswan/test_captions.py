"""BlackSwanSuite's +P/+PC captions study (annotation.benchmarks.blackswan.caption_study): one item per split video, the
worker sees V_pre and V_post only and writes two captions and a comparison; approved submissions are the
accepted captions, which fill the `pc_*` fields of the versions built from the platform's annotations (or
of an unfrozen version they are applied to) and so reach the +P and +PC prompts."""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.benchmarks.blackswan import caption_study, versions
from annotation.crowd import kinds, review
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from annotation.models import Benchmark, BenchmarkVersion, VideoSplit
from annotation.versions import add_item, freeze
from config.roles import ANNOTATOR
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.blackswan import benchmark as blackswan_eval
from tests.benchmarks.blackswan.test_staged import make_split
from tests.conftest import logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db

CAPTIONS = {"pc_preevent": "A man carries a tall stack of boxes across a shop.",
            "pc_postevent": "The boxes lie scattered on the floor and the man sits next to them.",
            "pc_comp": "At the end the boxes are on the floor and the man is no longer standing."}
OTHER = {"pc_preevent": "A person walks with many boxes in a store.",
         "pc_postevent": "The person sits on the floor among fallen boxes.",
         "pc_comp": "The boxes have fallen and the person sits down."}
PARTS = ("pre", "main", "post", "detective", "full")
YES, NO = "yes", "no"


def record(video_id: str) -> dict:
    """A release record of a 4 s video (V_pre [0.2, 1.2), V_main [1.2, 2.4), V_post [2.4, 4))."""
    forecasts = [f"{video_id} forecast {i}" for i in range(3)]
    return {"id": video_id, "preevent": 0.2, "event": 1.2, "postevent": 2.4, "task1_gt": forecasts,
            "task2_checkboxes": [NO, YES, NO], "task2_gt": [f"{video_id} new 0", forecasts[1], f"{video_id} new 2"],
            "task3_checkboxes": [NO, YES, NO], "task3_gt": f"{video_id} caption"}


@pytest.fixture
def split(tmp_path, curator):
    return make_split(tmp_path / "clips", curator)


@pytest.fixture
def other_split(tmp_path, curator):
    return make_split(tmp_path / "other", curator, name="other", shade=130)


@pytest.fixture
def study(split, curator):
    return caption_study.create_caption_study(curator, [split.video], name="Captions", open_now=True)


@pytest.fixture
def worker(db):
    return make_user("wanda", ANNOTATOR)


def claim_for(api, study) -> Claim:
    response = api.post(reverse("api-study-claim", kwargs={"slug": study.slug}))
    assert response.status_code == 201, response.content
    return Claim.objects.get(pk=response.json()["id"])


def submit(api, claim, data):
    return api.post(reverse("api-claim-submit", args=[claim.pk]), {"data": data}, format="json")


def written(study, worker, data=CAPTIONS) -> Submission:
    api = logged_in_api(worker)
    claim = claim_for(api, study)
    response = submit(api, claim, data)
    assert response.status_code == 201, response.content
    return Submission.objects.get(claim=claim)


def file_url(video_id) -> str:
    return reverse("media-video-file", kwargs={"pk": video_id})


# --- The study ------------------------------------------------------------------------------------------

def test_a_captions_study_has_one_item_per_split_video_and_the_kind_s_form(split, other_split, curator):
    study = caption_study.create_caption_study(curator, [split.video, other_split.video.pk], k=2)
    assert (study.step_kind, study.state, study.annotators_per_item) == ("blackswan_captions", Study.State.DRAFT, 2)
    assert study.form_schema == caption_study.FORM and study.expert_share == 1.0
    assert [f["name"] for f in study.form_schema["fields"]] == ["pc_preevent", "pc_postevent", "pc_comp"]
    items = {item.video_id: item for item in StudyItem.objects.filter(study=study)}
    assert set(items) == {split.video_id, other_split.video_id}
    assert items[split.video_id].payload == {"split_id": split.pk}
    assert items[split.video_id].open_slots == 2
    kind = kinds.of(study)
    assert kind.pages == (("Captions (+P/+PC)", "blackswan-captions"),) and kind.one_item_per_video


def test_a_captions_study_refuses_bad_input_and_makes_nothing(split, curator, worker, tmp_path):
    unsplit = make_split(tmp_path / "unsplit", curator, name="unsplit", shade=7)
    unsplit.status = VideoSplit.Status.FAILED
    unsplit.save()
    with pytest.raises(CrowdError) as refused:
        caption_study.create_caption_study(curator, [split.video, unsplit.video])
    assert refused.value.status == 400 and f"video {unsplit.video_id}: no finished split" in str(refused.value.details)
    with pytest.raises(CrowdError, match="at least 1"):
        caption_study.create_caption_study(curator, [split.video], k=0)
    with pytest.raises(CrowdError, match="at least one split video"):
        caption_study.create_caption_study(curator, [])
    with pytest.raises(CrowdError, match="cannot be captioned") as refused:
        caption_study.create_caption_study(curator, [split, split.video])
    assert "already in the study" in str(refused.value.details)
    with pytest.raises(CrowdError) as refused:
        caption_study.create_caption_study(worker, [split.video])
    assert refused.value.status == 403
    assert not Study.objects.exists() and not StudyItem.objects.exists()


def test_items_added_through_the_api_name_a_finished_split(study, other_split, curator):
    api = logged_in_api(curator)
    url = reverse("api-study-items", kwargs={"slug": study.slug})
    assert api.post(url, [{"external_id": "x", "payload": {"video": 3}}], format="json").status_code == 400
    assert api.post(url, [{"external_id": "x", "payload": {"split_id": 987654}}], format="json").status_code == 400
    again = api.post(url, [{"external_id": "x", "payload": {"split_id": study.items.get().payload["split_id"]}}],
                     format="json")
    assert again.status_code == 400 and "already in the study" in str(again.json())
    good = api.post(url, [{"external_id": "other", "payload": {"split_id": other_split.pk}}], format="json")
    assert good.status_code == 201, good.content
    item = StudyItem.objects.get(study=study, external_id="other")
    assert (item.video_id, item.payload) == (other_split.video_id, {"split_id": other_split.pk})


# --- The worker: V_pre and V_post, never V_main ----------------------------------------------------------------

def test_the_worker_sees_and_streams_v_pre_and_v_post_only(study, split, worker):
    client = logged_in_client(worker)
    page = client.post(reverse("crowd-work", args=[study.slug]), follow=True)
    assert page.status_code == 200
    html = page.content.decode()
    for part in ("pre", "post"):
        assert f'src="{file_url(getattr(split, f"{part}_video_id"))}"' in html
    for part in ("main", "detective", "full"):
        assert file_url(getattr(split, f"{part}_video_id")) not in html
    assert file_url(split.video_id) not in html
    assert 'name="pc_preevent"' in html and 'name="pc_comp"' in html
    assert "Beginning of the video" in html and "End of the video" in html

    claim = Claim.objects.get(worker=worker, study=study)
    api_claim = logged_in_api(worker).post(reverse("api-study-claim", kwargs={"slug": study.slug}))
    assert api_claim.status_code == 200 and api_claim.json()["id"] == claim.pk
    assert api_claim.json()["item"]["payload"] == {"split_id": split.pk}
    assert [f["name"] for f in api_claim.json()["fields"]] == ["pc_preevent", "pc_postevent", "pc_comp"]

    allowed = {"pre", "post"}
    for part in PARTS:
        response = client.get(file_url(getattr(split, f"{part}_video_id")))
        if response.streaming:
            b"".join(response.streaming_content)
        assert response.status_code == (200 if part in allowed else 403), part
    assert client.get(file_url(split.video_id)).status_code == 403  # the parent video, V_main included
    assert client.get(reverse("media-video-poster", kwargs={"pk": split.main_video_id})).status_code == 403

    assert submit(logged_in_api(worker), claim, CAPTIONS).status_code == 201
    after = client.get(file_url(split.pre_video_id))  # a handed-in item streams nothing any more
    assert after.status_code == 403


def test_an_italian_captions_study_speaks_italian_to_its_workers(split, curator, worker):
    study = caption_study.create_caption_study(curator, [split], open_now=True, language="it")
    assert study.instructions.startswith("Ogni elemento mostra due brevi clip dello stesso video")
    page = logged_in_client(worker).post(reverse("crowd-work", args=[study.slug]), follow=True).content.decode()
    for text in ("Didascalia dell&#x27;inizio del video", "Didascalia della fine del video",
                 "Che cosa è cambiato tra l&#x27;inizio e la fine?", "Ogni elemento mostra due brevi clip"):
        assert text in page, text
    assert "Caption of the end of the video" not in page
    api = APIClient(HTTP_ACCEPT_LANGUAGE="it")
    api.force_authenticate(worker)
    claim = Claim.objects.get(worker=worker, study=study)
    response = submit(api, claim, {**CAPTIONS, "pc_comp": "Cambiato."})
    assert response.status_code == 400 and response.json()["details"]["pc_comp"] == "scrivi almeno 10 caratteri"


def test_another_worker_without_a_claim_streams_nothing(study, split):
    stranger = logged_in_client(make_user("sam", ANNOTATOR))
    assert stranger.get(file_url(split.pre_video_id)).status_code == 403


@pytest.mark.parametrize(("data", "field", "message"), [
    ({**CAPTIONS, "pc_preevent": ""}, "pc_preevent", "write at least 10 characters"),
    ({**CAPTIONS, "pc_postevent": "x" * 1001}, "pc_postevent", "write at most 1000 characters"),
    ({**CAPTIONS, "pc_comp": "Different now."}, "pc_comp", "write at least 3 words"),
    ({**CAPTIONS, "pc_comp": CAPTIONS["pc_postevent"].upper()}, "pc_comp", "do not repeat a caption"),
    ({**CAPTIONS, "extra": "text"}, "extra", "unknown field"),
])
def test_answers_are_checked_on_the_server(study, worker, data, field, message):
    api = logged_in_api(worker)
    claim = claim_for(api, study)
    response = submit(api, claim, data)
    assert response.status_code == 400
    assert message in response.json()["details"][field]
    assert not Submission.objects.exists()
    good = submit(api, claim, {name: f"  {text}  " for name, text in CAPTIONS.items()})
    assert good.status_code == 201
    assert Submission.objects.get().data == CAPTIONS


def test_the_review_queue_shows_both_clips(study, split, worker, curator):
    written(study, worker)
    kind = kinds.of(study)
    media = kind.review_media(study.items.get())
    assert [m["url"] for m in media] == [file_url(split.pre_video_id), file_url(split.post_video_id)]
    page = logged_in_client(curator).get(reverse("crowd-study-queue", args=[study.slug]))
    assert page.status_code == 200
    html = page.content.decode()
    assert file_url(split.pre_video_id) in html and file_url(split.post_video_id) in html
    assert file_url(split.main_video_id) not in html
    assert CAPTIONS["pc_comp"] in html


# --- Acceptance ------------------------------------------------------------------------------------------------

def test_approved_submissions_are_the_accepted_captions_the_latest_wins(split, curator, worker):
    study = caption_study.create_caption_study(curator, [split], k=4, open_now=True)
    first = written(study, worker)
    second = written(study, make_user("walt", ANNOTATOR), OTHER)
    assert caption_study.accepted_captions(split.video) is None  # waiting for review
    review.reject(first, curator, reason="vague")
    assert caption_study.accepted_captions(split.video) is None
    review.approve(second, curator)
    assert caption_study.accepted_captions(split.video) == OTHER
    assert caption_study.accepted_captions(split) == OTHER and caption_study.accepted_captions(split.video_id) == OTHER
    third = written(study, make_user("wes", ANNOTATOR))
    edited = {**CAPTIONS, "pc_comp": "The boxes fell down and the man sat on the floor."}
    review.approve(third, curator, edited=edited)
    assert caption_study.accepted_captions(split.video) == edited  # a later approval, with the reviewer's edit
    with pytest.raises(CrowdError):
        review.approve(written(study, make_user("wil", ANNOTATOR)), curator, edited={**CAPTIONS, "pc_comp": ""})


# --- Into the versions and the +P/+PC prompts --------------------------------------------------------------------

def approved(study, worker, curator, data=CAPTIONS) -> Submission:
    return review.approve(written(study, worker, data), curator)


def test_a_built_version_takes_the_accepted_captions_and_the_plus_p_prompts_read_them(
        study, split, other_split, worker, curator):
    approved(study, worker, curator)
    own = {**record("own"), "pc_preevent": "Its own caption of the beginning."}
    job = versions.start_build([(record("captioned"), split.video), (own, split.video),
                                (record("plain"), other_split.video)], here=True)
    # "own" and "captioned" share a video: "own" keeps its own V_pre caption and gets the two others
    preview = logged_in_client(curator).get(reverse("blackswan-variants-preview", args=[job.pk])).content.decode()
    assert (f"Human +P/+PC captions: 2 of 3 videos have accepted captions from captions studies ({study.slug})"
            in " ".join(preview.split()))
    version = versions.freeze_variants(job, "with-captions", curator, skip_pending=True)
    assert ("Human +P/+PC captions for 2 of 3 videos from captions studies (studies "
            f"{study.slug}).") in version.description
    video_items = {item.payload["id"]: item for item in version.items.filter(payload__kind="video")}
    assert {k: video_items["captioned"].payload.get(k) for k in caption_study.FIELDS} == CAPTIONS
    assert video_items["own"].payload["pc_preevent"] == "Its own caption of the beginning."
    assert video_items["own"].payload["pc_comp"] == CAPTIONS["pc_comp"]
    assert not any(k in video_items["plain"].payload for k in caption_study.FIELDS)

    requests = blackswan_eval.BENCHMARK.requests(video_items["captioned"], RequestOptions(prompting="plus_p"))
    assert [r.variant for r in requests] == ["detective_gen", "reporter_gen"]
    for request in requests:
        assert ("The beginning of the video shows A man carries a tall stack of boxes across a shop. The end of the "
                "video shows The boxes lie scattered on the floor and the man sits next to them.") in request.prompt
        assert CAPTIONS["pc_comp"].rstrip(".") not in request.prompt
    mcq_item = version.items.filter(payload__kind="mcq", payload__id="captioned").first()
    assert mcq_item is not None and "pc_comp" not in mcq_item.payload  # read from its video item
    (mcq,) = blackswan_eval.BENCHMARK.requests(mcq_item, RequestOptions(prompting="plus_pc"))
    assert f"The two parts differ in the following way: {CAPTIONS['pc_comp'].rstrip('.')}." in mcq.prompt
    assert CAPTIONS["pc_preevent"].rstrip(".") in mcq.prompt
    with pytest.raises(ValueError, match="no human pc_preevent"):
        blackswan_eval.BENCHMARK.requests(video_items["plain"], RequestOptions(prompting="plus_p"))

    plain = versions.freeze_variants(job, "without-captions", curator, skip_pending=True, captions=False)
    assert "+P/+PC" not in plain.description
    assert not any("pc_comp" in item.payload for item in plain.items.all())


def draft_version(label: str, video, curator, **payload) -> BenchmarkVersion:
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="blackswan"), label=label,
                                              created_by=curator, description="Imported.")
    add_item(version, "v1", {"kind": "video", **record("v1"), **payload}, {"video": video})
    add_item(version, "v1-yn", {"kind": "yn", "id": "v1", "def_task": 1, "exp": "The man trips.",
                                "def_label": "yes"}, {"video": video})
    return version


def test_apply_captions_fills_an_unfrozen_version_and_refuses_a_frozen_one(study, split, other_split, worker,
                                                                         curator):
    approved(study, worker, curator)
    version = draft_version("draft", split.video, curator, pc_comp="Their own comparison.")
    add_item(version, "v2", {"kind": "video", **record("v2")}, {"video": other_split.video})
    applied = caption_study.apply_captions("draft", curator)
    assert (applied.videos, applied.fields, applied.complete, applied.without) == (1, 2, 0, ["v2"])
    item = version.items.get(external_id="v1")
    assert (item.payload["pc_preevent"], item.payload["pc_postevent"], item.payload["pc_comp"]) == (
        CAPTIONS["pc_preevent"], CAPTIONS["pc_postevent"], "Their own comparison.")
    assert "pc_preevent" not in version.items.get(external_id="v1-yn").payload
    version.refresh_from_db()
    assert version.description.startswith("Imported.\nHuman +P/+PC captions for 1 of 2 videos")
    assert "applied by cur" in version.description
    (request,) = blackswan_eval.BENCHMARK.requests(version.items.get(external_id="v1-yn"),
                                                   RequestOptions(prompting="plus_pc"))
    assert "The two parts differ in the following way: Their own comparison." in request.prompt
    again = caption_study.apply_captions(version, curator)
    assert (again.videos, again.complete) == (0, 1)

    frozen = freeze(draft_version("frozen", split.video, curator))
    with pytest.raises(CrowdError) as refused:
        caption_study.apply_captions("frozen", curator)
    assert refused.value.status == 409
    assert "pc_preevent" not in frozen.items.get(external_id="v1").payload
    with pytest.raises(CrowdError) as refused:
        caption_study.apply_captions("no-such", curator)
    assert refused.value.status == 404
    with pytest.raises(CrowdError) as refused:
        caption_study.apply_captions("draft", worker)
    assert refused.value.status == 403


# --- The curator's page and the command ---------------------------------------------------------------------------

def test_the_captions_page_lists_accepted_captions_and_applies_them(study, split, worker, curator):
    client = logged_in_client(curator)
    url = reverse("blackswan-captions", args=[study.slug])
    page = client.get(url)
    assert page.status_code == 200 and "no accepted captions yet" in page.content.decode()
    approved(study, worker, curator)
    draft_version("draft", split.video, curator)
    freeze(draft_version("frozen", split.video, curator))
    html = client.get(url).content.decode()
    assert CAPTIONS["pc_postevent"] in html and 'data-accepted="yes"' in html and "1 approved" in html
    assert '<option value="draft"' in html and '<option value="frozen"' not in html
    assert reverse("blackswan-captions", args=[study.slug]) in client.get(
        reverse("crowd-study-detail", args=[study.slug])).content.decode()

    assert client.post(url, {"version": ""}).status_code == 400
    refused = client.post(url, {"version": "frozen"})
    assert refused.status_code == 409 and "is frozen" in refused.content.decode()
    assert client.post(url, {"version": "nothing"}).status_code == 404
    done = client.post(url, {"version": "draft"}, follow=True)
    assert done.status_code == 200 and "Captions applied to 1 video(s) of" in done.content.decode()
    item = BenchmarkVersion.objects.get(label="draft").items.get(external_id="v1")
    assert item.payload["pc_comp"] == CAPTIONS["pc_comp"]

    assert logged_in_client(worker).get(url).status_code == 403
    assert client.get(reverse("blackswan-captions", args=["no-such"])).status_code == 404


def test_the_command_creates_a_study_and_applies_captions(split, other_split, curator, worker, capsys):
    call_command("blackswan_captions", "create", "--videos", f"{split.video_id},{other_split.video_id}",
                 "--user", curator.username, "--k", "2", "--open")
    study = Study.objects.get(step_kind=caption_study.STUDY_KIND)
    assert "with 2 video(s), 2 writer(s) each" in capsys.readouterr().out
    assert (study.state, study.items.count(), study.annotators_per_item) == (Study.State.OPEN, 2, 2)
    with pytest.raises(CommandError, match="library video ids"):
        call_command("blackswan_captions", "create", "--videos", "a,b", "--user", curator.username)
    with pytest.raises(CommandError, match="Only curators"):
        call_command("blackswan_captions", "create", "--videos", str(split.video_id), "--user", worker.username)
    with pytest.raises(CommandError, match="no finished split"):
        call_command("blackswan_captions", "create", "--videos", "987654", "--user", curator.username)
    assert Study.objects.count() == 1

    review.approve(written(study, worker), curator)
    draft_version("draft", split.video, curator)
    call_command("blackswan_captions", "apply", "--version", "draft", "--user", curator.username)
    assert "Captions applied to 1 video(s)" in capsys.readouterr().out
    freeze(draft_version("frozen", split.video, curator))
    with pytest.raises(CommandError, match="is frozen"):
        call_command("blackswan_captions", "apply", "--version", "frozen", "--user", curator.username)
