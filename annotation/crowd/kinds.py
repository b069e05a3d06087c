"""Study kinds: how a kind of study's answers are read back and checked when a reviewer edits them.

Ordinary studies (`step_kind` "form") use the generic forms of `annotation.crowd.forms`. A benchmark
workflow with its own answer shape (e.g. a task in steps) registers its kind here, so the
review queue shows its answers readably, shows the media as its workers saw them (`review_media`),
offers an edit form shaped like its answers (`edit_form`) and checks an edit-and-approve against its
own rules. A kind that leaves `review_media` or `edit_form` unset gets the generic ones
(`annotation.crowd.curation`): the item's image and video, and the study's form filled in.

A kind that writes benchmark items (NL-EYE's scene writing) may also declare:
- `fixed_form`: the form its workers fill in, set by the kind (a study of the kind gets it as its
  `form_schema`; the curator does not build one), checked by the kind's own `validate` on submit;
- `setup(created_by, settings, with_rows=…) -> StudySetup`: what a new study of the kind starts with
  where its creator gave none (the version its approved work goes to; its first items when
  `with_rows`);
- `output_benchmark`: the benchmark whose unfrozen versions the study's `output_version` may name;
- `rejection_criteria`: (value, label) pairs; a rejection then names one (`Submission.review_criterion`);
- `on_approved(submission)`: called inside the review's transaction when a submission is approved
  (its `final_data` as approved); an error it raises undoes the decision;
- `on_submitted(submission)`: called once a worker's submission is saved (after its transaction, so
  that concurrent submissions of the same item each see the other's once committed), e.g. to move an
  item on when enough people have answered it;
- `review_extra(study, submissions) -> {submission id: {"template", **context}}`: what the review
  queue shows beside each submission's answers (e.g. the closest existing items);
- `pages`: (label, URL name) of curators' pages about a study of the kind, each taking its `slug`;
  the study page and its review queue link them;
- `item_rows(payload) -> [{"key", "label", "kind", "value"}]`: how the task page shows an item, in the
  kind's own order and words (the generic rows of every payload key otherwise).
- `task_media(item) -> [{"part", "label", "url", "poster_url"}]`: the players the task page shows for an
  item, in place of the item's own image and video (e.g. some clips of a video, never the whole of it).
- `item_row(study, row) -> problem | None`: for a kind whose items must be its own (e.g. items that
  link a benchmark item), turns a row added on the study's items page or through the API into the
  kind's item row, in place, or names the row's problem (then nothing is added).
- `check_rows(study, rows) -> [problem | None]`: the same for the rows of one batch of the items page
  at once (in place, a problem or None per row), for a kind whose check spans the batch (e.g. one item
  per video); `api_rows(study, rows) -> rows`: the rows posted to the API as the kind's item rows,
  resolved as one batch (a CrowdError refuses them all). `items_help`: a template the items page
  includes in its help on uploaded files.
- `own_media`: the kind grants its workers' media itself (a media grant of its own,
  `annotation.access`); the item's own image and video are then not streamed to them.
- `steps`: a kind whose claims go in steps, each saved and submitted at the kind's own API routes; the
  generic draft and submit refuse its claims (409), and a worker's handed-in answers are shown as rows.
- `task_page(study, claim) -> {"template", **context}`: the claim's page in place of the generic task
  page (private: no cache keeps it); `task_preview(study) -> {"template", **context}`: the read-only
  example a platform shows before a worker accepts the task.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from annotation.crowd import answers, forms


@dataclass(frozen=True)
class StudySetup:
    """What a new study of a kind starts with: other settings (e.g. `output_version`) and item rows."""

    settings: dict = field(default_factory=dict)
    rows: list = field(default_factory=list)


@dataclass(frozen=True)
class StudyKind:
    name: str
    readable: Callable[[dict, dict, dict], list[dict]]  # (form schema, item payload, answers) → label/value rows
    validate: Callable[[dict, dict, dict], dict]  # (form schema, item payload, answers) → clean answers
    uses_form: bool = True  # whether the study's `form_schema` is the form its workers fill in
    one_item_per_video: bool = False  # whether a study of this kind holds each video once
    # item → [{"kind": "video"|"image", "url", "poster_url", "label"}], the media a reviewer sees
    review_media: Callable[[object], list[dict]] | None = None
    # (form schema, item payload, answers) → {"template", "shape": how the page reads it back ("form":
    # the generic form's fields, "paths": inputs named `data-path="step.field.index"`), **context}
    edit_form: Callable[[dict, dict, dict], dict] | None = None
    fixed_form: dict | None = None
    setup: Callable[..., StudySetup] | None = None
    output_benchmark: str = ""
    rejection_criteria: tuple[tuple[str, str], ...] = ()
    on_approved: Callable[[object], None] | None = None
    on_submitted: Callable[[object], None] | None = None
    review_extra: Callable[[object, list], dict] | None = None
    pages: tuple[tuple[str, str], ...] = ()
    item_rows: Callable[[dict], list[dict]] | None = None
    item_row: Callable[[object, dict], str | None] | None = None
    task_media: Callable[[object], list[dict]] | None = None
    check_rows: Callable[[object, list[dict]], list[str | None]] | None = None
    api_rows: Callable[[object, list[dict]], list[dict]] | None = None
    items_help: str = ""
    own_media: bool = False
    steps: tuple[str, ...] = ()
    task_page: Callable[[object, object], dict] | None = None
    task_preview: Callable[[object], dict] | None = None

    def criterion_label(self, value: str) -> str:
        return dict(self.rejection_criteria).get(value, value)


_KINDS: dict[str, StudyKind] = {}


def register(kind: StudyKind) -> StudyKind:
    _KINDS[kind.name] = kind
    return kind


def names() -> list[str]:
    """Every kind a study may have: the generic form and the registered workflows."""
    return [FORM.name, *sorted(name for name in _KINDS if name != FORM.name)]


def with_forms() -> list[str]:
    """The kinds whose workers fill in the study's configured form."""
    return [name for name in names() if named(name).uses_form]


def with_output() -> list[str]:
    """The kinds whose approved work adds items to the study's `output_version`."""
    return [name for name in names() if named(name).output_benchmark]


def with_own_media() -> list[str]:
    """The kinds that grant their workers' media themselves (`StudyKind.own_media`)."""
    return [name for name in names() if named(name).own_media]


def named(name: str) -> StudyKind:
    """The kind registered under `name`; generic forms unless a workflow registered its own."""
    return _KINDS.get(name) or FORM


def of(study) -> StudyKind:
    """The kind of a study; generic forms unless a workflow registered its own."""
    return named(study.step_kind)


FORM = StudyKind("form", answers.format_answers, forms.validate)
