"""Schemathesis over the platform's own OpenAPI schema (drf-spectacular), as every role and anonymously.

Every operation the schema lists is called (a new one as soon as it is listed) with requests Schemathesis
makes from the schema, valid ones and ones that break it on purpose (wrong types, missing fields, values
out of range), sent with the role's API token to the application in process. Path ids and slugs are
often those of real objects (`tests/api_data.py`), and any integer is now and then one at the edges of
PostgreSQL's bigint (2^63 and past it). Every response must pass `not_a_server_error`,
`status_code_conformance`, `content_type_conformance` and `response_schema_conformance`.

Writes are safe: the test's transaction is rolled back, and background jobs are sent when a transaction
commits, which in a test that is not transactional never happens. The run is bounded by the examples per
operation (`MAX_EXAMPLES`, Schemathesis' fuzzing phase, derandomized) and takes a few minutes for the five
identities; run it alone with `pytest -m schemathesis`.
"""

import pytest
import schemathesis
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings

from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER
from tests.api_data import make_api_data

ANONYMOUS = "anonymous"
WHO = (ANONYMOUS, ANNOTATOR, CURATOR, RESEARCHER, ADMIN)
MAX_EXAMPLES = 10
CHECKS = ("not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance")
OTHER_CHECKS = ("response_headers_conformance", "positive_data_acceptance", "negative_data_rejection",
                "use_after_free", "ensure_resource_availability", "missing_required_header", "ignored_auth",
                "unsupported_method", "allow_header_conformance")
# integers at the edges of PostgreSQL's integer and bigint, and past them
EDGE_INTEGERS = [0, -1, 2**31, 2**63 - 1, 2**63, -(2**63) - 1, 10**30]
# where a request names an object by its id or slug: drawn from the objects that exist, most of the time
ID_PARAMETERS = ("path.id", "query.item", "query.version", "body.version", "body.item", "body.prediction",
                 "body.output_version", "body.submission_ids[*]", "body.media_refs[*].asset_id")
SLUG_PARAMETERS = ("path.slug",)

pytestmark = [pytest.mark.schemathesis, pytest.mark.django_db]


class SameConnectionApp(WSGIHandler):
    """Django's WSGI application on the test's own database connection: like Django's test client, it
    does not close the connection when a request ends (that would end the test's transaction)."""

    def __call__(self, environ, start_response):
        signals.request_started.disconnect(close_old_connections)
        signals.request_finished.disconnect(close_old_connections)
        try:
            return super().__call__(environ, start_response)
        finally:
            signals.request_started.connect(close_old_connections)
            signals.request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def _node_id_for_schemathesis(request):
    """Schemathesis 4.32 names each operation's subtest through `item._nodeid`, which pytest 9.2 no longer has."""
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


@pytest.fixture(scope="module")
def openapi(django_db_setup, django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


@pytest.fixture(params=WHO)
def role(request) -> str:
    return request.param


@pytest.fixture
def api_data(db, bikes, skimage_data):
    return make_api_data(video_file=bikes, picture_files=[skimage_data / name for name in
                                                          ("astronaut.png", "coffee.png", "chelsea.png")])


@pytest.fixture
def api_schema(openapi, api_data, role, settings):
    settings.ALLOWED_HOSTS = ["localhost"]  # the host Schemathesis' in-process client names
    settings.SECURE_SSL_REDIRECT = False
    config = schemathesis.Config.from_dict({
        "seed": 24,
        "dictionaries": {"ids": {"values": api_data.ids}, "slugs": {"values": api_data.slugs},
                         "edges": {"values": EDGE_INTEGERS}},
        "parameters": {**{name: {"dictionary": "ids", "probability": 0.6} for name in ID_PARAMETERS},
                       **{name: {"dictionary": "slugs", "probability": 0.6} for name in SLUG_PARAMETERS}},
        "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True,
                       "dictionaries": {"integer": {"dictionary": "edges", "probability": 0.2}}},
        "checks": {name: {"enabled": name in CHECKS} for name in (*CHECKS, *OTHER_CHECKS)},
        "phases": {"examples": {"enabled": False}, "coverage": {"enabled": False}, "stateful": {"enabled": False}},
    })
    schema = schemathesis.openapi.from_dict(openapi, config=config)
    schema.app = SameConnectionApp()
    return schema


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(case, role, api_data):
    headers = {} if role == ANONYMOUS else {"Authorization": f"Token {api_data.tokens[role]}"}
    case.call_and_validate(headers=headers)
