"""People's explanations written back as NL-EYE judge references: the candidates (baseline explanations of
the gold hypothesis, with their votes), the curator's bulk approval on the page, the API and the command,
the judge comparing with gold + item + approved references and recording them, and the importer reading
validated human explanations from a release."""

import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.urls import reverse

from annotation.crowd import review
from config.roles import ANNOTATOR
from evaluation import human_eval, judge_references, judges, runner
from evaluation.benchmarks.base import EvalRequest
from evaluation.benchmarks.nleye import explanation_votes
from evaluation.human_eval import references
from evaluation.models import JudgeReference, Judgment
from tests.conftest import ingest_path, logged_in_api, make_user
from tests.eval_support import frozen_version
from tests.evaluation.test_human_eval import (
    BASELINE,
    NLEYE_A,
    NLEYE_B,
    VOTES,
    baseline_answer,
    candidate,
    make_run,
    predict,
    submission_of,
    triplet,
    work,
)
from tests.evaluation.test_judges import openai_spec, said
from tests.openai_test_server import openai_test_server
from tests.release_fixtures import (
    NLEYE_HEADER,
    NLEYE_ROWS,
    assert_same_release,
    import_problems,
    run_import,
    write_csv,
    write_nleye,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    with openai_test_server() as running:
        yield running


@pytest.fixture
def version(skimage_data, curator):
    premise, first, second = (ingest_path(skimage_data / name, user=curator, probe=False)
                              for name in ("astronaut.png", "coffee.png", "chelsea.png"))
    images = {"premise": premise, "hypothesis1": first, "hypothesis2": second}
    return frozen_version("nleye", "n1", [("t1", triplet(1, "A wet floor."), images),
                                          ("t2", triplet(2, "Music plays."), images),
                                          ("t3", triplet(1, "Ice on the road."), {})])


@pytest.fixture
def voted(version, curator):
    """A baseline study (w3's answer on t2 order 1 rejected) and an explanation vote over it (v2's vote on
    t2 order 1 rejected), as in tests/evaluation/test_human_eval.py."""
    workers = {name: make_user(name, ANNOTATOR) for name in ("w1", "w2", "w3")}
    baseline = human_eval.create_human_baseline_study(version, ("triplet",), curator=curator, k=3).study
    for name, worker in workers.items():
        assert sorted(work(baseline, worker, baseline_answer(name))) == sorted(BASELINE)
    review.reject(submission_of(baseline, workers["w3"], baseline.items.get(external_id="t2:triplet:order1")),
                  curator, reason="did not look")
    run_a, run_b = make_run(version, "org/alpha", input_strategy="text_only"), make_run(version, "org/beta")
    made_a = predict(run_a, NLEYE_A)
    predict(run_b, NLEYE_B)
    vote = explanation_votes.create_explanation_vote_study([run_a, run_b], curator=curator,
                                                    baseline_studies=[baseline]).study
    voters = {name: make_user(name, ANNOTATOR) for name in ("v1", "v2", "v3")}
    for name, voter in voters.items():
        work(vote, voter, lambda item, n=name: {"valid": [candidate(item, text)
                                                          for text in VOTES[item.external_id][n]]})
    review.reject(submission_of(vote, voters["v2"], vote.items.get(external_id="t2:triplet:order1")), curator,
                  reason="selected everything")
    return {"version": version, "baseline": baseline, "vote": vote, "run": run_a, "predictions": made_a}


def by_text(version) -> dict:
    return {c.text: c for entry in references.candidates(version) for c in entry.candidates}


def test_candidates_are_baseline_explanations_of_the_gold_with_their_votes(voted):
    found = references.candidates(voted["version"])
    assert [entry.item.external_id for entry in found] == ["t1", "t2"]
    candidates = by_text(voted["version"])
    # w1 and w2 wrote the same text on t1 (white space aside): one candidate with both sources
    assert sorted(candidates) == ["He slipped on the wet floor.", "The floor is wet.", "w1 on t1 order 2",
                                  "w1 on t2 order 1", "w3 on t1 order 2", "w3 on t2 order 2"]
    floor = candidates["The floor is wet."]
    assert len({s["worker"] for s in floor.sources}) == 2
    assert (floor.votes, floor.voters, floor.status) == (3, 3, references.VALID)
    assert floor.vote_study == voted["vote"]
    # only the rejected voter chose w1's t2 explanation: voters saw it and none (counted) did
    assert (candidates["w1 on t2 order 1"].status, candidates["w1 on t2 order 1"].approvable) == (
        references.INVALID, False)
    assert candidates["w3 on t2 order 2"].status == references.VALID
    # w2 picked the dancer on t1 order 2: not a candidate; w3's rejected t2 answer neither
    assert "w2 picks the dancer" not in candidates and "w3 on t2 order 1" not in candidates


def test_candidates_not_voted_on_can_be_approved_by_the_curator(version, curator):
    workers = {name: make_user(name, ANNOTATOR) for name in ("w1", "w2", "w3")}
    baseline = human_eval.create_human_baseline_study(version, ("triplet",), curator=curator, k=3).study
    for name, worker in workers.items():
        work(baseline, worker, baseline_answer(name))
    found = by_text(version)["He slipped on the wet floor."]
    assert (found.status, found.voters) == (references.NOT_VOTED, None)
    (made,) = references.approve(curator, version, [found.token])
    assert (made.votes, made.vote_study, made.study, made.details["status"]) == (None, None, baseline, "not voted")


def test_curator_approves_in_bulk_on_the_page_and_researchers_cannot(voted, curator, curator_client,
                                                                    researcher_client):
    version = voted["version"]
    url = reverse("judge-references", args=[version.pk])
    candidates = by_text(version)
    page = curator_client.get(url).content.decode()
    assert f'value="{candidates["The floor is wet."].token}" checked' in page
    assert f'data-candidate="{candidates["w1 on t2 order 1"].token}"' in page
    assert f'value="{candidates["w1 on t2 order 1"].token}"' not in page  # invalid: no box to tick

    refused = curator_client.post(url, {"action": "approve", "candidate": [candidates["w1 on t2 order 1"].token,
                                                                           candidates["The floor is wet."].token]})
    assert refused.status_code == 400 and "selected none" in refused.content.decode()
    assert JudgeReference.objects.count() == 0
    assert curator_client.post(url, {"action": "approve", "candidate": ["nonsense"]}).status_code == 400
    assert researcher_client.post(url, {"action": "approve_voted"}).status_code == 403
    assert JudgeReference.objects.count() == 0

    chosen = [candidates["The floor is wet."].token, candidates["w3 on t2 order 2"].token]
    assert curator_client.post(url, {"action": "approve", "candidate": chosen}).status_code == 302
    assert curator_client.post(url, {"action": "approve_voted"}).status_code == 302
    rows = list(JudgeReference.objects.order_by("pk"))
    assert [r.text for r in rows[:2]] == ["The floor is wet.", "w3 on t2 order 2"]
    assert sorted(r.text for r in rows[2:]) == ["He slipped on the wet floor.", "w1 on t1 order 2", "w3 on t1 order 2"]
    first = rows[0]
    assert (first.item.external_id, first.study, first.vote_study, first.votes, first.voters, first.approved_by) == (
        "t1", voted["baseline"], voted["vote"], 3, 3, curator)
    assert first.submission.claim.study == voted["baseline"] and len(first.details["sources"]) == 2
    # approving again writes nothing
    assert references.approve_voted(curator, version) == []
    assert references.approve(curator, version, chosen) == []
    page = curator_client.get(url).content.decode()
    assert f'data-reference="{first.pk}"' in page
    detail = curator_client.get(reverse("version-detail", args=[version.pk])).content.decode()
    assert 'id="judge-references-link"' in detail


def test_references_are_insert_only_with_one_revocation(voted, curator, curator_client):
    version = voted["version"]
    token = by_text(version)["The floor is wet."].token
    (reference,) = references.approve(curator, version, [token])
    reference.text = "changed"
    with pytest.raises(ValidationError):
        reference.save()
    with pytest.raises(ValidationError):
        reference.delete()

    response = curator_client.post(reverse("judge-reference-revoke", args=[reference.pk]), {"reason": "too vague"})
    assert response.status_code == 302
    reference.refresh_from_db()
    assert reference.revoked_by == curator and reference.revoke_reason == "too vague"
    assert curator_client.post(reverse("judge-reference-revoke", args=[reference.pk])).status_code == 400
    assert by_text(version)["The floor is wet."].approved is None
    # approved again: a new row; the revoked one stays as history
    (again,) = references.approve(curator, version, [token])
    assert again.pk != reference.pk and JudgeReference.objects.count() == 2


def test_reference_sources_gold_item_then_approved_deduplicated_in_a_stable_order():
    source = {"premise": "A wet floor.", "hypothesis1": "A man slips.", "hypothesis2": "A man dances.", "label": 1,
              "explanation": "Wet floors are slippery.",
              "human_explanations": ["wet floors are   SLIPPERY.", "He slipped.", ""]}
    request = EvalRequest("t:triplet:order1", "t", "triplet", "", "", gold=1, answer_type="choice_12", source=source,
                          extra={judge_references.EXTRA_KEY: [{"id": 7, "text": "He  slipped."},
                                                              {"id": 9, "text": "The floor is wet."}]})
    found = judges.nleye_reference_sources(request)
    assert found == [{"source": "gold", "text": "Wet floors are slippery."},
                     {"source": "payload:1", "text": "He slipped."},
                     {"source": "judge_reference:9", "text": "The floor is wet."}]
    (case,) = judges.KINDS["nleye_explanation"].cases(request, "1. The floor is wet.")
    assert case.reference_key.startswith("refs:") and list(case.references) == found
    assert "Explanation 3: The floor is wet." in case.user
    plain = EvalRequest("t:triplet:order1", "t", "triplet", "", "", gold=1, answer_type="choice_12", source=source)
    (case,) = judges.KINDS["nleye_explanation"].cases(plain, "1. The floor is wet.")
    assert case.reference_key == "" and [r["source"] for r in case.references] == ["gold", "payload:1"]


def test_the_judge_uses_approved_references_and_records_them(voted, curator, server):
    version, run = voted["version"], voted["run"]
    token = by_text(version)["The floor is wet."].token
    (reference,) = references.approve(curator, version, [token])
    planned = {p.request.request_id: p.request for p in runner.plan(run)}
    assert planned["t1:triplet:order1"].extra[judge_references.EXTRA_KEY] == [
        {"id": reference.pk, "text": "The floor is wet."}]
    assert judge_references.EXTRA_KEY not in planned["t2:triplet:order1"].extra

    server.script(*(said("2") for _ in range(10)))
    judges.judge_run(run, "nleye_explanation", openai_spec(server))
    stored = Judgment.objects.get(prediction=voted["predictions"][("t1:triplet:order1", 0)])
    assert stored.references == [{"source": "gold", "text": "Wet floors are slippery."},
                                 {"source": f"judge_reference:{reference.pk}", "text": "The floor is wet."}]
    assert stored.reference_key.startswith("refs:")
    assert "Explanation 2: The floor is wet." in json.dumps(stored.prompt)
    other = Judgment.objects.get(prediction=voted["predictions"][("t2:triplet:order1", 0)])
    assert other.reference_key == "" and [r["source"] for r in other.references] == ["gold"]
    verdicts = judges.verdicts_for_run(run, "nleye_explanation", "judge-test")
    assert verdicts[("t1:triplet:order1", 0)] == {"label": 2, "status": "ok"}

    # revoking the reference asks for new judgments of t1's two answers; the old ones stay
    judge_references.revoke(curator, reference)
    assert ("t1:triplet:order1", 0) not in judges.verdicts_for_run(run, "nleye_explanation", "judge-test")
    calls = server.calls
    judges.judge_run(run, "nleye_explanation", openai_spec(server))
    assert server.calls == calls + 2
    rows = Judgment.objects.filter(prediction=voted["predictions"][("t1:triplet:order1", 0)]).order_by("pk")
    assert [row.reference_key == "" for row in rows] == [False, True]
    assert ("t1:triplet:order1", 0) in judges.verdicts_for_run(run, "nleye_explanation", "judge-test")


def test_api_and_command_mirror_the_page(voted, curator, researcher):
    version = voted["version"]
    url = reverse("api-version-judge-references", args=[version.pk])
    listed = logged_in_api(researcher).get(url)
    assert listed.status_code == 200
    items = {entry["item"]: entry for entry in listed.json()["items"]}
    floor = next(c for c in items["t1"]["candidates"] if c["text"] == "The floor is wet.")
    assert (floor["status"], floor["votes"], floor["voters"], floor["approvable"]) == ("valid", 3, 3, True)
    assert logged_in_api(researcher).post(url, {"candidates": [floor["token"]]}, format="json").status_code == 403
    bad = logged_in_api(curator).post(url, {"candidates": "not a list"}, format="json")
    assert bad.status_code == 400
    made = logged_in_api(curator).post(url, {"candidates": [floor["token"]]}, format="json")
    assert made.status_code == 201 and made.json()["approved"][0]["text"] == "The floor is wet."

    printed = io.StringIO()
    call_command("judge_references", "approve", "--benchmark", "nleye", "--version", "n1", "--user", curator.username,
                 "--voted", stdout=printed)
    assert "4 judge reference(s) approved." in printed.getvalue()
    printed = io.StringIO()
    call_command("judge_references", "list", "--benchmark", "nleye", "--version", "n1", stdout=printed)
    listed = json.loads(printed.getvalue())
    assert sum(len(entry["references"]) for entry in listed["items"]) == 5
    reference = JudgeReference.objects.order_by("pk").first()
    revoke = logged_in_api(curator).post(reverse("api-judge-reference-revoke", args=[reference.pk]),
                                         {"reason": "duplicate"}, format="json")
    assert revoke.status_code == 200 and revoke.json()["revoked_at"]


# --- Releases that carry validated human explanations ---------------------------------------------

def test_importer_reads_human_explanations_in_every_accepted_form(tmp_path, media):
    root = tmp_path / "nleye"
    write_nleye(root, media)
    header = [*NLEYE_HEADER, "Human Explanations", "human_explanation_2", "Human Explanation 1"]
    rows = [[*NLEYE_ROWS[0], '["Balls break windows.", "A bat was swung."]', "Third.", "A bat was swung."],
            [*NLEYE_ROWS[1], "Just one text.", "", ""]]
    write_csv(root / "test_set.csv", header, rows)

    version = run_import("nleye", root)

    payloads = {item.external_id: item.payload for item in version.items.all()}
    assert payloads["12"]["human_explanations"] == ["Balls break windows.", "A bat was swung.", "Third."]
    assert payloads["37"]["human_explanations"] == ["Just one text."]
    out = tmp_path / "export"
    call_command("export_benchmark", "nleye", "--version", "v1", str(out))
    assert_same_release(root, out)


def test_a_broken_human_explanations_list_is_a_problem_of_its_row(tmp_path, media):
    root = tmp_path / "nleye"
    write_nleye(root, media)
    write_csv(root / "test_set.csv", [*NLEYE_HEADER, "human_explanations"],
              [[*NLEYE_ROWS[0], '["unclosed'], [*NLEYE_ROWS[1], "[1, 2]"]])
    message = import_problems("nleye", root)
    assert "test_set.csv line 2: 'human_explanations' is not a JSON list of texts" in message
    assert "test_set.csv line 3: 'human_explanations' must list texts only" in message
