"""`clean_media [--dry-run] [--older-than SECONDS]`: remove stored media files that no row references."""

from django.core.management.base import BaseCommand, CommandError

from annotation import media_cleanup


class Command(BaseCommand):
    help = ("List and delete the files under the media storage (videos/, images/, posters/, thumbnails/) that no "
            "database row references, such as those a killed import or upload left behind. Only files older than "
            "the grace period are touched, and none written since a running import began.")

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="List what would be deleted; delete nothing.")
        parser.add_argument("--older-than", type=float, default=None, metavar="SECONDS",
                            help="Grace period: only files at least this old (default MEDIA_ORPHAN_GRACE_SECONDS, "
                                 f"{media_cleanup.grace_seconds():g}).")

    def handle(self, dry_run, older_than, **options):
        if older_than is not None and older_than < 0:
            raise CommandError("--older-than must be 0 or more seconds.")
        report = media_cleanup.clean(older_than=older_than, dry_run=dry_run)
        verb = "would delete" if dry_run else "deleted"
        for orphan in report.orphans:
            self.stdout.write(f"{verb} {orphan.name} ({orphan.size} bytes, {orphan.age_seconds:.0f} s old)")
        for lease in report.stale_leases:
            self.stdout.write(f"{verb} {lease} (the lease of an import that stopped)")
        if report.kept_for_imports:
            self.stdout.write(f"kept {report.kept_for_imports} unreferenced file(s) written since an import in "
                              "progress began")
        self.stdout.write(self.style.SUCCESS(
            f"{len(report.orphans)} unreferenced file(s), {report.size} bytes: "
            f"{'nothing deleted (dry run)' if dry_run else 'deleted'}."))
