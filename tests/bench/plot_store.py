"""Draw bench_store.py's sizes as a PNG: search latency, durable append rate, bytes per turn.

Imported only for `bench_store.py --plot`, so the bench itself needs no matplotlib. It
draws on an Agg canvas directly (no pyplot), so it runs headless and leaves no global
figure state behind.
"""

from __future__ import annotations

import os
import platform
import sqlite3
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

HEADROOM = 1.35
"""Top of the linear axes over their largest value: room for the labels above the points."""


def machine_line() -> str:
    """Where the figures came from: they mean little without the cores and versions."""
    return (
        f"{os.cpu_count()} cores · {platform.system()} {platform.machine()} · "
        f"Python {platform.python_version()} · SQLite {sqlite3.sqlite_version} · "
        f"{date.today().isoformat()}"
    )


def _turns(value: float, _: object = None) -> str:
    """A store size to two significant digits: a grown store overshoots its target a little."""
    rounded = float(f"{value:.2g}")
    if rounded >= 1_000_000:
        return f"{rounded / 1_000_000:g}M"
    return f"{rounded / 1000:g}k" if rounded >= 1000 else f"{rounded:g}"


def _label_points(ax: Axes, xs: list[float], ys: list[float], labels: list[str], *,
                  below: bool) -> None:  # fmt: skip
    """Each point's value beside it; `below` keeps labels of two close lines apart."""
    offset, align = ((0, -7), "top") if below else ((0, 6), "bottom")
    for x, y, label in zip(xs, ys, labels, strict=True):
        ax.annotate(label, (x, y), textcoords="offset points", xytext=offset,
                    ha="center", va=align, fontsize=7)  # fmt: skip


def _size_axis(ax: Axes, turns: list[float]) -> None:
    ax.set_xscale("log")
    ax.margins(x=0.07)
    ax.set_xticks(turns)
    ax.xaxis.set_major_formatter(FuncFormatter(_turns))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("turns in the store")
    ax.grid(True, which="major", alpha=0.3)


def _latency(ax: Axes, rows: Sequence[Mapping[str, float]], turns: list[float]) -> None:
    for key, label, marker in (("p50 ms", "p50", "o"), ("p99 ms", "p99", "s")):
        values = [row[key] for row in rows]
        ax.plot(turns, values, marker=marker, label=label)
        _label_points(ax, turns, values, [f"{v:.3g}" for v in values], below=key == "p50 ms")
    _size_axis(ax, turns)
    ax.set_yscale("log")
    ax.margins(y=0.12)
    ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("search latency (ms, log scale)")
    ax.set_title("search: 200 queries, one person's scope, half Japanese", fontsize=9)
    ax.legend(loc="upper left", fontsize=8)


def _ingest(ax: Axes, rows: Sequence[Mapping[str, float]], turns: list[float]) -> None:
    rates = [row["append/s"] for row in rows]
    ax.plot(turns, rates, marker="o", color="tab:green")
    _label_points(ax, turns, rates, [f"{v:,.0f}" for v in rates], below=False)
    _size_axis(ax, turns)
    ax.set_xlabel("")
    ax.set_ylim(bottom=0, top=max(rates) * HEADROOM)
    ax.set_ylabel("turns/s")
    ax.set_title("durable append into the store, 200 conversations at once", fontsize=9)


def _bytes(ax: Axes, rows: Sequence[Mapping[str, float]], turns: list[float]) -> None:
    stored = [row["db B/turn"] for row in rows]
    ax.plot(turns, stored, marker="s", color="tab:purple", label="database")
    labels = [f"{row['db B/turn']:.0f} ({row['db/text']:.2f}\u00d7)" for row in rows]
    _label_points(ax, turns, stored, labels, below=False)
    ax.plot(turns, [row["text B/turn"] for row in rows], linestyle="--", color="tab:gray",
            label="text (UTF-8)")  # fmt: skip
    _size_axis(ax, turns)
    ax.set_ylim(bottom=0, top=max(stored) * HEADROOM)
    ax.set_ylabel("bytes per turn")
    ax.set_title("size on disk (and its ratio to the text)", fontsize=9)
    ax.legend(loc="lower right", fontsize=8)


def draw(rows: Sequence[Mapping[str, float]], path: Path) -> None:
    """Write the plot of `rows` (bench_store's per-size rows) to `path` as a PNG."""
    turns = [row["turns"] for row in rows]
    figure = Figure(figsize=(11, 5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    figure.suptitle(
        "kioku history store scaling (synthetic corpus: 500 persons, English and Japanese)"
    )
    panels = figure.subplot_mosaic([["search", "ingest"], ["search", "bytes"]])
    _latency(panels["search"], rows, turns)
    _ingest(panels["ingest"], rows, turns)
    _bytes(panels["bytes"], rows, turns)
    figure.supxlabel(machine_line(), x=0.005, ha="left", fontsize=7, color="dimgray")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
