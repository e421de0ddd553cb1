# ruff: noqa: E501  (embedded HTML and JavaScript)
"""The pages of the web view: plain HTML and CSS rendered on the server, no build.

Every page shows its content without JavaScript (the first state is in the HTML); the
scripts only add live updates (the match list, the Server-Sent Events of a live game)
and stepping through a replay without reloading.
"""

from __future__ import annotations

_HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5rem; background: #f6f4ee; color: #222; }}
h1 {{ font-size: 1.4rem; margin: 0 0 1rem; }} a {{ color: #05a; }}
table {{ border-collapse: collapse; }} td, th {{ padding: .25rem .6rem; text-align: left; }}
tr:nth-child(even) {{ background: #ece9df; }}
.card {{ display: inline-block; min-width: 2.1em; padding: .15em .3em; margin: .1em;
  border: 1px solid #999; border-radius: .3em; background: #fff; font-weight: 600;
  text-align: center; color: #222; }}
.card.red {{ color: #c00; }}
.red {{ color: #c00; }} .box {{ background: #fff; border: 1px solid #ccc; border-radius: .4rem;
  padding: .6rem .9rem; margin: .5rem 0; }}
.row {{ display: flex; gap: 1rem; flex-wrap: wrap; }} .row > .box {{ flex: 1 1 20rem; }}
#log {{ max-height: 22rem; overflow-y: auto; font-size: .9rem; }}
.muted {{ color: #666; }} .big {{ font-size: 1.15rem; font-weight: 600; }}
button {{ font-size: 1rem; padding: .3rem .8rem; }}
.card {{ position: relative; width: 2.6em; height: 3.6em; padding: .2em; box-sizing: border-box;
  vertical-align: top; box-shadow: 0 1px 2px rgba(0,0,0,.25); }}
.card b {{ display: block; text-align: left; font-size: 1em; line-height: 1; }}
.card i {{ display: block; font-style: normal; font-size: 1.6em; line-height: 1.2; }}
.card.back {{ background: repeating-linear-gradient(45deg, #1d4e89, #1d4e89 4px, #2a63a8 4px, #2a63a8 8px);
  border-color: #123; }}
.card.last {{ outline: 3px solid #f2b705; outline-offset: 1px; }}
.felt {{ background: #1f6b3a; color: #f4f1e6; border-radius: .8rem; padding: .8rem 1rem; margin: .5rem 0; }}
.felt .info {{ margin-bottom: .5rem; }} .felt .muted {{ color: #cfe3d3; }} .felt a {{ color: #ffe08a; }}
.felt .seats, .felt .piles {{ display: flex; gap: .8rem; flex-wrap: wrap; }}
.felt .seat, .felt .pile {{ flex: 1 1 16rem; background: rgba(0,0,0,.18); border-radius: .5rem; padding: .4rem .6rem; }}
.felt .seat.turn {{ box-shadow: 0 0 0 3px #f2b705; }}
.felt .tablecards {{ min-height: 4.2em; margin: .8rem 0; padding: .5rem; border: 2px dashed rgba(255,255,255,.35);
  border-radius: .6rem; text-align: center; }}
.felt .pile .taken .card {{ width: 2.1em; height: 2.9em; font-size: .8em; }}
.felt .pile.lasttake {{ box-shadow: 0 0 0 2px #f2b705; }}
.felt .lastplay {{ margin: .3rem 0 .8rem; }}
.badge {{ background: #f2b705; color: #222; border-radius: .3em; padding: 0 .35em; font-size: .8em; font-weight: 600; }}
#timeline .deal {{ margin: .2rem 0; }} #timeline a {{ display: inline-block; min-width: 1.8em; text-align: center;
  margin: 1px; padding: 1px 2px; border: 1px solid #ccc; border-radius: .25em; text-decoration: none; font-size: .85em; }}
#timeline a.cur {{ background: #05a; color: #fff; }}
#timeline a.dealjump {{ border: none; min-width: 4.5em; text-align: left; }}
.felt .legend {{ margin-top: .5rem; font-size: .85em; }}
.withheld {{ color: #8a4b00; font-weight: 600; }} .error {{ color: #b00; }}
.nav {{ margin: .2rem 0 .8rem; }}
</style></head><body>
"""


def page(title: str, body: str) -> str:
    """A whole page: the common head and style, then ``body`` (already escaped HTML)."""
    from html import escape

    return _HEAD.format(title=escape(title)) + body + "</body></html>"


_CARDS_JS = """
function cardCode(c) { return typeof c === 'string' ? c : (c.code || '?'); }
const SUIT = {D: '\u2666', H: '\u2665', C: '\u2663', S: '\u2660'};
function cardHtml(c) {
  const code = cardCode(c); const red = /[HD]$/.test(code);
  return '<span class="card' + (red ? ' red' : '') + '" data-card="' + esc(code) + '" title="' + esc(code) +
    '"><b>' + esc(code.slice(0, -1)) + '</b><i>' + (SUIT[code.slice(-1)] || '?') + '</i></span>';
}
function cardsHtml(cs) {
  return (cs && cs.length) ? cs.map(cardHtml).join('') : '<span class="muted">none</span>';
}
function esc(s) { return String(s).replace(/[&<>"]/g, ch => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[ch])); }
const SCORE_ITEMS = ['cards','coins','settebello','primiera','scope','grande','piccola'];
function scoreTable(sides, label) {
  let h = '<table><tr><th></th>' + SCORE_ITEMS.map(i => '<th>' + i + '</th>').join('') +
    '<th>total</th></tr>';
  sides.forEach((s, i) => {
    h += '<tr><td>' + esc(label(s.side !== undefined ? s.side : i)) + '</td>' +
      SCORE_ITEMS.map(k => '<td>' + (s[k] || 0) + '</td>').join('') +
      '<td><b>' + (s.total || 0) + '</b></td></tr>';
  });
  return h + '</table>';
}
"""

INDEX = (
    _HEAD.format(title="Cirulla matches")
    + """<h1>Cirulla matches</h1>
<!--LADDER-->
<p class="muted">Live matches can be watched (public information only); finished games
can be replayed move by move. This list refreshes every few seconds while scripts run.</p>
<table id="matches"><thead><tr><th>match</th><th>status</th><th>players</th>
<th>games won</th><th>watch / replay</th></tr></thead><tbody><!--ROWS--></tbody></table>
<script>
async function load() {
  const r = await fetch('/api/matches'); const data = await r.json();
  if (data.rows_html !== undefined) document.querySelector('#matches tbody').innerHTML = data.rows_html;
}
setInterval(load, 3000);
</script></body></html>
"""
)


def live_page(
    match_id: str,
    board: str,
    status: str,
    *,
    stream_url: str | None = None,
    back: tuple[str, str] = ("/", "all matches"),
) -> str:
    """The live view: ``board`` is the server-rendered table of the match as a spectator
    sees it now (``table.render``); the script follows the Spectate stream over SSE (at
    ``stream_url``, by default this server's own) and swaps in the table the server
    renders with each view."""
    from html import escape
    from urllib.parse import quote

    stream = stream_url or f"/api/matches/{quote(match_id, safe='')}/stream"
    return (
        _HEAD.format(title="Cirulla live")
        + f"""<h1>Live: <span id="match">{escape(match_id)}</span></h1>
<p><a href="{escape(back[0])}">{escape(back[1])}</a> · <span id="status" class="big">{escape(status)}</span></p>
<div id="board">{board}</div>
<div class="box"><div class="big">Last deal</div><div id="score" class="muted">no deal scored yet</div></div>
<div class="box"><div class="big">Events</div><div id="log"></div></div>
<script>
const streamUrl = {_js_string(stream)};
"""
        + _CARDS_JS
        + _LIVE_JS
    )


_LIVE_JS = """
const names = {}; const sideOf = {};
let events = 0;
function seatName(s) { return 'seat ' + s + (names[s] ? ' ' + names[s] : ''); }
function sideName(side) {
  const seats = Object.keys(sideOf).filter(s => sideOf[s] == side);
  return 'side ' + side + (seats.length ? ' (' + seats.map(seatName).join(', ') + ')' : '');
}
function logLine(html) {
  const log = document.getElementById('log'); const div = document.createElement('div');
  div.innerHTML = html; log.prepend(div);
}
function seats(list) { (list || []).forEach(s => { if (s.name) names[s.seat] = s.name; sideOf[s.seat] = s.side; }); }
function describe(e) {
  if (e.card_played) { const p = e.card_played;
    return esc(seatName(p.seat)) + ' plays ' + cardHtml(p.card) +
      (p.captured.length ? ' takes ' + cardsHtml(p.captured) : ' (on the table)') +
      (p.ace_sweep ? ' <b>ACE SWEEP</b>' : '') + (p.scopa ? ' <b>SCOPA</b>' : ''); }
  if (e.deal_started) return '<b>Deal ' + e.deal_started.deal_number + '</b>, dealer ' +
    esc(seatName(e.deal_started.dealer)) + '; table ' + cardsHtml(e.deal_started.table);
  if (e.declaration) return esc(seatName(e.declaration.seat)) + ' declares ' +
    cardsHtml(e.declaration.cards) + ' (+' + e.declaration.scope + ' scope)';
  if (e.dealer_bonus) return "dealer's bonus: +" + e.dealer_bonus.scope + ' scope';
  if (e.last_take && e.last_take.cards.length) return 'last take: ' + cardsHtml(e.last_take.cards);
  if (e.deal_scored) { const r = e.deal_scored;
    document.getElementById('score').innerHTML = '<b>Deal ' + r.deal_number + '</b>' +
      scoreTable(r.scores, sideName) + '<div>game: ' + r.totals.join(' - ') + '</div>';
    return '<b>Deal ' + r.deal_number + ' scored</b>: game ' + r.totals.join(' - '); }
  if (e.game_over) { const g = e.game_over;
    return '<b>Game over</b>: ' + (g.winner_side !== undefined ? esc(sideName(g.winner_side)) + ' wins ' : 'no winner ') +
      g.totals.join(' - '); }
  if (e.timeout) return esc(seatName(e.timeout.seat)) + ' ran out of time';
  return '';
}
const source = new EventSource(streamUrl);
source.onmessage = (msg) => {
  const m = JSON.parse(msg.data);
  const status = document.getElementById('status');
  if (m.end) { source.close(); return; }
  if (m.error) { status.textContent = m.error; source.close(); return; }
  if (m.welcome) { seats(m.welcome.seats); status.textContent = 'watching'; }
  if (m.new_game) { seats(m.new_game.seats); logLine('<b>Game ' + m.new_game.game_number + '</b> starts'); }
  if (m.view) seats(m.view.seats);
  if (m.table_html) document.getElementById('board').innerHTML = m.table_html;
  if (m.event) { events += 1; document.body.dataset.events = events;
    const line = describe(m.event); if (line) logLine(line); }
  if (m.match_result) { const r = m.match_result;
    status.textContent = 'match over: ' + (r.winner_side !== undefined ? sideName(r.winner_side) + ' wins' : 'no winner') +
      ' (' + r.games_won.join('-') + ')'; document.body.dataset.over = '1'; }
  if (m.goodbye) { source.close(); }
};
source.onerror = () => { if (!document.body.dataset.over) document.getElementById('status').textContent = 'connection lost'; };
</script></body></html>
"""


def replay_page(
    record_id: str,
    step: int,
    steps: int,
    board: str,
    controls: str,
    timeline: str,
    *,
    boards_url: str | None = None,
    back: tuple[str, str] = ("/", "all matches"),
) -> str:
    """A finished game at move ``step``: everything is in the HTML (links step through
    it without JavaScript); the script loads every step's board once (from
    ``boards_url``, by default this server's own) and then steps, jumps (timeline) and
    keys (arrows, Home, End) without reloading."""
    from html import escape
    from urllib.parse import quote

    boards = boards_url or f"/api/records/{quote(record_id, safe='')}/boards"
    return (
        _HEAD.format(title="Cirulla replay")
        + f"""<h1>Replay: <span id="record">{escape(record_id)}</span></h1>
<p><a href="{escape(back[0])}">{escape(back[1])}</a> · keys: \u2190 \u2192 step, Home / End</p>
<div id="controls">{controls}</div>
<div id="board" data-step="{step}">{board}</div>
<div class="box"><div class="big">Timeline</div><nav id="timeline">{timeline}</nav></div>
<script>
const boardsUrl = {_js_string(boards)};
let boards = null; let controls = null; let at = {step}; const total = {steps};
function go(k) {{
  if (!boards) return false;
  at = Math.max(0, Math.min(total - 1, k));
  document.getElementById('board').innerHTML = boards[at];
  document.getElementById('controls').innerHTML = controls[at];
  document.querySelectorAll('#timeline a:not(.dealjump)').forEach(a => a.classList.toggle('cur', +a.dataset.step === at));
  document.body.dataset.step = at;
  history.replaceState(null, '', '?step=' + at);
  return true;
}}
document.addEventListener('click', e => {{
  const a = e.target.closest('a[data-step]');
  if (a && go(+a.dataset.step)) e.preventDefault();
}});
document.addEventListener('keydown', e => {{
  if (e.key === 'ArrowRight') go(at + 1); if (e.key === 'ArrowLeft') go(at - 1);
  if (e.key === 'Home') go(0); if (e.key === 'End') go(total - 1);
}});
fetch(boardsUrl).then(r => r.json()).then(d => {{
  if (d.error) return;
  boards = d.boards; controls = d.controls; document.body.dataset.step = at;
  document.body.dataset.steps = boards.length;
}});
</script></body></html>
"""
    )


def _js_string(text: str) -> str:
    """A JavaScript string literal that is safe inside a <script> element."""
    import json

    return json.dumps(text).replace("<", "\\u003c").replace(">", "\\u003e")
