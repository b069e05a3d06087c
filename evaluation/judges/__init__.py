"""LLM judges of open answers: BlackSwan's LLM-Match, the CVRR-ES judge, MAIA's open-answer judge and
NL-EYE's explanation judge, on any text chat backend (a local `causal_lm`, a VLM through
`transformers`, or an OpenAI-compatible API through `openai`).

Each judge kind (`KINDS`) knows which requests it judges, the prompt of each call, how to read the
judge's answer, and how to fold its calls into the verdict the benchmark's scorer reads:

- `llm_match` (BlackSwan Gen variants, seeds/000 §5.1): one call per (reference, response) pair; the
  judge rates semantic similarity 1–5 and answers "Reason: …" / "Score: N". Defaults follow the
  authors: judge `meta-llama/Llama-3.1-8B-Instruct`, temperature 0.4, 100 new tokens (each can be
  overridden; what was used is recorded on every judgment). Prompt: the authors'
  `metric/llm_match_llama.py` (github.com/sahithyaravi/BlackSwan; the paper's Appendix C, which
  prints it, is not in seeds/000). Verdict: `{"scores": [N per reference that parsed], "reasons",
  "pairs", "unparsed"}`: a pair whose score cannot be read is left out of the average and counted.
- `cvrr` (seeds/003 §3.2 Stage 4): one call per answer with the question, the ground truth and the
  prediction; the judge answers a Python-dict string `{'pred': 'correct'|'incorrect', 'score': 0–5,
  'reason': …}`. Prompt: the authors' `Evaluation-Scripts/LLM_Judge_evaluation.py`
  (github.com/mbzuai-oryx/CVRR-Evaluation-Suite; the paper's Fig. 13 is not in seeds/003), system
  and user message word for word. Verdict: `{"pred", "score", "reason"}`; any `pred` string is kept
  as written (the scorer leaves verdicts other than correct/incorrect out of its denominator).
- `maia` (seeds/004 §4.2, App. B.2): one call per open answer with the question and all eight
  reference answers; correct iff semantically consistent with at least one of them. The paper's
  prompt (its Figure 5) is not in seeds/004, so the prompt below states that rule and asks for
  "Verdict: correct" or "Verdict: incorrect". Verdict: `{"correct": bool, "reason"}`.
- `nleye_explanation` (seeds/002 §4.3, App. C "Prompt of Auto Evaluation of Explanation", quoted
  word for word): the candidate explanation against the gold explanation and the validated human
  explanations, 0 (not logical), 1 (logical but different), 2 (logical and same as a gold one).
  The human explanations are the triplet payload's `human_explanations` (a list of texts: those
  at least one worker selected in the explanation vote) and the ones a curator approved after the
  version was frozen (`evaluation.judge_references`, carried by each request); each stored judgment
  records the references it compared with (`Judgment.references`). The candidate is the whole
  response (its choice and explanation); only correct predictions are judged (§5.1).
  Verdict: `{"label": 0|1|2}`.

Reading a verdict never guesses: every parser finds the answer in the form the prompt asked for
(plus a few unambiguous spellings of it); text that names no answer, or two different ones, is
`unparsed`, stored with its raw text and counted. An empty response is not sent to the judge: it
gets the verdict of a wrong answer (`empty_verdict`).

Calls go through the response cache (`evaluation.cache`, keyed over judge model, resolved revision,
backend, messages and parameters; greedy by default, so verdicts are cached), in batches.

Entry points:
- `judge_run(run, kind, spec, batch_size=…)` judges every prediction of a run the kind applies to and
  stores `Judgment` rows with their provenance (prompt, judge model and resolved revision, backend,
  parameters, raw verdict); resumable: judged (prediction, reference) pairs are skipped, failed
  calls are retried. `verdicts_for_run` folds the stored rows into scorer verdicts.
- `for_benchmark(slug, model, …)` → a `Judge`, the callable `judge(request, response_text) -> verdict`
  that `evaluation.scoring` calls (`manage.py score --judge-model`); `Judge.judge_many` batches;
  `judge_texts(judge, response, references, …)` judges plain texts.
- `agreement_report` / `run_agreement`: judge-vs-human Cohen's kappa and accuracy.

Which benchmark a kind judges is the benchmark's own declaration (`Benchmark.judge_kinds` in
`evaluation.benchmarks.<slug>`); `kind_for_benchmark(slug)` is the kind its scorer uses.

Layout: `base` (parse statuses, `JudgeError`, `Case`, `Reading`, `JudgeKind`), one module per kind with
its prompt and parser (BlackSwanSuite's LLM-Match, CVRR-ES's, MAIA's and NL-EYE's in
`evaluation.benchmarks.<slug>.judge`; each registers its kind in `evaluation.judge_registry`), `kinds` (the kinds by
name and by benchmark), `spec` (the judge model: `split_model`, `judge_spec`, `registered_judge`,
`registered_spec`, `judge_params`), `judge` (`Judge`, `for_benchmark`, `judge_texts`), `runs` (stored judgments
of a run) and `agreement` (judge vs people). Every name is re-exported here.
"""

from evaluation.benchmarks.blackswan.judge import (
    LLM_MATCH_MODEL,
    LLM_MATCH_PARAMS,
    LLM_MATCH_PROMPT,
    LLM_MATCH_RANGE,
    LlmMatch,
)
from evaluation.benchmarks.cvrr.judge import CVRR_SCORE_RANGE, CVRR_SYSTEM, CVRR_USER, CvrrJudge
from evaluation.benchmarks.maia.judge import MAIA_PROMPT, MaiaJudge
from evaluation.benchmarks.nleye.judge import (
    NLEYE_LABELS,
    NLEYE_PROMPT,
    NLEYE_VALID,
    NleyeExplanationJudge,
    nleye_reference_sources,
    nleye_references,
)
from evaluation.judges.agreement import (
    AgreementReport,
    agreement_report,
    human_key,
    read_human_verdicts,
    run_agreement,
)
from evaluation.judges.base import (
    CHAT_BACKENDS,
    CHOICES,
    DECODINGS,
    DEFAULT_BACKEND,
    DEFAULT_MAX_NEW_TOKENS,
    EMPTY,
    FAILED,
    FREE,
    OK,
    UNPARSED,
    Case,
    JudgeError,
    JudgeKind,
    Reading,
)
from evaluation.judges.judge import (
    DEFAULT_MODEL,
    Answered,
    Judge,
    JudgeStats,
    default_model,
    for_benchmark,
    judge_texts,
    logger,
    with_defaults,
)
from evaluation.judges.kinds import KINDS, get_kind, judged_benchmarks, kind_for_benchmark
from evaluation.judges.runs import call_fields, judge_run, judgment_counts, run_judgments, verdicts_for_run
from evaluation.judges.spec import judge_params, judge_spec, registered_judge, registered_spec, split_model

__all__ = [
    "CHOICES", "DECODINGS", "FREE",
    "logger", "OK", "UNPARSED", "FAILED", "EMPTY", "CHAT_BACKENDS", "DEFAULT_BACKEND", "DEFAULT_MAX_NEW_TOKENS",
    "JudgeError", "Case", "Reading", "JudgeKind", "LLM_MATCH_PROMPT", "LLM_MATCH_RANGE", "LlmMatch", "CVRR_SYSTEM",
    "CVRR_USER", "CVRR_SCORE_RANGE", "CvrrJudge", "MAIA_PROMPT", "MaiaJudge", "NLEYE_PROMPT", "NLEYE_LABELS",
    "NLEYE_VALID", "nleye_references", "nleye_reference_sources", "NleyeExplanationJudge", "KINDS", "get_kind",
    "kind_for_benchmark", "judged_benchmarks",
    "split_model", "judge_spec", "registered_judge", "registered_spec", "judge_params",
    "JudgeStats", "Answered", "Judge", "for_benchmark", "judge_texts",
    "DEFAULT_MODEL", "default_model", "with_defaults", "LLM_MATCH_MODEL", "LLM_MATCH_PARAMS",
    "judge_run", "call_fields", "run_judgments", "judgment_counts", "verdicts_for_run", "human_key", "AgreementReport",
    "agreement_report", "run_agreement", "read_human_verdicts",
]
