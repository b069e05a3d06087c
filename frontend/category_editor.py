"""One editor for the definitions a benchmark keeps as data (`annotation.category_definitions`: C-VQA's
counterfactual groups, CVRR-ES's dimensions, MAIA's categories).

A benchmark describes its editor (`CategoryEditor`: how to find a row, its blank form, how to save it, where
the list is) and routes `edit_view(editor)`. GET shows the row's edit form (`frontend/category_edit.html`, or a
template of the benchmark's that extends it); POST saves it and goes back to the list, or answers 400 with the
form's errors and nothing written; an unknown row is refused on `frontend/refused.html`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from frontend.refusals import refused


@dataclass(frozen=True)
class CategoryEditor:
    find: Callable  # key -> the row (a CategoryDefinition); raises `refusal` for an unknown one
    blank_form: Callable  # row -> its edit form, filled with the row's texts
    save: Callable  # (key, data, user) -> the saved row; raises `invalid` (with `form` and `status`)
    refusal: type[Exception]  # with `message` and `status`
    invalid: type[Exception]  # with `form` and `status`
    list_url: str  # the URL name of the list of rows
    crumbs: tuple[tuple[str, str], ...]  # (label, URL name) of the pages above the row, the list last
    form_id: str
    template: str = "frontend/category_edit.html"

    def context(self, row, form) -> dict:
        crumbs = [(label, reverse(name)) for label, name in self.crumbs]
        return {"row": row, "form": form, "crumbs": crumbs, "form_id": self.form_id,
                "cancel_url": reverse(self.list_url)}


def edit_view(editor: CategoryEditor):
    """The edit page of one row of `editor` (`<key>` in its address), for curators."""

    @roles_allowed(CURATOR, ADMIN)
    @require_http_methods(["GET", "HEAD", "POST"])
    def edit(request, key):
        try:
            row = editor.find(key)
        except editor.refusal as exc:
            return refused(request, exc.message, exc.status, editor.crumbs[:1])
        if request.method != "POST":
            return render(request, editor.template, editor.context(row, editor.blank_form(row)))
        try:
            row = editor.save(key, request.POST, request.user)
        except editor.invalid as exc:
            return render(request, editor.template, editor.context(row, exc.form), status=exc.status)
        except editor.refusal as exc:
            return refused(request, exc.message, exc.status, editor.crumbs[:1])
        messages.success(request, f"“{row.name}” is saved.")
        return redirect(editor.list_url)

    edit.__doc__ = "GET: the row's edit form. POST: save it (400 with the form's errors, nothing written)."
    return edit
