"""Django's makemessages, except that a new string comes into a catalogue untranslated instead of
with a guessed ("fuzzy") translation of a similar one: translators fill exactly the empty entries."""

from django.core.management.commands import makemessages


class Command(makemessages.Command):
    msgmerge_options = [*makemessages.Command.msgmerge_options, "--no-fuzzy-matching"]
