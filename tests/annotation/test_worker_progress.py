"""The annotator's own pages: items left per study, "item X of N", earnings so far, past answers."""

import pytest
from django.urls import reverse

from annotation.crowd import assignment, progress, review, submissions
from annotation.crowd.models import Study, StudyItem
from config.roles import ANNOTATOR, CURATOR
from tests.conftest import create_study, logged_in_client, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [{"name": "note", "type": "free_text", "label": "Describe it.", "max_length": 300}]}


def study_with(slug, items=3, **fields) -> Study:
    study = create_study(slug, form=FORM, items=items, pay_per_item="0.40", currency="EUR", **fields)
    return Study.objects.get(pk=study.pk)


def hand_in(study, worker, note="A cup."):
    claim = assignment.claim_next(study, worker)
    submission, _, _ = submissions.submit(claim, worker, {"note": note}, active_seconds=3)
    return claim, submission


def test_items_left_respects_k_and_the_workers_own_claims(annotator):
    study = study_with("left", items=3, k=1)
    other = make_user("olga", ANNOTATOR)
    assert progress.progress(study, annotator).left == 3
    hand_in(study, other)  # k = 1: that item is full
    assert progress.progress(study, annotator).left == 2
    claim = assignment.claim_next(study, annotator)
    now = progress.progress(study, annotator)
    assert (now.done, now.current, now.left, now.position, now.total) == (0, True, 1, 1, 2)
    assignment.release(claim, annotator)  # a returned item is not handed out to the same worker again
    assert progress.progress(study, annotator).left == 1


def test_checks_are_counted_without_being_named(annotator):
    gold = [{"external_id": f"gold-{n}", "payload": {"n": n}, "role": StudyItem.Role.GOLD,
             "answer_key": {"note": {"equals": "x"}}} for n in range(3)]
    study = study_with("checks", items=2, gold_share=0.5, extra_rows=gold)
    # regular, check, regular, check: the share of checks among the worker's items
    assert progress.progress(study, annotator).left == 4
    handed = 0
    while assignment.claim_next(study, annotator) is not None:
        hand_in_current = assignment.active_claim(study, annotator)
        submissions.submit(hand_in_current, annotator, {"note": "x"}, active_seconds=1)
        handed += 1
    assert handed == 4 and progress.progress(study, annotator).left == 0


def test_my_tasks_shows_items_left_and_hides_studies_with_nothing_left(annotator, annotator_client):
    open_study = study_with("open-one", items=3, name="Cups")
    done_study = study_with("done-one", items=1, name="Pens")
    hand_in(done_study, annotator)
    full_study = study_with("full-one", items=1, name="Plates")
    hand_in(full_study, make_user("olga", ANNOTATOR))
    html = annotator_client.get(reverse("my-tasks")).content.decode()
    assert reverse("crowd-work", args=[open_study.slug]) in html
    assert "3 items left" in html
    for hidden in (done_study, full_study):
        assert reverse("crowd-work", args=[hidden.slug]) not in html


def test_my_tasks_hides_a_study_the_worker_is_not_eligible_for(annotator, annotator_client):
    study = study_with("invited", items=2)
    study.include_workers.add(make_user("ivy", ANNOTATOR))
    html = annotator_client.get(reverse("my-tasks")).content.decode()
    assert reverse("crowd-work", args=[study.slug]) not in html


def test_task_page_shows_item_x_of_n_and_earnings(annotator, annotator_client):
    study = study_with("page", items=3)
    _, first = hand_in(study, annotator)
    hand_in(study, annotator)
    review.approve(first, make_user("cora", CURATOR))
    html = annotator_client.post(reverse("crowd-work", args=[study.slug]), follow=True).content.decode()
    assert "Item 3 of 3" in html
    assert "Earned so far: 0.40 EUR (+ 0.40 EUR awaiting review)" in html


def test_a_worker_opens_their_own_past_answer_read_only(annotator, annotator_client):
    study = study_with("past", items=2)
    claim, _ = hand_in(study, annotator, note="Two cups on a table.")
    html = annotator_client.get(reverse("my-tasks")).content.decode()
    url = reverse("crowd-past-answer", args=[claim.pk])
    assert url in html
    page = annotator_client.get(url)
    assert page.status_code == 200
    text = page.content.decode()
    assert "Two cups on a table." in text and "Read-only" in text
    assert '<fieldset id="task-fields" class="plain" disabled>' in text
    assert "api-claim-submit" not in text and "/submit/" not in text


def test_another_workers_answer_or_an_open_claim_is_404(annotator, annotator_client):
    study = study_with("private", items=3)
    other = make_user("olga", ANNOTATOR)
    claim, _ = hand_in(study, other)
    assert annotator_client.get(reverse("crowd-past-answer", args=[claim.pk])).status_code == 404
    assert logged_in_client(other).get(reverse("crowd-past-answer", args=[claim.pk])).status_code == 200
    active = assignment.claim_next(study, annotator)  # not handed in yet: nothing to show
    assert annotator_client.get(reverse("crowd-past-answer", args=[active.pk])).status_code == 404
    assert annotator_client.get(reverse("crowd-past-answer", args=[987654])).status_code == 404
