from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.utils.html import format_html

from annotation import versions
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, Image, ItemMedia, Video


class _AssetAdmin(admin.ModelAdmin):
    list_filter = ["status", "source", "created_at"]
    search_fields = ["title", "original_name", "checksum"]
    readonly_fields = ["checksum", "size_bytes", "original_name", "file", "status", "probe_job", "uploaded_by",
                       "created_at", "provenance"]

    def has_add_permission(self, request):
        # Uploads go through the media library, which validates and probes them.
        return False


@admin.register(Video)
class VideoAdmin(_AssetAdmin):
    list_display = ["id", "title", "status", "duration", "fps", "width", "height", "codec", "size_bytes", "created_at"]
    readonly_fields = _AssetAdmin.readonly_fields + ["duration", "fps", "frame_count", "width", "height", "codec",
                                                     "poster"]


@admin.register(Image)
class ImageAdmin(_AssetAdmin):
    list_display = ["id", "title", "status", "width", "height", "format", "size_bytes", "created_at"]
    readonly_fields = _AssetAdmin.readonly_fields + ["width", "height", "format", "thumbnail"]


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ["slug", "name"]
    search_fields = ["slug", "name"]


class FrozenReadOnlyMixin:
    """Everything of a frozen version is shown read-only and cannot be deleted."""

    def _frozen(self, obj) -> bool:
        raise NotImplementedError

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and not (obj is not None and self._frozen(obj))

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and not (obj is not None and self._frozen(obj))


class ItemMediaInline(admin.TabularInline):
    model = ItemMedia
    extra = 0
    raw_id_fields = ["video", "image"]

    def _frozen_parent(self, obj):
        return obj is not None and obj.version.frozen

    def has_add_permission(self, request, obj=None):
        return not self._frozen_parent(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return not self._frozen_parent(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not self._frozen_parent(obj) and super().has_delete_permission(request, obj)


@admin.register(BenchmarkVersion)
class BenchmarkVersionAdmin(FrozenReadOnlyMixin, admin.ModelAdmin):
    list_display = ["__str__", "benchmark", "label", "source", "frozen", "item_count", "short_checksum", "created_at"]
    list_filter = ["benchmark", "frozen", "source"]
    search_fields = ["label", "description", "checksum"]
    readonly_fields = ["frozen", "frozen_at", "item_count", "checksum", "created_by", "created_at"]
    actions = ["freeze_versions"]

    def _frozen(self, obj):
        return obj.frozen

    @admin.display(description="checksum")
    def short_checksum(self, obj):
        return obj.checksum[:12]

    @admin.action(description="Freeze selected versions (irreversible)")
    def freeze_versions(self, request, queryset):
        for version in queryset.filter(frozen=False):
            try:
                versions.freeze(version)
            except ValidationError as exc:
                self.message_user(request, f"{version}: {'; '.join(exc.messages)}", messages.ERROR)
            else:
                self.message_user(request, f"{version} frozen with {version.items.count()} items.")

    def delete_queryset(self, request, queryset):
        if queryset.filter(frozen=True).exists():
            self.message_user(request, "Frozen versions cannot be deleted.", messages.ERROR)
            return
        super().delete_queryset(request, queryset)


@admin.register(BenchmarkItem)
class BenchmarkItemAdmin(FrozenReadOnlyMixin, admin.ModelAdmin):
    list_display = ["external_id", "version", "kind", "created_at"]
    list_filter = ["version__benchmark", "version"]
    search_fields = ["external_id", "version__label"]
    inlines = [ItemMediaInline]

    def _frozen(self, obj):
        return obj.version.frozen

    @admin.display(description="kind")
    def kind(self, obj):
        return format_html("<code>{}</code>", obj.payload.get("kind", ""))

    def delete_queryset(self, request, queryset):
        if queryset.filter(version__frozen=True).exists():
            self.message_user(request, "Items of frozen versions cannot be deleted.", messages.ERROR)
            return
        super().delete_queryset(request, queryset)
from annotation.benchmarks.blackswan import admin as blackswan_admin  # noqa: E402,F401  (the staged reveal's steps)
from annotation.crowd import admin as crowd_admin  # noqa: E402,F401  (registers the crowd engine's models)
