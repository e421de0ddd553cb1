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
