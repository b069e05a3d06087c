"""Query filters of the media, versions and image-studio APIs (`config.api_filters`)."""

from django_filters import rest_framework as filters

from annotation import selectors
from annotation.benchmarks import registry
from annotation.curation_models import ImageAttempt
from annotation.models import BenchmarkItem, BenchmarkVersion, Image, MediaAsset, MediaTag, Video
from config.api_filters import BooleanFilter, after, before
from config.ids import IdChoiceFilter

MEDIA_FIELDS = ["q", "status", "source", "tag", "created_after", "created_before"]


class _MediaFilter(filters.FilterSet):
    q = filters.CharFilter(method="search", help_text="part of the title or of the original file name")
    status = filters.ChoiceFilter(choices=MediaAsset.Status.choices, help_text="probing (being read) or ready")
    source = filters.ChoiceFilter(choices=MediaAsset.Source.choices, help_text="how it came into the library")
    tag = filters.ModelChoiceFilter(field_name="tags", to_field_name="name", queryset=MediaTag.objects.all(),
                                    help_text="a tag's name")
    created_after = after("created_at", "media added")
    created_before = before("created_at", "media added")

    def search(self, queryset, name, value: str):
        return selectors.titled(queryset, value.strip())


class VideoFilter(_MediaFilter):
    class Meta:
        model = Video
        fields = MEDIA_FIELDS


class ImageFilter(_MediaFilter):
    class Meta:
        model = Image
        fields = MEDIA_FIELDS


class VersionFilter(filters.FilterSet):
    benchmark = filters.ChoiceFilter(field_name="benchmark__slug", choices=registry.choices,
                                     help_text="the benchmark's slug")
    label = filters.CharFilter(help_text="the version's label (exact)")
    frozen = BooleanFilter(help_text="true: only frozen versions; false: only drafts")
    source = filters.ChoiceFilter(choices=BenchmarkVersion.Source.choices, help_text="imported release or curation")
    created_after = after("created_at", "versions created")
    created_before = before("created_at", "versions created")

    class Meta:
        model = BenchmarkVersion
        fields = ["benchmark", "label", "frozen", "source", "created_after", "created_before"]


class ImageAttemptFilter(filters.FilterSet):
    item = IdChoiceFilter(queryset=BenchmarkItem.objects.all(), help_text="the item's id")
    slot = filters.CharFilter(help_text="the item's image slot (media role), e.g. premise")
    status = filters.ChoiceFilter(choices=ImageAttempt.Status.choices)
    mode = filters.ChoiceFilter(choices=ImageAttempt.Mode.choices)
    created_after = after("created_at", "attempts made")
    created_before = before("created_at", "attempts made")

    class Meta:
        model = ImageAttempt
        fields = ["item", "slot", "status", "mode", "created_after", "created_before"]
