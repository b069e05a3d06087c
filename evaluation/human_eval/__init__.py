"""Human evaluation through the crowd engine, with results shaped to sit beside the models'.

Three kinds of study, each an ordinary form study of `annotation.crowd` (claims, drafts, submissions,
review), made from evaluation runs or from a frozen version's own requests:

- **Rating** of BlackSwan's generated responses (seeds/000 §5.1, SPEC §1 "Human rating"):
  `create_rating_study(runs, …)`, one item per prediction of the Gen variants, showing the task's
  question, the reference(s), the response and the item's video; the form asks Correctness,
  Depth/Thoughtfulness and Level of Detail (1–5, labelled ends) and Visual Entailment (0/1).
  `sample` draws that many questions per variant (seeded), the same questions for every run, so the
  models are rated on the same ground; by default each question's first response is rated
  (`all_samples` rates all three of Forecaster/Detective). `rating_results(study or run)`: per run
  and variant (and per run over its variants) the mean of each scale, with n (responses rated,
  ratings) and Krippendorff's alpha per scale (ordinal for the 1–5 scales, nominal for 0/1). A
  response's mean over its raters counts once, so a response with more raters weighs no more.
- **Explanation voting** for NL-EYE (`VOTE`): people vote on which of runs' explanations are valid; the study
  kind lives with its benchmark, in `evaluation.benchmarks.nleye.explanation_votes`, and registers itself
  (`register_kind`) when that package is discovered.
- **Human baseline**: `create_human_baseline_study(version, variants, …)`, people answer the
  benchmark's own requests (as `scoring.item_requests` plans them, the prompt the models get) with a
  form built from the request: options → a single choice (letters with their texts, yes/no,
  hypothesis 1/2, a 1–10 score), counts → a short text. NL-EYE triplets also ask for an explanation,
  the certainty, and each hypothesis's likelihood 1–5 given the premise (App. E.2). `sample` draws
  benchmark items, so every request of a drawn item is asked (both hypothesis orders, all eight
  statement pairs of a MAIA question). `human_baseline_results(studies)`: one answer per request —
  the majority answer of its annotators (a tie goes to the answer given first; 1–10 scores take the
  lower median instead, being ordinal) — scored by the benchmark's own scorer over the requests the
  study asked, so the Human row has the same metrics as a model's. An item is scored once every one
  of its asked requests has an answer (until then it waits), so joined metrics stay whole.
  Majority, because the scorers' metrics join requests (NL-EYE consistency across both orders, MAIA
  pools, C-VQA drops) and need one answer per request, and the papers' human figures are the crowd's
  answer per question. The per-annotator accuracy averaged over annotators is reported beside it,
  with the share of unanimous requests and Krippendorff's alpha.
  Open-ended requests (answer type `free`: CVRR-ES `qa`, MAIA `oevqa`; seeds/003 Table 2's human
  column) are answered in free text (`FREE_ANSWER_LENGTH` characters, the media shown, the reference
  never), and only when the benchmark's judge kind judges every one of them; the study records that
  kind (`JUDGE_KIND`). Their answers are scored by that judge exactly as model answers are
  (`answer_judgments.judge_answers`: stored `HumanAnswerJudgment` rows with the prompt, judge model,
  revision, parameters and decoding; `manage.py human_eval judge`, or the results page's job). A
  request's answer is then its annotators' majority *verdict* (a tie goes to the answer given
  first), whose verdict the scorer reads; the judge model is the one that judged most answers. Until
  every answer of a scored request is judged its verdict is missing and the judged metrics are not
  computed (with the count of unjudged answers), as for a run. Per-annotator accuracy counts their
  answers judged correct among those judged correct or incorrect; alpha is over the judge labels.
  People's own verdicts on judged answers, and the judge's agreement with them, are in
  `evaluation.human_verdicts`.
  `subset` asks only the requests of a named subset of the version (`evaluation.subsets`); requests
  that show parts of a video are shown as the benchmark's clip of just those parts (`Benchmark.human_clip`)
  or left out. Model-based metrics of people's answers (BlackSwan's CLIP score) are computed by
  `score_human_baseline` and kept (`HumanBaselineMetric`) while the answers stay the same.
- **Human performance** (`performance`): a paper's expert baseline over a named subset (BlackSwanSuite:
  150 questions per MCQ and Y/N task, one expert, optionally gated by a qualification) and written
  answers for a sample of videos (20), from `Benchmark.human_performance`.

What counts: submissions on regular items that were approved or not sampled for review, read through
`final_data` (a reviewer's correction wins). Rejected ones are left out; those awaiting an expert are
counted apart (`pending`) and left out until decided.

Where things are recorded: a study's `form_schema["human_eval"]` names its kind, benchmark, version,
runs and drawing parameters; each item's `answer_key["source"]` (never sent to workers) names the
run, prediction, request and sample behind it, so raters stay blind to which model wrote what, and
`StudyItem.benchmark_item` links the frozen item.

Each kind registers how its results are read, and for one made over runs how it is made, with
`register_kind(name, results=…, create=…)`; `study_kind(name)` gives it (the results pages, the results
page's actions and `manage.py human_eval` go through it), `results_for(study)` reads any study's results.

Only curators and admins create these studies (`PermissionDenied` otherwise).
"""

from evaluation.human_eval.answer_judgments import (
    FREE_TYPES,
    JUDGE_KIND,
    HumanAnswer,
    answer_verdicts,
    answers_of,
    chosen_judge,
    judge_answers,
    judge_kind_of,
    judge_version,
    judged_studies,
    version_of,
)
from evaluation.human_eval.base import (
    ANSWER,
    BASELINE,
    COUNTED_REVIEW,
    META,
    RATING,
    SOURCE,
    STUDY_MAKERS,
    VOTE,
    VOTE_FIELD,
    HumanEvalError,
    HumanStudy,
    StudyKind,
    counted_submissions,
    kind_of,
    meta_of,
    register_kind,
    require_study_maker,
    studies_of,
    study_kind,
)
from evaluation.human_eval.canvases import canvas_image
from evaluation.human_eval.human_baselines import (
    BASELINE_INSTRUCTIONS,
    CHOICE_TYPES,
    CROWD,
    FREE_ANSWER_LENGTH,
    FREE_INSTRUCTIONS,
    LIKELIHOOD_FIELDS,
    SCORE_ANCHORS,
    TEXT_TYPES,
    aggregate,
    answers_state,
    baseline_form,
    baseline_groups,
    choices_for,
    create_human_baseline_study,
    gold_explanations,
    human_baseline_results,
    per_annotator,
    score_human_baseline,
)
from evaluation.human_eval.performance import (
    EXPERT,
    WRITTEN,
    create_expert_baseline,
    create_written_baseline,
)
from evaluation.human_eval.ratings import (
    ENTAILMENT,
    ENTAILMENT_OPTIONS,
    GEN_VARIANTS,
    RATING_INSTRUCTIONS,
    SCALE_NAMES,
    SCALES,
    TASK_LABELS,
    create_rating_study,
    rating_form,
    rating_results,
)
from evaluation.human_eval.results import results_for

__all__ = [
    "META",
    "SOURCE",
    "RATING",
    "VOTE",
    "BASELINE",
    "COUNTED_REVIEW",
    "GEN_VARIANTS",
    "HumanEvalError",
    "HumanStudy",
    "STUDY_MAKERS",
    "require_study_maker",
    "kind_of",
    "meta_of",
    "studies_of",
    "counted_submissions",
    "canvas_image",
    "SCALES",
    "ENTAILMENT",
    "ENTAILMENT_OPTIONS",
    "SCALE_NAMES",
    "TASK_LABELS",
    "RATING_INSTRUCTIONS",
    "rating_form",
    "create_rating_study",
    "rating_results",
    "VOTE_FIELD",
    "StudyKind",
    "register_kind",
    "study_kind",
    "ANSWER",
    "CHOICE_TYPES",
    "TEXT_TYPES",
    "SCORE_ANCHORS",
    "LIKELIHOOD_FIELDS",
    "BASELINE_INSTRUCTIONS",
    "choices_for",
    "baseline_form",
    "create_human_baseline_study",
    "aggregate",
    "human_baseline_results",
    "gold_explanations",
    "per_annotator",
    "baseline_groups",
    "CROWD",
    "EXPERT",
    "WRITTEN",
    "answers_state",
    "score_human_baseline",
    "create_expert_baseline",
    "create_written_baseline",
    "results_for",
    "FREE_TYPES",
    "FREE_ANSWER_LENGTH",
    "FREE_INSTRUCTIONS",
    "JUDGE_KIND",
    "HumanAnswer",
    "answers_of",
    "judge_answers",
    "judge_version",
    "judged_studies",
    "judge_kind_of",
    "chosen_judge",
    "answer_verdicts",
    "version_of",
]
