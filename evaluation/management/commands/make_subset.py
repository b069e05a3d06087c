"""`manage.py make_subset`: draw a named, reproducible subset of a frozen version (`evaluation.subsets`)
and print its counts per group; `evaluate --subset NAME` then runs only its requests."""

from django.core.management.base import BaseCommand, CommandError

from annotation.management.command_users import named_user
from evaluation import request_options, runs, subsets
from evaluation.cli_options import add_benchmark_argument


class Command(BaseCommand):
    help = ("Draw a named subset of a frozen version: PER_GROUP requests per variant (seeded, reproducible), "
            "or for the open-ended variants VIDEOS items with all their requests.")

    def create_parser(self, prog_name, subcommand, **kwargs):
        kwargs.setdefault("conflict_handler", "resolve")  # --version names the benchmark version
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser):
        add_benchmark_argument(parser, required=True)
        parser.add_argument("--version", dest="version_label", required=True, metavar="LABEL",
                            help="label of a frozen version of that benchmark")
        parser.add_argument("--name", required=True, help="the subset's name, unique within the version")
        parser.add_argument("--seed", type=int, required=True)
        parser.add_argument("--per-group", type=int, default=subsets.DEFAULT_PER_GROUP,
                            help=f"requests drawn per variant (default {subsets.DEFAULT_PER_GROUP})")
        parser.add_argument("--variants", default="", help="comma-separated variants (default: all)")
        parser.add_argument("--videos", type=int, default=None,
                            help="open-ended variants: draw this many items (videos) with all their requests")
        parser.add_argument("--user", default="", help="who draws it (a username)")

    def handle(self, *args, **options):
        user = named_user(options["user"]) if options["user"] else None
        try:
            version = request_options.find_version(options["benchmark"], options["version_label"])
            subset = subsets.make_subset(
                version, options["name"], seed=options["seed"], per_group=options["per_group"],
                variants=[v.strip() for v in options["variants"].split(",") if v.strip()] or None,
                videos=options["videos"], user=user)
        except (runs.RunConfigError, subsets.SubsetError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Subset {subset.name!r} of {version} (seed {subset.seed}): "
                          f"{len(subset.request_ids)} requests")
        if subset.item_ids:
            self.stdout.write(f"  videos (items of the open-ended variants): {len(subset.item_ids)}")
        for variant, count in subsets.counts(subset).items():
            self.stdout.write(f"  {variant}: {count}")
