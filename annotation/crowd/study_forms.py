"""Django forms over a study's settings and its items, for the curators' settings page and the
admin: both check the rules of `annotation.crowd.study_settings`, so a value out of range or a
frozen setting changed after work started is a form error naming the field, never a database error."""

from django import forms

from annotation.crowd import kinds, study_settings
from annotation.crowd.models import Study, StudyItem

PAGE_FIELDS = ["name", "step_kind", "form_schema", "annotators_per_item", "count_accepted_only", "lease_seconds",
               "instructions", "estimated_minutes", "pay_per_item", "currency", "gold_share", "expert_share",
               "expert_first", "min_accept_rate", "min_reviews_for_exclusion", "recruitment_platform",
               "platform_study_id", "required_submissions", "completion_code", "completion_url"]

# What a person reads beside each setting (the pages and the admin), instead of the field's name.
SETTING_LABELS = {
    "step_kind": "Kind of task", "form_schema": "Form (JSON)", "annotators_per_item": "Annotators per item (k)",
    "count_accepted_only": "Rejected answers free their place", "lease_seconds": "Item kept for a worker (seconds)",
    "estimated_minutes": "Estimated minutes per item", "pay_per_item": "Pay per item",
    "gold_share": "Share of gold items", "expert_share": "Share of answers sent to experts",
    "expert_first": "First answers reviewed per worker", "min_accept_rate": "Lowest acceptance rate kept",
    "min_reviews_for_exclusion": "Reviews before a worker can be excluded",
    "recruitment_platform": "Recruitment platform", "platform_study_id": "Study id on the platform",
    "required_submissions": "Answers before the completion code", "completion_code": "Completion code",
    "completion_url": "Completion address",
}


class StudySettingsForm(forms.ModelForm):
    """A study's settings; `frozen` is set when a refused change touched what work has started on."""

    completion_url = forms.URLField(required=False, assume_scheme="https",
                                    help_text=Study._meta.get_field("completion_url").help_text,
                                    label=SETTING_LABELS["completion_url"])

    class Meta:
        model = Study
        fields = PAGE_FIELDS
        labels = SETTING_LABELS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.frozen = False
        if "step_kind" in self.fields:
            self.fields["step_kind"] = forms.ChoiceField(
                choices=[(name, name) for name in kinds.names()], help_text=self.fields["step_kind"].help_text,
                label=SETTING_LABELS["step_kind"])

    def clean(self):
        cleaned = super().clean()
        study = self.instance if self.instance.pk else None
        frozen = study_settings.frozen_problems(study, cleaned)
        self.frozen = bool(frozen)
        for name, message in {**study_settings.problems(cleaned, study=study), **frozen}.items():
            self.add_error(name if name in self.fields else None, f"{name}: {message}")
        return cleaned


class StudyAdminForm(StudySettingsForm):
    """Every editable field of a study, for the admin, under the same rules."""

    class Meta(StudySettingsForm.Meta):
        fields = [f.name for f in (*Study._meta.concrete_fields, *Study._meta.many_to_many)
                  if f.editable and not f.primary_key and f.name != Study.STATES.field]  # state: by actions


class StudyItemForm(forms.ModelForm):
    """An item in the admin: its media stay as they are once work on the study has started, and a
    study that holds each video once refuses a video it holds already."""

    class Meta:
        model = StudyItem
        fields = ["study", "external_id", "payload", "role", "answer_key", "benchmark_item", "video", "image",
                  "proposal"]  # open_slots and completed_count are the claim loop's to keep

    def clean(self):
        cleaned = super().clean()
        study = cleaned.get("study") or (self.instance.study if self.instance.study_id else None)
        if study is None:
            return cleaned
        item = self.instance if self.instance.pk else None
        for name, message in study_settings.item_problems(study, cleaned, item=item).items():
            self.add_error(name if name in self.fields else None, message)
        return cleaned
