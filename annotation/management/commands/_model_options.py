"""The model a management command proposes with (imported by commands only): its arguments
(`add_model_arguments`), the registered model they name (`registered_model`, resolved against the model
registry, `generation.model_registry`) and the keyword arguments of `generation.proposals.start_proposals`
they give (`model_choice`)."""

from django.core.management import CommandError

from annotation.management.command_users import named_curator
from generation import model_registry
from generation.registered_models import Use


def add_model_arguments(parser) -> None:
    parser.add_argument("--user", required=True, help="the curator starting it")
    parser.add_argument("--backend", default="", help="the registered model's backend: causal_lm, transformers, "
                                                      "openai (default: its own)")
    parser.add_argument("--model", required=True, help="a registered model (manage.py models list): its name, or "
                                                       "the hub id, local folder or API model name an entry holds")
    parser.add_argument("--revision", default="", help="the registered model's pinned revision (default: it)")
    parser.add_argument("--backend-option", action="append", default=[], metavar="KEY=VALUE",
                        help="backend option, repeatable (device=cuda, base_url=...), added to the registered "
                             "model's")
    parser.add_argument("--max-new-tokens", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--name", default="")


def backend_option(text: str) -> tuple[str, object]:
    """`key=value`, the value read as JSON when it is JSON (as `evaluate --backend-option`)."""
    try:
        return model_registry.parse_option(text)
    except model_registry.ModelRefused:
        raise CommandError(f"--backend-option takes key=value (got {text!r}).") from None


def registered_model(options: dict, use: str = Use.PROPOSALS) -> dict:
    """{backend, model_id, revision, backend_options} of the registered model `--model` names (whoever runs
    commands runs the platform: admin-only options pass, checked); CommandError with the reason."""
    try:
        chosen = model_registry.choose(options["model"], use=use, backend=options["backend"],
                                       revision=options["revision"], admin=True,
                                       options=dict(backend_option(text) for text in options["backend_option"]))
    except model_registry.ModelRefused as exc:
        raise CommandError(str(exc)) from None
    return chosen.service_kwargs()


def model_choice(options: dict) -> dict:
    """{user, backend, model_id, revision, batch_size, name, params, backend_options} from the arguments."""
    user = named_curator(options["user"])
    if options["max_new_tokens"] is not None and options["max_new_tokens"] < 1:
        raise CommandError("--max-new-tokens must be at least 1.")
    return {"user": user, **registered_model(options), "batch_size": options["batch_size"], "name": options["name"],
            "params": {"max_new_tokens": options["max_new_tokens"]} if options["max_new_tokens"] else None}
