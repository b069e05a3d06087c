"""BlackSwanSuite: what a model is asked about one video of an unexpected event (seeds/000, SPEC §1).

Items come in three kinds (`annotation.payloads`, the release layout of SPEC §1):

- `video`, one per video → `forecaster_gen`, `detective_gen`, `reporter_gen` (§3, §4.3). References
  (`gold`, a list of texts for CLIP score and LLM-Match): Forecaster the three step-1 hypotheses
  (`task1_gt`); Detective, per step-1 hypothesis, itself when step 2 validated it
  (`task2_checkboxes[i]` = "yes") or else the new step-2 hypothesis written in its place
  (`task2_gt[i]`); Reporter the step-3 caption (`task3_gt`). Forecaster and Detective draw three
  responses, Reporter one (§5.1).
- `mcq` (`mcq_task` 1 = Detective, 2 = Reporter; `mcq_options`, `mcq_label` 0–2) →
  `detective_mcq` / `reporter_mcq`. The three options are shown as A–C in the release's order
  (`mcq_options`; `gold` the letter of `mcq_label`), or, under the run's option order
  `shuffled:<seed>`, in an order drawn from (seed, request id) with `gold` the letter the correct
  option lands on; `extra` keeps the option strategy, the order, the seed and the release's label.
- `yn` (`def_task` 1 = Detective, 2 = Reporter; `exp` the hypothesis; `def_label` yes/no) →
  `detective_yn` / `reporter_yn`.

The split. `preevent`, `event` and `postevent` are read as the three cut points, in seconds within
the whole video, where V_pre, V_main and V_post begin: V_pre = [preevent, event),
V_main = [event, postevent), V_post = [postevent, end). `end` is an optional payload field, else
the video's probed duration. (The authors' splitter, App. B.1, cuts V_pre a little after the
start, V_main at 0.8 × the annotated failure time and V_post at 0.8 × the duration; their release
names the three cut clips by these fields, the platform's layout stores the cut times.)
An `mcq` or `yn` item may carry the split itself; otherwise it is read from the `video` item of the
same version whose `id` it names, as are the captions below and the hard-subset marks.

Media: every item links its whole video under role `video`; each request shows parts of it as
MediaInputs of roles `pre`, `main`, `post` with their segments. Forecaster shows [pre], Detective
[pre, main (hidden), post], Reporter [pre, main, post]. Input strategy `frames` (uniformly sampled
frames per part, the hidden part left out) or `video` (one clip, the hidden part rendered black,
the "Detective video" of SPEC §1); the runner does both from the same MediaInputs.

Prompting: `standard`, `cot`, `dscp`, `dscp_stage1` through `evaluation.prompting`; `plus_p` adds the
human captions of V_pre and V_post before the question, `plus_pc` also the human comparison of the
two (§7.1, Table 6). Optional payload fields (the authors' names): `pc_preevent`, `pc_postevent`,
`pc_comp`. +P/+PC is an ablation of what the model perceives of the parts it is shown alongside
V_post, so it applies to the Detective and Reporter variants; Forecaster is not asked under it (the
V_post caption would reveal the outcome). An item without the captions is refused.

Prompt texts: the paper's Appendix E is not part of seeds/000; the texts are those of the authors'
released evaluation scripts (github.com/sahithyaravi/BlackSwan, `inference/`): the multi-frame
wording used for GPT-4o for `frames`, the video-file wording used for LLaVA-Video for `video`, and
the +P/+PC sentences of their §7.1 scripts. Task questions (`text`) are the §3 questions.

Human performance (§5.2, `evaluation.human_eval.performance`): an expert answers 150 questions per MCQ
and Y/N variant, and people write the Gen answers for 20 videos, both drawn as named subsets of the
version and shown the `video` strategy's wording. People see one clip per request (`human_clip`), cut
by a finished `VideoSplit` of the item's video whose cuts match the item's: Forecaster V_pre only,
Detective the Detective clip (V_main blacked out), Reporter the whole clip; so a person answering a
Forecaster question never sees what follows V_pre. A video without such a split is left out.

Scoring (`BENCHMARK.score`, §5, §7.3): per MCQ and Y/N variant the accuracy with its unparsed rate
(an unparsed answer is wrong), for MCQ also over the hard and easy subsets and hard − easy (the Δ of
Table 8); per Gen variant the CLIP score (max over (response, reference) pairs per question, mean
over questions, with a CLIP model: the authors' is `CLIP_MODEL`; text encoder, truncation on,
cosine without ×100 scaling; the mean over all pairs is reported beside it) and LLM-Match (mean
judge score 1–5 over the pairs of a question, mean over questions, from judgments `{"score": n}` or
`{"scores": [n per reference]}`).
"""

from __future__ import annotations

from annotation.benchmarks.blackswan.staged import PART_FIELDS, part_starts
from annotation.models import BenchmarkItem, VideoSplit
from evaluation import answer_parsing, benchmarks, prompting, scoring, similarity
from evaluation.benchmarks.base import (
    Benchmark,
    EvalRequest,
    HumanPerformance,
    MediaInput,
    RequestOptions,
    ResultsSection,
    SectionMetric,
    media_links,
    option_extra,
    option_lines,
    ordered_options,
    results_sections_with,
)
from evaluation.benchmarks.blackswan.judge import LlmMatch
from evaluation.human_eval.base import RATING
from evaluation.results.drilldown import COUNT_LEAVES, DrillRules
from evaluation.results.specs import MetricSpec, SeriesSpec

TASK_BY_NUMBER = {1: "detective", 2: "reporter"}
CLIP_MODEL = similarity.CLIP_MODEL  # the authors' metric/clip_score.py (text encoder)
PARTS = ("pre", "main", "post")
SHOWN_PARTS = {"forecaster": ("pre",), "detective": PARTS, "reporter": PARTS}
HIDDEN_PARTS = {"detective": ("main",)}
N_SAMPLES = {"forecaster": 3, "detective": 3, "reporter": 1}
SPLIT_FIELDS = ("preevent", "event", "postevent")
CAPTION_FIELDS = ("pc_preevent", "pc_postevent")
COMPARISON_FIELD = "pc_comp"
PERCEPTION_STRATEGIES = ("plus_p", "plus_pc")
# the clip of a finished split a person sees for each task's request: only what the task shows
HUMAN_CLIPS = {"forecaster": "pre", "detective": "detective", "reporter": "full"}
SPLIT_TOLERANCE = 0.05  # seconds a split's cut may differ from the item's, when the split has no frame rate

# §3: the question each task asks
QUESTIONS = {
    "forecaster": "What happens next?",
    "detective": "What happened in the middle?",
    "reporter": "What is happening in the video?",
}

PROMPTS = {
    "frames": {
        ("forecaster", "gen"): "Given the initial frames of a video, generate a scenario for what could happen "
                               "next. Describe the sequence of actions leading to the outcome, in one sentence.",
        ("detective", "gen"): "You are given frames from the beginning and end of the video. What is most likely "
                              "happening in the middle of the video? Describe what actions could lead to the given "
                              "outcome, in one sentence.",
        ("reporter", "gen"): "You are given the frames of a video. What is happening in the video? Describe the "
                             "video in 1-2 sentences.",
        ("detective", "mcq"): "Given the frames from the beginning and the end of the video, what is most likely "
                              "happening in the middle of the video?\n{options}\nReturn the response in this "
                              "format:\nAnswer: Your choice e.g., 'A'.",
        ("reporter", "mcq"): "You are given frames of a video. Which of these descriptions correctly explains what "
                             "happens in this video?\n{options}\nReturn the response in this format:\nAnswer: Your "
                             "choice e.g., 'A'.",
        ("detective", "yn"): "Hypothesis: {hypothesis}\nGiven the video frames from the beginning and the end, does "
                             "this hypothesis hold? Only answer yes or no.",
        ("reporter", "yn"): "You are given frames of a video. Hypothesis: {hypothesis}\nGiven the video frames, "
                            "does this hypothesis hold? Only answer yes or no.",
    },
    "video": {
        ("forecaster", "gen"): "In one sentence, describe what could happen next, by explaining the sequence of "
                               "actions leading to the outcome.",
        ("detective", "gen"): "What happened in the missing frames (in black) of the video?",
        ("reporter", "gen"): "What is happening in the video? Explain the video in 1-2 sentences.",
        ("detective", "mcq"): "Which of the following descriptions indicate what happened in the hidden (black) "
                              "frames of the video?\n{options}",
        ("reporter", "mcq"): "Which of these descriptions correctly explains what happens in this video?\n{options}",
        ("detective", "yn"): "Hypothesis: {hypothesis}\nGiven the video clip, does this hypothesis hold? Answer yes "
                             "or no.",
        ("reporter", "yn"): "Hypothesis: {hypothesis}\nGiven the video clip, does this hypothesis hold? Answer yes "
                            "or no.",
    },
}


# --- Reading the release record ---------------------------------------------------------------

def is_valid_mark(mark) -> bool | None:
    """A valid/invalid checkbox as the release writes it ("yes"/"no", booleans, …); None if unknown."""
    if isinstance(mark, bool):
        return mark
    text = str(mark).strip().lower()
    if text in ("yes", "valid", "true", "1"):
        return True
    if text in ("no", "invalid", "false", "0"):
        return False
    return None


def _texts(values) -> list[str]:
    return [v.strip() for v in values or [] if isinstance(v, str) and v.strip()]


def detective_references(record: dict) -> list[str]:
    """Per step-1 hypothesis: itself if step 2 validated it, else the step-2 hypothesis replacing it."""
    firsts, news = record.get("task1_gt") or [], record.get("task2_gt") or []
    marks = record.get("task2_checkboxes") or []
    references = []
    for index, first in enumerate(firsts):
        new = news[index].strip() if index < len(news) and isinstance(news[index], str) else ""
        valid = is_valid_mark(marks[index]) if index < len(marks) else None
        references.append(first if valid is True else (new or first))
    return _texts(references)


def references(task: str, record: dict) -> list[str]:
    """The Gen references of a task (§4.3); ValueError when the record has none."""
    if task == "forecaster":
        found, field = _texts(record.get("task1_gt")), "task1_gt"
    elif task == "detective":
        found, field = detective_references(record), "task1_gt/task2_gt"
    else:
        found, field = _texts([record.get("task3_gt")]), "task3_gt"
    if not found:
        raise ValueError(f"BlackSwan video {record.get('id')!r} has no {task} references ({field}).")
    return found


def is_hard(record: dict) -> bool | None:
    """§7.3: every Detective hypothesis invalidated in Reporter; None when the record cannot tell."""
    marks = record.get("task3_checkboxes")
    if marks:
        return not any(is_valid_mark(mark) for mark in marks)
    if record.get("difficulty"):
        return record["difficulty"] == "hard"
    return None


def video_record(item) -> dict:
    """The item's payload, completed from its version's `video` item of the same `id` (mcq/yn rows)."""
    payload = item.payload
    if payload.get("kind") == "video" or item.version_id is None:
        return dict(payload)
    sibling = (BenchmarkItem.objects.filter(version_id=item.version_id, payload__kind="video",
                                            payload__id=payload.get("id"))
               .values_list("payload", flat=True).first())
    return {**(sibling or {}), **payload}


def split(record: dict, duration: float | None) -> dict[str, tuple[float, float]]:
    """part → (start, end) seconds, from the three cut points and the end of the video."""
    missing = [field for field in SPLIT_FIELDS if field not in record]
    if missing:
        raise ValueError(f"BlackSwan video {record.get('id')!r} has no split ({', '.join(missing)}), "
                         "neither on the item nor on a `video` item of its version.")
    end = record.get("end") or duration
    if not end:
        raise ValueError(f"BlackSwan video {record.get('id')!r}: the end of V_post is unknown "
                         "(link the probed video under role 'video', or give `end` in seconds).")
    cuts = [float(record[field]) for field in SPLIT_FIELDS] + [float(end)]
    if not all(a < b for a, b in zip(cuts, cuts[1:], strict=False)):
        raise ValueError(f"BlackSwan video {record.get('id')!r}: split times must increase "
                         f"(preevent < event < postevent < end), got {cuts}.")
    return {part: (cuts[i], cuts[i + 1]) for i, part in enumerate(PARTS)}


def perception_context(record: dict, strategy: str) -> str:
    """The +P / +PC sentences put before the question (§7.1); ValueError when the captions are missing."""
    fields = CAPTION_FIELDS + ((COMPARISON_FIELD,) if strategy == "plus_pc" else ())
    missing = [field for field in fields if not str(record.get(field) or "").strip()]
    if missing:
        raise ValueError(f"BlackSwan item for video {record.get('id')!r} cannot be asked with {strategy}: "
                         f"it has no human {', '.join(missing)}.")
    pre, post = (str(record[field]).strip().rstrip(".") for field in CAPTION_FIELDS)
    text = f"The beginning of the video shows {pre}. The end of the video shows {post}."
    if strategy == "plus_pc":
        text += f" The two parts differ in the following way: {str(record[COMPARISON_FIELD]).strip().rstrip('.')}."
    return text + "\n"


# --- The benchmark ----------------------------------------------------------------------------

class BlackSwanBenchmark(Benchmark):
    slug = "blackswan"
    title = "BlackSwan"
    variants = ("forecaster_gen", "detective_gen", "reporter_gen", "detective_mcq", "reporter_mcq",
                "detective_yn", "reporter_yn")
    input_strategies = ("frames", "video")
    prompting_strategies = ("standard", "cot", "dscp", "dscp_stage1", "plus_p", "plus_pc")
    scoring_models = ("clip", "judge")
    shuffles_options = True
    main_metrics = (
        MetricSpec("detective_mcq.accuracy", "Detective MCQ"),
        MetricSpec("reporter_mcq.accuracy", "Reporter MCQ"),
        MetricSpec("detective_yn.accuracy", "Detective Y/N"),
        MetricSpec("reporter_yn.accuracy", "Reporter Y/N"),
        MetricSpec("forecaster_gen.clip_score", "Forecaster CLIP", n="scored", rate=False),
        MetricSpec("detective_gen.clip_score", "Detective CLIP", n="scored", rate=False),
        MetricSpec("reporter_gen.clip_score", "Reporter CLIP", n="scored", rate=False),
        MetricSpec("forecaster_gen.llm_match", "Forecaster LLM-Match", n="llm_match_questions", rate=False),
        MetricSpec("detective_gen.llm_match", "Detective LLM-Match", n="llm_match_questions", rate=False),
        MetricSpec("reporter_gen.llm_match", "Reporter LLM-Match", n="llm_match_questions", rate=False),
    )
    series = (
        SeriesSpec("task-accuracy", "MCQ and Y/N accuracy per task", "", "accuracy",
                   groups=("detective_mcq", "reporter_mcq", "detective_yn", "reporter_yn")),
        SeriesSpec("mcq-difficulty", "MCQ accuracy on the hard and easy subsets", "", "accuracy",
                   groups=("detective_mcq.hard", "detective_mcq.easy", "reporter_mcq.hard", "reporter_mcq.easy")),
        SeriesSpec("gen-clip", "CLIP score per task", "", "clip_score",
                   groups=("forecaster_gen", "detective_gen", "reporter_gen"), rate=False),
        SeriesSpec("gen-llm-match", "LLM-Match (1–5) per task", "", "llm_match",
                   groups=("forecaster_gen", "detective_gen", "reporter_gen"), rate=False),
    )
    drill_rules = DrillRules(
        segments={"hard": lambda r, o: r.extra.get("hard") is True, "easy": lambda r, o: r.extra.get("hard") is False},
        leaves={**COUNT_LEAVES, "unknown_difficulty": lambda r, o: r.extra.get("hard") is None})
    judge_kinds = (LlmMatch.name,)
    human_evaluations = (RATING,)
    results_sections = results_sections_with(ResultsSection(
        "ratings", "Human ratings of generated responses",
        metrics=(SectionMetric("CLIP score", "{variant}.clip_score", rate=False, n="scored"),
                 SectionMetric("LLM-Match (1–5)", "{variant}.llm_match", rate=False, n="llm_match_questions")),
        note="Means of people's ratings (seeds/000 §5.1): each response's mean over its raters, then the mean over "
             "responses; approved and unsampled submissions only, rejected ones left out. Krippendorff's alpha per "
             "scale is in `manage.py human_eval results --study SLUG`."))
    human_performance = HumanPerformance(
        expert_variants=("detective_mcq", "reporter_mcq", "detective_yn", "reporter_yn"), expert_per_group=150,
        written_variants=("forecaster_gen", "detective_gen", "reporter_gen"), written_items=20,
        input_strategy="video")

    def human_clip(self, item, request: EvalRequest):
        """The clip of the item's video a person sees for `request` (the module docstring's "Human
        performance"): from the latest finished split whose cuts are the item's, else None."""
        wanted = HUMAN_CLIPS.get(request.extra.get("task"))
        video_ids = {medium.asset_id for medium in request.media}
        if wanted is None or len(video_ids) != 1 or None in video_ids:
            return None
        splits = (VideoSplit.objects.filter(video_id=video_ids.pop(), status=VideoSplit.Status.DONE)
                  .select_related("video", *PART_FIELDS.values()).order_by("-created_at", "-pk"))
        for split in splits:
            if _same_cuts(split, request):
                return getattr(split, PART_FIELDS[wanted])
        return None

    def score(self, requests: list[EvalRequest], responses: dict, **models) -> dict:
        """Accuracy per MCQ / Y/N variant (hard and easy subsets for MCQ), CLIP score and LLM-Match per
        Gen variant (the module docstring's "Scoring")."""
        metrics = {}
        for variant, found in scoring.group_by(requests, lambda r: r.variant).items():
            if variant.endswith("_gen"):
                metrics[variant] = score_generative(found, responses, clip=models.get("clip"),
                                                    judge=models.get("judge"))
            else:
                metrics[variant] = score_discrete(found, responses)
        return metrics

    def requests(self, item, options: RequestOptions) -> list[EvalRequest]:
        strategy = self.resolve_input_strategy(options)
        self.check_prompting(options)
        record = video_record(item)
        links = media_links(item)
        video = links.get("video")
        parts = split(record, video.video.duration if video is not None and video.video_id else None)
        asset_id = video.video_id if video is not None else None
        ask = _Asker(item, record, parts, asset_id, strategy, options)
        kind = item.payload.get("kind")
        if kind == "video":
            tasks = [task for task in ("forecaster", "detective", "reporter")
                     if not (task == "forecaster" and options.prompting in PERCEPTION_STRATEGIES)]
            return [ask.generative(task) for task in tasks]
        if kind == "mcq":
            return [ask.multiple_choice(TASK_BY_NUMBER[item.payload["mcq_task"]])]
        if kind == "yn":
            return [ask.yes_no(TASK_BY_NUMBER[item.payload["def_task"]])]
        raise ValueError(f"BlackSwan item {item.external_id!r} has unknown kind {kind!r}.")


def _same_cuts(split: VideoSplit, request: EvalRequest) -> bool:
    """Whether a split cuts where the request's parts meet (V_pre's end, V_post's start and so on; the
    video's own start and end may differ), within a frame."""
    try:
        starts = part_starts(split)
    except ValueError:
        return False
    fps = split.fps or (split.video.fps if split.video_id else None)
    tolerance = 1.0 / fps if fps else SPLIT_TOLERANCE
    bounds = {"pre": (None, starts["main"]), "main": (starts["main"], starts["post"]), "post": (starts["post"], None)}
    for medium in request.media:
        if medium.segment is None or medium.role not in bounds:
            return False
        for given, cut in zip(medium.segment, bounds[medium.role], strict=True):
            if cut is not None and abs(float(given) - cut) > tolerance:
                return False
    return True


class _Asker:
    """Builds the requests of one item under one run's options."""

    def __init__(self, item, record: dict, parts: dict, asset_id: int | None, strategy: str,
                 options: RequestOptions):
        self.item, self.record, self.parts, self.asset_id = item, record, parts, asset_id
        self.strategy, self.options = strategy, options

    def media(self, task: str) -> list[MediaInput]:
        hidden = HIDDEN_PARTS.get(task, ())
        return [MediaInput(role=part, kind="video", asset_id=self.asset_id, segment=self.parts[part],
                           hidden=part in hidden) for part in SHOWN_PARTS[task]]

    def prompt(self, body: str) -> tuple[str, str]:
        if self.options.prompting in PERCEPTION_STRATEGIES:
            body = perception_context(self.record, self.options.prompting) + body
        return prompting.apply(body, self.options.prompting)

    def request(self, task: str, form: str, body: str, **fields) -> EvalRequest:
        variant = f"{task}_{form}"
        prompt, context_prompt = self.prompt(body)
        extra = {"task": task, "format": form, "video_id": self.record.get("id"),
                 "input_strategy": self.strategy, "prompting": self.options.prompting,
                 "parts": list(SHOWN_PARTS[task]), "hidden_parts": list(HIDDEN_PARTS.get(task, ())),
                 "hard": is_hard(self.record), **fields.pop("extra", {})}
        return EvalRequest(request_id=f"{self.item.external_id}:{variant}", item_id=self.item.external_id,
                           variant=variant, prompt=prompt, context_prompt=context_prompt, media=self.media(task),
                           extra=extra, source=dict(self.item.payload), **fields)

    def generative(self, task: str) -> EvalRequest:
        return self.request(task, "gen", PROMPTS[self.strategy][(task, "gen")], text=QUESTIONS[task],
                            gold=references(task, self.record), n_samples=N_SAMPLES[task], answer_type="free")

    def multiple_choice(self, task: str) -> EvalRequest:
        payload = self.item.payload
        request_id = f"{self.item.external_id}:{task}_mcq"
        order = self.options.option_order
        shown = ordered_options(list(payload["mcq_options"]), payload["mcq_label"], order, request_id)
        body = PROMPTS[self.strategy][(task, "mcq")].format(options=option_lines(shown.options))
        return self.request(task, "mcq", body, text=QUESTIONS[task], options=shown.options, gold=shown.gold,
                            answer_type="letter",
                            extra={**option_extra(shown, order), "seed": self.options.seed,
                                   "source_label": payload["mcq_label"]})

    def yes_no(self, task: str) -> EvalRequest:
        hypothesis = self.item.payload["exp"]
        body = PROMPTS[self.strategy][(task, "yn")].format(hypothesis=hypothesis)
        return self.request(task, "yn", body, text=hypothesis, gold=self.item.payload["def_label"],
                            answer_type="yes_no", extra={"hypothesis": hypothesis})


# --- Scoring (§5, §7.3) -------------------------------------------------------------------------

def score_discrete(requests: list[EvalRequest], responses: dict) -> dict:
    """Accuracy and unparsed rate; for MCQ also the hard and easy subsets (§7.3) and hard − easy."""
    answers = {r.request_id: scoring.answer(r, responses.get(r.request_id)) for r in requests}
    group = scoring.accuracy_group(list(answers.values()))
    if requests and requests[0].extra.get("format") == "mcq":
        for name, subset in (("hard", True), ("easy", False)):
            group[name] = scoring.accuracy_group([answers[r.request_id] for r in requests
                                                  if r.extra.get("hard") is subset])
        hard, easy = group["hard"]["accuracy"], group["easy"]["accuracy"]
        group["hard_minus_easy"] = hard - easy if hard is not None and easy is not None else None
        group["unknown_difficulty"] = sum(r.extra.get("hard") is None for r in requests)
    return group


def llm_match_scores(judgment: dict) -> list[float] | None:
    """The 1–5 scores a judgment gives: `score` (one) or `scores` (one per reference); None if invalid."""
    values = judgment.get("scores", [judgment.get("score")])
    values = values if isinstance(values, list) else [values]
    parsed = [answer_parsing.parse_score(v if isinstance(v, str) else str(v), 1, 5) for v in values]
    return [p.value for p in parsed] if parsed and all(p.ok for p in parsed) else None


def score_generative(requests: list[EvalRequest], responses: dict, *, clip=None, judge=None) -> dict:
    """CLIP score: per question the max cosine over (response, reference) pairs, mean over questions
    (`clip_score_all_pairs`: the per-question mean of all pairs). LLM-Match: per question the mean of
    the judge's 1–5 scores over its pairs, mean over questions. Questions with no (non-empty)
    response are left out of both and counted as missing / empty."""
    answered = [(r, scoring.texts(responses.get(r.request_id))) for r in requests]
    scored = [(r, said) for r, said in answered if said]
    group = {"n": len(requests), "missing": sum(not responses.get(r.request_id) for r in requests),
             "scored": len(scored)}
    group["empty"] = len(requests) - group["missing"] - len(scored)
    if clip is None:
        group["clip_score"] = scoring.not_computed("no CLIP model was given (--clip-model)")
    else:
        pairs = similarity.clip_question_scores(clip, [(said, list(r.gold)) for r, said in scored])
        group["clip_score"] = scoring.mean(best for best, _ in pairs)
        group["clip_score_all_pairs"] = scoring.mean(average for _, average in pairs)
    group.update(_llm_match(scored, responses, judge))
    return group


def _llm_match(scored, responses: dict, judge) -> dict:
    pairs = [(r, response) for r, _ in scored for response in responses[r.request_id]
             if response.text and response.text.strip()]
    verdicts, reason = scoring.judgments(pairs, judge)
    if reason:
        return {"llm_match": scoring.not_computed(reason)}
    per_question: dict[str, list[float]] = {}
    invalid = 0
    for (request, _), verdict in zip(pairs, verdicts, strict=True):
        values = llm_match_scores(verdict)
        if values is None:
            invalid += 1
        else:
            per_question.setdefault(request.request_id, []).extend(values)
    llm_match = (scoring.not_computed(f"no valid judgment ({invalid} invalid)") if invalid and not per_question
                 else scoring.mean(scoring.mean(values) for values in per_question.values()))
    return {"llm_match": llm_match, "llm_match_questions": len(per_question), "llm_match_invalid_judgments": invalid}


BENCHMARK = benchmarks.register(BlackSwanBenchmark())
