"""Requests at the edges of HTTP get a 4xx with the platform's error body (a page on pages), never a 500:
format suffixes on every API route (`config.api_routes`), OPTIONS on every route (`config.api_metadata`),
ids out of range, with a dot or negative in addresses (`config.ids`), addresses the API does not have
(`config.not_found`), and bodies over their limit, refused before they are read (`config.uploads`)."""

import io

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotation.curation_models import ImageAttempt
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, Image, ItemMedia, Video
from config.ids import MAX_ID, IdConverter
from config.ids import OUT_OF_RANGE as ID_RANGE
from evaluation.models import EvaluationRun
from tests.config import test_permission_matrix
from tests.config.test_permission_matrix import MATRIX, project_patterns
from tests.conftest import create_study, files_under, logged_in_api, logged_in_client
from tests.frontend.test_runs_page import cvrr_version

pytestmark = pytest.mark.django_db

# the objects the permission matrix's addresses name (a video, an image, a draft version, a job, a run)
finished_run = test_permission_matrix.finished_run
url_objects = test_permission_matrix.url_objects

OUT_OF_RANGE = (MAX_ID + 1, 10**30)
NOT_API = ("api-schema", "api-docs", "api-redoc")


def matrix_url(name: str, objects: dict) -> str:
    kwargs = {key: objects.get(value, value) if isinstance(value, str) else value
              for key, value in MATRIX[name].kwargs.items()}
    return reverse(name, kwargs=kwargs)


def api_routes(objects: dict):
    """(url name, address, HTTP methods) of every API operation's route."""
    for name, _route, callback in project_patterns():
        if not name.startswith("api-") or name in NOT_API:
            continue
        actions = getattr(callback, "actions", None)
        if actions:
            methods = sorted(method.upper() for method in actions)
        else:
            view = callback.cls
            methods = [m.upper() for m in view.http_method_names if m not in ("options", "head") and hasattr(view, m)]
        yield name, matrix_url(name, objects), methods


def is_json(response) -> bool:
    return response["Content-Type"].split(";")[0] == "application/json"


def assert_json_404(response):
    assert response.status_code == 404, response.content[:300]
    assert is_json(response) and response.json()["error"], response.content[:300]


def assert_page_404(response):
    assert response.status_code == 404, response.content[:300]
    assert response["Content-Type"].startswith("text/html") and b"Not found" in response.content


# --- Format suffixes ------------------------------------------------------------------------------------

def test_every_api_route_answers_its_format_suffix(admin_user, url_objects):
    api = logged_in_api(admin_user)
    failures, checked = [], 0
    for name, url, methods in api_routes(url_objects):
        suffixed = url.rstrip("/") + ".json"
        for method in methods:
            response = api.generic(method, suffixed)
            checked += 1
            if response.status_code >= 500 or not is_json(response):
                failures.append(f"{method} {suffixed} ({name}): {response.status_code} {response['Content-Type']}")
    assert checked > 60
    assert not failures, "\n".join(failures)


def test_a_format_suffix_answers_as_the_route_does(curator, video, draft_version):
    api = logged_in_api(curator)
    for url in (f"/api/videos/{video.pk}/", "/api/videos/", f"/api/versions/{draft_version.pk}/items/",
                f"/api/versions/{draft_version.pk}/"):
        plain = api.get(url)
        suffixed = api.get(url.rstrip("/") + ".json")
        assert suffixed.status_code == plain.status_code == 200
        assert suffixed.json() == plain.json()
    # a write through the suffix is the write: an empty draft cannot be frozen, either way
    refused = api.post(f"/api/versions/{draft_version.pk}/freeze.json")
    assert refused.status_code == api.post(f"/api/versions/{draft_version.pk}/freeze/").status_code == 400
    assert refused.json()["error"]


def test_an_unknown_format_is_a_json_404(curator, video):
    api = logged_in_api(curator)
    assert_json_404(api.get(f"/api/videos/{video.pk}.xml"))
    assert_json_404(api.get("/api/videos/?format=xml"))


# --- Addresses the API does not have ------------------------------------------------------------------

@pytest.mark.parametrize("url", ["/api/videos/1.5/", "/api/videos/1.5.5/", "/api/videos/abc/", "/api/videos/-1/",
                                 "/api/videos/0/", "/api/claims/1.5/stage/", "/api/no-such-thing/",
                                 "/api/nleye/triplets/-7.2e-276/", "/api/runs/null%2Cnull/failure-tags/"])
def test_an_address_the_api_does_not_have_is_a_json_404(curator, url):
    assert_json_404(logged_in_api(curator).get(url))
    assert_json_404(logged_in_api(curator).post(url))


def test_an_address_no_page_has_is_the_not_found_page(curator):
    assert_page_404(logged_in_client(curator).get("/library/videos/1.5/"))
    assert_page_404(logged_in_client(curator).get("/no-such-page/"))


# --- Ids out of range in addresses ------------------------------------------------------------------------

def id_routes():
    """(url name, the names of its id arguments) of every route that takes an id."""
    for name, route, _callback in project_patterns():
        if "<id:" in route:
            yield name, [part.split(":")[1].split(">")[0] for part in route.split("<")[1:] if part.startswith("id:")]


def test_every_id_in_an_address_goes_through_the_id_converter():
    def walk(patterns):
        for entry in patterns:
            if isinstance(entry, URLResolver) and entry.namespace != "admin":
                yield from walk(entry.url_patterns)
            elif isinstance(entry, URLPattern):
                yield entry

    checked = 0
    for pattern in walk(get_resolver().url_patterns):
        names = pattern.pattern.regex.groupindex
        ids = [name for name in names if name == "pk" or name.endswith("_id")]
        converters = getattr(pattern.pattern, "converters", {})
        for name in ids:
            checked += 1
            assert isinstance(converters.get(name), IdConverter), f"{pattern.pattern}: {name} is not an <id:…>"
    assert checked > 100


@pytest.mark.parametrize("value", OUT_OF_RANGE)
def test_an_id_out_of_range_in_any_address_is_a_404(admin_user, url_objects, value):
    api, pages = logged_in_api(admin_user), logged_in_client(admin_user)
    failures, checked = [], 0
    for name, ids in id_routes():
        if name not in MATRIX:
            continue
        kwargs = {key: value if key in ids else url_objects.get(given, given) if isinstance(given, str) else given
                  for key, given in MATRIX[name].kwargs.items()}
        url = reverse(name, kwargs=kwargs)
        for method in ("GET", "POST"):
            client = api if url.startswith("/api/") else pages
            response = client.generic(method, url)
            checked += 1
            wanted = is_json(response) if url.startswith("/api/") else b"Not found" in response.content
            if response.status_code != 404 or not wanted:
                failures.append(f"{method} {url}: {response.status_code} {response['Content-Type']}")
    assert checked > 100
    assert not failures, "\n".join(failures)


# --- OPTIONS ----------------------------------------------------------------------------------------------

def test_options_on_every_route_is_answered(role_users, url_objects):
    failures, checked = [], 0
    clients = {role: (logged_in_api(user), logged_in_client(user)) for role, user in role_users.items()}
    clients["anonymous"] = (logged_in_api(None), logged_in_client(None))
    for name, _route, _callback in project_patterns():
        if name not in MATRIX:
            continue
        url = matrix_url(name, url_objects)
        for who, (api, pages) in clients.items():
            response = (api if url.startswith("/api/") else pages).options(url)
            checked += 1
            if response.status_code >= 500 or (url.startswith("/api/") and name not in NOT_API
                                               and not is_json(response)):
                failures.append(f"OPTIONS {url} as {who}: {response.status_code} {response['Content-Type']}")
    assert checked > 500
    assert not failures, "\n".join(failures)


def test_options_describes_the_nleye_triplet_endpoints(curator):
    api = logged_in_api(curator)
    for action in ("checks", "explanation"):
        response = api.options(f"/api/nleye/triplets/{MAX_ID}/{action}/")
        assert response.status_code == 200, response.content
        assert response.json()["name"] and "application/json" in response.json()["parses"]


# --- Bodies over the limit ----------------------------------------------------------------------------

class CountingStream(io.BytesIO):
    """A request body that counts the bytes the server reads of it."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.served = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.served += len(chunk)
        return chunk

    def readline(self, size=-1):
        line = super().readline(size)
        self.served += len(line)
        return line


BOUNDARY = "edge-boundary"


def multipart(fields: dict, files: dict) -> bytes:
    parts = [f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
             for name, value in fields.items()]
    parts += [f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
              f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n"
              for name, (filename, data) in files.items()]
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


def send(client, url: str, body: bytes, content_type: str, *, declared: int | None = None):
    """POST `body` as a stream whose reads are counted; `declared` is the Content-Length it claims."""
    stream = CountingStream(body)
    response = client.generic("POST", url, content_type=content_type, CONTENT_TYPE=content_type,
                              CONTENT_LENGTH=str(declared or len(body)), **{"wsgi.input": stream})
    return response, stream


def assert_json_refusal(response, status: int, words: str):
    assert response.status_code == status, response.content[:300]
    assert is_json(response) and words in response.json()["error"], response.content[:300]


def assert_page_refusal(response, status: int, words: str):
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("text/html") and words in response.content.decode()


def nothing_uploaded(media_root) -> bool:
    return not Video.objects.exists() and not Image.objects.exists() and not files_under(media_root)


UPLOAD = "multipart/form-data; boundary=" + BOUNDARY


def test_an_upload_declared_over_the_limit_is_refused_before_it_is_read(curator, settings, media_root):
    settings.MEDIA_MAX_UPLOAD_MB = 1
    body = multipart({"title": "big"}, {"file": ("big.mp4", b"\0" * (3 * 2**20))})
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response, stream = send(logged_in_api(curator), "/api/videos/", body, UPLOAD)
    assert_json_refusal(response, 413, "The upload is larger than the 1 MB the platform accepts.")
    assert stream.served == 0 and nothing_uploaded(media_root)

    response, stream = send(logged_in_client(curator), reverse("proposals-import"), body, UPLOAD)
    assert_page_refusal(response, 413, "The upload is larger than the 1 MB the platform accepts.")
    assert stream.served == 0


def test_reading_an_upload_stops_where_its_file_passes_the_limit(curator, settings, media_root, tmp_path):
    """A declared length within bounds (the other fields' allowance) does not let a file past the limit in:
    reading stops at its first chunk past it, and what was read of it is deleted."""
    settings.MEDIA_MAX_UPLOAD_MB = 1
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    settings.FILE_UPLOAD_TEMP_DIR = str(uploads)
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1000  # the file goes to a temporary file as it is read
    body = multipart({"title": "big"}, {"file": ("big.mp4", b"\0" * (3 * 2**20))})
    response, stream = send(logged_in_api(curator), "/api/videos/", body, UPLOAD)
    assert_json_refusal(response, 413, "'big.mp4' is larger than the 1 MB the platform accepts.")
    assert stream.served < 2**20 + 2**18 < len(body)
    assert nothing_uploaded(media_root) and not list(uploads.iterdir())

    response, stream = send(logged_in_client(curator), reverse("proposals-import"), body, UPLOAD)
    assert_page_refusal(response, 413, "&#x27;big.mp4&#x27; is larger than the 1 MB the platform accepts.")
    assert stream.served < 2**20 + 2**18 and not list(uploads.iterdir())


def test_a_form_body_over_the_limit_is_413_with_the_error_body(curator, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 200
    body = ("username=" + "x" * 300 + "&password=y").encode()
    response, stream = send(logged_in_api(None), "/api/auth/token/", body, "application/x-www-form-urlencoded")
    assert_json_refusal(response, 413, "The request body is larger than the 200 bytes the platform accepts.")
    assert stream.served == 0
    response, _ = send(logged_in_client(curator), reverse("blackswan-variants"), body,
                       "application/x-www-form-urlencoded")
    assert_page_refusal(response, 413, "The request body is larger than the 200 bytes the platform accepts.")


def test_a_multipart_form_whose_fields_are_over_the_limit_is_413(curator, settings, media_root):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = multipart({"title": "t" * 3000}, {"file": ("small.mp4", b"\0" * 100)})
    response, _ = send(logged_in_api(curator), "/api/videos/", body, UPLOAD)
    assert_json_refusal(response, 413, "The form's fields are larger than the 1000 bytes the platform accepts")
    assert nothing_uploaded(media_root)
    response, _ = send(logged_in_client(curator), reverse("proposals-import"), body, UPLOAD)
    assert_page_refusal(response, 413, "The form&#x27;s fields are larger than the 1000 bytes")


def test_a_form_with_too_many_fields_is_400_with_the_error_body(curator, settings, media_root):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 5
    fields = {f"f{n}": "x" for n in range(10)}
    body = "&".join(f"{name}={value}" for name, value in fields.items()).encode()
    response, _ = send(logged_in_api(None), "/api/auth/token/", body, "application/x-www-form-urlencoded")
    assert_json_refusal(response, 400, "The form sends more than 5 fields.")
    response, _ = send(logged_in_api(curator), "/api/videos/", multipart(fields, {}), UPLOAD)
    assert_json_refusal(response, 400, "The form sends more than 5 fields.")
    response, _ = send(logged_in_client(curator), reverse("blackswan-variants"), body,
                       "application/x-www-form-urlencoded")
    assert_page_refusal(response, 400, "The form sends more than 5 fields.")
    assert nothing_uploaded(media_root)


# --- Ids and numbers out of range in query filters and bodies ------------------------------------------

@pytest.fixture
def triplet(curator, image):
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="nleye"), label="pool",
                                              created_by=curator)
    item = BenchmarkItem.objects.create(version=version, external_id="t1", payload={
        "kind": "triplet", "premise": "A wet floor.", "hypothesis1": "He slips.", "hypothesis2": "He dances.",
        "label": 1})
    ItemMedia.objects.create(item=item, role="premise", image=image)
    return item


@pytest.mark.parametrize("value", OUT_OF_RANGE)
def test_an_id_out_of_range_in_a_query_filter_is_a_400_naming_it(curator, researcher, value):
    for user, url, name in ((researcher, f"/api/runs/?version={value}", "version"),
                            (curator, f"/api/image-attempts/?item={value}", "item")):
        response = logged_in_api(user).get(url)
        assert response.status_code == 400, response.content
        assert response.json()[name] == [ID_RANGE] and response.json()["error"] == f"{name}: {ID_RANGE}"


@pytest.mark.parametrize("value", OUT_OF_RANGE)
def test_an_id_out_of_range_in_a_body_is_a_400(curator, triplet, register_model, value):
    register_model("tiny/sd", backend="diffusion")
    api = logged_in_api(curator)
    create_study("pets", form={"fields": [{"name": "label", "type": "single_choice", "options": ["a", "b"]}]})
    response = api.post("/api/studies/pets/review/", {"submission_ids": [value], "action": "approve"}, format="json")
    assert response.status_code == 400, response.content
    assert "less than or equal to 9223372036854775807" in response.json()["error"]
    attempt = {"item": triplet.pk, "slot": "premise", "mode": "image2image", "prompt": "a kitchen",
               "model_id": "tiny/sd", "parent": f"image:{value}"}
    response = api.post("/api/image-attempts/", attempt, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"] == f"Unknown parent 'image:{value}': give attempt:<id> or image:<id>."
    assert not ImageAttempt.objects.exists()


def test_a_run_option_too_large_for_its_column_is_refused_on_the_api_and_the_page(researcher, video, register_model):
    register_model("org/chat-model", backend="openai", endpoint="http://127.0.0.1:9/v1")
    version = cvrr_version(video)
    options = {"version": version.pk, "model_id": "org/chat-model", "backend": "openai", "seed": 2**63}
    response = logged_in_api(researcher).post("/api/runs/", options, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"].startswith("seed: Ensure this value is less than or equal to")
    page = logged_in_client(researcher).post(reverse("runs"), {**options, "batch_size": 8, "chunk_size": 64})
    assert page.status_code == 400 and "seed: Ensure this value is less than or equal to" in page.content.decode()
    assert not EvaluationRun.objects.exists()
