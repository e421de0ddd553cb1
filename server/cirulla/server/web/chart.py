"""A bot's rating over time as an inline SVG, drawn on the server.

The x axis is real time (UTC ticks at round intervals), the y axis the rating mean mu;
each rated game is a point whose ``<title>`` (the browser's hover tooltip) gives the
time, version, mu, sigma, the ladder rating mu - 3 sigma and the match. No script is needed to
read it, and nothing is fetched.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from html import escape

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


def rating_chart(points: list[Point], title: str = "rating over time") -> str:
    """The SVG (``<svg class="chart">``); one line per queue, one titled dot per game."""
    if not points:
        return '<p class="muted" id="chart-empty">no rated game yet</p>'
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

    out = [
        f'<svg class="chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
        f'aria-label="{escape(title)}" data-t0="{t0:.0f}" data-t1="{t1:.0f}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}" '
        'fill="#fff" stroke="#bbb"/>',
    ]
    for v in _value_ticks(v0, v1):
        out.append(
            f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#eee"/>'
            f'<text class="ytick" x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end" '
            f'font-size="11">{v:g}</text>'
        )
    ticks, fmt = _time_ticks(t0, t1)
    for t in ticks:
        out.append(
            f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{TOP}" y2="{H - BOTTOM}" stroke="#eee"/>'
            f'<text class="xtick" x="{x(t):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" '
            f'font-size="11" data-at="{t:.0f}">{escape(time.strftime(fmt, time.gmtime(t)))}'
            "</text>"
        )
    out.append(
        f'<text x="{W - RIGHT}" y="{H - 6}" text-anchor="end" font-size="11" fill="#666">'
        "time (UTC)</text>"
        f'<text x="12" y="{TOP + 10}" font-size="11" fill="#666">\u03bc</text>'
    )
    for queue in sorted({p.queue for p in points}):
        series = sorted((p for p in points if p.queue == queue), key=lambda p: p.at)
        color = COLORS.get(queue, "#555")
        coords = " ".join(f"{x(p.at):.1f},{y(p.mu):.1f}" for p in series)
        out.append(
            f'<polyline class="series" data-queue="{queue}" fill="none" stroke="{color}" '
            f'stroke-width="2" points="{coords}"/>'
        )
        for p in series:
            tip = (
                f"{utc(p.at)} · {queue} · version {p.version} · \u03bc {p.mu:.2f} "
                f"\u03c3 {p.sigma:.2f} · rating {p.mu - 3 * p.sigma:.2f} · match {p.match_id}"
            )
            out.append(
                f'<circle class="point" data-queue="{queue}" data-at="{p.at:.3f}" '
                f'data-mu="{p.mu:.4f}" cx="{x(p.at):.1f}" cy="{y(p.mu):.1f}" r="4" '
                f'fill="{color}"><title>{escape(tip)}</title></circle>'
            )
    out.append("</svg>")
    legend = " ".join(
        f'<span style="color:{COLORS.get(q, "#555")}">\u25a0</span> {escape(q)}'
        for q in sorted({p.queue for p in points})
    )
    return "".join(out) + f'<div class="legend muted">{legend}</div>'
