"""Where the unexpected event happens, from several annotators' marks, and the split it suggests.

BlackSwanSuite's videos come from Oops!, where several annotators marked the moment the failure
happens. The authors turned those marks into one time and three parts with a fixed rule (their
`oops/do-split.py`); these pure functions apply the same rule:

`aggregate(marks)`
  1. keep the marks after `MIN_MARK` (0.1 s): earlier ones mark the start of the video, not an event;
  2. if the kept marks are widely spread (population standard deviation > `WIDE_SPREAD`, 3 s), keep
     only the closest pair (the two marks nearest each other; on a tie, the earliest pair); when even
     that pair is more than 8 s apart (its std > `PAIR_STD`, 4 s, the script's limit for a pair) there
     is no time;
  3. if the kept marks agree — their population standard deviation is at most `AGREEING_STD` (0.5 s),
     as the script tests (`np.std(split) <= 0.5`) — the time is their mean;
  4. otherwise it is the earliest kept mark after `MIN_EARLIEST` (1 s); with none after 1 s there is
     no time (and no suggestion).
  Step 3 reads "within 0.5 s" as the script does (rule `authors`, the default). The other reading,
  every kept mark within 0.5 s of every other (rule `spread`: max − min ≤ 0.5 s), is kept by name;
  every aggregate records the rule it used. Where the script picks a pair by its annotators' order
  (the last pair it finds within 8 s), the closest pair is kept, as SPEC.md words the rule.

`suggest_parts(t, duration)`
  V_pre = [`EDGE` (0.17 s), `FACTOR`·t], V_main = [0.8·t, 0.8·duration], V_post = [0.8·duration,
  duration − 0.17 s], clamped to the video; each part must last at least `MIN_PART_SECONDS` (1 s).
  The split's event start and end (`annotation.benchmarks.blackswan.splits.split_library_video`) are V_main's
  bounds, 0.8·t and 0.8·duration, and it trims `EDGE` from the start of V_pre and the end of V_post.

`poor_agreement(aggregate)`
  True when the marks are widely spread, fewer than two marks count, or there is no time: such
  videos are flagged and can be filtered out.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from itertools import combinations

MIN_MARK = 0.1  # marks at or before this many seconds are dropped
WIDE_SPREAD = 3.0  # population std (s) above which only the closest pair of marks is kept
PAIR_STD = 4.0  # the closest pair of widely spread marks counts only when its std is at most this (8 s apart)
AGREEING_STD = 0.5  # marks whose population std is at most this (rule `authors`; rule `spread`: max − min) agree
MIN_EARLIEST = 1.0  # otherwise the earliest mark after this many seconds
FACTOR = 0.8  # V_main starts at FACTOR·t and V_post at FACTOR·duration
EDGE = 0.17  # seconds trimmed from the start of V_pre and the end of V_post
MIN_PART_SECONDS = 1.0  # each part lasts at least this long (SPEC §1, the paper's §4.1)
MIN_MARKS = 2  # fewer marks than this: poor agreement

AUTHORS, SPREAD = "authors", "spread"
RULES = {AUTHORS: f"the kept marks agree when their population std is at most {AGREEING_STD:g} s "
                  "(oops/do-split.py)",
         SPREAD: f"the kept marks agree when they all lie within {AGREEING_STD:g} s of each other (max − min)"}
DEFAULT_RULE = AUTHORS
MEAN, EARLIEST = "mean", "earliest"
PARTS = ("pre", "main", "post")
PART_LABELS = {"pre": "V_pre", "main": "V_main", "post": "V_post"}


@dataclass(frozen=True)
class Aggregate:
    """One video's marks read with the authors' rule."""

    rule: str  # AUTHORS or SPREAD: how step 3 decides that the kept marks agree
    marks: tuple[float, ...]  # every mark given, in the order given
    valid: tuple[float, ...]  # the marks after MIN_MARK
    kept: tuple[float, ...]  # the marks the time is computed from (the closest pair when widely spread)
    time: float | None  # the aggregated time, None when the rule gives none
    method: str | None  # MEAN or EARLIEST; None without a time
    closest_pair: bool  # whether the marks were widely spread and only the closest pair was kept
    std: float | None  # population std of the valid marks (the spread test), None without a mark
    kept_std: float | None  # population std of the kept marks
    spread: float | None  # the largest distance between two kept marks
    reason: str = ""  # why there is no time

    @property
    def widely_spread(self) -> bool:
        return self.closest_pair

    @property
    def branch(self) -> str:
        """Which way the rule went, in words: "mean", "earliest", "closest pair, then mean", …"""
        if self.method is None:
            return "no time"
        return f"closest pair, then {self.method}" if self.closest_pair else self.method

    def as_dict(self) -> dict:
        return {"rule": self.rule, "marks": list(self.marks), "valid": list(self.valid), "kept": list(self.kept),
                "time": self.time, "method": self.method, "branch": self.branch, "closest_pair": self.closest_pair,
                "std": self.std, "kept_std": self.kept_std, "spread": self.spread, "reason": self.reason}


@dataclass(frozen=True)
class Part:
    name: str
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return max(0.0, self.end - self.start)

    @property
    def long_enough(self) -> bool:
        return self.seconds >= MIN_PART_SECONDS - 1e-9

    def as_dict(self) -> dict:
        return {"name": self.name, "label": PART_LABELS[self.name], "start": round(self.start, 6),
                "end": round(self.end, 6), "seconds": round(self.seconds, 6), "long_enough": self.long_enough}


@dataclass(frozen=True)
class Suggestion:
    """The parts the authors' factors give for an event at `time` in a video of `duration` seconds."""

    time: float
    duration: float
    parts: tuple[Part, ...]
    problems: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def event_start(self) -> float:
        return self.parts[1].start

    @property
    def event_end(self) -> float:
        return self.parts[1].end

    @property
    def trim_start(self) -> float:
        """Seconds before V_pre starts (`EDGE`, within the video)."""
        return self.parts[0].start

    @property
    def trim_end(self) -> float:
        """Seconds after V_post ends."""
        return max(0.0, self.duration - self.parts[2].end)

    def as_dict(self) -> dict:
        return {"time": self.time, "duration": self.duration, "event_start": round(self.event_start, 6),
                "event_end": round(self.event_end, 6), "trim_start": round(self.trim_start, 6),
                "trim_end": round(self.trim_end, 6), "parts": [part.as_dict() for part in self.parts],
                "ok": self.ok, "problems": list(self.problems)}


def _number(value) -> float:
    if isinstance(value, bool):
        raise ValueError(f"A mark must be a number of seconds (got {value!r}).")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"A mark must be a finite number of seconds (got {value!r}).")
    return number


def _closest_pair(marks: tuple[float, ...]) -> tuple[float, float]:
    ordered = sorted(marks)
    return min(combinations(ordered, 2), key=lambda pair: (pair[1] - pair[0], pair[0]))


def check_rule(rule: str) -> str:
    """`rule` when it is one of `RULES`; ValueError naming them otherwise."""
    if rule not in RULES:
        raise ValueError(f"Unknown agreement rule {rule!r}: use one of {', '.join(RULES)}.")
    return rule


def _agree(kept: tuple[float, ...], rule: str) -> bool:
    measure = statistics.pstdev(kept) if rule == AUTHORS else max(kept) - min(kept)
    return measure <= AGREEING_STD + 1e-9


def aggregate(marks, rule: str = DEFAULT_RULE) -> Aggregate:
    """The authors' time of the event from annotators' `marks` (seconds; see the module docstring).

    ValueError for a mark that is not a finite number, or an unknown rule.
    """
    rule = check_rule(rule)
    given = tuple(_number(mark) for mark in marks)
    valid = tuple(mark for mark in given if mark > MIN_MARK)
    if not valid:
        return Aggregate(rule, given, valid, (), None, None, False, None, None, None,
                         reason=f"no mark after {MIN_MARK:g} s")
    std = statistics.pstdev(valid)
    kept, closest = valid, False
    if len(valid) >= 2 and std > WIDE_SPREAD:
        kept, closest = _closest_pair(valid), True
    figures = {"std": std, "kept_std": statistics.pstdev(kept), "spread": max(kept) - min(kept)}
    if closest and figures["kept_std"] > PAIR_STD + 1e-9:
        return Aggregate(rule, given, valid, kept, None, None, closest, **figures,
                         reason=f"the marks are widely spread and no two lie within {2 * PAIR_STD:g} s "
                                "of each other")
    if _agree(kept, rule):
        return Aggregate(rule, given, valid, kept, statistics.fmean(kept), MEAN, closest, **figures)
    later = [mark for mark in kept if mark > MIN_EARLIEST]
    if not later:
        return Aggregate(rule, given, valid, kept, None, None, closest, **figures,
                         reason=f"the marks disagree and none is after {MIN_EARLIEST:g} s")
    return Aggregate(rule, given, valid, kept, min(later), EARLIEST, closest, **figures)


def suggest_parts(t: float, duration: float) -> Suggestion:
    """V_pre, V_main and V_post for an event at `t` in a video of `duration` seconds, clamped to the
    video, with the problems that make the suggestion unusable (a part shorter than 1 s)."""
    t, duration = _number(t), _number(duration)
    if duration <= 0:
        raise ValueError(f"The video's duration must be positive (got {duration:g} s).")

    def clamp(value: float) -> float:
        return min(max(value, 0.0), duration)

    main_start = clamp(FACTOR * t)
    main_end = max(main_start, clamp(FACTOR * duration))  # an event after 0.8·duration leaves V_main empty
    parts = (Part("pre", clamp(EDGE), max(clamp(EDGE), main_start)),
             Part("main", main_start, main_end),
             Part("post", main_end, max(main_end, clamp(duration - EDGE))))
    problems = tuple(f"{PART_LABELS[part.name]} would last {part.seconds:.2f} s, under {MIN_PART_SECONDS:g} s"
                     for part in parts if not part.long_enough)
    return Suggestion(time=t, duration=duration, parts=parts, problems=problems)


def poor_agreement(found: Aggregate) -> bool:
    """Whether the marks agree too little to trust: widely spread, fewer than two, or no time."""
    return found.time is None or len(found.valid) < MIN_MARKS or (found.std is not None and found.std > WIDE_SPREAD)


def agreement_text(found: Aggregate) -> str:
    """The agreement in words: how many marks count, their spread and standard deviation."""
    if not found.valid:
        return f"no mark after {MIN_MARK:g} s"
    text = f"{len(found.valid)} mark{'s' if len(found.valid) != 1 else ''}, std {found.std:.2f} s"
    if found.closest_pair:
        text += f" (widely spread: closest pair kept, {found.spread:.2f} s apart)"
    elif len(found.kept) > 1:
        text += f", spread {found.spread:.2f} s"
    return text
