"""Who may work on a study: one statement reads the study's state and every eligibility fact."""

from dataclasses import dataclass
from functools import cache

from django.utils.translation import gettext as _

from annotation.crowd import rows, worker_attributes
from annotation.crowd.errors import NotEligible
from annotation.crowd.models import Study, StudyExclusion, WorkerProfile, WorkerQualification


def profile_for(user) -> WorkerProfile:
    profile, _ = WorkerProfile.objects.get_or_create(user=user)
    return profile


@dataclass(frozen=True)
class Standing:
    """A worker's standing in a study, as the database has it now."""

    state: str
    excluded: bool
    blocked: bool
    invited_only: bool
    invited: bool
    qualified: bool
    attributes: dict


@cache
def _standing_sql(by: str) -> str:
    """The standing query, finding the study by `id` or `slug`; it also returns the study's row."""
    study, exclusion = rows.table(Study), rows.table(StudyExclusion)
    excluded_m2m = rows.table(Study.exclude_workers.through)
    included_m2m = rows.table(Study.include_workers.through)
    profile, granted = rows.table(WorkerProfile), rows.table(WorkerQualification)
    return f"""
        SELECT {rows.select_list(Study, "s")},
          EXISTS (SELECT 1 FROM {exclusion} x WHERE x.study_id = s.id AND x.worker_id = %(user)s),
          EXISTS (SELECT 1 FROM {excluded_m2m} b WHERE b.study_id = s.id AND b.user_id = %(user)s),
          EXISTS (SELECT 1 FROM {included_m2m} i WHERE i.study_id = s.id),
          EXISTS (SELECT 1 FROM {included_m2m} i WHERE i.study_id = s.id AND i.user_id = %(user)s),
          s.required_qualification_id IS NULL OR EXISTS (
            SELECT 1 FROM {granted} g JOIN {profile} p ON p.id = g.profile_id
            WHERE p.user_id = %(user)s AND g.qualification_id = s.required_qualification_id),
          (SELECT p.attributes FROM {profile} p WHERE p.user_id = %(user)s)
        FROM {study} s WHERE s.{by} = %(study)s"""


def _read(by: str, key, user) -> tuple[Study, Standing] | None:
    found = rows.execute(_standing_sql(by), {"user": user.pk, "study": key})
    if not found:
        return None
    columns = len(Study._meta.concrete_fields)
    study = rows.build(Study, found[0][:columns])
    excluded, blocked, invited_only, invited, qualified, attributes = found[0][columns:]
    return study, Standing(state=study.state, excluded=bool(excluded), blocked=bool(blocked),
                           invited_only=bool(invited_only), invited=bool(invited), qualified=bool(qualified),
                           attributes=rows.convert_one(WorkerProfile, "attributes", attributes) or {})


def standing(study: Study, user) -> Standing:
    found = _read("id", study.pk, user)
    if found is None:
        raise Study.DoesNotExist(f"Study {study.pk} no longer exists.")
    return found[1]


def study_and_standing(slug: str, user) -> tuple[Study, Standing] | None:
    """The study with this slug, as the database has it now, and the worker's standing in it (one read)."""
    return _read("slug", slug, user)


def refusal(study: Study, facts: Standing) -> str:
    """Why the worker may not take items of this study; empty when they may."""
    if facts.excluded:
        return _("You are no longer part of this study's pool. Thank you for your work.")
    if facts.blocked:
        return _("This study is not open to your account.")
    if facts.invited_only and not facts.invited:
        return _("This study is open to invited workers only.")
    if not facts.qualified:
        return _("This study needs the qualification '%(name)s'.") % {"name": study.required_qualification.name}
    return worker_attributes.refusal(study.required_attributes, facts.attributes)


def check(study: Study, user) -> Standing:
    """Raise NotEligible with the reason a worker may not take items of this study. Nothing is
    written: a refused request leaves no profile behind."""
    facts = standing(study, user)
    reason = refusal(study, facts)
    if reason:
        raise NotEligible(reason)
    return facts


def is_eligible(study: Study, user) -> bool:
    try:
        check(study, user)
    except NotEligible:
        return False
    return True
