// hydraulink viewer: the excavator game's overlay (goal, hits, fuel, timer, attempts, name
// entry, leaderboard). Shown when the frames carry a "game" object; the messages are in
// crates/hydraulink-viewer/src/game_host.rs. Reads window.hydraulink (viewer.js): the latest
// frame and the socket.

const style = document.createElement('style');
style.textContent = `
#game { position: absolute; top: 10px; right: 10px; width: 290px; padding: 8px 10px;
  background: rgba(20, 24, 28, 0.85); border-radius: 6px; display: none; }
#game h3 { margin: 0 0 4px; font-size: 14px; }
#game .bar { height: 8px; background: #3a4350; border-radius: 4px; overflow: hidden; margin: 2px 0 5px; }
#game .bar div { height: 100%; background: #4caf50; width: 0; }
#game .bar.fuel div { background: #e0a526; }
#game input { width: 140px; background: #2a3038; color: #eee; border: 1px solid #566; border-radius: 4px; padding: 2px 4px; }
#game table { width: 100%; border-collapse: collapse; margin-top: 4px; font-size: 12px; }
#game td, #game th { text-align: left; padding: 1px 3px; }
#game td.n, #game th.n { text-align: right; font-variant-numeric: tabular-nums; }
#game .notice { color: #ff9a8d; font-size: 12px; min-height: 1em; }
#game .result { font-size: 12px; color: #ccd; }
`;
document.head.appendChild(style);

const panel = document.createElement('div');
panel.id = 'game';
panel.innerHTML = `
<h3>Excavator game</h3>
<div class="row"><span>player</span><span id="game-player">–</span></div>
<div class="row"><span>attempt</span><span id="game-attempt">–</span></div>
<div class="row"><span>hopper</span><span id="game-hopper">–</span></div>
<div class="bar"><div id="game-hopper-bar"></div></div>
<div class="row"><span>hits</span><span id="game-hits">–</span></div>
<div class="row"><span>fuel left</span><span id="game-fuel">–</span></div>
<div class="bar fuel"><div id="game-fuel-bar"></div></div>
<div class="row"><span>time</span><span id="game-time">–</span></div>
<div class="row"><span>arm reach</span><span id="game-reach">–</span></div>
<div class="row"><span>score</span><span id="game-score">–</span></div>
<div id="game-results" class="result"></div>
<div id="game-entry" style="margin-top:6px"><input id="game-name" placeholder="your name" maxlength="40"> <button id="game-start">Start</button></div>
<div id="game-variants" class="result"></div>
<div id="game-notice" class="notice"></div>
<table><thead><tr><th>#</th><th>player</th><th class="n">score</th><th>variants</th></tr></thead><tbody id="game-board"></tbody></table>
`;
document.body.appendChild(panel);

const $ = id => document.getElementById(id);
const outcomeText = {
  goal_reached: 'goal reached', too_many_hits: 'too many hits', out_of_fuel: 'out of fuel',
  time_up: 'time up', abandoned: 'abandoned (reset)',
};
const game = { state: null, board: -1, entries: [] };
window.hydraulinkGame = game;

function send(msg) {
  const s = window.hydraulink && window.hydraulink.socket;
  if (s && s.readyState === WebSocket.OPEN) s.send(JSON.stringify(msg));
}

// start the next attempt, or a new player's first (the name is needed then)
game.start = name => send({ type: 'game', action: 'start', name: name || '' });
$('game-start').onclick = () => {
  game.start($('game-name').value);
  $('game-start').blur(); // the keys drive the machine again
};
$('game-name').addEventListener('keydown', ev => {
  if (ev.key === 'Enter') { game.start($('game-name').value); $('game-name').blur(); }
});

const esc = s => String(s).replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
const fmt = (x, n) => (x === null || x === undefined ? '–' : x.toFixed(n));

async function loadBoard() {
  try {
    const r = await fetch('/leaderboard', { cache: 'no-store' });
    if (!r.ok) return;
    game.entries = (await r.json()).entries;
    $('game-board').innerHTML = game.entries.slice(0, 10).map((e, i) =>
      `<tr><td>${i + 1}</td><td>${esc(e.player)}</td><td class="n">${e.score.toFixed(1)}</td><td>${esc(e.variants)}</td></tr>`).join('');
  } catch (e) { /* the server stopped */ }
}

function show(g) {
  game.state = g;
  panel.style.display = 'block';
  $('game-player').textContent = g.player || '–';
  $('game-attempt').textContent = g.attempt ? `${g.attempt} / ${g.attempts}` : `– / ${g.attempts}`;
  $('game-hopper').textContent = `${fmt(g.hopper_kg, 0)} / ${fmt(g.goal_kg, 0)} kg`;
  $('game-hopper-bar').style.width = `${Math.max(0, Math.min(100, 100 * g.hopper_kg / g.goal_kg))}%`;
  $('game-hits').textContent = `${g.hits} / ${g.max_hits}`;
  $('game-hits').classList.toggle('critical', g.hits >= g.max_hits);
  const left = Math.max(0, g.fuel_capacity_l - g.fuel_l);
  $('game-fuel').textContent = `${fmt(left, 2)} of ${fmt(g.fuel_capacity_l, 1)} L`;
  $('game-fuel').classList.toggle('critical', left < 0.2 * g.fuel_capacity_l);
  $('game-fuel-bar').style.width = `${100 * left / g.fuel_capacity_l}%`;
  $('game-time').textContent = `${fmt(g.time_s, 1)} / ${fmt(g.time_limit_s, 0)} s`;
  $('game-reach').textContent = g.reach_m === null ? '–' : `${fmt(g.reach_m, 2)} m`;
  $('game-score').textContent = fmt(g.score, 1) + (g.rank ? ` (rank ${g.rank})` : '');
  $('game-results').innerHTML = g.results.map((a, i) =>
    `attempt ${i + 1}: ${outcomeText[a.outcome] || a.outcome}, ${fmt(a.time_s, 1)} s, ${fmt(a.fuel_l, 2)} L, ${a.hits} hits, ${fmt(a.points, 0)} points`).join('<br>');
  const newPlayer = g.phase === 'waiting' || g.phase === 'game_over';
  $('game-name').style.display = newPlayer ? '' : 'none';
  $('game-start').style.display = (g.phase === 'running' || g.phase === 'starting') ? 'none' : '';
  $('game-start').textContent = g.phase === 'attempt_over' ? `Next attempt (${g.attempt + 1}/${g.attempts})`
    : g.phase === 'game_over' ? 'New game' : 'Start';
  $('game-variants').textContent = g.variants ? `variants: ${g.variants}` : '';
  $('game-notice').textContent = g.notice;
  if (g.board !== game.board) { game.board = g.board; loadBoard(); }
}

let shown = null;
function loop() {
  requestAnimationFrame(loop);
  const f = window.hydraulink && window.hydraulink.frame;
  if (f && f !== shown && f.game) { shown = f; show(f.game); }
}
loop();
