"""Query filters of the jobs API (`config.api_filters`)."""

from django_filters import rest_framework as filters

from config.api_filters import after, before
from generation.jobs import registered_kinds
from generation.models import Job, RegisteredModel
from generation.registered_models import Use


def job_kinds() -> list[tuple[str, str]]:
    return [(name, spec.label or name) for name, spec in sorted(registered_kinds().items())]


class JobFilter(filters.FilterSet):
    status = filters.ChoiceFilter(choices=Job.Status.choices, help_text="the job's status")
    kind = filters.ChoiceFilter(choices=job_kinds, help_text="a registered job kind, e.g. probe_video")
    queue = filters.CharFilter(help_text="the worker queue it was sent to (default, gpu, …)")
    created_after = after("created_at", "jobs created")
    created_before = before("created_at", "jobs created")

    class Meta:
        model = Job
        fields = ["status", "kind", "queue", "created_after", "created_before"]


class RegisteredModelFilter(filters.FilterSet):
    use = filters.ChoiceFilter(choices=Use.choices, method="filter_use", help_text="what the model may be used for")

    class Meta:
        model = RegisteredModel
        fields = ["use"]

    def filter_use(self, queryset, name, value):
        # `uses` is a JSON list: told apart here rather than with a lookup SQLite lacks
        return queryset.filter(pk__in=[entry.pk for entry in queryset if entry.allows(value)])
