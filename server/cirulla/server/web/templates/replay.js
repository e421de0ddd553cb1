function go(k) {
  if (!boards) return false;
  at = Math.max(0, Math.min(total - 1, k));
  document.getElementById('board').innerHTML = boards[at];
  document.getElementById('controls').innerHTML = controls[at];
  document.querySelectorAll('#timeline a:not(.dealjump)').forEach(a => a.classList.toggle('cur', +a.dataset.step === at));
  document.body.dataset.step = at;
  history.replaceState(null, '', '?step=' + at);
  return true;
}
document.addEventListener('click', e => {
  const a = e.target.closest('a[data-step]');
  if (a && go(+a.dataset.step)) e.preventDefault();
});
document.addEventListener('keydown', e => {
  if (e.key === 'ArrowRight') go(at + 1); if (e.key === 'ArrowLeft') go(at - 1);
  if (e.key === 'Home') go(0); if (e.key === 'End') go(total - 1);
});
fetch(boardsUrl).then(r => r.json()).then(d => {
  if (d.error) return;
  boards = d.boards; controls = d.controls; document.body.dataset.step = at;
  document.body.dataset.steps = boards.length;
});
