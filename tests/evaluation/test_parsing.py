"""Answer parsers: each form a model writes is read, and anything ambiguous stays unparsed."""

import pytest

from evaluation.answer_parsing import (
    EMPTY,
    OK,
    UNPARSED,
    Parsed,
    parse_choice_12,
    parse_for_request,
    parse_free,
    parse_letter,
    parse_number,
    parse_score,
    parse_yes_no,
    presupposition_of,
)
from evaluation.benchmarks.base import EvalRequest

OPTIONS = {"A": "He catches the ball.", "B": "He slips on the ice and falls.", "C": "The dog takes the ball."}


@pytest.mark.parametrize("text, letter", [
    ("B", "B"), ("(B)", "B"), ("b.", "B"), ("  C  ", "C"), ("Answer: C", "C"), ("the answer is B.", "B"),
    ("**Answer:** A", "A"), ("The correct answer is (C) The dog takes the ball.", "C"),
    ("B. He slips on the ice and falls.", "B"), ("C) the dog", "C"), ("I pick (A) because he catches it.", "A"),
    ("Answer: B. Option (A) would need the ball to stay in his hands.", "B"),
    ("He slips on the ice and falls.", "B"), ("I think the dog takes the ball.", "C"),
])
def test_letters_in_the_forms_models_write(text, letter):
    assert parse_letter(text, "ABC", OPTIONS) == Parsed(letter, OK)


@pytest.mark.parametrize("text", [
    "A or B", "The answer is A or B.", "Answer: B and C", "Option A is wrong, option B is right.",
    "A man slips on the ice.",  # the article, not a letter
    "the answer is a cat", "D", "Answer: D",  # D is not an option here
    "He catches the ball, or maybe he slips on the ice and falls.",  # two option texts
])
def test_letters_are_never_guessed(text):
    assert parse_letter(text, "ABC", OPTIONS) == Parsed(None, UNPARSED)


def test_an_earlier_tier_decides_before_a_later_one():
    # the answer phrase names B; the parenthesised (A) of the explanation is a later, weaker tier
    assert parse_letter("The answer is B; (A) is unlikely.", "ABC").value == "B"
    # two answer phrases that disagree: ambiguous, even though a leading letter exists
    assert parse_letter("A. Answer: B. Final answer: C", "ABC").status == UNPARSED


@pytest.mark.parametrize("text", ["", "   ", None, "**"])
def test_no_text_is_empty_not_unparsed(text):
    assert parse_letter(text, "ABC").status == EMPTY
    assert parse_yes_no(text).status == EMPTY
    assert parse_number(text).status == EMPTY
    assert parse_choice_12(text).status == EMPTY
    assert parse_score(text).status == EMPTY


def test_free_answers_are_kept_as_written():
    assert parse_free("  Una pizza.\n") == Parsed("Una pizza.", OK)
    assert parse_free("**") == Parsed("**", OK)
    assert parse_free(" \n") == Parsed(None, EMPTY)


def test_italian_answers_to_maia_statement_pairs():
    assert parse_letter("La risposta è A", "AB") == Parsed("A", OK)
    assert parse_letter("L'affermazione vera è la B.", "AB") == Parsed("B", OK)
    assert parse_letter("C", "AB").status == UNPARSED


@pytest.mark.parametrize("text, value", [
    ("Yes", "yes"), ("no.", "no"), ("No, the hypothesis does not hold.", "no"), ("TRUE", "yes"), ("False", "no"),
    ("Based on the frames, yes.", "yes"), ("The answer is no.", "no"), ("**Yes**", "yes"),
])
def test_yes_no_and_true_false(text, value):
    assert parse_yes_no(text) == Parsed(value, OK)


@pytest.mark.parametrize("text", [
    "yes or no", "Yes. No.", "The hypothesis holds.", "There is no ball, so it holds", "Not sure.",
])
def test_yes_no_is_not_guessed_from_words_inside_a_sentence(text):
    assert parse_yes_no(text).status == UNPARSED


@pytest.mark.parametrize("text, value", [
    ("3", 3), ("three", 3), ("There are Three cups.", 3), ("0", 0), ("zero", 0), ("ten", 10), ("12", 12),
    ("None.", 0), ("no", 0), ("There are no cups.", 0), ("No, there are 4.", 4), ("3 cups, so 3.", 3),
    ("Let's count: 2 cups and 1 plate. The answer is 4.", 4), ("2.5", 2.5),
])
def test_counts_from_digits_and_number_words(text, value):
    assert parse_number(text) == Parsed(value, OK)


@pytest.mark.parametrize("text", ["2 or 3", "two cups and one plate", "twelve", "many", "someone"])
def test_counts_that_name_two_numbers_or_none_stay_unparsed(text):
    assert parse_number(text).status == UNPARSED


def test_the_repeated_presupposition_is_read_past():
    question = "How many cups would there be if two cups were added?"
    presupposition = presupposition_of(question)
    assert presupposition == "if two cups were added"
    for text in ("If two cups were added, there would be 5 cups.", "There would be 5 cups if two cups were added.",
                 "if 2 cups were added, 5"):
        assert parse_number(text, presupposition=presupposition) == Parsed(5, OK), text
    # without the rule the presupposition's own number makes the answer ambiguous
    assert parse_number("If two cups were added, there would be 5 cups.").status == UNPARSED
    assert presupposition_of("How many cups are on the table?") == ""


@pytest.mark.parametrize("text, value", [
    ("2", 2), ("Hypothesis 1", 1), ("(2)", 2), ("Hypothesis 1 is more plausible because hypothesis 2 is odd.", 1),
    ("The more plausible hypothesis is Hypothesis 2.", 2), ("The first hypothesis is more plausible.", 1),
    ("2. The window was broken by the ball.", 2), ("Answer: 1", 1),
    ("Which image of the two (1 and 2) is more plausible? Image 1.", 1), ("I choose image 2 since it fits.", 2),
])
def test_which_hypothesis_1_or_2(text, value):
    assert parse_choice_12(text) == Parsed(value, OK)


@pytest.mark.parametrize("text", ["1 or 2", "Hypothesis 1 shows a boy; hypothesis 2 shows a book.", "3",
                                  "Both are plausible."])
def test_which_hypothesis_is_not_guessed(text):
    assert parse_choice_12(text).status == UNPARSED


@pytest.mark.parametrize("text, value", [
    ("7", 7), ("Score: 8", 8), ("7/10", 7), ("I rate it 6 out of 10.", 6), ("7. It fits the premise.", 7),
    ("Plausibility score: 9. The boy ...", 9), ("10: Almost necessarily plausible", 10), ("7.5", 7.5),
])
def test_scores_on_the_1_to_10_scale(text, value):
    assert parse_score(text, 1, 10) == Parsed(value, OK)


@pytest.mark.parametrize("text", ["11", "0", "Score: 0", "between 1 and 10", "Score: 3, no wait, score: 5",
                                  "very plausible"])
def test_scores_outside_the_scale_or_ambiguous_stay_unparsed(text):
    assert parse_score(text, 1, 10).status == UNPARSED


def test_a_judge_scale_of_1_to_5():
    assert parse_score("The answers match. Score: 4", 1, 5) == Parsed(4, OK)
    assert parse_score("Score: 7", 1, 5).status == UNPARSED


def test_the_request_answer_type_picks_the_parser():
    def request(answer_type, **fields):
        return EvalRequest(request_id="r", item_id="i", variant="v", text=fields.pop("text", "q"), prompt="p",
                           answer_type=answer_type, **fields)

    assert parse_for_request(request("letter", options={"A": "x", "B": "y"}), "Answer: B").value == "B"
    assert parse_for_request(request("letter", options={"A": "x", "B": "y"}), "C").status == UNPARSED
    assert parse_for_request(request("yes_no"), "True").value == "yes"
    counterfactual = request("number", text="How many dogs are there if one dog left?")
    assert parse_for_request(counterfactual, "If one dog left, there are 2 dogs.").value == 2
    assert parse_for_request(request("choice_12"), "Hypothesis 2").value == 2
    assert parse_for_request(request("score_1_10"), "Score: 3").value == 3
    assert parse_for_request(request("free"), "  Una pizza.  ") == Parsed("Una pizza.", OK)
