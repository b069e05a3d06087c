"""Crowd work pages: workers' task pages, crowd platform entry links, curators' study pages."""

from django.urls import path

from frontend import crowd_views, study_setup_views, worker_views

urlpatterns = [
    # workers
    path("work/<slug:slug>/", crowd_views.work, name="crowd-work"),
    path("work/<slug:slug>/consent/", crowd_views.work_consent, name="crowd-work-consent"),
    path("work/<slug:slug>/done/", crowd_views.work_done, name="crowd-work-done"),
    path("tasks/answers/<id:pk>/", crowd_views.past_answer, name="crowd-past-answer"),
    path("language/", crowd_views.set_language, name="set-language"),
    # crowd platforms' entry links (public)
    path("crowd/prolific/<slug:slug>/", crowd_views.prolific_entry, name="crowd-entry-prolific"),
    path("crowd/mturk/<slug:slug>/", crowd_views.mturk_entry, name="crowd-entry-mturk"),
    # curators
    path("studies/", crowd_views.studies, name="crowd-studies"),
    path("studies/new/", study_setup_views.study_new, name="crowd-study-new"),
    path("studies/markdown-preview/", study_setup_views.markdown_preview, name="crowd-markdown-preview"),
    path("studies/<slug:slug>/", crowd_views.study_detail, name="crowd-study-detail"),
    path("studies/<slug:slug>/settings/", crowd_views.study_settings_page, name="crowd-study-settings"),
    path("studies/<slug:slug>/items/", study_setup_views.study_items, name="crowd-study-items"),
    path("studies/<slug:slug>/state/", study_setup_views.study_change_state, name="crowd-study-state"),
    path("studies/<slug:slug>/duplicate/", study_setup_views.study_duplicate, name="crowd-study-duplicate"),
    path("studies/<slug:slug>/queue/", crowd_views.study_queue, name="crowd-study-queue"),
    path("workers/", worker_views.workers, name="crowd-workers"),
    path("workers/import/", worker_views.import_attributes, name="crowd-workers-import"),
    path("workers/<str:username>/", worker_views.worker_attributes_page, name="crowd-worker-attributes"),
    path("studies/<slug:slug>/payments.csv", crowd_views.payments_csv, name="crowd-study-payments"),
]
