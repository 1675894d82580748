"""A per-day bar chart of model usage, drawn here as SVG: no script, no library, no CDN,
so the page works offline and shows the same in every browser."""

from __future__ import annotations

from markupsafe import Markup, escape

from memory.spending import usd
from memory.store.usage import UsageTotal

WIDTH = 640
HEIGHT = 160
LEFT = 56  # room for the axis labels
BOTTOM = 20  # room for the first and last date
TOP = 8


def _value(day: UsageTotal, by_cost: bool) -> float:
    if by_cost:
        return day.cost_usd
    return day.input_tokens + day.cache_read_tokens + day.cache_write_tokens + day.output_tokens


def _label(value: float, by_cost: bool) -> str:
    return usd(value) if by_cost else f"{int(value):,} tokens"


def day_chart(days: list[UsageTotal], element_id: str) -> Markup:
    """One bar per day (oldest on the left), by cost in USD, or by tokens when no call of
    the period has a known cost (a local model); each bar's tooltip says its day, calls
    and cost."""
    by_cost = any(day.cost_usd > 0 for day in days)
    top = max((_value(day, by_cost) for day in days), default=0.0) or 1.0
    plot_w, plot_h = WIDTH - LEFT, HEIGHT - BOTTOM - TOP
    step = plot_w / max(len(days), 1)
    what = "cost in USD" if by_cost else "tokens"
    parts = [
        f'<svg id="{escape(element_id)}" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="100%" role="img" aria-label="model usage per day, {what}" '
        'xmlns="http://www.w3.org/2000/svg">',
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{WIDTH}" y2="{TOP + plot_h}" stroke="#999"/>',
        f'<text x="{LEFT - 4}" y="{TOP + 10}" text-anchor="end" font-size="10">'
        f"{escape(_label(top, by_cost))}</text>",
        f'<text x="{LEFT - 4}" y="{TOP + plot_h}" text-anchor="end" font-size="10">0</text>',
    ]
    for index, day in enumerate(days):
        height = plot_h * _value(day, by_cost) / top
        x = LEFT + index * step + step * 0.15
        tip = f"{day.key}: {day.calls} calls, {usd(day.cost_usd)}"
        if day.unpriced:
            tip += f" (+{day.unpriced} unpriced)"
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{TOP + plot_h - height:.1f}" '
            f'width="{step * 0.7:.1f}" height="{height:.1f}" fill="#4a7bd0" '
            f'data-day="{escape(day.key)}"><title>{escape(tip)}</title></rect>'
        )
    if days:
        parts += [
            f'<text x="{LEFT}" y="{HEIGHT - 4}" font-size="10">{escape(days[0].key)}</text>',
            f'<text x="{WIDTH}" y="{HEIGHT - 4}" text-anchor="end" font-size="10">'
            f"{escape(days[-1].key)}</text>",
        ]
    parts.append("</svg>")
    return Markup("".join(parts))
