"""Curators' page of NL-EYE scene writing: the spread of a scene-writing study's pool over reasoning
categories, time directions, durations and domains (`annotation.benchmarks.nleye.spread`). The
written triplets are filtered in the study's review queue (`frontend.crowd_views.study_queue`)."""

from django.http import Http404
from django.shortcuts import get_object_or_404, render

from annotation.benchmarks.nleye import scenes, spread
from annotation.crowd import selectors
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR

CURATORS = (CURATOR, ADMIN)


@roles_allowed(*CURATORS)
def scene_spread(request, slug):
    """Accepted and proposed triplets per category, direction, duration and domain; 404 for a study of
    another kind."""
    study = get_object_or_404(selectors.studies_with_settings().select_related("output_version"), slug=slug)
    if not scenes.is_scenes(study):
        raise Http404("This study does not write scene triplets.")
    return render(request, "nleye/spread.html", spread.spread(study))
