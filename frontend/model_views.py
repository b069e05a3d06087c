"""The model registry's page (`/models/`): the models curators and researchers pick from on every form
that runs a model (`generation.model_registry`), what each may be used for and the options people may
add. Admins also see disabled entries and reach each one's form in the Django admin, where they add,
change and disable entries (or with `manage.py models`)."""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from config.permissions import roles_allowed
from config.roles import STAFF_ROLES
from generation import model_registry
from generation.backends import registry
from generation.registered_models import Use, key_variables


@roles_allowed(*STAFF_ROLES)
@require_safe
def models_page(request):
    admin = model_registry.is_admin(request.user)
    rows = [{"entry": entry, "uses": [Use(use).label for use in entry.uses if use in Use.values],
             "people_options": entry.allowed_options or list(registry.option_rules(entry.backend)[0])}
            for entry in model_registry.entries(enabled=not admin)]
    return render(request, "frontend/models.html", {"rows": rows, "admin": admin, "key_variables": key_variables(),
                                                    "uses": Use.choices})
