"""What the CVRR-ES expert assessment pages show and accept (`frontend.benchmarks.cvrr.expert_views`): the overview
(the expert assessment studies with their progress, the form that creates one, the expert group) and one
study's report, as plain dicts; the form a new study is made from."""

from __future__ import annotations

from django import forms
from django.db.models import Count, Q

from annotation.benchmarks.cvrr import expert_group, expert_report, expert_sample, expert_study
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import MAX_ANNOTATORS_PER_ITEM, Claim, Study, StudyItem

SIZE, SHARE = "size", "share"


def assessment_studies():
    """The expert assessment studies, newest first, with their required qualification and creator."""
    return (Study.objects.filter(step_kind=expert_sample.STUDY_KIND)
            .select_related("required_qualification", "created_by").order_by("-created_at", "-pk"))


class NewExpertStudyForm(forms.Form):
    """A new expert assessment study: the pool, the sample (a number of pairs or a share), its seed, k."""

    pool = forms.TypedChoiceField(label="QA pool", coerce=int, help_text="an unfrozen CVRR-ES version of QA pairs")
    sample_by = forms.ChoiceField(label="Sample", choices=[(SIZE, "a number of pairs"), (SHARE, "a share of the pool")],
                                  initial=SHARE, widget=forms.RadioSelect)
    size = forms.IntegerField(label="Number of pairs", required=False, min_value=1)
    share = forms.DecimalField(label="Share of the pool", required=False, min_value=0, max_value=1, decimal_places=4,
                               initial=round(float(expert_sample.DEFAULT_SHARE), 4),
                               help_text="the paper assessed 1,120 of 2,400 pairs (0.4667)")
    seed = forms.IntegerField(label="Seed", initial=expert_sample.DEFAULT_SEED,
                              help_text="the same pool and seed draw the same pairs")
    k = forms.IntegerField(label="Experts per pair (k)", initial=1, min_value=1, max_value=MAX_ANNOTATORS_PER_ITEM,
                           help_text="more than one gives the experts' agreement")
    name = forms.CharField(label="Name (optional)", required=False, max_length=200)
    open_now = forms.BooleanField(label="Open it to the experts now", required=False, initial=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["pool"].choices = [(version.pk, str(version)) for version in expert_sample.qa_pools()]

    def clean(self):
        cleaned = super().clean()
        chosen = cleaned.get("sample_by")
        if chosen == SIZE and cleaned.get("size") is None:
            self.add_error("size", "give the number of pairs")
        if chosen == SHARE and not cleaned.get("share"):
            self.add_error("share", "give a share above 0")
        return cleaned

    def create(self, user) -> Study:
        data = self.cleaned_data
        pool = expert_sample.pool_named(data["pool"])
        by_size = data["sample_by"] == SIZE
        return expert_study.create_expert_study(
            pool, user, seed=data["seed"], size=data["size"] if by_size else None,
            share=None if by_size else float(data["share"]), k=data["k"], name=data["name"],
            open_now=data["open_now"]).study


def overview(form: NewExpertStudyForm | None = None) -> dict:
    """The expert assessment page: studies with their progress and finalisation, the form, the experts."""
    rows = list(assessment_studies().annotate(
        pairs=Count("items", filter=Q(items__role=StudyItem.Role.REGULAR), distinct=True),
        answered=Count("claims", filter=Q(claims__status__in=(Claim.Status.SUBMITTED, Claim.Status.APPROVED)),
                       distinct=True)))
    for study in rows:
        study.finalised = expert_report.finalisation(study)
    return {"studies": rows, "form": form or NewExpertStudyForm(), "experts": expert_group.members(),
            "qualification": expert_group.EXPERT, "pools": list(expert_sample.qa_pools())}


def study_named(slug: str) -> Study | None:
    return assessment_studies().filter(slug=slug).first()


def _percent(figure: dict) -> str:
    return "—" if figure["rate"] is None else f"{100 * figure['rate']:.2f}%"


def report_view(study: Study) -> dict:
    """One study's report as its page shows it: the rates with their counts, agreement, the pairs."""
    made = expert_report.report(study)
    questions = made["questions"]
    rates = [{"label": "All dimensions", "key": "", "pairs": made["pairs_in_study"],
              "assessed": made["pairs_assessed"],
              "cells": [{**made["overall"][q["name"]], "percent": _percent(made["overall"][q["name"]])}
                        for q in questions]}]
    rates += [{"label": row["name"], "key": row["dimension"], "pairs": row["pairs"], "assessed": row["assessed"],
               "cells": [{**row[q["name"]], "percent": _percent(row[q["name"]])} for q in questions]}
              for row in made["dimensions"]]
    agreement = []
    if made["agreement"]:
        for q in questions:
            figures = made["agreement"][q["name"]]
            agreement.append({"label": q["label"], "name": q["name"],
                              "cells": [figures["percent_agreement"], figures["fleiss_kappa"],
                                        figures["krippendorff_alpha"]]})
    listed = [pair for pair in made["pairs"] if pair["outcome"] in (expert_report.RETURNED, expert_report.KEPT)]
    for pair in listed:
        pair["outcome_label"] = expert_report.OUTCOME_LABELS[pair["outcome"]]
    outcomes = {name: sum(1 for pair in made["pairs"] if pair["outcome"] == name)
                for name in expert_report.OUTCOME_LABELS}
    return {"study": study, "report": made, "rates": rates, "agreement": agreement, "listed": listed,
            "outcomes": [{"name": name, "label": label, "count": outcomes[name]}
                         for name, label in expert_report.OUTCOME_LABELS.items()],
            "can_finalise": made["finalised"] is None and made["pairs_assessed"] > 0}


def grant_or_revoke(post, by) -> str:
    """Grant (`action` grant) or take back (revoke) the expert qualification of `username`; the message to show.
    CrowdError (400) for an unknown user or action, 403 for anyone but curators and admins."""
    action = (post.get("action") or "").strip()
    if action not in ("grant", "revoke"):
        raise CrowdError("Choose to grant or to take back the expert qualification.")
    user = expert_group.user_named(post.get("username", ""))
    if action == "grant":
        made = expert_group.grant(user, by)
        return f"{user.username} is {'now' if made else 'already'} a CVRR-ES expert."
    held = expert_group.revoke(user, by)
    return f"{user.username} is {'no longer' if held else 'not'} a CVRR-ES expert."
