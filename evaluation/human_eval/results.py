"""The results of a human-evaluation study, whatever its kind."""

from __future__ import annotations

from annotation.crowd.models import Study
from evaluation.human_eval.base import HumanEvalError, kind_of, study_kind


def results_for(study: Study) -> dict:
    """The results of a human-evaluation study, whatever its (registered) kind."""
    try:
        kind = study_kind(kind_of(study))
    except HumanEvalError:
        raise HumanEvalError(f"{study.slug} is not a human-evaluation study.") from None
    return kind.results(study)
