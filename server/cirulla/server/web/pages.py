# ruff: noqa: E501  (embedded HTML and JavaScript)
"""The three pages of the web view: plain HTML, CSS and a little JavaScript, no build.

The pages hold no game data themselves: they fetch it from the JSON and Server-Sent
Events routes of ``cirulla.server.web.app``.
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
  text-align: center; }}
.red {{ color: #c00; }} .box {{ background: #fff; border: 1px solid #ccc; border-radius: .4rem;
  padding: .6rem .9rem; margin: .5rem 0; }}
.row {{ display: flex; gap: 1rem; flex-wrap: wrap; }} .row > .box {{ flex: 1 1 20rem; }}
#log {{ max-height: 22rem; overflow-y: auto; font-size: .9rem; }}
.muted {{ color: #666; }} .big {{ font-size: 1.15rem; font-weight: 600; }}
button {{ font-size: 1rem; padding: .3rem .8rem; }}
</style></head><body>
"""

_CARDS_JS = """
function cardCode(c) { return typeof c === 'string' ? c : (c.code || '?'); }
function cardHtml(c) {
  const code = cardCode(c); const red = /[HD]$/.test(code);
  return '<span class="card' + (red ? ' red' : '') + '">' + code + '</span>';
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
<p id="ladderlink" hidden><a href="/ladder">ladder standings</a></p>
<p class="muted">Live matches can be watched (public information only); finished games
can be replayed move by move. This list refreshes every few seconds.</p>
<table id="matches"><thead><tr><th>match</th><th>status</th><th>players</th>
<th>games won</th><th>watch / replay</th></tr></thead><tbody></tbody></table>
<script>
function esc(s) { return String(s).replace(/[&<>"]/g, ch => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[ch])); }
async function load() {
  const r = await fetch('/api/matches'); const data = await r.json();
  const body = document.querySelector('#matches tbody');
  if (data.error) { body.innerHTML = '<tr><td colspan=5>' + esc(data.error) + '</td></tr>'; return; }
  body.innerHTML = data.matches.map(m => {
    const links = [];
    if (m.status === 'in progress' || m.status === 'waiting')
      links.push('<a class="live" href="/matches/' + encodeURIComponent(m.match_id) + '">watch live</a>');
    m.records.forEach(id => links.push('<a class="replay" href="/records/' +
      encodeURIComponent(id) + '">replay ' + esc(id) + '</a>'));
    return '<tr data-match="' + esc(m.match_id) + '"><td>' + esc(m.match_id) + '</td><td class="status">' +
      esc(m.status) + '</td><td>' + m.players.map(esc).join(' vs ') + '</td><td>' +
      esc(m.games_won) + '</td><td>' + links.join(' · ') + '</td></tr>';
  }).join('') || '<tr><td colspan=5 class="muted">no matches yet</td></tr>';
}
load(); setInterval(load, 3000);
fetch('/api/ladder').then(r => { if (r.ok) document.getElementById('ladderlink').hidden = false; });
</script></body></html>
"""
)

LIVE = (
    _HEAD.format(title="Cirulla live")
    + """<h1>Live: <span id="match"></span></h1>
<p><a href="/">all matches</a> · <span id="status" class="big">connecting…</span></p>
<div class="row">
 <div class="box"><div class="big">Table</div><div id="table"></div>
  <div id="wild" class="muted"></div><div id="stock" class="muted"></div></div>
 <div class="box"><div class="big">Seats</div><div id="seats"></div></div>
</div>
<div class="box"><div class="big">Sides</div><div id="sides"></div></div>
<div class="box"><div class="big">Last deal</div><div id="score" class="muted">no deal scored yet</div></div>
<div class="box"><div class="big">Events</div><div id="log"></div></div>
<script>
"""
    + _CARDS_JS
    + """
const matchId = decodeURIComponent(location.pathname.split('/').pop());
document.getElementById('match').textContent = matchId;
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
function showView(v) {
  seats(v.seats);
  document.getElementById('table').innerHTML = cardsHtml(v.table);
  document.getElementById('wild').textContent = (v.wild_value !== undefined && v.wild_value !== null)
    ? '7H counted as ' + v.wild_value : '7H (wild): no named value';
  document.getElementById('stock').textContent = 'deal ' + v.deal_number + ', round ' + v.round +
    ', dealer ' + seatName(v.dealer) + ', ' + v.stock_count + ' cards in the stock';
  document.getElementById('seats').innerHTML = (v.seats || []).map(s =>
    '<div>' + esc(seatName(s.seat)) + ': ' + s.hand_count + ' cards in hand' +
    (s.declared_cards.length ? ', declared ' + cardsHtml(s.declared_cards) : '') +
    (v.to_move === s.seat ? ' <b>← to move</b>' : '') + '</div>').join('');
  document.getElementById('sides').innerHTML = (v.sides || []).map(s =>
    '<div><b>' + esc(sideName(s.side)) + '</b>: game ' + s.game_total + ', scope ' + s.scope +
    ', took ' + s.captured.length + '<br>' + cardsHtml(s.captured) + '</div>').join('');
}
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
const source = new EventSource('/api/matches/' + encodeURIComponent(matchId) + '/stream');
source.onmessage = (msg) => {
  const m = JSON.parse(msg.data);
  const status = document.getElementById('status');
  if (m.end) { source.close(); return; }
  if (m.error) { status.textContent = m.error; source.close(); return; }
  if (m.welcome) { seats(m.welcome.seats); status.textContent = 'watching'; }
  if (m.new_game) { seats(m.new_game.seats); logLine('<b>Game ' + m.new_game.game_number + '</b> starts'); }
  if (m.view) showView(m.view);
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
)

REPLAY = (
    _HEAD.format(title="Cirulla replay")
    + """<h1>Replay: <span id="record"></span></h1>
<p><a href="/">all matches</a> · keys: ← → step, Home / End</p>
<p><button id="first">« first</button> <button id="prev">◀ back</button>
<button id="next">next ▶</button> <button id="last">last »</button>
<span id="pos" class="big"></span></p>
<div class="box"><div id="action" class="big"></div><div id="events" class="muted"></div></div>
<div class="row">
 <div class="box"><div class="big">Table</div><div id="table"></div><div id="info" class="muted"></div></div>
 <div class="box"><div class="big">Hands</div><div id="hands"></div></div>
</div>
<div class="box"><div class="big">Sides</div><div id="sides"></div></div>
<div class="box"><div class="big">Deal scores</div><div id="score" class="muted">no deal scored yet</div></div>
<div class="box" id="resultbox" hidden><div id="result" class="big"></div></div>
<script>
"""
    + _CARDS_JS
    + """
const recordId = decodeURIComponent(location.pathname.split('/').pop());
document.getElementById('record').textContent = recordId;
let data = null; let at = 0;
function seatName(s) { const x = data.seats.find(q => q.seat === s); return 'seat ' + s + (x && x.name ? ' ' + x.name : ''); }
function sideName(side) { return 'side ' + side + ' (' + data.seats.filter(q => q.side === side).map(q => seatName(q.seat)).join(', ') + ')'; }
function show() {
  const st = data.steps[at]; const n = data.steps.length - 1;
  document.getElementById('pos').textContent = 'move ' + at + ' of ' + n + ' · deal ' + st.deal;
  document.getElementById('action').textContent = at === 0 ? 'Opening table of deal 1' : st.action;
  document.getElementById('events').innerHTML = st.log.map(esc).join('<br>');
  document.getElementById('table').innerHTML = cardsHtml(st.table);
  document.getElementById('info').textContent = (st.wild ? '7H counted as ' + st.wild : '7H (wild): no named value') +
    ' · dealer ' + seatName(st.dealer) + ' · ' + st.stock + ' cards in the stock';
  document.getElementById('hands').innerHTML = st.hands.map((h, s) => '<div>' + esc(seatName(s)) + ': ' +
    cardsHtml(h) + (st.to_move === s ? ' <b>← to move</b>' : '') + '</div>').join('');
  document.getElementById('sides').innerHTML = st.captured.map((c, side) => '<div><b>' + esc(sideName(side)) +
    '</b>: game ' + st.totals[side] + ', scope ' + st.scope[side] + ', took ' + c.length + '<br>' +
    cardsHtml(c) + '</div>').join('');
  const scores = data.steps.slice(0, at + 1).filter(s => s.score).map(s => s.score);
  document.getElementById('score').innerHTML = scores.length ? scores.map(sc => '<div><b>Deal ' + sc.deal +
    '</b>' + scoreTable(sc.sides, sideName) + 'game: ' + sc.totals.join(' - ') + '</div>').join('') : 'no deal scored yet';
  const box = document.getElementById('resultbox'); box.hidden = at !== n;
  document.getElementById('result').textContent = data.result;
  document.body.dataset.step = at;
}
function go(k) { if (!data) return; at = Math.max(0, Math.min(data.steps.length - 1, k)); show(); }
document.getElementById('first').onclick = () => go(0);
document.getElementById('prev').onclick = () => go(at - 1);
document.getElementById('next').onclick = () => go(at + 1);
document.getElementById('last').onclick = () => go(data.steps.length - 1);
document.addEventListener('keydown', e => {
  if (e.key === 'ArrowRight') go(at + 1); if (e.key === 'ArrowLeft') go(at - 1);
  if (e.key === 'Home') go(0); if (e.key === 'End') go(data.steps.length - 1);
});
fetch('/api/records/' + encodeURIComponent(recordId) + '/steps').then(r => r.json()).then(d => {
  if (d.error) { document.getElementById('action').textContent = d.error; return; }
  data = d; document.body.dataset.steps = d.steps.length; go(0);
});
</script></body></html>
"""
)
