# ruff: noqa: E501  (embedded HTML and JavaScript)
"""The ladder's standings with each bot's rating over time, for ``--ladder-db``.

Read from the ladder's own store (``cirulla.clients.ladder.store``), which already
leaves out the rating points of games whose duplicate pair is still in play. Database
calls run in a worker thread so the event loop keeps serving gRPC.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from cirulla.server.web.pages import _HEAD


def ladder_routes(db: str) -> list[Route]:
    from cirulla.clients.ladder.db import open_database
    from cirulla.clients.ladder.store import QUEUES, LadderStore

    store: LadderStore | None = None

    def get_store() -> LadderStore:
        nonlocal store
        if store is None:
            store = LadderStore(open_database(db))
        return store

    def read(queue: str) -> dict[str, Any]:
        st = get_store()
        rows = []
        for entry in st.standings(queue):
            name = entry["bot"]["name"]
            history = st.bot_history(name, queue)["rating_history"]
            rows.append(
                {
                    "rank": entry["rank"],
                    "bot": name,
                    "mu": round(entry["mu"], 2),
                    "sigma": round(entry["sigma"], 2),
                    "score": round(entry["score"], 2),
                    "games": entry["games"],
                    "wins": entry["wins"],
                    "provisional": entry["provisional"],
                    "history": [
                        {"at": p["at"], "mu": round(p["mu"], 2), "version": p["version"]}
                        for p in history
                    ],
                }
            )
        return {"queue": queue, "queues": list(QUEUES), "standings": rows}

    async def api(request: Request) -> Response:
        queue = request.query_params.get("queue", "2p")
        if queue not in QUEUES:
            return JSONResponse({"error": f"queue {queue!r}: one of {', '.join(QUEUES)}"}, 400)
        return JSONResponse(await asyncio.to_thread(read, queue))

    async def page(_request: Request) -> Response:
        return HTMLResponse(LADDER)

    return [Route("/ladder", page), Route("/api/ladder", api)]


LADDER = (
    _HEAD.format(title="Cirulla ladder")
    + """<h1>Ladder standings</h1>
<p><a href="/">matches</a> · queue: <span id="queues"></span></p>
<div class="box"><table id="standings"><thead><tr><th>#</th><th>bot</th><th>rating (mu - 3 sigma)</th>
<th>mu</th><th>sigma</th><th>games</th><th>wins</th></tr></thead><tbody></tbody></table></div>
<div class="box"><div class="big">Rating (mu) over time</div>
<svg id="chart" width="860" height="320" style="background:#fff"></svg><div id="legend"></div></div>
<script>
const COLORS = ['#c00','#05a','#080','#a50','#609','#077','#555','#d60'];
function esc(s) { return String(s).replace(/[&<>"]/g, ch => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[ch])); }
async function load() {
  const queue = new URLSearchParams(location.search).get('queue') || '2p';
  const d = await (await fetch('/api/ladder?queue=' + encodeURIComponent(queue))).json();
  if (d.error) { document.getElementById('queues').textContent = d.error; return; }
  document.getElementById('queues').innerHTML = d.queues.map(q => q === queue ? '<b>' + q + '</b>' :
    '<a href="/ladder?queue=' + q + '">' + q + '</a>').join(' · ');
  document.querySelector('#standings tbody').innerHTML = d.standings.map(r => '<tr class="bot"><td>' + r.rank +
    '</td><td>' + esc(r.bot) + (r.provisional ? ' <span class="muted">(provisional)</span>' : '') + '</td><td>' +
    r.score + '</td><td>' + r.mu + '</td><td>' + r.sigma + '</td><td>' + r.games + '</td><td>' + r.wins +
    '</td></tr>').join('') || '<tr><td colspan=7 class="muted">no rated bot yet</td></tr>';
  const pts = d.standings.flatMap(r => r.history);
  const svg = document.getElementById('chart'); const W = 860, H = 320, P = 40;
  if (!pts.length) { svg.innerHTML = '<text x="20" y="40">no rated games yet</text>'; return; }
  const t0 = Math.min(...pts.map(p => p.at)), t1 = Math.max(...pts.map(p => p.at));
  const m0 = Math.min(...pts.map(p => p.mu)) - 1, m1 = Math.max(...pts.map(p => p.mu)) + 1;
  const x = t => P + (t1 > t0 ? (t - t0) / (t1 - t0) : 0.5) * (W - 2 * P);
  const y = m => H - P - (m - m0) / (m1 - m0) * (H - 2 * P);
  let h = '<line x1="' + P + '" y1="' + (H - P) + '" x2="' + (W - P) + '" y2="' + (H - P) + '" stroke="#999"/>' +
    '<line x1="' + P + '" y1="' + P + '" x2="' + P + '" y2="' + (H - P) + '" stroke="#999"/>' +
    '<text x="4" y="' + (y(m1) + 4) + '" font-size="11">' + m1.toFixed(0) + '</text>' +
    '<text x="4" y="' + (y(m0) + 4) + '" font-size="11">' + m0.toFixed(0) + '</text>';
  d.standings.forEach((r, i) => {
    if (!r.history.length) return;
    const c = COLORS[i % COLORS.length];
    h += '<polyline class="series" data-bot="' + esc(r.bot) + '" fill="none" stroke="' + c + '" stroke-width="2" points="' +
      r.history.map(p => x(p.at).toFixed(1) + ',' + y(p.mu).toFixed(1)).join(' ') + '"/>';
  });
  svg.innerHTML = h;
  document.getElementById('legend').innerHTML = d.standings.map((r, i) =>
    '<span style="color:' + COLORS[i % COLORS.length] + '">■</span> ' + esc(r.bot)).join(' &nbsp; ');
}
load(); setInterval(load, 10000);
</script></body></html>
"""
)
