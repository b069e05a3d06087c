"""Study kinds: how a kind of study's answers are read back and checked when a reviewer edits them.

Ordinary studies (`step_kind` "form") use the generic forms of `annotation.crowd.forms`. A benchmark
workflow with its own answer shape (BlackSwanSuite's staged reveal) registers its kind here, so the
review queue shows its answers readably and an edit-and-approve is checked against its own rules.
"""

from collections.abc import Callable
from dataclasses import dataclass

from annotation.crowd import forms


@dataclass(frozen=True)
class StudyKind:
    name: str
    readable: Callable[[dict, dict, dict], list[dict]]  # (form schema, item payload, answers) → label/value rows
    validate: Callable[[dict, dict, dict], dict]  # (form schema, item payload, answers) → clean answers


_KINDS: dict[str, StudyKind] = {}


def register(kind: StudyKind) -> StudyKind:
    _KINDS[kind.name] = kind
    return kind


def of(study) -> StudyKind:
    """The kind of a study; generic forms unless a workflow registered its own."""
    return _KINDS.get(study.step_kind) or FORM


def _readable_form(schema: dict, payload: dict, data: dict) -> list[dict]:
    from annotation.crowd.curation import format_answers

    return format_answers(schema, payload, data)


FORM = StudyKind("form", _readable_form, forms.validate)
