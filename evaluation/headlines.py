"""The headline numbers of a run's metrics, as lines for a terminal (`manage.py score` and `evaluate`
print them after the metrics are written): per main metric of the benchmark (`results.main_metrics`,
one or more per variant) its value, its n and the unparsed answers of its group; then the parser used
and how many answers the two parsers read differently."""

from __future__ import annotations

from evaluation import results


def unparsed_count(metrics: dict, path: str):
    """The unparsed answers of a metric's group: `unparsed` next to the metric, in the form the metric
    names (`original` for `original_accuracy`) or in its `pairs`; None where its answers are not parsed."""
    parts = results.split_path(path)
    parent, name = parts[:-1], parts[-1]
    form = name.removesuffix("_accuracy")
    for where in (parent, [*parent, form], [*parent, "pairs"]):
        found = results.lookup(metrics, ".".join([*where, "unparsed"]))
        if isinstance(found, int) and not isinstance(found, bool):
            return found
    return None


def headline_lines(benchmark_slug: str, metrics: dict) -> list[str]:
    rows = []
    for spec in results.main_metrics(benchmark_slug):
        found = results.cell(metrics, spec.path, rate=spec.rate, n_key=spec.n)
        if not found.present:
            continue
        unparsed = unparsed_count(metrics, spec.path)
        shown = found.display if found.computed else f"not computed ({found.reason})"
        rows.append((spec.label, shown, "—" if found.n is None else str(found.n),
                     "—" if unparsed is None else str(unparsed)))
    width = max([len("metric")] + [len(row[0]) for row in rows])
    value_width = max([len("value")] + [len(row[1]) for row in rows if not row[1].startswith("not computed")])
    lines = [f"{'metric':<{width}}  {'value':>{value_width}}  {'n':>6}  {'unparsed':>8}"]
    lines += [f"{label:<{width}}  {value:>{value_width}}  {n:>6}  {unparsed:>8}" for label, value, n, unparsed in rows]
    summary = metrics.get("predictions", {})
    if "parser" in summary:
        lines.append(f"parser: {summary['parser']} ({summary.get('parser_disagreements', 0)} answers read "
                     f"differently by the authors' and the strict parser)")
    return lines

