//! The scene a page draws: every body's shapes in its reference-configuration coordinates, the
//! cylinders as two attachment points, the operator inputs with their ranges and default
//! bindings, and the gauges. Built once from the model spec (in the reference configuration)
//! and the simulation's names; sent to each page on connect.
//!
//! A body without `visual` shapes gets a default: capsules from its parent joint's location to
//! each of its other points (child joint locations, markers, centre of mass), so every model
//! shows its links.

use hydraulink::model::hud::BindingSourceSpec;
use hydraulink::model::spec::{ModelSpec, VisualSpec};
use hydraulink_rt::{BindingSource, InputBinding};

use crate::mesh::{MeshError, MeshSource};
use serde::Serialize;

/// One drawn shape, in the body's reference-configuration coordinates [m].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shape {
    /// `box`, `cylinder` or `capsule`.
    pub kind: &'static str,
    /// Start of the shape's axis [m].
    pub from: [f64; 3],
    /// End of the shape's axis [m].
    pub to: [f64; 3],
    /// Radius (cylinder, capsule) [m]; 0 for a box.
    pub radius: f64,
    /// Box edges across the axis: width along `side`, height across both [m]; 0 otherwise.
    pub width: f64,
    /// Box height [m]; 0 otherwise.
    pub height: f64,
    /// Direction of a box's width [-].
    pub side: [f64; 3],
    /// Colour `#rrggbb`, or empty for the page's body colour.
    pub color: String,
    /// A mesh's triangles after [`Scene::load_meshes`]: vertices x, y, z in the body's
    /// reference coordinates [m]; empty for the other shapes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vertices: Vec<f32>,
    /// A mesh's triangles: three vertex indices each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub indices: Vec<u32>,
    /// A mesh's file and placement, read by [`Scene::load_meshes`].
    #[serde(skip)]
    pub mesh: Option<MeshSource>,
}

/// A body and its shapes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SceneBody {
    /// Body name.
    pub name: String,
    /// Its shapes.
    pub shapes: Vec<Shape>,
    /// Whether the shapes are the default (no `visual` in the model).
    pub default_shapes: bool,
}

/// A hydraulic cylinder drawn as barrel and rod.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SceneCylinder {
    /// Cylinder name.
    pub name: String,
    /// Barrel end: body index into [`Scene::bodies`] (none: the ground) and the point in its
    /// reference coordinates [m].
    pub base: (Option<usize>, [f64; 3]),
    /// Rod end, as `base`.
    pub rod: (Option<usize>, [f64; 3]),
    /// Piston diameter [m].
    pub piston_diameter: f64,
    /// Rod diameter [m].
    pub rod_diameter: f64,
    /// Pin-to-pin length at full retraction L₀ [m].
    pub retracted_length: f64,
    /// Stroke [m].
    pub stroke: f64,
    /// The drawn barrel's length b from the base pin [m] ([`SceneCylinder::drawn`]).
    pub barrel_length: f64,
    /// The cap e [m]: the piston's distance from the base pin at full retraction, and its
    /// least distance from the barrel's open end at full extension.
    pub cap_length: f64,
}

impl SceneCylinder {
    /// The drawn barrel and rod at pin distance `l` [m]: the barrel's length from the base
    /// pin, and the rod's from the rod pin to the piston [m]. The page draws the same
    /// (`viewer.js` `placeCylinder`).
    ///
    /// ```text
    ///  base pin ├──────────── barrel b ────────────┤
    ///           ├─ p ─┤▓ piston ═══════════ rod ═══════════ rod pin
    ///           ├──────────────────── l ─────────────────────┤
    ///  p = e + (b − 2e)·x,  x = (l − L₀)/s clamped to [0, 1]: the piston travels inside the
    ///  barrel from e to b − e over the stroke, so the rod overlaps the barrel by b − p ≥ e
    ///  at every stroke (and beyond it)
    ///  b = s + 2e (at most 90 % of L₀, so some rod shows when retracted), e = 5 % of L₀
    /// ```
    ///
    /// With b = s + 2e the rod's length l − p = L₀ − e is the same at every stroke, as a real
    /// rod's. Many papers' cylinders have a stroke as long as their closed length (the
    /// four-bar: 1.1 m and 1.1 m), which no single-stage barrel holds: b is then capped and
    /// the drawn rod grows with the stroke, but never leaves the barrel.
    pub fn drawn(&self, l: f64) -> (f64, f64) {
        let (b, e) = (self.barrel_length, self.cap_length);
        let x = if self.stroke > 0.0 {
            ((l - self.retracted_length) / self.stroke).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let piston = (e + (b - 2.0 * e) * x).min(l);
        (b.min(l), l - piston)
    }
}

/// The drawn barrel b and cap e [m] of a cylinder of closed pin-to-pin length `retracted` L₀
/// and `stroke` s [m] ([`SceneCylinder::drawn`]).
pub fn sleeve_lengths(retracted: f64, stroke: f64) -> (f64, f64) {
    let e = 0.05 * retracted;
    let barrel = (stroke.max(0.0) + 2.0 * e).min(0.9 * retracted);
    (barrel, e)
}

/// An operator input: a model input that drives a valve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SceneInput {
    /// Input name.
    pub name: String,
    /// Its range [lo, hi] [unit of the input].
    pub range: [f64; 2],
    /// The default key pair (positive, negative), lower-case `KeyboardEvent.key` names.
    pub keys: (String, String),
    /// The default gamepad axis (`left_x`, `left_y`, `right_x`, `right_y`), if one is left.
    pub axis: Option<String>,
}

/// A HUD gauge bound to a virtual sensor or an output column (`crate::hud`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gauge {
    /// Text shown (`V1.p`, `bucket height`).
    pub label: String,
    /// The sensor or output column it shows.
    pub sensor: String,
    /// Unit shown (`MPa`, `kN`); empty: SI.
    pub unit: String,
    /// Factor from the value's SI value to the shown unit.
    pub scale: f64,
    /// The gauge's scale [lo, hi] [shown unit], if given.
    pub range: Option<[f64; 2]>,
    /// Shown in red above this magnitude [shown unit]; none: never.
    pub limit: Option<f64>,
}

/// What the page draws and offers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scene {
    /// Model name.
    pub model: String,
    /// Fixed step Δt [s].
    pub step_s: f64,
    /// The bodies, in the order of the frames' poses.
    pub bodies: Vec<SceneBody>,
    /// The cylinders, in the order of the frames' end points.
    pub cylinders: Vec<SceneCylinder>,
    /// The operator inputs.
    pub inputs: Vec<SceneInput>,
    /// The gauges, in the order of the frames' values.
    pub gauges: Vec<Gauge>,
    /// The static obstacles of the contact elements (the worksite), each once ([`obstacles`]).
    pub obstacles: Vec<SceneObstacle>,
    /// The terrain's grid and its heights at the start ([`terrain`]); frames carry the changes.
    pub terrain: Option<SceneTerrain>,
    /// The scenario's tasks, in order.
    pub tasks: Vec<crate::hud::SceneTask>,
    /// Every key a binding listens to (the page sends only these).
    pub keys: Vec<String>,
    /// `hydraulink view`: the finished run's time span [t0, t1] [s] (the page shows a time
    /// slider and a playback speed); none: a live run.
    pub playback: Option<[f64; 2]>,
    /// `hydraulink view`: the finished run's own figures (from its `summary.json`), shown in
    /// place of the live engine's; none: a live run, or a run without a summary.
    pub run: Option<RunFigures>,
}

/// What a finished run's `summary.json` says about it, as `view` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunFigures {
    /// How the run stopped (`completed`, `failed`, …).
    pub status: String,
    /// Converged steps.
    pub steps: u64,
    /// Its real-time factor (simulated / wall time) [-], if measured.
    pub real_time_factor: Option<f64>,
    /// max |energy drift| over the run [J], if the model has an energy balance.
    pub drift_j: Option<f64>,
}

impl RunFigures {
    /// The figures of a `summary.json` text (its fields `status`, `step_count`,
    /// `real_time_factor`, `peak_abs_energy_drift_j`); none when it is not a summary.
    pub fn from_summary_json(text: &str) -> Option<RunFigures> {
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        Some(RunFigures {
            status: v.get("status")?.as_str()?.to_string(),
            steps: v.get("step_count")?.as_u64()?,
            real_time_factor: v
                .get("real_time_factor")
                .and_then(serde_json::Value::as_f64),
            drift_j: v
                .get("peak_abs_energy_drift_j")
                .and_then(serde_json::Value::as_f64),
        })
    }
}

/// A static obstacle the page draws: a box (a pole, a hopper wall) or the plane of the ground.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SceneObstacle {
    /// `box` or `plane`.
    pub kind: String,
    /// Centre of the box, or a point of the plane, global [m].
    pub center: [f64; 3],
    /// The box's axes as the columns of a rotation, column after column (9 numbers), or the
    /// plane's unit normal (3) [-].
    pub axes: Vec<f64>,
    /// Half extents along the axes [m] (a plane: 0).
    pub half: [f64; 3],
}

/// The terrain the page draws: a grid of columns whose heights frames update.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SceneTerrain {
    /// Corner (x₀, z₀) of the grid [m].
    pub origin: [f64; 2],
    /// Cell side d [m].
    pub cell: f64,
    /// Cells along x.
    pub nx: usize,
    /// Cells along z.
    pub nz: usize,
    /// Column heights in millimetres (index i + nx j), as frames send them
    /// (`protocol::write_terrain`).
    pub heights_mm: Vec<i32>,
}

/// The terrain of `sim` at its current state, if it has one.
pub fn terrain(sim: &hydraulink::Simulation) -> Option<SceneTerrain> {
    let w = sim.state().world.as_ref()?;
    let f = &w.field;
    Some(SceneTerrain {
        origin: f.origin_m,
        cell: f.cell_m,
        nx: f.nx,
        nz: f.nz,
        heights_mm: f
            .h
            .iter()
            .map(|h| crate::protocol::millimetres(*h))
            .collect(),
    })
}

/// The obstacles of every `obb_contact` element of `model`, each drawn once (a worksite lists
/// the same poles against several bodies).
pub fn obstacles(model: &hydraulink::Model) -> Vec<SceneObstacle> {
    use hydraulink::elements::obb_contact::Obstacle;
    let mut out: Vec<SceneObstacle> = Vec::new();
    for e in model.elements() {
        for o in e.obstacles() {
            let s = match o {
                Obstacle::Plane { point, normal } => SceneObstacle {
                    kind: "plane".into(),
                    center: (*point).into(),
                    axes: normal.as_slice().to_vec(),
                    half: [0.0; 3],
                },
                Obstacle::Box(b) => SceneObstacle {
                    kind: "box".into(),
                    center: b.center.into(),
                    axes: b.axes.as_slice().to_vec(),
                    half: b.half.into(),
                },
            };
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

const KEY_PAIRS: [(&str, &str); 8] = [
    ("w", "s"),
    ("i", "k"),
    ("l", "j"),
    ("a", "d"),
    ("t", "g"),
    ("o", "u"),
    ("y", "h"),
    ("p", ";"),
];
/// A key pair (positive, negative) and a gamepad axis.
type Controls = ((String, String), Option<String>);

const AXES: [&str; 4] = ["right_y", "left_y", "right_x", "left_x"];

/// Default key pair and axis per input: the key pairs W/S, I/K, L/J, A/D, T/G, … in the order
/// of the model's inputs, whatever their names (the README's order); the gamepad axis by the
/// input's name (boom right stick up/down, arm left stick up/down, bucket right stick sideways,
/// swing left stick sideways, as on an ISO excavator cab; a loader's lift and tilt take the
/// boom's and bucket's), otherwise the next free axis.
fn default_controls(names: &[String]) -> Vec<Controls> {
    let by_name = |n: &str| -> Option<usize> {
        let n = n.to_ascii_lowercase();
        ["boom", "arm", "bucket", "swing"]
            .iter()
            .position(|w| n.contains(w))
            .or_else(|| {
                ["lift", "", "tilt"]
                    .iter()
                    .position(|w| !w.is_empty() && n.contains(w))
            })
    };
    let keys = |i: usize| -> (String, String) {
        KEY_PAIRS
            .get(i)
            .map_or_else(Default::default, |(p, n)| (p.to_string(), n.to_string()))
    };
    let mut axes_used = [false; AXES.len()];
    let mut axes: Vec<Option<String>> = vec![None; names.len()];
    // first the named functions, then the rest in order
    for pass in 0..2 {
        for (i, n) in names.iter().enumerate() {
            if axes[i].is_some() {
                continue;
            }
            let slot = match (pass, by_name(n)) {
                (0, Some(k)) if !axes_used[k] => Some(k),
                (0, _) => continue,
                _ => axes_used.iter().position(|u| !u),
            };
            if let Some(k) = slot {
                axes_used[k] = true;
                axes[i] = Some(AXES[k].to_string());
            }
        }
    }
    axes.into_iter()
        .enumerate()
        .map(|(i, a)| (keys(i), a))
        .collect()
}

/// The points of a body in its reference coordinates, for the default shapes: its parent
/// joint's location first (if any), then child joint locations, markers and the centre of mass.
fn body_points(spec: &ModelSpec, body: &str) -> Vec<[f64; 3]> {
    let mut pts = Vec::new();
    if let Some(j) = spec.joints.iter().find(|j| j.child == body) {
        pts.push(j.location);
    }
    pts.extend(
        spec.joints
            .iter()
            .filter(|j| j.parent == body)
            .map(|j| j.location),
    );
    if let Some(b) = spec.bodies.iter().find(|b| b.name == body) {
        pts.extend(b.markers.values().copied());
        pts.push(b.com);
    }
    pts
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The default shapes of a body: capsules from its first point to each other distinct point,
/// with a radius of 4 % of the longest (at least 1 cm); a lone point is a 5 cm sphere.
pub fn default_shapes(points: &[[f64; 3]]) -> Vec<Shape> {
    let Some(&first) = points.first() else {
        return Vec::new();
    };
    let longest = points
        .iter()
        .map(|&p| distance(first, p))
        .fold(0.0, f64::max);
    let capsule = |to: [f64; 3], radius: f64| Shape {
        kind: "capsule",
        from: first,
        to,
        radius,
        width: 0.0,
        height: 0.0,
        side: [0.0, 0.0, 1.0],
        color: String::new(),
        vertices: Vec::new(),
        indices: Vec::new(),
        mesh: None,
    };
    if longest < 1e-9 {
        return vec![capsule(first, 0.05)];
    }
    let radius = (0.04 * longest).max(0.01);
    let mut out: Vec<Shape> = Vec::new();
    for &p in &points[1..] {
        if distance(first, p) > 1e-9 && out.iter().all(|s| distance(s.to, p) > 1e-9) {
            out.push(capsule(p, radius));
        }
    }
    out
}

fn shape_of(v: &VisualSpec) -> Shape {
    match v {
        VisualSpec::Box {
            from,
            to,
            width_m,
            height_m,
            side,
            color,
        } => Shape {
            kind: "box",
            from: *from,
            to: *to,
            radius: 0.0,
            width: *width_m,
            height: *height_m,
            side: *side,
            color: color.clone().unwrap_or_default(),
            vertices: Vec::new(),
            indices: Vec::new(),
            mesh: None,
        },
        VisualSpec::Cylinder {
            from,
            to,
            radius_m,
            color,
        }
        | VisualSpec::Capsule {
            from,
            to,
            radius_m,
            color,
        } => Shape {
            kind: if matches!(v, VisualSpec::Cylinder { .. }) {
                "cylinder"
            } else {
                "capsule"
            },
            from: *from,
            to: *to,
            radius: *radius_m,
            width: 0.0,
            height: 0.0,
            side: [0.0, 0.0, 1.0],
            color: color.clone().unwrap_or_default(),
            vertices: Vec::new(),
            indices: Vec::new(),
            mesh: None,
        },
        VisualSpec::Mesh {
            file,
            origin,
            x_axis,
            y_axis,
            scale_m,
            color,
        } => Shape {
            kind: "mesh",
            from: *origin,
            to: *origin,
            radius: 0.0,
            width: 0.0,
            height: 0.0,
            side: [0.0, 0.0, 1.0],
            color: color.clone().unwrap_or_default(),
            vertices: Vec::new(),
            indices: Vec::new(),
            mesh: Some(MeshSource {
                file: file.clone(),
                origin: *origin,
                x_axis: *x_axis,
                y_axis: *y_axis,
                scale_m: *scale_m,
            }),
        },
    }
}

/// The operator inputs: model inputs that drive a 4/3 valve, with the valve's command range
/// (default [−10, 10] V), in the order of the model's valves.
fn operator_inputs(spec: &ModelSpec) -> Vec<(String, [f64; 2])> {
    let mut out: Vec<(String, [f64; 2])> = Vec::new();
    for v in &spec.hydraulics.valves {
        if out.iter().all(|(n, _)| *n != v.input) {
            out.push((v.input.clone(), v.input_range_v.unwrap_or([-10.0, 10.0])));
        }
    }
    out
}

impl Scene {
    /// The scene of a validated model `spec` (any pose; it is mapped to the reference
    /// configuration) whose simulation has the output columns `labels`.
    pub fn new(spec: &ModelSpec, step_s: f64, labels: &[String]) -> Scene {
        let spec = hydraulink::pipeline::pose::to_reference(spec);
        let bodies: Vec<SceneBody> = spec
            .bodies
            .iter()
            .map(|b| {
                let default_shapes = b.visual.is_empty();
                SceneBody {
                    name: b.name.clone(),
                    shapes: if default_shapes {
                        default_shapes_of(&spec, &b.name)
                    } else {
                        b.visual.iter().map(shape_of).collect()
                    },
                    default_shapes,
                }
            })
            .collect();
        let end = |body: &str, marker: &str| -> (Option<usize>, [f64; 3]) {
            match spec.bodies.iter().position(|b| b.name == body) {
                Some(i) => (
                    Some(i),
                    spec.bodies[i]
                        .markers
                        .get(marker)
                        .copied()
                        .unwrap_or_default(),
                ),
                None => (
                    None,
                    spec.ground.markers.get(marker).copied().unwrap_or_default(),
                ),
            }
        };
        let cylinders = spec
            .hydraulics
            .cylinders
            .iter()
            .map(|c| {
                let (barrel_length, cap_length) = sleeve_lengths(c.retracted_length_m, c.stroke_m);
                SceneCylinder {
                    name: c.name.clone(),
                    base: end(&c.base.body, &c.base.marker),
                    rod: end(&c.rod.body, &c.rod.marker),
                    piston_diameter: c.piston_diameter_m,
                    rod_diameter: c.rod_diameter_m,
                    retracted_length: c.retracted_length_m,
                    stroke: c.stroke_m,
                    barrel_length,
                    cap_length,
                }
            })
            .collect();
        let ops = operator_inputs(&spec);
        let names: Vec<String> = ops.iter().map(|(n, _)| n.clone()).collect();
        let inputs = ops
            .into_iter()
            .zip(default_controls(&names))
            .map(|((name, range), (keys, axis))| SceneInput {
                name,
                range,
                keys,
                axis,
            })
            .collect();
        let mut scene = Scene {
            model: spec.name.clone(),
            step_s,
            bodies,
            cylinders,
            inputs,
            gauges: crate::hud::scene_gauges(&spec, labels),
            tasks: crate::hud::scene_tasks(&spec),
            keys: Vec::new(),
            playback: None,
            run: None,
            obstacles: Vec::new(),
            terrain: None,
        };
        let bindings = scene.bindings(&spec);
        scene.set_keys(&bindings);
        scene
    }

    /// Lists the keys of `bindings` as the ones the page sends.
    pub fn set_keys(&mut self, bindings: &[InputBinding]) {
        self.keys.clear();
        for b in bindings {
            if let BindingSource::Keys { positive, negative } = &b.source {
                for k in [positive, negative] {
                    if !self.keys.contains(k) {
                        self.keys.push(k.clone());
                    }
                }
            }
        }
    }

    /// The bindings of a model: its `[[hud.bindings]]` (a missing range is the input's range in
    /// the scene, else [−1, 1]), or, without any, [`Scene::default_bindings`].
    pub fn bindings(&self, spec: &ModelSpec) -> Vec<InputBinding> {
        if spec.hud.bindings.is_empty() {
            return self.default_bindings();
        }
        spec.hud
            .bindings
            .iter()
            .map(|b| InputBinding {
                input: b.input.clone(),
                source: match &b.source {
                    BindingSourceSpec::Axis(a) => BindingSource::Axis(a.clone()),
                    BindingSourceSpec::Keys { positive, negative } => BindingSource::Keys {
                        positive: positive.clone(),
                        negative: negative.clone(),
                    },
                },
                range: b.range.unwrap_or_else(|| {
                    self.inputs
                        .iter()
                        .find(|i| i.name == b.input)
                        .map_or([-1.0, 1.0], |i| i.range)
                }),
                deadband: b.deadband,
                rate_limit_per_s: b.rate_limit_per_s,
            })
            .collect()
    }

    /// Reads every `mesh` shape's OBJ file, its path relative to `base` (the model file's
    /// folder), and places its triangles; the error names the body, the shape and the file.
    pub fn load_meshes(&mut self, base: &std::path::Path) -> Result<(), MeshError> {
        for b in &mut self.bodies {
            for (index, s) in b.shapes.iter_mut().enumerate() {
                let Some(src) = &s.mesh else { continue };
                let (vertices, indices) =
                    crate::mesh::load(src, base).map_err(|(path, reason)| MeshError {
                        body: b.name.clone(),
                        index,
                        file: src.file.clone(),
                        path: path.display().to_string(),
                        reason,
                    })?;
                s.vertices = vertices;
                s.indices = indices;
            }
        }
        Ok(())
    }

    /// The engine bindings of the default controls: per input its key pair and, if it has one,
    /// its gamepad axis (deadband 0.1), both with a rate limit of the full range in 0.5 s.
    /// The axis bindings come last, so a gamepad that moved overrides the keys.
    pub fn default_bindings(&self) -> Vec<InputBinding> {
        let rate = |r: [f64; 2]| Some((r[1] - r[0]) / 0.5);
        let keys = self
            .inputs
            .iter()
            .filter(|i| !i.keys.0.is_empty())
            .map(|i| InputBinding {
                input: i.name.clone(),
                source: BindingSource::Keys {
                    positive: i.keys.0.clone(),
                    negative: i.keys.1.clone(),
                },
                range: i.range,
                deadband: 0.0,
                rate_limit_per_s: rate(i.range),
            });
        let axes = self.inputs.iter().filter_map(|i| {
            i.axis.as_ref().map(|a| InputBinding {
                input: i.name.clone(),
                source: BindingSource::Axis(a.clone()),
                range: i.range,
                deadband: 0.1,
                rate_limit_per_s: rate(i.range),
            })
        });
        keys.chain(axes).collect()
    }
}

fn default_shapes_of(spec: &ModelSpec, body: &str) -> Vec<Shape> {
    default_shapes(&body_points(spec, body))
}
