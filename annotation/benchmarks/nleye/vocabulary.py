"""NL-EYE's vocabularies (SPEC §3 "Curation" 4): reasoning categories, temporal direction and duration,
and domains, each as (value, label). A parallel scene is short: it happens while the premise does."""

CATEGORIES = (("physical", "physical"), ("functional", "functional"), ("logical", "logical"),
              ("emotional", "emotional"), ("cultural", "cultural"), ("social", "social"))
DIRECTIONS = (("forward", "forward: the hypotheses happen after the premise"),
              ("backward", "backward: the hypotheses happened before the premise"),
              ("parallel", "parallel: the hypotheses happen at the same time as the premise"))
DURATIONS = (("short", "short: seconds to hours"), ("long", "long: days or more"))
DOMAINS = tuple((name, name) for name in (
    "administration", "business & work", "daily life & hospitality", "education", "healthcare", "religion",
    "science & technology", "sports & arts", "transportation", "other"))

CATEGORY_VALUES = tuple(value for value, _ in CATEGORIES)
DIRECTION_VALUES = tuple(value for value, _ in DIRECTIONS)
DURATION_VALUES = tuple(value for value, _ in DURATIONS)
DOMAIN_VALUES = tuple(value for value, _ in DOMAINS)
PARALLEL, SHORT = "parallel", "short"

# (field of a triplet, its heading, its vocabulary): what the pool's spread is counted over
DIMENSIONS = (("reasoning_category", "Reasoning category", CATEGORIES),
              ("time_direction", "Time direction", DIRECTIONS),
              ("time_duration", "Time duration", DURATIONS),
              ("domain", "Domain", DOMAINS))


def short_label(vocabulary, value: str) -> str:
    """The label of `value` up to its colon ("forward", not the explanation after it)."""
    return dict(vocabulary).get(value, value).split(":")[0]
