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
grid.name = 'grid';
world.add(grid);
state.grid = grid;

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

// a body's meshes are few: drawing them all costs nothing, and culling by their bounding
// spheres must never make a part vanish at some angle
function alwaysDrawn(object) {
  object.traverse(o => { o.frustumCulled = false; });
  return object;
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
    for (const s of b.shapes) g.add(alwaysDrawn(shapeMesh(s)));
    world.add(g);
    groups.push(g);
  }
  for (const c of sc.cylinders) {
    const barrel = new THREE.Mesh(new THREE.CylinderGeometry(0.575 * c.piston_diameter, 0.575 * c.piston_diameter, 1, 20), material('#3d6fb6'));
    const rod = new THREE.Mesh(new THREE.CylinderGeometry(0.5 * c.rod_diameter, 0.5 * c.rod_diameter, 1, 16), material('#d8dde3'));
    // the barrel is drawn over the rod's inner part: it is wider, and drawn after it
    barrel.renderOrder = 1;
    world.add(alwaysDrawn(barrel), alwaysDrawn(rod));
    cylinders.push({ c, barrel, rod, overlap: null });
  }
  buildHud(sc, send);
  const inputs = document.getElementById('inputs');
  inputs.innerHTML = sc.inputs.map((u, i) =>
    `<div class="row"><span>${u.name}</span><span id="input${i}">–</span></div>`).join('');
  // the keys the server listens to, per input in the model's order (scene.rs `default_controls`)
  const keys = sc.playback ? [] : sc.inputs.filter(u => u.keys[0] && sc.keys.includes(u.keys[0]))
    .map(u => `${u.name} ${u.keys[0].toUpperCase()}/${u.keys[1].toUpperCase()}`);
  document.getElementById('keys').textContent = 'keys: ' + keys.concat(['F reframe the view']).join(', ');
  document.getElementById('title').textContent = 'hydraulink · ' + sc.model;
}

// a cylinder's barrel from the base pin and its rod from the rod pin to the piston, which
// travels inside the barrel over the stroke: the two overlap at every stroke, the wider barrel
// drawn over the rod's inner part (scene.rs `SceneCylinder::drawn`, the same arithmetic)
function placeCylinder(entry, ends) {
  const base = new THREE.Vector3(ends[0], ends[1], ends[2]);
  const rodEnd = new THREE.Vector3(ends[3], ends[4], ends[5]);
  const d = rodEnd.clone().sub(base);
  const len = d.length();
  if (!(len > 0)) return;
  d.divideScalar(len);
  const q = new THREE.Quaternion().setFromUnitVectors(new THREE.Vector3(0, 1, 0), d);
  const c = entry.c, b = c.barrel_length, e = c.cap_length;
  const x = c.stroke > 0 ? Math.min(1, Math.max(0, (len - c.retracted_length) / c.stroke)) : 0;
  const piston = Math.min(e + (b - 2 * e) * x, len);
  const lb = Math.min(b, len), lr = len - piston;
  entry.overlap = lb + lr - len;
  entry.barrel.scale.set(1, lb, 1);
  entry.barrel.quaternion.copy(q);
  entry.barrel.position.copy(base).addScaledVector(d, 0.5 * lb);
  entry.rod.scale.set(1, lr, 1);
  entry.rod.quaternion.copy(q);
  entry.rod.position.copy(rodEnd).addScaledVector(d, -0.5 * lr);
}

// the bounding box of the drawn machine (bodies and cylinders; not the worksite)
function machineBox() {
  world.updateMatrixWorld(true);
  const box = new THREE.Box3();
  groups.forEach(g => box.expandByObject(g));
  cylinders.forEach(e => { box.expandByObject(e.barrel); box.expandByObject(e.rod); });
  return box;
}

// the width [px] of the window right of the panel, with the projection's centre moved to
// its middle
function besidePanel() {
  const W = window.innerWidth, H = window.innerHeight;
  const panel = document.getElementById('hud').getBoundingClientRect().right;
  const left = panel < 0.6 * W ? panel : 0;
  camera.setViewOffset(W, H, -left / 2, 0, W, H);
  return W - left;
}

// the camera looks at the box's centre from a fixed direction, far enough for the box's
// bounding sphere to fit the narrower of the two fields of view, with near and far planes
// around it (parts below y = 0 included)
function frameBox(box) {
  if (box.isEmpty()) return;
  const c = box.getCenter(new THREE.Vector3());
  const r = Math.max(0.5 * box.getSize(new THREE.Vector3()).length(), 0.1);
  // the machine in the part of the window right of the panel
  const free = besidePanel();
  const vfov = THREE.MathUtils.degToRad(camera.fov);
  const hfov = 2 * Math.atan(Math.tan(vfov / 2) * free / window.innerHeight);
  const dist = 1.05 * r / Math.sin(Math.min(vfov, hfov) / 2);
  controls.target.copy(c);
  camera.position.copy(c).addScaledVector(new THREE.Vector3(0.55, 0.35, 0.9).normalize(), dist);
  // a near plane small against the machine (zooming in does not cut it), a far one beyond
  // the worksite's 40 m ground
  camera.near = Math.max(1e-3, 2e-3 * r);
  camera.far = dist + 100 * r + 200;
  camera.updateProjectionMatrix();
  controls.update();
}
state.reframe = () => frameBox(machineBox());

// the fraction of the machine box's corners inside the view (for tests)
state.framed = () => {
  const box = machineBox();
  const inside = [0, 1, 2, 3, 4, 5, 6, 7].filter(k => {
    const p = new THREE.Vector3(k & 1 ? box.max.x : box.min.x, k & 2 ? box.max.y : box.min.y, k & 4 ? box.max.z : box.min.z);
    const v = p.project(camera);
    return Math.abs(v.x) <= 1 && Math.abs(v.y) <= 1 && v.z > -1 && v.z < 1;
  });
  return inside.length / 8;
};
state.cylinderOverlaps = () => cylinders.map(e => e.overlap);
state.machineBox = () => { const b = machineBox(); return [b.min.toArray(), b.max.toArray()]; };
state.camera = camera;
state.controls = controls;

// the grid at the ground: below the worksite's ground plane and terrain (which hide it, so
// no grid line shows through), else at the lowest point of the machine at load
function placeGrid(box) {
  const sc = state.scene;
  const heights = [];
  for (const o of sc.obstacles || []) if (o.kind === 'plane') heights.push(o.center[1] - 0.03);
  if (sc.terrain) heights.push(Math.min(...sc.terrain.heights_mm) * 1e-3 - 0.03);
  const y = heights.length ? Math.min(...heights) : (box.isEmpty() ? 0 : box.min.y);
  grid.position.set(box.isEmpty() ? 0 : box.getCenter(new THREE.Vector3()).x, y, box.isEmpty() ? 0 : box.getCenter(new THREE.Vector3()).z);
  state.gridY = y;
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
    const box = machineBox();
    frameBox(box);
    placeGrid(box);
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
  if (key === 'f' && pressed && !ev.repeat) state.reframe();
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
  besidePanel();
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
