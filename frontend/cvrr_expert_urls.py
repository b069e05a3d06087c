from django.urls import path

from frontend.benchmarks.cvrr import expert_views as views

urlpatterns = [
    path("cvrr/experts/", views.experts_page, name="cvrr-experts"),
    path("cvrr/experts/new/", views.experts_create, name="cvrr-experts-create"),
    path("cvrr/experts/qualify/", views.experts_qualify, name="cvrr-experts-qualify"),
    path("cvrr/experts/studies/<slug:slug>/", views.report_page, name="cvrr-expert-report"),
    path("cvrr/experts/studies/<slug:slug>/report.json", views.report_json, name="cvrr-expert-report-json"),
    path("cvrr/experts/studies/<slug:slug>/finalise/", views.finalise, name="cvrr-expert-finalise"),
]
