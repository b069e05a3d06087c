from csp.decorators import csp_replace
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from annotation.api import BenchmarkVersionViewSet, BenchmarkViewSet, ImageViewSet, VideoViewSet
from annotation.benchmarks import registry
from annotation.crowd.api import ClaimViewSet, StudyViewSet, SubmissionViewSet
from annotation.crowd.qualification_api import QualificationTestViewSet
from annotation.image_studio_api import ImageAttemptViewSet
from config.api_routes import ApiRouter, with_format_suffixes
from config.auth_api import TokenView, WhoAmIView
from config.content_security import API_DOCS
from evaluation.analysis_api import JudgeReferenceRevokeView, RunFailureTagsView, VersionJudgeReferencesView
from evaluation.api import RunViewSet
from generation.api import JobViewSet, RegisteredModelViewSet

PAGE_METHODS = ["get", "head"]

router = ApiRouter()
# the crowd workers' routes first: their requests are the most frequent, and URLs resolve in order
router.register("claims", ClaimViewSet, basename="api-claim")
router.register("studies", StudyViewSet, basename="api-study")
router.register("submissions", SubmissionViewSet, basename="api-submission")
router.register("videos", VideoViewSet, basename="api-video")
router.register("images", ImageViewSet, basename="api-image")
router.register("image-attempts", ImageAttemptViewSet, basename="api-image-attempt")
router.register("benchmarks", BenchmarkViewSet, basename="api-benchmark")
router.register("versions", BenchmarkVersionViewSet, basename="api-version")
router.register("jobs", JobViewSet, basename="api-job")
router.register("runs", RunViewSet, basename="api-run")
router.register("models", RegisteredModelViewSet, basename="api-model")
router.register("qualification-tests", QualificationTestViewSet, basename="api-qualification-test")
for benchmark in registry.all():  # each benchmark's own routes (`BenchmarkDefinition.api_routes`)
    benchmark.api_routes(router)

urlpatterns = with_format_suffixes([
    path("versions/<id:pk>/judge-references/", VersionJudgeReferencesView.as_view(),
         name="api-version-judge-references"),
    path("judge-references/<id:pk>/revoke/", JudgeReferenceRevokeView.as_view(), name="api-judge-reference-revoke"),
    path("runs/<id:pk>/failure-tags/", RunFailureTagsView.as_view(), name="api-run-failure-tags"),
    *router.urls,
    path("auth/token/", TokenView.as_view(), name="api-token"),
    path("auth/me/", WhoAmIView.as_view(), name="api-me"),
]) + [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # the documentation pages are HTML: they answer GET (and HEAD) only. Swagger UI's start-up script is a file
    # of its own (`?script`), not inline; Redoc's page loads no web fonts
    path("docs/", csp_replace(API_DOCS)(SpectacularSwaggerSplitView.as_view(
        url_name="api-schema", http_method_names=PAGE_METHODS)), name="api-docs"),
    path("redoc/", csp_replace(API_DOCS)(SpectacularRedocView.as_view(
        url_name="api-schema", template_name="api/redoc.html", http_method_names=PAGE_METHODS)), name="api-redoc"),
]
