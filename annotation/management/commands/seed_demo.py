from django.core.management.base import BaseCommand

from annotation.demo import seed_demo


class Command(BaseCommand):
    help = ("Create one demo user per role, import real sample media, a demo study, small frozen benchmark "
            "versions and tiny models to run on it (safe to run again).")

    def add_arguments(self, parser):
        parser.add_argument("--no-models", action="store_true",
                            help="skip building the tiny demo models (VLM, chat LM, BERT encoder, CLIP)")

    def handle(self, **options):
        result = seed_demo(say=self.stdout.write, models=not options["no_models"])
        self.stdout.write(self.style.SUCCESS("Demo logins (username / password):"))
        for username, password, role in result["logins"]:
            self.stdout.write(f"  {role:<11} {username} / {password}")
        for version in result["versions"]:
            self.stdout.write(f"Demo benchmark version: {version} ({version.item_count} items)")
        for name, path in result["models"].items():
            self.stdout.write(f"Tiny model {name}: {path}")
        for run in result["runs"]:
            self.stdout.write(f"Demo run {run.pk}: {run} is {run.status}; its results: "
                              f"/results/runs/{run.pk}/")
