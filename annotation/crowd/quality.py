"""Quality control: gold and attention checks, expert sampling, exclusion, qualification tests."""

import contextlib
import math
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotation.crowd import eligibility, history, rows
from annotation.crowd.answer_keys import passes as passes_key
from annotation.crowd.assignment import _end
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import (
    Claim,
    QualificationAttempt,
    QualificationTest,
    Study,
    StudyExclusion,
    StudyItem,
    Submission,
    WorkerQualification,
)

# Feedback never names the expected answer.
GOLD_FAILED_FEEDBACK = _("This answer did not pass one of our quality checks. Please reread the instructions.")
ATTENTION_WARNING = _("You missed an attention check. Please read each item carefully: "
                      "missing another one ends your participation in this study.")


@dataclass(frozen=True)
class Verdict:
    """What the checks decide about a new submission, before it is written."""

    review_state: str
    review_queue: str = ""
    check_passed: bool | None = None


def assess(study: Study, item: StudyItem, worker, data: dict) -> Verdict:
    """Gold and attention items are checked against their key (`answer_keys`; a key that cannot be read leaves the
    check undecided); regular work may be sampled for experts."""
    if item.role in (StudyItem.Role.GOLD, StudyItem.Role.ATTENTION):
        return Verdict(Submission.Review.NOT_SAMPLED, item.role, passes_key(item.answer_key, data))
    if _sample_for_expert(study, worker):
        return Verdict(Submission.Review.PENDING, "expert_sample")
    return Verdict(Submission.Review.NOT_SAMPLED)


def feedback(study: Study, item: StudyItem, worker, verdict: Verdict) -> dict:
    """What the worker is told once the submission is in: never the expected answer."""
    if verdict.check_passed is not False:
        return {}
    message = {"message": str(GOLD_FAILED_FEEDBACK)}
    if item.role == StudyItem.Role.ATTENTION:
        message.update(_attention_policy(study, worker))
    return message


def _sample_for_expert(study: Study, worker) -> bool:
    """A worker's first submissions always, then every submission that crosses the share."""
    done = 1 + rows.execute(
        f"SELECT COUNT(*) FROM {rows.table(Submission)} s JOIN {rows.table(Claim)} c ON c.id = s.claim_id"
        f" JOIN {rows.table(StudyItem)} i ON i.id = c.item_id"
        " WHERE c.study_id = %s AND c.worker_id = %s AND i.role = %s",
        [study.pk, worker.pk, StudyItem.Role.REGULAR])[0][0]
    if done <= study.expert_first:
        return True
    share = study.expert_share
    return share > 0 and math.floor(done * share) > math.floor((done - 1) * share)


def _attention_policy(study: Study, worker) -> dict:
    failures = Submission.objects.filter(
        claim__study=study, claim__worker=worker, claim__item__role=StudyItem.Role.ATTENTION, check_passed=False
    ).count()
    if failures >= study.attention_block_after:
        exclude(study, worker, f"failed {failures} attention checks")
        return {"blocked": True}
    if failures >= study.attention_warn_after:
        return {"warning": str(ATTENTION_WARNING)}
    return {}


def exclude(study: Study, worker, reason: str, actor=None) -> bool:
    """Remove a worker from the pool; their open claim goes back to others."""
    try:
        with transaction.atomic():
            StudyExclusion.objects.create(study=study, worker=worker, reason=reason)
            history.record(type(worker), worker.pk, "in_pool", "excluded", actor=actor, study=study, reason=reason)
    except IntegrityError:
        return False
    for claim in Claim.objects.filter(study=study, worker=worker, status=Claim.Status.ACTIVE):
        with contextlib.suppress(CrowdError):
            _end(claim, Claim.Status.RETURNED, actor=actor, reason=f"worker excluded: {reason}")
    return True


def expert_accept_rate(study: Study, worker) -> tuple[int, int]:
    reviewed = Submission.objects.filter(
        claim__study=study, claim__worker=worker, review_queue="expert_sample",
        review_state__in=[Submission.Review.APPROVED, Submission.Review.REJECTED],
    )
    return reviewed.filter(review_state=Submission.Review.APPROVED).count(), reviewed.count()


def apply_expert_threshold(study: Study, worker, actor=None) -> bool:
    """Exclude the worker once enough expert reviews show an accepted rate below the threshold."""
    accepted, reviewed = expert_accept_rate(study, worker)
    if reviewed >= study.min_reviews_for_exclusion and accepted / reviewed < study.min_accept_rate:
        return exclude(study, worker, f"expert-accepted rate {accepted}/{reviewed} below "
                                      f"{study.min_accept_rate:.0%}", actor=actor)
    return False


# --- Qualification tests -------------------------------------------------------------------------

def public_questions(test: QualificationTest) -> list[dict]:
    """The questions without their answers."""
    return [{k: v for k, v in q.items() if k != "answer"} for q in test.questions]


def take_qualification_test(test: QualificationTest, worker, answers: dict, *, now=None) -> QualificationAttempt:
    now = now or timezone.now()
    last = QualificationAttempt.objects.filter(test=test, worker=worker).first()
    if last and last.passed:
        raise CrowdError(gettext("You have already passed this test."), status=409)
    if last and last.created_at + timedelta(seconds=test.retry_delay_seconds) > now:
        wait = last.created_at + timedelta(seconds=test.retry_delay_seconds) - now
        raise CrowdError(gettext("You can try again in %(minutes)s minutes.")
                         % {"minutes": math.ceil(wait.total_seconds() / 60)}, status=429)
    if not isinstance(answers, dict):
        raise CrowdError("Answers must be an object from question id to answer.")
    right = sum(
        1 for q in test.questions if str(answers.get(q["id"], "")).strip().lower() == str(q["answer"]).strip().lower()
    )
    score = right / len(test.questions) if test.questions else 0.0
    passed = score >= test.pass_threshold
    with transaction.atomic():
        attempt = QualificationAttempt.objects.create(test=test, worker=worker, answers=answers, score=score,
                                                      passed=passed)
        if passed:
            WorkerQualification.objects.get_or_create(
                profile=eligibility.profile_for(worker), qualification=test.qualification,
                defaults={"source": f"test:{test.pk}"},
            )
        history.record(QualificationAttempt, attempt.pk, "", "passed" if passed else "failed", actor=worker,
                       reason=f"{test.name}: {score:.0%}")
    return attempt
