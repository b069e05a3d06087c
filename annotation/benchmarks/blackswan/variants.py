"""BlackSwanSuite's task variants, built from the three-step annotation of each video (seeds/000 §4.3, §7.3;
SPEC §1 "Task variants built from the annotations").

Input: per video, a record in the release shape (`id`; `preevent`, `event`, `postevent`, the start
times in seconds of V_pre, V_main and V_post; `task1_gt` the 3 forecasts; `task2_checkboxes` the
Detective's valid/invalid marks of the forecasts; `task2_gt` the Detective's hypotheses: the new one
written for an invalidated forecast, the forecast itself (or "") for a validated one; `task3_checkboxes`
the Reporter's marks of the 3 Detective hypotheses; `task3_gt` the Reporter's caption; optional
`preevent_caption`, a caption of V_pre), and the library `Video` of the whole video.

The Detective hypotheses are, per forecast i, the forecast when step 2 validated it and the new
`task2_gt[i]` otherwise (the three Detective-Gen references). A record whose `multivideo` is yes
("yes"/"no" as the release writes it, or a boolean) is skipped, as the authors do (`build.skipped`).
What is built:

- **Gen**: one `video` item per record (the record itself; the evaluation draws Forecaster-, Detective-
  and Reporter-Gen from it).
- **MCQ**, under one of two rule sets (`MCQ_RULES`, recorded in every item's `source.built_by` as
  `mcq_rules` and in the preview):

  `release` (the default; the authors' `oops/mcq/get_mcq.py`, which gives Table 1's counts; SPEC
  "Fidelity rules"). Detective (`mcq_task` 1): W = the forecasts step 2 marked invalid. None → the
  video has no MCQ at all (Reporter included). The distractor sets of W: one → {(w1, V_pre caption)}
  (the record's `preevent_caption`; without one, the fallback below supplies it); two → {(w1, w2)};
  three → {(w1, w2), (w1, w3), (w2, w3)}. For every invalidated forecast i, one MCQ per distractor
  set with the correct option `task2_gt[i]`. Reporter (`mcq_task` 2): the hypotheses are `task2_gt[i]`,
  or `task1_gt[i]` where `task2_gt[i]` is empty; W = those step 3 marked invalid; distractor sets as
  above; one MCQ per set with the correct option `task3_gt` (none when it is empty). Options are
  kept as written (no de-duplication), as the authors' script does.

  `paper` (the paper's text, §4.3). Detective: one question per Detective hypothesis, which is the
  correct option; the distractors are the forecasts invalidated in step 2. Reporter: one question per
  correct answer, the step-3 caption and each Detective hypothesis validated in step 3; the
  distractors are the Detective hypotheses invalidated in step 3. With more than two distractors at
  hand, two are drawn. A distractor that repeats a correct answer of the same task (compared case-
  and space-insensitively) is not used.
- Each MCQ has 3 options, shuffled once when built with `random.Random("<seed>:<video id>:<task>:<n>")`;
  the seed, the key, the order and where each option came from are kept in the item's
  `source.built_by`. The built order is then fixed: the frozen item holds `mcq_options` in that order
  and `mcq_label`, and evaluation shows them as stored (release option order).
- **Fallback distractors** (§4.3): a video with fewer than two distractors for one of its questions
  gets a caption of V_pre (the record's `preevent_caption` when it has one, else a VLM's, proposal kind
  `blackswan_pre_caption`) rewritten by an LLM in the style of the video's hypotheses (proposal kind
  `blackswan_distractor_rewrite`, as many sentences as the video lacks). Both go through
  `generation.proposals`: a caption is used only once a curator accepted or corrected it, and a
  rewrite becomes a distractor only once accepted or corrected. Until then the question is *pending*:
  listed, never filled in. `request_fallbacks` asks the models for what is missing.
- **Y/N**: each forecast with the step-2 mark as label (`def_task` 1, Detective), and each hypothesis
  written in step 2 (for a forecast it invalidated) with the step-3 mark as label (`def_task` 2,
  Reporter): the paper's "each step-2 hypothesis", whose counts (4,917 Detective, 1,762 Reporter rows
  for 1,655 videos, §4.3) show that validated forecasts are not asked about again.
- **Hard subset** (§7.3): a video whose Detective hypotheses were all invalidated in step 3; the
  evaluation reads this from the `task3_checkboxes` of the `video` item.

Items have the importer's shapes (`annotation.benchmarks.blackswan.importer`): `video` items with the record's
fields, `mcq` rows (`id`, `mcq_task`, `mcq_options`, `mcq_label`) with external id
`<video id>:mcq:<row>`, `yn` rows (`id`, `def_task`, `exp`, `def_label`) with `<video id>:yn:<row>`,
rows numbered across the whole version as in `mcq.json` / `yn.json`, each linking the whole video under
role `video`. `source` names the release file and position and the release record the item stands for
(so `export_benchmark` writes the version out in the release layout), and `built_by` says how it was
built.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from annotation.benchmarks.blackswan.importer import DATA_FILE, ROW_FILES, SPLIT_FIELDS
from annotation.importers.base import number, text
from generation import proposals
from generation.models import Proposal
from generation.proposals import ProposalError, ProposalField, ProposalTask, chat

BUILDER = "annotation.benchmarks.blackswan.variants"
PRE_CAPTION_KIND = "blackswan_pre_caption"
REWRITE_KIND = "blackswan_distractor_rewrite"
TASK_NAMES = {1: "detective", 2: "reporter"}
HYPOTHESES = 3  # forecasts per video, and Detective hypotheses
DISTRACTORS = 2  # a question has 3 options: one correct, two distractors
RELEASE_RULES, PAPER_RULES = "release", "paper"
MCQ_RULES = (RELEASE_RULES, PAPER_RULES)  # the first is the default
VARIANTS = ("forecaster_gen", "detective_gen", "reporter_gen", "detective_mcq", "reporter_mcq", "detective_yn",
            "reporter_yn")
DEFAULT_CAPTION_FRAMES = "uniform:8"
SETTLED = (Proposal.Outcome.ACCEPTED, Proposal.Outcome.CORRECTED)
OPEN = (Proposal.Outcome.UNDECIDED, Proposal.Outcome.DISPUTED)

# fallback states of a video
NOT_NEEDED = "not_needed"
CAPTION_NEEDED = "caption_needed"  # no usable V_pre caption and none asked for (or every one was rejected)
CAPTION_WAITING = "caption_waiting"  # a caption proposal is being generated or awaits a curator
REWRITE_NEEDED = "rewrite_needed"  # a caption is there; rewrites still to be asked for
REWRITE_WAITING = "rewrite_waiting"  # rewrite proposals are being generated or await a curator
READY = "ready"


class VariantsError(ValueError):
    """Variants cannot be built or frozen as asked (the message says why)."""


# --- The proposal kinds of the fallback ------------------------------------------------------------

PRE_CAPTION_INSTRUCTION = ("Describe what happens in this video in one sentence: the people, objects, actions and "
                           "setting.")


def _pre_caption_prompt(inputs: dict, options: dict) -> list:
    return proposals.CAPTION.build_prompt({"instruction": PRE_CAPTION_INSTRUCTION, **inputs}, options)


def _rewrite_prompt(inputs: dict, options: dict) -> list:
    count = int(inputs["count"])
    examples = "\n".join(f"- {example}" for example in inputs["examples"])
    sentences = "one sentence" if count == 1 else f"{count} different sentences"
    instruction = (
        f"Here is a description of the beginning of a video:\n{inputs['caption']}\n\n"
        f"Here are sentences people wrote about the same video:\n{examples}\n\n"
        f"Rewrite the description as {sentences} in the style of these sentences (their length, tense and way of "
        "naming people and things). Say only what the description says.\n"
        f'Reply with a JSON list of {count} object{"s" if count > 1 else ""} of the form {{"distractor": "..."}} '
        "and nothing else.")
    return chat([instruction], system=options.get("system", ""))


PRE_CAPTION = proposals.register(ProposalTask(
    name=PRE_CAPTION_KIND, label="BlackSwanSuite: caption of V_pre (for fallback distractors)", output="text",
    fields=(ProposalField("caption", max_length=4000),), build_prompt=_pre_caption_prompt,
    required_inputs=("media",), review_inputs=("video_id",),
    instructions="Check that the caption describes what the beginning of the video shows, and nothing else.",
), replace=True)

REWRITE = proposals.register(ProposalTask(
    name=REWRITE_KIND, label="BlackSwanSuite: V_pre caption rewritten as a distractor", many=True,
    fields=(ProposalField("distractor", max_length=500, single_line=True),), build_prompt=_rewrite_prompt,
    required_inputs=("caption", "examples", "count"), review_inputs=("video_id", "caption", "examples"),
    instructions="Check that the sentence only describes the beginning of the video, in the style of the examples, "
                 "and does not say what happens later.",
), replace=True)


def caption_key(video_id: str) -> str:
    return f"blackswan:{video_id}:pre_caption"


def rewrite_key(video_id: str) -> str:
    return f"blackswan:{video_id}:distractor"


# --- Reading one record --------------------------------------------------------------------------

@dataclass(frozen=True)
class Hypothesis:
    text: str
    origin: str  # the record field it comes from: "task1_gt[0]", "task2_gt[1]", "task3_gt"


@dataclass
class Annotated:
    """One video's annotation, read and checked."""

    index: int
    video_id: str
    record: dict
    video: object  # annotation.models.Video
    times: dict
    forecasts: list[Hypothesis]
    forecast_valid: list[bool]  # step 2's marks of the forecasts
    detective: list[Hypothesis]
    detective_valid: list[bool]  # step 3's marks of the Detective hypotheses
    caption: Hypothesis
    pre_caption: str
    origin: str = ""

    @property
    def hard(self) -> bool:
        return not any(self.detective_valid)

    def option_texts(self) -> list[str]:
        return _distinct([h.text for h in (*self.forecasts, *self.detective, self.caption)])


def is_valid_mark(mark) -> bool | None:
    """A valid/invalid checkbox ("yes"/"no", booleans, "valid"/"invalid", 1/0); None when it is neither."""
    if isinstance(mark, bool):
        return mark
    word = str(mark).strip().lower()
    if word in ("yes", "valid", "true", "1"):
        return True
    if word in ("no", "invalid", "false", "0"):
        return False
    return None


def normalised(sentence: str) -> str:
    return re.sub(r"\s+", " ", sentence).strip().rstrip(".").casefold()


def _distinct(texts) -> list[str]:
    seen, kept = set(), []
    for sentence in texts:
        if normalised(sentence) not in seen:
            seen.add(normalised(sentence))
            kept.append(sentence)
    return kept


def _texts(record: dict, name: str, where: str, problems: list, *, allow_empty: bool = False) -> list | None:
    values = record.get(name)
    if not isinstance(values, list) or len(values) != HYPOTHESES:
        problems.append(f"{where}: '{name}' must be a list of {HYPOTHESES} (got {values!r})")
        return None
    bad = [i for i, v in enumerate(values) if not (isinstance(v, str) and (allow_empty or v.strip()))]
    if bad:
        problems.append(f"{where}: '{name}' must hold texts (entry {bad[0]} is {values[bad[0]]!r})")
        return None
    return [v.strip() for v in values]


def _marks(record: dict, name: str, where: str, problems: list) -> list[bool] | None:
    values = record.get(name)
    if not isinstance(values, list) or len(values) != HYPOTHESES:
        problems.append(f"{where}: '{name}' must be a list of {HYPOTHESES} yes/no marks (got {values!r})")
        return None
    marks = [is_valid_mark(v) for v in values]
    if None in marks:
        problems.append(f"{where}: '{name}' must hold yes/no marks (entry {marks.index(None)} is "
                        f"{values[marks.index(None)]!r})")
        return None
    return marks


def read_record(index: int, record, video, origin: str = "") -> tuple[Annotated | None, list[str]]:
    """One record checked against its video: (the annotation, []) or (None, every problem found)."""
    where = origin or f"record {index}"
    if not isinstance(record, dict):
        return None, [f"{where}: a record must be a JSON object, not {type(record).__name__}"]
    problems: list[str] = []
    video_id = text(record.get("id"))
    if not video_id:
        problems.append(f"{where}: missing 'id'")
    else:
        where = f"{where} (video {video_id})"
    times = {name: number(record.get(name)) for name in SPLIT_FIELDS}
    for name, value in times.items():
        if value is None or value < 0:
            problems.append(f"{where}: '{name}' must be a number of seconds (got {record.get(name)!r})")
    if not problems and not times["preevent"] < times["event"] < times["postevent"]:
        problems.append(f"{where}: the split must increase: preevent < event < postevent (got "
                        f"{times['preevent']}, {times['event']}, {times['postevent']})")
    if video is None:
        problems.append(f"{where}: no library video")
    elif getattr(video, "status", "ready") != "ready" or not video.duration:
        problems.append(f"{where}: video #{video.pk} is not probed yet")
    elif not problems:
        end = number(record.get("end")) or video.duration
        if times["postevent"] >= end:
            problems.append(f"{where}: postevent {times['postevent']} s is not before the end of the video ({end:g} s)")
    forecasts = _texts(record, "task1_gt", where, problems)
    new = _texts(record, "task2_gt", where, problems, allow_empty=True)
    step2 = _marks(record, "task2_checkboxes", where, problems)
    step3 = _marks(record, "task3_checkboxes", where, problems)
    caption = record.get("task3_gt")
    if not (isinstance(caption, str) and caption.strip()):
        problems.append(f"{where}: 'task3_gt' must be the Reporter's caption (got {caption!r})")
    pre_caption = record.get("preevent_caption") or ""
    if not isinstance(pre_caption, str):
        problems.append(f"{where}: 'preevent_caption' must be a text (got {pre_caption!r})")
    detective = []
    if forecasts and new and step2:
        for i in range(HYPOTHESES):
            if step2[i]:
                detective.append(Hypothesis(forecasts[i], f"task1_gt[{i}]"))
            elif new[i]:
                detective.append(Hypothesis(new[i], f"task2_gt[{i}]"))
            else:
                problems.append(f"{where}: forecast {i} was invalidated in step 2 but 'task2_gt[{i}]' holds no new "
                                "hypothesis")
    if problems:
        return None, problems
    return Annotated(
        index=index, video_id=video_id, record=record, video=video, times=times,
        forecasts=[Hypothesis(t, f"task1_gt[{i}]") for i, t in enumerate(forecasts)], forecast_valid=step2,
        detective=detective, detective_valid=step3, caption=Hypothesis(caption.strip(), "task3_gt"),
        pre_caption=pre_caption.strip(), origin=origin), []


# --- Questions -----------------------------------------------------------------------------------

@dataclass
class Question:
    """One MCQ before its options are drawn: its correct answer and the annotation's distractors."""

    video: Annotated
    task: int  # 1 Detective, 2 Reporter
    number: int  # the answer's place among the task's correct answers
    answer: Hypothesis
    pool: list[Hypothesis]

    @property
    def key(self) -> str:
        return f"{self.video.video_id}:{TASK_NAMES[self.task]}:{self.number}"

    @property
    def lacking(self) -> int:
        return max(0, DISTRACTORS - len(self.pool))


def _questions(task: int, video: Annotated, correct: list[Hypothesis], wrong: list[Hypothesis]) -> list[Question]:
    answers, seen = [], set()
    for hypothesis in correct:
        if normalised(hypothesis.text) not in seen:
            seen.add(normalised(hypothesis.text))
            answers.append(hypothesis)
    pool, taken = [], set(seen)
    for hypothesis in wrong:
        if normalised(hypothesis.text) not in taken:
            taken.add(normalised(hypothesis.text))
            pool.append(hypothesis)
    return [Question(video, task, n, answer, pool) for n, answer in enumerate(answers)]


def check_rules(rules: str) -> str:
    """The MCQ rule set; VariantsError naming the known ones."""
    if rules not in MCQ_RULES:
        raise VariantsError(f"Unknown MCQ rule set {rules!r}; choose one of {', '.join(MCQ_RULES)}.")
    return rules


def is_multivideo(record: dict) -> bool:
    """Whether a release record is marked `multivideo` yes (the authors leave such videos out)."""
    return is_valid_mark(record.get("multivideo", "no")) is True


def distractor_sets(wrong: list[Hypothesis], pre_caption: str) -> list[list[Hypothesis]]:
    """The authors' distractor sets of the invalidated hypotheses W: one → (w1, V_pre caption), or
    (w1) alone when the record has no caption (the fallback completes it); two → (w1, w2); three →
    every pair."""
    if len(wrong) == 1:
        return [[wrong[0], Hypothesis(pre_caption, "preevent_caption")] if pre_caption else [wrong[0]]]
    return [[wrong[a], wrong[b]] for a in range(len(wrong)) for b in range(a + 1, len(wrong))]


def release_questions(video: Annotated) -> list[Question]:
    """The `release` rule set (module docstring): Detective questions, then Reporter questions."""
    record = video.record
    firsts, news = record["task1_gt"], record["task2_gt"]
    invalid = [i for i, valid in enumerate(video.forecast_valid) if not valid]
    if not invalid:
        return []
    sets = distractor_sets([video.forecasts[i] for i in invalid], video.pre_caption)
    pairs = [(Hypothesis(news[i].strip(), f"task2_gt[{i}]"), pool) for i in invalid for pool in sets]
    detective = [Question(video, 1, n, answer, pool) for n, (answer, pool) in enumerate(pairs)]
    hypotheses = [Hypothesis(news[i].strip(), f"task2_gt[{i}]") if news[i].strip()
                  else Hypothesis(firsts[i].strip(), f"task1_gt[{i}]") for i in range(HYPOTHESES)]
    wrong = [h for h, valid in zip(hypotheses, video.detective_valid, strict=True) if not valid]
    reporter = []
    if wrong and video.caption.text:
        reporter = [Question(video, 2, n, video.caption, pool)
                    for n, pool in enumerate(distractor_sets(wrong, video.pre_caption))]
    return detective + reporter


def questions(video: Annotated, rules: str = RELEASE_RULES) -> list[Question]:
    """Detective questions, then Reporter questions, in answer order, under the MCQ rule set."""
    if check_rules(rules) == RELEASE_RULES:
        return release_questions(video)
    detective = _questions(
        1, video, video.detective,
        [h for h, valid in zip(video.forecasts, video.forecast_valid, strict=True) if not valid])
    reporter = _questions(
        2, video, [video.caption, *(h for h, valid in zip(video.detective, video.detective_valid, strict=True)
                                    if valid)],
        [h for h, valid in zip(video.detective, video.detective_valid, strict=True) if not valid])
    return detective + reporter


# --- Fallback distractors: what the proposals hold -----------------------------------------------

@dataclass
class Fallback:
    """The fallback distractors of one video: how many it lacks, where it stands, and what is usable."""

    video: Annotated
    needed: int
    state: str = NOT_NEEDED
    caption: str = ""
    caption_provenance: dict = field(default_factory=dict)
    distractors: list[tuple[str, dict]] = field(default_factory=list)  # (text, provenance), usable ones
    proposals: list[int] = field(default_factory=list)  # ids of the open proposals a curator must decide

    def caption_media(self, frames: str = DEFAULT_CAPTION_FRAMES) -> dict:
        video = self.video.video
        return {"type": "video", "path": video.file.path, "policy": frames,
                "segment": [self.video.times["preevent"], self.video.times["event"]], "checksum": video.checksum}

    def rewrite_inputs(self) -> dict:
        return {"video_id": self.video.video_id, "caption": self.caption, "examples": self.video.option_texts(),
                "count": self.needed - len(self.distractors)}

    def as_dict(self) -> dict:
        return {"video_id": self.video.video_id, "needed": self.needed, "state": self.state,
                "usable": len(self.distractors), "caption": self.caption, "caption_from": self.caption_provenance,
                "open_proposals": list(self.proposals)}


def _proposal_provenance(proposal: Proposal) -> dict:
    decision = proposal.decisions.order_by("-decided_at", "-pk").first()
    return {"proposal_id": proposal.pk, "proposal_set_id": proposal.proposal_set_id, "task_kind": proposal.task_kind,
            "backend": proposal.backend, "model_id": proposal.model_id, "revision": proposal.revision,
            "params": proposal.params, "outcome": proposal.outcome,
            "decided_by": decision.decided_by.get_username() if decision and decision.decided_by else None,
            "decided_at": decision.decided_at.isoformat() if decision else None}


def _caption_matches(proposal: Proposal, video: Annotated) -> bool:
    media = proposal.inputs.get("media") if isinstance(proposal.inputs, dict) else None
    return (isinstance(media, dict) and media.get("checksum") == video.video.checksum
            and [float(t) for t in media.get("segment") or []] == [video.times["preevent"], video.times["event"]])


def fallback_for(video: Annotated, needed: int) -> Fallback:
    """Where a video's fallback distractors stand, read from its proposals and their decisions."""
    found = Fallback(video, needed)
    if needed == 0:
        return found
    if video.pre_caption:
        found.caption, found.caption_provenance = video.pre_caption, {"from": "preevent_caption"}
    else:
        captions = [p for p in Proposal.objects.filter(task_kind=PRE_CAPTION_KIND, source_key=caption_key(
            video.video_id)).order_by("pk") if _caption_matches(p, video)]
        settled = [p for p in captions if p.outcome in SETTLED]
        if settled:
            chosen = max(settled, key=lambda p: (p.outcome_at, p.pk))
            found.caption = chosen.final_fields["caption"]
            found.caption_provenance = {"from": "proposal", **_proposal_provenance(chosen)}
        else:
            waiting = [p.pk for p in captions if p.outcome in OPEN]
            found.state, found.proposals = (CAPTION_WAITING, waiting) if waiting else (CAPTION_NEEDED, [])
            return found
    rewrites = [p for p in Proposal.objects.filter(task_kind=REWRITE_KIND, source_key=rewrite_key(video.video_id))
                .order_by("pk") if p.inputs.get("caption") == found.caption]
    taken = {normalised(t) for t in video.option_texts()}
    for proposal in rewrites:
        if proposal.outcome in SETTLED:
            sentence = proposal.final_fields["distractor"].strip()
            if normalised(sentence) not in taken:
                taken.add(normalised(sentence))
                found.distractors.append((sentence, {"from": "fallback", "caption": found.caption,
                                                     "caption_from": found.caption_provenance,
                                                     **_proposal_provenance(proposal)}))
    if len(found.distractors) >= needed:
        found.state = READY
        found.distractors = found.distractors[:needed]
        return found
    waiting = [p.pk for p in rewrites if p.outcome in OPEN]
    found.state, found.proposals = (REWRITE_WAITING, waiting) if waiting else (REWRITE_NEEDED, [])
    return found


# --- The build -----------------------------------------------------------------------------------

@dataclass
class Build:
    """What the records give: the items to freeze, the MCQs still waiting for distractors, the videos'
    fallback states and the problems that keep it from being frozen."""

    seed: int
    mcq_rules: str = RELEASE_RULES
    items: list[dict] = field(default_factory=list)  # {"external_id", "payload", "media": {"video": pk}}
    pending: list[dict] = field(default_factory=list)
    fallbacks: list[Fallback] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    hard_videos: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)  # {"video_id", "origin", "reason"}: records left out

    def counts(self) -> dict:
        by_variant = dict.fromkeys(VARIANTS, 0)
        hard = {"detective_mcq": 0, "reporter_mcq": 0}
        hard_ids = set(self.hard_videos)
        for item in self.items:
            payload = item["payload"]
            if payload["kind"] == "video":
                for task in ("forecaster", "detective", "reporter"):
                    by_variant[f"{task}_gen"] += 1
                continue
            task = TASK_NAMES[payload["mcq_task"] if payload["kind"] == "mcq" else payload["def_task"]]
            variant = f"{task}_{payload['kind']}"
            by_variant[variant] += 1
            if payload["kind"] == "mcq" and payload["id"] in hard_ids:
                hard[variant] += 1
        pending = {"detective_mcq": 0, "reporter_mcq": 0}
        for entry in self.pending:
            pending[f"{entry['task']}_mcq"] += 1
        return {"videos": by_variant["forecaster_gen"], "items": len(self.items), "variants": by_variant,
                "hard": {"videos": len(self.hard_videos), **hard}, "pending": pending,
                "fallback_distractors": sum(len(f.distractors) for f in self.fallbacks if f.state == READY),
                "skipped": len(self.skipped), "problems": len(self.problems)}

    def as_preview(self) -> dict:
        """JSON: what `annotation.benchmarks.blackswan.versions.freeze_variants` freezes."""
        return {"benchmark": "blackswan", "builder": BUILDER, "seed": self.seed, "mcq_rules": self.mcq_rules,
                "counts": self.counts(), "items": self.items, "pending": self.pending,
                "fallbacks": [f.as_dict() for f in self.fallbacks], "hard_videos": self.hard_videos,
                "skipped": self.skipped, "problems": self.problems}


def _draw(question: Question, fallback: Fallback | None, seed: int,
          rules: str = RELEASE_RULES) -> tuple[list, dict] | None:
    """(options, built_by) of one MCQ, or None while it lacks distractors."""
    rng = random.Random(f"{seed}:{question.key}")
    pool = list(question.pool)
    chosen = rng.sample(pool, DISTRACTORS) if len(pool) > DISTRACTORS else pool
    sources = [{"from": h.origin} for h in chosen]
    texts = [h.text for h in chosen]
    if len(texts) < DISTRACTORS:
        usable = fallback.distractors if fallback is not None and fallback.state == READY else []
        for sentence, provenance in usable[:DISTRACTORS - len(texts)]:
            texts.append(sentence)
            sources.append(provenance)
    if len(texts) < DISTRACTORS:
        return None
    options = [question.answer.text, *texts]
    origins = [{"from": question.answer.origin}, *sources]
    order = list(range(len(options)))
    rng.shuffle(order)
    built_by = {"builder": BUILDER, "mcq_rules": rules, "seed": seed, "shuffle_key": question.key, "order": order,
                "options": [origins[i] for i in order], "answer_from": question.answer.origin,
                "distractor_pool": [h.origin for h in question.pool]}
    return [options[i] for i in order], built_by


def _source(file: str, index: int, record: dict, built_by: dict) -> dict:
    return {"file": file, "index": index, "record": record, "built_by": built_by}


def assemble(videos: list[Annotated], fallbacks: dict[str, Fallback], seed: int,
             rules: str = RELEASE_RULES) -> Build:
    """The items of annotated videos, in record order, with rows numbered across the version."""
    build = Build(seed=seed, mcq_rules=rules, fallbacks=[f for f in fallbacks.values() if f.needed])
    mcq_rows: list[dict] = []
    yn_rows: list[dict] = []
    for position, video in enumerate(videos):
        pk = video.video.pk
        payload = {**video.record, "kind": "video", "id": video.video_id, **video.times,
                   "source": _source(DATA_FILE, position, video.record,
                                     {"builder": BUILDER, "mcq_rules": rules, "origin": video.origin})}
        build.items.append({"external_id": video.video_id, "payload": payload, "media": {"video": pk}})
        if video.hard:
            build.hard_videos.append(video.video_id)
        for question in questions(video, rules):
            drawn = _draw(question, fallbacks.get(video.video_id), seed, rules)
            if drawn is None:
                fallback = fallbacks.get(video.video_id)
                build.pending.append({"video_id": video.video_id, "task": TASK_NAMES[question.task],
                                      "answer": question.answer.text, "answer_from": question.answer.origin,
                                      "distractors": len(question.pool), "lacking": question.lacking,
                                      "fallback_state": fallback.state if fallback else NOT_NEEDED})
                continue
            options, built_by = drawn
            row = {"id": video.video_id, "mcq_task": question.task, "mcq_options": options,
                   "mcq_label": built_by["order"].index(0)}
            mcq_rows.append({"row": row, "built_by": built_by, "pk": pk})
        # Detective Y/N: the forecasts under step 2's marks; Reporter Y/N: the hypotheses written in step 2
        # (for the forecasts it invalidated) under step 3's marks (§4.3: 4,917 and 1,762 rows for 1,655 videos)
        written = [not valid for valid in video.forecast_valid]
        for task, hypotheses, marks, field_name, keep in (
                (1, video.forecasts, video.forecast_valid, "task2_checkboxes", [True] * len(video.forecasts)),
                (2, video.detective, video.detective_valid, "task3_checkboxes", written)):
            for i, (hypothesis, valid) in enumerate(zip(hypotheses, marks, strict=True)):
                if not keep[i]:
                    continue
                row = {"id": video.video_id, "def_task": task, "exp": hypothesis.text,
                       "def_label": "yes" if valid else "no"}
                yn_rows.append({"row": row, "pk": pk, "built_by": {
                    "builder": BUILDER, "hypothesis_from": hypothesis.origin, "label_from": f"{field_name}[{i}]"}})
    for kind, rows in (("mcq", mcq_rows), ("yn", yn_rows)):
        for index, entry in enumerate(rows):
            row = entry["row"]
            build.items.append({"external_id": f"{row['id']}:{kind}:{index}",
                                "payload": {**row, "kind": kind,
                                            "source": _source(ROW_FILES[kind], index, row, entry["built_by"])},
                                "media": {"video": entry["pk"]}})
    return build


def build_variants(pairs, *, seed: int = 0, origins: list[str] | None = None,
                   mcq_rules: str = RELEASE_RULES) -> Build:
    """Every variant of (record, library Video) pairs under an MCQ rule set (`MCQ_RULES`); records
    marked `multivideo` yes are skipped; fallback distractors as the proposals stand now."""
    rules = check_rules(mcq_rules)
    problems, videos, seen, skipped = [], [], {}, []
    for index, (record, video) in enumerate(pairs):
        origin = origins[index] if origins else ""
        if isinstance(record, dict) and is_multivideo(record):
            skipped.append({"video_id": text(record.get("id")), "origin": origin or f"record {index}",
                            "reason": "multivideo"})
            continue
        annotated, found = read_record(index, record, video, origin)
        problems.extend(found)
        if annotated is None:
            continue
        if annotated.video_id in seen:
            problems.append(f"{origin or f'record {index}'}: duplicate video id {annotated.video_id!r} "
                            f"(first in {seen[annotated.video_id]})")
            continue
        seen[annotated.video_id] = origin or f"record {index}"
        videos.append(annotated)
    fallbacks = {}
    for video in videos:
        needed = max((q.lacking for q in questions(video, rules)), default=0)
        fallbacks[video.video_id] = fallback_for(video, needed)
    build = assemble(videos, fallbacks, int(seed), rules)
    build.problems, build.skipped = problems, skipped
    return build


# --- Asking the models for the missing fallbacks -------------------------------------------------

def _model(spec: dict | None, what: str) -> dict:
    if not spec or not str(spec.get("model_id", "")).strip():
        raise VariantsError(f"No {what} model was given.")
    return {"backend": spec.get("backend") or "transformers", "model_id": spec["model_id"],
            "revision": spec.get("revision", ""), "params": spec.get("params") or {},
            "backend_options": spec.get("backend_options") or {}, "batch_size": int(spec.get("batch_size") or 8)}


def request_fallbacks(build: Build, *, caption_model: dict | None = None, rewrite_model: dict | None = None,
                      frames: str = DEFAULT_CAPTION_FRAMES, user=None) -> dict:
    """Create (and start generating) the proposals the build's fallbacks lack: a V_pre caption for each
    video in state `caption_needed` (with `caption_model`), rewrites for each one in `rewrite_needed`
    (with `rewrite_model`). Model specs: {"backend", "model_id", "revision", "params", "backend_options",
    "batch_size"}. Returns the sets and jobs created; videos waiting for a curator get nothing new."""
    made = {"caption_set": None, "rewrite_set": None, "jobs": [], "captions": [], "rewrites": []}
    asks = {
        PRE_CAPTION_KIND: ([f for f in build.fallbacks if f.state == CAPTION_NEEDED], caption_model, "caption",
                           lambda f: {"key": caption_key(f.video.video_id),
                                      "inputs": {"video_id": f.video.video_id, "media": f.caption_media(frames)}}),
        REWRITE_KIND: ([f for f in build.fallbacks if f.state == REWRITE_NEEDED], rewrite_model, "rewrite",
                       lambda f: {"key": rewrite_key(f.video.video_id), "inputs": f.rewrite_inputs()}),
    }
    for kind, (wanting, spec, what, entry) in asks.items():
        if not wanting or spec is None:
            continue
        model = _model(spec, what)
        try:
            proposal_set = proposals.create_proposal_set(
                kind, [entry(f) for f in wanting], backend=model["backend"], model_id=model["model_id"],
                revision=model["revision"], params=model["params"], backend_options=model["backend_options"],
                batch_size=model["batch_size"], name=f"BlackSwanSuite fallback distractors: {what}s", user=user)
            job = proposals.start_generation(proposal_set, user=user)
        except ProposalError as exc:
            raise VariantsError(str(exc)) from exc
        made[f"{what}_set"] = proposal_set.pk
        made[f"{what}s"] = [f.video.video_id for f in wanting]
        made["jobs"].append(job.pk)
    return made
