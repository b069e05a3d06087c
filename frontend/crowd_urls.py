"""Crowd work pages: workers' task pages, crowd platform entry links, curators' study pages."""

from django.urls import path

from frontend import crowd_views

urlpatterns = [
    # workers
    path("work/<slug:slug>/", crowd_views.work, name="crowd-work"),
    path("work/<slug:slug>/done/", crowd_views.work_done, name="crowd-work-done"),
    path("tasks/answers/<int:pk>/", crowd_views.past_answer, name="crowd-past-answer"),
    # crowd platforms' entry links (public)
    path("crowd/prolific/<slug:slug>/", crowd_views.prolific_entry, name="crowd-entry-prolific"),
    path("crowd/mturk/<slug:slug>/", crowd_views.mturk_entry, name="crowd-entry-mturk"),
    # curators
    path("studies/", crowd_views.studies, name="crowd-studies"),
    path("studies/<slug:slug>/", crowd_views.study_detail, name="crowd-study-detail"),
    path("studies/<slug:slug>/settings/", crowd_views.study_settings_page, name="crowd-study-settings"),
    path("studies/<slug:slug>/queue/", crowd_views.study_queue, name="crowd-study-queue"),
    path("studies/<slug:slug>/payments.csv", crowd_views.payments_csv, name="crowd-study-payments"),
]
