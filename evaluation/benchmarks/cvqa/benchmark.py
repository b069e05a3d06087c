"""C-VQA: each image question asked twice, as released and with its counterfactual presupposition
(seeds/001, SPEC §2).

Items: kind `real` (C-VQA-Real, type direct | indirect | boolean) and `synthetic` (C-VQA-Synthetic,
type abs_counting_1 … abs_counting_6, Table 2), fields `query`, `answer`, `new_query`, `new_answer`,
`type`; the image under media role `image`. The image's subgroup (a perceived-gender annotation, §4.3)
is passed on for the bias analysis as `extra["subgroup"]`: the payload's `subgroup` field when it has
one, else the library image's label (`annotation.benchmarks.cvqa.subgroups`, read when the requests
are built), with `extra["subgroup_from"]` saying which ("payload" or "label").

Variants: `original` (query → answer) and `counterfactual` (new_query → new_answer), request ids
`<id>:original` and `<id>:counterfactual`; each names the other as `extra["pair"]` so scorers can
form the drop (original − counterfactual accuracy, Table 3). `extra` records the subset
(real/synthetic), the type and its group (real: the type; synthetic: flower_counting for templates
1–3, dot_counting for 4–6, Table 2).

Answers: `number` for direct/indirect (gold an int; the release writes digits or number words),
`yes_no` for boolean (gold "yes"/"no"), `letter` for synthetic. Synthetic options sit inside the
query ("…Select the correct answer:A:16  B:17  C:12  D:13"). Under the default option order
`release` the query is asked exactly as released (the options stay inside it, parsed out only for the
answer parser) and `gold` is the released letter. Under `shuffled:<seed>` the options are shown under
A–D in an order drawn from (seed, request id) and the question is rewritten with them; `gold` is the
letter the released answer's option lands on. `extra` keeps the option strategy, the release's
options and answer.

Prompt text: the paper prints none beyond the question (§4) and the chain-of-thought suffix
"Let's think step by step:" (Table 4, `evaluation.prompting`); the authors' evaluation scripts
(github.com/Letian2003/C-VQA, `scripts/run_eval_*.py`) append " Answer the question using a single
word or phrase." to every question, real and synthetic, and so does this module.

Scoring (`BENCHMARK.score`, §4, Table 3, §4.2–4.3): original and counterfactual accuracy and their
drop (original − counterfactual) per real group (`numerical_direct`, `numerical_indirect`,
`boolean`), for real and synthetic overall, per synthetic template and template family; the share
of each letter among the synthetic answers that parsed (`option_distribution`, beside the gold
letters' `gold_distribution`); the unparsed rate; and, when items carry a `subgroup`, the drop per
subgroup (`diff`) and the gap between the largest and smallest one.

Answer parsing (`authors_reading`, the `authors` parser of `evaluation.named_parsers`): numbers and yes/no
follow the authors' `format_response.py` / `calc_acc.py` (SPEC "Fidelity rules": `authors_number`,
`authors_yes_no`); the synthetic letters have no released rule and are read strictly.
"""

from __future__ import annotations

import re

from annotation.benchmarks.cvqa.subgroups import label_of
from evaluation import benchmarks, named_parsers, prompting, scoring
from evaluation.answer_parsing import EMPTY, OK, UNPARSED, Parsed
from evaluation.benchmarks.base import (
    Benchmark,
    EvalRequest,
    RequestOptions,
    media_input,
    media_links,
    option_extra,
    option_order_seed,
    ordered_options,
)
from evaluation.results.consistency_views import PairView
from evaluation.results.drilldown import COUNT_LEAVES, DrillRules, extra_is
from evaluation.results.outcomes import CORRECT, WRONG
from evaluation.results.specs import MetricSpec, SeriesSpec

ANSWER_INSTRUCTION = " Answer the question using a single word or phrase."
SELECT = "Select the correct answer:"
SYNTHETIC_LETTERS = ("A", "B", "C", "D")
FORMS = ("original", "counterfactual")
FIELDS = {"original": ("query", "answer"), "counterfactual": ("new_query", "new_answer")}

NUMBER_WORDS = {word: value for value, word in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"))}
YES_NO = {"yes": "yes", "true": "yes", "no": "no", "false": "no"}
REAL_GROUPS = {"direct": "numerical_direct", "indirect": "numerical_indirect", "boolean": "boolean"}
_OPTION = re.compile(r"([A-Z])\s*:\s*(.*?)(?=\s+[A-Z]\s*:|\s*$)", re.S)


def number(answer: str) -> int:
    """An exact count written as digits or as a number word ("two"); ValueError otherwise."""
    text = str(answer).strip().lower().rstrip(".")
    if re.fullmatch(r"\d+", text):
        return int(text)
    if text in NUMBER_WORDS:
        return NUMBER_WORDS[text]
    raise ValueError(f"C-VQA numerical answer {answer!r} is not a number.")


def yes_no(answer: str) -> str:
    text = str(answer).strip().lower().rstrip(".")
    if text not in YES_NO:
        raise ValueError(f"C-VQA boolean answer {answer!r} is not yes or no.")
    return YES_NO[text]


def split_options(query: str) -> tuple[str, dict[str, str]]:
    """(question stem, {letter: option}) of a synthetic query; ValueError unless it offers A–D."""
    stem, found, tail = query.partition(SELECT)
    options = {letter: text.strip() for letter, text in _OPTION.findall(tail)} if found else {}
    if tuple(options) != SYNTHETIC_LETTERS:
        raise ValueError(f"C-VQA synthetic query does not end with '{SELECT}A:… B:… C:… D:…': {query!r}.")
    return stem.strip(), options


def answer_letter(answer: str, options: dict[str, str]) -> str:
    """The released answer's letter ("C", "(C)", "C:12" …)."""
    match = re.match(r"\W*([A-Za-z])\b", str(answer))
    letter = match.group(1).upper() if match else ""
    if letter not in options:
        raise ValueError(f"C-VQA synthetic answer {answer!r} is not one of {', '.join(options)}.")
    return letter


def synthetic_group(kind: str) -> str:
    template = int(kind.rsplit("_", 1)[1])
    return "flower_counting" if template <= 3 else "dot_counting"


# --- Answer parsing under the authors' rules (`format_response.py` / `calc_acc.py`, SPEC "Fidelity rules")

_AUTHORS_NUMBER_WORDS = {"no": 0, "zero": 0, "none": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                         "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_AUTHORS_NO = ("no", "false", "not")
_AUTHORS_YES = ("yes", "true", "be", "is", "are")


def _tokens(text: str) -> list[str]:
    """Lower-cased word tokens (`\\b\\w+\\b`), with commas kept as separators."""
    return re.findall(r"\b\w+\b|,", text.lower())


def authors_number(text) -> Parsed:
    """C-VQA's released numerical rule: if the first token is "if", read from the first comma on
    (no comma, or nothing after it: unparsed); otherwise, if "if" occurs, read only what comes before
    it; the answer is the first token that is all digits or one of no/zero/none (0), one…ten (1–10)."""
    if not str(text or "").strip():
        return Parsed(None, EMPTY)
    tokens = _tokens(str(text))
    if tokens[:1] == ["if"]:
        tokens = tokens[tokens.index(",") + 1:] if "," in tokens else []
    elif "if" in tokens:
        tokens = tokens[:tokens.index("if")]
    for token in tokens:
        if re.fullmatch(r"[0-9]+", token):
            return Parsed(int(token), OK)
        if token in _AUTHORS_NUMBER_WORDS:
            return Parsed(_AUTHORS_NUMBER_WORDS[token], OK)
    return Parsed(None, UNPARSED)


def authors_yes_no(text) -> Parsed:
    """C-VQA's released boolean rule: "no", "false" or "not" anywhere → no; else "yes", "true", "be",
    "is" or "are" anywhere → yes; else unparsed."""
    if not str(text or "").strip():
        return Parsed(None, EMPTY)
    words = set(_tokens(str(text)))
    if words.intersection(_AUTHORS_NO):
        return Parsed("no", OK)
    if words.intersection(_AUTHORS_YES):
        return Parsed("yes", OK)
    return Parsed(None, UNPARSED)


def authors_reading(request, text) -> Parsed:
    """C-VQA's released rules for numbers and yes/no; synthetic letters (no released rule) read strictly."""
    if request.answer_type == "number":
        return authors_number(text)
    if request.answer_type == "yes_no":
        return authors_yes_no(text)
    return named_parsers.strict(request, text)


# --- The benchmark ----------------------------------------------------------------------------

class CvqaBenchmark(Benchmark):
    slug = "cvqa"
    title = "C-VQA"
    variants = FORMS
    input_strategies = ("default",)
    prompting_strategies = ("standard", "cot", "dscp", "dscp_stage1")
    shuffles_options = True
    authors_parser = staticmethod(authors_reading)
    main_metrics = (
        MetricSpec("real.original_accuracy", "Real original"),
        MetricSpec("real.counterfactual_accuracy", "Real counterfactual"),
        MetricSpec("real.drop", "Real drop"),
        MetricSpec("synthetic.original_accuracy", "Synthetic original"),
        MetricSpec("synthetic.counterfactual_accuracy", "Synthetic counterfactual"),
        MetricSpec("synthetic.drop", "Synthetic drop"),
    )
    series = (
        SeriesSpec("real-original", "C-VQA-Real original accuracy per group", "real", "original_accuracy",
                   groups=("numerical_direct", "numerical_indirect", "boolean")),
        SeriesSpec("real-counterfactual", "C-VQA-Real counterfactual accuracy per group", "real",
                   "counterfactual_accuracy", groups=("numerical_direct", "numerical_indirect", "boolean")),
        SeriesSpec("synthetic-counterfactual", "C-VQA-Synthetic counterfactual accuracy per template",
                   "synthetic.templates", "counterfactual_accuracy"),
        SeriesSpec("synthetic-options", "C-VQA-Synthetic: share of each chosen option", "synthetic.option_distribution",
                   "", groups=("A", "B", "C", "D")),
        SeriesSpec("subgroups", "Drop (original − counterfactual) per subgroup", "subgroups", "diff"),
    )
    drill_rules = DrillRules(
        keyed={"templates": lambda r, o: f"abs_counting_{r.extra.get('template')}",
               "groups": lambda r, o: r.extra.get("group"), "subgroups": lambda r, o: r.extra.get("subgroup"),
               "option_distribution": lambda r, o: o.value if o.status in (CORRECT, WRONG) else None,
               "gold_distribution": lambda r, o: r.gold},
        segments={"real": extra_is("subset", "real"), "synthetic": extra_is("subset", "synthetic"),
                  "numerical_direct": extra_is("type", "direct"), "numerical_indirect": extra_is("type", "indirect"),
                  "boolean": extra_is("type", "boolean"), "subgroup_gap": lambda r, o: bool(r.extra.get("subgroup"))},
        leaves={**COUNT_LEAVES, "original_accuracy": extra_is("form", "original"),
                "counterfactual_accuracy": extra_is("form", "counterfactual")})
    consistency_views = {
        "forms": PairView("Original vs counterfactual question", "n", ("original", "counterfactual"),
                          lambda r: r.extra.get("form"), ("original", "counterfactual"),
                          ("original", "counterfactual")),
    }

    def request_category(self, request: EvalRequest) -> str:
        """Its group as the metrics name it (real: numerical_direct, numerical_indirect, boolean; synthetic: its
        template group)."""
        if request.extra.get("subset") == "real":
            return REAL_GROUPS.get(request.extra.get("type"), "")
        return str(request.extra.get("group") or "")

    def score(self, requests: list[EvalRequest], responses: dict, **models) -> dict:
        answers = {r.request_id: scoring.answer(r, responses.get(r.request_id)) for r in requests}
        subsets = scoring.group_by(requests, lambda r: r.extra["subset"])
        metrics: dict = {}
        if "real" in subsets:
            metrics["real"] = drop_block(subsets["real"], answers)
            for kind, found in scoring.group_by(subsets["real"], lambda r: r.extra["type"]).items():
                metrics["real"][REAL_GROUPS[kind]] = drop_block(found, answers)
        if "synthetic" in subsets:
            metrics["synthetic"] = synthetic_metrics(subsets["synthetic"], answers)
        subgroups = scoring.group_by(requests, lambda r: r.extra.get("subgroup"))
        if subgroups:
            metrics["subgroups"], metrics["subgroup_gap"] = subgroup_metrics(subgroups, answers)
        given = [a for a in answers.values() if not a.missing]
        metrics["unparsed_rate"] = scoring.fraction(sum(a.unparsed for a in given), len(given))
        metrics["n"] = len({r.item_id for r in requests})
        return metrics

    def requests(self, item, options: RequestOptions) -> list[EvalRequest]:
        self.resolve_input_strategy(options)
        self.check_prompting(options)
        subset = item.payload.get("kind")
        if subset not in ("real", "synthetic"):
            raise ValueError(f"C-VQA item {item.external_id!r} has unknown kind {subset!r}.")
        image = media_input(media_links(item), "image", "image")
        subgroup = ("payload", item.payload["subgroup"]) if item.payload.get("subgroup") else (
            "label", label_of(image.asset_id))
        return [self._request(item, form, subset, image, options, subgroup) for form in FORMS]

    def _request(self, item, form: str, subset: str, image, options: RequestOptions,
                 subgroup: tuple[str, str]) -> EvalRequest:
        payload = item.payload
        question_field, answer_field = FIELDS[form]
        request_id = f"{item.external_id}:{form}"
        other = FORMS[1 - FORMS.index(form)]
        extra = {"subset": subset, "type": payload["type"], "form": form, "pair": f"{item.external_id}:{other}",
                 "source_answer": payload[answer_field]}
        if subgroup[1]:
            extra["subgroup"], extra["subgroup_from"] = subgroup[1], subgroup[0]
        fields = {}
        if subset == "real":
            extra["group"] = payload["type"]
            question = payload[question_field]
            if payload["type"] == "boolean":
                fields = {"gold": yes_no(payload[answer_field]), "answer_type": "yes_no"}
            else:
                fields = {"gold": number(payload[answer_field]), "answer_type": "number"}
        else:
            extra["group"] = synthetic_group(payload["type"])
            question, fields = self._synthetic(payload[question_field], payload[answer_field], request_id,
                                               options, extra)
        prompt, context_prompt = prompting.apply(question + ANSWER_INSTRUCTION, options.prompting)
        return EvalRequest(request_id=request_id, item_id=item.external_id, variant=form, text=question,
                           prompt=prompt, context_prompt=context_prompt, media=[image], extra=extra,
                           source=dict(payload), **fields)

    @staticmethod
    def _synthetic(query: str, answer: str, request_id: str, options: RequestOptions,
                   extra: dict) -> tuple[str, dict]:
        """(question text, request fields) of a synthetic query: the query as released under the
        release order, else rewritten with its options in the drawn order."""
        stem, released = split_options(query)
        letters = list(released)
        order = options.option_order
        shown = ordered_options(list(released.values()), letters.index(answer_letter(answer, released)),
                                order, request_id)
        extra.update({"template": int(extra["type"].rsplit("_", 1)[1]), "source_options": released,
                      **option_extra(shown, order), "seed": options.seed})
        if option_order_seed(order) is not None:
            query = f"{stem} {SELECT}" + "  ".join(f"{letter}:{text}" for letter, text in shown.options.items())
        return query, {"options": shown.options, "gold": shown.gold, "answer_type": "letter"}


# --- Scoring ---------------------------------------------------------------------------------------

def drop_block(requests: list[EvalRequest], answers: dict) -> dict:
    """Original and counterfactual accuracy of a group of items, and the drop between them."""
    forms = {form: scoring.accuracy_group([answers[r.request_id] for r in requests if r.extra["form"] == form])
             for form in FORMS}
    original, counterfactual = forms["original"]["accuracy"], forms["counterfactual"]["accuracy"]
    drop = original - counterfactual if original is not None and counterfactual is not None else None
    return {"original_accuracy": original, "counterfactual_accuracy": counterfactual, "drop": drop,
            "n": len({r.item_id for r in requests}), **forms}


def letter_shares(letters: list[str]) -> dict:
    shares = {letter: scoring.fraction(letters.count(letter), len(letters)) for letter in SYNTHETIC_LETTERS}
    return {**shares, "n": len(letters)}


def synthetic_metrics(requests: list[EvalRequest], answers: dict) -> dict:
    block = drop_block(requests, answers)
    block["templates"] = {f"abs_counting_{template}": drop_block(found, answers) for template, found in
                          sorted(scoring.group_by(requests, lambda r: r.extra["template"]).items())}
    block["groups"] = {group: drop_block(found, answers)
                       for group, found in scoring.group_by(requests, lambda r: r.extra["group"]).items()}
    chosen = [answers[r.request_id].value for r in requests if answers[r.request_id].status == "ok"]
    block["option_distribution"] = letter_shares(chosen)
    block["gold_distribution"] = letter_shares([r.gold for r in requests])
    return block


def subgroup_metrics(subgroups: dict, answers: dict) -> tuple[dict, dict | None]:
    """§4.3: diff(g) = original − counterfactual accuracy per subgroup; the gap between the largest and
    the smallest diff (None with fewer than two subgroups)."""
    blocks = {name: drop_block(found, answers) for name, found in sorted(subgroups.items())}
    for block in blocks.values():
        block["diff"] = block["drop"]
    diffs = {name: block["diff"] for name, block in blocks.items() if block["diff"] is not None}
    gap = None
    if len(diffs) >= 2:
        high, low = max(diffs, key=diffs.get), min(diffs, key=diffs.get)
        gap = {"gap": diffs[high] - diffs[low], "largest_diff": high, "smallest_diff": low}
    return blocks, gap


BENCHMARK = benchmarks.register(CvqaBenchmark())
