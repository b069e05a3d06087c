"""Django forms over a study's settings and its items, for the curators' settings page and the
admin: both check the rules of `annotation.crowd.study_settings`, so a value out of range or a
frozen setting changed after work started is a form error naming the field, never a database error."""

from django import forms
from django.db import transaction

from annotation.crowd import kinds, studies, study_settings, worker_attributes, worker_lists
from annotation.crowd.models import Qualification, Study, StudyItem
from annotation.models import BenchmarkVersion

PAGE_FIELDS = ["name", "step_kind", "form_schema", "output_version", "annotators_per_item", "max_items_per_video",
               "count_accepted_only", "lease_seconds", "instructions", "consent_text", "language", "estimated_minutes",
               "pay_per_item", "currency", "required_qualification", "required_attributes", "gold_share",
               "expert_share",
               "expert_first", "min_accept_rate", "min_reviews_for_exclusion", "recruitment_platform",
               "platform_study_id", "required_submissions", "completion_code", "completion_url"]


class QualificationChoice(forms.ModelChoiceField):
    """A qualification, named with the tests that grant it."""

    def label_from_instance(self, obj):
        tests = ", ".join(test.name for test in obj.tests.all())
        return f"{obj.name} (test: {tests})" if tests else f"{obj.name} (no test; granted by hand)"

# What a person reads beside each setting (the pages and the admin), instead of the field's name.
SETTING_LABELS = {
    "step_kind": "Kind of task", "form_schema": "Form (JSON)", "output_version": "Version approved work goes to",
    "annotators_per_item": "Annotators per item (k)", "max_items_per_video": "Most items of one video per worker",
    "count_accepted_only": "Rejected answers free their place", "lease_seconds": "Item kept for a worker (seconds)",
    "estimated_minutes": "Estimated minutes per item", "pay_per_item": "Pay per item",
    "gold_share": "Share of gold items", "expert_share": "Share of answers sent to experts",
    "expert_first": "First answers reviewed per worker", "min_accept_rate": "Lowest acceptance rate kept",
    "min_reviews_for_exclusion": "Reviews before a worker can be excluded",
    "recruitment_platform": "Recruitment platform", "platform_study_id": "Study id on the platform",
    "required_submissions": "Answers before the completion code", "completion_code": "Completion code",
    "completion_url": "Completion address", "consent_text": "Consent / introduction page",
    "language": "Language of the worker pages",
    "required_qualification": "Qualification test to pass", "required_attributes": "Required worker attributes (JSON)",
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
                label=SETTING_LABELS["step_kind"], choices=[(name, name) for name in kinds.names()],
                help_text=self.fields["step_kind"].help_text)
        if "required_qualification" in self.fields:
            self.fields["required_qualification"] = QualificationChoice(
                queryset=Qualification.objects.prefetch_related("tests").order_by("name"), required=False,
                label=SETTING_LABELS["required_qualification"], empty_label="none: anyone eligible may work",
                help_text="workers must first pass a test that grants this qualification")
        if "output_version" in self.fields:
            benchmarks = {kinds.named(name).output_benchmark for name in kinds.with_output()}
            self.fields["output_version"] = forms.ModelChoiceField(
                queryset=BenchmarkVersion.objects.filter(frozen=False, benchmark__slug__in=benchmarks)
                .select_related("benchmark").order_by("benchmark__slug", "label"),
                required=False, label=SETTING_LABELS["output_version"],
                empty_label="the kind's own (made when the study is created)",
                help_text="an unfrozen version that each approved item is added to (kinds that write items)")
        if "max_items_per_video" in self.fields:
            self.fields["max_items_per_video"].required = False  # empty: no limit
        if "form_schema" in self.fields:
            self.fields["form_schema"].widget.attrs.update({"data-form-schema": "", "rows": 8})
        for name in ("instructions", "consent_text"):
            if name in self.fields:
                self.fields[name].widget.attrs.update({"data-markdown": "", "rows": 8})
        if "language" in self.fields:
            self.fields["language"].required = False  # left out: the study keeps its language

    def clean_language(self):
        return self.cleaned_data.get("language") or self.instance.language

    def clean_max_items_per_video(self):
        value = self.cleaned_data.get("max_items_per_video")
        return 0 if value is None else value

    def clean_required_attributes(self):
        value = self.cleaned_data.get("required_attributes")
        if value in (None, ""):
            return {}
        problems = worker_attributes.rule_problems(value)
        if problems:
            raise forms.ValidationError("; ".join(problems))
        return value

    def clean(self):
        cleaned = super().clean()
        study = self.instance if self.instance.pk else None
        fixed = kinds.named(cleaned.get("step_kind") or "").fixed_form
        if fixed is not None and "form_schema" in self.fields:
            cleaned["form_schema"] = fixed  # the kind's own form, whatever the hidden builder held
        frozen = study_settings.frozen_problems(study, cleaned)
        self.frozen = bool(frozen)
        for name, message in {**study_settings.problems(cleaned, study=study), **frozen}.items():
            self.add_error(name if name in self.fields else None, f"{name}: {message}")
        return cleaned


class WorkerListsForm(forms.Form):
    """A study's "only these workers" and "never these workers" lists as usernames, one a line; an
    unknown username is an error naming it, and `save` replaces both lists."""

    include_workers = forms.CharField(
        required=False, label="Only these workers", widget=forms.Textarea(attrs={"rows": 4}),
        help_text="usernames, one a line; when any are listed, nobody else may work on the study")
    exclude_workers = forms.CharField(
        required=False, label="Never these workers", widget=forms.Textarea(attrs={"rows": 4}),
        help_text="usernames, one a line; they never get an item of the study")

    def __init__(self, *args, study: Study, **kwargs):
        kwargs.setdefault("initial", {field: worker_lists.as_text(study, field) for field in worker_lists.LISTS})
        super().__init__(*args, **kwargs)
        self.study = study

    def clean(self):
        cleaned = super().clean()
        self.lists = {field: worker_lists.usernames(cleaned.get(field, "")) for field in worker_lists.LISTS}
        try:
            worker_lists.resolve(self.lists)
        except worker_lists.UnknownWorkers as exc:
            for field, names in exc.details.items():
                self.add_error(field, f"unknown username{'s' if len(names) != 1 else ''}: {', '.join(names)}")
        return cleaned

    def save(self) -> None:
        worker_lists.set_lists(self.study, self.lists)


def save_settings(settings: StudySettingsForm, lists: WorkerListsForm, rules: dict | None = None) -> Study:
    """Save a study's valid settings and worker lists together (all or nothing); `rules`, when given,
    are the study's attribute rules (from the rule rows, checked already). After k changed on a study
    nobody has claimed from, its items get k places each."""
    if rules is not None:
        settings.instance.required_attributes = rules
    with transaction.atomic():
        study = settings.save()
        study_settings.resize_items(study)
        lists.save()
    return study


class NewStudyForm(StudySettingsForm):
    """A new study's settings; `create` makes it through `annotation.crowd.studies.create_study`."""

    slug = forms.SlugField(required=False, max_length=studies.SLUG_LENGTH, label="Address (optional)",
                           help_text="made from the name when left empty")

    def create(self, user) -> Study:
        values = {name: self.cleaned_data[name] for name in PAGE_FIELDS}
        return studies.create_study(created_by=user, slug=self.cleaned_data.get("slug") or None,
                                    history_reason="created on the studies page", **values).study


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
