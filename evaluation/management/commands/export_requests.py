"""`manage.py export_requests`: every evaluation request of a frozen version as JSON lines, for models
run outside the platform (score their answers with `manage.py score`).

One line per request of every variant: `request_id`, `item_id`, `variant`, `source` (the item's
record), `text` (the question or hypothesis without instructions), `options` (letter → text in the
order shown, when there are options), `order` (NL-EYE triplets: the source hypotheses in the order
shown, "12" or "21"), `hypothesis` (NL-EYE pairs: 1 or 2), `gold`; and what a model needs to be asked
the same way: `prompt` (and `context_prompt` / `describe_prompt` for two-step strategies),
`answer_type`, `n_samples`, `media` (role, kind, file under MEDIA_ROOT, checksum, segment, hidden,
label), `input`, `prompting`, `frames`, `seed`, `option_order`. The options default to each paper's main
setting. `--option-order` is `release` (the default: options under the release's letters, in the
release's order, question texts as released) or `shuffled:<seed>` (a seeded order per request); a
predictions file is scored with the order its requests were exported with. MAIA's VSV lines also
carry `statement_order` (which statement, true or false, is shown as A and as B: the paper's seeded
random assignment).
"""

import contextlib
import dataclasses
import json

from django.core.management.base import BaseCommand, CommandError

from evaluation import benchmarks, runs, scoring
from evaluation.benchmarks.base import RequestOptions
from evaluation.cli_options import add_benchmark_argument
from generation.frames import FramePolicy


def add_request_arguments(parser) -> None:
    """The options that decide a version's requests, shared with `manage.py score`."""
    add_benchmark_argument(parser)
    parser.add_argument("--version", dest="version_label", metavar="LABEL", help="label of a frozen version")
    parser.add_argument("--input", dest="input_strategy", default="default",
                        help="input strategy of the benchmark (default: the paper's main one)")
    parser.add_argument("--prompting", default="standard", help="prompting strategy (standard, cot, dscp, ...)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the option orders (as in `evaluate`)")
    parser.add_argument("--variants", default="", help="comma-separated task variants (default: all)")
    parser.add_argument("--option-order", default=None, metavar="ORDER",
                        help="release (default: the release's letters and order) or shuffled:<seed>")


def request_setup(options) -> tuple:
    """(version, RequestOptions, variants) from the command's options; CommandError for what does not fit."""
    missing = [flag for flag, key in (("--benchmark", "benchmark"), ("--version", "version_label")) if not options[key]]
    if missing:
        raise CommandError(f"Give {', '.join(missing)}.")
    try:
        version = runs.find_version(options["benchmark"], options["version_label"])
        benchmark = benchmarks.get(options["benchmark"])
        request_options = RequestOptions(input_strategy=options["input_strategy"] or "default",
                                         prompting=options["prompting"], seed=options["seed"],
                                         option_order=options.get("option_order") or "release")
        benchmark.resolve_input_strategy(request_options)
        benchmark.check_prompting(request_options)
        request_options = dataclasses.replace(request_options,
                                              option_order=benchmark.check_option_order(request_options))
    except (runs.RunConfigError, KeyError, ValueError) as exc:
        raise CommandError(str(exc.args[0]) if exc.args else str(exc)) from None
    variants = tuple(v.strip() for v in options["variants"].split(",") if v.strip())
    return version, request_options, variants


def media_record(medium, assets: dict) -> dict:
    asset = assets.get((medium.kind, medium.asset_id))
    return {"role": medium.role, "kind": medium.kind, "asset_id": medium.asset_id,
            "file": asset.file.name if asset is not None else None,
            "checksum": asset.checksum if asset is not None else None,
            "segment": list(medium.segment) if medium.segment else None, "hidden": medium.hidden,
            "label": medium.label}


def request_line(request, assets: dict, setting: dict) -> dict:
    line = {"request_id": request.request_id, "item_id": request.item_id, "variant": request.variant,
            "source": request.source, "text": request.text}
    if request.options:
        line["options"] = dict(request.options)
    shown = request.extra.get("shown")
    if request.variant == "triplet" and shown:
        line["order"] = "".join(role.removeprefix("hypothesis") for role in shown[1:])
    if request.variant == "pairs" and "hypothesis" in request.extra:
        line["hypothesis"] = request.extra["hypothesis"]
    if request.variant == "vsv" and "order" in request.extra:
        line["statement_order"] = list(request.extra["order"])
    line["gold"] = request.gold
    line["prompt"] = request.prompt
    if request.context_prompt:
        line["context_prompt"] = request.context_prompt
    if request.describe_prompt:
        line["describe_prompt"] = request.describe_prompt
    line.update(answer_type=request.answer_type, n_samples=request.n_samples,
                media=[media_record(medium, assets) for medium in request.media], **setting)
    return line


class Command(BaseCommand):
    help = "Write every evaluation request of a frozen benchmark version as JSON lines."

    def create_parser(self, prog_name, subcommand, **kwargs):
        kwargs.setdefault("conflict_handler", "resolve")  # --version names the benchmark version
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser):
        add_request_arguments(parser)
        parser.add_argument("--frames", default="", help="frame policy, e.g. uniform:8@448 (default: the paper's)")
        parser.add_argument("--out", required=True, help="the JSON lines file to write ('-' for standard output)")

    def handle(self, *args, **options):
        version, request_options, variants = request_setup(options)
        benchmark = benchmarks.get(version.benchmark.slug)
        try:
            frames = FramePolicy.parse(options["frames"] or benchmark.default_frame_policy).spec()
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        setting = {"input": benchmark.resolve_input_strategy(request_options), "prompting": request_options.prompting,
                   "frames": frames, "seed": request_options.seed, "option_order": request_options.option_order}
        to_stdout = options["out"] == "-"
        with contextlib.ExitStack() as stack:
            stream = self.stdout if to_stdout else stack.enter_context(open(options["out"], "w", encoding="utf-8"))
            count, items = self._write(stream, version, request_options, variants, setting)
        target = "standard output" if to_stdout else options["out"]
        self.stderr.write(f"Wrote {count} requests of {items} items of {version} to {target}.")

    @staticmethod
    def _write(stream, version, request_options, variants, setting) -> tuple[int, int]:
        count = items = 0
        try:
            for item, requests in scoring.item_requests(version, request_options, variants):
                assets = {(kind, asset.pk): asset for link in item.media.all()
                          for kind, asset in (("video", link.video), ("image", link.image)) if asset is not None}
                for request in requests:
                    stream.write(json.dumps(request_line(request, assets, setting), ensure_ascii=False) + "\n")
                count, items = count + len(requests), items + 1
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        return count, items
