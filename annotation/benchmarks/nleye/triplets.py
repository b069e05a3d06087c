"""Where NL-EYE triplets under curation are read from: the items, their versions and what the curation
pages show beside them (images, scenes, the prompts and designers of the final images)."""

from django.contrib.auth import get_user_model
from django.db.models import Prefetch

from annotation.benchmarks.nleye.importer import ROLES
from annotation.curation_models import ImageAttempt, ItemCheck
from annotation.models import BenchmarkItem, BenchmarkVersion

SLUG = "nleye"
KIND = "triplet"
SLOTS = ROLES  # premise, hypothesis1, hypothesis2: the item's media roles
SLOT_NAMES = {"premise": "premise", "hypothesis1": "hypothesis 1", "hypothesis2": "hypothesis 2"}


def triplet_versions():
    """NL-EYE versions with their benchmark."""
    return BenchmarkVersion.objects.filter(benchmark__slug=SLUG).select_related("benchmark")


def triplets():
    """NL-EYE triplet items with what the curation pages read: version, curation record, media, checks
    (newest first) and the attempts picked as final images (latest pick first, as `chosen_attempts`)."""
    chosen = ImageAttempt.objects.filter(chosen_at__isnull=False).select_related("chosen_by").order_by(
        "-chosen_at", "-id")
    return (BenchmarkItem.objects.filter(version__benchmark__slug=SLUG, payload__kind=KIND)
            .select_related("version__benchmark", "curation")
            .prefetch_related("media__image",
                              Prefetch("checks", queryset=ItemCheck.objects.select_related("checked_by")
                                       .order_by("-checked_at", "-id")),
                              Prefetch("image_attempts", queryset=chosen, to_attr="chosen_attempts")))


def version_triplets(version):
    """The triplets of one version, by external id."""
    return triplets().filter(version=version).order_by("external_id")


def users_by_id(ids) -> dict:
    """The users with these ids, by id (for names shown beside recorded ids)."""
    ids = {pk for pk in ids if isinstance(pk, int)}
    return {user.pk: user for user in get_user_model().objects.filter(pk__in=ids)} if ids else {}
