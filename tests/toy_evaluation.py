"""ToyVQA as it is evaluated: a sixth benchmark's evaluation module written outside
`evaluation/benchmarks/`, as `evaluation/benchmarks/toyvqa/benchmark.py` would be.

One variant, `yes_no`: the model sees the picture and answers the question with yes or no. Answers
are read by the strict parser (the benchmark declares no authors' parser). Metrics: `yes_no`
(accuracy, with n, correct, missing and unparsed; missing and unparsed answers count as wrong) and
`by_answer` (the same per gold answer), shown on the results pages as the leaderboard column
"Yes/no accuracy" and the series "Accuracy per gold answer".

Importing this module registers the benchmark (`register`), as `discover` would for a package of
`evaluation/benchmarks/`; `unregister(SLUG)` forgets it again.
"""

from __future__ import annotations

from evaluation import benchmarks, prompting, scoring
from evaluation.benchmarks.base import Benchmark, EvalRequest, RequestOptions, media_input, media_links
from evaluation.results.drilldown import COUNT_LEAVES, DrillRules
from evaluation.results.specs import MetricSpec, SeriesSpec

SLUG = "toyvqa"
VARIANT = "yes_no"
INSTRUCTION = "Answer with yes or no."
ANSWER_LABELS = {"yes": "Gold answer yes", "no": "Gold answer no"}


class ToyVqaBenchmark(Benchmark):
    slug = SLUG
    title = "ToyVQA"
    variants = (VARIANT,)
    main_metrics = (MetricSpec(f"{VARIANT}.accuracy", "Yes/no accuracy"),)
    series = (SeriesSpec("answer-accuracy", "Accuracy per gold answer", "by_answer", "accuracy",
                         labels=ANSWER_LABELS),)
    drill_rules = DrillRules(keyed={"by_answer": lambda request, outcome: request.gold},
                             leaves=dict(COUNT_LEAVES))

    def requests(self, item, options: RequestOptions) -> list[EvalRequest]:
        self.resolve_input_strategy(options)
        self.check_prompting(options)
        payload = item.payload
        prompt, context_prompt = prompting.apply(f"{payload['question']}\n{INSTRUCTION}", options.prompting)
        return [EvalRequest(
            request_id=f"{item.external_id}:{VARIANT}", item_id=item.external_id, variant=VARIANT,
            text=payload["question"], prompt=prompt, context_prompt=context_prompt,
            media=[media_input(media_links(item), "image", "image")], gold=payload["answer"],
            answer_type="yes_no", source=dict(payload))]

    def score(self, requests: list[EvalRequest], responses: dict, **models) -> dict:
        def group(found):
            return scoring.accuracy_group([scoring.answer(r, responses.get(r.request_id)) for r in found])

        return {VARIANT: group(requests),
                "by_answer": {gold: group(found) for gold, found in
                              scoring.group_by(requests, lambda r: r.gold).items()}}


BENCHMARK = benchmarks.register(ToyVqaBenchmark())
