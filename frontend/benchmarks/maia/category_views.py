"""MAIA's category pages, for curators (seeds/004 §3.2, App. A.1; SPEC §5):

- `/maia/categories/`: MAIA curation's first page: the 12 reasoning categories as data, with their
  Italian and English names, definitions, sub-types and examples
  (`annotation.benchmarks.maia.categories`), and every MAIA version with its answer-pool checks, their
  review and the false-statement checks;
- `/maia/categories/<key>/`: one category's edit form (names, definition, question-writing guideline,
  examples), saved with who and when.

Views only read the request, call the service and render; a refusal is shown with its status.
"""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from annotation.benchmarks.maia import categories, pool_checks, question_writing
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from frontend import category_editor

CURATORS = (CURATOR, ADMIN)


@roles_allowed(*CURATORS)
@require_safe
def categories_page(request):
    return render(request, "maia/categories.html", {
        "rows": categories.ensure_categories(), "versions": pool_checks.maia_versions().order_by("-created_at"),
        "question_studies": question_writing.studies_of_kind(), "question_kind": question_writing.STUDY_KIND})


category_page = category_editor.edit_view(category_editor.CategoryEditor(
    find=categories.category, blank_form=lambda row: categories.CategoryForm(initial=categories.initial(row)),
    save=categories.edit_category, refusal=categories.CategoryError, invalid=categories.CategoryInvalid,
    list_url="maia-categories", crumbs=(("MAIA categories", "maia-categories"),), form_id="category-form",
    template="maia/category.html"))
