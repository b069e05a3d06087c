"""The model a management command proposes with (imported by commands only): its arguments
(`add_model_arguments`) and the keyword arguments of `generation.proposals.start_proposals` they give
(`model_choice`)."""

from django.core.management import CommandError

from annotation.management.command_users import named_curator
from annotation.management.commands.nleye_triplets import backend_option


def add_model_arguments(parser) -> None:
    parser.add_argument("--user", required=True, help="the curator starting it")
    parser.add_argument("--backend", required=True, help="a text backend: causal_lm, transformers, openai")
    parser.add_argument("--model", required=True, help="hub id, local folder or API model name")
    parser.add_argument("--revision", default="")
    parser.add_argument("--backend-option", action="append", default=[], metavar="KEY=VALUE",
                        help="backend option, repeatable (base_url=..., device=cuda)")
    parser.add_argument("--max-new-tokens", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--name", default="")


def model_choice(options: dict) -> dict:
    """{user, backend, model_id, revision, batch_size, name, params, backend_options} from the arguments."""
    user = named_curator(options["user"])
    if options["max_new_tokens"] is not None and options["max_new_tokens"] < 1:
        raise CommandError("--max-new-tokens must be at least 1.")
    return {"user": user, "backend": options["backend"], "model_id": options["model"],
            "revision": options["revision"], "batch_size": options["batch_size"], "name": options["name"],
            "params": {"max_new_tokens": options["max_new_tokens"]} if options["max_new_tokens"] else None,
            "backend_options": dict(backend_option(text) for text in options["backend_option"])}
