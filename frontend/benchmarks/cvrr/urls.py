"""CVRR-ES's pages (see the package)."""

from django.urls import path

from frontend.benchmarks.cvrr import curation_views, expert_views, qa_views

urlpatterns = [
    path("cvrr/experts/", expert_views.experts_page, name="cvrr-experts"),
    path("cvrr/experts/new/", expert_views.experts_create, name="cvrr-experts-create"),
    path("cvrr/experts/qualify/", expert_views.experts_qualify, name="cvrr-experts-qualify"),
    path("cvrr/experts/studies/<slug:slug>/", expert_views.report_page, name="cvrr-expert-report"),
    path("cvrr/experts/studies/<slug:slug>/report.json", expert_views.report_json, name="cvrr-expert-report-json"),
    path("cvrr/experts/studies/<slug:slug>/finalise/", expert_views.finalise, name="cvrr-expert-finalise"),
    path("cvrr/", curation_views.hub, name="cvrr-curation"),
    path("cvrr/dimensions/", curation_views.dimensions_page, name="cvrr-dimensions"),
    path("cvrr/dimensions/<slug:key>/", curation_views.dimension_page, name="cvrr-dimension"),
    path("cvrr/videos/", curation_views.videos_page, name="cvrr-videos"),
    path("cvrr/captions/", curation_views.captions_page, name="cvrr-captions"),
    path("cvrr/captions/new/", curation_views.caption_study_new, name="cvrr-captions-new"),
    path("cvrr/captions/studies/<slug:slug>/", curation_views.caption_study_page, name="cvrr-caption-study"),
    path("cvrr/captions/<id:item_id>/", curation_views.caption_page, name="cvrr-caption"),
    # the QA console: generation from captions, filtration studies, pairs sent back, noise report
    path("cvrr/qa/", qa_views.console, name="cvrr-qa"),
    path("cvrr/qa/generate/", qa_views.generate, name="cvrr-qa-generate"),
    path("cvrr/qa/sets/<id:pk>/filtration/", qa_views.open_filtration, name="cvrr-qa-filtration"),
    path("cvrr/qa/studies/<slug:slug>/record/", qa_views.record, name="cvrr-qa-record"),
    path("cvrr/qa/items/<id:item_id>/return/", qa_views.send_back, name="cvrr-qa-return"),
    path("cvrr/qa/noise/", qa_views.noise, name="cvrr-qa-noise"),
]
