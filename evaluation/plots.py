"""Charts of results, drawn with matplotlib's Agg renderer (no display, no pyplot state, so safe in
web workers): grouped bars of one metric per category across models, and a radar chart of one
metric over categories (MAIA's twelve). Each returns the image as PNG or SVG bytes.

A value of None (a group a run has no number for) draws no bar and no radar point; a chart with
no value at all says so in its middle instead of drawing empty axes.
"""

from __future__ import annotations

import io
import math
import textwrap

FORMATS = {"png": "image/png", "svg": "image/svg+xml"}
DPI = 110
LABEL_WIDTH = 16  # characters per line of a category label


class ChartError(ValueError):
    """A chart asked for in a format or shape that cannot be drawn."""


def _check(fmt: str, groups: list[str], series: list[tuple[str, list]]) -> None:
    if fmt not in FORMATS:
        raise ChartError(f"Unknown chart format {fmt!r}; choose one of {', '.join(FORMATS)}.")
    for label, values in series:
        if len(values) != len(groups):
            raise ChartError(f"Series {label!r} has {len(values)} values for {len(groups)} groups.")


def _wrap(label: str) -> str:
    return "\n".join(textwrap.wrap(str(label).replace("_", " "), LABEL_WIDTH, break_long_words=False)) or str(label)


def _has_values(series: list[tuple[str, list]]) -> bool:
    return any(value is not None for _, values in series for value in values)


def _save(figure, fmt: str) -> bytes:
    # matplotlib is loaded only when a chart is drawn: importing it costs every process that reads results
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    figure.savefig(buffer, format=fmt, dpi=DPI, bbox_inches="tight", metadata=metadata)
    return buffer.getvalue()


NO_DATA = "No scored run has a value here yet."
TOO_FEW = "A radar chart needs three categories or more."


def _no_data(axes, title: str, note: str = NO_DATA) -> None:
    axes.set_axis_off()
    axes.text(0.5, 0.5, note, ha="center", va="center", fontsize=11, color="#666666", transform=axes.transAxes)
    axes.set_title(title, fontsize=11)


def bar_chart(title: str, groups: list[str], series: list[tuple[str, list[float | None]]], *, fmt: str = "png",
              percent: bool = True, ylabel: str = "") -> bytes:
    """Grouped bars: one group per category, one bar per series (a model run) in each."""
    # matplotlib is loaded only when a chart is drawn: importing it costs every process that reads results
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    _check(fmt, groups, series)
    width_in = min(16.0, max(6.0, 1.0 + 0.9 * len(groups) * max(1, len(series)) ** 0.5))
    figure = Figure(figsize=(width_in, 4.6))
    axes = figure.add_subplot()
    if not groups or not series or not _has_values(series):
        _no_data(axes, title)
        return _save(figure, fmt)
    bar = 0.8 / len(series)
    for index, (label, values) in enumerate(series):
        xs = [g + (index - (len(series) - 1) / 2) * bar for g in range(len(groups))]
        heights = [math.nan if value is None else value for value in values]
        bars = axes.bar(xs, heights, width=bar, label=label)
        if len(groups) * len(series) <= 40:
            axes.bar_label(bars, labels=[_value_label(v, percent) for v in values], fontsize=7, padding=1)
    axes.set_xticks(range(len(groups)), [_wrap(g) for g in groups], fontsize=8)
    low = min([0.0, *(v for _, values in series for v in values if v is not None)])
    if low < 0:
        axes.axhline(0, color="#999999", linewidth=0.6)
    if percent:
        axes.set_ylim(low * 1.1 if low < 0 else 0, 1.05)
        axes.yaxis.set_major_formatter(PercentFormatter(1.0))
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=11)
    axes.grid(axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return _save(figure, fmt)


def _value_label(value, percent: bool) -> str:
    if value is None:
        return ""
    return f"{100 * value:.0f}" if percent else f"{value:.2f}"


def radar_chart(title: str, groups: list[str], series: list[tuple[str, list[float | None]]], *, fmt: str = "png",
                percent: bool = True) -> bytes:
    """One closed polygon per series over the categories (at least three); missing values leave a gap."""
    # matplotlib is loaded only when a chart is drawn: importing it costs every process that reads results
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    _check(fmt, groups, series)
    figure = Figure(figsize=(7.5, 6.2))
    if len(groups) < 3 or not series or not _has_values(series):
        _no_data(figure.add_subplot(), title, TOO_FEW if len(groups) < 3 else NO_DATA)
        return _save(figure, fmt)
    axes = figure.add_subplot(projection="polar")
    angles = [2 * math.pi * i / len(groups) for i in range(len(groups))]
    for label, values in series:
        closed = [math.nan if value is None else value for value in values]
        line = axes.plot([*angles, angles[0]], [*closed, closed[0]], linewidth=1.5, label=label)[0]
        axes.fill([a for a, v in zip(angles, closed, strict=True) if not math.isnan(v)],
                  [v for v in closed if not math.isnan(v)], alpha=0.08, color=line.get_color())
    axes.set_xticks(angles, [_wrap(g) for g in groups], fontsize=8)
    if percent:
        axes.set_ylim(0, 1)
        axes.yaxis.set_major_formatter(PercentFormatter(1.0))
    axes.tick_params(axis="y", labelsize=7)
    axes.set_title(title, fontsize=11, pad=18)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.05, 1.05), frameon=False)
    return _save(figure, fmt)
