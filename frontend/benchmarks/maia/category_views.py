"""MAIA's category pages, for curators (seeds/004 §3.2, App. A.1; SPEC §5):

- `/maia/categories/`: MAIA curation's first page: the 12 reasoning categories as data, with their
  Italian and English names, definitions, sub-types and examples
  (`annotation.benchmarks.maia.categories`), and every MAIA version with its answer-pool checks, their
  review and the false-statement checks;
- `/maia/categories/<key>/`: one category's edit form (names, definition, question-writing guideline,
  examples), saved with who and when.

Views only read the request, call the service and render; a refusal is shown with its status.
"""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from annotation.benchmarks.maia import categories, pool_checks, question_writing
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR

CURATORS = (CURATOR, ADMIN)


@roles_allowed(*CURATORS)
@require_safe
def categories_page(request):
    return render(request, "maia/categories.html", {
        "rows": categories.ensure_categories(), "versions": pool_checks.maia_versions().order_by("-created_at"),
        "question_studies": question_writing.studies_of_kind(), "question_kind": question_writing.STUDY_KIND})


@roles_allowed(*CURATORS)
@require_http_methods(["GET", "HEAD", "POST"])
def category_page(request, key):
    """GET: the category's edit form. POST: save it (400 with the form's errors, nothing written)."""
    try:
        row = categories.category(key)
    except categories.CategoryError as exc:
        return render(request, "maia/refused.html", {"message": exc.message, "status": exc.status},
                      status=exc.status)
    if request.method != "POST":
        form = categories.CategoryForm(initial=categories.initial(row))
        return render(request, "maia/category.html", {"row": row, "form": form})
    try:
        row = categories.edit_category(key, request.POST, request.user)
    except categories.CategoryInvalid as exc:
        return render(request, "maia/category.html", {"row": row, "form": exc.form}, status=exc.status)
    messages.success(request, f"“{row.name}” is saved.")
    return redirect("maia-categories")
