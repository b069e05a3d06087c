from django.contrib.auth import views as auth_views
from django.urls import include, path

from frontend import report_views, results_views, run_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(template_name="frontend/login.html",
                                                 redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("tasks/", views.my_tasks, name="my-tasks"),
    path("queues/", views.queues, name="queues"),
    path("generation/", views.generation_page, name="generation"),
    path("library/", views.media_library, name="media-library"),
    path("library/videos/<int:pk>/", views.video_detail, name="video-detail"),
    path("library/images/<int:pk>/", views.image_detail, name="image-detail"),
    path("benchmarks/", views.benchmarks, name="benchmarks"),
    path("benchmarks/versions/<int:pk>/", views.version_detail, name="version-detail"),
    path("runs/", run_views.runs_page, name="runs"),
    path("runs/<int:pk>/", run_views.run_detail, name="run-detail"),
    path("runs/<int:pk>/cancel/", run_views.run_cancel, name="run-cancel"),
    path("runs/<int:pk>/resume/", run_views.run_resume, name="run-resume"),
    path("results/", results_views.results_index, name="results"),
    path("results/versions/<int:pk>/", results_views.results_version, name="results-version"),
    path("results/versions/<int:pk>/charts/<slug:series>/<slug:kind>.<slug:fmt>", results_views.results_chart,
         name="results-chart"),
    path("results/runs/<int:pk>/", results_views.results_run, name="results-run"),
    path("results/runs/<int:pk>/metrics.json", results_views.results_run_json, name="results-run-json"),
    path("results/runs/<int:pk>/metrics/<str:metric>/", results_views.results_drill, name="results-drill"),
    path("jobs/", views.jobs_page, name="jobs"),
    path("jobs/<int:pk>/", views.job_detail, name="job-detail"),
    path("studies/<slug:slug>/report/", report_views.study_report_page, name="crowd-study-report"),
    path("exports/", include("evaluation.urls")),
    path("", include("frontend.crowd_urls")),
]
