"""Inter-annotator agreement over plain data (no models), computed with the field's libraries.

- Fleiss' kappa and Cohen's kappa come from `statsmodels.stats.inter_rater`;
- Krippendorff's alpha (nominal, ordinal) from the `krippendorff` package.

Every function returns an `Agreement`: a value, or `None` with the reason it is undefined (no
items, a single category everywhere, ...), never NaN and never an exception for ordinary data.
Items with fewer than two ratings carry no information about agreement: they are left out and
counted in `left_out`.

Shapes:
- `ratings`: one list of labels per item, e.g. [["cat", "cat", "dog"], ["dog", "dog", "dog"]];
- `units`: item -> {rater: label}, e.g. {"i1": {"ann": 3, "bob": 4}, "i2": {"ann": 1}};
- `pairs`: (label of rater A, label of rater B) per item both rated.
Labels are any hashable values; for the ordinal level they must also be mutually orderable.
"""

import itertools
import math
from dataclasses import asdict, dataclass, field

import numpy as np

NOMINAL = "nominal"
ORDINAL = "ordinal"
LEVELS = (NOMINAL, ORDINAL)

NO_ITEMS = "no item has two or more ratings"
ONE_CATEGORY = "every rating falls in the same category, so agreement expected by chance is 1 and the " \
               "statistic is undefined"
UNEQUAL_RATINGS = "items have different numbers of ratings; Fleiss' kappa needs the same number on every item"
NO_PAIRS = "no rater pair shares enough items"


@dataclass(frozen=True)
class Agreement:
    """One agreement figure. `value` is None when the statistic is undefined; `reason` says why."""

    value: float | None
    reason: str = ""
    n_items: int = 0  # items that entered the computation
    n_ratings: int = 0  # ratings on those items
    left_out: int = 0  # items left out (fewer than two ratings)
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _undefined(reason: str, **counts) -> Agreement:
    return Agreement(value=None, reason=reason, **counts)


def _finite(value, reason: str, **counts) -> Agreement:
    """Wrap a library result; a NaN or infinite result becomes None with the given reason."""
    value = float(value)
    if not math.isfinite(value):
        return _undefined(reason, **counts)
    return Agreement(value=value, **counts)


def _categories(labels) -> list:
    """Distinct labels in a stable order (sorted when the labels can be compared)."""
    distinct = set(labels)
    try:
        return sorted(distinct)
    except TypeError:
        return sorted(distinct, key=lambda label: (type(label).__name__, str(label)))


def _rated_items(ratings) -> tuple[list[list], int]:
    """Items with at least two ratings, and how many were left out."""
    kept = [list(item) for item in ratings if len(item) >= 2]
    return kept, len(ratings) - len(kept)


# --- Fleiss' kappa -----------------------------------------------------------------------------

def fleiss_kappa(ratings: list[list]) -> Agreement:
    """Fleiss' kappa over items that each carry the same number (>= 2) of ratings."""
    items, left_out = _rated_items(ratings)
    counts = {"n_items": len(items), "n_ratings": sum(map(len, items)), "left_out": left_out}
    if not items:
        return _undefined(NO_ITEMS, **counts)
    if len({len(item) for item in items}) > 1:
        return _undefined(UNEQUAL_RATINGS, **counts)
    categories = _categories(label for item in items for label in item)
    if len(categories) < 2:
        return _undefined(ONE_CATEGORY, **counts)
    code = {label: index for index, label in enumerate(categories)}
    # subjects x raters of category codes -> subjects x categories of counts
    from statsmodels.stats import inter_rater  # heavy (pandas, scipy): loaded when a report is made

    table, _ = inter_rater.aggregate_raters(np.array([[code[label] for label in item] for item in items]),
                                            n_cat=len(categories))
    return _finite(inter_rater.fleiss_kappa(table, method="fleiss"), ONE_CATEGORY, **counts)


# --- Cohen's kappa -----------------------------------------------------------------------------

def cohens_kappa(pairs: list[tuple]) -> Agreement:
    """Cohen's kappa of two raters from the (label A, label B) pairs of the items both rated."""
    pairs = [tuple(pair) for pair in pairs]
    counts = {"n_items": len(pairs), "n_ratings": 2 * len(pairs)}
    if not pairs:
        return _undefined("the two raters share no item", **counts)
    categories = _categories(label for pair in pairs for label in pair)
    if len(categories) < 2:
        return _undefined(ONE_CATEGORY, **counts)
    code = {label: index for index, label in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)))
    for first, second in pairs:
        table[code[first], code[second]] += 1
    # p_e = 1 only when both raters used one and the same category, handled above
    from statsmodels.stats import inter_rater

    return _finite(inter_rater.cohens_kappa(table, return_results=False), ONE_CATEGORY, **counts)


def pairwise_cohens_kappa(units: dict, *, min_common: int = 3) -> Agreement:
    """Mean Cohen's kappa over the rater pairs that share at least `min_common` items.

    `details` lists each pair used (raters, shared items, kappa) and counts the pairs skipped for
    too few shared items and those whose kappa is undefined (e.g. one category only).
    """
    by_rater: dict = {}
    for item, ratings in units.items():
        for rater, label in ratings.items():
            by_rater.setdefault(rater, {})[item] = label
    raters = _categories(by_rater)
    pairs, too_few, undefined = [], 0, 0
    for first, second in itertools.combinations(raters, 2):
        common = sorted(set(by_rater[first]) & set(by_rater[second]), key=str)
        if len(common) < max(1, min_common):
            too_few += 1
            continue
        kappa = cohens_kappa([(by_rater[first][item], by_rater[second][item]) for item in common])
        if kappa.value is None:
            undefined += 1
            continue
        pairs.append({"raters": [str(first), str(second)], "n_items": len(common), "kappa": kappa.value})
    details = {"pairs": pairs, "pairs_too_few_items": too_few, "pairs_undefined": undefined,
               "min_common": min_common}
    counted_items = {item for item, ratings in units.items() if len(ratings) >= 2}
    counts = {"n_items": len(counted_items), "n_ratings": sum(len(units[item]) for item in counted_items),
              "left_out": len(units) - len(counted_items), "details": details}
    if not pairs:
        return _undefined(ONE_CATEGORY if undefined else NO_PAIRS, **counts)
    return Agreement(value=sum(p["kappa"] for p in pairs) / len(pairs), **counts)


# --- Krippendorff's alpha ----------------------------------------------------------------------

def krippendorff_alpha(units: dict, level: str = NOMINAL) -> Agreement:
    """Krippendorff's alpha (nominal or ordinal); missing ratings are allowed.

    Units with fewer than two ratings are not pairable: they are left out (and counted).
    For the ordinal level, labels are ranked by their natural order; only the order and the
    frequencies of the observed values enter the ordinal distance, so ranks lose nothing.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    pairable = {item: ratings for item, ratings in units.items() if len(ratings) >= 2}
    counts = {"n_items": len(pairable), "n_ratings": sum(map(len, pairable.values())),
              "left_out": len(units) - len(pairable)}
    if not pairable:
        return _undefined(NO_ITEMS, **counts)
    categories = _categories(label for ratings in pairable.values() for label in ratings.values())
    if len(categories) < 2:
        return _undefined(ONE_CATEGORY, **counts)
    if level == ORDINAL:
        try:
            categories = sorted(categories)
        except TypeError:
            raise ValueError("ordinal alpha needs labels that can be ordered") from None
    code = {label: index for index, label in enumerate(categories)}
    raters = _categories(rater for ratings in pairable.values() for rater in ratings)
    row = {rater: index for index, rater in enumerate(raters)}
    data = np.full((len(raters), len(pairable)), np.nan)  # raters x units, NaN = not rated
    for column, ratings in enumerate(pairable.values()):
        for rater, label in ratings.items():
            data[row[rater], column] = code[label]
    import krippendorff

    value = krippendorff.alpha(reliability_data=data, value_domain=list(range(len(categories))),
                               level_of_measurement=level)
    return _finite(value, ONE_CATEGORY, **counts)


# --- Raw agreement -----------------------------------------------------------------------------

def unanimous_share(ratings: list[list]) -> Agreement:
    """Share of the items with two or more ratings on which every rating is the same."""
    items, left_out = _rated_items(ratings)
    counts = {"n_items": len(items), "n_ratings": sum(map(len, items)), "left_out": left_out}
    if not items:
        return _undefined(NO_ITEMS, **counts)
    unanimous = sum(1 for item in items if len(set(item)) == 1)
    return Agreement(value=unanimous / len(items), details={"unanimous_items": unanimous}, **counts)


def ratings_from_units(units: dict) -> list[list]:
    """The per-item label lists of a units mapping (item -> {rater: label})."""
    return [list(ratings.values()) for ratings in units.values()]
