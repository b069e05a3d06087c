"""People's decisions on items (annotation.decisions): the latest decision per item and question counts, and the
freeze check names the items whose latest decision turns them down. The benchmarks' own readers are tested beside
their workflows (tests/benchmarks/cvrr/test_experts.py, benchmarks/cvrr/test_qa.py,
benchmarks/cvqa/test_verification.py, benchmarks/nleye/test_validation.py, benchmarks/maia/test_pool_checks.py,
benchmarks/blackswan/test_variants.py)."""

from datetime import UTC, datetime, timedelta

import pytest

from annotation import decisions, versions
from annotation.decisions import ACCEPTED, REJECTED, SENT_BACK, Decision

T0 = datetime(2025, 3, 1, 14, 5, tzinfo=UTC)


def decision(item_id, question, verdict, minutes=0, **extra):
    return Decision(item_id, question, verdict, "a step", T0 + timedelta(minutes=minutes), **extra)


def verdicts(found) -> dict:
    return {item_id: {(d.question, d.verdict) for d in latest} for item_id, latest in found.items()}


def test_the_latest_decision_per_item_and_question_counts():
    found = decisions.latest_of([
        decision(1, "the pair", ACCEPTED, 0), decision(1, "the pair", SENT_BACK, 5),  # sent back last
        decision(2, "the pair", SENT_BACK, 5), decision(2, "the pair", ACCEPTED, 9),  # kept again afterwards
        decision(3, "image", REJECTED, 0), decision(3, "plausibility", ACCEPTED, 9),  # another question later
        decision(4, "image", REJECTED, 3), decision(4, "image", ACCEPTED, 3),  # a tie in time: the later listed
    ])
    assert verdicts(found) == {1: {("the pair", SENT_BACK)}, 2: {("the pair", ACCEPTED)},
                               3: {("image", REJECTED), ("plausibility", ACCEPTED)}, 4: {("image", ACCEPTED)}}
    assert [d.turned_down for d in found[3]] == [True, False]


def test_a_decision_is_worded_with_its_step_person_time_and_reason():
    sent = decision(1, "the pair", SENT_BACK, by="cur", reason="Three  people,\nnot two.", action="sent back")
    assert sent.describe() == "sent back in a step by cur on 2025-03-01 14:05 UTC: Three people, not two."
    assert decision(1, "q", REJECTED).describe() == "rejected in a step on 2025-03-01 14:05 UTC"
    with pytest.raises(ValueError, match="not 'maybe'"):
        decision(1, "q", "maybe")
    assert decisions.moment("2025-03-01T14:05:00+00:00") == T0
    assert decisions.moment("not a time", T0) == T0 and decisions.moment(None) is None


def test_the_freeze_check_is_registered_and_passes_a_version_nobody_decided_on(draft_version):
    assert decisions.freeze_check in versions._freeze_checks
    assert decisions.freeze_check(draft_version) == []
