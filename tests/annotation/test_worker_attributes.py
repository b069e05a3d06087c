"""Worker attributes and the rules studies set on them: numeric ranges, the rules' shape checked where
studies are saved, readable rules and rule rows on the settings page, the curators' worker pages, and
the import of a platform's demographics CSV (page and command)."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.crowd import attribute_import, worker_attributes
from annotation.crowd.models import Claim, Study, WorkerProfile
from annotation.crowd.study_forms import StudySettingsForm
from config.roles import ANNOTATOR
from tests.conftest import create_study, logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [{"name": "answer", "type": "single_choice", "label": "Right?", "options": ["yes", "no"]}]}
ADULT = {"age": {"min": 18, "max": 65}}


# --- Rules --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("attributes", "refused"), [
    ({"age": 30}, ""),
    ({"age": 18}, ""),  # bounds are inclusive
    ({"age": 65}, ""),
    ({"age": "40"}, ""),  # a numeric text counts
    ({"age": 17}, "This study needs workers with age between 18 and 65."),
    ({"age": 66}, "This study needs workers with age between 18 and 65."),
    ({}, "This study needs workers with age between 18 and 65; your profile has no age."),
    ({"age": "DATA_EXPIRED"}, "This study needs workers with age between 18 and 65; your profile has no numeric age."),
    ({"age": True}, "This study needs workers with age between 18 and 65; your profile has no numeric age."),
])
def test_a_range_rule_refuses_workers_outside_it(attributes, refused):
    assert worker_attributes.refusal(ADULT, attributes) == refused


def test_a_stored_rule_with_a_text_bound_is_read_as_a_number():
    assert worker_attributes.refusal({"age": {"min": "18"}}, {"age": 17}) == \
        "This study needs workers with age at least 18."


def test_a_range_may_have_one_bound():
    assert worker_attributes.refusal({"age": {"min": 18}}, {"age": 99}) == ""
    assert worker_attributes.refusal({"age": {"min": 18}}, {"age": 12}) == \
        "This study needs workers with age at least 18."
    assert worker_attributes.refusal({"age": {"max": 30}}, {"age": 31}) == \
        "This study needs workers with age at most 30."


def test_rules_read_as_sentences():
    rules = {"native_language": "it", "country_of_upbringing": ["IT", "CH"], **ADULT, "age2": {"min": 3}}
    assert worker_attributes.describe(rules) == [
        "Native language: it", "Country of upbringing: IT or CH", "Age between 18 and 65", "age2 at least 3"]


@pytest.mark.parametrize(("rules", "problem"), [
    ({"age": {"min": 70, "max": 18}}, "age: min (70) is greater than max (18)"),
    ({"age": {"min": "eighteen"}}, "age: min must be a number"),
    ({"age": {"min": "18"}}, "age: min must be a number"),
    ({"age": {"min": 18, "upto": 30}}, "age: unknown key upto in a range; a range has min and/or max"),
    ({"age": {}}, "age: a range needs min, max or both"),
    ({"native_language": []}, "native_language: list at least one allowed value"),
    ({"native_language": [{"a": 1}]}, "native_language: allowed values are texts or whole numbers"),
    ([1, 2], "a JSON object of attribute names"),
])
def test_rules_of_the_wrong_shape_are_named(rules, problem):
    assert problem in "; ".join(worker_attributes.rule_problems(rules))


@pytest.mark.parametrize(("rules", "message"), [
    ({"age": {"min": 70, "max": 18}}, "min (70) is greater than max (18)"),
    ({"age": {"min": "x"}}, "min must be a number"),
    ({"age": {"min": 1, "low": 2}}, "unknown key low in a range"),
])
def test_the_api_refuses_bad_rules_with_400_and_saves_nothing(curator, rules, message):
    study = create_study("s", form=FORM, items=1)
    api = logged_in_api(curator)
    response = api.patch(f"/api/studies/{study.slug}/", {"required_attributes": rules}, format="json")
    assert response.status_code == 400 and message in response.json()["required_attributes"][0]
    assert Study.objects.get(pk=study.pk).required_attributes == {}
    created = api.post("/api/studies/", {"name": "New", "slug": "new", "form_schema": FORM,
                                         "required_attributes": rules}, format="json")
    assert created.status_code == 400 and message in created.json()["required_attributes"][0]
    assert not Study.objects.filter(slug="new").exists()
    good = api.patch(f"/api/studies/{study.slug}/", {"required_attributes": ADULT}, format="json")
    assert good.status_code == 200 and Study.objects.get(pk=study.pk).required_attributes == ADULT


@pytest.mark.parametrize(("age", "refused"), [(17, True), (18, False), (65, False), (66, True), (None, True)])
def test_a_claim_is_refused_for_a_worker_outside_the_age_range(age, refused):
    study = create_study("s", form=FORM, items=1, required_attributes={"native_language": "it", **ADULT})
    worker = make_user("w", ANNOTATOR)
    WorkerProfile.objects.create(user=worker, attributes={"native_language": "it",
                                                          **({"age": age} if age is not None else {})})
    response = logged_in_api(worker).post(f"/api/studies/{study.slug}/claim/")
    if refused:
        assert response.status_code == 403
        assert response.json()["error"].startswith("This study needs workers with age between 18 and 65")
        assert not Claim.objects.exists()
    else:
        assert response.status_code == 201


def test_the_task_page_says_why_a_worker_is_refused():
    study = create_study("s", form=FORM, items=1, required_attributes=ADULT)
    worker = make_user("w", ANNOTATOR)
    WorkerProfile.objects.create(user=worker, attributes={"age": 70})
    response = logged_in_client(worker).get(reverse("crowd-work", kwargs={"slug": study.slug}))
    assert response.status_code == 403
    assert "This study needs workers with age between 18 and 65." in response.content.decode()
    assert not Claim.objects.exists()


# --- The settings page ----------------------------------------------------------------------------

def _settings_data(study) -> dict:
    form = StudySettingsForm(instance=study)
    return {name: form[name].value() for name in form.fields
            if form[name].value() is not None and form[name].value() is not False}


def _rows(*rows) -> dict:
    data = {"rule-rows": "1"}
    for n, (attribute, values, low, high) in enumerate(rows):
        data.update({f"rule-attribute_{n}": attribute, f"rule-values_{n}": values, f"rule-min_{n}": low,
                     f"rule-max_{n}": high})
    return data


def test_the_settings_page_shows_the_rules_and_saves_rule_rows(curator):
    study = create_study("s", form=FORM, items=1, required_attributes={"native_language": "it", **ADULT})
    client = logged_in_client(curator)
    url = reverse("crowd-study-settings", kwargs={"slug": study.slug})
    page = client.get(url).content.decode()
    assert "Age between 18 and 65" in page and "Native language: it" in page
    detail = client.get(reverse("crowd-study-detail", kwargs={"slug": study.slug})).content.decode()
    assert "Native language: it; Age between 18 and 65" in detail
    assert 'name="rule-min_1" value="18"' in page
    rows = _rows(("native_language", "Italian, en, it", "", ""), ("country_of_upbringing", "Italy", "", ""),
                 ("age", "", "20", ""), ("", "", "", ""))
    response = client.post(url, {**_settings_data(study), **rows})
    assert response.status_code == 302, response.content.decode()
    study.refresh_from_db()
    assert study.required_attributes == {"native_language": ["it", "en"], "country_of_upbringing": "IT",
                                         "age": {"min": 20}}


def test_unchanged_rule_rows_keep_the_json_rules(curator):
    study = create_study("s", form=FORM, items=1)
    client = logged_in_client(curator)
    url = reverse("crowd-study-settings", kwargs={"slug": study.slug})
    rules = {"native_language": ["it", "en"], "hobby": "chess"}
    response = client.post(url, {**_settings_data(study), "required_attributes": json.dumps(rules),
                                 **_rows(("", "", "", ""))})
    assert response.status_code == 302
    assert Study.objects.get(pk=study.pk).required_attributes == rules


@pytest.mark.parametrize(("row", "message"), [
    (("age", "", "70", "18"), "min (70) is greater than max (18)"),
    (("age", "", "old", ""), "min must be a number"),
    (("age", "30", "18", ""), "give allowed values or a range, not both"),
    (("", "it", "", ""), "name the attribute"),
    (("native_language", "Klingon", "", ""), "unknown language"),
])
def test_bad_rule_rows_are_400_and_save_nothing(curator, row, message):
    study = create_study("s", form=FORM, items=1, required_attributes=ADULT)
    url = reverse("crowd-study-settings", kwargs={"slug": study.slug})
    response = logged_in_client(curator).post(url, {**_settings_data(study), **_rows(row)})
    assert response.status_code == 400 and message in response.content.decode()
    assert Study.objects.get(pk=study.pk).required_attributes == ADULT


def test_bad_json_rules_on_the_settings_page_are_400(curator):
    study = create_study("s", form=FORM, items=1)
    url = reverse("crowd-study-settings", kwargs={"slug": study.slug})
    response = logged_in_client(curator).post(url, {**_settings_data(study),
                                                    "required_attributes": json.dumps({"age": {"min": 9, "max": 1}})})
    assert response.status_code == 400 and "min (9) is greater than max (1)" in response.content.decode()
    assert Study.objects.get(pk=study.pk).required_attributes == {}


# --- Worker pages --------------------------------------------------------------------------------

def test_a_curator_lists_workers_and_edits_their_attributes(curator):
    worker = make_user("giulia", ANNOTATOR)
    WorkerProfile.objects.create(user=worker, platform="prolific", platform_worker_id="P1",
                                 attributes={"native_language": "it", "hobby": "chess"})
    client = logged_in_client(curator)
    listing = client.get(reverse("crowd-workers"), {"q": "P1"}).content.decode()
    assert 'data-worker="giulia"' in listing and "Native language" in listing
    url = reverse("crowd-worker-attributes", kwargs={"username": "giulia"})
    assert "chess" in client.get(url).content.decode()
    saved = client.post(url, {"native_language": "Italian", "country_of_upbringing": "Italy", "age": "31"})
    assert saved.status_code == 302
    assert WorkerProfile.objects.get(user=worker).attributes == {
        "native_language": "it", "country_of_upbringing": "IT", "age": 31, "hobby": "chess"}
    refused = client.post(url, {"native_language": "it", "country_of_upbringing": "IT", "age": "thirty"})
    assert refused.status_code == 400 and "is not a whole number" in refused.content.decode()
    assert WorkerProfile.objects.get(user=worker).attributes["age"] == 31
    cleared = client.post(url, {"native_language": "it", "country_of_upbringing": "", "age": ""})
    assert cleared.status_code == 302
    assert WorkerProfile.objects.get(user=worker).attributes == {"native_language": "it", "hobby": "chess"}


def test_workers_pages_are_for_curators(annotator):
    client = logged_in_client(annotator)
    assert client.get(reverse("crowd-workers")).status_code == 403
    assert client.post(reverse("crowd-worker-attributes", kwargs={"username": "ann"}), {"age": "40"}).status_code == 403
    assert client.post(reverse("crowd-workers-import")).status_code == 403


# --- Importing a platform's demographics ------------------------------------------------------

EXPORT = """Submission id,Participant id,Status,Age,First language,Country of birth,Nationality,Sex
s1,P1,APPROVED,31,Italian,Italy,Italy,Female
s2,P2,APPROVED,DATA_EXPIRED,Italian,Switzerland,Italy,Male
s3,P9,APPROVED,40,English,United Kingdom,United Kingdom,Male
s4,P3,APPROVED,22,Klingon,Italy,Italy,Female
"""


@pytest.fixture
def prolific_workers(db):
    found = {}
    for n in (1, 2, 3):
        user = make_user(f"p{n}", ANNOTATOR)
        found[n] = WorkerProfile.objects.create(user=user, platform="prolific", platform_worker_id=f"P{n}",
                                                attributes={"native_language": "xx"} if n == 3 else {})
    return found


def _attributes(profiles) -> dict:
    return {n: WorkerProfile.objects.get(pk=p.pk).attributes for n, p in profiles.items()}


def test_the_default_mapping_normalises_and_reports_unknown_workers_and_bad_values(prolific_workers):
    report = attribute_import.import_attributes(EXPORT.encode())
    assert report.mapping == {"First language": "native_language", "Country of birth": "country_of_upbringing",
                              "Age": "age"}
    assert _attributes(prolific_workers) == {
        1: {"native_language": "it", "country_of_upbringing": "IT", "age": 31},
        2: {"native_language": "it", "country_of_upbringing": "CH"},
        3: {"native_language": "xx", "country_of_upbringing": "IT", "age": 22},
    }
    assert report.unknown_workers == ["P9"] and report.updated == ["P1", "P2", "P3"]
    assert report.problems == ["line 3 (P2), Age: 'DATA_EXPIRED' is not a whole number",
                               "line 5 (P3), First language: unknown language 'Klingon'"]


def test_a_given_mapping_replaces_the_default(prolific_workers):
    report = attribute_import.import_attributes(
        EXPORT, mapping=attribute_import.parse_mapping(["Nationality=country_of_upbringing"]))
    assert report.mapping == {"Nationality": "country_of_upbringing"}
    assert _attributes(prolific_workers)[1] == {"country_of_upbringing": "IT"}


def test_workers_of_another_platform_are_not_matched(prolific_workers):
    report = attribute_import.import_attributes(EXPORT, platform="mturk")
    assert report.unknown_workers == ["P1", "P2", "P9", "P3"] and not report.updated
    assert _attributes(prolific_workers)[1] == {}


@pytest.mark.parametrize(("data", "message"), [
    (b"", "The file is empty."),
    (b"\xff\xfe\x00bad", "not UTF-8"),
    (EXPORT.replace("s4,P3,APPROVED,22", "s4,P3,APPROVED,22,extra").encode(), "Line 5 has a different number"),
    (b"Age,First language\n31,Italian\n", "no participant id column"),
    (b"Participant id,Sex\nP1,Female\n", "None of the columns"),
])
def test_a_malformed_file_is_refused_and_writes_nothing(prolific_workers, data, message):
    with pytest.raises(attribute_import.ImportRefused, match=message):
        attribute_import.import_attributes(data)
    assert _attributes(prolific_workers) == {1: {}, 2: {}, 3: {"native_language": "xx"}}


def test_a_mapped_column_missing_from_the_file_is_refused(prolific_workers):
    with pytest.raises(attribute_import.ImportRefused, match="no column 'Language of birth'"):
        attribute_import.import_attributes(EXPORT, mapping={"Language of birth": "native_language"})
    with pytest.raises(attribute_import.ImportRefused, match="Column=attribute"):
        attribute_import.parse_mapping(["Age"])


def test_the_import_page_shows_its_report_and_refuses_a_malformed_file(curator, prolific_workers):
    client = logged_in_client(curator)
    url = reverse("crowd-workers-import")
    assert client.get(url).status_code == 200
    response = client.post(url, {"file": SimpleUploadedFile("export.csv", EXPORT.encode()), "platform": "prolific",
                                 "mapping": "First language=native_language\nAge=age"})
    page = response.content.decode()
    assert response.status_code == 200 and "3 workers updated" in page and "P9" in page
    assert "DATA_EXPIRED" in page
    assert _attributes(prolific_workers)[1] == {"native_language": "it", "age": 31}
    bad = client.post(url, {"file": SimpleUploadedFile("x.csv", b"Participant id,Age\nP1,30,extra\n"),
                            "platform": "prolific", "mapping": ""})
    assert bad.status_code == 400 and "different number of columns" in bad.content.decode()
    assert _attributes(prolific_workers)[1]["age"] == 31
    wrong_map = client.post(url, {"file": SimpleUploadedFile("export.csv", EXPORT.encode()),
                                  "platform": "prolific", "mapping": "Age"})
    assert wrong_map.status_code == 400 and "Column=attribute" in wrong_map.content.decode()


def test_the_command_mirrors_the_page(prolific_workers, tmp_path, capsys):
    path = tmp_path / "export.csv"
    path.write_text(EXPORT)
    call_command("import_worker_attributes", str(path), "--map", "Age=age",
                 "--map", "Country of birth=country_of_upbringing")
    out = capsys.readouterr().out
    assert "unknown worker: P9" in out and "4 rows: 3 updated" in out
    assert _attributes(prolific_workers)[1] == {"country_of_upbringing": "IT", "age": 31}
    path.write_text("Participant id,Age\nP1,30,extra\n")
    with pytest.raises(CommandError, match="different number of columns"):
        call_command("import_worker_attributes", str(path))
    assert _attributes(prolific_workers)[1]["age"] == 31
