"""Query filters of the runs API: runs and a run's predictions (`config.api_filters`)."""

from django_filters import rest_framework as filters

from annotation.benchmarks import registry
from annotation.models import BenchmarkItem, BenchmarkVersion
from config.api_filters import BooleanFilter, after, before
from config.ids import IdChoiceFilter
from evaluation.models import EvaluationRun, Prediction

PARSE_STATUSES = [(name, name) for name in ("ok", "unparsed", "empty")]


class RunFilter(filters.FilterSet):
    status = filters.ChoiceFilter(choices=EvaluationRun.Status.choices)
    benchmark = filters.ChoiceFilter(field_name="version__benchmark__slug", choices=registry.choices,
                                     help_text="the benchmark's slug")
    version = IdChoiceFilter(queryset=BenchmarkVersion.objects.all(), help_text="benchmark version id")
    model = filters.CharFilter(field_name="model_id", lookup_expr="icontains", help_text="part of the model id")
    backend = filters.CharFilter(help_text="the backend, e.g. transformers or openai")
    prompting = filters.CharFilter(help_text="the prompting strategy, e.g. standard or cot")
    created_by = filters.CharFilter(field_name="created_by__username", help_text="the username who started it")
    created_after = after("created_at", "runs started")
    created_before = before("created_at", "runs started")

    class Meta:
        model = EvaluationRun
        fields = ["status", "benchmark", "version", "model", "backend", "prompting", "created_by", "created_after",
                  "created_before"]


class PredictionFilter(filters.FilterSet):
    variant = filters.CharFilter(help_text="only this task variant")
    errors = BooleanFilter(method="only_failed", help_text="true: only failed predictions; false: all of them")
    parse_status = filters.ChoiceFilter(choices=PARSE_STATUSES, help_text="how the default parser read the answer")
    item = IdChoiceFilter(queryset=BenchmarkItem.objects.all(), help_text="the benchmark item's id")
    request_id = filters.CharFilter(help_text="one request (item and variant), e.g. q-001:qa")
    from_cache = BooleanFilter(help_text="whether the answer came from the prediction cache")

    class Meta:
        model = Prediction
        fields = ["variant", "errors", "parse_status", "item", "request_id", "from_cache"]

    def only_failed(self, queryset, name, value: bool):
        return queryset.exclude(error="") if value else queryset
