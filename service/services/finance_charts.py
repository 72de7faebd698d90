"""Finance charts as SVG, drawn by pygal from the daily report (the console's finance page shows
them; anyone with the finance role may fetch them): money per day, and each game's actual RTP
over the period against the RTP it publishes.

Self-contained SVG: pygal's tooltips script (fetched from a CDN by default) is left out, so a
chart renders with no network; what remains is pygal's inline configuration object, inert where
the chart is shown as an image (as the console does). Every plotted figure is also in the SVG's
text (its value descriptions), for screen readers and for tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

import pygal
from pygal.style import Style

from service.services.finance_books import DailyReport

KINDS = ("money", "rtp")

_STYLE = Style(
    background="white",
    plot_background="white",
    foreground="#222",
    foreground_strong="#000",
    foreground_subtle="#555",
    colors=("#1f5fa8", "#b8412c", "#2e7d32", "#6a1b9a"),
    font_family="sans-serif",
)


def _config(chart: pygal.Graph, title: str) -> pygal.Graph:
    chart.config.js = []  # no CDN script: the SVG stands alone
    chart.config.title = title
    chart.config.style = _STYLE
    chart.config.width = 900
    chart.config.height = 360
    chart.config.x_label_rotation = 30
    chart.config.legend_at_bottom = True
    chart.config.print_values = False
    return chart


def _major(amount: int) -> float:
    return amount / 100


def money_chart(report: DailyReport, variant: str | None = None) -> str:
    """Stakes, payouts and GGR per day, in major units, for one game or all."""
    days: dict[str, list[int]] = {}
    for line in report.lines:
        if variant is not None and line.variant != variant:
            continue
        day = days.setdefault(line.day.isoformat(), [0, 0, 0])
        day[0] += line.totals.stakes
        day[1] += line.totals.payouts
        day[2] += line.totals.ggr
    which = variant or "all games"
    chart = _config(pygal.Line(), f"{report.currency}: stakes, payouts and GGR per day ({which})")
    chart.x_labels = list(days)
    for i, name in enumerate(("stakes", "payouts", "GGR")):
        chart.add(name, [_major(values[i]) for values in days.values()])
    rendered: str = chart.render(is_unicode=True)
    return rendered


def _ratio(value: str | None) -> float | None:
    return float(Decimal(value)) if value is not None else None


def rtp_chart(
    report: DailyReport, published: Mapping[str, str | None], variant: str | None = None
) -> str:
    """Each game's actual RTP over the period (payouts over stakes net of refunds) beside the
    RTP it publishes; a game with nothing wagered has no actual bar. With ``variant``, that
    game's actual RTP day by day against its published RTP (no point on a day without play)."""
    if variant is not None:
        return _daily_rtp_chart(report, published.get(variant), variant)
    totals = report.by_variant()
    names = [name for name in published if name in totals]
    chart = _config(
        pygal.Bar(),
        f"{report.currency}: actual RTP {report.start} to {report.end} against published",
    )
    chart.x_labels = names

    chart.add("actual", [_ratio(totals[name].rtp) for name in names])
    chart.add("published", [_ratio(published[name]) for name in names])
    rendered: str = chart.render(is_unicode=True)
    return rendered


def _daily_rtp_chart(report: DailyReport, published: str | None, variant: str) -> str:
    lines = [line for line in report.lines if line.variant == variant]
    chart = _config(pygal.Line(), f"{report.currency}: {variant}'s actual RTP per day")
    chart.x_labels = [line.day.isoformat() for line in lines]
    chart.add("actual", [_ratio(line.totals.rtp) for line in lines])
    chart.add("published", [_ratio(published)] * len(lines))
    rendered: str = chart.render(is_unicode=True)
    return rendered
