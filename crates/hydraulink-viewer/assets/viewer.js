// hydraulink viewer: draws the scene the server sends, follows its frames, and sends keyboard
// and gamepad input back. Protocol: crates/hydraulink-viewer/src/protocol.rs.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { buildHud, updateHud } from './hud.js';

const state = { scene: null, frame: null, frames: 0, errors: [], ready: false, socket: null };
window.hydraulink = state;

const view = document.getElementById('view');
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio);
renderer.setSize(window.innerWidth, window.innerHeight);
view.appendChild(renderer.domElement);
const world = new THREE.Scene();
world.background = new THREE.Color(0x2a3038);
const camera = new THREE.PerspectiveCamera(45, window.innerWidth / window.innerHeight, 0.05, 500);
camera.position.set(8, 6, 12);
const controls = new OrbitControls(camera, renderer.domElement);
world.add(new THREE.HemisphereLight(0xffffff, 0x404850, 1.6));
const sun = new THREE.DirectionalLight(0xffffff, 2.2);
sun.position.set(10, 20, 12);
world.add(sun);
const grid = new THREE.GridHelper(40, 40, 0x8090a0, 0x4a525c);
world.add(grid);

const bodyColor = new THREE.Color(0xe0a526);
const groups = [];
const cylinders = [];

function unitY(from, to) {
  const a = new THREE.Vector3(...from), b = new THREE.Vector3(...to);
  const d = b.clone().sub(a);
  return { a, b, d, len: d.length(), mid: a.clone().add(b).multiplyScalar(0.5) };
}

function material(color) {
  return new THREE.MeshStandardMaterial({ color: color ? new THREE.Color(color) : bodyColor, metalness: 0.2, roughness: 0.6 });
}

// one shape of a body, in the body's reference coordinates
function shapeMesh(s) {
  if (s.kind === 'mesh') {
    // triangles placed by the server in the body's reference coordinates
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(s.vertices), 3));
    geometry.setIndex(s.indices);
    geometry.computeVertexNormals();
    const m = new THREE.Mesh(geometry, material(s.color));
    m.material.side = THREE.DoubleSide;
    return m;
  }
  const { d, len, mid } = unitY(s.from, s.to);
  const dir = len > 0 ? d.clone().divideScalar(len) : new THREE.Vector3(0, 1, 0);
  let geometry;
  if (s.kind === 'box') {
    geometry = new THREE.BoxGeometry(s.width, len, s.height);
    const side = new THREE.Vector3(...s.side);
    side.sub(dir.clone().multiplyScalar(side.dot(dir))).normalize();
    const z = new THREE.Vector3().crossVectors(side, dir);
    const m = new THREE.Mesh(geometry, material(s.color));
    m.matrixAutoUpdate = false;
    m.matrix.makeBasis(side, dir, z).setPosition(mid);
    return m;
  }
  geometry = s.kind === 'cylinder'
    ? new THREE.CylinderGeometry(s.radius, s.radius, len, 20)
    : (len > 0 ? new THREE.CapsuleGeometry(s.radius, len, 6, 16) : new THREE.SphereGeometry(s.radius, 16, 12));
  const m = new THREE.Mesh(geometry, material(s.color));
  m.position.copy(mid);
  m.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), dir);
  return m;
}

// the worksite's static obstacles (scene.rs `SceneObstacle`): boxes (poles, hopper walls) in
// grey, the ground plane as a large thin slab just below its plane
function drawObstacles(sc) {
  for (const o of sc.obstacles || []) {
    let m;
    if (o.kind === 'box') {
      m = new THREE.Mesh(new THREE.BoxGeometry(2 * o.half[0], 2 * o.half[1], 2 * o.half[2]), material('#8a8f96'));
      const a = o.axes;
      m.matrixAutoUpdate = false;
      m.matrix.makeBasis(new THREE.Vector3(a[0], a[1], a[2]), new THREE.Vector3(a[3], a[4], a[5]), new THREE.Vector3(a[6], a[7], a[8]))
        .setPosition(o.center[0], o.center[1], o.center[2]);
    } else {
      m = new THREE.Mesh(new THREE.BoxGeometry(40, 0.02, 40), material('#5b5347'));
      m.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), new THREE.Vector3(o.axes[0], o.axes[1], o.axes[2]));
      m.position.set(o.center[0], o.center[1], o.center[2]).addScaledVector(new THREE.Vector3(o.axes[0], o.axes[1], o.axes[2]), -0.011);
    }
    m.name = 'obstacle';
    world.add(m);
  }
}

// the terrain (scene.rs `SceneTerrain`): a surface through the column tops at the cell centres,
// sand-coloured, whose heights [mm] frames update (protocol.rs `write_terrain`)
let terrain = null;
function drawTerrain(t) {
  if (!t) return;
  const n = t.nx * t.nz;
  const pos = new Float32Array(3 * n);
  for (let j = 0; j < t.nz; j++) {
    for (let i = 0; i < t.nx; i++) {
      const k = i + t.nx * j;
      pos[3 * k] = t.origin[0] + (i + 0.5) * t.cell;
      pos[3 * k + 1] = t.heights_mm[k] * 1e-3;
      pos[3 * k + 2] = t.origin[1] + (j + 0.5) * t.cell;
    }
  }
  const index = [];
  for (let j = 0; j + 1 < t.nz; j++) {
    for (let i = 0; i + 1 < t.nx; i++) {
      const a = i + t.nx * j, b = a + 1, c = a + t.nx, d = c + 1;
      index.push(a, c, b, b, c, d);
    }
  }
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  geometry.setIndex(index);
  geometry.computeVertexNormals();
  const m = new THREE.Mesh(geometry, new THREE.MeshStandardMaterial({ color: new THREE.Color('#c9a45c'), roughness: 0.95, metalness: 0.0, side: THREE.DoubleSide }));
  m.name = 'terrain';
  world.add(m);
  terrain = { mesh: m, pos };
}

// the page's terrain heights [mm], as drawn (for tests)
state.terrainSurface = () => (terrain ? Array.from({ length: terrain.pos.length / 3 }, (_, k) => Math.round(terrain.pos[3 * k + 1] * 1e3)) : []);

function applyTerrain(u) {
  if (!terrain || !u) return;
  const pos = terrain.pos;
  if (u.h) u.h.forEach((mm, k) => { pos[3 * k + 1] = mm * 1e-3; });
  if (u.dh) for (let q = 0; q + 1 < u.dh.length; q += 2) pos[3 * u.dh[q] + 1] = u.dh[q + 1] * 1e-3;
  const g = terrain.mesh.geometry;
  g.attributes.position.needsUpdate = true;
  g.computeVertexNormals();
  state.terrainUpdates = (state.terrainUpdates || 0) + 1;
}

function buildScene(sc) {
  state.scene = sc;
  drawObstacles(sc);
  drawTerrain(sc.terrain);
  for (const b of sc.bodies) {
    const g = new THREE.Group();
    g.name = b.name;
    g.matrixAutoUpdate = false;
    for (const s of b.shapes) g.add(shapeMesh(s));
    world.add(g);
    groups.push(g);
  }
  for (const c of sc.cylinders) {
    const barrel = new THREE.Mesh(new THREE.CylinderGeometry(0.575 * c.piston_diameter, 0.575 * c.piston_diameter, 1, 20), material('#3d6fb6'));
    const rod = new THREE.Mesh(new THREE.CylinderGeometry(0.5 * c.rod_diameter, 0.5 * c.rod_diameter, 1, 16), material('#d8dde3'));
    world.add(barrel, rod);
    cylinders.push({ c, barrel, rod });
  }
  buildHud(sc, send);
  const inputs = document.getElementById('inputs');
  inputs.innerHTML = sc.inputs.map((u, i) =>
    `<div class="row"><span>${u.name}</span><span id="input${i}">–</span></div>`).join('');
  document.getElementById('keys').textContent = sc.playback ? '' : 'keys: ' + sc.inputs
    .filter(u => u.keys[0]).map(u => `${u.name} ${u.keys[0].toUpperCase()}/${u.keys[1].toUpperCase()}`).join(', ');
  document.getElementById('title').textContent = 'hydraulink · ' + sc.model;
}

// a cylinder's barrel from the base pin and its rod from the rod pin, each 60 % of the
// retracted length, so the rod shows more as the cylinder extends
function placeCylinder(entry, ends) {
  const base = new THREE.Vector3(ends[0], ends[1], ends[2]);
  const rodEnd = new THREE.Vector3(ends[3], ends[4], ends[5]);
  const d = rodEnd.clone().sub(base);
  const len = d.length();
  if (!(len > 0)) return;
  d.divideScalar(len);
  const q = new THREE.Quaternion().setFromUnitVectors(new THREE.Vector3(0, 1, 0), d);
  const lb = Math.min(0.6 * entry.c.retracted_length, len), lr = Math.min(0.6 * entry.c.retracted_length, len);
  entry.barrel.scale.set(1, lb, 1);
  entry.barrel.quaternion.copy(q);
  entry.barrel.position.copy(base).addScaledVector(d, 0.5 * lb);
  entry.rod.scale.set(1, lr, 1);
  entry.rod.quaternion.copy(q);
  entry.rod.position.copy(rodEnd).addScaledVector(d, -0.5 * lr);
}

let fitted = false;
function applyFrame(f) {
  f.poses.forEach((p, i) => {
    const g = groups[i];
    if (!g) return;
    g.matrix.set(p[3], p[4], p[5], p[0], p[6], p[7], p[8], p[1], p[9], p[10], p[11], p[2], 0, 0, 0, 1);
    g.matrixWorldNeedsUpdate = true;
  });
  f.cylinders.forEach((e, i) => cylinders[i] && placeCylinder(cylinders[i], e));
  if (!fitted && groups.length) {
    world.updateMatrixWorld(true);
    const box = new THREE.Box3();
    groups.forEach(g => box.expandByObject(g));
    if (!box.isEmpty()) {
      const c = box.getCenter(new THREE.Vector3()), size = box.getSize(new THREE.Vector3()).length();
      controls.target.copy(c);
      camera.position.copy(c).add(new THREE.Vector3(0.55, 0.35, 0.9).multiplyScalar(Math.max(size, 1) * 1.25));
      controls.update();
    }
    fitted = true;
  }
  updateHud(f);
  const fmt = (x, n) => (x === null ? '–' : x.toFixed(n));
  state.scene.inputs.forEach((u, i) => {
    document.getElementById('input' + i).textContent = fmt(f.inputs[i], 2);
  });
}

function send(msg) {
  if (state.socket && state.socket.readyState === WebSocket.OPEN) state.socket.send(JSON.stringify(msg));
}

function connect() {
  const ws = new WebSocket(`ws://${location.host}/ws`);
  state.socket = ws;
  const status = document.getElementById('status');
  ws.onopen = () => { status.textContent = 'connected'; };
  ws.onclose = () => { status.textContent = 'disconnected (server stopped?)'; };
  ws.onmessage = ev => {
    const msg = JSON.parse(ev.data);
    if (msg.type === 'scene') { buildScene(msg.scene); state.ready = true; }
    else if (msg.type === 'frame') {
      state.frame = msg;
      state.frames += 1;
      // at once, not at the next animation frame: a frame drawn over carries changes too
      applyTerrain(msg.terrain);
    }
  };
}

const boundKeys = () => new Set(state.scene ? state.scene.keys : []);
function onKey(ev, pressed) {
  const key = ev.key.toLowerCase();
  if (ev.target && ev.target.tagName === 'INPUT') return; // typing a name (game.js)
  if (ev.repeat || !boundKeys().has(key)) return;
  send({ type: 'key', key, pressed });
  ev.preventDefault();
}
window.addEventListener('keydown', ev => onKey(ev, true));
window.addEventListener('keyup', ev => onKey(ev, false));


// Gamepad API: two sticks, up = +1 (the API's y axes point down)
const lastAxes = {};
function pollGamepad() {
  const pads = navigator.getGamepads ? navigator.getGamepads() : [];
  const pad = [...pads].find(p => p);
  if (!pad) return;
  const names = [['left_x', 0, 1], ['left_y', 1, -1], ['right_x', 2, 1], ['right_y', 3, -1]];
  for (const [axis, k, sign] of names) {
    const v = sign * (pad.axes[k] || 0);
    if (lastAxes[axis] === undefined || Math.abs(v - lastAxes[axis]) > 0.01) {
      lastAxes[axis] = v;
      send({ type: 'axis', axis, value: v });
    }
  }
}

window.addEventListener('resize', () => {
  camera.aspect = window.innerWidth / window.innerHeight;
  camera.updateProjectionMatrix();
  renderer.setSize(window.innerWidth, window.innerHeight);
});

let shown = null;
function animate() {
  requestAnimationFrame(animate);
  pollGamepad();
  if (state.frame && state.frame !== shown && state.scene) { applyFrame(state.frame); shown = state.frame; }
  controls.update();
  renderer.render(world, camera);
}
connect();
animate();
