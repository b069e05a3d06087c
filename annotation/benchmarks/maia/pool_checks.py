"""Checks of MAIA answer pools (SPEC §5): the 8 answers a question collected should agree with each other
and with their question (the paper reports 90.25% of pools in full agreement).

A pool is a `question` item (its `answers`) of a MAIA version, frozen or not.

Lexical diversity (no model needed):
- tokens: the text lower-cased and split on every non-letter (digits, punctuation, spaces and the
  apostrophe), so "l'acqua" gives "l" and "acqua"; content words are the tokens that are not in
  `stopwords_it.STOPWORDS` (which holds the elided forms "l", "dell", "un", …);
- `overlap`: the mean, over the 28 unordered pairs of answers, of the Jaccard index of their content-word
  sets (|A ∩ B| / |A ∪ B|; two answers with no content word at all count as identical, 1.0): high means
  the answers repeat each other's words;
- `ttr`: the content-word type-token ratio of the pool (distinct content words / content-word tokens over
  the 8 answers; 0.0 when the pool has no content word): high means varied wording.

NLI checks (a natural-language-inference classifier through `generation.backends.nli`):
- consistency of an answer with its question: premise = the question, hypothesis = the question followed
  by the answer ("Dove si trova il coniglio? In un prato."); the answer is inconsistent when the label
  "contradiction" has probability ≥ the threshold;
- contradiction between answers: for every ordered pair (i, j), i ≠ j (56 pairs), premise = question +
  answer i, hypothesis = question + answer j (the question makes short answers full statements); the pair
  contradicts when "contradiction" has probability ≥ the threshold.
A pool is in full agreement when no pair contradicts. Each pool checked gets an `ItemCheck` (aspect
"pool_agreement", by the curator who ran the check): verdict fail with the contradicting pairs in its
subject and note, pass otherwise; inconsistent answers are listed too, for the reviewer. Its subject holds
the question and answers checked, so that a check of a pool changed since no longer counts.

Each item checked that is at stage `stages.POOL_COMPLETE` moves to `stages.POOL_CHECKED` (a pool with a
contradiction then waits in the review queue). The checks run as a background job from the pool report's
page (`pool_check_job`) or with `manage.py maia_pool_checks run`.

Review: a failing automatic check puts the pool in the review queue; a curator confirms it (a new failing
check) or overrides it (a new passing check), each with the curator's note. These reviews are people's
decisions on the question (`human_decisions`, the benchmark's registry hook), while its question and answers
are the ones reviewed: a confirmed contradiction rejects it, so it is not frozen until a later review
overrides it or its pool changes.

A question's statements are written once its latest check passes (`annotation.benchmarks.maia.statements`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations, permutations
from statistics import mean

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation import curation_stages, decisions
from annotation.benchmarks.maia import stages
from annotation.benchmarks.maia.stopwords_it import STOPWORDS
from annotation.curation_models import CurationRecord, ItemCheck
from annotation.models import BenchmarkItem, BenchmarkVersion
from generation import model_registry
from generation.registered_models import Use

SLUG = "maia"
ASPECT = "pool_agreement"
DEFAULT_THRESHOLD = 0.5
CONTRADICTION = "contradiction"
REVIEW_CONFIRM = "confirm"
REVIEW_OVERRIDE = "override"

_NON_LETTERS = re.compile(r"[\W\d_]+")


class PoolCheckError(ValidationError):
    """Bad input for a pool check (unknown version, missing model, no such pool)."""


# --- lexical diversity ---------------------------------------------------------------------------

def tokens(text: str) -> list[str]:
    """The text lower-cased and split on non-letters ("L'acqua è fredda" → ["l", "acqua", "è", "fredda"])."""
    return [t for t in _NON_LETTERS.split(text.lower()) if t]


def content_words(text: str) -> list[str]:
    return [t for t in tokens(text) if t not in STOPWORDS]


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def lexical_stats(answers: list[str]) -> dict:
    """{"overlap": mean pairwise Jaccard of content-word sets, "ttr": content-word type-token ratio,
    "pairs": number of pairs, "content_tokens": content-word tokens in the pool}."""
    words = [content_words(a) for a in answers]
    sets = [set(w) for w in words]
    pairs = list(combinations(range(len(answers)), 2))
    every = [w for ws in words for w in ws]
    return {
        "overlap": mean(jaccard(sets[i], sets[j]) for i, j in pairs) if pairs else 1.0,
        "ttr": len(set(every)) / len(every) if every else 0.0,
        "pairs": len(pairs),
        "content_tokens": len(every),
    }


# --- NLI checks ----------------------------------------------------------------------------------

def framed(question: str, answer: str) -> str:
    return f"{question.strip()} {answer.strip()}"


def _contradiction(probs: dict[str, float]) -> float:
    for label, p in probs.items():
        if label.strip().lower() == CONTRADICTION:
            return float(p)
    raise PoolCheckError(f"the NLI model has no {CONTRADICTION!r} label ({sorted(probs)})")


@dataclass
class PoolResult:
    item_id: int
    external_id: str
    category: str
    contradictions: list[dict] = field(default_factory=list)  # {"premise": i, "hypothesis": j, "p": float}
    inconsistent: list[dict] = field(default_factory=list)  # {"answer": i, "p": float}
    lexical: dict = field(default_factory=dict)

    @property
    def agrees(self) -> bool:
        return not self.contradictions


def check_pool(payload: dict, scorer, threshold: float = DEFAULT_THRESHOLD) -> tuple[list, list]:
    """(contradicting ordered pairs, answers inconsistent with the question) of one pool, by `scorer`
    (an object with `probabilities(premises, hypotheses)` as `NLIClassifier` has)."""
    question, answers = payload["question"], payload["answers"]
    statements = [framed(question, a) for a in answers]
    pairs = list(permutations(range(len(answers)), 2))
    premises = [question] * len(answers) + [statements[i] for i, _ in pairs]
    hypotheses = list(statements) + [statements[j] for _, j in pairs]
    probs = scorer.probabilities(premises, hypotheses)
    if len(probs) != len(premises):
        raise PoolCheckError(f"the NLI model gave {len(probs)} results for {len(premises)} pairs")
    scores = [_contradiction(p) for p in probs]
    inconsistent = [{"answer": i, "p": round(scores[i], 4)} for i in range(len(answers)) if scores[i] >= threshold]
    contradictions = [{"premise": i, "hypothesis": j, "p": round(s, 4)}
                      for (i, j), s in zip(pairs, scores[len(answers):], strict=True) if s >= threshold]
    return contradictions, inconsistent


def _subject(item: BenchmarkItem) -> dict:
    return {"question": item.payload.get("question"), "answers": list(item.payload.get("answers") or [])}


def _note(result: PoolResult, answers: list[str]) -> str:
    if not result.contradictions:
        return "No pair of answers contradicts."
    lines = [f"answer {c['premise'] + 1} «{answers[c['premise']]}» contradicts answer {c['hypothesis'] + 1} "
             f"«{answers[c['hypothesis']]}» (p={c['p']})" for c in result.contradictions]
    return "\n".join(lines)


def maia_versions():
    return BenchmarkVersion.objects.filter(benchmark__slug=SLUG).select_related("benchmark")


def version_by_label(label: str) -> BenchmarkVersion:
    version = maia_versions().filter(label=label).first()
    if version is None:
        raise PoolCheckError(f"There is no MAIA version {label!r}.")
    return version


def pools(version: BenchmarkVersion):
    return [item for item in version.items.order_by("external_id", "pk") if item.payload.get("kind") == "question"]


def pool_item(item_id: int) -> BenchmarkItem:
    item = BenchmarkItem.objects.filter(pk=item_id, version__benchmark__slug=SLUG,
                                        payload__kind="question").select_related("version").first()
    if item is None:
        raise PoolCheckError(f"There is no MAIA question #{item_id}.")
    return item


def nli_model(model_id: str | None = None) -> model_registry.ModelChoice:
    """The registered NLI model named (its registry name, or the model id or folder an entry holds), else the
    one settings.MAIA_NLI_MODEL names; PoolCheckError when neither names one or the registry refuses it."""
    model_id = (model_id or getattr(settings, "MAIA_NLI_MODEL", "") or "").strip()
    if not model_id:
        raise PoolCheckError("Name an NLI model (--nli-model, or the MAIA_NLI_MODEL setting).")
    try:
        return model_registry.choose(model_id, use=Use.NLI)
    except model_registry.ModelRefused as exc:
        raise PoolCheckError(str(exc)) from None


def configured_model(model_id: str | None = None) -> str:
    """The model id of the NLI model named, else of settings.MAIA_NLI_MODEL (`nli_model`)."""
    return nli_model(model_id).model_id


def load_scorer(model_id: str | None = None):
    """The NLI classifier named, else settings.MAIA_NLI_MODEL (`nli_model`)."""
    return nli_model(model_id).load()


def run_checks(version: BenchmarkVersion, user, scorer, *, model_id: str = "",
               threshold: float = DEFAULT_THRESHOLD) -> list[PoolResult]:
    """Check every pool of the version and record one `ItemCheck` per pool, all or none."""
    if not 0 < threshold <= 1:
        raise PoolCheckError(f"The threshold must be in (0, 1], not {threshold}.")
    results, checks = [], []
    for item in pools(version):
        contradictions, inconsistent = check_pool(item.payload, scorer, threshold)
        result = PoolResult(item.pk, item.external_id, item.payload.get("category", ""), contradictions,
                            inconsistent, lexical_stats(item.payload["answers"]))
        results.append(result)
        checks.append(ItemCheck(
            item=item, aspect=ASPECT, checked_by=user,
            verdict=ItemCheck.Verdict.PASS if result.agrees else ItemCheck.Verdict.FAIL,
            note=_note(result, item.payload["answers"]),
            subject={**_subject(item), "model": model_id, "threshold": threshold,
                     "contradictions": contradictions, "inconsistent": inconsistent}))
    with transaction.atomic():
        for check in checks:
            check.save()
        curation_stages.move_many(CurationRecord.objects.filter(item_id__in=[r.item_id for r in results],
                                                                stage=stages.POOL_COMPLETE),
                                  stages.POOL_CHECKED, by=user, reason="pool checks ran")
    return results


# --- review -------------------------------------------------------------------------------------

def latest_check(item: BenchmarkItem) -> ItemCheck | None:
    """The latest pool-agreement check of the pool as it is now (a check of other answers does not count)."""
    current = _subject(item)
    for check in item.checks.filter(aspect=ASPECT).order_by("-checked_at", "-id"):
        if {k: check.subject.get(k) for k in current} == current:
            return check
    return None


def review_queue(version: BenchmarkVersion) -> list[tuple[BenchmarkItem, ItemCheck]]:
    """Pools whose latest check is an automatic one that found a contradiction (no curator reviewed it)."""
    queue = []
    for item in pools(version):
        check = latest_check(item)
        if check and check.verdict == ItemCheck.Verdict.FAIL and "review" not in check.subject:
            queue.append((item, check))
    return queue


def review(item_id: int, user, decision: str, note: str = "") -> ItemCheck:
    """A curator's decision on a pool in review: confirm the contradiction (fail) or override it (pass)."""
    if decision not in (REVIEW_CONFIRM, REVIEW_OVERRIDE):
        raise PoolCheckError(f"Decide {REVIEW_CONFIRM!r} or {REVIEW_OVERRIDE!r}, not {decision!r}.")
    item = pool_item(item_id)
    check = latest_check(item)
    if check is None or check.verdict != ItemCheck.Verdict.FAIL or "review" in check.subject:
        raise PoolCheckError(f"{item.external_id} is not waiting for review.")
    return ItemCheck.objects.create(
        item=item, aspect=ASPECT, checked_by=user,
        verdict=ItemCheck.Verdict.FAIL if decision == REVIEW_CONFIRM else ItemCheck.Verdict.PASS,
        note=note.strip() or f"{decision} of the automatic check #{check.pk}",
        subject={**_subject(item), "review": decision, "of_check": check.pk,
                 "contradictions": check.subject.get("contradictions", [])})


def human_decisions(version: BenchmarkVersion) -> list[decisions.Decision]:
    """The curators' reviews of the version's pools (see the module docstring), oldest first."""
    reviews = (ItemCheck.objects.filter(item__version=version, aspect=ASPECT, subject__has_key="review")
               .select_related("item", "checked_by").order_by("checked_at", "id"))
    actions = {REVIEW_CONFIRM: "confirmed the contradiction", REVIEW_OVERRIDE: "overrode the contradiction"}
    return [decisions.from_check(check, ASPECT, "the review of the MAIA pool checks",
                                 action=actions.get(check.subject.get("review"), ""))
            for check in reviews
            if {key: check.subject.get(key) for key in ("question", "answers")} == _subject(check.item)]


# --- report -------------------------------------------------------------------------------------

def _share(agree: int, checked: int) -> float | None:
    return agree / checked if checked else None


def report(version: BenchmarkVersion) -> dict:
    """Share of pools in full agreement (latest current check passes) per category and overall, with
    counts, and each pool's lexical statistics with their means. Unchecked pools are counted apart."""
    rows, by_category = [], defaultdict(lambda: {"pools": 0, "checked": 0, "agree": 0})
    for item in pools(version):
        check = latest_check(item)
        category = item.payload.get("category", "")
        stats = lexical_stats(item.payload["answers"])
        agrees = None if check is None else check.verdict == ItemCheck.Verdict.PASS
        counts = by_category[category]
        counts["pools"] += 1
        counts["checked"] += check is not None
        counts["agree"] += bool(agrees)
        rows.append({"item_id": item.pk, "external_id": item.external_id, "category": category,
                     "overlap": stats["overlap"], "ttr": stats["ttr"], "agrees": agrees,
                     "reviewed": bool(check and "review" in check.subject),
                     "contradictions": len(check.subject.get("contradictions", [])) if check else None})
    categories = [{"category": c, **n, "share": _share(n["agree"], n["checked"])}
                  for c, n in sorted(by_category.items())]
    total = {k: sum(n[k] for n in by_category.values()) for k in ("pools", "checked", "agree")}
    return {
        "version": version.label,
        "overall": {**total, "share": _share(total["agree"], total["checked"])},
        "categories": categories,
        "pools": rows,
        "means": {"overlap": mean(r["overlap"] for r in rows) if rows else None,
                  "ttr": mean(r["ttr"] for r in rows) if rows else None},
    }
