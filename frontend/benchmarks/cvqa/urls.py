"""C-VQA's pages (see the package)."""

from django.urls import path

from frontend.benchmarks.cvqa import counterfactual_views, grammar_views, verification_views
from frontend.benchmarks.cvqa import sources_views as views

urlpatterns = [
    path("cvqa/", views.hub, name="cvqa-curation"),
    path("cvqa/sources/", views.sources_page, name="cvqa-sources"),
    path("cvqa/subgroups/", views.subgroups_page, name="cvqa-subgroups"),
    path("cvqa/subgroups/set/", views.subgroup_set, name="cvqa-subgroup-set"),
    path("cvqa/groups/", counterfactual_views.groups_page, name="cvqa-groups"),
    path("cvqa/groups/<slug:key>/", counterfactual_views.group_page, name="cvqa-group"),
    path("cvqa/sources/<id:version_id>/counterfactuals/", counterfactual_views.console,
         name="cvqa-counterfactual-console"),
    path("cvqa/sources/<id:version_id>/counterfactuals/start/", counterfactual_views.generate,
         name="cvqa-counterfactual-generate"),
    path("cvqa/sources/items/<id:item_id>/indirect/", counterfactual_views.write_indirect,
         name="cvqa-indirect-write"),
    path("cvqa/verification/", verification_views.overview, name="cvqa-verification"),
    path("cvqa/verification/studies/<slug:slug>/", verification_views.study_page,
         name="cvqa-verification-version-of-study"),
    path("cvqa/verification/studies/<slug:slug>/add/", verification_views.add_items, name="cvqa-verification-add"),
    path("cvqa/versions/<id:version_id>/verification/", verification_views.version_page,
         name="cvqa-verification-version"),
    path("cvqa/versions/<id:version_id>/verification/resolve/", verification_views.resolve,
         name="cvqa-verification-resolve"),
    path("cvqa/items/<id:item_id>/adjudicate/", verification_views.adjudicate, name="cvqa-adjudicate"),
    path("cvqa/versions/<id:version_id>/grammar/", grammar_views.console, name="cvqa-grammar-console"),
    path("cvqa/versions/<id:version_id>/grammar/start/", grammar_views.start, name="cvqa-grammar-start"),
]
