"""Django's makemessages for this project: it skips the folders that hold no page (tests, data,
deployment, benchmarks, docs), and a new string comes into a catalogue untranslated instead of with
a guessed ("fuzzy") translation of a similar one, so translators fill exactly the empty entries."""

from django.core.management.commands import makemessages

NOT_PAGES = ["var/*", "tests/*", "deploy/*", "bench/*", "docs/*"]


class Command(makemessages.Command):
    msgmerge_options = [*makemessages.Command.msgmerge_options, "--no-fuzzy-matching"]

    def handle(self, *args, **options):
        options["ignore_patterns"] = [*(options.get("ignore_patterns") or []), *NOT_PAGES]
        return super().handle(*args, **options)
