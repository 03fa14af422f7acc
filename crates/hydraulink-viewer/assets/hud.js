// hydraulink HUD: gauges, scenario tasks, real-time statistics, the record / replay controls
// and the playback bar of `hydraulink view`. It only shows what the frames carry; the values
// and the scenario logic are computed by the server (crates/hydraulink-viewer/src/hud.rs).

const $ = id => document.getElementById(id);
const fmt = (x, n) => (x === null || x === undefined ? '–' : x.toFixed(n));
// decimals by the size of the gauge's scale
const decimals = g => (g.range ? Math.max(0, 2 - Math.floor(Math.log10(Math.max(Math.abs(g.range[1] - g.range[0]), 1e-9)))) : 2);

let scene = null;
let send = () => {};
const ui = { recorded: false, paused: false, seeking: false };

export function buildHud(sc, sendMessage) {
  scene = sc;
  send = sendMessage;
  $('gauges').innerHTML = sc.gauges.map((g, i) =>
    `<div class="gauge"><div class="row"><span>${g.label}</span><span id="gauge${i}">–</span></div>` +
    (g.range ? `<div class="bar"><div class="fill" id="bar${i}"></div></div>` : '') + '</div>').join('');
  $('tasks').innerHTML = sc.tasks.length
    ? '<div class="head">scenario</div>' + sc.tasks.map((t, i) =>
      `<div class="task" id="task${i}"><span class="tick">○</span> ${t.instruction}<span class="held" id="held${i}"></span></div>`).join('')
      + '<div class="task done-all" id="tasks-done" hidden>✓ scenario complete</div>'
    : '';
  const view = !!sc.playback;
  for (const id of ['record', 'replay', 'live']) $(id).hidden = view;
  // a finished run (`view`): its own figures from summary.json, not the player's engine's
  $('live-stats').hidden = view;
  $('run-stats').hidden = !view;
  if (view) {
    const r = sc.run;
    $('run-status').textContent = r ? r.status : 'no summary.json';
    $('run-steps').textContent = r ? String(r.steps) : '–';
    $('run-rtf').textContent = r && r.real_time_factor !== null ? r.real_time_factor.toFixed(2) : '–';
    $('run-drift').textContent = r && r.drift_j !== null ? `${r.drift_j.toPrecision(3)} J` : '–';
  }
  $('playback').hidden = !view;
  if (view) {
    const slider = $('slider');
    slider.min = sc.playback[0]; slider.max = sc.playback[1]; slider.step = 'any'; slider.value = sc.playback[0];
    slider.oninput = () => { ui.seeking = true; send({ type: 'seek', t: parseFloat(slider.value) }); };
    slider.onchange = () => { ui.seeking = false; };
    $('speed').onchange = () => send({ type: 'speed', factor: parseFloat($('speed').value) });
  }
  $('pause').onclick = () => {
    ui.paused = !ui.paused;
    send({ type: ui.paused ? 'pause' : 'resume' });
  };
  $('reset').onclick = () => send({ type: 'reset' });
  $('record').onclick = () => {
    if ($('record').dataset.on === '1') { send({ type: 'record_stop' }); ui.recorded = true; }
    else send({ type: 'record' });
  };
  $('replay').onclick = () => send({ type: 'replay' });
  $('live').onclick = () => send({ type: 'live' });
}

export function updateHud(f) {
  if (!scene) return;
  const s = f.stats;
  $('time').textContent = fmt(f.t, 2) + ' s' + (f.paused ? ' (paused)' : '');
  if (!scene.playback) {
    $('rtf').textContent = fmt(s.rtf, 3);
    $('overruns').textContent = `${s.overruns} of ${s.steps}`;
    $('compute').textContent = `${fmt(s.mean_us, 0)} / ${fmt(s.max_us, 0)} µs`;
  }
  scene.gauges.forEach((g, i) => {
    const el = $('gauge' + i), v = f.gauges[i];
    el.textContent = `${fmt(v, decimals(g))} ${g.unit}`;
    const red = g.limit !== null && v !== null && Math.abs(v) > g.limit;
    el.classList.toggle('critical', red);
    const bar = $('bar' + i);
    if (bar && v !== null) {
      const x = Math.min(1, Math.max(0, (v - g.range[0]) / (g.range[1] - g.range[0])));
      bar.style.width = (100 * x).toFixed(1) + '%';
      bar.classList.toggle('critical', red);
    }
  });
  scene.tasks.forEach((t, i) => {
    const el = $('task' + i);
    el.classList.toggle('done', i < f.task);
    el.classList.toggle('current', i === f.task);
    el.querySelector('.tick').textContent = i < f.task ? '✓' : (i === f.task ? '▶' : '○');
    $('held' + i).textContent = i === f.task && f.held > 0 ? ` ${fmt(f.held, 1)} / ${fmt(t.hold_s, 1)} s` : '';
  });
  if (scene.tasks.length) $('tasks-done').hidden = f.task < scene.tasks.length;
  ui.paused = f.paused;
  $('pause').textContent = f.paused ? 'Resume' : 'Pause';
  const recording = f.mode === 'recording';
  $('record').dataset.on = recording ? '1' : '0';
  $('record').textContent = recording ? 'Stop rec.' : 'Record';
  $('record').classList.toggle('critical', recording);
  $('replay').disabled = !(ui.recorded || f.mode === 'replay' || f.mode === 'replay-end');
  $('live').disabled = !(f.mode === 'replay' || f.mode === 'replay-end');
  $('mode').textContent = { live: 'live', recording: '● recording', replay: '▶ replaying the recording',
    'replay-end': 'replay finished (Live or Reset: back to live)', view: 'finished run' }[f.mode] || f.mode;
  if (scene.playback && !ui.seeking) $('slider').value = f.t;
}
