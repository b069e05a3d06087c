"""URLs of the C-VQA curation pages (`frontend.cvqa_views`)."""

from django.urls import path

from frontend import cvqa_views as views

urlpatterns = [
    path("cvqa/", views.hub, name="cvqa-curation"),
    path("cvqa/sources/", views.sources_page, name="cvqa-sources"),
    path("cvqa/subgroups/", views.subgroups_page, name="cvqa-subgroups"),
    path("cvqa/subgroups/set/", views.subgroup_set, name="cvqa-subgroup-set"),
]
