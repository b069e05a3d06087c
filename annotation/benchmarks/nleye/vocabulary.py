"""NL-EYE's categorization vocabularies (SPEC §3 Curation 4; paper §2.2, App. A.2, Figure 14).

Values are written as the release writes them (lower case); `LABELS` gives the words pages show.
A parallel triplet's scenes happen at the same time, so its duration is short (`PARALLEL_DURATION`).
"""

REASONING_CATEGORIES = ("physical", "functional", "logical", "emotional", "cultural", "social")
TIME_DIRECTIONS = ("forward", "backward", "parallel")
TIME_DURATIONS = ("short", "long")
DOMAINS = (
    "administration",
    "business & work",
    "daily life & hospitality",
    "education",
    "healthcare",
    "religion",
    "science & technology",
    "sports & arts",
    "transportation",
)
PARALLEL = "parallel"
PARALLEL_DURATION = "short"

LABELS = {
    "forward": "Forward (the premise causes the hypothesis)",
    "backward": "Backward (the hypothesis causes the premise)",
    "parallel": "Parallel (both happen at the same time)",
    "short": "Short-term (close in time, same setting)",
    "long": "Long-term (noticeably different periods)",
}


def choices(values) -> list[tuple[str, str]]:
    """(value, label) pairs for a form's choices."""
    return [(value, LABELS.get(value, value[:1].upper() + value[1:])) for value in values]
