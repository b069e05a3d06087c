"""The results of a human-evaluation study, whatever its kind."""

from __future__ import annotations

from annotation.crowd.models import Study
from evaluation.human_eval.base import (
    BASELINE,
    RATING,
    VOTE,
    HumanEvalError,
    kind_of,
)
from evaluation.human_eval.baselines import human_baseline_results
from evaluation.human_eval.explanation_votes import explanation_results
from evaluation.human_eval.ratings import rating_results


def results_for(study: Study) -> dict:
    """The results of a human-evaluation study, whatever its kind."""
    kind = kind_of(study)
    read = {RATING: rating_results, VOTE: explanation_results, BASELINE: human_baseline_results}.get(kind)
    if read is None:
        raise HumanEvalError(f"{study.slug} is not a human-evaluation study.")
    return read(study)
