"""Every URL of the project, classified: who gets what, per role, for GET (and POST where it writes).

Pages send anonymous visitors to the login page (302) and refuse other roles with 403; the API
answers anonymous callers with 401 or 403 and refuses other roles with 403. A URL name missing
from MATRIX fails `test_every_url_is_classified`, so each new endpoint has to be placed here.

Objects that the URLs need come from fixtures (a video, an image, a draft version, a finished
job asked for by the annotator). Crowd-engine URLs point at objects that do not exist: a role
that may use the endpoint then gets 404, a role that may not still gets 403.
"""

from dataclasses import dataclass, field

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.views import APIView

from config.permissions import HasRole
from config.roles import ADMIN, ALL_ROLES, ANNOTATOR, CURATOR, RESEARCHER

ANON = "anonymous"
ROLES = (ANNOTATOR, CURATOR, RESEARCHER, ADMIN)
WHO = (ANON, *ROLES)
API_ANON = (401, 403)  # DRF says 401 or 403 depending on the first authenticator

STAFF = (CURATOR, RESEARCHER, ADMIN)
CURATORS = (CURATOR, ADMIN)
RESEARCHERS = (RESEARCHER, ADMIN)
EVERY_ROLE = ROLES


def _expand(allowed) -> set[str]:
    # An admin holds every role, so whatever a role may do, an admin may do too.
    return set(allowed) | {ADMIN}


def page(allowed, ok=200) -> dict:
    return {ANON: 302, **{role: ok if role in _expand(allowed) else 403 for role in ROLES}}


def api(allowed, ok=200, denied=403) -> dict:
    return {ANON: API_ANON, **{role: ok if role in _expand(allowed) else denied for role in ROLES}}


def everyone(status) -> dict:
    return dict.fromkeys(WHO, status)


@dataclass
class Case:
    GET: dict
    POST: dict | None = None
    kwargs: dict = field(default_factory=dict)  # name -> fixture object key or literal


MISSING = 987654  # an id no object has

MATRIX: dict[str, Case] = {
    # --- Pages ---------------------------------------------------------------------------
    "home": Case(GET=page(EVERY_ROLE)),
    "login": Case(GET={ANON: 200, **dict.fromkeys(ROLES, 302)}),  # signed-in users are sent home
    "logout": Case(GET=everyone(405), POST=everyone(302)),
    # the worker pages' language switch (anyone, also before signing in): posted without a language, 400
    "set-language": Case(GET=everyone(405), POST=everyone(400)),
    "my-tasks": Case(GET=page((ANNOTATOR,))),
    "queues": Case(GET=page(CURATORS)),
    "generation": Case(GET=page(CURATORS)),
    # the proposals queue's JSON endpoints (frontend/proposal_views.py): a missing proposal or set
    # is 404 for curators and admins, an empty bulk decision or start form 400
    "proposal-decide": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "proposals-decide": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=400)),
    "proposals-start": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=400)),
    # importing outputs made elsewhere: without a file 400 (the page, with the reason)
    "proposals-import": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=400)),
    "proposal-set-generate": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "proposal-set-review": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "media-library": Case(GET=page(STAFF)),
    "video-detail": Case(GET=page(STAFF), kwargs={"pk": "video"}),
    "image-detail": Case(GET=page(STAFF), kwargs={"pk": "image"}),
    # curating the library: POST without a field is refused (400); unknown media are 404
    "media-rename": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=400),
                         kwargs={"kind": "images", "pk": "image"}),
    "media-tags": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                       kwargs={"kind": "videos", "pk": MISSING}),
    "media-delete": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404),
                         kwargs={"kind": "videos", "pk": MISSING}),
    # the curator's split timeline of the video (frontend/split_views.py): curators and admins only
    "video-split": Case(GET=page(CURATORS), kwargs={"pk": "video"}),
    "video-split-timeline": Case(GET=page(CURATORS), kwargs={"pk": "video"}),
    "video-split-thumbnails": Case(GET=page(CURATORS), kwargs={"pk": "video"}),
    "video-split-frame": Case(GET=page(CURATORS), kwargs={"pk": "video", "index": 0}),
    "video-split-list": Case(GET=page(CURATORS), kwargs={"pk": "video"}),
    # no boundaries given: allowed roles get 400 (and nothing is recorded)
    "video-split-plan": Case(GET=page(CURATORS, ok=400), kwargs={"pk": "video"}),
    "video-split-create": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=400), kwargs={"pk": "video"}),
    # a split that does not exist: allowed roles get 404
    "video-split-resolve": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "benchmarks": Case(GET=page(STAFF)),
    "version-detail": Case(GET=page(STAFF), kwargs={"pk": "version"}),
    # without the confirmation box ticked, allowed roles get 400 and nothing is frozen
    "version-freeze": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=400), kwargs={"pk": "version"}),
    # a download of the version started as a job: posted without a layout, allowed roles get the page back (400)
    "version-export": Case(GET=page(STAFF, ok=405), POST=page(STAFF, ok=400), kwargs={"pk": "version"}),
    # the start form posted empty: allowed roles get the form back with its errors (400)
    "runs": Case(GET=page(RESEARCHERS), POST=page(RESEARCHERS, ok=400)),
    "run-detail": Case(GET=page(RESEARCHERS), kwargs={"pk": "run"}),
    # the run was started from the command line (nobody's) and has succeeded: only an admin may
    # cancel or resume it, and a succeeded run can be neither (409)
    "run-cancel": Case(GET=page(RESEARCHERS, ok=405), POST={**page(RESEARCHERS, ok=403), ADMIN: 409},
                       kwargs={"pk": "run"}),
    "run-resume": Case(GET=page(RESEARCHERS, ok=405), POST={**page(RESEARCHERS, ok=403), ADMIN: 409},
                       kwargs={"pk": "run"}),
    "results": Case(GET=page(RESEARCHERS)),
    # results of the succeeded (empty) run on the draft version: a leaderboard, a chart, its metrics
    "results-version": Case(GET=page(RESEARCHERS), kwargs={"pk": "version"}),
    "results-chart": Case(GET=page(RESEARCHERS), kwargs={"pk": "version", "series": "real-counterfactual",
                                                         "kind": "bar", "fmt": "png"}),
    "results-run": Case(GET=page(RESEARCHERS), kwargs={"pk": "run"}),
    "results-run-json": Case(GET=page(RESEARCHERS), kwargs={"pk": "run"}),
    "results-drill": Case(GET=page(RESEARCHERS), kwargs={"pk": "run", "metric": "n"}),
    "results-disagreements": Case(GET=page(RESEARCHERS), kwargs={"pk": "run"}),
    # failure analysis (frontend/analysis_views.py): curators, researchers and admins tag; the fixture run's
    # benchmark declares no failure factors (404), a prediction that does not exist is 404
    "results-run-failures": Case(GET=page(STAFF, ok=404), kwargs={"pk": "run"}),
    "prediction-failure-tag": Case(GET=page(STAFF, ok=405), POST=page(STAFF, ok=404), kwargs={"pk": MISSING}),
    # judge references of a version's items: curators and admins; the draft version shows that it is not
    # frozen, approving nothing is 400, a reference that does not exist is 404
    "judge-references": Case(GET=page(CURATORS), POST=page(CURATORS, ok=400), kwargs={"pk": "version"}),
    "judge-reference-revoke": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    # what the results pages start (frontend/result_action_views.py), posted empty: allowed roles get 400
    "results-run-judge": Case(GET=page(RESEARCHERS, ok=405), POST=page(RESEARCHERS, ok=400), kwargs={"pk": "run"}),
    # judge validation (frontend/judge_validation_views.py): an empty sample form is 400; a missing sample
    # is 404 for researchers (its page) and for whoever records verdicts (the rating page)
    "results-run-judge-validation": Case(GET=page(RESEARCHERS, ok=405), POST=page(RESEARCHERS, ok=400),
                                         kwargs={"pk": "run"}),
    "judge-validation-samples": Case(GET=page(STAFF)),
    "judge-validation-sample": Case(GET=page(RESEARCHERS, ok=404), kwargs={"pk": MISSING}),
    "judge-validation-rate": Case(GET=page(STAFF, ok=404), POST=page(STAFF, ok=404), kwargs={"pk": MISSING}),
    "results-run-score": Case(GET=page(RESEARCHERS, ok=405), POST=page(RESEARCHERS, ok=400), kwargs={"pk": "run"}),
    "results-version-baseline": Case(GET=page(RESEARCHERS, ok=405), POST=page(RESEARCHERS, ok=400),
                                     kwargs={"pk": "version"}),
    "results-version-human": Case(GET=page(RESEARCHERS, ok=405), POST=page(RESEARCHERS, ok=400),
                                  kwargs={"pk": "version"}),
    "results-version-export": Case(GET=page(RESEARCHERS, ok=405), POST=page(RESEARCHERS, ok=400),
                                   kwargs={"pk": "version"}),
    # models run elsewhere (frontend/imported_run_views.py): the draft version's requests are not exported
    # (not frozen, and no format asked: 400); an import posted without a file is 400
    "results-version-requests": Case(GET=page(RESEARCHERS, ok=400), POST=page(RESEARCHERS, ok=405),
                                     kwargs={"pk": "version"}),
    "results-version-import": Case(GET=page(RESEARCHERS, ok=405), POST=page(RESEARCHERS, ok=400),
                                   kwargs={"pk": "version"}),
    "results-version-human-judge": Case(GET=page(RESEARCHERS, ok=405), POST=page(RESEARCHERS, ok=400),
                                        kwargs={"pk": "version"}),
    "results-version-subset": Case(GET=page(RESEARCHERS, ok=405), POST=page(RESEARCHERS, ok=400),
                                   kwargs={"pk": "version"}),
    "results-version-human-performance": Case(GET=page(RESEARCHERS, ok=405), POST=page(RESEARCHERS, ok=400),
                                              kwargs={"pk": "version"}),
    "results-version-human-clip": Case(GET=page(RESEARCHERS, ok=405), POST=page(RESEARCHERS, ok=400),
                                       kwargs={"pk": "version"}),
    # people's own verdicts on judged answers (frontend/analysis_views.py): curators, researchers and admins;
    # the fixture version has no judged baseline (an empty list); answers that do not exist are 404
    "results-human-answers": Case(GET=page(STAFF), kwargs={"pk": "version"}),
    "human-answer-verdict": Case(GET=page(STAFF, ok=405), POST=page(STAFF, ok=404), kwargs={"pk": MISSING}),
    "prediction-human-verdict": Case(GET=page(STAFF, ok=405), POST=page(STAFF, ok=404), kwargs={"pk": MISSING}),
    # BlackSwanSuite variants (frontend/benchmarks/blackswan/variants_views.py): posting no study -> 400; a build job
    # that does not exist -> 404 (GET, and POST: nothing to freeze)
    # the NL-EYE curation console (frontend/benchmarks/nleye/console_views.py): an item that is no triplet under
    # curation is 404, an augmentation without triplets 400
    "nleye-triplets": Case(GET=page(CURATORS)),
    "nleye-triplet": Case(GET=page(CURATORS, ok=404), kwargs={"item_id": MISSING}),
    "nleye-triplets-augment": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=400)),
    # the CVRR-ES QA console (frontend/benchmarks/cvrr/qa_views.py): generation without videos 400; a set, study or
    # kept pair that does not exist 404
    "cvrr-qa": Case(GET=page(CURATORS)),
    "cvrr-qa-generate": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=400)),
    "cvrr-qa-filtration": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "cvrr-qa-record": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    "cvrr-qa-return": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"item_id": MISSING}),
    "cvrr-qa-noise": Case(GET=page(CURATORS)),
    "maia-statements": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=405), kwargs={"version_id": MISSING}),
    "maia-statement-edit": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                                kwargs={"item_id": MISSING, "index": 0}),
    # MAIA statements (frontend/benchmarks/maia/statement_views.py): checks, regeneration and the generation console of
    # a version that does not exist are 404 for curators and admins
    "maia-statement-checks": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                                  kwargs={"version_id": MISSING}),
    "maia-statement-regenerate": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                                      kwargs={"version_id": MISSING}),
    "maia-statement-console": Case(GET=page(CURATORS, ok=404), kwargs={"version_id": MISSING}),
    "maia-statement-generate": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                                    kwargs={"version_id": MISSING}),
    "blackswan-variants": Case(GET=page(CURATORS), POST=page(CURATORS, ok=400)),
    # C-VQA curation (frontend/benchmarks/cvqa/sources_views.py): curators and admins; an empty upload is 400, a
    # label for an image that does not exist 404
    "cvqa-curation": Case(GET=page(CURATORS)),
    "cvqa-sources": Case(GET=page(CURATORS), POST=page(CURATORS, ok=400)),
    "cvqa-subgroups": Case(GET=page(CURATORS), POST=page(CURATORS, ok=400)),
    "cvqa-subgroup-set": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404)),
    # C-VQA counterfactuals (frontend/benchmarks/cvqa/counterfactual_views.py): curators and admins; an empty group edit
    # is 400; a sources version or source question that does not exist is 404.
    "cvqa-groups": Case(GET=page(CURATORS)),
    "cvqa-group": Case(GET=page(CURATORS), POST=page(CURATORS, ok=400), kwargs={"key": "boolean"}),
    "cvqa-counterfactual-console": Case(GET=page(CURATORS, ok=404), kwargs={"version_id": MISSING}),
    "cvqa-counterfactual-generate": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                                         kwargs={"version_id": MISSING}),
    "cvqa-indirect-write": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404), kwargs={"item_id": MISSING}),
    # C-VQA verification (frontend/benchmarks/cvqa/verification_views.py): curators and admins; creating a study with no
    # version is 400; an unknown version, study or item is 404.
    "cvqa-verification": Case(GET=page(CURATORS), POST=page(CURATORS, ok=400)),
    "cvqa-verification-version": Case(GET=page(CURATORS, ok=404), kwargs={"version_id": MISSING}),
    "cvqa-verification-resolve": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                                      kwargs={"version_id": MISSING}),
    "cvqa-verification-version-of-study": Case(GET=page(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    "cvqa-verification-add": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                                  kwargs={"slug": "no-such-study"}),
    "cvqa-adjudicate": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"item_id": MISSING}),
    # C-VQA grammar pass (frontend/benchmarks/cvqa/grammar_views.py): curators and admins; a version without
    # counterfactual questions is 404.
    "cvqa-grammar-console": Case(GET=page(CURATORS, ok=404), kwargs={"version_id": MISSING}),
    "cvqa-grammar-start": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"version_id": MISSING}),
    # CVRR-ES curation (frontend/benchmarks/cvrr/curation_views.py): an unknown dimension, captioning study or pool
    # video is 404; assigning nothing or creating a study without a name is 400
    "cvrr-curation": Case(GET=page(CURATORS)),
    "cvrr-dimensions": Case(GET=page(CURATORS)),
    "maia-categories": Case(GET=page(CURATORS)),
    "maia-category": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404), kwargs={"key": "no_such_key"}),
    "cvrr-dimension": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404), kwargs={"key": "no_such_key"}),
    "cvrr-videos": Case(GET=page(CURATORS), POST=page(CURATORS, ok=400)),
    "cvrr-captions": Case(GET=page(CURATORS)),
    "cvrr-captions-new": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=400)),
    "cvrr-caption-study": Case(GET=page(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    # a BlackSwanSuite localization study's report (frontend/benchmarks/blackswan/localization_views.py): a study
    # that does not exist -> 404
    "blackswan-localization": Case(GET=page(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    "cvrr-caption": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404), kwargs={"item_id": MISSING}),
    "blackswan-variants-preview": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404),
                                       kwargs={"pk": MISSING}),
    # BlackSwanSuite +P/+PC captions (frontend/benchmarks/blackswan/caption_views.py): a study that is no captions
    # study is 404
    "blackswan-captions": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404),
                               kwargs={"slug": "no-such-study"}),
    # NL-EYE triplets under curation (frontend/benchmarks/nleye/triplet_validation_views.py): an item or version
    # that does not exist is 404 for curators and admins (GET and POST), other roles 403
    "nleye-triplet-explain": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404),
                                  kwargs={"item_id": MISSING}),
    "nleye-triplet-validate": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404),
                                   kwargs={"item_id": MISSING}),
    "nleye-validation-state": Case(GET=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    # MAIA answer pools (frontend/benchmarks/maia/pool_views.py): a version that does not exist is 404 for curators and
    # admins, other roles 403; the decision is POST-only (GET 405)
    "maia-pool-report": Case(GET=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "maia-pool-review": Case(GET=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "maia-pool-run": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "maia-pool-decide": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                             kwargs={"pk": MISSING, "item_id": MISSING}),
    # the image studio (frontend/studio_views.py): curators and admins; an item or attempt that does not exist
    # is 404 for them (GET and POST), POST-only endpoints answer GET with 405
    "studio": Case(GET=page(CURATORS)),
    "studio-slot": Case(GET=page(CURATORS, ok=404), kwargs={"item_id": MISSING, "slot": "premise"}),
    "studio-attempt-start": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                                 kwargs={"item_id": MISSING, "slot": "premise"}),
    "studio-compare": Case(GET=page(CURATORS, ok=404), kwargs={"item_id": MISSING}),
    "studio-attempt": Case(GET=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "studio-attempt-final": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "studio-attempt-image": Case(GET=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "studio-attempt-mask": Case(GET=page(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "jobs": Case(GET=page(STAFF)),
    # the model registry's list (admins manage it in the Django admin)
    "models": Case(GET=page(STAFF)),
    "job-detail": Case(GET=page(EVERY_ROLE), kwargs={"pk": "job"}),  # the annotator asked for this job
    # an export job that does not exist: whoever may export something (curators export crowd submissions)
    # gets 404, other roles 403
    "export-download": Case(GET=page(STAFF, ok=404), kwargs={"pk": MISSING}),
    # --- Crowd pages (a study that does not exist: allowed -> 404, refused -> 403) ----------
    "crowd-studies": Case(GET=page(CURATORS)),
    "crowd-study-detail": Case(GET=page(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    # whoever may read submissions (annotation.crowd.access) reads the review queues
    "crowd-study-queue": Case(GET=page(STAFF, ok=404), kwargs={"slug": "no-such-study"}),
    "crowd-study-settings": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404),
                                 kwargs={"slug": "no-such-study"}),
    "crowd-study-new": Case(GET=page(CURATORS), POST=page(CURATORS, ok=400)),  # an empty form: 400
    # workers' attributes (frontend/worker_views.py): an unknown worker is 404, an empty import form 400
    "crowd-workers": Case(GET=page(CURATORS)),
    "crowd-workers-import": Case(GET=page(CURATORS), POST=page(CURATORS, ok=400)),
    "crowd-worker-attributes": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404),
                                    kwargs={"username": "no-such-worker"}),
    "crowd-markdown-preview": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS)),
    "crowd-study-items": Case(GET=page(CURATORS, ok=404), POST=page(CURATORS, ok=404),
                              kwargs={"slug": "no-such-study"}),
    "crowd-study-state": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                              kwargs={"slug": "no-such-study"}),
    "crowd-study-duplicate": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                                  kwargs={"slug": "no-such-study"}),
    "crowd-work-consent": Case(GET=page((ANNOTATOR, CURATOR), ok=405), POST=page((ANNOTATOR, CURATOR), ok=404),
                               kwargs={"slug": "no-such-study"}),
    "crowd-study-payments": Case(GET=page(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    "crowd-study-report": Case(GET=page(STAFF, ok=404), kwargs={"slug": "no-such-study"}),
    # the spread of a scene-writing study's pool (frontend/benchmarks/nleye/scene_views.py): curators and admins
    "scene-spread": Case(GET=page(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    # CVRR-ES expert assessment (frontend/benchmarks/cvrr/expert_views.py): curators and admins; an empty create or
    # qualification form is 400, an unknown study 404
    "cvrr-experts": Case(GET=page(CURATORS), POST=page(CURATORS, ok=405)),
    "cvrr-experts-create": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=400)),
    "cvrr-experts-qualify": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=400)),
    "cvrr-expert-report": Case(GET=page(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    "cvrr-expert-report-json": Case(GET=page(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    "cvrr-expert-finalise": Case(GET=page(CURATORS, ok=405), POST=page(CURATORS, ok=404),
                                 kwargs={"slug": "no-such-study"}),
    "crowd-work": Case(GET=page((ANNOTATOR, CURATOR), ok=404), kwargs={"slug": "no-such-study"}),
    "crowd-work-done": Case(GET=page((ANNOTATOR, CURATOR), ok=404), kwargs={"slug": "no-such-study"}),
    "crowd-past-answer": Case(GET=page((ANNOTATOR, CURATOR), ok=404), kwargs={"pk": MISSING}),
    # crowd platforms' entry links are public (they sign the worker in)
    "crowd-entry-prolific": Case(GET=everyone(404), kwargs={"slug": "no-such-study"}),
    "crowd-entry-mturk": Case(GET=everyone(404), kwargs={"slug": "no-such-study"}),
    # --- Protected media files (annotators only through a grant; none exists here) ---------
    "media-video-file": Case(GET=page(STAFF), kwargs={"pk": "video"}),
    "media-video-poster": Case(GET=page(STAFF), kwargs={"pk": "video"}),
    "media-image-file": Case(GET=page(STAFF), kwargs={"pk": "image"}),
    "media-image-thumbnail": Case(GET=page(STAFF), kwargs={"pk": "image"}),
    # --- API: media library (POST without a file: allowed roles get 400, others 403) -------
    "api-video-list": Case(GET=api(STAFF), POST=api(CURATORS, ok=400)),
    "api-video-detail": Case(GET=api(STAFF), kwargs={"pk": "video"}),
    "api-image-list": Case(GET=api(STAFF), POST=api(CURATORS, ok=400)),
    "api-image-detail": Case(GET=api(STAFF), kwargs={"pk": "image"}),
    # --- API: benchmarks and versions ------------------------------------------------------
    "api-benchmark-list": Case(GET=api(STAFF)),
    "api-benchmark-detail": Case(GET=api(STAFF), kwargs={"slug": "cvqa"}),
    "api-version-list": Case(GET=api(STAFF), POST=api(CURATORS, ok=400)),
    "api-version-detail": Case(GET=api(STAFF), kwargs={"pk": "version"}),
    # freeze is POST only; an empty draft cannot be frozen (400)
    "api-version-freeze": Case(GET=api(STAFF, ok=405), POST=api(CURATORS, ok=400), kwargs={"pk": "version"}),
    # starting a version export: posted without a layout, 400
    "api-version-export": Case(GET=api(STAFF, ok=405), POST=api(STAFF, ok=400), kwargs={"pk": "version"}),
    # researchers read items; adding one is for curators (the view itself answers 403)
    "api-version-items": Case(GET=api(STAFF), POST=api(CURATORS, ok=400), kwargs={"pk": "version"}),
    # --- API: the image studio (curators and admins; posted empty: no item -> 400) ----------
    "api-image-attempt-list": Case(GET=api(CURATORS), POST=api(CURATORS, ok=400)),
    "api-image-attempt-detail": Case(GET=api(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "api-image-attempt-final": Case(GET=api(CURATORS, ok=405), POST=api(CURATORS, ok=404), kwargs={"pk": MISSING}),
    # --- API: jobs (the job is the annotator's and already finished) -----------------------
    "api-job-list": Case(GET=api(EVERY_ROLE)),
    "api-model-list": Case(GET=api(STAFF)),
    "api-model-detail": Case(GET=api(STAFF, ok=404), kwargs={"pk": MISSING}),
    "api-job-detail": Case(GET=api(EVERY_ROLE), kwargs={"pk": "job"}),
    # only the requester or an admin may cancel; a finished job cannot be cancelled (409)
    "api-job-cancel": Case(GET=api(EVERY_ROLE, ok=405),
                           POST={ANON: API_ANON, ANNOTATOR: 409, CURATOR: 403, RESEARCHER: 403, ADMIN: 409},
                           kwargs={"pk": "job"}),
    # --- API: evaluation runs (shared by the research team; the run is nobody's and succeeded) --
    "api-run-list": Case(GET=api(RESEARCHERS), POST=api(RESEARCHERS, ok=400)),  # no options -> 400
    # importing a run from a predictions file (multipart): posted empty, no file and no version -> 400
    "api-run-import": Case(GET=api(RESEARCHERS, ok=405), POST=api(RESEARCHERS, ok=400)),
    "api-run-detail": Case(GET=api(RESEARCHERS), kwargs={"pk": "run"}),
    "api-run-progress": Case(GET=api(RESEARCHERS), kwargs={"pk": "run"}),
    "api-run-predictions": Case(GET=api(RESEARCHERS), kwargs={"pk": "run"}),
    "api-run-cancel": Case(GET=api(RESEARCHERS, ok=405), POST={**api(RESEARCHERS, ok=403), ADMIN: 409},
                           kwargs={"pk": "run"}),
    "api-run-resume": Case(GET=api(RESEARCHERS, ok=405), POST={**api(RESEARCHERS, ok=403), ADMIN: 409},
                           kwargs={"pk": "run"}),
    # judge references (researchers read; approving is for curators, the draft version has nothing: 400) and
    # failure tags (no prediction named: 400)
    "api-version-judge-references": Case(GET=api(STAFF), POST=api(CURATORS, ok=400), kwargs={"pk": "version"}),
    "api-judge-reference-revoke": Case(GET=api(CURATORS, ok=405), POST=api(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "api-run-failure-tags": Case(GET=api(STAFF), POST=api(STAFF, ok=400), kwargs={"pk": "run"}),
    # --- API: crowd engine (objects that do not exist: allowed -> 404, refused -> 403) ------
    "api-study-list": Case(GET=api(CURATORS), POST=api(CURATORS, ok=400)),
    "api-study-detail": Case(GET=api(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    "api-study-claim": Case(GET=api(CURATORS, ok=405), POST=api((ANNOTATOR, CURATOR), ok=404),
                            kwargs={"slug": "no-such-study"}),
    "api-study-consent": Case(GET=api(CURATORS, ok=405), POST=api((ANNOTATOR, CURATOR), ok=404),
                              kwargs={"slug": "no-such-study"}),
    "api-study-open-study": Case(GET=api(CURATORS, ok=405), POST=api(CURATORS, ok=404),
                                 kwargs={"slug": "no-such-study"}),
    "api-study-pause": Case(GET=api(CURATORS, ok=405), POST=api(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    "api-study-close": Case(GET=api(CURATORS, ok=405), POST=api(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    "api-study-items": Case(GET=api(CURATORS, ok=405), POST=api(CURATORS, ok=404), kwargs={"slug": "no-such-study"}),
    "api-study-queue": Case(GET=api(STAFF, ok=404), kwargs={"slug": "no-such-study"}),
    "api-study-review": Case(GET=api(CURATORS, ok=405), POST=api(CURATORS, ok=404),
                             kwargs={"slug": "no-such-study"}),
    "api-claim-list": Case(GET=api((ANNOTATOR, CURATOR))),
    "api-claim-detail": Case(GET=api((ANNOTATOR, CURATOR), ok=404), kwargs={"pk": MISSING}),
    "api-claim-draft": Case(GET=api((ANNOTATOR, CURATOR), ok=405), POST=api((ANNOTATOR, CURATOR), ok=404),
                            kwargs={"pk": MISSING}),
    "api-claim-submit": Case(GET=api((ANNOTATOR, CURATOR), ok=405), POST=api((ANNOTATOR, CURATOR), ok=404),
                             kwargs={"pk": MISSING}),
    "api-claim-release": Case(GET=api((ANNOTATOR, CURATOR), ok=405), POST=api((ANNOTATOR, CURATOR), ok=404),
                              kwargs={"pk": MISSING}),
    # staged (BlackSwanSuite) claims: the current step, and each step's draft and submission
    "api-claim-stage": Case(GET=api((ANNOTATOR, CURATOR), ok=404), kwargs={"pk": MISSING}),
    "api-claim-step-draft": Case(GET=api((ANNOTATOR, CURATOR), ok=405), POST=api((ANNOTATOR, CURATOR), ok=404),
                                 kwargs={"pk": MISSING, "step": "forecaster"}),
    "api-claim-step-submit": Case(GET=api((ANNOTATOR, CURATOR), ok=405), POST=api((ANNOTATOR, CURATOR), ok=404),
                                  kwargs={"pk": MISSING, "step": "detective"}),
    "api-study-report": Case(GET=api((RESEARCHER, CURATOR), ok=404), kwargs={"slug": "no-such-study"}),
    "api-study-report-csv": Case(GET=api((RESEARCHER, CURATOR), ok=404), kwargs={"slug": "no-such-study"}),
    "api-qualification-test-list": Case(GET=api((ANNOTATOR, CURATOR))),
    "api-qualification-test-detail": Case(GET=api((ANNOTATOR, CURATOR), ok=404), kwargs={"pk": MISSING}),
    # the answers are checked before the test is looked up: no answers -> 400
    "api-qualification-test-attempt": Case(GET=api((ANNOTATOR, CURATOR), ok=405),
                                           POST=api((ANNOTATOR, CURATOR), ok=400), kwargs={"pk": MISSING}),
    "api-submission-list": Case(GET=api(STAFF)),
    "api-submission-detail": Case(GET=api(STAFF, ok=404), kwargs={"pk": MISSING}),
    # readers may GET the route (405: POST only); only reviewers may decide
    "api-submission-decide": Case(GET=api(STAFF, ok=405), POST=api(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "api-submission-history": Case(GET=api(STAFF, ok=404), kwargs={"pk": MISSING}),
    # --- API: NL-EYE triplets under curation (a triplet that does not exist: curators -> 404) -------
    "api-nleye-triplet-detail": Case(GET=api(CURATORS, ok=404), kwargs={"pk": MISSING}),
    "api-nleye-triplet-explanation": Case(GET=api(CURATORS, ok=405), POST=api(CURATORS, ok=404),
                                          kwargs={"pk": MISSING}),
    "api-nleye-triplet-checks": Case(GET=api(CURATORS, ok=405), POST=api(CURATORS, ok=404), kwargs={"pk": MISSING}),
    # --- API: auth and documentation -------------------------------------------------------
    "api-token": Case(GET=everyone(405), POST=everyone(400)),  # public; no credentials -> 400
    "api-me": Case(GET=api(EVERY_ROLE)),
    "api-schema": Case(GET=api(EVERY_ROLE)),
    "api-docs": Case(GET=api(EVERY_ROLE)),
    "api-redoc": Case(GET=api(EVERY_ROLE)),
}

# DRF views whose access is not decided by HasRole/allowed_roles, and why.
NOT_ROLE_BASED = {
    "api-schema": "drf-spectacular view; SPECTACULAR_SETTINGS['SERVE_PERMISSIONS'] = any signed-in user",
    "api-docs": "drf-spectacular view; SPECTACULAR_SETTINGS['SERVE_PERMISSIONS'] = any signed-in user",
    "api-redoc": "drf-spectacular view; SPECTACULAR_SETTINGS['SERVE_PERMISSIONS'] = any signed-in user",
}
# Pages that are not limited to roles, and why.
PAGES_WITHOUT_ROLES = {
    "home": "any signed-in user (login_required); shows what the user's roles allow",
    "login": "public",
    "logout": "public (POST)",
}


def project_patterns():
    """(name, route, callback) for every URL pattern outside the admin site and static files."""

    def walk(patterns, prefix, namespace):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                ns = entry.namespace or namespace
                if ns == "admin":
                    continue
                yield from walk(entry.url_patterns, prefix + str(entry.pattern), ns)
            elif isinstance(entry, URLPattern):
                route = prefix + str(entry.pattern)
                if route.lstrip("^").startswith("static/"):
                    continue
                name = f"{namespace}:{entry.name}" if namespace and entry.name else entry.name
                yield name, route, entry.callback

    return list(walk(get_resolver().url_patterns, "", None))


def test_every_url_is_classified():
    patterns = project_patterns()
    unnamed = sorted(route for name, route, _ in patterns if not name)
    names = {name for name, _, _ in patterns if name}
    unclassified = sorted(names - set(MATRIX))
    stale = sorted(set(MATRIX) - names)
    assert len(names) >= 40, "the URL walk found too few patterns"
    assert not unnamed, f"URL patterns without a name cannot be classified: {unnamed}"
    assert not unclassified, (
        f"Unclassified URL names (add them to MATRIX in {__file__}): {', '.join(unclassified)}")
    assert not stale, f"MATRIX lists URL names the project no longer has: {', '.join(stale)}"


def test_every_api_view_declares_allowed_roles():
    checked = 0
    for name, _route, callback in project_patterns():
        view_class = getattr(callback, "cls", None)
        if view_class is None or not issubclass(view_class, APIView):
            continue
        checked += 1
        uses_has_role = any(issubclass(p, HasRole) for p in view_class.permission_classes)
        if not uses_has_role:
            assert name in NOT_ROLE_BASED or getattr(view_class, "allowed_roles", None), (
                f"{name} ({view_class.__name__}) neither uses HasRole nor says who may use it")
            continue
        roles = getattr(view_class, "allowed_roles", None)
        assert roles, f"{name} ({view_class.__name__}) declares no allowed_roles: HasRole refuses everybody"
        assert set(roles) <= set(ALL_ROLES), f"{name}: unknown roles in {roles}"
        for action, action_roles in (getattr(view_class, "action_roles", None) or {}).items():
            assert set(action_roles) <= set(ALL_ROLES), f"{name}: unknown roles for action {action!r}"
    assert checked >= 20


def test_every_page_declares_roles_or_is_listed():
    for name, _route, callback in project_patterns():
        if getattr(callback, "cls", None) is not None or name.startswith("api-"):
            continue
        if name in PAGES_WITHOUT_ROLES:
            continue
        roles = getattr(callback, "allowed_roles", None) or getattr(getattr(callback, "view_class", None),
                                                                    "allowed_roles", None)
        assert roles, f"page {name} does not declare allowed_roles"
        if roles == "public":  # deliberately open to everybody (e.g. crowd platforms' entry links)
            assert MATRIX[name].GET[ANON] != 302, f"public page {name} sends anonymous users to log in"
            continue
        assert not isinstance(roles, str) and set(roles) <= set(ALL_ROLES), f"page {name}: bad roles {roles!r}"


def test_has_role_refuses_views_that_declare_nothing(admin_user):
    request = RequestFactory().get("/")
    request.user = admin_user

    class Undeclared:
        pass

    class Declared:
        allowed_roles = (CURATOR,)
        action_roles = {"create": (RESEARCHER,)}
        action = "create"

    assert HasRole().has_permission(request, Undeclared()) is False
    assert HasRole().has_permission(request, Declared()) is True  # admin holds every role
    request.user = AnonymousUser()
    assert HasRole().has_permission(request, Declared()) is False


@pytest.fixture
def finished_run(draft_version):
    """A run that succeeded, started from the command line (no user)."""
    from django.utils import timezone

    from evaluation.models import EvaluationRun

    return EvaluationRun.objects.create(version=draft_version, model_id="org/some-model", backend="openai",
                                        status=EvaluationRun.Status.SUCCEEDED, started_at=timezone.now(),
                                        finished_at=timezone.now())


@pytest.fixture
def url_objects(video, image, draft_version, finished_job, finished_run) -> dict:
    return {"video": video.pk, "image": image.pk, "version": draft_version.pk, "job": finished_job.pk,
            "run": finished_run.pk}


def _matches(expected, status) -> bool:
    return status in expected if isinstance(expected, tuple) else status == expected


@pytest.mark.parametrize("who", WHO)
def test_permission_matrix(who, role_users, url_objects):
    """Every classified URL, GET and POST, as one role (or anonymous): one case per role, so that the
    cases spread over the test workers."""
    names = {name for name, _, _ in project_patterns() if name}
    failures = []
    requests = 0

    def new_client():
        client = Client()
        if who != ANON:
            client.force_login(role_users[who])
        return client

    kept = new_client()
    for name in sorted(names & set(MATRIX)):
        case = MATRIX[name]
        kwargs = {key: url_objects.get(value, value) if isinstance(value, str) else value
                  for key, value in case.kwargs.items()}
        url = reverse(name, kwargs=kwargs)
        for method in ("GET", "POST"):
            expected_by_role = getattr(case, method)
            if expected_by_role is None:
                continue
            assert set(expected_by_role) == set(WHO), f"{name} {method}: give an outcome for each of {WHO}"
            # logging out ends the session, so that request gets a client of its own
            client = new_client() if name == "logout" else kept
            response = client.get(url) if method == "GET" else client.post(url, {})
            requests += 1
            status = response.status_code
            expected = expected_by_role[who]
            if not _matches(expected, status):
                failures.append(f"{method} {url} ({name}) as {who}: expected {expected}, got {status}")
            elif status == 302 and who == ANON and name not in PAGES_WITHOUT_ROLES:
                login = reverse("login")
                if not response["Location"].startswith(f"{login}?next="):
                    failures.append(f"{method} {url} as {who}: redirected to {response['Location']}, not login")
            if response.streaming:
                b"".join(response.streaming_content)  # drain, so the test client closes the file
    assert requests > 200
    assert not failures, "Permission matrix mismatches:\n" + "\n".join(failures)
