"""`manage.py models`: list, add (or change), enable, disable and remove the model registry's entries
(`generation.model_registry`), as admins do in the Django admin."""

import json

from django.core.management.base import BaseCommand, CommandError

from generation import model_registry
from generation.backends import registry
from generation.registered_models import RegisteredModel, Use

FIELDS = ("name", "backend", "model_id", "revision", "uses", "endpoint", "key_variable", "options",
          "allowed_options", "trust_remote_code", "enabled", "description")


def entry_record(entry: RegisteredModel) -> dict:
    return {field: getattr(entry, field) for field in FIELDS}


class Command(BaseCommand):
    help = ("The model registry: the models curators and researchers may pick (by name, or by the model id or "
            "folder an entry holds), with their backend, pinned revision, endpoint and key variable.")

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("list", help="the entries, by name")
        listing.add_argument("--use", choices=Use.values, help="only those registered for this use")
        listing.add_argument("--all", action="store_true", help="disabled entries too")
        listing.add_argument("--json", action="store_true", help="one JSON object per line")
        add = sub.add_parser("add", help="add an entry, or change the one with this name")
        add.add_argument("name")
        add.add_argument("--backend", required=True, choices=registry.MODEL_BACKENDS)
        add.add_argument("--model-id", required=True, help="hub id, local folder, or API model name")
        add.add_argument("--use", action="append", required=True, choices=Use.values, dest="uses",
                         help="what it may be used for (repeatable)")
        add.add_argument("--revision", default="", help="the revision it is pinned to")
        add.add_argument("--endpoint", default="", help="openai: the API root, e.g. http://host:8000/v1")
        add.add_argument("--key-variable", default="", help="openai: one of MODEL_KEY_VARIABLES")
        add.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                         help="an option it always loads with (repeatable)")
        add.add_argument("--allow-option", action="append", default=[], metavar="NAME",
                         help="an option people may add when they pick it (repeatable; none: every option the "
                              "backend lets people pass)")
        add.add_argument("--trust-remote-code", action="store_true", help="run the model folder's own Python")
        add.add_argument("--disabled", action="store_true", help="registered, but not offered or usable yet")
        add.add_argument("--description", default="")
        for action in ("remove", "enable", "disable"):
            sub.add_parser(action, help=f"{action} an entry").add_argument("name")

    def handle(self, *args, **options):
        action = options["action"]
        try:
            if action == "list":
                return self._list(options)
            if action == "add":
                entry = model_registry.register(
                    options["name"], backend=options["backend"], model_id=options["model_id"], uses=options["uses"],
                    revision=options["revision"], endpoint=options["endpoint"], key_variable=options["key_variable"],
                    options=dict(model_registry.parse_option(text) for text in options["option"]),
                    allowed_options=list(options["allow_option"]), trust_remote_code=options["trust_remote_code"],
                    enabled=not options["disabled"], description=options["description"])
                self.stdout.write(f"Registered {entry.label}.")
            elif action == "remove":
                model_registry.remove(options["name"])
                self.stdout.write(f"Removed {options['name']}.")
            else:
                entry = RegisteredModel.objects.filter(name=options["name"]).first()
                if entry is None:
                    raise model_registry.ModelRefused(f"There is no registered model {options['name']!r}.")
                entry.enabled = action == "enable"
                entry.save(update_fields=["enabled", "updated_at"])
                self.stdout.write(f"{entry.name} {action}d.")
        except model_registry.ModelRefused as exc:
            raise CommandError(str(exc)) from None

    def _list(self, options) -> None:
        rows = model_registry.entries(options["use"], enabled=not options["all"])
        for entry in rows:
            if options["json"]:
                self.stdout.write(json.dumps(entry_record(entry), sort_keys=True))
            else:
                flags = [flag for flag, on in (("disabled", not entry.enabled),
                                               ("trust_remote_code", entry.trust_remote_code)) if on]
                where = f" at {entry.endpoint}" if entry.endpoint else ""
                key = f", key ${entry.key_variable}" if entry.key_variable else ""
                self.stdout.write(f"{entry.label}{where}{key} — {', '.join(entry.uses)}"
                                  + (f" [{', '.join(flags)}]" if flags else ""))
        if not rows and not options["json"]:
            self.stdout.write("No model is registered" + (f" for {options['use']}." if options["use"] else "."))
