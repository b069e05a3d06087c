"""How a scene-writing study's pool spreads over NL-EYE's reasoning categories, time directions,
durations and domains, so curators can ask for what is missing (seeds/002 §3: "a range of
challenges … diverse time shifts").

Per dimension and value: **accepted** (triplets in the study's pool version), **proposed** (every
triplet the study's authors handed in, accepted or not) and **awaiting review**. Values outside the
vocabulary (an imported item's own spelling) are counted under their own name.
"""

from __future__ import annotations

from collections import Counter

from annotation.benchmarks.nleye.vocabulary import DIMENSIONS, short_label
from annotation.crowd.models import Claim, Study, Submission
from annotation.models import BenchmarkItem


def _counts(rows: list[dict]) -> dict[str, Counter]:
    return {name: Counter(str(row.get(name) or "") for row in rows) for name, _heading, _vocabulary in DIMENSIONS}


def _percent(count: int, total: int) -> float:
    return round(100.0 * count / total, 1) if total else 0.0


def spread(study: Study) -> dict:
    """Counts per dimension and value (see the module docstring), with shares for bars."""
    accepted = [item.payload for item in BenchmarkItem.objects.filter(version_id=study.output_version_id,
                                                                      payload__kind="triplet")] \
        if study.output_version_id else []
    handed_in = list(Submission.objects.filter(claim__study=study).exclude(claim__status=Claim.Status.ACTIVE)
                     .values("data", "reviewed_data", "claim__status"))
    proposed = [row["reviewed_data"] if row["reviewed_data"] is not None else row["data"] for row in handed_in]
    pending = [data for data, row in zip(proposed, handed_in, strict=True)
               if row["claim__status"] == Claim.Status.SUBMITTED]
    counted = {"accepted": _counts(accepted), "proposed": _counts(proposed), "pending": _counts(pending)}
    dimensions = []
    for name, heading, vocabulary in DIMENSIONS:
        values = [value for value, _label in vocabulary]
        extra = sorted(set().union(*(counted[what][name] for what in counted)) - set(values) - {""})
        rows = []
        for value in [*values, *extra, *([""] if any(counted[w][name][""] for w in counted) else [])]:
            numbers = {what: counted[what][name][value] for what in counted}
            rows.append({"value": value, "label": short_label(vocabulary, value) if value else "(not given)",
                         "known": value in values, **numbers,
                         "accepted_pct": _percent(numbers["accepted"], len(accepted)),
                         "proposed_pct": _percent(numbers["proposed"], len(proposed))})
        most = max([1, *(row["accepted"] for row in rows), *(row["proposed"] for row in rows)])
        for row in rows:
            row["accepted_bar"] = round(100.0 * row["accepted"] / most, 1)
            row["proposed_bar"] = round(100.0 * row["proposed"] / most, 1)
        dimensions.append({"name": name, "heading": heading, "rows": rows,
                           "missing": [row["label"] for row in rows if row["known"] and not row["accepted"]]})
    return {"study": study, "version": study.output_version, "dimensions": dimensions,
            "totals": {"accepted": len(accepted), "proposed": len(proposed), "pending": len(pending)}}
