"""A bot's rating over time as an inline SVG, drawn on the server.

The x axis is real time (UTC ticks at round intervals), the y axis the rating mean mu;
each rated game is a point whose ``<title>`` (the browser's hover tooltip) gives the
time, version, mu, sigma, the ladder rating mu - 3 sigma and the match. No script is needed to
read it, and nothing is fetched. This module places the points (:class:`Chart`);
``templates/chart.html`` draws them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from markupsafe import Markup

from cirulla.server.web import templating

W, H = 860, 300
LEFT, RIGHT, TOP, BOTTOM = 52, 16, 16, 40
COLORS = {"2p": "#b22", "3p": "#15a", "4p": "#272"}
#: tick steps of the time axis, in seconds
STEPS = (
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
    86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400, 91 * 86400, 182 * 86400, 365 * 86400,
)  # fmt: skip


@dataclass(frozen=True)
class Point:
    at: float  # epoch seconds
    mu: float
    sigma: float
    version: int
    match_id: str
    queue: str


def utc(at: float, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    return time.strftime(fmt, time.gmtime(at)) + (" UTC" if fmt.endswith("%S") else "")


def _time_ticks(t0: float, t1: float, n: int = 6) -> tuple[list[float], str]:
    span = max(t1 - t0, 1.0)
    step = next((s for s in STEPS if span / s <= n), STEPS[-1])
    fmt = "%H:%M:%S" if step < 60 else "%H:%M" if step < 86400 else "%Y-%m-%d"
    if step < 86400 and time.gmtime(t0)[:3] != time.gmtime(t1)[:3]:
        fmt = "%m-%d " + fmt
    first = math.ceil(t0 / step) * step
    ticks = [float(first + k * step) for k in range(int((t1 - first) // step) + 1)]
    return ticks, fmt


def _value_ticks(v0: float, v1: float) -> list[float]:
    span = max(v1 - v0, 1e-9)
    step = next(s for s in (0.5, 1, 2, 5, 10, 20, 50) if span / s <= 6)
    first = math.ceil(v0 / step) * step
    return [first + k * step for k in range(int((v1 - first) // step) + 1)]


@dataclass(frozen=True)
class Dot:
    """One rated game: its data attributes, its place, its hover title."""

    at: str
    mu: str
    cx: str
    cy: str
    tip: str


@dataclass(frozen=True)
class Series:
    queue: str
    color: str
    points: str
    dots: list[Dot]


@dataclass(frozen=True)
class Chart:
    """What ``chart.html`` draws: coordinates already formatted (one decimal)."""

    title: str
    t0: str
    t1: str
    #: (y, label) of each value tick, (x, epoch seconds, label) of each time tick
    yticks: list[tuple[str, str, str]]
    xticks: list[tuple[str, str, str]]
    series: list[Series]


def chart(points: list[Point], title: str = "rating over time") -> Chart:
    """The chart's view: one line per queue, one titled dot per game (``points`` is not
    empty)."""
    t0 = min(p.at for p in points)
    t1 = max(p.at for p in points)
    if t1 - t0 < 1:
        t0, t1 = t0 - 30, t1 + 30
    v0 = min(p.mu for p in points) - 1
    v1 = max(p.mu for p in points) + 1

    def x(t: float) -> float:
        return LEFT + (t - t0) / (t1 - t0) * (W - LEFT - RIGHT)

    def y(v: float) -> float:
        return H - BOTTOM - (v - v0) / (v1 - v0) * (H - TOP - BOTTOM)

    ticks, fmt = _time_ticks(t0, t1)
    series = []
    for queue in sorted({p.queue for p in points}):
        line = sorted((p for p in points if p.queue == queue), key=lambda p: p.at)
        dots = [
            Dot(
                f"{p.at:.3f}",
                f"{p.mu:.4f}",
                f"{x(p.at):.1f}",
                f"{y(p.mu):.1f}",
                f"{utc(p.at)} · {queue} · version {p.version} · \u03bc {p.mu:.2f} "
                f"\u03c3 {p.sigma:.2f} · rating {p.mu - 3 * p.sigma:.2f} · match {p.match_id}",
            )
            for p in line
        ]
        coords = " ".join(f"{x(p.at):.1f},{y(p.mu):.1f}" for p in line)
        series.append(Series(queue, COLORS.get(queue, "#555"), coords, dots))
    return Chart(
        title=title,
        t0=f"{t0:.0f}",
        t1=f"{t1:.0f}",
        yticks=[(f"{y(v):.1f}", f"{y(v) + 4:.1f}", f"{v:g}") for v in _value_ticks(v0, v1)],
        xticks=[(f"{x(t):.1f}", f"{t:.0f}", time.strftime(fmt, time.gmtime(t))) for t in ticks],
        series=series,
    )


def rating_chart(points: list[Point], title: str = "rating over time") -> Markup:
    """The SVG (``<svg class="chart">``, ``chart.html``), or a line saying there is no
    rated game yet."""
    return templating.render(
        "chart.html",
        chart=chart(points, title) if points else None,
        w=W,
        h=H,
        left=LEFT,
        right=RIGHT,
        top=TOP,
        bottom=BOTTOM,
    )
