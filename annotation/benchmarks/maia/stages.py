"""The stages of MAIA curation (`CurationRecord.stage`), in the order of the paper's pipeline
(seeds/004 §3; SPEC §5).

A MAIA curation version is an unfrozen version of the `maia` benchmark. A question a worker wrote and
a curator approved enters it as a `question_draft` item (video, category with its _A/_B suffix,
question, the answers approved so far); once its pool holds 8 approved answers it becomes a
`question` item in the importer's shape, whose pool is checked, then given its statements. A
version is frozen only when every item is a complete `question` with its statements.
"""

from annotation import curation_stages
from annotation.benchmarks.maia.payload import N_ANSWERS
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem

QUESTION_WRITTEN = "question_written"  # a `question_draft` collecting its 8 answers
POOL_COMPLETE = "pool_complete"  # a `question` with its 8 answers, its pool not yet checked
POOL_CHECKED = "pool_checked"  # pool checks ran (a contradicting pool waits for review)
STATEMENTS = "statements"  # true and false statements written, minimal-pair checks pending or failing
READY = "ready"  # statements checked (or fixed by a person): ready to freeze

STAGES = (
    (QUESTION_WRITTEN, "Question written, collecting answers"),
    (POOL_COMPLETE, "8 answers collected"),
    (POOL_CHECKED, "Pool checked"),
    (STATEMENTS, "Statements written"),
    (READY, "Ready to freeze"),
)
LABELS = dict(STAGES)

curation_stages.declare({
    QUESTION_WRITTEN: {POOL_COMPLETE},
    POOL_COMPLETE: {POOL_CHECKED},
    POOL_CHECKED: {STATEMENTS},
    STATEMENTS: {READY, POOL_CHECKED},  # back when its true statements are rejected
    READY: {STATEMENTS, POOL_CHECKED},  # a statement edited or checked again no longer passes
})

QUESTIONS_PER_CATEGORY = 2  # per video: 2 open questions per category, 24 per video
REFUSAL_PHRASE = "is not complete"


def freeze_check(version) -> list[tuple[str, str]]:
    """(external id, what is missing) for every item of a MAIA version that is not a complete question:
    a draft still collecting answers or, in a curated version, a question without its true and false
    statements."""
    if version.benchmark.slug != "maia":
        return []
    curated = CurationRecord.objects.filter(item__version=version).exists()
    refused = []
    for external_id, payload in BenchmarkItem.objects.filter(version=version).values_list("external_id", "payload"):
        if payload.get("kind") == "question_draft":
            refused.append((external_id, f"has {len(payload.get('answers') or [])} of its {N_ANSWERS} answers"))
        elif curated and not (payload.get("true_statements") and payload.get("false_statements")):
            refused.append((external_id, "has no true and false statements yet"))
    return refused
