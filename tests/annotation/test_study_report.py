"""The study report: built from work done through the real flow (claim_next, submit, review),
checked for agreement per categorical field, per-worker counts and accuracies, throughput and
progress; then the JSON endpoint, the CSV and the page, and who may read them."""

import csv
import io
import math

import pytest
from django.urls import reverse

from annotation.crowd import agreement, assignment, review, submissions
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from annotation.crowd.reports import CSV_COLUMNS, report_csv_rows, study_report
from config.roles import ANNOTATOR
from tests.conftest import logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [
    {"name": "label", "label": "What is shown?", "type": "single_choice", "options": ["cat", "dog", "bird"]},
    {"name": "quality", "label": "Image quality", "type": "likert", "min": 1, "max": 5},
    {"name": "claims", "label": "True statements", "type": "yes_no_statements",
     "statements": [{"id": "s1", "text": "An animal is visible"}, {"id": "s2", "text": "It is outdoors"}]},
    {"name": "tags", "label": "Colours", "type": "multi_select", "options": ["red", "blue"]},
    {"name": "note", "label": "Anything else?", "type": "free_text", "min_length": 0},
]}

# (label, quality, s1, s2, tags) per item and worker
ANSWERS = {
    "i1": {"w1": ("cat", 5, "yes", "yes", ["red"]), "w2": ("cat", 5, "yes", "no", ["red"]),
           "w3": ("cat", 4, "yes", "yes", ["red", "blue"])},
    "i2": {"w1": ("dog", 2, "yes", "no", []), "w2": ("dog", 2, "no", "no", []),
           "w3": ("cat", 3, "no", "yes", ["blue"])},  # w3's i2 gets rejected
    "i3": {"w1": ("cat", 3, "no", "yes", ["blue"]), "w2": ("dog", 3, "no", "yes", ["blue"]),
           "w3": ("dog", 3, "no", "yes", ["blue"])},  # w1's i3 is corrected to dog by the curator
    "i4": {"w1": ("bird", 1, "yes", "no", ["red"]), "w2": ("bird", 2, "yes", "no", []),
           "w3": ("bird", 1, "no", "no", ["red"])},
}
GOLD = {"w1": "cat", "w2": "cat", "w3": "dog"}  # the key says cat
ATTENTION = {"w1": "bird", "w2": "cat", "w3": "bird"}  # the key says bird
ACTIVE = {"w1": 10.0, "w2": 20.0, "w3": 30.0}


def answer(values) -> dict:
    label, quality, s1, s2, tags = values
    return {"label": label, "quality": quality, "claims": {"s1": s1, "s2": s2}, "tags": tags, "note": ""}


def filler(label: str) -> dict:
    return answer((label, 3, "yes", "no", []))


@pytest.fixture
def study(curator) -> Study:
    study = Study.objects.create(
        name="Animals", slug="animals", form_schema=FORM, annotators_per_item=3, state=Study.State.OPEN,
        gold_share=0.5, expert_first=2, expert_share=0.0, min_reviews_for_exclusion=2, min_accept_rate=0.7,
        created_by=curator)
    assignment.add_items(study, [{"external_id": external_id, "payload": {}} for external_id in ANSWERS] + [
        {"external_id": "g1", "payload": {}, "role": StudyItem.Role.GOLD,
         "answer_key": {"fields": {"label": {"rule": "exact", "answer": "cat"}}}},
        {"external_id": "a1", "payload": {}, "role": StudyItem.Role.ATTENTION,
         "answer_key": {"fields": {"label": {"rule": "exact", "answer": "bird"}}}},
    ])
    return study


@pytest.fixture
def workers(db) -> dict:
    return {name: make_user(name, ANNOTATOR) for name in ("w1", "w2", "w3")}


def work(study: Study, name: str, worker) -> None:
    """The worker claims and submits until nothing is left for them."""
    while (claim := assignment.claim_next(study, worker)) is not None:
        external_id = claim.item.external_id
        if external_id == "g1":
            data = filler(GOLD[name])
        elif external_id == "a1":
            data = filler(ATTENTION[name])
        else:
            data = answer(ANSWERS[external_id][name])
        submissions.submit(claim, worker, data, active_seconds=ACTIVE[name])


def submission_of(study: Study, worker, external_id: str) -> Submission:
    return Submission.objects.get(claim__study=study, claim__worker=worker, claim__item__external_id=external_id)


@pytest.fixture
def worked_study(study, workers, curator) -> Study:
    for name, worker in workers.items():
        work(study, name, worker)
    w1, w2, w3 = workers["w1"], workers["w2"], workers["w3"]
    # every worker's first two regular submissions were sampled for expert review
    assert {s.claim.item.external_id for s in Submission.objects.filter(
        claim__study=study, claim__worker=w3, review_queue="expert_sample")} == {"i1", "i2"}
    review.approve(submission_of(study, w1, "i1"), curator)
    review.approve(submission_of(study, w1, "i2"), curator)
    review.approve(submission_of(study, w1, "i3"), curator, edited=answer(("dog", 3, "no", "yes", ["blue"])))
    review.approve(submission_of(study, w2, "i1"), curator)
    review.approve(submission_of(study, w3, "i1"), curator)
    review.reject(submission_of(study, w3, "i2"), curator, reason="not a cat")  # 1/2 accepted: excluded
    return study


def by_field(report: dict) -> dict:
    return {(row["field"], row["part"]): row for row in report["agreement"]}


# --- The numbers -----------------------------------------------------------------------------

def test_the_real_flow_gave_each_worker_every_item(worked_study, workers):
    for worker in workers.values():
        done = Claim.objects.filter(study=worked_study, worker=worker).values_list("item__external_id", flat=True)
        assert sorted(done) == ["a1", "g1", "i1", "i2", "i3", "i4"]


def test_agreement_for_each_categorical_field_only(worked_study):
    rows = by_field(study_report(worked_study))
    assert set(rows) == {("label", ""), ("quality", ""), ("claims", "s1"), ("claims", "s2"),
                         ("tags", "red"), ("tags", "blue")}  # free text has no agreement figure
    for row in rows.values():
        assert row["n_items"] == 4  # regular items only: gold and attention items are left out
        assert row["n_ratings"] == 11  # 12 answers, one rejected
        assert row["alpha_nominal"]["value"] is not None
        assert row["unanimous_share"]["value"] is not None
        # one item has 2 counted ratings, the others 3: Fleiss' kappa does not apply
        assert row["fleiss_kappa"]["value"] is None and row["fleiss_kappa"]["applicable"] is False
        assert row["fleiss_kappa"]["reason"] == agreement.UNEQUAL_RATINGS
    assert rows[("quality", "")]["alpha_ordinal"]["value"] is not None
    assert rows[("label", "")]["alpha_ordinal"] is None  # ordinal only for Likert fields
    assert rows[("claims", "s1")]["part_label"] == "An animal is visible"


def test_agreement_uses_final_data_and_leaves_rejected_answers_out(worked_study):
    rows = by_field(study_report(worked_study))
    label = rows[("label", "")]
    # counted labels: i1 cat cat cat; i2 dog dog (w3's cat rejected); i3 dog dog dog (w1 corrected);
    # i4 bird bird bird: every item unanimous, and no disagreement at all -> alpha = 1 - 0 / D_e = 1
    assert label["unanimous_share"]["value"] == 1.0
    assert math.isclose(label["alpha_nominal"]["value"], 1.0)
    # statement s1: i1 y y y, i2 y n, i3 n n n, i4 y y n
    # coincidences: o_yy = 6/2 + 2/2 = 4, o_nn = 6/2 = 3, o_yn = o_ny = 1 (i2) + 2/2 (i4) = 2; n = 11
    # n_y = 6, n_n = 5; alpha = 1 - (n - 1) * (o_yn + o_ny) / (2 * n_y * n_n) = 1 - 10 * 4 / 60 = 1/3
    s1 = rows[("claims", "s1")]
    assert math.isclose(s1["alpha_nominal"]["value"], 1 - 10 * 4 / (2 * 6 * 5))
    assert s1["unanimous_share"]["value"] == 2 / 4
    # multi-select per candidate: red is yes for i1 (3x), i4 (w1, w3), else no
    red = rows[("tags", "red")]
    expected = agreement.krippendorff_alpha({
        "i1": {"w1": "yes", "w2": "yes", "w3": "yes"}, "i2": {"w1": "no", "w2": "no"},
        "i3": {"w1": "no", "w2": "no", "w3": "no"}, "i4": {"w1": "yes", "w2": "no", "w3": "yes"}})
    assert math.isclose(red["alpha_nominal"]["value"], expected.value)


def test_worker_rows(worked_study, workers):
    report = study_report(worked_study)
    rows = {row["worker"]: row for row in report["workers"]}
    assert list(rows) == ["w1", "w2", "w3"]
    w1, w2, w3 = rows["w1"], rows["w2"], rows["w3"]
    assert (w1["submissions"], w1["approved"], w1["rejected"], w1["pending"]) == (6, 3, 0, 3)
    assert (w2["submissions"], w2["approved"], w2["rejected"], w2["pending"]) == (6, 1, 0, 5)
    assert (w3["submissions"], w3["approved"], w3["rejected"], w3["pending"]) == (6, 1, 1, 4)
    # gold: w1 and w2 answered cat (right), w3 dog (wrong); attention: w2 missed it
    assert (w1["gold_accuracy"], w2["gold_accuracy"], w3["gold_accuracy"]) == (1.0, 1.0, 0.0)
    assert (w3["gold_passed"], w3["gold_checks"]) == (0, 1)
    assert (w1["attention_accuracy"], w2["attention_accuracy"], w3["attention_accuracy"]) == (1.0, 0.0, 1.0)
    # expert-accepted rate: reviewed expert samples only (w1's corrected i3 was not sampled)
    assert (w1["expert_accepted"], w1["expert_reviewed"], w1["expert_accept_rate"]) == (2, 2, 1.0)
    assert (w2["expert_accepted"], w2["expert_reviewed"], w2["expert_accept_rate"]) == (1, 1, 1.0)
    assert (w3["expert_accepted"], w3["expert_reviewed"], w3["expert_accept_rate"]) == (1, 2, 0.5)
    assert (w1["excluded"], w2["excluded"], w3["excluded"]) == (False, False, True)
    assert "expert-accepted rate" in w3["exclusion_reason"]
    assert (w1["mean_active_seconds"], w2["mean_active_seconds"], w3["mean_active_seconds"]) == (10.0, 20.0, 30.0)
    assert all(row["mean_wall_seconds"] >= 0 for row in rows.values())


def test_throughput_and_progress(worked_study):
    report = study_report(worked_study)
    throughput = report["throughput"]
    assert throughput["submissions"] == 18
    # 6 submissions each of 10, 20 and 30 active seconds
    assert throughput["median_active_seconds"] == 20.0 and throughput["mean_active_seconds"] == 20.0
    assert throughput["median_wall_seconds"] >= 0 and throughput["mean_wall_seconds"] >= 0
    assert throughput["span_hours"] is None or throughput["submissions_per_hour"] == pytest.approx(
        18 / throughput["span_hours"])
    # the rejection gave i2's place back: 3 regular items complete, 1 open
    assert report["items"] == {"k": 3, "regular_items": 4, "complete": 3, "open": 1, "check_items": 2}
    assert report["submissions"] == {"total": 18, "rejected": 1, "counted": 17}


def test_an_empty_study_reports_without_numbers(study, curator):
    report = study_report(study)
    assert report["workers"] == [] and report["submissions"]["total"] == 0
    for row in report["agreement"]:
        assert row["n_items"] == 0
        assert row["alpha_nominal"]["value"] is None and row["alpha_nominal"]["reason"]
    assert report["throughput"]["submissions_per_hour"] is None
    assert report["throughput"]["median_active_seconds"] is None
    assert report["items"]["open"] == 4
    assert list(report_csv_rows(study)) == [CSV_COLUMNS]
    page = logged_in_client(curator).get(reverse("crowd-study-report", kwargs={"slug": study.slug}))
    assert page.status_code == 200 and "Nobody has worked on this study yet." in page.content.decode()


def test_csv_rows(worked_study):
    rows = list(report_csv_rows(worked_study))
    assert rows[0] == CSV_COLUMNS
    body = {row[1]: dict(zip(CSV_COLUMNS, row, strict=True)) for row in rows[1:]}
    assert body["w3"]["rejected"] == 1 and body["w3"]["gold_accuracy"] == "0" and body["w3"]["excluded"] == "yes"
    assert body["w1"]["attention_accuracy"] == "1" and body["w2"]["expert_accept_rate"] == "1"


# --- The endpoints and the page --------------------------------------------------------------

def test_json_endpoint(worked_study, curator, researcher, annotator):
    url = reverse("api-study-report", kwargs={"slug": worked_study.slug})
    assert url == "/api/studies/animals/report/"
    response = logged_in_api(curator).get(url)
    assert response.status_code == 200
    body = response.json()
    assert body["study"]["slug"] == "animals"
    assert {row["worker"] for row in body["workers"]} == {"w1", "w2", "w3"}
    assert len(body["agreement"]) == 6
    assert logged_in_api(researcher).get(url).status_code == 200
    assert logged_in_api(annotator).get(url).status_code == 403
    assert logged_in_api(None).get(url).status_code in (401, 403)
    assert logged_in_api(curator).get("/api/studies/no-such-study/report/").status_code == 404


def _csv(response) -> list[list[str]]:
    assert response.status_code == 200, response
    assert response["Content-Type"].startswith("text/csv")
    assert response.streaming
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))


@pytest.mark.parametrize("path", ["/api/studies/animals/report.csv", "/api/studies/animals/report.csv/"])
def test_csv_endpoint(worked_study, curator, researcher, path):
    rows = _csv(logged_in_client(curator).get(path))
    assert rows[0] == CSV_COLUMNS
    assert [row[1] for row in rows[1:]] == ["w1", "w2", "w3"]
    assert 'filename="animals-workers.csv"' in logged_in_client(researcher).get(path)["Content-Disposition"]


def test_csv_endpoint_by_url_name_and_refusals(worked_study, curator, annotator):
    url = reverse("api-study-report-csv", kwargs={"slug": worked_study.slug})
    assert len(_csv(logged_in_client(curator).get(url))) == 4
    # the report action also answers CSV when CSV is asked for in DRF's usual ways
    json_url = reverse("api-study-report", kwargs={"slug": worked_study.slug})
    assert _csv(logged_in_client(curator).get(json_url + "?format=csv"))[0] == CSV_COLUMNS
    assert logged_in_client(annotator).get(url).status_code == 403
    assert logged_in_client(annotator).get("/api/studies/animals/report.csv").status_code == 403
    assert logged_in_api(None).get(url).status_code in (401, 403)
    assert logged_in_client(curator).get("/api/studies/no-such-study/report.csv").status_code == 404


def test_report_page(worked_study, curator, researcher, admin_user, annotator):
    url = reverse("crowd-study-report", kwargs={"slug": worked_study.slug})
    assert url == "/studies/animals/report/"
    response = logged_in_client(curator).get(url)
    assert response.status_code == 200
    html = response.content.decode()
    for table in ('id="agreement"', 'id="workers"', 'id="throughput"'):
        assert table in html
    assert reverse("api-study-report-csv", kwargs={"slug": "animals"}) in html
    assert "An animal is visible" in html and "w3" in html and "excluded" in html
    assert "not applicable" in html  # Fleiss' kappa does not apply here, and the page says so
    assert logged_in_client(researcher).get(url).status_code == 200
    assert logged_in_client(admin_user).get(url).status_code == 200
    assert logged_in_client(annotator).get(url).status_code == 403
    anonymous = logged_in_client(None).get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    assert logged_in_client(curator).get("/studies/no-such-study/report/").status_code == 404


def test_statements_and_candidates_from_the_payload_are_pooled(curator):
    form = {"fields": [
        {"name": "facts", "type": "yes_no_statements", "statements_from": "statements"},
        {"name": "objects", "type": "multi_select", "candidates_from": "candidates"},
    ]}
    study = Study.objects.create(name="Pooled", slug="pooled", form_schema=form, annotators_per_item=2,
                                 state=Study.State.OPEN, expert_first=0, expert_share=0.0)
    assignment.add_items(study, [
        {"external_id": "p1", "payload": {"statements": ["sky is blue", "grass is red"], "candidates": ["a", "b"]}},
        {"external_id": "p2", "payload": {"statements": ["one", "two", "three"], "candidates": ["c"]}},
    ])
    answers = {  # per worker and item: (statements answers, selected candidates)
        "u1": {"p1": (["yes", "no"], ["a"]), "p2": (["yes", "yes", "no"], ["c"])},
        "u2": {"p1": (["yes", "yes"], ["a", "b"]), "p2": (["yes", "no", "no"], [])},
    }
    for name, mine in answers.items():
        worker = make_user(name, ANNOTATOR)
        while (claim := assignment.claim_next(study, worker)) is not None:
            said, chosen = mine[claim.item.external_id]
            statements = claim.item.payload["statements"]  # plain strings: each is its own id
            submissions.submit(claim, worker, {"facts": dict(zip(statements, said, strict=True)), "objects": chosen})
    rows = by_field(study_report(study))
    assert set(rows) == {("facts", "*"), ("objects", "*")}
    facts, objects = rows[("facts", "*")], rows[("objects", "*")]
    # units are (item, statement): 2 + 3 = 5 units of 2 ratings; unanimous: p1/0, p2/0, p2/2 -> 3/5
    assert (facts["n_items"], facts["n_ratings"]) == (5, 10)
    assert facts["unanimous_share"]["value"] == 3 / 5
    # candidates: p1/a yes yes, p1/b no yes, p2/c yes no -> 1/3 unanimous; equal counts: Fleiss applies
    assert (objects["n_items"], objects["n_ratings"]) == (3, 6)
    assert objects["unanimous_share"]["value"] == 1 / 3
    assert objects["fleiss_kappa"]["applicable"] is True
    # Fleiss by hand: P_i = 1, 0, 0 -> P_bar = 1/3; p_yes = 4/6, p_no = 2/6 -> P_e = 16/36 + 4/36 = 5/9
    assert math.isclose(objects["fleiss_kappa"]["value"], (1 / 3 - 5 / 9) / (1 - 5 / 9))
