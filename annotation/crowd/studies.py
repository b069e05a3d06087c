"""One way to make a crowd study: `create_study(name=…, created_by=…, rows=…, **settings)`.

Every service that opens a study (proposal review, the benchmarks' own kinds of study, the
human-evaluation studies, the REST API, the demo) makes it here, in one transaction,
so a refused study leaves nothing behind:

1. The name (1 to 200 characters) and the settings are checked, the settings by the rules of
   `annotation.crowd.study_settings` (SettingsError, 400, naming each field), before anything is
   written.
2. The study gets a unique slug (`save_with_unique_slug`). A slug asked for is kept, or refused
   with 409 (SlugTaken) when another study has it. Without one it is made from the name (`slugify`,
   at most `SLUG_BASE_LENGTH` characters, the caller's fallback when the name gives none) and
   `-2`, `-3`, … is added until it is free. The database's unique index decides: the study is
   inserted inside a savepoint and, when another study took that slug first, the next one is
   tried, so two studies made with the same name at the same moment get two slugs, never an error.
3. Its items are created in bulk (`assignment.add_items`). A kind with a fixed form
   (`StudyKind.fixed_form`) gets it as its form; a kind with a `setup` gets the settings and items
   its setup makes where the caller gave none (e.g. the version its approved work goes to).
4. Its first history entry (from "" to its state) is written when the caller gives a reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from annotation.crowd import assignment, history, kinds, study_settings
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study, StudyItem

NAME_LENGTH = Study._meta.get_field("name").max_length
SLUG_LENGTH = Study._meta.get_field("slug").max_length
SLUG_BASE_LENGTH = SLUG_LENGTH - 8  # room for "-" and a number of up to seven digits
MAX_SLUG_TRIES = 10_000


class SlugTaken(CrowdError):
    """The slug asked for belongs to another study."""

    status = 409


@dataclass
class NewStudy:
    study: Study
    items: list[StudyItem] = field(default_factory=list)


def slug_base(name: str, fallback: str | None) -> str:
    """The slug a name gives (`fallback` when it gives none); CrowdError when neither gives one."""
    base = slugify(name)[:SLUG_BASE_LENGTH].strip("-") or slugify(fallback or "")[:SLUG_BASE_LENGTH]
    if not base:
        raise CrowdError("The study needs a name.", details={"name": "letters or digits make its address"})
    return base


def _check_slug(slug: str) -> None:
    try:
        validate_slug(slug)
    except ValidationError:
        raise CrowdError(f"{slug!r} is not a valid study address.",
                         details={"slug": "letters, digits, '-' and '_' only"}) from None
    if len(slug) > SLUG_LENGTH:
        raise CrowdError(f"The study address {slug!r} is too long.",
                         details={"slug": f"at most {SLUG_LENGTH} characters"})


def _numbered(base: str, number: int) -> str:
    return base if number == 1 else f"{base}-{number}"


def _inserted(study: Study, slug: str) -> bool:
    """Insert the study under `slug` in a savepoint; False when another study has that slug."""
    study.slug = slug
    try:
        with transaction.atomic():
            study.save(force_insert=True)
    except IntegrityError:
        study.pk = None
        study._state.adding = True
        if Study.objects.filter(slug=slug).exists():
            return False
        raise  # another constraint refused the study: not ours to hide
    return True


def save_with_unique_slug(study: Study, *, slug: str | None = None, fallback: str | None = "study") -> Study:
    """Insert a new (unsaved) study under `slug`, or under the first free slug its name gives (see the
    module docstring). SlugTaken (409) when `slug` is asked for and taken."""
    if slug:
        _check_slug(slug)
        if not _inserted(study, slug):
            raise SlugTaken(f"A study with the slug {slug!r} already exists.", details={"slug": "taken"})
        return study
    base = slug_base(study.name, fallback)
    taken = set(Study.objects.filter(slug__startswith=base).values_list("slug", flat=True))
    number = 1
    for _try in range(MAX_SLUG_TRIES):
        candidate = _numbered(base, number)
        number += 1
        if candidate not in taken and _inserted(study, candidate):
            return study
    raise CrowdError(f"No free study address starts with {base!r}; give the study another name.", status=409)


def create_study(*, name: str, created_by, rows: Iterable[dict] = (), slug: str | None = None,
                 fallback_slug: str | None = "study", step_kind: str = "form", form_schema: dict | None = None,
                 state: str = Study.State.DRAFT, history_reason: str | None = None, **settings) -> NewStudy:
    """A new study with its items (see the module docstring). `settings` are other `Study` fields;
    `rows` are item rows as `assignment.add_items` takes them."""
    kind = kinds.named(step_kind)
    form_schema = kind.fixed_form if kind.fixed_form is not None else ({} if form_schema is None else form_schema)
    if not isinstance(name, str) or not name.strip() or len(name) > NAME_LENGTH:
        raise CrowdError(f"A study needs a name of 1 to {NAME_LENGTH} characters.",
                         details={"name": f"1 to {NAME_LENGTH} characters"})
    study_settings.check({"step_kind": step_kind, "form_schema": form_schema, **settings})
    if state not in Study.State.values:
        raise CrowdError(f"Unknown study state {state!r}.", details={"state": "unknown"})
    rows = list(rows)
    with transaction.atomic():
        if kind.setup is not None:
            made = kind.setup(created_by, settings, with_rows=not rows)
            settings = {**made.settings, **{k: v for k, v in settings.items() if v is not None}}
            study_settings.check({"step_kind": step_kind, "form_schema": form_schema, **settings})
            rows = rows or made.rows
        study = save_with_unique_slug(
            Study(name=name, step_kind=step_kind, form_schema=form_schema, state=state, created_by=created_by,
                  **settings),
            slug=slug, fallback=fallback_slug)
        items = assignment.add_items(study, rows) if rows else []
        if history_reason is not None:
            history.record(Study, study.pk, "", state, actor=created_by, study=study, reason=history_reason)
    return NewStudy(study=study, items=items)
