"""What the C-VQA verification pages and the `cvqa_verification` command show
(`frontend.benchmarks.cvqa.verification_views`): a counterfactuals version's items per stage with their
verifiers' verdicts, the adjudication queue, the items removed from it with their reasons, and its verification
studies with their progress."""

from __future__ import annotations

from collections import Counter

from django import forms
from django.db.models import Count, Q

from annotation.benchmarks.cvqa import counterfactuals, verification
from annotation.crowd.models import MAX_ANNOTATORS_PER_ITEM, Claim, Study, StudyItem
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem, BenchmarkVersion

STAGE_ORDER = (counterfactuals.PROPOSED, counterfactuals.WRITTEN, counterfactuals.ADJUDICATION,
               counterfactuals.VERIFIED)


def studies_of(version: BenchmarkVersion):
    """The version's verification studies, newest first, with their items and answers counted."""
    return (Study.objects.filter(step_kind=verification.STUDY_KIND, output_version=version)
            .annotate(questions=Count("items", filter=Q(items__role=StudyItem.Role.REGULAR), distinct=True),
                      answered=Count("claims", filter=Q(claims__status__in=(Claim.Status.SUBMITTED,
                                                                            Claim.Status.APPROVED)), distinct=True))
            .order_by("-created_at", "-pk"))


def study_version(slug: str) -> BenchmarkVersion | None:
    study = Study.objects.filter(slug=slug, step_kind=verification.STUDY_KIND).select_related("output_version").first()
    return study.output_version if study else None


def removed_records(version: BenchmarkVersion):
    """The records of the items removed from `version`, newest first."""
    return (CurationRecord.objects.filter(stage=counterfactuals.REMOVED,
                                          working__verification__removed__from_version=version.pk)
            .select_related("item").order_by("-updated_at", "-pk"))


def home_version_id(item_id: int) -> int | None:
    """The version an item is verified in (for a removed item, the one it was removed from)."""
    record = CurationRecord.objects.filter(item_id=item_id).first()
    if record is None:
        return None
    return (record.working.get("verification") or {}).get("removed", {}).get("from_version") or record.item.version_id


def stage_counts(version: BenchmarkVersion) -> dict[str, int]:
    found = Counter(CurationRecord.objects.filter(item__version=version).values_list("stage", flat=True))
    return {stage: found[stage] for stage in (*STAGE_ORDER, *sorted(set(found) - set(STAGE_ORDER))) if found[stage]}


def items(version: BenchmarkVersion) -> list[verification.ItemState]:
    found = (BenchmarkItem.objects.filter(version=version, curation__isnull=False)
             .prefetch_related("media__image").order_by("external_id"))
    return verification.states(found)


def report(version: BenchmarkVersion) -> dict:
    """The version's verification in one dict (the page's context; the command prints its summary)."""
    states = items(version)
    removed = list(removed_records(version))
    return {"version": version, "states": states, "stages": stage_counts(version),
            "adjudication": [state for state in states if state.stage == counterfactuals.ADJUDICATION],
            "removed": removed, "studies": list(studies_of(version)),
            "waiting_for_study": verification.waiting_items(version).count(),
            "can_freeze": bool(states) and all(state.stage == counterfactuals.VERIFIED for state in states)}


def summary(version: BenchmarkVersion) -> dict:
    """The report's figures as plain JSON."""
    found = report(version)
    return {"version": version.label, "items": len(found["states"]), "stages": found["stages"],
            "removed": {record.item.external_id: record.working["verification"]["removed"]["reason"]
                        for record in found["removed"]},
            "adjudication": [state.item.external_id for state in found["adjudication"]],
            "waiting_for_study": found["waiting_for_study"], "can_freeze": found["can_freeze"],
            "studies": [{"slug": study.slug, "state": study.state, "verifiers_per_item": study.annotators_per_item,
                         "questions": study.questions, "answers": study.answered} for study in found["studies"]]}


class NewVerificationStudyForm(forms.Form):
    """A new verification study: the counterfactuals version, verifiers per item (≥ 2), a name, open now."""

    version = forms.TypedChoiceField(label="Counterfactuals version", coerce=int)
    k = forms.IntegerField(label="Verifiers per item", initial=verification.MIN_VERIFIERS,
                           min_value=verification.MIN_VERIFIERS, max_value=MAX_ANNOTATORS_PER_ITEM,
                           help_text="the paper: at least two people check every item")
    name = forms.CharField(label="Name (optional)", required=False, max_length=200)
    open_now = forms.BooleanField(label="Open it to the verifiers now", required=False, initial=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["version"].choices = [(version.pk, str(version))
                                          for version in verification.counterfactual_versions()]

    def create(self, user) -> Study:
        data = self.cleaned_data
        return verification.create_verification_study(data["version"], user, k=data["k"], name=data["name"],
                                                       open_now=data["open_now"]).study


def overview(form: NewVerificationStudyForm | None = None) -> dict:
    """The verification overview: each counterfactuals version with its stages and studies, and the form."""
    rows = [{"version": version, "stages": stage_counts(version), "studies": list(studies_of(version)),
             "waiting": verification.waiting_items(version).count()}
            for version in verification.counterfactual_versions()]
    return {"rows": rows, "form": form or NewVerificationStudyForm()}
