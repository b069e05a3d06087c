"""Agreement statistics checked against values worked out by hand (the arithmetic is written out
below) and against published examples; plus the edge cases, which give None and a reason, never
NaN or an exception."""

import math

import pytest

from annotation.crowd import agreement
from annotation.crowd.agreement import (
    NO_ITEMS,
    ONE_CATEGORY,
    UNEQUAL_RATINGS,
    cohens_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    pairwise_cohens_kappa,
    unanimous_share,
)


def close(value, expected):
    return value is not None and math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-12)


def units_from_rows(rows: dict) -> dict:
    """{rater: [value per unit, None = not rated]} -> {unit: {rater: value}}."""
    units = {}
    for rater, values in rows.items():
        for unit, value in enumerate(values):
            if value is not None:
                units.setdefault(unit, {})[rater] = value
    return units


# --- Fleiss' kappa -----------------------------------------------------------------------------

def test_fleiss_kappa_by_hand_three_categories():
    ratings = [
        ["a", "a", "a"],
        ["a", "a", "b"],
        ["b", "b", "c"],
        ["c", "c", "c"],
        ["a", "b", "c"],
    ]
    n = 3  # ratings per item
    # P_i = (sum_j n_ij^2 - n) / (n (n - 1))
    p_i = [
        (3**2 - n) / (n * (n - 1)),  # a a a -> 1
        (2**2 + 1**2 - n) / (n * (n - 1)),  # a a b -> 1/3
        (2**2 + 1**2 - n) / (n * (n - 1)),  # b b c -> 1/3
        (3**2 - n) / (n * (n - 1)),  # c c c -> 1
        (1 + 1 + 1 - n) / (n * (n - 1)),  # a b c -> 0
    ]
    p_bar = sum(p_i) / 5  # 8/15
    # p_j = share of all 15 ratings in category j: a 6, b 4, c 5
    p_j = [6 / 15, 4 / 15, 5 / 15]
    p_e = sum(p * p for p in p_j)  # 77/225
    expected = (p_bar - p_e) / (1 - p_e)  # 43/148
    assert close(expected, 43 / 148)
    result = fleiss_kappa(ratings)
    assert close(result.value, expected)
    assert (result.n_items, result.n_ratings, result.left_out, result.reason) == (5, 15, 0, "")


def test_fleiss_kappa_published_example():
    """Fleiss (1971) as tabulated on Wikipedia: 10 subjects, 14 raters, 5 categories, kappa 0.210."""
    counts = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
    ratings = [[category for category, count in enumerate(row) for _ in range(count)] for row in counts]
    # P_bar = 0.378, P_e = 0.213 (rounded), kappa = (0.378 - 0.213) / (1 - 0.213) = 0.210
    assert round(fleiss_kappa(ratings).value, 3) == 0.210


def test_fleiss_kappa_leaves_out_and_counts_items_with_one_rating():
    result = fleiss_kappa([["a", "b"], ["a", "a"], ["b"], []])
    # on the two items with 2 ratings: P_1 = (1 + 1 - 2) / 2 = 0, P_2 = (4 - 2) / 2 = 1, P_bar = 1/2;
    # p_a = 3/4, p_b = 1/4, P_e = 9/16 + 1/16 = 5/8; kappa = (1/2 - 5/8) / (3/8) = -1/3
    assert close(result.value, (1 / 2 - 5 / 8) / (1 - 5 / 8))
    assert close(result.value, -1 / 3)
    assert (result.n_items, result.n_ratings, result.left_out) == (2, 4, 2)


def test_fleiss_kappa_edge_cases():
    empty = fleiss_kappa([])
    assert empty.value is None and empty.reason == NO_ITEMS
    single = fleiss_kappa([["x"], ["y"]])
    assert single.value is None and single.reason == NO_ITEMS and single.left_out == 2
    one_category = fleiss_kappa([["x", "x"], ["x", "x"], ["x", "x"]])
    assert one_category.value is None and one_category.reason == ONE_CATEGORY
    unequal = fleiss_kappa([["x", "y", "x"], ["x", "y"]])
    assert unequal.value is None and unequal.reason == UNEQUAL_RATINGS


# --- Cohen's kappa -----------------------------------------------------------------------------

def test_cohens_kappa_published_example():
    """Wikipedia's example: 50 proposals, both yes 20, A yes B no 5, A no B yes 10, both no 15."""
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    p_o = (20 + 15) / 50  # 0.7
    a_yes, b_yes = 25 / 50, 30 / 50
    p_e = a_yes * b_yes + (1 - a_yes) * (1 - b_yes)  # 0.3 + 0.2 = 0.5
    expected = (p_o - p_e) / (1 - p_e)  # 0.4
    result = cohens_kappa(pairs)
    assert close(result.value, expected) and close(result.value, 0.4)
    assert (result.n_items, result.n_ratings) == (50, 100)


def test_cohens_kappa_by_hand_three_categories():
    pairs = [("a", "a"), ("a", "a"), ("a", "b"), ("b", "b"), ("c", "c"), ("c", "a")]
    p_o = 4 / 6
    # rater A: a 3, b 1, c 2; rater B: a 3, b 2, c 1 (of 6)
    p_e = (3 * 3 + 1 * 2 + 2 * 1) / 36  # 13/36
    assert close(cohens_kappa(pairs).value, (p_o - p_e) / (1 - p_e))  # (24/36 - 13/36) / (23/36) = 11/23
    assert close(cohens_kappa(pairs).value, 11 / 23)


def test_cohens_kappa_edge_cases():
    assert cohens_kappa([]).value is None and cohens_kappa([]).reason
    same = cohens_kappa([("x", "x"), ("x", "x")])
    assert same.value is None and same.reason == ONE_CATEGORY
    # opposite constant raters: p_o = 0 and p_e = 0, kappa = 0 (defined)
    assert cohens_kappa([("x", "y"), ("x", "y")]).value == 0.0


def test_pairwise_cohens_kappa_by_hand():
    units = {
        "i1": {"r1": "y", "r2": "y", "r3": "y", "r4": "y"},
        "i2": {"r1": "y", "r2": "n", "r3": "y"},
        "i3": {"r1": "n", "r2": "n", "r3": "n"},
        "i4": {"r1": "n", "r2": "n", "r3": "y"},
    }
    # r1-r2: p_o = 3/4; r1 yes 1/2, r2 yes 1/4: p_e = 1/2*1/4 + 1/2*3/4 = 1/2 -> kappa 1/2
    k12 = (3 / 4 - 1 / 2) / (1 - 1 / 2)
    # r1-r3: p_o = 3/4; r1 yes 1/2, r3 yes 3/4: p_e = 1/2 -> kappa 1/2
    k13 = (3 / 4 - 1 / 2) / (1 - 1 / 2)
    # r2-r3: p_o = 2/4; r2 yes 1/4, r3 yes 3/4: p_e = 3/16 + 3/16 = 3/8 -> kappa (1/2 - 3/8) / (5/8) = 1/5
    k23 = (1 / 2 - 3 / 8) / (1 - 3 / 8)
    result = pairwise_cohens_kappa(units, min_common=3)
    assert close(result.value, (k12 + k13 + k23) / 3) and close(result.value, 0.4)
    # r4 shares one item with each other rater: those three pairs are left out, and counted
    assert result.details["pairs_too_few_items"] == 3
    assert len(result.details["pairs"]) == 3


def test_pairwise_cohens_kappa_edge_cases():
    assert pairwise_cohens_kappa({}).value is None
    too_few = pairwise_cohens_kappa({"i1": {"a": 1, "b": 1}}, min_common=3)
    assert too_few.value is None and too_few.details["pairs_too_few_items"] == 1
    constant = pairwise_cohens_kappa({f"i{n}": {"a": 1, "b": 1} for n in range(4)})
    assert constant.value is None and constant.reason == ONE_CATEGORY


# --- Krippendorff's alpha ----------------------------------------------------------------------

def test_krippendorff_alpha_nominal_by_hand_from_the_coincidence_matrix():
    units = {
        "u1": {"A": "a", "B": "a"},
        "u2": {"A": "a", "B": "b"},
        "u3": {"A": "b", "B": "b", "C": "b"},
        "u4": {"A": "a"},  # one value: not pairable
    }
    # o_ck = sum over units of (ordered c-k pairs of different coders) / (m_u - 1)
    o_aa = 2 / 1  # u1: (a,a) twice
    o_ab = o_ba = 1 / 1  # u2
    o_bb = 6 / 2  # u3: 3 * 2 ordered pairs, m_u - 1 = 2
    n = o_aa + o_ab + o_ba + o_bb  # 7 pairable values
    n_a, n_b = o_aa + o_ab, o_ba + o_bb  # 3, 4
    d_o = (o_ab + o_ba) / n  # 2/7
    d_e = (n_a * n_b + n_b * n_a) / (n * (n - 1))  # 24/42
    expected = 1 - d_o / d_e  # 1 - (2/7) / (4/7) = 1/2
    result = krippendorff_alpha(units, level="nominal")
    assert close(result.value, expected) and close(result.value, 0.5)
    assert (result.n_items, result.n_ratings, result.left_out) == (3, 7, 1)


def test_krippendorff_alpha_ordinal_by_hand():
    units = {"u1": {"A": 1, "B": 1}, "u2": {"A": 1, "B": 2}, "u3": {"A": 2, "B": 3},
             "u4": {"A": 3, "B": 3}, "u5": {"A": 1, "B": 3}}
    # coincidences (each unit has m_u = 2): o_11 = 2, o_33 = 2, o_12 = o_21 = o_23 = o_32 = o_13 = o_31 = 1
    n1, n2, n3 = 2 + 1 + 1, 1 + 1, 1 + 2 + 1  # 4, 2, 4
    n = n1 + n2 + n3  # 10

    def delta2(sum_between, n_c, n_k):
        # ordinal metric: (sum of n_g from c to k - (n_c + n_k) / 2) ** 2
        return (sum_between - (n_c + n_k) / 2) ** 2

    d12, d23, d13 = delta2(n1 + n2, n1, n2), delta2(n2 + n3, n2, n3), delta2(n1 + n2 + n3, n1, n3)  # 9, 9, 36
    observed = 2 * (1 * d12 + 1 * d23 + 1 * d13)  # sum over c != k of o_ck * delta2 = 108
    expected_pairs = 2 * (n1 * n2 * d12 + n2 * n3 * d23 + n1 * n3 * d13)  # 1440
    expected = 1 - (n - 1) * observed / expected_pairs  # 1 - 972/1440 = 0.325
    assert close(expected, 0.325)
    assert close(krippendorff_alpha(units, level="ordinal").value, expected)
    # the same data, nominal: mismatches 6 of n = 10; sum_{c != k} n_c n_k = 2 * (8 + 8 + 16) = 64
    assert close(krippendorff_alpha(units, level="nominal").value, 1 - (n - 1) * 6 / 64)  # 0.15625
    # ordinal alpha depends on the order only: rescaled labels give the same value
    rescaled = {u: {r: v * 10 + 7 for r, v in ratings.items()} for u, ratings in units.items()}
    assert close(krippendorff_alpha(rescaled, level="ordinal").value, expected)


def test_krippendorff_alpha_published_example():
    """Krippendorff (2011), 'Computing Krippendorff's alpha-reliability': 4 observers, 12 units,
    missing values; nominal 0.743, ordinal 0.815."""
    units = units_from_rows({
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    })
    nominal = krippendorff_alpha(units, "nominal")
    assert round(nominal.value, 3) == 0.743
    assert round(krippendorff_alpha(units, "ordinal").value, 3) == 0.815
    assert nominal.left_out == 1  # unit 12 has a single value


def test_krippendorff_alpha_edge_cases():
    assert krippendorff_alpha({}).reason == NO_ITEMS
    lonely = krippendorff_alpha({"u1": {"A": 1}, "u2": {"B": 2}})
    assert lonely.value is None and lonely.reason == NO_ITEMS and lonely.left_out == 2
    constant = krippendorff_alpha({"u1": {"A": 1, "B": 1}, "u2": {"A": 1, "B": 1}}, "ordinal")
    assert constant.value is None and constant.reason == ONE_CATEGORY
    with pytest.raises(ValueError):
        krippendorff_alpha({"u1": {"A": 1, "B": 2}}, level="interval")


def test_perfect_agreement_with_variation_is_one():
    units = {"u1": {"A": "x", "B": "x"}, "u2": {"A": "y", "B": "y"}, "u3": {"A": "x", "B": "x"}}
    assert krippendorff_alpha(units).value == pytest.approx(1.0)
    assert fleiss_kappa(agreement.ratings_from_units(units)).value == pytest.approx(1.0)
    assert cohens_kappa([("x", "x"), ("y", "y"), ("x", "x")]).value == pytest.approx(1.0)


# --- Unanimous share ---------------------------------------------------------------------------

def test_unanimous_share():
    result = unanimous_share([["a", "a"], ["a", "b"], ["b", "b", "b"], ["a"]])
    # items with >= 2 ratings: 3; unanimous among them: 2 -> 2/3; the single rating is left out
    assert close(result.value, 2 / 3)
    assert (result.n_items, result.n_ratings, result.left_out) == (3, 7, 1)
    assert result.details["unanimous_items"] == 2


def test_unanimous_share_edge_cases():
    assert unanimous_share([]).value is None and unanimous_share([]).reason == NO_ITEMS
    assert unanimous_share([["a"], []]).left_out == 2
    # one category everywhere is fine here: all items are unanimous
    assert unanimous_share([["a", "a"], ["a", "a"]]).value == 1.0


def test_results_are_never_nan():
    cases = [[], [[]], [["a"]], [["a", "a"]], [["a", "b"], ["a", "a", "a"]]]
    for ratings in cases:
        for result in (fleiss_kappa(ratings), unanimous_share(ratings)):
            assert result.value is None or math.isfinite(result.value)
            assert result.value is not None or result.reason
    assert set(fleiss_kappa([["a", "b"]]).as_dict()) >= {"value", "reason", "n_items", "n_ratings", "left_out"}
