"""Yes/no questions, which MAIA's question writers must not write (seeds/004 §3.1, footnote 3).

`is_yes_no(question)` tells whether a question, in Italian or English, asks for a yes or a no. The
question-writing form refuses such a question with `YES_NO_MESSAGE` (in Italian and English) unless a
curator overrides the check.

Rules, applied to the last sentence that ends with "?" (or the whole text when none does), lower-cased,
with curly apostrophes and accents normalised (è → e), in this order:

1. Yes/no by its shape: it ends in "… o no?", "… oppure no?", "… sì o no?", "… o meno?", ", vero?",
   "… or not?" or an English tag (", isn't it?", ", does he?"); or it starts with "è vero che",
   "è possibile/probabile che", "c'è", "c'era", "ci sono", "ci sarà", "esiste/esistono".
2. An indirect question ("Sai dirmi…", "Mi puoi dire…", "Can you tell me…", "Do you know…") is open
   when an interrogative word follows it ("Sai dirmi dove va il cane?"), yes/no otherwise.
3. English inversion: yes/no when it starts (after a leading "and", "so", "well"…) with an auxiliary
   or modal verb: is, are, was, were, am, do, does, did, can, could, will, would, shall, should, may,
   might, must, has, have, had and their negative contractions (isn't, don't, can't…).
4. Otherwise (Italian has no inversion: a yes/no question looks like a statement with a "?") it is
   open when its first or its last clause (clauses split at , ; :) starts with an interrogative word,
   after leading words (e, ma, allora, and…) and up to two prepositions ("In che modo…", "Per quale
   motivo…", "Fino a quando…", "Di che colore…", "In which room…"), or with a request to describe
   ("Descrivi…", "Spiega…", "Describe…"); yes/no when it does not ("Il cane è felice?", "Mentre suona,
   il cantante balla?", "The dog is running?"). Interrogative words: chi, che, cosa (che cosa), quale,
   quali, qual, quanto/a/i/e, dove, quando, come, perché, and the elided dov', com', cos', qual',
   quant' (also written without the apostrophe: dov, com); what, who, whom, whose, which, where, when, why, how.

An alternative question ("È rosso o blu?") reads as yes/no by these rules (the writer should ask "Di
che colore è?"); the curator's override on the form covers a case the rules get wrong.
"""

from __future__ import annotations

import re
import unicodedata

YES_NO_MESSAGE = {
    "it": "Questa sembra una domanda sì/no. MAIA chiede domande aperte: riformulala con una parola "
          "interrogativa (chi, che cosa, quale, quanto, dove, quando, come, perché…).",
    "en": "This looks like a yes/no question. MAIA asks for open-ended questions: rephrase it with a "
          "question word (who, what, which, how many, where, when, how, why…).",
}



def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


EN_AUXILIARIES = _words("""
is are was were am do does did can could will would shall should may might must has have had
isn't aren't wasn't weren't don't doesn't didn't can't cannot couldn't won't wouldn't shan't shouldn't
mightn't mustn't hasn't haven't hadn't
""")
INTERROGATIVES = _words("""
chi che cosa quale quali qual quanto quanta quanti quante dove quando come perche com dov
what who whom whose which where when why how
""")
ELIDED = ("dov'", "com'", "cos'", "qual'", "quant'", "ch'")
PREPOSITIONS = _words("""
a al allo alla ai agli alle ad di del dello della dei degli delle da dal dallo dalla dai dagli dalle in nel
nello nella nei negli nelle con col coi su sul sullo sulla sui sugli sulle per tra fra verso dopo prima
secondo fino oltre
at on of for with from to by after before during into about under near behind until since
""")
LEADERS = _words("e ma allora quindi invece poi so and but ok okay well then now")
# requests for an open answer: "Descrivi…", "Tell me…"
IMPERATIVES = _words("descrivi descrivete spiega spiegate elenca racconta indica describe explain tell list "
                        "name")
# indirect questions, open when an interrogative follows: "Sai dirmi dove…?", "Can you tell me why…?"
INDIRECT = re.compile(r"^(?:(?:mi )?(?:sai|sapresti|puoi|potresti|saprest[ei]) (?:dirmi|dire|indicare|spiegare)"
                      r"|(?:can|could) you (?:tell|say|explain)(?: me)?|do you know|sai) ")
YES_NO_STARTS = ("e vero che", "e possibile che", "e probabile che", "c'e ", "c'era ", "ci sono ", "ci sara ",
                 "ci saranno ", "esiste ", "esistono ")
YES_NO_ENDS = re.compile(r"(?:\bo|\boppure|\bsi o)\s+no\s*\??\s*$|\bo meno\s*\??\s*$|,\s*vero\s*\?\s*$"
                         r"|\bor not\s*\??\s*$|,\s*(?:" + "|".join(
                             sorted(a for a in EN_AUXILIARIES if "'" in a or a in {"is", "are", "do", "does", "did",
                                                                                   "can", "will", "has", "have"}))
                         + r")\s+(?:he|she|it|they|we|you|i|there)\s*\?\s*$")
WORD = re.compile(r"[a-z']+")


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKD", str(text or "")).replace("’", "'").replace("‘", "'").replace("`", "'")
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    return re.sub(r"\s+", " ", text).strip()


def _last_question(text: str) -> str:
    """The last sentence ending with "?" (the question of "Il cane corre. Dove va?"), or the whole text."""
    sentences = [s.strip() for s in re.findall(r"[^.!?]*\?", text)]
    sentences = [s for s in sentences if s.strip("? ")]
    return sentences[-1] if sentences else text


def _is_interrogative(word: str) -> bool:
    return word in INTERROGATIVES or word.startswith(ELIDED) or word.split("'")[0] in INTERROGATIVES


def _starts_open(words: list[str]) -> bool:
    """An interrogative word first, after leading words (e, ma, and…) and up to two prepositions ("per quale
    motivo", "in che modo", "fino a quando", "in which room"); or an imperative asking to describe."""
    index = 0
    while index < len(words) and words[index] in LEADERS:
        index += 1
    if index < len(words) and words[index] in IMPERATIVES:
        return True
    for _ in range(3):
        if index < len(words) and _is_interrogative(words[index]):
            return True
        if index < len(words) and words[index] in PREPOSITIONS:
            index += 1
            continue
        break
    return False


def is_yes_no(question: str) -> bool:
    """Whether `question` (Italian or English) asks for a yes or a no; False for an empty text."""
    text = _last_question(_normalise(question))
    if not WORD.search(text):
        return False
    if YES_NO_ENDS.search(text):
        return True
    body = text.rstrip("? ")
    if body.startswith(YES_NO_STARTS) or body in {s.strip() for s in YES_NO_STARTS}:
        return True
    indirect = INDIRECT.match(body)
    if indirect:
        return not _starts_open(WORD.findall(body[indirect.end():]))
    words = WORD.findall(body)
    start = 0
    while start < len(words) - 1 and words[start] in LEADERS:
        start += 1
    if words[start] in EN_AUXILIARIES:
        return True
    clauses = [WORD.findall(clause) for clause in re.split(r"[,;:]", body)]
    clauses = [clause for clause in clauses if clause]
    return not (_starts_open(clauses[0]) or _starts_open(clauses[-1]))
