from django.contrib import admin

from evaluation.models import EvaluationRun, Prediction, ResponseCache


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "model_id", "version", "backend", "input_strategy", "prompting", "status",
                    "total_requests", "created_at"]
    list_filter = ["status", "backend", "input_strategy", "prompting", "version__benchmark"]
    search_fields = ["model_id", "version__label"]
    readonly_fields = ["job", "created_by", "created_at", "started_at", "finished_at", "total_requests"]


@admin.register(Prediction)
class PredictionAdmin(admin.ModelAdmin):
    list_display = ["run", "request_id", "sample_index", "variant", "parse_status", "from_cache", "latency_s"]
    list_filter = ["variant", "parse_status", "from_cache", "run"]
    search_fields = ["request_id", "raw_output"]
    readonly_fields = [f.name for f in Prediction._meta.fields]


@admin.register(ResponseCache)
class ResponseCacheAdmin(admin.ModelAdmin):
    list_display = ["key", "model_id", "model_revision", "backend", "created_at"]
    list_filter = ["backend"]
    search_fields = ["key", "model_id"]
