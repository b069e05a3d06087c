"""Checks of MAIA's false statements (SPEC §5; paper §3 "Statement Collection"): each false statement
(FS) must be a minimal edit of its true statement (TS) and contradict it.

Structural check: the word-level Levenshtein distance between the two statements' tokens lies in
`[min_edits, max_edits]` (default 1..4; the paper names no bound) and the ratio of the shorter to the
longer token count is at least `min_length_ratio` (default 0.75).

Tokenisation: lower-cased; Italian elisions are split after the apostrophe ("l'uomo" → "l'", "uomo";
straight and typographic apostrophes are one), so changing "l'uomo" to "la donna" counts the article and
the noun; punctuation is dropped; words are runs of letters and digits (accented letters included).

Contradiction check: an NLI classifier (`generation.backends.nli.NLIClassifier`) reads TS as premise and
FS as hypothesis; the pair passes when "contradiction" is the most probable label.

`check_item` records one insert-only `ItemCheck` per statement pair checked (aspect "statement:<index>",
pass or fail with the reasons in the note and the pair in `subject`); the latest check of a pair counts
while the pair is unchanged. `edit_false_statement` lets a curator rewrite a false statement of an item in an
unfrozen version; the edit re-runs the structural check.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.curation_models import ItemCheck
from annotation.models import BenchmarkItem, BenchmarkVersion, FrozenError
from annotation.payloads import validate_payload

BENCHMARK = "maia"
ASPECT_PREFIX = "statement:"
MIN_EDITS = 1
MAX_EDITS = 4
MIN_LENGTH_RATIO = 0.75
CONTRADICTION = "contradiction"
MAX_STATEMENT_LENGTH = 2000

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'", "\u02bc": "'"})
_TOKEN = re.compile(r"[^\W_]+'|[^\W_]+")


class StatementError(ValidationError):
    """A false statement cannot be edited as asked."""


@dataclass(frozen=True)
class Bounds:
    min_edits: int = MIN_EDITS
    max_edits: int = MAX_EDITS
    min_length_ratio: float = MIN_LENGTH_RATIO

    def __post_init__(self):
        if not 0 <= self.min_edits <= self.max_edits:
            raise ValueError(f"Edit bounds must satisfy 0 <= min <= max; got {self.min_edits}..{self.max_edits}.")
        if not 0 < self.min_length_ratio <= 1:
            raise ValueError(f"The length ratio bound must lie in (0, 1]; got {self.min_length_ratio}.")


@dataclass
class PairCheck:
    """The outcome of checking one (true, false) statement pair."""

    true_statement: str
    false_statement: str
    edits: int
    length_ratio: float
    contradiction: float | None = None  # probability of "contradiction"; None when NLI was not run
    nli_label: str = ""  # the most probable NLI label
    reasons: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.reasons

    @property
    def verdict(self) -> str:
        return ItemCheck.Verdict.PASS if self.ok else ItemCheck.Verdict.FAIL

    def note(self) -> str:
        if self.reasons:
            return "; ".join(self.reasons)
        nli = (f"contradiction {self.contradiction:.2f}" if self.contradiction is not None
               else "contradiction not checked")
        return f"{self.edits} word edits, length ratio {self.length_ratio:.2f}, {nli}"

    def subject(self) -> dict:
        return {"true": self.true_statement, "false": self.false_statement, "edits": self.edits,
                "length_ratio": round(self.length_ratio, 4), "contradiction": self.contradiction,
                "nli_label": self.nli_label, "reasons": list(self.reasons)}


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, elided articles and prepositions kept with their apostrophe."""
    return _TOKEN.findall(text.lower().translate(_APOSTROPHES))


def edit_distance(first: list[str], second: list[str]) -> int:
    """Levenshtein distance over tokens (insertions, deletions and substitutions cost 1)."""
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, 1):
        current = [i]
        for j, b in enumerate(second, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1]


def structural(true_statement: str, false_statement: str, bounds: Bounds = Bounds()) -> PairCheck:
    """The structural check alone (token edit distance and length ratio)."""
    a, b = tokens(true_statement), tokens(false_statement)
    edits = edit_distance(a, b)
    ratio = min(len(a), len(b)) / max(len(a), len(b)) if a and b else 0.0
    reasons = []
    if not b:
        reasons.append("the false statement has no words")
    elif edits < bounds.min_edits:
        reasons.append("the false statement does not change the true one" if edits == 0 else
                       f"{edits} word edits, fewer than {bounds.min_edits}")
    elif edits > bounds.max_edits:
        reasons.append(f"{edits} word edits, more than {bounds.max_edits}: not a minimal pair")
    if b and ratio < bounds.min_length_ratio:
        reasons.append(f"length ratio {ratio:.2f} ({len(a)} vs {len(b)} words) below {bounds.min_length_ratio:.2f}")
    return PairCheck(true_statement, false_statement, edits, ratio, reasons=reasons)


def _contradiction_label(nli) -> str:
    matches = [label for label in nli.labels if label.strip().lower() == CONTRADICTION]
    if len(matches) != 1:
        raise ValueError(f"The NLI model has no single {CONTRADICTION!r} label (labels: {nli.labels}).")
    return matches[0]


def add_contradiction(checks: list[PairCheck], nli) -> None:
    """Run the NLI classifier over the pairs (one batch) and add a reason where FS does not contradict TS."""
    if not checks:
        return
    label = _contradiction_label(nli)
    probabilities = nli.probabilities([c.true_statement for c in checks], [c.false_statement for c in checks])
    for check, probs in zip(checks, probabilities, strict=True):
        check.contradiction = float(probs[label])
        check.nli_label = max(probs, key=probs.get)
        if check.nli_label != label:
            check.reasons.append(f"NLI reads the false statement as {check.nli_label.lower()} with the true one "
                                 f"(contradiction {check.contradiction:.2f})")


def check_pair(true_statement: str, false_statement: str, nli=None, *, bounds: Bounds = Bounds()) -> PairCheck:
    """Structural check, and the contradiction check when an NLI classifier is given."""
    check = structural(true_statement, false_statement, bounds)
    if nli is not None:
        add_contradiction([check], nli)
    return check


def pairs_of(payload: dict) -> list[tuple[str, str]]:
    trues, falses = payload.get("true_statements"), payload.get("false_statements")
    if not isinstance(trues, list) or not isinstance(falses, list):
        return []
    return list(zip(trues, falses, strict=False))


def aspect(index: int) -> str:
    return f"{ASPECT_PREFIX}{index}"


def check_item(item: BenchmarkItem, nli=None, *, by, bounds: Bounds = Bounds(),
               only: Iterable[int] | None = None) -> list[PairCheck]:
    """Check each statement pair of a `question` item (or the pairs of the indices `only` names) and
    record one `ItemCheck` per pair checked (checked by `by`, the person or service account that ran the
    check). Items without statements record nothing."""
    pairs = list(enumerate(pairs_of(item.payload)))
    if only is not None:
        chosen = set(only)
        pairs = [(index, pair) for index, pair in pairs if index in chosen]
    checks = [structural(t, f, bounds) for _, (t, f) in pairs]
    if nli is not None:
        add_contradiction(checks, nli)
    ItemCheck.objects.bulk_create([
        ItemCheck(item=item, aspect=aspect(index), verdict=check.verdict, note=check.note(),
                  subject=check.subject(), checked_by=by)
        for (index, _), check in zip(pairs, checks, strict=True)])
    return checks


def _index(aspect_name: str) -> int | None:
    rest = aspect_name.removeprefix(ASPECT_PREFIX)
    return int(rest) if aspect_name.startswith(ASPECT_PREFIX) and rest.isdigit() else None


@dataclass
class FailingPair:
    index: int
    true_statement: str
    false_statement: str
    check: ItemCheck


@dataclass
class ItemFailures:
    item: BenchmarkItem
    pairs: list[FailingPair]


def current_checks(item: BenchmarkItem, checks=None) -> dict[int, ItemCheck]:
    """The latest statement check per pair index that still describes the item's current pair."""
    checks = item.checks.filter(aspect__startswith=ASPECT_PREFIX) if checks is None else checks
    pairs = pairs_of(item.payload)
    latest: dict[int, ItemCheck] = {}
    for check in sorted(checks, key=lambda c: (c.checked_at, c.pk), reverse=True):
        index = _index(check.aspect)
        if index is None or index in latest or index >= len(pairs):
            continue
        subject = check.subject if isinstance(check.subject, dict) else {}
        if (subject.get("true"), subject.get("false")) == pairs[index]:
            latest[index] = check
    return latest


def failing_pairs(version) -> list[ItemFailures]:
    """Items of a version whose current statement checks fail, with the failing pairs."""
    items = (BenchmarkItem.objects.filter(version=version, checks__aspect__startswith=ASPECT_PREFIX,
                                          checks__verdict=ItemCheck.Verdict.FAIL)
             .distinct().order_by("external_id"))
    found = []
    for item in items:
        checks = [c for c in item.checks.all() if c.aspect.startswith(ASPECT_PREFIX)]
        pairs = pairs_of(item.payload)
        failing = [FailingPair(index, *pairs[index], check)
                   for index, check in sorted(current_checks(item, checks).items())
                   if check.verdict == ItemCheck.Verdict.FAIL]
        if failing:
            found.append(ItemFailures(item, failing))
    return found


def edit_false_statement(user, item: BenchmarkItem, index: int, text: str, *,
                         bounds: Bounds = Bounds()) -> PairCheck:
    """Replace false statement `index` of an item in an unfrozen version and record the structural check
    of the new pair."""
    text = (text or "").strip()
    if not text:
        raise StatementError("Write the false statement.")
    if len(text) > MAX_STATEMENT_LENGTH:
        raise StatementError(f"A statement has at most {MAX_STATEMENT_LENGTH} characters.")
    with transaction.atomic():
        item = BenchmarkItem.objects.select_for_update().select_related("version__benchmark").get(pk=item.pk)
        if item.version.frozen:
            raise FrozenError(f"Version {item.version} is frozen: its statements cannot change.")
        pairs = pairs_of(item.payload)
        if not 0 <= index < len(pairs):
            raise StatementError(f"Item {item.external_id} has no statement pair {index}.")
        payload = dict(item.payload)
        falses = list(payload["false_statements"])
        falses[index] = text
        payload["false_statements"] = falses
        validate_payload(item.version.benchmark.slug, payload)
        item.payload = payload
        item.save(update_fields=["payload"])
        check = structural(pairs[index][0], text, bounds)
        ItemCheck.objects.create(item=item, aspect=aspect(index), verdict=check.verdict, note=check.note(),
                                 subject=check.subject(), checked_by=user)
    return check


def statement_version(pk: int) -> BenchmarkVersion | None:
    """A version of the benchmark these checks belong to, or None."""
    return (BenchmarkVersion.objects.select_related("benchmark")
            .filter(pk=pk, benchmark__slug=BENCHMARK).first())


def statement_item(pk: int) -> BenchmarkItem | None:
    """A `question` item of the benchmark, or None."""
    return (BenchmarkItem.objects.select_related("version__benchmark")
            .filter(pk=pk, version__benchmark__slug=BENCHMARK, payload__kind="question").first())
