"""The benchmark registry of the evaluation layer: discovery when the app is ready, registration from
outside `evaluation/benchmarks/`, the lists of benchmarks that read it (command choices and help, the
results page, the admin filter), and what a benchmark declares for the generic machinery."""

import pkgutil
import sys
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.admin.sites import site
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import RequestFactory
from django.urls import reverse

from annotation.models import Benchmark as BenchmarkRow
from annotation.models import BenchmarkVersion
from evaluation import baseline_runs, benchmarks, judge_registry, judges, named_parsers, results
from evaluation.admin_filters import BenchmarkFilter
from evaluation.answer_parsing import OK, Parsed
from evaluation.benchmarks.base import Benchmark, EvalRequest
from evaluation.human_eval import base as human_eval_base
from evaluation.management.commands.evaluate import Command as EvaluateCommand
from evaluation.management.commands.export_requests import Command as ExportRequestsCommand
from evaluation.management.commands.human_eval import Command as HumanEvalCommand
from evaluation.management.commands.judge import Command as JudgeCommand
from evaluation.management.commands.run_baseline import Command as RunBaselineCommand
from evaluation.management.commands.score import Command as ScoreCommand
from evaluation.models import EvaluationRun, Judgment
from evaluation.results.drilldown import COUNT_LEAVES, DrillRules, extra_is
from evaluation.results.specs import MetricSpec, SeriesSpec

ROOT = Path(__file__).resolve().parents[2]
KNOWN = ("blackswan", "cvqa", "cvrr", "maia", "nleye")
COMMANDS = {"evaluate": EvaluateCommand, "export_requests": ExportRequestsCommand, "score": ScoreCommand,
            "run_baseline": RunBaselineCommand}


def shouting(request, text) -> Parsed:
    return Parsed(str(text).upper(), OK)


class SixthBenchmark(Benchmark):
    """A benchmark defined outside the package: one free-text variant."""

    slug = "sixth"
    title = "Sixth"
    variants = ("open",)
    authors_parser = staticmethod(shouting)
    main_metrics = (MetricSpec("open.accuracy", "Open accuracy"),)
    series = (SeriesSpec("per-kind", "Accuracy per kind", "kinds", "accuracy"),)
    drill_rules = DrillRules(segments={"hard": extra_is("hard", True)}, leaves=dict(COUNT_LEAVES))
    judge_kinds = ("cvrr",)
    baselines = ("dumb_pixel",)

    def requests(self, item, options):
        return [EvalRequest(f"{item.external_id}:open", item.external_id, "open", "Why?", "Why?")]

    def score(self, requests, responses, **models):
        return {}


@pytest.fixture
def sixth():
    benchmark = SixthBenchmark()
    benchmarks.register(benchmark)
    yield benchmark
    benchmarks.unregister(benchmark.slug)


def option(command_class, dest: str, subcommand: str = ""):
    parser = command_class().create_parser("manage.py", "command")
    if subcommand:
        sub = next(a for a in parser._actions if a.dest == "action")
        parser = sub.choices[subcommand]
    return next(action for action in parser._actions if action.dest == dest)


# --- The registry ------------------------------------------------------------------------------

def test_an_unknown_slug_names_the_registered_ones():
    assert benchmarks.slugs() == KNOWN
    with pytest.raises(KeyError) as caught:
        benchmarks.get("nope")
    assert caught.value.args[0] == "Unknown benchmark 'nope'; known: blackswan, cvqa, cvrr, maia, nleye."
    assert benchmarks.find("nope") is None


def test_a_second_benchmark_under_a_taken_slug_is_refused():
    class Impostor(Benchmark):
        slug = "cvqa"

    with pytest.raises(ValueError, match="'cvqa' is already registered by evaluation.benchmarks.cvqa"):
        benchmarks.register(Impostor)
    with pytest.raises(ValueError, match="has no slug"):
        benchmarks.register(type("Nameless", (Benchmark,), {}))
    with pytest.raises(TypeError, match="Only Benchmark subclasses"):
        benchmarks.register(object())
    assert type(benchmarks.get("cvqa")).__name__ == "CvqaBenchmark"


def test_the_app_discovers_every_benchmark_package_and_module_when_ready(monkeypatch):
    """With the registries empty and the benchmarks not imported yet, `ready()` imports every benchmark of the
    package: each module of a benchmark's package (NL-EYE's `benchmark`, `judge` and `explanation_votes`, each
    registering what it declares) or the single module of a benchmark not moved into a package yet."""
    found = {info.name: info.ispkg for info in pkgutil.iter_modules(benchmarks.__path__) if info.name != "base"}
    assert sorted(found) == list(KNOWN) and found["nleye"]
    monkeypatch.setattr(benchmarks, "_REGISTRY", {})
    monkeypatch.setattr(human_eval_base, "_KINDS", {})
    for kind, registered in judge_registry.KINDS.items():  # put back as they were: re-imported modules replace them
        monkeypatch.setitem(judge_registry.KINDS, kind, registered)
    for module in [module for module in sys.modules for name in found
                   if module == f"evaluation.benchmarks.{name}" or module.startswith(f"evaluation.benchmarks.{name}.")]:
        monkeypatch.delitem(sys.modules, module)
    for name in found:
        monkeypatch.setattr(benchmarks, name, getattr(benchmarks, name))
    assert benchmarks.slugs() == ()
    apps.get_app_config("evaluation").ready()
    assert benchmarks.slugs() == KNOWN
    for name, is_package in found.items():
        module = sys.modules[f"evaluation.benchmarks.{name}" + (".benchmark" if is_package else "")]
        assert benchmarks.get(name) is module.BENCHMARK
    judge = sys.modules["evaluation.benchmarks.nleye.judge"]
    assert type(judge_registry.KINDS["nleye_explanation"]) is judge.NleyeExplanationJudge
    votes = sys.modules["evaluation.benchmarks.nleye.explanation_votes"]
    assert human_eval_base.study_kind("nleye_explanation_vote").results is votes.explanation_results


def test_a_benchmark_defined_outside_the_package_registers_and_is_read_by_the_generic_code(sixth):
    assert benchmarks.get("sixth") is sixth and "sixth" in benchmarks.slugs()
    assert benchmarks.register(sixth) is sixth  # the same benchmark again: no error
    request = EvalRequest("a:open", "a", "open", "Why?", "Why?")
    assert named_parsers.parse("sixth", request, "because") == Parsed("BECAUSE", OK)
    assert named_parsers.parse("sixth", request, "because", named_parsers.STRICT) != Parsed("BECAUSE", OK)
    assert results.main_metrics("sixth") == sixth.main_metrics
    assert results.series_specs("sixth") == sixth.series
    assert results.drill_rules(sixth) is sixth.drill_rules
    assert judges.kind_for_benchmark("sixth") == "cvrr"
    assert judges.judged_benchmarks("cvrr") == ["cvrr", "sixth"]
    assert benchmarks.supporting("baselines", "dumb_pixel") == ["nleye", "sixth"]


def test_what_the_five_benchmarks_declare():
    assert {slug: judges.kind_for_benchmark(slug) for slug in KNOWN} == {
        "blackswan": "llm_match", "cvqa": None, "cvrr": "cvrr", "maia": "maia", "nleye": "nleye_explanation"}
    for benchmark in benchmarks.registered():
        assert all(kind in judge_registry.KINDS for kind in benchmark.judge_kinds), benchmark.slug
        assert all(name in baseline_runs.BASELINE_CLASSES for name in benchmark.baselines), benchmark.slug
        assert all(isinstance(spec, MetricSpec) for spec in benchmark.main_metrics), benchmark.slug
        assert benchmark.main_metrics, benchmark.slug
    assert benchmarks.supporting("baselines", "unimodal") == ["maia"]
    assert sorted(benchmarks.get("nleye").consistency_views) == ["orders"]
    assert named_parsers.reader("cvqa") is benchmarks.get("cvqa").authors_parser
    assert named_parsers.reader("nleye") is named_parsers.strict


# --- Lists of benchmarks ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_choices_and_help_come_from_the_registry(name, sixth):
    action = option(COMMANDS[name], "benchmark")
    assert tuple(action.choices) == benchmarks.slugs() == (*KNOWN, "sixth")
    assert action.help == "benchmark slug: blackswan, cvqa, cvrr, maia, nleye, sixth"
    benchmarks.unregister("sixth")
    assert "sixth" not in option(COMMANDS[name], "benchmark").choices


def test_the_human_baseline_study_takes_the_registered_benchmarks(sixth):
    assert tuple(option(HumanEvalCommand, "benchmark", "baseline-study").choices) == (*KNOWN, "sixth")


def test_a_registered_benchmark_appears_in_evaluate_and_an_unknown_one_is_refused(sixth, db):
    assert "sixth" in option(EvaluateCommand, "benchmark").choices
    with pytest.raises(CommandError, match="invalid choice: 'seventh'"):
        call_command("evaluate", "--benchmark", "seventh", "--version", "v1", "--model", "m")
    # a registered benchmark passes the choices; the database then says it has no such benchmark yet
    with pytest.raises(CommandError, match="Unknown benchmark 'sixth'; known: blackswan"):
        call_command("evaluate", "--benchmark", "sixth", "--version", "v1", "--model", "m")
    assert not EvaluationRun.objects.exists()


def test_the_judge_and_baseline_help_name_the_benchmarks_that_declare_them(sixth):
    assert option(RunBaselineCommand, "baseline").help == (
        "random: every benchmark; dumb_pixel: nleye, sixth; nli: nleye; unimodal: maia")
    kind_help = option(JudgeCommand, "kind").help
    assert "cvrr: cvrr, sixth" in kind_help and "llm_match: blackswan" in kind_help


def test_the_results_page_lists_the_registered_benchmarks(researcher_client, sixth):
    page = researcher_client.get(reverse("results"))
    html = page.content.decode()
    assert page.status_code == 200
    for slug in (*KNOWN, "sixth"):
        assert f'data-benchmark="{slug}"' in html
    assert ">Sixth</a>" in html
    assert researcher_client.get(reverse("results") + "?benchmark=sixth").status_code == 200
    refused = researcher_client.get(reverse("results") + "?benchmark=seventh")
    assert refused.status_code == 400


def test_the_results_page_shows_the_versions_of_the_chosen_benchmark(researcher_client, db):
    BenchmarkVersion.objects.create(benchmark=BenchmarkRow.objects.get(slug="cvrr"), label="only-cvrr",
                                    frozen=True, checksum="0" * 64)
    assert "only-cvrr" in researcher_client.get(reverse("results")).content.decode()
    assert "only-cvrr" in researcher_client.get(reverse("results") + "?benchmark=cvrr").content.decode()
    assert "only-cvrr" not in researcher_client.get(reverse("results") + "?benchmark=maia").content.decode()


def test_the_admin_filter_offers_the_registered_benchmarks(sixth, admin_user):
    request = RequestFactory().get("/admin/evaluation/evaluationrun/")
    request.user = admin_user
    found = BenchmarkFilter(request, {}, EvaluationRun, site._registry[EvaluationRun])
    assert [slug for slug, _ in found.lookup_choices] == [*KNOWN, "sixth"]
    assert dict(found.lookup_choices)["nleye"] == "NL-EYE"


# --- Judge kinds ----------------------------------------------------------------------------------

def test_a_judgment_kind_is_validated_against_the_judge_registry():
    assert set(judge_registry.names()) == {"llm_match", "cvrr", "maia", "nleye_explanation"}
    with pytest.raises(ValidationError) as caught:
        Judgment(kind="bogus").clean_fields(exclude=[f.name for f in Judgment._meta.fields if f.name != "kind"])
    assert "Unknown judge kind 'bogus'" in str(caught.value)
    Judgment(kind="cvrr").clean_fields(exclude=[f.name for f in Judgment._meta.fields if f.name != "kind"])
