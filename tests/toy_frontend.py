"""ToyVQA's pages: a sixth benchmark's frontend written outside `frontend/benchmarks/`, as the package
`frontend/benchmarks/toyvqa/` would be (its views, `urls.py` and `navigation.py`, here in one module).

One page, for curators and admins: `/toyvqa/questions/` (`toyvqa-questions`), ToyVQA's versions with their
questions and answers, linked from the navigation as "ToyVQA questions" under Curate, after the other
benchmarks' entries. Its template is a string here; a package's would be under `frontend/templates/toyvqa/`.

Importing this module registers the pages (`frontend.benchmarks.register`), as `discover` does for a package
of `frontend/benchmarks/`; `unregister(SLUG)` forgets them again. The URL modules are read once, so whoever
imports it reads them again afterwards (see `frontend.benchmarks`).
"""

from __future__ import annotations

from django.http import HttpResponse
from django.template import engines
from django.urls import path

from annotation import selectors
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from frontend import benchmarks
from frontend.navigation import NavEntry

SLUG = "toyvqa"
PAGE = engines["django"].from_string("""{% extends "frontend/base.html" %}
{% block title %}ToyVQA questions{% endblock %}
{% block content %}
<h1>ToyVQA questions</h1>
{% for version, items in versions %}
<section class="card" data-version="{{ version.label }}">
  <h2>{{ version.label }}{% if version.frozen %} (frozen){% endif %}</h2>
  <table><tbody>
  {% for item in items %}
    <tr data-item="{{ item.external_id }}"><td>{{ item.payload.question }}</td><td>{{ item.payload.answer }}</td></tr>
  {% endfor %}
  </tbody></table>
</section>
{% empty %}
<p>No ToyVQA version yet.</p>
{% endfor %}
{% endblock %}
""")


@roles_allowed(CURATOR, ADMIN)
def questions_page(request):
    found = selectors.versions().filter(benchmark__slug=SLUG).order_by("label")
    versions = [(version, list(selectors.version_items(version).order_by("external_id"))) for version in found]
    return HttpResponse(PAGE.render({"versions": versions}, request))


urlpatterns = [
    path("toyvqa/questions/", questions_page, name="toyvqa-questions"),
]

ENTRIES = [
    NavEntry("ToyVQA questions", "toyvqa-questions", (CURATOR, ADMIN), "Curate", order=60),
]

benchmarks.register(SLUG, urls=__name__, entries=ENTRIES)
