"""The replay page's parts for one step: board (last action, table, scores), controls and
the timeline of every move grouped by deal. Rendered on the server for the page's first
state and, all steps at once, for the script that steps through them."""

from __future__ import annotations

from html import escape
from typing import Any

from cirulla.server import records
from cirulla.server.web import table


def score_table(score: dict[str, Any], seats: list[dict[str, Any]]) -> str:
    head = "".join(f"<th>{i}</th>" for i in records.SCORE_ITEMS)
    rows = []
    for side, s in enumerate(score["sides"]):
        names = ", ".join(
            f"seat {q['seat']}" + (f" {q['name']}" if q["name"] else "")
            for q in seats
            if q["side"] == side
        )
        cells = "".join(f"<td>{int(s.get(k, 0))}</td>" for k in records.SCORE_ITEMS)
        rows.append(
            f"<tr><td>side {side} ({escape(names)})</td>{cells}<td><b>{int(s.get('total', 0))}"
            "</b></td></tr>"
        )
    return (
        f"<div><b>Deal {score['deal']}</b><table><tr><th></th>{head}<th>total</th></tr>"
        + "".join(rows)
        + f"</table>game: {' - '.join(str(t) for t in score['totals'])}</div>"
    )


def board(data: dict[str, Any], k: int) -> str:
    steps = data["steps"]
    st = steps[k]
    action = escape(st["action"]) if k else "Opening table of deal 1"
    log = "<br>".join(escape(line) for line in st["log"])
    scores = [s["score"] for s in steps[: k + 1] if s["score"]]
    score_html = (
        "".join(score_table(sc, data["seats"]) for sc in scores)
        if scores
        else '<span class="muted">no deal scored yet</span>'
    )
    last = k == len(steps) - 1
    result = (
        f'<div class="box" id="resultbox"><div id="result" class="big">{escape(data["result"])}'
        "</div></div>"
        if last
        else ""
    )
    return (
        f'<div class="box"><div id="action" class="big">{action}</div>'
        f'<div id="events" class="muted">{log}</div></div>'
        + table.render(table.from_step(st, data["seats"]))
        + f'<div class="box"><div class="big">Deal scores</div><div id="score">{score_html}'
        f"</div></div>{result}"
    )


def _link(k: int, label: str, ident: str) -> str:
    return f'<a id="{ident}" href="?step={k}" data-step="{k}">{label}</a>'


def controls(data: dict[str, Any], k: int) -> str:
    n = len(data["steps"]) - 1
    st = data["steps"][k]
    return (
        "<p>"
        + " ".join(
            (
                _link(0, "\u00ab first", "first"),
                _link(max(k - 1, 0), "\u25c0 back", "prev"),
                _link(min(k + 1, n), "next \u25b6", "next"),
                _link(n, "last \u00bb", "last"),
            )
        )
        + f' <span id="pos" class="big">move {k} of {n} \u00b7 deal {st["deal"]}</span></p>'
    )


def timeline(data: dict[str, Any], k: int) -> str:
    """Every step as a link (its action as the hover title), one row per deal."""
    rows: dict[int, list[str]] = {}
    for i, st in enumerate(data["steps"]):
        deal = st["move_deal"]
        title = escape(st["action"] or "opening table", quote=True)
        cur = ' class="cur"' if i == k else ""
        rows.setdefault(deal, []).append(
            f'<a href="?step={i}" data-step="{i}" title="{title}"{cur}>{i}</a>'
        )
    # a deal's label jumps to its opening table: the first step showing that deal
    first: dict[int, int] = {}
    for i, st in enumerate(data["steps"]):
        first.setdefault(st["deal"], i)
    out = []
    for deal, links in sorted(rows.items()):
        at = first.get(deal, 0)
        jump = (
            f'<a class="dealjump" href="?step={at}" data-step="{at}" '
            f'title="the opening table of deal {deal}"><b>deal {deal}</b></a>'
        )
        out.append(f'<div class="deal" data-deal="{deal}">{jump} {"".join(links)}</div>')
    return "".join(out)
