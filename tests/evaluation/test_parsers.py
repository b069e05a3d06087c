"""The named answer parsers: the authors' released C-VQA rules (the default), the strict reading by
name, where the two differ, and MAIA's Italian answers under both."""

import pytest

from evaluation import named_parsers
from evaluation.answer_parsing import EMPTY, OK, UNPARSED, Parsed, parse_letter
from evaluation.benchmarks.base import EvalRequest


def request(answer_type: str, text: str = "How many cups are there if one is removed?", options=None):
    return EvalRequest("q:counterfactual", "q", "counterfactual", text, text, options=options,
                       answer_type=answer_type)


# (response, authors' reading, strict reading) — C-VQA numerical answers
NUMBER_CASES = [
    ("2", Parsed(2, OK), Parsed(2, OK)),
    ("Two.", Parsed(2, OK), Parsed(2, OK)),
    ("None", Parsed(0, OK), Parsed(0, OK)),
    ("There are 3 cups and 2 plates.", Parsed(3, OK), Parsed(None, UNPARSED)),  # first number vs two numbers
    ("If one is removed, there would be 1 cup.", Parsed(1, OK), Parsed(1, OK)),
    ("If one cup is removed there are two", Parsed(None, UNPARSED), Parsed(None, UNPARSED)),  # "if" first, no comma
    ("If one is removed,", Parsed(None, UNPARSED), Parsed(None, UNPARSED)),  # nothing after the comma
    ("There would be 5 if two cups were added", Parsed(5, OK), Parsed(5, OK)),
    ("No cups would be left", Parsed(0, OK), Parsed(0, OK)),
    ("no, there are 4", Parsed(0, OK), Parsed(4, OK)),  # "no" is the first number word of the authors
    ("eleven", Parsed(None, UNPARSED), Parsed(None, UNPARSED)),  # beyond ten
    ("about 12", Parsed(12, OK), Parsed(12, OK)),
    ("3.5", Parsed(3, OK), Parsed(3.5, OK)),  # word tokens split the decimal
    ("", Parsed(None, EMPTY), Parsed(None, EMPTY)),
    ("I cannot tell.", Parsed(None, UNPARSED), Parsed(None, UNPARSED)),
]

# (response, authors' reading, strict reading) — C-VQA boolean answers
YES_NO_CASES = [
    ("Yes", Parsed("yes", OK), Parsed("yes", OK)),
    ("No.", Parsed("no", OK), Parsed("no", OK)),
    ("True", Parsed("yes", OK), Parsed("yes", OK)),
    ("The cup is on the table.", Parsed("yes", OK), Parsed(None, UNPARSED)),  # "is" anywhere → yes
    ("It would not be there.", Parsed("no", OK), Parsed(None, UNPARSED)),  # "not" anywhere → no
    ("Yes, there is no cup.", Parsed("no", OK), Parsed("yes", OK)),  # "no" wins for the authors
    ("Yes or no", Parsed("no", OK), Parsed(None, UNPARSED)),
    ("Maybe", Parsed(None, UNPARSED), Parsed(None, UNPARSED)),
    ("   ", Parsed(None, EMPTY), Parsed(None, EMPTY)),
]


@pytest.mark.parametrize(("text", "authors", "strict"), NUMBER_CASES)
def test_cvqa_numbers_follow_the_released_rule_by_default_and_the_strict_one_by_name(text, authors, strict):
    asked = request("number")
    assert named_parsers.parse("cvqa", asked, text) == authors
    assert named_parsers.parse("cvqa", asked, text, named_parsers.AUTHORS) == authors
    assert named_parsers.parse("cvqa", asked, text, named_parsers.STRICT) == strict
    assert (named_parsers.differs("cvqa", asked, text) is None) == (authors == strict)


@pytest.mark.parametrize(("text", "authors", "strict"), YES_NO_CASES)
def test_cvqa_yes_no_follow_the_released_rule_by_default_and_the_strict_one_by_name(text, authors, strict):
    asked = request("yes_no", "Would the cup be on the table if it fell?")
    assert named_parsers.parse("cvqa", asked, text) == authors
    assert named_parsers.parse("cvqa", asked, text, named_parsers.STRICT) == strict


def test_benchmarks_without_released_rules_read_strictly_under_both_names():
    yes_no = request("yes_no", "Does the hypothesis hold?")
    # BlackSwan Y/N: the C-VQA bag-of-words rule must not apply ("is" is not a yes there)
    assert named_parsers.parse("blackswan", yes_no, "The man is falling.") == Parsed(None, UNPARSED)
    assert named_parsers.parse("blackswan", yes_no, "The man is falling.",
                               named_parsers.STRICT) == Parsed(None, UNPARSED)
    letter = request("letter", options={"A": "16", "B": "17", "C": "12", "D": "13"})
    assert named_parsers.parse("cvqa", letter, "B") == named_parsers.parse(
        "cvqa", letter, "B", named_parsers.STRICT) == Parsed("B", OK)


def test_an_unknown_parser_name_is_refused():
    with pytest.raises(ValueError, match="Unknown parser 'loose'; known: authors, strict"):
        named_parsers.reader("cvqa", "loose")


MAIA_OPTIONS = {"A": "Il bambino ride.", "B": "Il bambino piange."}
# (response, letter read; None: unparsed)
ITALIAN_CASES = [
    ("La B", "B"),
    ("È vera la A", "A"),
    ("Vera: A", "A"),
    ("Risposta: B", "B"),
    ("L'affermazione corretta è la A", "A"),
    ("La risposta corretta è la B.", "B"),
    ("Secondo me è vera la B.", "B"),
    ("La B è vera", "B"),
    ("Direi la A", "A"),
    ("La A è falsa, la B è vera", "B"),
    ("La A è falsa", None),  # says which is false, not which is true
    ("La A o la B", None),  # names both
    ("Entrambe: A e B", None),
]


@pytest.mark.parametrize(("text", "letter"), ITALIAN_CASES)
def test_maia_italian_answers_read_as_the_letter_they_name(text, letter):
    vsv = request("letter", "Chi ride?", options=MAIA_OPTIONS)
    expected = Parsed(letter, OK) if letter else Parsed(None, UNPARSED)
    assert named_parsers.parse("maia", vsv, text) == expected
    assert named_parsers.parse("maia", vsv, text, named_parsers.STRICT) == expected
    assert parse_letter(text, "AB", MAIA_OPTIONS) == expected
