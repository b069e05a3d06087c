"""Results pages for researchers: the frozen versions with their runs, a version's leaderboard with its
per-category charts and consistency views, a run's every metric, and the predictions behind any number.
The numbers come from `evaluation.results` (scored like `manage.py score --run`, cached per run)."""

import json

from csp.decorators import csp_replace
from django.core.exceptions import BadRequest
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render

from annotation import selectors as annotation_selectors
from annotation.media import max_upload_bytes
from config.content_security import INLINE_STYLES
from config.permissions import roles_allowed
from config.roles import ADMIN, RESEARCHER
from evaluation import (
    benchmarks,
    exports,
    failure_analysis,
    human_verdicts,
    imported_runs,
    judges,
    named_parsers,
    plots,
    request_exports,
    result_actions,
    results,
    runs,
    selectors,
    subsets,
    validation_samples,
)
from evaluation.models import EvaluationRun

REQUESTS_PER_PAGE = 40


def _pretty(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


@roles_allowed(RESEARCHER, ADMIN)
def results_index(request):
    """The frozen versions with their runs, optionally of one registered benchmark (`?benchmark=<slug>`)."""
    chosen = request.GET.get("benchmark", "")
    if chosen and chosen not in benchmarks.slugs():
        raise BadRequest(f"Unknown benchmark {chosen!r}; known: {', '.join(benchmarks.slugs())}.")
    versions = selectors.versions_with_runs(chosen)
    return render(request, "frontend/results.html", {"versions": versions, "benchmarks": benchmarks.registered(),
                                                     "chosen": chosen})


def version_page(request, version, *, status: int = 200, error: str = "", import_values=None):
    """The leaderboard of a version with what can be started from it (baselines, human evaluation,
    exports, its requests for models run elsewhere and the import of their predictions) and the jobs
    started; `error` says why an action was refused, `import_values` what a refused import form held."""
    board = results.leaderboard(version)
    benchmark = benchmarks.find(version.benchmark.slug)
    series = [s for s in results.series(version, board) if s.has_data]
    run_ids = list(version.runs.values_list("pk", flat=True))
    return render(request, "frontend/results_version.html", {
        "version": version, "board": board, "sections": _sections(benchmark), "series": series,
        "consistency": results.consistency(board),
        "human": results.human_section(version, board),
        "agreements": human_verdicts.agreements(version),
        "human_judges": result_actions.human_judge_offers(version),
        "subsets": [(subset, subsets.counts(subset)) for subset in subsets.subsets_of(version)],
        "human_performance": result_actions.human_performance(version),
        "human_performance_kinds": result_actions.HUMAN_PERFORMANCE,
        "human_clip": result_actions.human_clip_offered(version), "clip_models": result_actions.clip_models(),
        "clip_default": result_actions.SCORING_DEFAULTS["clip"],
        "failures": failure_analysis.version_distributions(version),
        "failure_factors": list(failure_analysis.factors_of(benchmark).values()),
        "unfinished": version.runs.exclude(status=EvaluationRun.Status.SUCCEEDED).count(),
        "formats": list(plots.FORMATS), "error": error,
        "baselines": result_actions.baseline_offers(version), "human_offers": result_actions.human_offers(version),
        "may_create_studies": result_actions.may_create_studies(request.user),
        "jobs": selectors.result_jobs(run_ids=run_ids, version=version),
        "request_options": request_exports.offered_options(version), "import_values": import_values or {},
        "max_upload_mb": max_upload_bytes() // (1024 * 1024), "imported_backend": runs.IMPORTED_BACKEND,
        "import_jobs": selectors.import_jobs(request.user, version),
        **_export_context(request, version, run_ids),
    }, status=status)


def _sections(benchmark) -> tuple:
    """The sections of the results page its benchmark declares (the generic ones for one not registered)."""
    return (benchmark or benchmarks.Benchmark).results_sections


def _export_context(request, version, run_ids) -> dict:
    return {"export_sources": result_actions.EXPORT_SOURCES, "export_formats": result_actions.EXPORT_FORMATS,
            "format_labels": exports.FORMAT_LABELS, "export_jobs": selectors.export_jobs(request.user, run_ids),
            "export_version": version}


def version_of(pk):
    return get_object_or_404(annotation_selectors.versions(), pk=pk)


@roles_allowed(RESEARCHER, ADMIN)
def results_version(request, pk):
    return version_page(request, version_of(pk))


@roles_allowed(RESEARCHER, ADMIN)
@csp_replace(INLINE_STYLES)  # matplotlib's SVG styles its shapes inline, also when opened on its own
def results_chart(request, pk, series, kind, fmt):
    version = version_of(pk)
    try:
        image = results.chart_image(version, series, kind, fmt)
    except results.UnknownMetric as exc:
        raise Http404(str(exc)) from None
    response = HttpResponse(image, content_type=plots.FORMATS[fmt])
    if request.GET.get("download"):
        name = f"{version.benchmark.slug}-{version.label}-{series}-{kind}.{fmt}"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def run_of(pk) -> EvaluationRun:
    return get_object_or_404(selectors.runs_with_benchmark(), pk=pk)


def _parser(request) -> str:
    """The answer parser the page's numbers use (`?parser=`, default the authors'); 400 for an unknown one."""
    try:
        return named_parsers.check(request.GET.get("parser") or named_parsers.DEFAULT)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


def _parser_query(parser: str) -> str:
    return "" if parser == named_parsers.DEFAULT else f"parser={parser}"


def run_page(request, run: EvaluationRun, *, status: int = 200, error: str = ""):
    """A run's every metric with the judges and scoring models its benchmark offers, the jobs started
    for it and its export; `error` says why an action was refused."""
    parser = _parser(request)
    found = results.run_results(run, parser)
    return render(request, "frontend/results_run.html", {
        "run": run, "label": results.run_label(run), "results": found, "frames": results.frame_text(run),
        "cells": results.flat_metrics(found.metrics) if found.ok else [],
        "summary": found.metrics.get("predictions", {}), "parser": parser, "parsers": named_parsers.NAMES,
        "parser_query": _parser_query(parser), "error": error,
        "judges": result_actions.judge_offers(run), "scoring": result_actions.scoring_offers(run),
        "jobs": selectors.result_jobs(run_ids=[run.pk]), "export_scope": run.pk,
        "failure_taggable": failure_analysis.taggable(run),
        "validation_samples": validation_samples.samples_of(run),
        "validation_models": validation_samples.judge_models(run, human_verdicts.kind_for(run.version)),
        "imported": imported_runs.summary(run) if run.backend == runs.IMPORTED_BACKEND else "",
        **_export_context(request, run.version, [run.pk]),
    }, status=status)


@roles_allowed(RESEARCHER, ADMIN)
def results_run(request, pk):
    return run_page(request, run_of(pk))


@roles_allowed(RESEARCHER, ADMIN)
def results_run_json(request, pk):
    run = run_of(pk)
    parser = _parser(request)
    found = results.run_results(run, parser)
    if not found.ok:
        return JsonResponse({"error": found.error}, status=409)
    meta = {"run": run.pk, "benchmark": run.version.benchmark.slug, "version": run.version.label,
            "checksum": run.version.checksum, "model": run.model_id, "revision": run.resolved_revision,
            "backend": run.backend, "input": run.input_strategy, "prompting": run.prompting,
            "option_order": run.option_order,
            "frames": results.frame_text(run), "seed": run.seed, "variants": list(run.variants or []),
            "judge": found.judge, "parser": parser, "model_metrics": found.model_metrics}
    return JsonResponse({"meta": meta, **found.metrics}, json_dumps_params={"ensure_ascii": False, "indent": 2})


def _prompt_text(prompt) -> str:
    """The stored messages as a reader sees them: each message's role and text, media as placeholders."""
    lines = []
    for message in prompt if isinstance(prompt, list) else []:
        if not isinstance(message, dict):
            continue
        parts = message.get("content") if isinstance(message.get("content"), list) else [message.get("content")]
        shown = []
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "text":
                shown.append(str(part.get("text", "")))
            elif isinstance(part, dict):
                frames = f", {part['frames']} frames" if part.get("frames") else ""
                shown.append(f"[{part.get('type', 'medium')}{frames}]")
            elif part:
                shown.append(str(part))
        lines.append(f"{message.get('role', '?')}: " + "\n".join(shown))
    return "\n\n".join(lines)


def _judgments(predictions) -> dict[int, list]:
    """prediction id → its stored judge verdicts (none where judgments are not installed)."""
    found: dict[int, list] = {}
    for judgment in selectors.judgments_of(predictions):
        found.setdefault(judgment.prediction_id, []).append({"judgment": judgment,
                                                             "verdict": _pretty(judgment.verdict)})
    return found


def _request_rows(run: EvaluationRun, requests, outcomes) -> list[dict]:
    ids = [r.request_id for r in requests]
    predictions = list(selectors.predictions_of(run, ids))
    judged = _judgments(predictions)
    tags = failure_analysis.current_tags(predictions)
    verdicts = human_verdicts.current_on_predictions(predictions)
    by_request: dict[str, list] = {}
    for prediction in predictions:
        by_request.setdefault(prediction.request_id, []).append({
            "failure_tag": tags.get(prediction.pk), "human_verdict": verdicts.get(prediction.pk),
            "prediction": prediction, "prompt_text": _prompt_text(prediction.prompt),
            "prompt": _pretty(prediction.prompt), "inputs": _pretty(prediction.inputs),
            "media": [m for m in (prediction.inputs or {}).get("media") or [] if isinstance(m, dict)],
            "judgments": judged.get(prediction.pk, []),
        })
    benchmark = failure_analysis.benchmark_of(run)
    variants = set(getattr(benchmark, "failure_variants", ()) or ())
    taggable = bool(failure_analysis.factors_of(benchmark))
    verdict_kind = human_verdicts.kind_for(run.version)
    judged = judges.get_kind(verdict_kind).applies if verdict_kind else (lambda request: False)
    return [{"request": r, "outcome": outcomes[r.request_id], "predictions": by_request.get(r.request_id, []),
             "judged": judged(r),
             "taggable": taggable and outcomes[r.request_id].status == results.WRONG
             and (not variants or r.variant in variants),
             "gold": _pretty(r.gold) if isinstance(r.gold, list | dict) else r.gold,
             "gold_is_text": isinstance(r.gold, list | dict)} for r in requests]


@roles_allowed(RESEARCHER, ADMIN)
def results_drill(request, pk, metric):
    run = run_of(pk)
    parser = _parser(request)
    outcome = request.GET.get("outcome", "")
    if outcome and outcome not in results.OUTCOMES:
        outcome = ""
    try:
        found = results.drill(run, metric, outcome_filter=outcome, view=request.GET.get("view", ""),
                              view_cell=request.GET.get("cell", ""), parser=parser)
    except results.UnknownMetric as exc:
        raise Http404(str(exc)) from None
    page = Paginator(found.requests, REQUESTS_PER_PAGE).get_page(request.GET.get("page"))
    keep = request.GET.copy()
    keep.pop("page", None)
    filters = request.GET.copy()
    filters.pop("page", None)
    filters.pop("outcome", None)
    return render(request, "frontend/results_drill.html", {
        "run": run, "label": results.run_label(run), "drill": found, "page": page,
        "rows": _request_rows(run, list(page), found.outcomes), "outcome": outcome,
        "outcome_counts": sorted(found.outcome_counts.items()), "query": keep.urlencode(),
        "filter_query": filters.urlencode(), "parser": parser, "next": request.get_full_path(),
        "factors": list(failure_analysis.factors_of(failure_analysis.benchmark_of(run)).values()),
        "verdict_labels": human_verdicts.labels_for(run.version)
        if human_verdicts.may_give(request.user) else (),
    })


@roles_allowed(RESEARCHER, ADMIN)
def results_disagreements(request, pk):
    """The run's predictions that the authors' and the strict parser read differently, both readings side by side."""
    run = run_of(pk)
    try:
        found = results.disagreements(run)
    except (KeyError, ImportError, ValueError) as exc:
        raise BadRequest(f"The run's requests cannot be rebuilt: {exc}") from None
    page = Paginator(found, REQUESTS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "frontend/results_disagreements.html", {
        "run": run, "label": results.run_label(run), "page": page, "total": len(found),
    })
