"""BlackSwanSuite's localization study (issue 17, SPEC "What the papers also did"): the authors' rule that turns
annotators' marks into one event time (`oops/do-split.py`), the parts it suggests, the study whose workers mark
the event (k = 3, marks checked on the server), its report with the poor-agreement flag and filter, the
curator's page, the command, and the suggestion on the split timeline."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.benchmarks.blackswan import localization, localization_study, timeline
from annotation.benchmarks.blackswan.localization import aggregate, poor_agreement, suggest_parts
from annotation.crowd import answers, assignment, forms, review, studies, submissions
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.models import Study
from config.roles import ANNOTATOR
from tests.conftest import ingest_path, logged_in_client, make_user

pytestmark = pytest.mark.django_db


# --- The rule ---------------------------------------------------------------------------------------

def test_marks_at_or_before_a_tenth_of_a_second_are_dropped_and_agreeing_marks_give_their_mean():
    found = aggregate([0.05, 2.0, 2.2, 2.4, 0.1])
    assert found.valid == (2.0, 2.2, 2.4)
    assert found.time == pytest.approx(2.2)
    assert (found.method, found.closest_pair, found.branch, found.rule) == ("mean", False, "mean", "authors")
    assert found.spread == pytest.approx(0.4)
    assert found.std == pytest.approx(0.163299, abs=1e-6)
    assert not poor_agreement(found)


def test_widely_spread_marks_keep_the_closest_pair():
    # population std of 1.0, 1.3, 9.0 is 3.70 s > 3 s: only 1.0 and 1.3 count; 0.3 s apart, so their mean
    found = aggregate([9.0, 1.0, 1.3])
    assert found.std == pytest.approx(3.7026, abs=1e-4)
    assert found.kept == (1.0, 1.3)
    assert found.time == pytest.approx(1.15)
    assert (found.closest_pair, found.branch) == (True, "closest pair, then mean")
    assert poor_agreement(found)  # widely spread: flagged even though it has a time


def test_a_tie_between_closest_pairs_keeps_the_earliest_pair():
    # std 5.00 s: widely spread; (2.0, 2.5) and (12.0, 12.5) are both 0.5 s apart
    assert aggregate([12.0, 2.0, 12.5, 2.5]).kept == (2.0, 2.5)
    assert aggregate([12.0, 2.0, 12.5, 2.5]).time == pytest.approx(2.25)


def test_the_closest_pair_agrees_by_its_std_and_disagrees_past_it():
    # std of 2, 3, 15 is 5.91 s; the closest pair 2.0 / 3.0 has std 0.5 s (do-split.py: np.std <= 0.5): its mean
    found = aggregate([2.0, 3.0, 15.0])
    assert found.std == pytest.approx(5.9067, abs=1e-4) and found.kept_std == pytest.approx(0.5)
    assert (found.kept, found.time, found.branch) == ((2.0, 3.0), 2.5, "closest pair, then mean")
    # the closest pair 2.0 / 3.2 has std 0.6 s: the earliest of the two after 1 s
    found = aggregate([2.0, 3.2, 15.0])
    assert (found.kept, found.time, found.branch) == ((2.0, 3.2), 2.0, "closest pair, then earliest")


def test_widely_spread_marks_without_a_pair_within_eight_seconds_give_no_time():
    # std 7.76 s; the closest pair 1 / 10 is 9 s apart (std 4.5 s > 4 s): the script finds no pair
    found = aggregate([1.0, 10.0, 20.0])
    assert (found.time, found.kept, found.kept_std) == (None, (1.0, 10.0), 4.5)
    assert found.std == pytest.approx(7.7603, abs=1e-4)
    assert found.reason == "the marks are widely spread and no two lie within 8 s of each other"
    assert poor_agreement(found)
    # 8 s apart (std 4 s) still counts: std 4 s > 0.5 s, so the earliest after 1 s
    kept = aggregate([2.0, 10.0, 20.0])
    assert (kept.kept, kept.time, kept.branch) == ((2.0, 10.0), 2.0, "closest pair, then earliest")


def test_disagreeing_marks_give_the_earliest_mark_after_one_second():
    found = aggregate([2.5, 1.5, 3.0])
    assert (found.time, found.method) == (1.5, "earliest")
    assert found.spread == pytest.approx(1.5)
    assert not poor_agreement(found)  # std 0.62 s: not widely spread
    # a mark before 1 s does not count as the earliest
    assert aggregate([0.5, 2.0]).time == 2.0


def test_agreeing_marks_are_those_whose_std_is_at_most_half_a_second():
    # 2.0 and 2.8: std 0.4 s, so their mean, though they are 0.8 s apart
    found = aggregate([2.0, 2.8])
    assert (found.time, found.method, found.kept_std) == (pytest.approx(2.4), "mean", pytest.approx(0.4))
    assert found.spread == pytest.approx(0.8)
    assert not poor_agreement(found)
    # std 0.5 s exactly (1 s apart) agrees too; 1.1 s apart (std 0.55 s) does not
    assert aggregate([4.0, 5.0]).time == 4.5 and aggregate([4.0, 5.1]).time == 4.0


def test_the_spread_rule_wants_every_mark_within_half_a_second_of_the_others():
    found = aggregate([2.0, 2.8], rule="spread")
    assert (found.time, found.method, found.rule) == (2.0, "earliest", "spread")
    assert aggregate([2.0, 3.0, 15.0], rule="spread").branch == "closest pair, then earliest"
    assert aggregate([2.0, 2.2, 2.4], rule="spread").time == pytest.approx(2.2)
    assert aggregate([2.0, 2.8], rule="spread").as_dict()["rule"] == "spread"
    with pytest.raises(ValueError, match="Unknown agreement rule"):
        aggregate([2.0], rule="median")


def test_no_mark_after_one_second_gives_no_time_and_no_mark_after_a_tenth_none_either():
    # with the authors' rule marks up to 1 s always agree (their std is at most 0.45 s): 0.3 and 0.9 give 0.6 s
    assert aggregate([0.3, 0.9]).time == pytest.approx(0.6)
    found = aggregate([0.3, 0.9], rule="spread")  # 0.6 s apart: they disagree, and none is after 1 s
    assert found.time is None and found.method is None
    assert found.reason == "the marks disagree and none is after 1 s"
    assert poor_agreement(found)
    empty = aggregate([0.0, 0.1])
    assert (empty.time, empty.valid, empty.reason) == (None, (), "no mark after 0.1 s")
    assert poor_agreement(empty) and poor_agreement(aggregate([]))


def test_a_single_mark_is_its_own_time_but_poorly_agreed():
    found = aggregate([3.0])
    assert found.time == 3.0 and poor_agreement(found)
    with pytest.raises(ValueError):
        aggregate([1.0, float("nan")])
    with pytest.raises(ValueError):
        aggregate([True])


def test_the_suggested_parts_use_the_authors_factors():
    made = suggest_parts(5.0, 10.0)
    assert [(p.name, p.start, p.end) for p in made.parts] == [
        ("pre", 0.17, 4.0), ("main", 4.0, 8.0), ("post", 8.0, pytest.approx(9.83))]
    assert (made.event_start, made.event_end, made.ok) == (4.0, 8.0, True)
    assert (made.trim_start, made.trim_end) == (0.17, pytest.approx(0.17))
    assert made.as_dict()["parts"][2]["seconds"] == pytest.approx(1.83)


def test_a_suggestion_with_a_part_under_one_second_says_so():
    short = suggest_parts(2.2, 4.0)  # V_post = [3.2, 3.83]: 0.63 s
    assert not short.ok
    assert short.problems == ("V_post would last 0.63 s, under 1 s",)
    assert [p.long_enough for p in short.parts] == [True, True, False]
    early = suggest_parts(1.0, 10.0)  # V_pre = [0.17, 0.8]
    assert early.problems == ("V_pre would last 0.63 s, under 1 s",)
    late = suggest_parts(12.0, 10.0)  # clamped to the video: V_main is empty
    assert late.parts[1].seconds == 0 and late.parts[1].start == late.parts[2].start == pytest.approx(9.6)
    assert "V_main would last 0.00 s, under 1 s" in late.problems
    with pytest.raises(ValueError):
        suggest_parts(1.0, 0)


def test_the_constants_are_the_authors_values():
    assert (localization.MIN_MARK, localization.WIDE_SPREAD, localization.PAIR_STD, localization.AGREEING_STD,
            localization.MIN_EARLIEST, localization.FACTOR, localization.EDGE) == (0.1, 3.0, 4.0, 0.5, 1.0, 0.8, 0.17)
    assert localization.DEFAULT_RULE == "authors"


# --- The time_mark form field ------------------------------------------------------------------------

FIELD = {"name": "t", "type": "time_mark", "duration_from": "duration", "fps_from": "fps", "label": "When?",
         "none_label": "Nothing"}


def test_a_time_mark_is_checked_on_the_server():
    schema, payload = {"fields": [FIELD]}, {"duration": 10.0, "fps": 25.0}
    assert forms.validate_schema(schema) == []
    assert forms.validate(schema, payload, {"t": 3.04}) == {"t": 3.04, "t_none": False}
    assert forms.validate(schema, payload, {"t": "10"}) == {"t": 10.0, "t_none": False}
    assert forms.validate(schema, payload, {"t": None, "t_none": True}) == {"t": None, "t_none": True}
    outside, not_a_number = "mark a moment from 0 to 10.000 s", "the mark must be a number of seconds"
    for bad, message in ((10.5, outside), (-1, outside), ("nan", outside), ("abc", not_a_number),
                         (True, not_a_number), (None, "mark the moment in the video")):
        with pytest.raises(InvalidSubmission) as refused:
            forms.validate(schema, payload, {"t": bad})
        assert refused.value.details == {"t": message}, bad
    with pytest.raises(InvalidSubmission) as both:
        forms.validate(schema, payload, {"t": 2.0, "t_none": True})
    assert "not both" in both.value.details["t"]
    with pytest.raises(InvalidSubmission) as unknown:
        forms.validate(schema, payload, {"t": 1.0, "other": 1})
    assert unknown.value.details == {"other": "unknown field"}


def test_a_time_mark_reads_back_in_seconds_and_renders_with_the_video_s_timing():
    schema, payload = {"fields": [FIELD]}, {"duration": 10.0, "fps": 25.0}
    assert answers.format_answers(schema, payload, {"t": 3.04})[0]["value"] == "3.040 s"
    assert answers.format_answers(schema, payload, {"t": None, "t_none": True})[0]["value"] == "Nothing"
    [field] = forms.render_fields(schema, payload, {}, {"t": None, "t_none": True})
    assert (field["duration"], field["fps"], field["none"]) == (10.0, 25.0, True)


# --- The study --------------------------------------------------------------------------------------

@pytest.fixture
def bikes_video(db, bikes, curator):
    return ingest_path(bikes, user=curator)


@pytest.fixture
def bunny_video(db, bigbuckbunny, curator):
    return ingest_path(bigbuckbunny, user=curator)


def _mark(study, worker, data):
    claim = assignment.claim_next(study, worker)
    assert claim is not None
    claim = submissions.load_claim(claim.pk)
    submission, created, _ = submissions.submit(claim, worker, data)
    assert created
    return submission


def _workers(count, prefix="marker"):
    return [make_user(f"{prefix}{i}", ANNOTATOR) for i in range(count)]


def test_a_study_holds_library_videos_with_their_timing(curator, bikes_video):
    study = localization_study.create_localization_study(curator, [bikes_video.pk])
    assert (study.step_kind, study.annotators_per_item, study.state) == ("blackswan_localization", 3, "open")
    assert study.form_schema == localization_study.FORM
    [item] = study.items.all()
    assert item.video == bikes_video
    assert item.payload == {"title": bikes_video.title, "duration": bikes_video.duration, "fps": 25.0,
                            "frame_count": bikes_video.frame_count}
    assert localization_study.item_rows(item.payload)[1]["value"] == "10.000 s (250 frames at 25 fps)"


def test_creating_a_study_refuses_bad_input_and_writes_nothing(curator, bikes_video):
    worker = make_user("wanda", ANNOTATOR)
    cases = [((worker, [bikes_video.pk]), {}, 403), ((curator, []), {}, 400), ((curator, [987654]), {}, 404),
             ((curator, [bikes_video.pk, bikes_video.pk]), {}, 400), ((curator, [bikes_video.pk]), {"k": 0}, 400)]
    for args, kwargs, status in cases:
        with pytest.raises(CrowdError) as refused:
            localization_study.create_localization_study(*args, **kwargs)
        assert refused.value.status == status, (args, kwargs)
    assert not Study.objects.filter(step_kind=localization_study.STUDY_KIND).exists()


def test_three_marks_give_the_report_and_the_server_checks_each_mark(curator, bikes_video):
    study = localization_study.create_localization_study(curator, [bikes_video], k=3)
    first, second, third = _workers(3)
    _mark(study, first, {"event_time": 4.0})
    claim = submissions.load_claim(assignment.claim_next(study, second).pk)
    for bad in ({"event_time": 10.5}, {"event_time": "soon"}, {"event_time_none": True, "event_time": 3.0}, {}):
        with pytest.raises(InvalidSubmission):
            submissions.submit(claim, second, bad)
    _mark(study, second, {"event_time": 4.2})
    _mark(study, third, {"event_time": 4.3})
    report = localization_study.localization_report(study)
    [row] = report["videos"]
    assert row["marks"] == [4.0, 4.2, 4.3]
    assert row["time"] == pytest.approx(12.5 / 3)
    assert row["aggregate"]["branch"] == "mean"
    assert row["poor_agreement"] is False and report["flagged"] == 0
    assert row["suggestion"]["event_start"] == pytest.approx(0.8 * 12.5 / 3, abs=1e-6)
    assert row["suggestion"]["event_end"] == pytest.approx(8.0)
    assert row["suggestion"]["ok"] is True
    assert row["agreement"] == "3 marks, std 0.12 s, spread 0.30 s"


def test_rejected_marks_are_left_out_and_a_reviewers_correction_counts(curator, bikes_video):
    study = localization_study.create_localization_study(curator, [bikes_video], k=3, expert_share=1.0)
    first, second, third = _workers(3)
    marks = [_mark(study, worker, {"event_time": seconds}) for worker, seconds in
             ((first, 4.0), (second, 9.5), (third, 4.2))]
    assert {m.review_state for m in marks} == {"pending"}
    assert localization_study.localization_report(study)["left_out"] == {"pending": 3, "rejected": 0}
    review.approve(marks[0], curator)
    review.reject(marks[1], curator, reason="marked the end of the video")
    review.approve(marks[2], curator, edited={"event_time": 4.4, "event_time_none": False})
    report = localization_study.localization_report(study)
    assert report["left_out"] == {"pending": 0, "rejected": 1}
    assert report["videos"][0]["marks"] == [4.0, 4.4]
    assert report["videos"][0]["time"] == pytest.approx(4.2)


def test_poorly_agreed_videos_are_flagged_and_can_be_hidden_on_the_page(curator, bikes_video, bunny_video):
    study = localization_study.create_localization_study(curator, [bikes_video, bunny_video], k=3)
    # bikes: 1.0, 1.3 and 9.0 s are widely spread (std 3.70 s); bunny: two marks agree, one worker saw no event
    answers_of = {bikes_video.pk: [{"event_time": 1.0}, {"event_time": 1.3}, {"event_time": 9.0}],
                  bunny_video.pk: [{"event_time": 2.0}, {"event_time": 2.1},
                                   {"event_time": None, "event_time_none": True}]}
    for index, worker in enumerate(_workers(3)):
        for _ in range(2):
            claim = submissions.load_claim(assignment.claim_next(study, worker).pk)
            submissions.submit(claim, worker, answers_of[claim.item.video_id][index])
    report = localization_study.localization_report(study)
    bikes_row, bunny_row = report["videos"]
    assert (bikes_row["time"], bikes_row["aggregate"]["kept"], bikes_row["poor_agreement"]) == (1.15, [1.0, 1.3], True)
    assert bikes_row["agreement"] == "3 marks, std 3.70 s (widely spread: closest pair kept, 0.30 s apart)"
    assert (bunny_row["marks"], bunny_row["no_event"]) == ([2.0, 2.1], 1)
    assert bunny_row["time"] == pytest.approx(2.05) and bunny_row["poor_agreement"] is False
    assert report["flagged"] == 1
    assert localization_study.shown_videos(report, hide_poor=True) == [bunny_row]

    client = logged_in_client(curator)
    url = reverse("blackswan-localization", kwargs={"slug": study.slug})
    page = client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert f'data-video-id="{bikes_video.pk}" data-poor="true"' in html
    assert f'data-video-id="{bunny_video.pk}" data-poor="false"' in html
    assert "poor agreement" in html and "1 flagged" in " ".join(html.split())
    assert reverse("video-split", kwargs={"pk": bikes_video.pk}) in html
    filtered = client.get(url, {"hide_poor": "1"}).content.decode()
    assert f'data-video-id="{bikes_video.pk}"' not in filtered
    assert f'data-video-id="{bunny_video.pk}"' in filtered and "1 hidden" in filtered
    assert 'data-rule="authors"' in html and "population std is at most 0.5 s" in html
    spread = client.get(url, {"rule": "spread"}).content.decode()
    assert 'data-rule="spread"' in spread and "--rule spread" in spread
    unknown = client.get(url, {"rule": "median"})
    assert unknown.status_code == 400 and "Unknown agreement rule" in unknown.content.decode()


def test_the_page_is_for_localization_studies_only(curator, bikes_video):
    other = studies.create_study(name="A form", created_by=curator,
                                 form_schema={"fields": [{"name": "x", "type": "free_text"}]}).study
    client = logged_in_client(curator)
    assert client.get(reverse("blackswan-localization", kwargs={"slug": other.slug})).status_code == 404
    study = localization_study.create_localization_study(curator, [bikes_video])
    assert client.get(reverse("blackswan-localization", kwargs={"slug": study.slug})).status_code == 200
    annotator = logged_in_client(make_user("anna", ANNOTATOR))
    assert annotator.get(reverse("blackswan-localization", kwargs={"slug": study.slug})).status_code == 403


def test_the_worker_s_page_has_the_frame_accurate_control(curator, bikes_video):
    study = localization_study.create_localization_study(curator, [bikes_video])
    worker = make_user("wendy", ANNOTATOR)
    page = logged_in_client(worker).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-kind="time_mark"' in html and 'data-fps="25.0"' in html and 'data-max="10"' in html
    assert 'data-step="-1"' in html and 'data-action="mark"' in html and 'data-part="none"' in html
    assert "10.000 s (250 frames at 25 fps)" in html


def test_items_added_later_name_a_library_video(curator, bikes_video, bunny_video):
    study = localization_study.create_localization_study(curator, [bikes_video])
    row = {"payload": {"video": bunny_video.pk}}
    assert localization_study.item_row(study, row) is None
    assert row["video"] == bunny_video and row["payload"]["fps"] == 25.0
    assert "already has video" in localization_study.item_row(study, {"payload": {"video": bikes_video.pk}})
    assert "library videos" in localization_study.item_row(study, {"payload": {"caption": "x"}})
    assert "no library video #987654" in localization_study.item_row(study, {"payload": {"video": 987654}})
    # a video chosen from the library on the study's items page
    picked = {"external_id": f"video-{bunny_video.pk}", "payload": {"title": "Bunny"}, "video": bunny_video}
    assert localization_study.item_row(study, picked) is None
    assert picked["payload"]["duration"] == bunny_video.duration


def test_a_curator_makes_a_localization_study_on_the_study_pages(curator, bikes_video, bunny_video):
    """The studies page makes the study (kind and form fixed), the items page adds library videos, and the
    study's page links its report."""
    client = logged_in_client(curator)
    form = {"step_kind": localization_study.STUDY_KIND, "form_schema": "{}", "annotators_per_item": 3,
            "count_accepted_only": "on", "lease_seconds": 1800, "estimated_minutes": 1, "pay_per_item": "0",
            "currency": "USD", "gold_share": 0, "expert_share": 0, "expert_first": 0, "min_accept_rate": 0,
            "min_reviews_for_exclusion": 3, "recruitment_platform": "none", "required_submissions": 1,
            "name": "Where does it go wrong?"}
    made = client.post(reverse("crowd-study-new"), form)
    assert made.status_code == 302, made.content.decode()[:2000]
    study = Study.objects.get(name="Where does it go wrong?")
    assert (study.step_kind, study.form_schema, study.annotators_per_item) == (
        localization_study.STUDY_KIND, localization_study.FORM, 3)
    items_url = reverse("crowd-study-items", kwargs={"slug": study.slug})
    assert made.url == items_url
    added = client.post(items_url, {"source": "media", "video": [str(bikes_video.pk), str(bunny_video.pk)]})
    assert added.status_code == 302, added.content.decode()[:2000]
    assert {item.video_id: item.payload["fps"] for item in study.items.all()} == {bikes_video.pk: 25.0,
                                                                                bunny_video.pk: 25.0}
    again = client.post(items_url, {"source": "media", "video": [str(bikes_video.pk)]})
    assert again.status_code == 400 and "the study already has an item" in again.content.decode()
    assert study.items.count() == 2
    detail = client.get(reverse("crowd-study-detail", kwargs={"slug": study.slug})).content.decode()
    assert reverse("blackswan-localization", kwargs={"slug": study.slug}) in detail


# --- The command -------------------------------------------------------------------------------------

def test_the_command_creates_a_study_and_reports_it_as_json(curator, bikes_video):
    out = StringIO()
    call_command("blackswan_localization", "create", "--videos", str(bikes_video.pk), "--user", curator.username,
                 "--k", "2", stdout=out)
    study = Study.objects.get(step_kind=localization_study.STUDY_KIND)
    assert study.annotators_per_item == 2 and f"Study {study.slug}: 1 video(s)" in out.getvalue()
    first, second = _workers(2)
    _mark(study, first, {"event_time": 2.0})
    _mark(study, second, {"event_time": 3.0})
    out = StringIO()
    call_command("blackswan_localization", "report", study.slug, stdout=out)
    report = json.loads(out.getvalue())  # std 0.5 s: the authors' rule takes the mean
    assert report["videos"][0]["time"] == 2.5 and report["videos"][0]["aggregate"]["method"] == "mean"
    assert report["rule"]["name"] == "authors"
    out = StringIO()
    call_command("blackswan_localization", "report", study.slug, "--rule", "spread", stdout=out)
    report = json.loads(out.getvalue())  # 1 s apart: the earliest after 1 s
    assert report["videos"][0]["time"] == 2.0 and report["videos"][0]["aggregate"]["method"] == "earliest"
    assert report["rule"]["name"] == "spread"
    with pytest.raises(CommandError, match="video ids"):
        call_command("blackswan_localization", "create", "--videos", "a,b", "--user", curator.username)
    with pytest.raises(CommandError, match="No user"):
        call_command("blackswan_localization", "create", "--videos", str(bikes_video.pk), "--user", "nobody")
    with pytest.raises(CommandError, match="no library video"):
        call_command("blackswan_localization", "create", "--videos", "987654", "--user", curator.username)
    with pytest.raises(CommandError, match="No localization study"):
        call_command("blackswan_localization", "report", "no-such-study")


# --- The split timeline ------------------------------------------------------------------------------

def test_the_timeline_starts_from_the_suggestion_and_warns_of_poor_agreement(curator, bikes_video):
    assert timeline.timeline(bikes_video)["suggestion"] is None
    study = localization_study.create_localization_study(curator, [bikes_video], k=3)
    for worker, seconds in zip(_workers(3), (5.0, 5.1, 5.2), strict=True):
        _mark(study, worker, {"event_time": seconds})
    data = logged_in_client(curator).get(reverse("video-split-timeline", kwargs={"pk": bikes_video.pk})).json()
    found = data["suggestion"]
    assert found["time"] == pytest.approx(5.1)
    assert (found["start_frame"], found["end_frame"]) == (102, 200)  # 4.08 s and 8.0 s at 25 fps
    assert found["label"] == (f"suggested from 3 marks of {study.name}, agreement: 3 marks, std 0.08 s, "
                              "spread 0.20 s")
    assert found["poor_agreement"] is False
    assert found["url"] == reverse("blackswan-localization", kwargs={"slug": study.slug})
    assert (found["suggestion"]["trim_start"], found["suggestion"]["trim_end"]) == (0.17, pytest.approx(0.17))
    assert data["initial"] == {"start_frame": 102, "end_frame": 200,
                               "origin": f"the localization study {study.slug}", "trim_start": 0.17,
                               "trim_end": pytest.approx(0.17)}

    # a later study whose marks disagree widely is the one shown, flagged
    later = localization_study.create_localization_study(curator, [bikes_video], k=3)
    for worker, seconds in zip(_workers(3, "later"), (1.2, 8.0, 9.0), strict=True):
        _mark(later, worker, {"event_time": seconds})
    found = timeline.timeline(bikes_video)["suggestion"]
    assert found["study"] == later.slug and found["poor_agreement"] is True
    assert found["time"] == 8.5  # std 3.47 s: the closest pair 8.0 / 9.0, whose std is 0.5 s: their mean
