"""Admin list filters that read the benchmark registry."""

from django.contrib import admin

from evaluation import benchmarks


class BenchmarkFilter(admin.SimpleListFilter):
    """Rows of one registered benchmark (`evaluation.benchmarks`); `benchmark_lookup` is the path from the
    row to the benchmark's slug."""

    title = "benchmark"
    parameter_name = "benchmark"
    benchmark_lookup = "version__benchmark__slug"

    def lookups(self, request, model_admin):
        return [(benchmark.slug, benchmark.label) for benchmark in benchmarks.registered()]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(**{self.benchmark_lookup: self.value()})
        return queryset
