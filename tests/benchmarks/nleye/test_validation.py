"""NL-EYE curation, steps 4 and 5 (SPEC §3): the explanation and categorization page, the second curator's
validation of the images and the plausibility, and the gate that keeps a curated version from being frozen
before every triplet is validated (imported releases are not gated).

Pool items are made here with the ORM: a triplet item of an unfrozen curated NL-EYE version, its three
library images under the media roles, a curation record and the image attempts a designer picked."""

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import versions
from annotation.benchmarks.nleye import explanation, stages, triplets, validation, vocabulary
from annotation.curation_models import CurationRecord, ImageAttempt, ItemCheck
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, FrozenError, ItemMedia
from config.roles import CURATOR
from tests.conftest import ingest_path, logged_in_api, logged_in_client, make_user

SLOTS = ("premise", "hypothesis1", "hypothesis2")
ASPECTS = ("image:premise", "image:hypothesis1", "image:hypothesis2", "plausibility")
SCENES = {"premise": "A man lies in a hospital bed with a cast on his leg.",
          "hypothesis1": "A man slips on a wet floor without a warning sign.",
          "hypothesis2": "A man walks carefully on a dry floor."}
EXPLAINED = {"explanation": "A wet floor without a sign makes people slip and break bones.",
             "reasoning_category": "physical", "time_direction": "backward", "time_duration": "short",
             "domain": "healthcare"}


@pytest.fixture
def pictures(db, skimage_data, curator):
    return {slot: ingest_path(skimage_data / name, user=curator)
            for slot, name in zip(SLOTS, ("astronaut.png", "coffee.png", "chelsea.png"), strict=True)}


@pytest.fixture
def spare_picture(db, skimage_data, curator):
    return ingest_path(skimage_data / "rocket.jpg", user=curator)


@pytest.fixture
def people(db):
    return {name: make_user(name, CURATOR) for name in ("designer", "writer", "checker", "other")}


def nleye_version(label: str, source=BenchmarkVersion.Source.CURATION) -> BenchmarkVersion:
    return BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="nleye"), label=label, source=source)


def make_triplet(version, external_id, pictures, *, designer=None, payload=None, working=None, images=SLOTS):
    """A pool triplet: payload, the images of `images` under their roles, a curation record, and (with
    `designer`) an image attempt per slot that the designer made final."""
    item = BenchmarkItem.objects.create(version=version, external_id=external_id, payload={
        "kind": "triplet", "sample_id": external_id, **SCENES, "label": 1, **(payload or {})})
    for slot in images:
        ItemMedia.objects.create(item=item, role=slot, image=pictures[slot])
    CurationRecord.objects.create(item=item, stage=stages.IMAGES_CHOSEN, author=designer, working=working or {})
    if designer is not None:
        for slot in images:
            ImageAttempt.objects.create(item=item, slot=slot, mode=ImageAttempt.Mode.TEXT_TO_IMAGE,
                                        prompt=f"{SCENES[slot]}, captured with a Nikon D850", seed=7,
                                        model_id="tiny/sd", created_by=designer, status=ImageAttempt.Status.DONE,
                                        chosen_at=timezone.now(), chosen_by=designer)
    return item


@pytest.fixture
def pool(db):
    return nleye_version("pool")


@pytest.fixture
def triplet(pool, pictures, people):
    return make_triplet(pool, "t-1", pictures, designer=people["designer"])


def explain(user, item, **values):
    return logged_in_client(user).post(f"/nleye/triplets/{item.pk}/explain/", {**EXPLAINED, **values})


def validate(user, item, verdicts: dict, seen: dict | None = None):
    data = {}
    for aspect, (verdict, note) in verdicts.items():
        data[f"verdict-{aspect}"] = verdict
        data[f"note-{aspect}"] = note
    for aspect, value in (seen or {}).items():
        data[f"seen-{aspect}"] = value
    return logged_in_client(user).post(f"/nleye/triplets/{item.pk}/validate/", data)


def all_pass(note=""):
    return dict.fromkeys(ASPECTS, ("pass", note))


def latest(item, aspect):
    return ItemCheck.objects.filter(item=item, aspect=aspect).order_by("-checked_at", "-id").first()


def state_of(item) -> validation.TripletState:
    """The triplet's validation state, read afresh."""
    return validation.triplet_state(triplets.triplet_items().get(pk=item.pk))


def page_text(response) -> str:
    return response.content.decode()


# --- Explanation and categorization -----------------------------------------------------------------

def test_the_explanation_page_offers_the_vocabularies_and_writes_the_payload(triplet, people):
    client = logged_in_client(people["writer"])
    page = client.get(f"/nleye/triplets/{triplet.pk}/explain/")
    assert page.status_code == 200
    text = page_text(page)
    for value in (*vocabulary.CATEGORY_VALUES, *vocabulary.DIRECTION_VALUES, *vocabulary.DURATION_VALUES,
                  *vocabulary.DOMAIN_VALUES):
        assert f'value="{value.replace("&", "&amp;")}"' in text
    assert SCENES["hypothesis1"] in text and "more plausible" in text

    response = explain(people["writer"], triplet)

    assert response.status_code == 302
    triplet.refresh_from_db()
    assert {name: triplet.payload[name] for name in EXPLAINED} == EXPLAINED
    assert triplet.payload["premise"] == SCENES["premise"] and triplet.payload["label"] == 1
    record = CurationRecord.objects.get(item=triplet)
    working = record.working
    assert working["explained_by"] == people["writer"].pk and working["explanation_authors"] == [people["writer"].pk]
    assert "explained_at" in working and record.stage == stages.EXPLAINED


def test_every_writer_of_the_explanation_is_recorded(triplet, people):
    assert explain(people["writer"], triplet).status_code == 302
    assert explain(people["other"], triplet, explanation="Wet floors are slippery.").status_code == 302
    working = CurationRecord.objects.get(item=triplet).working
    assert working["explained_by"] == people["other"].pk
    assert working["explanation_authors"] == sorted([people["writer"].pk, people["other"].pk])


@pytest.mark.parametrize(("field", "value"), [
    ("reasoning_category", "magical"), ("time_direction", "sideways"), ("time_duration", "medium"),
    ("domain", "space travel"), ("explanation", "   ")])
def test_values_outside_the_vocabularies_are_refused_and_nothing_is_written(triplet, people, field, value):
    response = explain(people["writer"], triplet, **{field: value})

    assert response.status_code == 400
    assert f'data-field="{field}"' in page_text(response)
    triplet.refresh_from_db()
    assert "explanation" not in triplet.payload and "reasoning_category" not in triplet.payload
    assert "explained_by" not in CurationRecord.objects.get(item=triplet).working


def test_a_parallel_triplet_is_short(triplet, people):
    response = explain(people["writer"], triplet, time_direction="parallel", time_duration="long")
    assert response.status_code == 400
    assert "its duration is short" in page_text(response)
    triplet.refresh_from_db()
    assert "time_direction" not in triplet.payload

    assert explain(people["writer"], triplet, time_direction="parallel", time_duration="short").status_code == 302
    triplet.refresh_from_db()
    assert (triplet.payload["time_direction"], triplet.payload["time_duration"]) == ("parallel", "short")


def test_the_form_starts_from_the_category_the_scene_s_author_proposed(pool, pictures, people):
    item = make_triplet(pool, "t-2", pictures, working={"reasoning_category": "social", "domain": "religion"})
    assert explanation.initial(item) == {"reasoning_category": "social", "domain": "religion"}
    text = page_text(logged_in_client(people["writer"]).get(f"/nleye/triplets/{item.pk}/explain/"))
    assert '<option value="social" selected>' in text


def test_a_frozen_version_s_triplet_cannot_be_explained(pictures, people):
    released = nleye_version("release", source=BenchmarkVersion.Source.IMPORT)
    item = make_triplet(released, "r-1", pictures)
    versions.freeze(released)

    response = explain(people["writer"], item)

    assert response.status_code == 409
    assert "is frozen" in page_text(response)
    item.refresh_from_db()
    assert "explanation" not in item.payload
    with pytest.raises(FrozenError):
        explanation.write_explanation(item.pk, EXPLAINED, people["writer"])


def test_the_explanation_page_is_for_curators_and_knows_only_triplets(triplet, curator, annotator, researcher):
    url = f"/nleye/triplets/{triplet.pk}/explain/"
    for user in (annotator, researcher):
        assert logged_in_client(user).get(url).status_code == 403
        assert logged_in_client(user).post(url, EXPLAINED).status_code == 403
    assert logged_in_client(None).get(url).status_code == 302
    triplet.refresh_from_db()
    assert "explanation" not in triplet.payload
    assert logged_in_client(curator).get("/nleye/triplets/987654/explain/").status_code == 404
    other = BenchmarkItem.objects.create(
        version=BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="c"),
        external_id="q", payload={"kind": "real", "question": "How many?", "answer": "two", "type": "numerical"})
    assert logged_in_client(curator).get(f"/nleye/triplets/{other.pk}/explain/").status_code == 404
    assert logged_in_client(curator).get(f"/nleye/triplets/{other.pk}/validate/").status_code == 404


# --- Validation ---------------------------------------------------------------------------------------

@pytest.fixture
def explained(triplet, people):
    assert explain(people["writer"], triplet).status_code == 302
    triplet.refresh_from_db()
    return triplet


def test_the_validation_page_shows_the_images_with_their_scenes_and_prompts(explained, people, pictures):
    response = logged_in_client(people["checker"]).get(f"/nleye/triplets/{explained.pk}/validate/")
    assert response.status_code == 200
    text = page_text(response)
    for slot in SLOTS:
        assert SCENES[slot] in text
        assert f"{SCENES[slot]}, captured with a Nikon D850" in text
        assert f'data-aspect="image:{slot}"' in text
        assert reverse("media-image-file", kwargs={"pk": pictures[slot].pk}) in text
    assert EXPLAINED["explanation"] in text and 'name="verdict-plausibility"' in text


def test_a_second_curator_validates_and_the_triplet_is_then_complete(explained, people):
    response = validate(people["checker"], explained, all_pass())

    assert response.status_code == 302
    assert {check.aspect for check in ItemCheck.objects.filter(item=explained)} == set(ASPECTS)
    assert all(check.checked_by == people["checker"] for check in ItemCheck.objects.filter(item=explained))
    state = state_of(explained)
    assert state.validated and state.missing == []
    assert CurationRecord.objects.get(item=explained).stage == stages.VALIDATED


@pytest.mark.parametrize(("who", "aspect", "reason"), [
    ("designer", "image:premise", "made the premise image final"),
    ("designer", "plausibility", "made the premise image final"),
    ("writer", "image:hypothesis2", "wrote the explanation"),
    ("writer", "plausibility", "wrote the explanation"),
])
def test_nobody_validates_their_own_work(explained, people, who, aspect, reason):
    response = validate(people[who], explained, {aspect: ("pass", "")})

    assert response.status_code == 403
    assert reason in page_text(response) and "needs another curator" in page_text(response)
    assert not ItemCheck.objects.filter(item=explained).exists()


def test_a_refused_verdict_refuses_the_whole_form(explained, people):
    response = validate(people["designer"], explained, {"image:hypothesis1": ("pass", ""),
                                                        "plausibility": ("pass", "")})
    assert response.status_code == 403
    assert not ItemCheck.objects.filter(item=explained).exists()


def test_the_rule_follows_each_slot_s_designer(pool, pictures, people):
    item = make_triplet(pool, "t-3", pictures, payload=EXPLAINED)
    ImageAttempt.objects.create(item=item, slot="hypothesis2", mode=ImageAttempt.Mode.INPAINT, prompt="dry floor",
                                seed=7, model_id="tiny/sd", created_by=people["designer"],
                                chosen_at=timezone.now(), chosen_by=people["designer"])
    assert validate(people["designer"], item, {"image:premise": ("pass", "")}).status_code == 302
    assert validate(people["designer"], item, {"image:hypothesis2": ("pass", "")}).status_code == 403


def test_a_later_check_supersedes_an_earlier_one(explained, people):
    assert validate(people["checker"], explained, {"image:premise": ("fail", "The cast is on the arm.")}).status_code \
        == 302
    assert state_of(explained).aspect("image:premise").status == "fails"
    assert "a passing check of the premise image (the latest fails)" in state_of(explained).missing

    assert validate(people["other"], explained, {"image:premise": ("pass", "")}).status_code == 302
    state = state_of(explained).aspect("image:premise")
    assert state.status == "passes" and state.latest.checked_by == people["other"] and len(state.history) == 2

    assert validate(people["checker"], explained, {"image:premise": ("fail", "Blurred face.")}).status_code == 302
    assert state_of(explained).aspect("image:premise").status == "fails"
    assert ItemCheck.objects.filter(item=explained, aspect="image:premise").count() == 3


@pytest.mark.parametrize(("verdicts", "message"), [
    ({"image:premise": ("fail", "  ")}, "Say in the note what is wrong with the premise image"),
    ({"image:premise": ("maybe", "")}, "must be pass or fail"),
    ({}, "Give a verdict"),
])
def test_bad_verdicts_are_refused(explained, people, verdicts, message):
    response = validate(people["checker"], explained, verdicts)
    assert response.status_code == 400
    assert message in page_text(response)
    assert not ItemCheck.objects.filter(item=explained).exists()


def test_what_is_not_there_cannot_be_judged(pool, pictures, people):
    item = make_triplet(pool, "t-4", pictures, images=("premise", "hypothesis1"))
    response = validate(people["checker"], item, {"plausibility": ("pass", "")})
    assert response.status_code == 400
    assert "the hypothesis 2 image, the explanation" in page_text(response)
    assert validate(people["checker"], item, {"image:hypothesis2": ("pass", "")}).status_code == 400
    assert not ItemCheck.objects.filter(item=item).exists()


def test_a_check_of_an_image_that_changed_no_longer_counts(explained, people, spare_picture):
    assert validate(people["checker"], explained, all_pass()).status_code == 302
    seen = state_of(explained).aspect("image:hypothesis1").fingerprint
    ItemMedia.objects.filter(item=explained, role="hypothesis1").update(image=spare_picture)

    state = state_of(explained)
    assert state.aspect("image:hypothesis1").status == "changed"
    assert state.aspect("plausibility").status == "changed"
    assert state.aspect("image:premise").status == "passes"
    assert "a new check of the hypothesis 1 image (it changed since its last check)" in state.missing

    # a verdict given on the page as it was before the change is refused
    response = validate(people["checker"], explained, {"image:hypothesis1": ("pass", "")},
                        seen={"image:hypothesis1": seen})
    assert response.status_code == 409 and "changed since you opened the page" in page_text(response)
    assert ItemCheck.objects.filter(item=explained, aspect="image:hypothesis1").count() == 1


def test_the_validation_page_is_for_curators(explained, annotator, researcher, curator):
    url = f"/nleye/triplets/{explained.pk}/validate/"
    for user in (annotator, researcher):
        assert logged_in_client(user).get(url).status_code == 403
        assert logged_in_client(user).post(url, {"verdict-plausibility": "pass"}).status_code == 403
    assert logged_in_client(None).post(url, {"verdict-plausibility": "pass"}).status_code == 302
    assert not ItemCheck.objects.filter(item=explained).exists()
    assert logged_in_client(curator).get("/nleye/triplets/987654/validate/").status_code == 404


# --- The gate -----------------------------------------------------------------------------------------

def test_freezing_a_pool_waits_for_every_triplet_and_names_what_is_missing(pool, pictures, people):
    done = make_triplet(pool, "t-done", pictures, designer=people["designer"])
    explain(people["writer"], done)
    validate(people["checker"], done, all_pass())
    bare = make_triplet(pool, "t-bare", pictures, images=("premise", "hypothesis1"))
    half = make_triplet(pool, "t-half", pictures, designer=people["designer"])
    explain(people["writer"], half, time_direction="forward")
    validate(people["checker"], half, {"image:premise": ("pass", ""), "image:hypothesis1": ("fail", "No sign.")})

    with pytest.raises(versions.FreezeRefused) as refused:
        versions.freeze(pool)

    assert [external_id for external_id, _ in refused.value.items] == ["t-bare", "t-half", "t-half"]
    messages = refused.value.messages
    assert messages[0].startswith("item 't-bare' is not validated: missing the explanation; the reasoning category; ")
    assert "the hypothesis 2 image" in messages[0] and "a check of the plausibility" in messages[0]
    assert messages[1] == ("item 't-half' is not validated: missing a passing check of the hypothesis 1 image "
                           "(the latest fails); a check of the hypothesis 2 image; a check of the plausibility")
    # and the failing check itself, as a decision people took
    assert messages[2].startswith("item 't-half' was turned down by people: rejected in the validation of the "
                                  "hypothesis 1 image by checker on ")
    assert messages[2].endswith(": No sign.")
    pool.refresh_from_db()
    assert not pool.frozen and bare.pk and done.pk


def test_the_pool_freezes_once_every_triplet_is_validated(pool, pictures, people):
    items = [make_triplet(pool, f"t-{n}", pictures, designer=people["designer"]) for n in range(2)]
    for item in items:
        explain(people["writer"], item)
    validate(people["checker"], items[0], all_pass())
    with pytest.raises(versions.FreezeRefused):
        versions.freeze(pool)

    validate(people["checker"], items[1], all_pass())
    versions.freeze(pool)

    pool.refresh_from_db()
    assert pool.frozen and pool.item_count == 2


def test_a_check_by_whoever_later_wrote_the_explanation_does_not_count(pool, pictures, people):
    item = make_triplet(pool, "t-late", pictures, designer=people["designer"])
    explain(people["writer"], item)
    validate(people["checker"], item, all_pass())
    explain(people["checker"], item, explanation="Slippery floors cause falls.")

    state = state_of(item)
    assert state.aspect("plausibility").status == "own-work"
    assert ("a check of the plausibility by someone other than the person who wrote the explanation"
            in state.missing)
    with pytest.raises(versions.FreezeRefused):
        versions.freeze(pool)


def test_every_triplet_of_a_pool_is_gated_even_one_added_outside_the_pipeline(pool, pictures, people):
    done = make_triplet(pool, "t-done", pictures, designer=people["designer"])
    explain(people["writer"], done)
    validate(people["checker"], done, all_pass())
    versions.add_item(pool, "added", {"kind": "triplet", **SCENES, "label": 2, **EXPLAINED}, media=pictures)

    with pytest.raises(versions.FreezeRefused) as refused:
        versions.freeze(pool)
    assert refused.value.items == [("added", "missing a check of the premise image; a check of the hypothesis 1 "
                                             "image; a check of the hypothesis 2 image; a check of the plausibility")]


def test_a_curated_version_with_no_triplet_under_curation_is_not_a_pool(pictures):
    assembled = nleye_version("assembled")
    versions.add_item(assembled, "a-1", {"kind": "triplet", **SCENES, "label": 1}, media=pictures)
    assert validation.freeze_check(assembled) == []
    versions.freeze(assembled)
    assembled.refresh_from_db()
    assert assembled.frozen


def test_imported_releases_are_not_gated(pictures):
    released = nleye_version("release", source=BenchmarkVersion.Source.IMPORT)
    make_triplet(released, "r-1", pictures)  # even with a curation record
    assert validation.freeze_check(released) == []
    versions.freeze(released)
    released.refresh_from_db()
    assert released.frozen


def test_a_triplet_a_curator_found_wrong_is_not_frozen_even_in_an_imported_release(pictures, people):
    """An imported release is not gated, but a triplet whose premise image a curator failed on the validation page
    is refused, named with the check; a later passing check of the same image lets the release freeze."""
    released = nleye_version("release", source=BenchmarkVersion.Source.IMPORT)
    make_triplet(released, "r-1", pictures)
    wrong = make_triplet(released, "r-2", pictures)
    response = validate(people["checker"], wrong, {"image:premise": ("fail", "The image shows no hospital bed.")})
    assert response.status_code == 302

    with pytest.raises(versions.FreezeRefused) as refused:
        versions.freeze(released)

    [(external_id, reason)] = refused.value.items
    assert external_id == "r-2"
    assert reason.startswith("rejected in the validation of the premise image by checker on ")
    assert reason.endswith(": The image shows no hospital bed.")
    released.refresh_from_db()
    assert not released.frozen

    validate(people["other"], wrong, {"image:premise": ("pass", "On a second look it is a hospital bed.")})
    versions.freeze(released)
    released.refresh_from_db()
    assert released.frozen


def test_the_version_page_shows_the_refusal_and_links_the_validation_state(pool, pictures, people, curator):
    make_triplet(pool, "t-1", pictures)
    client = logged_in_client(curator)
    page = client.get(f"/benchmarks/versions/{pool.pk}/")
    assert f'href="/nleye/versions/{pool.pk}/validation/"' in page_text(page)

    response = client.post(f"/benchmarks/versions/{pool.pk}/freeze/", {"confirm": "yes"})

    assert response.status_code == 409
    text = page_text(response)
    assert "item &#x27;t-1&#x27; is not validated: missing the explanation" in text
    pool.refresh_from_db()
    assert not pool.frozen

    released = nleye_version("release", source=BenchmarkVersion.Source.IMPORT)
    assert "/validation/" not in page_text(client.get(f"/benchmarks/versions/{released.pk}/"))


def test_the_validation_state_page_lists_what_each_triplet_lacks(pool, pictures, people, curator, researcher):
    done = make_triplet(pool, "t-done", pictures, designer=people["designer"])
    explain(people["writer"], done)
    validate(people["checker"], done, all_pass())
    make_triplet(pool, "t-bare", pictures, images=("premise",))
    url = f"/nleye/versions/{pool.pk}/validation/"

    response = logged_in_client(curator).get(url)

    assert response.status_code == 200
    text = page_text(response)
    assert "1 of 2 triplets validated" in text
    assert 'data-item="t-done" data-validated="yes"' in text and 'data-item="t-bare" data-validated="no"' in text
    assert "the hypothesis 1 image" in text and "a check of the premise image" in text
    assert logged_in_client(researcher).get(url).status_code == 403
    cvqa = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="c")
    assert logged_in_client(curator).get(f"/nleye/versions/{cvqa.pk}/validation/").status_code == 404


# --- The API mirror -----------------------------------------------------------------------------------

def test_the_api_explains_validates_and_reports_what_is_missing(triplet, people, researcher):
    writer, checker = logged_in_api(people["writer"]), logged_in_api(people["checker"])
    url = f"/api/nleye/triplets/{triplet.pk}/"

    refused = writer.post(url + "explanation/", {**EXPLAINED, "time_direction": "parallel", "time_duration": "long"},
                          format="json")
    assert refused.status_code == 400 and "time_duration" in refused.json()["errors"]
    assert writer.post(url + "explanation/", EXPLAINED, format="json").status_code == 200

    state = checker.get(url).json()
    assert state["missing"] == ["a check of the premise image", "a check of the hypothesis 1 image",
                                "a check of the hypothesis 2 image", "a check of the plausibility"]
    own = writer.post(url + "checks/", {"checks": [{"aspect": "plausibility", "verdict": "pass"}]}, format="json")
    assert own.status_code == 403 and "wrote the explanation" in own.json()["error"]
    seen = {aspect: value["fingerprint"] for aspect, value in state["aspects"].items()}
    made = checker.post(url + "checks/", {"checks": [{"aspect": aspect, "verdict": "pass"} for aspect in ASPECTS],
                                          "seen": seen}, format="json")
    assert made.status_code == 201 and made.json()["validated"] is True
    assert made.json()["aspects"]["plausibility"]["latest"]["checked_by"] == "checker"
    assert checker.post(url + "checks/", {"checks": "pass"}, format="json").status_code == 400
    assert logged_in_api(researcher).get(url).status_code == 403
