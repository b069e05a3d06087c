"""MAIA statement generation (seeds/004 §3 "Statement Collection", App. A.2; SPEC §5 Curation 6): a text
model proposes the statements of a curation version's questions; people decide in the proposals queue,
and what they accept reaches the questions through `annotation.benchmarks.maia.statements`.

- **True statements** (kind `maia_true_statements`, `TRUE_TASK`): as in the paper, one prompt per
  question holds the question, its category and its 8 answers and asks, in Italian, for 8 true
  statements, one per answer in order, each joining the question's content with its answer's. The
  answer must be exactly 8 numbered lines (`1. …` to `8. …`, blank lines aside) or a JSON list of 8
  strings (`read_true_statements`); anything else is malformed, with the reason. The 8 statements are
  the proposal's fields `statement_1` … `statement_8`, so a reviewer corrects any of them.
- **False statements** (kind `maia_false_statements`, `FALSE_TASK`): one prompt per true statement asks
  for a minimal-pair false statement that changes only the element the question's category is about
  (the prompt holds the category's definition from its `CategoryDefinition`, with the sub-type's for
  the causal ones) and keeps the sentence's structure. The answer is the false statement alone, one line.
  Reviewers see a word diff against the true statement and a flag where the structural check
  (`minimal_pairs.structural`) fails.
- **Starting** (`start_true_statements`, `start_false_statements`): over an unfrozen MAIA version,
  one set for its questions waiting for true statements (`statements.ready_for_true`), or for the pairs
  of its questions with true statements and no accepted false statement; a question or pair whose
  earlier proposal is still being generated or waits for a decision is left out.
  `regenerate_false_statement` asks for a new false statement of a pair under review (the failing one and
  why it failed are in the prompt). Curators and admins only; ProposalError says what is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from annotation.benchmarks.maia import categories, minimal_pairs, statements
from annotation.benchmarks.maia.payload import N_ANSWERS
from annotation.models import BenchmarkItem, BenchmarkVersion
from config import json_text
from config.roles import ADMIN, CURATOR, has_role
from generation import proposals, selectors
from generation.models import ProposalSet
from generation.proposals import ProposalError, ProposalField, ProposalTask, chat

SLUG = statements.SLUG
TRUE_KIND = "maia_true_statements"
FALSE_KIND = "maia_false_statements"
MAX_STATEMENT = minimal_pairs.MAX_STATEMENT_LENGTH


# --- Categories in the prompts -------------------------------------------------------------------

def category_inputs(release_name: str) -> dict:
    """The category of a question as the prompts show it: its release name, its names and its definition
    (for a category with sub-types named by the release, e.g. `CausaleImplicita`, the sub-type's too)."""
    row = categories.category(categories.category_key(release_name))
    info = row.instructions or {}
    definition = row.description.strip()
    base = str(release_name).split("_", 1)[0]
    names, subtypes = info.get("release_names") or [], info.get("subtypes") or []
    if len(subtypes) == len(names) and base in names:
        subtype = subtypes[names.index(base)]
        definition = f"{definition} {subtype['name']}: {subtype['definition']}".strip()
    name_it = str(info.get("name_it") or "").strip()
    return {"category": release_name,
            "category_name": f"{name_it} ({row.name})" if name_it and name_it != row.name else row.name,
            "category_definition": definition}


# --- True statements ---------------------------------------------------------------------------

TRUE_INSTRUCTION = (
    "Ti vengono date una domanda su un video, la sua categoria di ragionamento e le 8 risposte che 8 persone "
    "diverse hanno dato alla domanda dopo aver guardato il video. Per ciascuna risposta scrivi un'affermazione "
    "vera: una frase dichiarativa in italiano che unisca il contenuto della domanda con quello della risposta "
    "corrispondente, in modo che si capisca da sola, senza leggere la domanda. Non aggiungere informazioni che "
    "non sono nella domanda o nella risposta e non toglierne. Dove possibile, varia le parole da "
    "un'affermazione all'altra senza cambiarne il significato.")
TRUE_FORMAT = (
    "Scrivi esattamente 8 affermazioni, una per risposta e nello stesso ordine delle risposte. Rispondi solo "
    "con l'elenco numerato, un'affermazione per riga, in questa forma:\n"
    + "\n".join(f"{n}. <affermazione {n}>" for n in range(1, N_ANSWERS + 1)))


def _category_line(inputs: dict) -> str:
    name = str(inputs.get("category_name") or inputs["category"]).strip()
    definition = str(inputs.get("category_definition") or "").strip()
    return f"Categoria: {name}" + (f". {definition}" if definition else "")


def build_true_prompt(inputs: dict, options: dict) -> list:
    """One prompt for a question's 8 answers (the paper's "8 TSs from the 8 answers in one prompt")."""
    answers = inputs["answers"]
    if not isinstance(answers, list) or len(answers) != N_ANSWERS:
        raise ValueError(f"a question needs its {N_ANSWERS} answers")
    text = "\n\n".join([
        TRUE_INSTRUCTION,
        _category_line(inputs),
        f"Domanda: {str(inputs['question']).strip()}",
        "Risposte:\n" + "\n".join(f"{n}. {str(answer).strip()}" for n, answer in enumerate(answers, 1)),
        TRUE_FORMAT,
    ])
    return chat([text], system=options.get("system", ""))


_NUMBERED = re.compile(r"(\d+)[.)][ \t]+(\S.*)")


def read_true_statements(text: str) -> dict:
    """The 8 statements of an output that is exactly 8 numbered lines (`1. …` or `1) …`, in order;
    blank lines are skipped) or a JSON list of 8 strings. ValueError says what is wrong."""
    if text.startswith("["):
        try:
            value = json_text.loads(text, keep_nul=True)  # model output
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
        if len(value) != N_ANSWERS:
            raise ValueError(f"expected a JSON list of {N_ANSWERS} statements, got {len(value)}")
        wrong = [str(n) for n, entry in enumerate(value, 1) if not isinstance(entry, str)]
        if wrong:
            raise ValueError(f"statement {', '.join(wrong)} of the JSON list is not a string")
        return dict(zip(statements.TRUE_FIELDS, value, strict=True))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    found = []
    for number, line in enumerate(lines, 1):
        match = _NUMBERED.fullmatch(line)
        if match is None:
            raise ValueError(f"line {number} is not a numbered statement ('{number}. …'): {line[:80]!r}")
        if int(match.group(1)) != number:
            raise ValueError(f"line {number} is numbered {match.group(1)}: the statements must be numbered 1 to "
                             f"{N_ANSWERS} in order")
        found.append(match.group(2).strip())
    if len(found) != N_ANSWERS:
        raise ValueError(f"expected {N_ANSWERS} numbered statements, got {len(found)}")
    return dict(zip(statements.TRUE_FIELDS, found, strict=True))


def _folded(text: str) -> str:
    return " ".join(text.lower().split())


def true_flags(fields: dict, inputs: dict) -> list[str]:
    """Statements that repeat another one of the question, or that are questions."""
    texts = [fields.get(name) for name in statements.TRUE_FIELDS]
    found, seen = [], {}
    for number, text in enumerate(texts, 1):
        if not isinstance(text, str):
            continue
        if text.rstrip().endswith("?"):
            found.append(f"Statement {number} is a question, not a statement.")
        earlier = seen.setdefault(_folded(text), number)
        if earlier != number:
            found.append(f"Statement {number} repeats statement {earlier}.")
    return found


TRUE_INSTRUCTIONS = """Check the 8 true statements proposed for a question from its 8 answers. Statement n must
say what answer n says, joined with the question, as one Italian declarative sentence that stands on
its own, adding nothing. **Accept** them when all 8 are right; **correct** the ones that are not (the
others stay as proposed); **reject** them (with the reason) when they are beyond fixing. Accepted
statements are written into the question, with this proposal as their source."""

TRUE_TASK = proposals.register(ProposalTask(
    name=TRUE_KIND, label="MAIA: 8 true statements from a question's answers",
    fields=tuple(ProposalField(name, label=f"true statement {n}", max_length=MAX_STATEMENT, single_line=True)
                 for n, name in enumerate(statements.TRUE_FIELDS, 1)),
    build_prompt=build_true_prompt, reader=read_true_statements,
    required_inputs=("item_id", "question", "category", "answers"),
    review_inputs=("external_id", "category_name", "question", "answers"),
    instructions=TRUE_INSTRUCTIONS, on_outcome=statements.apply_true, flags=true_flags,
), replace=True)


# --- False statements --------------------------------------------------------------------------

FALSE_INSTRUCTION = (
    "Ti viene data un'affermazione vera su un video, scritta a partire da una domanda della categoria di "
    "ragionamento indicata. Scrivi un'affermazione falsa che formi con essa una coppia minima: cambia soltanto "
    "l'elemento dell'affermazione su cui verte la categoria, con il minor numero possibile di parole, e lascia "
    "invariato tutto il resto, compresa la struttura della frase. L'affermazione falsa deve contraddire quella "
    "vera.")
FALSE_FORMAT = "Rispondi solo con l'affermazione falsa, su una sola riga."


def build_false_prompt(inputs: dict, options: dict) -> list:
    """One prompt per true statement, with the category's definition (and, when regenerating, the false
    statement that failed and why)."""
    parts = [FALSE_INSTRUCTION, _category_line(inputs), f"Domanda: {str(inputs['question']).strip()}",
             f"Affermazione vera: {str(inputs['true_statement']).strip()}"]
    previous = str(inputs.get("previous_false_statement") or "").strip()
    if previous:
        problem = str(inputs.get("previous_problem") or "").strip()
        parts.append(f"Questa affermazione falsa non ha superato i controlli{f' ({problem})' if problem else ''}: "
                     f"non ripeterla.\n{previous}")
    parts.append(FALSE_FORMAT)
    return chat(["\n\n".join(parts)], system=options.get("system", ""))


def false_flags(fields: dict, inputs: dict) -> list[str]:
    """The structural check of the pair (token edit distance and length ratio)."""
    text, true = fields.get(statements.FALSE_FIELD), inputs.get("true_statement")
    if not isinstance(text, str) or not isinstance(true, str):
        return []
    check = minimal_pairs.structural(true, text)
    return [] if check.ok else [f"Not a minimal pair of its true statement: {'; '.join(check.reasons)}."]


FALSE_INSTRUCTIONS = """Check the false statement proposed for a true statement. It must change only the element
the question's category is about, with as few words as possible, keep the sentence's structure, and
contradict the true statement. **Accept** it, **correct** it, or **reject** it with the reason. The
question's false statements are written into it once all 8 are accepted; the pairs are then checked
(structure and NLI contradiction) and failing ones come back for review."""

FALSE_TASK = proposals.register(ProposalTask(
    name=FALSE_KIND, label="MAIA: a minimal-pair false statement",
    fields=(ProposalField(statements.FALSE_FIELD, label="false statement", max_length=MAX_STATEMENT,
                          single_line=True),),
    build_prompt=build_false_prompt, output="text",
    required_inputs=("item_id", "index", "question", "category", "true_statement"),
    review_inputs=("external_id", "category_name", "category_definition", "question", "answer", "true_statement",
                   "previous_false_statement", "previous_problem"),
    instructions=FALSE_INSTRUCTIONS, on_outcome=statements.apply_false, flags=false_flags,
    compare_with={statements.FALSE_FIELD: "true_statement"},
), replace=True)


# --- Entries ------------------------------------------------------------------------------------

def true_key(item_id: int) -> str:
    return f"{SLUG}:{item_id}:true"


def false_key(item_id: int, index: int) -> str:
    return f"{SLUG}:{item_id}:false:{index}"


def waiting_proposals(kind: str, keys: Iterable[str]):
    """Proposals of these keys still being generated or parsed and waiting for a decision."""
    return selectors.waiting_proposals(kind, keys)


class _Categories(dict):
    def __missing__(self, release_name):
        self[release_name] = category_inputs(release_name)
        return self[release_name]


def _base_inputs(item: BenchmarkItem, known: _Categories) -> dict:
    payload = item.payload
    try:
        category = known[payload["category"]]
    except categories.CategoryError as exc:
        raise ProposalError(f"{item.external_id}: {exc.message}") from None
    return {"item_id": item.pk, "version_id": item.version_id, "external_id": item.external_id,
            "video": payload.get("video", ""), "question": payload["question"], **category}


def version_records(version: BenchmarkVersion):
    return statements.records().filter(item__version=version).order_by("item__external_id", "item_id")


def true_entries(version: BenchmarkVersion) -> list[dict]:
    """One entry per question of the version waiting for its true statements and for no proposal."""
    ready = [record for record in version_records(version) if statements.ready_for_true(record)]
    waiting = set(waiting_proposals(TRUE_KIND, [true_key(r.item_id) for r in ready])
                  .values_list("source_key", flat=True))
    known = _Categories()
    return [{"key": true_key(record.item_id),
             "inputs": {**_base_inputs(record.item, known), "answers": list(record.item.payload["answers"])}}
            for record in ready if true_key(record.item_id) not in waiting]


def _false_entry(item: BenchmarkItem, index: int, known: _Categories, **extra) -> dict:
    payload = item.payload
    return {"key": false_key(item.pk, index),
            "inputs": {**_base_inputs(item, known), "index": index, "answer": payload["answers"][index],
                       "true_statement": payload["true_statements"][index], **extra}}


def false_entries(version: BenchmarkVersion) -> list[dict]:
    """One entry per pair of the version's questions with true statements that has no accepted false
    statement and no proposal in the making or waiting for a decision (for its current true statement)."""
    wanted = [(record.item, index) for record in version_records(version)
              for index in statements.missing_false(record)]
    waiting = {(p.source_key, p.inputs.get("true_statement"))
               for p in waiting_proposals(FALSE_KIND, [false_key(item.pk, index) for item, index in wanted])}
    known = _Categories()
    return [_false_entry(item, index, known) for item, index in wanted
            if (false_key(item.pk, index), item.payload["true_statements"][index]) not in waiting]


# --- Starting -----------------------------------------------------------------------------------

def curation_version(version_id: int) -> BenchmarkVersion:
    """An unfrozen MAIA version; ProposalError otherwise."""
    version = minimal_pairs.statement_version(version_id)
    if version is None:
        raise ProposalError(f"There is no MAIA version #{version_id}.")
    if version.frozen:
        raise ProposalError(f"Version {version} is frozen: its statements cannot change.")
    return version


def _check_user(user) -> None:
    if user is None or not has_role(user, CURATOR, ADMIN):
        raise ProposalError("Only curators and admins start statement generation.")


def _start(kind: str, entries: list[dict], what: str, *, user, name: str = "", **model) -> ProposalSet:
    model_id = model.get("model_id", "")
    return proposals.start_proposals(kind, entries, user=user, name=(name or f"{what} by {model_id}")[:200], **model)


def start_true_statements(version: BenchmarkVersion, *, user, **model) -> ProposalSet:
    """A `maia_true_statements` set over the version's questions waiting for them, and its job."""
    _check_user(user)
    version = curation_version(version.pk)
    entries = true_entries(version)
    if not entries:
        raise ProposalError(f"No question of {version.label} waits for its true statements: a question needs its pool "
                            "checked and passing, and no proposal still waiting for a decision.")
    return _start(TRUE_KIND, entries, f"MAIA true statements of {len(entries)} question(s) of {version.label}",
                  user=user, **model)


def start_false_statements(version: BenchmarkVersion, *, user, **model) -> ProposalSet:
    """A `maia_false_statements` set over the version's pairs waiting for a false statement, and its job."""
    _check_user(user)
    version = curation_version(version.pk)
    entries = false_entries(version)
    if not entries:
        raise ProposalError(f"No true statement of {version.label} waits for its false statement (or each one's "
                            "proposal still waits for a decision).")
    return _start(FALSE_KIND, entries, f"MAIA false statements of {len(entries)} pair(s) of {version.label}",
                  user=user, **model)


def regenerate_false_statement(item: BenchmarkItem, index: int, *, user, **model) -> ProposalSet:
    """A new `maia_false_statements` proposal for pair `index` of a question whose 8 pairs are written (the
    pair under review), and its job; it is accepted like any other, replacing the pair's false statement."""
    _check_user(user)
    record = statements.record_for(item.pk)
    if record is None or record.item.version.frozen:
        raise ProposalError(f"{item.external_id} is no MAIA question under curation in an unfrozen version.")
    item = record.item
    pairs = minimal_pairs.pairs_of(item.payload)
    if len(pairs) != N_ANSWERS:
        raise ProposalError(f"{item.external_id} does not have its {N_ANSWERS} statement pairs yet.")
    if not isinstance(index, int) or not 0 <= index < N_ANSWERS:
        raise ProposalError(f"{item.external_id} has no statement pair {index}.")
    check = minimal_pairs.current_checks(item).get(index)
    failing = check is not None and check.verdict == check.Verdict.FAIL
    entry = _false_entry(item, index, _Categories(), previous_false_statement=pairs[index][1],
                         previous_problem=check.note if failing else "")
    return _start(FALSE_KIND, [entry], f"MAIA false statement {index + 1} of {item.external_id} again",
                  user=user, **model)


# which statements a console or command starts: `true` or `false`
STARTERS = {"true": start_true_statements, "false": start_false_statements}
