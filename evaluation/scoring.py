"""What every benchmark's scorer shares: predictions gathered per request and sample, parsed answers
scored against the gold, missing predictions, groups that carry their `n`, and model-based metrics
reported as not computed when their model (or the judgments) are not there.

Both ways of scoring feed the same plain data to `Benchmark.score(requests, responses, **models)`:
- a predictions file (`read_predictions`): one JSON object a line with `request_id`, `response`
  (raw text), optional `sample` (index, default 0) and `judgment` (a precomputed verdict, in the
  form the benchmark's judge returns);
- a stored run (`run_predictions`): its `Prediction` rows; rows that failed count as missing.
`responses` maps a request id to its `Response`s in sample order; a request without any is
*missing*: it counts as wrong everywhere and is reported.

Rules kept by every scorer:
- discrete answers (letters, yes/no, numbers, 1/2, scores) are read from the first sample (lowest
  index) with the chosen named parser (`evaluation.named_parsers`: `authors` by default, `strict`):
  `collect` stores each response's reading in `Response.parsed`; a response built without one is
  read strictly (`evaluation.answer_parsing`); an empty or unparsed answer is wrong and counted;
- a rate is a fraction in [0, 1] and None when its group is empty; every group has its `n`;
- judge-based metrics come from each response's `judgment` or, when there is none, from a `judge`
  callable `judge(request, response_text) -> judgment` (the hook for `evaluation.judges`). If an
  answered response has neither, the metric is `{"computed": false, "reason": …}`, never a zero.

`parse_prediction(prediction, request, benchmark_slug)` fills `Prediction.parsed_answer` /
`parse_status` (the default parser's reading) and `Prediction.parses` (every reading, by parser name)
wherever predictions are written; `score_predictions` is the entry point of `manage.py score`: its
`predictions` summary records the `parser` and `parser_disagreements` (how many responses `authors`
and `strict` read differently).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from evaluation import answer_parsing, benchmarks, jsonl, judge_references, named_parsers, reasoning

MISSING = "missing"
UNKNOWN_SHOWN = 20  # unknown request ids listed in the report (all are counted)

Judge = Callable[[Any, str], dict]


@dataclass
class Response:
    text: str | None
    sample: int = 0
    judgment: dict | None = None
    parsed: answer_parsing.Parsed | None = None  # the reading of the parser chosen for scoring (see `collect`)


@dataclass
class Collected:
    responses: dict[str, list[Response]]  # request id → responses in sample order (only requests that have some)
    unknown: list[str] = field(default_factory=list)  # request ids of predictions that match no request


# --- Reading predictions ----------------------------------------------------------------------

def _prediction(record, where: str) -> dict:
    if not isinstance(record, dict):
        raise ValueError(f"{where}: a prediction must be a JSON object.")
    request_id = record.get("request_id")
    if not isinstance(request_id, str) or not request_id:
        raise ValueError(f"{where}: `request_id` must be a non-empty string.")
    response = record.get("response")
    if response is not None and not isinstance(response, str):
        raise ValueError(f"{where}: `response` must be a string (the model's raw text).")
    sample = record.get("sample", 0)
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise ValueError(f"{where}: `sample` must be a non-negative integer.")
    judgment = record.get("judgment")
    if judgment is not None and not isinstance(judgment, dict):
        raise ValueError(f"{where}: `judgment` must be a JSON object.")
    return {"request_id": request_id, "response": response, "sample": sample, "judgment": judgment}


def iter_predictions(lines: Iterable[str], source: str = "predictions") -> Iterator[dict]:
    """Predictions from JSON lines one at a time, as they are read (blank lines skipped); ValueError naming
    the line of a bad one when the reading reaches it."""
    for where, record in jsonl.records(lines, source, keep_nul=True):  # model text: cleaned where it is stored
        yield _prediction(record, where)


def read_predictions(lines: Iterable[str], source: str = "predictions") -> list[dict]:
    """Predictions from JSON lines (blank lines skipped); ValueError naming the line of a bad one."""
    return list(iter_predictions(lines, source))


def run_predictions(run, verdicts: dict | None = None) -> list[dict]:
    """A stored run's predictions in the same form; rows that failed are left out (their requests are missing).
    `verdicts` ((request id, sample) → verdict, e.g. `judges.verdicts_for_run`) fills in stored judgments."""
    verdicts = verdicts or {}
    rows = run.predictions.filter(error="").values_list("request_id", "sample_index", "raw_output")
    return [{"request_id": rid, "sample": sample, "response": text, "judgment": verdicts.get((rid, sample))}
            for rid, sample, text in rows]


def collect(requests, predictions: Iterable[dict], read: named_parsers.Reader | None = None) -> Collected:
    """Responses per request, in sample order, each read by `read` (`named_parsers.reader`) when given;
    ValueError when a (request, sample) comes twice."""
    known = {request.request_id: request for request in requests}
    responses: dict[str, list[Response]] = {}
    unknown: list[str] = []
    seen: set[tuple[str, int]] = set()
    for prediction in predictions:
        request_id, sample = prediction["request_id"], prediction.get("sample", 0)
        if (request_id, sample) in seen:
            raise ValueError(f"Two predictions for request {request_id!r} sample {sample}.")
        seen.add((request_id, sample))
        if request_id not in known:
            unknown.append(request_id)
            continue
        text = prediction.get("response")
        parsed = read(known[request_id], text) if read is not None else None
        responses.setdefault(request_id, []).append(Response(text, sample, prediction.get("judgment"), parsed))
    for found in responses.values():
        found.sort(key=lambda response: response.sample)
    return Collected(responses, sorted(set(unknown)))


# --- Parsing for the runner -------------------------------------------------------------------

def parse_prediction(prediction, request, benchmark_slug: str, names: Iterable[str] = (named_parsers.DEFAULT,)):
    """Fill a `Prediction`'s readings of its raw output (not saved): `parses[name]` for every parser
    named (and the default one), and `parsed_answer` / `parse_status` with the default parser's
    reading. Failed rows, which have no output, are left as they are."""
    if getattr(prediction, "error", ""):
        return prediction
    stored = dict(prediction.parses or {})
    for name in dict.fromkeys((named_parsers.DEFAULT, *names)):
        stored[name] = named_parsers.reading(named_parsers.parse(benchmark_slug, request, prediction.raw_output, name))
    prediction.parses = stored
    default = stored[named_parsers.DEFAULT]
    prediction.parsed_answer, prediction.parse_status = default["value"], default["status"]
    return prediction


# --- Discrete answers -------------------------------------------------------------------------

@dataclass
class Answer:
    """The scored answer of one request: status ok | unparsed | empty | missing."""

    status: str
    value: Any = None
    correct: bool = False

    @property
    def missing(self) -> bool:
        return self.status == MISSING

    @property
    def unparsed(self) -> bool:
        return self.status in (answer_parsing.UNPARSED, answer_parsing.EMPTY)


def first_response(responses: list[Response] | None) -> Response | None:
    return responses[0] if responses else None


def matches_gold(request, value) -> bool:
    """Whether a parsed value is the request's gold (letters, yes/no, numbers, 1/2)."""
    if value is None or request.gold is None:
        return False
    if request.answer_type == "letter":
        return str(value).upper() == str(request.gold).upper()
    if request.answer_type == "yes_no":
        return str(value).lower() == str(request.gold).strip().lower()
    if request.answer_type in ("number", "choice_12"):
        try:
            return float(value) == float(request.gold)
        except (TypeError, ValueError):
            return False
    return value == request.gold


def answer(request, responses: list[Response] | None) -> Answer:
    response = first_response(responses)
    if response is None:
        return Answer(MISSING)
    parsed = response.parsed
    if parsed is None:
        parsed = answer_parsing.parse_for_request(request, response.text)
    return Answer(parsed.status, parsed.value, parsed.ok and matches_gold(request, parsed.value))


def first_text(responses: list[Response] | None) -> str | None:
    response = first_response(responses)
    return response.text if response is not None else None


def texts(responses: list[Response] | None) -> list[str]:
    """The non-empty response texts of a request, in sample order."""
    return [r.text.strip() for r in responses or [] if r.text and r.text.strip()]


def group_by(requests, key: Callable) -> dict:
    """key → requests with that key, in order (requests whose key is None are left out)."""
    groups: dict = {}
    for request in requests:
        value = key(request)
        if value is not None:
            groups.setdefault(value, []).append(request)
    return groups


def fraction(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def mean(values) -> float | None:
    values = [value for value in values if value is not None]
    return sum(values) / len(values) if values else None


def accuracy_group(answers: list[Answer]) -> dict:
    """accuracy (missing and unparsed count as wrong), n, correct, missing, unparsed and the unparsed
    rate (share of the responses given that could not be parsed, empty ones included)."""
    n = len(answers)
    correct = sum(a.correct for a in answers)
    missing = sum(a.missing for a in answers)
    unparsed = sum(a.unparsed for a in answers)
    return {"accuracy": fraction(correct, n), "n": n, "correct": correct, "missing": missing,
            "unparsed": unparsed, "unparsed_rate": fraction(unparsed, n - missing)}


def not_computed(reason: str) -> dict:
    return {"computed": False, "reason": reason}


def is_not_computed(value) -> bool:
    return isinstance(value, dict) and value.get("computed") is False


# --- Judgments ----------------------------------------------------------------------------------

NO_JUDGE = "no judge model was given and {missing} of {total} answered responses have no precomputed judgment"


def judgments(pairs: list[tuple[Any, Response | None]], judge: Judge | None) -> tuple[list[dict | None], str]:
    """A verdict per (request, response): the response's own `judgment`, else the judge's (asked in
    one batch through `judge.judge_many` when it has one); None for a missing response. The second
    value is '' or the reason the verdicts are incomplete."""
    verdicts: list[dict | None] = [None if response is None else response.judgment for _, response in pairs]
    asked = [i for i, (_, response) in enumerate(pairs) if response is not None and response.judgment is None]
    if asked and judge is not None:
        questions = [(pairs[i][0], pairs[i][1].text or "") for i in asked]
        many = getattr(judge, "judge_many", None)
        answers = many(questions) if many is not None else [judge(request, text) for request, text in questions]
        for i, verdict in zip(asked, answers, strict=True):
            verdicts[i] = verdict
    answered = [i for i, (_, response) in enumerate(pairs) if response is not None]
    lacking = sum(verdicts[i] is None for i in answered)
    reason = NO_JUDGE.format(missing=lacking, total=len(answered)) if lacking else ""
    return verdicts, reason


# --- The requests of a version -----------------------------------------------------------------

def item_requests(version, options, variants=()) -> Iterator[tuple[Any, list]]:
    """(item, its requests) for every item of a version in id order, as the runner plans them
    (`options`: a `RequestOptions`; `variants`: only these, when given); ValueError for options
    the benchmark refuses or a request id made twice."""
    benchmark = benchmarks.get(version.benchmark.slug)
    unknown = sorted(set(variants) - set(benchmark.variants))
    if unknown:
        raise ValueError(f"{benchmark.slug} has no variant {', '.join(unknown)}; "
                         f"known: {', '.join(benchmark.variants)}.")
    seen: set[str] = set()
    for item in version.items.order_by("external_id").prefetch_related("media__video", "media__image"):
        made = [r for r in benchmark.requests(item, options) if not variants or r.variant in variants]
        for request in made:
            if request.request_id in seen:
                raise ValueError(f"The benchmark made two requests with the id {request.request_id!r}.")
            seen.add(request.request_id)
        yield item, judge_references.attach((item.pk, request) for request in made)


# --- The entry point --------------------------------------------------------------------------

def disagreeing(benchmark_slug: str, requests, responses: dict[str, list[Response]]) -> list[tuple]:
    """(request, response, authors' reading, strict reading) for every response the two parsers read
    differently (free-text answers never differ)."""
    found = []
    for request in requests:
        for response in responses.get(request.request_id, []):
            both = named_parsers.differs(benchmark_slug, request, response.text)
            if both is not None:
                found.append((request, response, *both))
    return found


def score_predictions(benchmark, requests, predictions: Iterable[dict], parser: str = named_parsers.DEFAULT,
                      **models) -> dict:
    """metrics.json for one benchmark under a named parser: the benchmark's metrics, and `predictions`
    (requests, answered, missing, the ids of predictions that match no request, the `parser` used,
    `parser_disagreements`: how many responses `authors` and `strict` read differently, and for requests
    asked with chain of thought `cot_reasoning`: how many responses hold any reasoning, `evaluation.reasoning`)."""
    collected = collect(requests, predictions, named_parsers.reader(benchmark.slug, parser))
    metrics = benchmark.score(requests, collected.responses, **models)
    answered = sum(1 for request in requests if collected.responses.get(request.request_id))
    summary = {"requests": len(requests), "answered": answered, "missing": len(requests) - answered,
               "unknown_requests": len(collected.unknown), "unknown_request_ids": collected.unknown[:UNKNOWN_SHOWN]}
    summary["parser"] = parser
    summary["parser_disagreements"] = len(disagreeing(benchmark.slug, requests, collected.responses))
    cot = reasoning.reasoning_rate(requests, collected.responses)
    if cot is not None:
        summary["cot_reasoning"] = cot
    return {"predictions": summary, **metrics}
