"""Draw the Grafana dashboard's panels from Prometheus's answers, as a PNG.

Imported only by `dashboard_demo.py`. Each panel of `deploy/grafana/kioku.json` sits
where its `gridPos` puts it (24 columns), each target's series named by its
`legendFormat`; a query Prometheus answered with no series says so in its panel. It
draws on an Agg canvas directly (no pyplot), headless.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.dates import DateFormatter
from matplotlib.figure import Figure

UNIT = 0.42
"""Inches per dashboard grid unit of height (Grafana's is 30 px)."""
SCALE = {"bytes": (1 / 1_048_576, "MB"), "s": (1000, "ms"), "reqps": (1, "per s")}


def draw(
    board: Mapping[str, Any],
    results: Mapping[str, list[dict[str, Any]]],
    start: float,
    end: float,
    out: Path,
    answered: int,
) -> None:
    panels = board["panels"]
    bottom = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
    height = bottom * UNIT + 1.2
    figure = Figure(figsize=(18, height), dpi=80)
    minutes = (end - start) / 60
    figure.suptitle(
        f"{board['title']}: the panels of deploy/grafana/kioku.json, drawn from a real "
        f"Prometheus ({_prometheus_version()}) query_range answers, not by Grafana.\n"
        f"kioku serve scraped every 5 s for {minutes:.0f} min while {answered} messages "
        f"were answered through its CLI socket (model: the fake Anthropic API, echo).",
        fontsize=11,
        y=1 - 0.25 / height,
    )
    for panel in panels:
        pos = panel["gridPos"]
        left, width = pos["x"] / 24 + 0.035, pos["w"] / 24 - 0.05
        top = 1 - (0.9 + pos["y"] * UNIT) / height
        if panel["type"] == "row":
            figure.text(0.01, top - 0.1 / height, panel["title"], fontsize=13, weight="bold")
            continue
        lower, tall = top - (pos["h"] - 1.3) * UNIT / height, (pos["h"] - 2.1) * UNIT / height
        box = (left, lower, width, tall)
        _panel(figure.add_axes(box), panel, results)
    FigureCanvasAgg(figure).print_png(str(out))


def _panel(axes: Axes, panel: Mapping[str, Any], results: Mapping[str, list]) -> None:
    unit = panel["fieldConfig"]["defaults"].get("unit", "short")
    factor, shown = SCALE.get(unit, (1, "USD" if unit == "currencyUSD" else ""))
    axes.set_title(panel["title"] + (f" ({shown})" if shown else ""), fontsize=10, loc="left")
    drawn = 0
    for target in panel["targets"]:
        for series in results.get(target["expr"], []):
            times = [datetime.fromtimestamp(float(t)) for t, _ in series["values"]]
            values = [float(v) * factor for _, v in series["values"]]
            label = _legend(target.get("legendFormat", ""), series["metric"])
            axes.plot(times, values, label=label, linewidth=1.3)
            drawn += 1
    if not drawn:
        axes.text(0.5, 0.5, "no series in this run", ha="center", va="center", color="grey")
    elif drawn <= 8:
        axes.legend(fontsize=7, loc="upper left", ncols=2)
    axes.xaxis.set_major_formatter(DateFormatter("%H:%M"))
    axes.tick_params(labelsize=8)
    axes.grid(alpha=0.3)


def _legend(template: str, labels: Mapping[str, str]) -> str:
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), template).strip()


def _prometheus_version() -> str:
    try:
        line = subprocess.run(
            ["prometheus", "--version"], capture_output=True, text=True, check=True
        ).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "version unknown"
    return line.split(" (")[0].replace(",", "")  # "prometheus version 2.42.0+ds"
