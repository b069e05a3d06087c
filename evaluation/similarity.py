"""How close generated answers are to their references: CLIP score and the reference-based text
metrics (ROUGE, BLEU, METEOR, CIDEr, BERTScore), each against *all* references of a question.

- `clip_question_scores(encoder, questions)`: per question, the max and the mean cosine of the CLIP
  text embeddings over every (response, reference) pair (`generation.backends.clip.ClipEncoder`):
  BlackSwan's CLIP score (max per question) and its all-pairs mean.
- `text_similarity(hypotheses, references, language=..., bertscore=None)`: one answer per
  question against its list of references, through the field's libraries:
  - ROUGE-1/2/L F1 (`rouge-score`), best reference per answer, mean over answers;
  - BLEU (`sacrebleu`), corpus-level over all references, as a fraction (score / 100);
  - METEOR 1.5 (the jar `pycocoevalcap` ships, run with Java), scored against all references at
    once (Meteor keeps the best), mean over answers; not computed when Java is missing;
  - CIDEr-D (`pycocoevalcap`), corpus-level, on its own scale (about 0–10);
  - BERTScore F1 (`bert-score`), best reference per answer, mean over answers; only with a model
    (`BertScore(model)`, hub id or local folder), otherwise not computed.
  Text is lower-cased and split into word tokens (`\\w+`, so accented letters stay) for ROUGE,
  METEOR and CIDEr: `rouge-score`'s own tokenizer drops every non-ASCII letter and Meteor's
  `-norm` only knows English. ROUGE stems (Porter) only English; Meteor gets `-l <language>`
  (Italian: Snowball stems). A missing or empty answer scores 0 on every per-answer metric and
  counts as an empty hypothesis in the corpus metrics.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading

CLIP_MODEL = "openai/clip-vit-large-patch14"  # the CLIP score's model, as in BlackSwan's metric/clip_score.py
NOT_COMPUTED_NO_JAVA = "METEOR needs Java (the `java` command) to run the Meteor 1.5 jar"
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


def tokens(text: str) -> list[str]:
    return re.findall(r"\w+", (text or "").lower())


def tokenized(text: str) -> str:
    return " ".join(tokens(text))


# --- CLIP --------------------------------------------------------------------------------------

def clip_question_scores(encoder, questions: list[tuple[list[str], list[str]]]) -> list[tuple[float, float]]:
    """Per question (responses, references): the max and the mean cosine over every (response,
    reference) pair of CLIP text embeddings; every distinct text is embedded once."""
    import numpy as np

    texts = list(dict.fromkeys(text for responses, refs in questions for text in (*responses, *refs)))
    if not texts:
        return []
    embeddings = encoder.encode_text(texts)
    row = {text: i for i, text in enumerate(texts)}
    scores = []
    for responses, refs in questions:
        said, wanted = embeddings[[row[t] for t in responses]], embeddings[[row[t] for t in refs]]
        sims = np.atleast_2d(encoder.cosine(said, wanted))
        scores.append((float(sims.max()), float(sims.mean())))
    return scores


# --- ROUGE, BLEU, CIDEr ---------------------------------------------------------------------------

class _WordTokenizer:
    """rouge-score's tokenizer interface, keeping non-ASCII letters."""

    def tokenize(self, text):
        return tokens(text)


def rouge(hypotheses: list[str], references: list[list[str]], *, language: str = "en") -> dict[str, list[float]]:
    """Per answer and ROUGE type: F1 against its best reference."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=language == "en", tokenizer=_WordTokenizer())
    per_type: dict[str, list[float]] = {name: [] for name in ROUGE_TYPES}
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        best = scorer.score_multi(list(refs), hypothesis) if tokens(hypothesis) else {}
        for name in ROUGE_TYPES:
            per_type[name].append(best[name].fmeasure if name in best else 0.0)
    return per_type


def bleu(hypotheses: list[str], references: list[list[str]]) -> float:
    """Corpus BLEU with every reference (questions with fewer references are padded), in [0, 1]."""
    import sacrebleu

    depth = max((len(refs) for refs in references), default=0)
    streams = [[refs[k] if k < len(refs) else None for refs in references] for k in range(depth)]
    return sacrebleu.BLEU().corpus_score(list(hypotheses), streams).score / 100


def cider(hypotheses: list[str], references: list[list[str]]) -> float:
    from pycocoevalcap.cider.cider import Cider

    keys = [str(i) for i in range(len(hypotheses))]
    wanted = {k: [tokenized(r) for r in refs] for k, refs in zip(keys, references, strict=True)}
    score, _ = Cider().compute_score(wanted, {k: [tokenized(h)] for k, h in zip(keys, hypotheses, strict=True)})
    return float(score)


# --- METEOR -------------------------------------------------------------------------------------

class MeteorError(RuntimeError):
    pass


class Meteor:
    """Meteor 1.5 in one Java process (`-stdio`), as `pycocoevalcap.meteor` runs it, but with the
    language given (`-l it`) on pre-tokenised, lower-cased text instead of English `-norm`."""

    def __init__(self, language: str = "en"):
        from pycocoevalcap.meteor import meteor as packaged

        if shutil.which("java") is None:
            raise MeteorError(NOT_COMPUTED_NO_JAVA)
        command = ["java", "-jar", "-Xmx2G", packaged.METEOR_JAR, "-", "-", "-stdio", "-l", language, "-lower"]
        self.process = subprocess.Popen(command, cwd=os.path.dirname(os.path.abspath(packaged.__file__)),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lock = threading.Lock()

    def _send(self, line: str) -> None:
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()

    def _read(self) -> str:
        answer = self.process.stdout.readline().decode().strip()
        if not answer:
            error = self.process.stderr.read().decode(errors="replace").strip().splitlines()
            raise MeteorError(f"Meteor stopped: {error[-1] if error else 'no output'}")
        return answer

    def segment_scores(self, hypotheses: list[str], references: list[list[str]]) -> list[float]:
        """Each answer's METEOR against all its references (one EVAL over all, as pycocoevalcap asks)."""
        scored = [i for i, hypothesis in enumerate(hypotheses) if tokens(hypothesis)]
        scores = [0.0] * len(hypotheses)
        if not scored:
            return scores
        with self.lock:
            stats = []
            for i in scored:
                self._send(" ||| ".join(["SCORE", *(tokenized(r) for r in references[i]), tokenized(hypotheses[i])]))
                stats.append(self._read())
            self._send(" ||| ".join(["EVAL", *stats]))
            for i in scored:
                scores[i] = float(self._read())
            self._read()  # the corpus-level score
        return scores

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def meteor(hypotheses: list[str], references: list[list[str]], *, language: str = "en") -> list[float]:
    with Meteor(language) as scorer:
        return scorer.segment_scores(hypotheses, references)


# --- BERTScore ----------------------------------------------------------------------------------

class BertScore:
    """BERTScore (bert-score) with a given model, hub id or local folder. The layer is bert-score's
    recommended one for models it knows, else `num_layers` or the model's last layer; no idf
    weighting, no baseline rescaling (bert-score's defaults)."""

    def __init__(self, model: str, *, num_layers: int | None = None, device: str | None = None,
                 batch_size: int = 32):
        from bert_score import BERTScorer
        from bert_score.utils import model2layers

        if num_layers is None:
            num_layers = model2layers.get(model) or model2layers.get(os.path.basename(model.rstrip("/")))
        if num_layers is None:
            from transformers import AutoConfig

            num_layers = AutoConfig.from_pretrained(model).num_hidden_layers
        self.model, self.num_layers = model, num_layers
        self.scorer = BERTScorer(model_type=model, num_layers=num_layers, device=device, batch_size=batch_size)

    def f1(self, hypotheses: list[str], references: list[list[str]]) -> list[float]:
        """Each answer's F1 against its best reference; 0 for an empty answer."""
        scored = [i for i, hypothesis in enumerate(hypotheses) if tokens(hypothesis)]
        values = [0.0] * len(hypotheses)
        if scored:
            _, _, f1 = self.scorer.score([hypotheses[i] for i in scored], [list(references[i]) for i in scored])
            for i, value in zip(scored, f1.tolist(), strict=True):
                values[i] = float(value)
        return values


# --- All of them --------------------------------------------------------------------------------

def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def text_similarity(hypotheses: list[str | None], references: list[list[str]], *, language: str = "en",
                    bertscore: BertScore | None = None) -> dict:
    """Every reference-based metric of the answers (None/'' for missing ones), with `n` answers."""
    hypotheses = [h or "" for h in hypotheses]
    result: dict = {"n": len(hypotheses)}
    if not hypotheses:
        return result
    for name, values in rouge(hypotheses, references, language=language).items():
        result[name] = _mean(values)
    result["bleu"] = bleu(hypotheses, references)
    try:
        result["meteor"] = _mean(meteor(hypotheses, references, language=language))
    except MeteorError as exc:
        result["meteor"] = {"computed": False, "reason": str(exc)}
    result["cider"] = cider(hypotheses, references)
    if bertscore is None:
        result["bertscore"] = {"computed": False, "reason": "no BERTScore model was given (--bertscore-model)"}
    else:
        result["bertscore"] = _mean(bertscore.f1(hypotheses, references))
        result["bertscore_model"] = bertscore.model
    return result
