function cardCode(c) { return typeof c === 'string' ? c : (c.code || '?'); }
const SUIT = {D: '♦', H: '♥', C: '♣', S: '♠'};
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
