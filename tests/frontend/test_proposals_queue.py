"""The proposals queue page (/generation/) and its JSON endpoints: proposals grouped by set with their
library media, filters, decisions one by one and in bulk, and proposal jobs started from the page.

Jobs run through the real backend registry on `ScriptedBackend` (tests/generation/test_proposals.py), whose
answers the tests choose; Celery is eager in tests, so a job runs when its transaction commits.
"""

import pytest
from django.urls import reverse

from annotation import proposal_media
from annotation.crowd.models import Study
from generation import proposals
from generation.models import Job, Proposal, ProposalDecision, ProposalSet
from tests.generation.test_proposals import FACT, use_scripted_backend
from tests.registry_support import register_models

pytestmark = pytest.mark.django_db

IMAGE_PROMPT = "Describe in detail what the image shows: the people, objects, actions and setting."


@pytest.fixture
def scripted(db, monkeypatch):
    register_models("scripted", "scripted/captioner", "scripted/second", "m")  # what the forms pick
    return use_scripted_backend(monkeypatch)


def fact_set(scripted, capture, replies: dict, *, model_id="scripted/facts", user=None) -> ProposalSet:
    """A generated set of `test_fact` proposals, one per caption, answered as `replies` says."""
    scripted.REPLIES.update(replies)
    entries = [{"key": f"clip-{n}", "inputs": {"caption": caption}} for n, caption in enumerate(replies)]
    with capture(execute=True):
        pset = proposals.start_proposals(FACT.name, entries, user=user, backend="scripted", model_id=model_id)
    assert Job.objects.get(pk=pset.job_id).status == Job.Status.SUCCEEDED
    return pset


FACT_OK = '{"statement": "Two cups stand on a table.", "label": true, "objects": 2}'


@pytest.fixture
def facts(scripted, curator, django_capture_on_commit_callbacks):
    pset = fact_set(scripted, django_capture_on_commit_callbacks,
                    {"Cups.": FACT_OK, "Dogs.": '{"statement": "A dog runs.", "label": false, "objects": 1}',
                     "Noise.": "not json"}, user=curator)
    return {p.inputs["caption"]: p for p in pset.proposals.all()}


def decide_url(proposal) -> str:
    return reverse("proposal-decide", kwargs={"pk": proposal.pk})


# --- The page -----------------------------------------------------------------------------------

def test_queue_shows_each_set_with_its_proposals_and_the_picture_they_were_made_from(
        curator_client, curator, image, scripted, django_capture_on_commit_callbacks):
    scripted.REPLIES[IMAGE_PROMPT] = "An astronaut in a white suit holds a helmet."
    with django_capture_on_commit_callbacks(execute=True):
        pset = proposals.start_proposals("caption", proposal_media.library_entries([], [image.pk]), user=curator,
                                         backend="scripted", model_id="scripted/captioner", name="Astronaut captions")
    response = curator_client.get(reverse("generation"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Model proposals and generated media will be listed here" not in html
    assert f"#{pset.pk} Astronaut captions" in html
    assert "An astronaut in a white suit holds a helmet." in html
    assert reverse("media-image-file", kwargs={"pk": image.pk}) in html
    assert 'name="field_caption"' in html  # the correction form has one input per field of the kind
    assert 'value="scripted-captioner" data-backend="scripted" data-model-id="scripted/captioner"' in html  # offered


def test_media_specs_of_a_video_segment_are_found_by_checksum(video):
    proposal = Proposal(pk=1, inputs={"video_id": "bs-12", "media": {
        "type": "video", "path": "/elsewhere/clip.mp4", "checksum": video.checksum, "segment": [0.5, 1.25]}})
    [shown] = proposal_media.media_for([proposal])[1]
    assert (shown.kind, shown.asset.pk, shown.fragment) == ("video", video.pk, "#t=0.5,1.25")
    assert proposal_media.media_for([Proposal(pk=2, inputs={"media": {"type": "image", "path": "/no/such.png"}})]) \
        == {2: []}


def test_filters_by_state_output_kind_and_model(curator_client, curator, facts, scripted,
                                                django_capture_on_commit_callbacks):
    other = fact_set(scripted, django_capture_on_commit_callbacks, {"Birds.": FACT_OK}, model_id="scripted/other")
    proposals.decide(facts["Cups."], curator, "accept")

    def shown(**query) -> set[int]:
        response = curator_client.get(reverse("generation"), query)
        assert response.status_code == 200
        return {int(pk) for pk in response.context["page"].object_list.values_list("pk", flat=True)}

    assert shown() == {p.pk for p in facts.values()} | set(other.proposals.values_list("pk", flat=True))
    assert shown(state="accepted") == {facts["Cups."].pk}
    assert shown(state="undecided", model="scripted/facts") == {facts["Dogs."].pk, facts["Noise."].pk}
    assert shown(output="malformed") == {facts["Noise."].pk}
    assert shown(model="scripted/other") == set(other.proposals.values_list("pk", flat=True))
    assert shown(kind="caption") == set()
    response = curator_client.get(reverse("generation"), {"state": "maybe"})
    assert response.status_code == 400
    assert "Unknown state &#x27;maybe&#x27;" in response.content.decode()


def test_only_curators_and_admins_see_and_decide(annotator_client, researcher_client, admin_client_role, facts):
    for client in (annotator_client, researcher_client):
        assert client.get(reverse("generation")).status_code == 403
        assert client.post(decide_url(facts["Cups."]), {"verdict": "accept"}).status_code == 403
        assert client.post(reverse("proposals-start"), {}).status_code == 403
    assert not ProposalDecision.objects.exists()
    assert admin_client_role.get(reverse("generation")).status_code == 200
    assert admin_client_role.post(decide_url(facts["Cups."]), {"verdict": "accept"}).status_code == 200


# --- Decisions ----------------------------------------------------------------------------------

def test_accept_correct_and_reject_one_by_one(curator_client, facts):
    response = curator_client.post(decide_url(facts["Cups."]), {"verdict": "accept"})
    assert response.status_code == 200 and response.json()["outcome"] == "accepted"

    response = curator_client.post(decide_url(facts["Dogs."]), {
        "verdict": "correct", "field_statement": "A dog sleeps.", "field_label": "true", "field_objects": "1"})
    assert response.status_code == 200, response.json()
    assert response.json()["final_fields"] == {"statement": "A dog sleeps.", "label": True, "objects": 1}

    # an unparsed output is corrected by writing every field
    response = curator_client.post(decide_url(facts["Noise."]), {
        "verdict": "correct", "field_statement": "Static.", "field_label": "false", "field_objects": "0"})
    assert response.json()["outcome"] == "corrected"
    assert ProposalDecision.objects.filter(verdict="correct").count() == 2


def test_refused_decisions_answer_4xx_with_the_reason_and_record_nothing(curator_client, facts):
    response = curator_client.post(decide_url(facts["Dogs."]), {"verdict": "reject", "reason": "  "})
    assert (response.status_code, response.json()["error"]) == (400, "A rejection needs a reason.")
    response = curator_client.post(decide_url(facts["Dogs."]), {"verdict": "correct", "field_objects": "many"})
    assert response.status_code == 400
    assert "must be a whole number" in response.json()["error"]
    response = curator_client.post(decide_url(facts["Noise."]), {"verdict": "accept"})
    assert response.status_code == 400 and "no fields to accept" in response.json()["error"]
    response = curator_client.post(reverse("proposal-decide", kwargs={"pk": 987654}), {"verdict": "accept"})
    assert response.status_code == 404 and "no proposal #987654" in response.json()["error"]
    assert not ProposalDecision.objects.exists()

    response = curator_client.post(decide_url(facts["Dogs."]), {"verdict": "reject", "reason": "Off topic."})
    assert response.json()["outcome"] == "rejected"
    assert ProposalDecision.objects.get().reason == "Off topic."


def test_bulk_accept_and_reject_with_one_reason(curator_client, facts):
    bulk = reverse("proposals-decide")
    response = curator_client.post(bulk, {"verdict": "accept", "proposal": [facts["Cups."].pk, facts["Noise."].pk]})
    assert response.status_code == 200
    data = response.json()
    assert [row["id"] for row in data["decided"]] == [facts["Cups."].pk]
    assert "no fields to accept" in data["refused"][str(facts["Noise."].pk)]

    assert curator_client.post(bulk, {"verdict": "reject", "proposal": [facts["Dogs."].pk]}).status_code == 400
    assert curator_client.post(bulk, {"verdict": "accept"}).json()["error"] == "Select at least one proposal."
    assert curator_client.post(bulk, {"verdict": "accept", "proposal": ["x"]}).status_code == 400
    assert curator_client.post(bulk, {"verdict": "accept", "proposal": [987654]}).status_code == 404
    assert curator_client.post(bulk, {"verdict": "correct", "proposal": [facts["Dogs."].pk]}).status_code == 400

    response = curator_client.post(bulk, {"verdict": "reject", "reason": "Unusable output.",
                                          "proposal": [facts["Dogs."].pk, facts["Noise."].pk]})
    assert response.status_code == 200
    assert set(Proposal.objects.filter(outcome="rejected").values_list("pk", flat=True)) == {
        facts["Dogs."].pk, facts["Noise."].pk}
    assert set(ProposalDecision.objects.filter(verdict="reject").values_list("reason", flat=True)) == {
        "Unusable output."}


# --- Jobs from the page -------------------------------------------------------------------------

def test_start_proposals_on_library_media_runs_the_job(curator_client, curator, image, scripted,
                                                      django_capture_on_commit_callbacks):
    scripted.REPLIES[IMAGE_PROMPT] = "An astronaut."
    with django_capture_on_commit_callbacks(execute=True):
        response = curator_client.post(reverse("proposals-start"), {
            "task": "caption", "backend": "scripted", "model_id": "scripted/captioner", "image": [image.pk],
            "max_new_tokens": "32", "batch_size": "4"})
    assert response.status_code == 201, response.content
    data = response.json()
    pset = ProposalSet.objects.get(pk=data["set"])
    assert (pset.backend, pset.model_id, pset.batch_size, pset.params["max_new_tokens"], pset.created_by) == (
        "scripted", "scripted/captioner", 4, 32, curator)
    job = Job.objects.get(pk=data["job"])
    assert (job.status, job.progress) == (Job.Status.SUCCEEDED, 100)
    [proposal] = pset.proposals.all()
    assert (proposal.inputs["image_id"], proposal.fields) == (image.pk, {"caption": "An astronaut."})
    assert data["job_url"] == reverse("job-detail", kwargs={"pk": job.pk})


def test_start_proposals_with_the_inputs_of_an_earlier_set(curator_client, facts, scripted,
                                                           django_capture_on_commit_callbacks):
    earlier = facts["Cups."].proposal_set
    with django_capture_on_commit_callbacks(execute=True):
        response = curator_client.post(reverse("proposals-start"), {
            "task": FACT.name, "backend": "scripted", "model_id": "scripted/second", "from_set": earlier.pk})
    assert response.status_code == 201
    again = ProposalSet.objects.get(pk=response.json()["set"])
    assert sorted(again.proposals.values_list("source_key", flat=True)) == ["clip-0", "clip-1", "clip-2"]
    assert again.proposals.filter(status="ok").count() == 2


@pytest.mark.parametrize(("form", "message"), [
    ({"backend": "scripted", "model_id": "m"}, "Choose at least one video or image"),
    ({"backend": "nowhere", "model_id": "m", "image": ["IMAGE"]}, "with the scripted backend, not 'nowhere'"),
    ({"backend": "clip", "model_id": "m", "image": ["IMAGE"]}, "registered with the scripted backend, not 'clip'"),
    ({"backend": "scripted", "model_id": " ", "image": ["IMAGE"]}, "Choose a model: models registered for proposals"),
    ({"model_id": "/models/typed", "image": ["IMAGE"]}, "Unknown model '/models/typed'"),
    ({"backend": "scripted", "model_id": "m", "image": ["987654"]}, "No image with id 987654"),
    ({"backend": "scripted", "model_id": "m", "video": ["x"]}, "Media ids are whole numbers"),
    ({"backend": "scripted", "model_id": "m", "image": ["IMAGE"], "batch_size": "0"}, "Batch size must be"),
    ({"backend": "scripted", "model_id": "m", "image": ["IMAGE"], "frames": "sideways"}, "Bad frame policy"),
    ({"backend": "scripted", "model_id": "m", "from_set": "987654"}, "no proposal set #987654"),
])
def test_a_refused_start_says_why_and_creates_nothing(curator_client, image, scripted, form, message):
    form = {key: [str(image.pk) if v == "IMAGE" else v for v in value] if isinstance(value, list) else value
            for key, value in form.items()}
    jobs_before = Job.objects.count()  # the image's probe job
    response = curator_client.post(reverse("proposals-start"), {"task": "caption", **form})
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert not ProposalSet.objects.exists() and Job.objects.count() == jobs_before


def test_generate_pending_inputs_of_a_set_then_refuse_when_none_is_left(curator_client, curator, scripted,
                                                                        django_capture_on_commit_callbacks):
    scripted.REPLIES["Cups."] = FACT_OK
    pset = proposals.create_proposal_set(FACT.name, [{"inputs": {"caption": "Cups."}}], backend="scripted",
                                         model_id="m", user=curator)
    url = reverse("proposal-set-generate", kwargs={"pk": pset.pk})
    with django_capture_on_commit_callbacks(execute=True):
        response = curator_client.post(url)
    assert response.status_code == 201
    assert pset.proposals.get().status == "ok"
    response = curator_client.post(url)
    assert (response.status_code, response.json()["error"]) == (409, "This set has no pending inputs.")


def test_send_a_set_to_a_review_study(curator_client, facts):
    pset = facts["Cups."].proposal_set
    response = curator_client.post(reverse("proposal-set-review", kwargs={"pk": pset.pk}))
    assert response.status_code == 201
    study = Study.objects.get(slug=response.json()["study"])
    assert sorted(study.items.values_list("proposal_id", flat=True)) == sorted([facts["Cups."].pk, facts["Dogs."].pk])
    assert "1 left out" in response.json()["message"]  # the malformed output is not sent to reviewers
    response = curator_client.post(reverse("proposal-set-review", kwargs={"pk": pset.pk}))
    assert response.status_code == 400  # nothing left that is ready for review
