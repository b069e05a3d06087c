"""The closest existing triplets of a written one, for the curators' uniqueness check (seeds/002 §3).

Candidates are every NL-EYE triplet item (the pool and any other version, the imported release
included) and the triplets of scene-writing studies still awaiting review. Each triplet is read as
one text (premise, then both hypotheses) and compared by **lexical** similarity: the cosine of
TF-IDF vectors over word unigrams and bigrams (common function words left out; smoothed idf,
computed over the candidates and the triplets being reviewed). When `settings.SCENE_EMBEDDING_MODEL`
names a local encoder folder (anything transformers' `AutoModel` loads), a **meaning** similarity
is added: the cosine of mean-pooled token embeddings; a triplet is then ranked by the higher of the
two scores. An encoder that cannot be loaded leaves the lexical ranking and says why.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from django.conf import settings
from django.urls import reverse

from annotation.benchmarks.nleye.scene_pool import SLUG, STUDY_KIND
from annotation.crowd.models import Claim, Submission
from annotation.models import BenchmarkItem

SHOWN = 3
MIN_SCORE = 0.05  # closer than this is not worth a curator's look
MAX_CANDIDATES = 5000
NGRAMS = (1, 2)
WORD = re.compile(r"[^\W_]+")
# words too common to tell scenes apart, left out before the n-grams are made
STOPWORDS = frozenset((
    "a", "an", "the", "and", "or", "of", "in", "on", "at", "to", "for", "with", "by", "from", "is", "are", "was",
    "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "his", "her", "their", "our",
    "your", "my", "he", "she", "they", "we", "you", "i", "as", "into", "onto", "over", "under", "up", "down", "out"))
EMBEDDING_BATCH = 64
TEMPLATE = "nleye/_near_duplicates.html"


@dataclass
class Triplet:
    key: str  # "item:<id>" or "submission:<id>"
    label: str
    text: str
    premise: str = ""
    hypotheses: tuple[str, ...] = ()
    url: str = ""


@dataclass
class Match:
    triplet: Triplet
    lexical: float
    meaning: float | None = None

    @property
    def score(self) -> float:
        return max(self.lexical, self.meaning if self.meaning is not None else 0.0)


@dataclass
class Ranking:
    matches: dict[str, list[Match]] = field(default_factory=dict)  # target key → closest first
    meaning: bool = False
    problem: str = ""


def triplet_text(premise: str, *hypotheses: str) -> str:
    return " | ".join(part.strip() for part in (premise, *hypotheses) if part)


def terms(text: str) -> Counter:
    """Word n-grams (lowercased) with their counts."""
    words = [word for word in (w.lower() for w in WORD.findall(text)) if word not in STOPWORDS]
    found = Counter()
    for n in NGRAMS:
        found.update(" ".join(words[i:i + n]) for i in range(len(words) - n + 1))
    return found


class TfIdf:
    """TF-IDF over a fixed set of documents: idf = ln((1 + n) / (1 + df)) + 1, vectors of unit length."""

    def __init__(self, documents: list[Counter]):
        frequency = Counter()
        for document in documents:
            frequency.update(document.keys())
        total = len(documents)
        self.idf = {term: math.log((1 + total) / (1 + count)) + 1 for term, count in frequency.items()}

    def vector(self, document: Counter) -> dict[str, float]:
        weights = {term: count * self.idf.get(term, 1.0) for term, count in document.items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        return {term: w / norm for term, w in weights.items()}


def cosine(u: dict[str, float], v: dict[str, float]) -> float:
    if len(u) > len(v):
        u, v = v, u
    return sum(w * v.get(term, 0.0) for term, w in u.items())


def _dense_cosine(u: list[float], v: list[float]) -> float:
    return float(sum(a * b for a, b in zip(u, v, strict=True)))


@lru_cache(maxsize=2)
def _encoder(folder: str):
    from transformers import AutoModel, AutoTokenizer  # heavy; loaded only when an encoder is configured

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder)
    model.eval()
    return tokenizer, model


def embed(texts: list[str], folder: str) -> list[list[float]]:
    """Unit-length mean-pooled token embeddings of `texts` from the encoder in `folder`."""
    import torch

    tokenizer, model = _encoder(folder)
    out = []
    with torch.no_grad():
        for start in range(0, len(texts), EMBEDDING_BATCH):
            batch = tokenizer(texts[start:start + EMBEDDING_BATCH], padding=True, truncation=True, max_length=128,
                              return_tensors="pt")
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
            pooled = torch.nn.functional.normalize(pooled, dim=-1)
            out.extend(pooled.tolist())
    return out


def rank(targets: list[Triplet], candidates: list[Triplet], *, limit: int = SHOWN, encoder: str | None = None,
         min_score: float = MIN_SCORE) -> Ranking:
    """For each target, the `limit` closest candidates (itself left out), closest first."""
    documents = {t.key: terms(t.text) for t in [*candidates, *targets]}
    model = TfIdf(list(documents.values()))
    vectors = {key: model.vector(document) for key, document in documents.items()}
    ranking = Ranking()
    dense: dict[str, list[float]] = {}
    folder = settings.SCENE_EMBEDDING_MODEL if encoder is None else encoder
    if folder and targets and candidates:
        everyone = {t.key: t.text for t in [*candidates, *targets]}
        try:
            dense = dict(zip(everyone, embed(list(everyone.values()), folder), strict=True))
            ranking.meaning = True
        except (OSError, ValueError, RuntimeError) as exc:
            ranking.problem = f"meaning similarity unavailable ({type(exc).__name__}: {exc})"[:300]
    for target in targets:
        found = []
        for candidate in candidates:
            if candidate.key == target.key:
                continue
            match = Match(candidate, cosine(vectors[target.key], vectors[candidate.key]),
                          _dense_cosine(dense[target.key], dense[candidate.key]) if dense else None)
            if match.score >= min_score:
                found.append(match)
        found.sort(key=lambda m: (-m.score, m.triplet.key))
        ranking.matches[target.key] = found[:limit]
    return ranking


# --- What the review queue shows ----------------------------------------------------------------

def _scenes_of(data: dict) -> tuple[str, str, str]:
    return (data.get("premise") or "", data.get("plausible") or "", data.get("implausible") or "")


def submission_triplet(submission: Submission) -> Triplet:
    premise, plausible, implausible = _scenes_of(submission.final_data or {})
    worker = submission.claim.worker.username if submission.claim_id else ""
    return Triplet(key=f"submission:{submission.pk}", label=f"submission #{submission.pk} by {worker}, awaiting review",
                   text=triplet_text(premise, plausible, implausible), premise=premise,
                   hypotheses=(plausible, implausible))


def item_triplet(item: BenchmarkItem) -> Triplet:
    payload = item.payload or {}
    premise, first, second = (str(payload.get(key) or "") for key in ("premise", "hypothesis1", "hypothesis2"))
    return Triplet(key=f"item:{item.pk}", label=f"{item.version.label}/{item.external_id}",
                   text=triplet_text(premise, first, second), premise=premise, hypotheses=(first, second),
                   url=reverse("version-detail", kwargs={"pk": item.version_id}))


def candidates() -> list[Triplet]:
    """Every NL-EYE triplet item and every written triplet still awaiting review (newest first, capped)."""
    items = (BenchmarkItem.objects.filter(version__benchmark__slug=SLUG, payload__kind="triplet")
             .select_related("version").order_by("-id")[:MAX_CANDIDATES])
    pending = (Submission.objects.filter(claim__study__step_kind=STUDY_KIND, claim__status=Claim.Status.SUBMITTED)
               .select_related("claim__worker").order_by("-id")[:MAX_CANDIDATES])
    return [*(item_triplet(item) for item in items), *(submission_triplet(s) for s in pending)]


def closest_to(submission: Submission, *, limit: int = SHOWN, encoder: str | None = None) -> Ranking:
    """The closest existing triplets of one written triplet."""
    target = submission_triplet(submission)
    return rank([target], candidates(), limit=limit, encoder=encoder)


def review_extra(_study, submissions: list) -> dict:
    """{submission id: what the queue shows beside it}: its closest triplets with their scores."""
    if not submissions:
        return {}
    targets = [submission_triplet(s) for s in submissions]
    ranking = rank(targets, candidates())
    return {s.pk: {"template": TEMPLATE, "matches": ranking.matches.get(t.key, []), "meaning": ranking.meaning,
                   "problem": ranking.problem}
            for s, t in zip(submissions, targets, strict=True)}
