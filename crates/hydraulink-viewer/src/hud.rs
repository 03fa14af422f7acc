//! The heads-up display's logic (after 003 Pub. IV §4): virtual sensors on body poses, gauges
//! bound to sensors or to any output column, the fuel estimate and the scenario's tasks. Plain
//! Rust, run by the server's broadcaster on each snapshot, so it is tested without a browser;
//! the page (`assets/hud.js`) only shows what the frames carry.
//!
//! ```text
//!  snapshot (t, poses, selected output columns)
//!     ├─ sensors   point height h = n̂·(x + A r̄) − h₀  [m];  axis angle θ = asin(n̂·A ā/|ā|)  [rad]
//!     │            n̂ = −g/|g| (up; +y without gravity)
//!     ├─ fuel      P = max(0, Σ power columns) [W];  E += ½ (P_prev + P) (t − t_prev)  [J]
//!     │            m_f = E / (η_e H)  [kg]      (trapezoidal rule over the display rate)
//!     ├─ gauges    value × unit factor (hud::unit_scale)  → frame "gauges"
//!     └─ scenario  task k: every condition holds → held += t − t_prev, else held = 0;
//!                  held ≥ hold_s → task k + 1                → frame "task", "held"
//!  t < t_prev (a reset or a replay from the start): fuel, held time and tasks start again
//! ```
//!
//! The fuel is integrated at the display rate (60 Hz), not per physics step: the shaft power of
//! a pump changes with the valve commands over tenths of a second, so the trapezoidal rule at
//! 1/60 s follows it closely; it is an estimate for the operator, not a result of the run.

use hydraulink::model::hud::{unit_scale, GaugeSpec, SensorSpec, FUEL_SENSORS};
use hydraulink::model::spec::ModelSpec;
use hydraulink::pipeline::simulation::BodyPose;
use serde::Serialize;
use thiserror::Error;

use crate::scene::Gauge;

/// A HUD that refers to a value the run does not have.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum HudError {
    /// A gauge, condition or fuel power names neither a sensor nor an output column.
    #[error("{field}: '{name}' is neither a [[hud.sensors]] name, fuel_kg, fuel_power nor an output column of the run (e.g. {examples})")]
    UnknownValue {
        /// The field (`hud.gauges[2].sensor`, `scenario.tasks[0].conditions[1].sensor`).
        field: String,
        /// The name given.
        name: String,
        /// A few valid names.
        examples: String,
    },
}

/// Where a shown value comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source {
    /// The k-th of [`Hud::columns`].
    Column(usize),
    /// The k-th sensor.
    Sensor(usize),
    /// The fuel mass [kg].
    FuelKg,
    /// The power the fuel estimate integrates [W].
    FuelPower,
}

#[derive(Debug, Clone, PartialEq)]
enum SensorKind {
    /// Point r̄ and ground level h₀ [m].
    Height([f64; 3], f64),
    Angle([f64; 3]),
}

#[derive(Debug, Clone, PartialEq)]
struct Sensor {
    /// Index into the poses.
    body: usize,
    kind: SensorKind,
}

#[derive(Debug, Clone, PartialEq)]
struct Condition {
    source: Source,
    /// Factor from SI to the bounds' unit.
    scale: f64,
    min: f64,
    max: f64,
}

#[derive(Debug, Clone, PartialEq)]
struct Task {
    conditions: Vec<Condition>,
    hold_s: f64,
}

/// A scenario task as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SceneTask {
    /// The instruction.
    pub instruction: String,
    /// How long the conditions must hold [s].
    pub hold_s: f64,
}

/// The compiled HUD of a model: what the engine must send and how to turn a snapshot into the
/// shown values.
#[derive(Debug, Clone, PartialEq)]
pub struct Hud {
    /// The output columns the snapshots must carry, in this order.
    pub columns: Vec<String>,
    sensors: Vec<Sensor>,
    up: [f64; 3],
    gauges: Vec<(Source, f64)>,
    fuel_power: Vec<usize>,
    /// 1/(η_e H) [kg/J].
    fuel_per_joule: f64,
    tasks: Vec<Task>,
}

/// The HUD's running values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HudState {
    /// The gauges' values [shown unit], in the order of the scene's gauges.
    pub gauges: Vec<f64>,
    /// The sensors' values [m or rad].
    pub sensors: Vec<f64>,
    /// Fuel energy E [J] (shaft energy integrated).
    pub fuel_energy_j: f64,
    /// The integrated power at the last snapshot [W].
    pub fuel_power_w: f64,
    /// The current task (tasks before it are done; = the number of tasks when all are).
    pub task: usize,
    /// How long the current task's conditions have held [s].
    pub held_s: f64,
    last_t: Option<f64>,
}

/// The gauges a model shows: its `[[hud.gauges]]`, or the defaults: each declared sensor
/// (heights [m], angles [deg]), each cylinder's chamber pressures [MPa] (red above 90 % of the
/// highest relief valve's cracking pressure) and force [kN], each pump's shaft power [kW], the
/// fuel [g] when there is a pump, and the columns `payload_kg` and `hopper_kg` when the run has
/// them. Default gauges whose column the run lacks are left out.
pub fn gauge_specs(spec: &ModelSpec, labels: &[String]) -> Vec<GaugeSpec> {
    if !spec.hud.gauges.is_empty() {
        return spec.hud.gauges.clone();
    }
    let gauge = |sensor: String, unit: &str, critical: Option<f64>| GaugeSpec {
        label: String::new(),
        sensor,
        unit: Some(unit.to_string()),
        range: None,
        critical,
    };
    let mut out: Vec<GaugeSpec> = spec
        .hud
        .sensors
        .iter()
        .map(|s| match s {
            SensorSpec::PointHeight { name, .. } => gauge(name.clone(), "m", None),
            SensorSpec::AxisAngle { name, .. } => gauge(name.clone(), "deg", None),
        })
        .collect();
    let relief_mpa = spec
        .elements
        .iter()
        .filter_map(|e| match e {
            hydraulink::elements::component::ComponentSpec::ReliefValve(r) => {
                Some(r.cracking_pressure_pa * 1e-6)
            }
            _ => None,
        })
        .fold(None, |m: Option<f64>, p| Some(m.map_or(p, |m| m.max(p))));
    let mut columns = Vec::new();
    for c in &spec.hydraulics.cylinders {
        for v in [&c.piston_side, &c.rod_side] {
            columns.push(gauge(format!("{v}.p"), "MPa", relief_mpa.map(|p| 0.9 * p)));
        }
        columns.push(gauge(format!("{}.force", c.name), "kN", None));
    }
    let pumps: Vec<String> = labels
        .iter()
        .filter(|l| l.ends_with(".shaft_power"))
        .cloned()
        .collect();
    for p in &pumps {
        columns.push(gauge(p.clone(), "kW", None));
    }
    for extra in ["payload_kg", "hopper_kg"] {
        columns.push(gauge(extra.into(), "kg", None));
    }
    columns.retain(|g| labels.contains(&g.sensor));
    out.extend(columns);
    if spec.hud.fuel.is_some() || !pumps.is_empty() {
        out.push(gauge("fuel_kg".into(), "g", None));
    }
    out
}

/// A name as an operator reads it: `boom_cyl` → `boom cyl.`, `DCV_arm` → `DCV arm`.
fn readable(name: &str) -> String {
    name.split(['_', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| if w == "cyl" { "cyl." } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The label of a gauge on `sensor` without one of its own: for a volume's pressure (`V1.p`)
/// the volume's `label`, else the cylinder chamber it feeds (`boom cyl. piston side`), else
/// `V1 pressure`; `boom_cyl.force` → `boom cyl. force`; a pump's shaft power, the fuel, the
/// payload and a sensor by their names, made readable. Never the bare column name of a
/// volume.
pub fn default_gauge_label(spec: &ModelSpec, sensor: &str) -> String {
    if let Some(v) = sensor.strip_suffix(".p") {
        if let Some(label) = spec
            .hydraulics
            .volumes
            .iter()
            .find(|x| x.name == v)
            .and_then(|x| x.label.clone())
            .filter(|l| !l.trim().is_empty())
        {
            return label;
        }
        let sides: Vec<String> = spec
            .hydraulics
            .cylinders
            .iter()
            .flat_map(|c| {
                [(&c.piston_side, "piston side"), (&c.rod_side, "rod side")]
                    .into_iter()
                    .filter(move |(side, _)| *side == v)
                    .map(move |(_, which)| format!("{} {which}", readable(&c.name)))
            })
            .collect();
        return if sides.is_empty() {
            format!("{} pressure", readable(v))
        } else {
            sides.join(", ")
        };
    }
    let named = |suffix: &str, what: &str| {
        sensor
            .strip_suffix(suffix)
            .map(|n| format!("{} {what}", readable(n)))
    };
    if let Some(l) = named(".force", "force").or_else(|| named(".shaft_power", "shaft power")) {
        return l;
    }
    match sensor {
        "fuel_kg" => "fuel used".into(),
        "fuel_power" => "fuel power".into(),
        "payload_kg" => "payload".into(),
        "hopper_kg" => "in the hopper".into(),
        s => readable(s),
    }
}

/// The scene's gauges of [`gauge_specs`]: label (default: [`default_gauge_label`]), unit,
/// factor, range and red limit.
pub fn scene_gauges(spec: &ModelSpec, labels: &[String]) -> Vec<Gauge> {
    gauge_specs(spec, labels)
        .into_iter()
        .map(|g| {
            let unit = g.unit.clone().unwrap_or_default();
            Gauge {
                label: if g.label.trim().is_empty() {
                    default_gauge_label(spec, &g.sensor)
                } else {
                    g.label
                },
                sensor: g.sensor,
                scale: unit_scale(&unit).unwrap_or(1.0),
                unit,
                range: g.range,
                limit: g.critical,
            }
        })
        .collect()
}

/// The scenario's tasks as the page shows them.
pub fn scene_tasks(spec: &ModelSpec) -> Vec<SceneTask> {
    spec.scenario
        .tasks
        .iter()
        .map(|t| SceneTask {
            instruction: t.instruction.clone(),
            hold_s: t.hold_s,
        })
        .collect()
}

/// Up: −g/|g|, or +y without gravity.
fn up_of(g: [f64; 3]) -> [f64; 3] {
    let n = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
    if n > 0.0 {
        [-g[0] / n, -g[1] / n, -g[2] / n]
    } else {
        [0.0, 1.0, 0.0]
    }
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Height [m] of the body point r̄ (reference coordinates) above the origin along `up`.
pub fn point_height(pose: &BodyPose, point: [f64; 3], up: [f64; 3]) -> f64 {
    dot(up, pose.point_m(point))
}

/// Angle [rad] of the body axis ā (reference coordinates) to the plane normal to `up`, + when
/// the axis points up.
pub fn axis_angle(pose: &BodyPose, axis: [f64; 3], up: [f64; 3]) -> f64 {
    let a = pose.rotation;
    let v = [dot(a[0], axis), dot(a[1], axis), dot(a[2], axis)];
    let n = dot(v, v).sqrt();
    (dot(up, v) / n).clamp(-1.0, 1.0).asin()
}

impl Hud {
    /// The HUD of a validated model `spec` (any pose) whose run has the output columns
    /// `labels`; every gauge, condition and fuel power must name a sensor or a column.
    pub fn new(spec: &ModelSpec, labels: &[String]) -> Result<Hud, HudError> {
        let spec = hydraulink::pipeline::pose::to_reference(spec);
        let mut columns: Vec<String> = Vec::new();
        let sensors_spec = &spec.hud.sensors;
        let examples = || {
            sensors_spec
                .iter()
                .map(|s| s.name().to_string())
                .chain(FUEL_SENSORS.iter().map(|s| s.to_string()))
                .chain(labels.iter().take(6).cloned())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut column = |name: &str, field: String| -> Result<usize, HudError> {
            if let Some(k) = columns.iter().position(|c| c == name) {
                return Ok(k);
            }
            if !labels.iter().any(|l| l == name) {
                return Err(HudError::UnknownValue {
                    field,
                    name: name.to_string(),
                    examples: examples(),
                });
            }
            columns.push(name.to_string());
            Ok(columns.len() - 1)
        };
        let fuel = spec.hud.fuel.clone();
        let (power_names, eta, h) = match &fuel {
            Some(f) => (
                f.power
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (p.clone(), format!("hud.fuel.power[{i}]")))
                    .collect::<Vec<_>>(),
                f.engine_efficiency,
                f.energy_density_j_kg,
            ),
            None => (
                labels
                    .iter()
                    .filter(|l| l.ends_with(".shaft_power"))
                    .map(|l| (l.clone(), "hud.fuel.power".to_string()))
                    .collect(),
                hydraulink::model::hud::default_engine_efficiency(),
                hydraulink::model::hud::default_energy_density(),
            ),
        };
        let mut fuel_power = Vec::new();
        for (name, field) in &power_names {
            fuel_power.push(column(name, field.clone())?);
        }
        let mut source = |name: &str, field: String| -> Result<Source, HudError> {
            if let Some(k) = sensors_spec.iter().position(|s| s.name() == name) {
                return Ok(Source::Sensor(k));
            }
            match name {
                "fuel_kg" => Ok(Source::FuelKg),
                "fuel_power" => Ok(Source::FuelPower),
                _ => column(name, field).map(Source::Column),
            }
        };
        let mut gauges = Vec::new();
        let specs = gauge_specs(&spec, labels);
        for (i, g) in specs.iter().enumerate() {
            let scale = g.unit.as_deref().and_then(unit_scale).unwrap_or(1.0);
            gauges.push((source(&g.sensor, format!("hud.gauges[{i}].sensor"))?, scale));
        }
        let mut tasks = Vec::new();
        for (i, t) in spec.scenario.tasks.iter().enumerate() {
            let mut conditions = Vec::new();
            for (k, c) in t.conditions.iter().enumerate() {
                conditions.push(Condition {
                    source: source(
                        &c.sensor,
                        format!("scenario.tasks[{i}].conditions[{k}].sensor"),
                    )?,
                    scale: c.unit.as_deref().and_then(unit_scale).unwrap_or(1.0),
                    min: c.min.unwrap_or(f64::NEG_INFINITY),
                    max: c.max.unwrap_or(f64::INFINITY),
                });
            }
            tasks.push(Task {
                conditions,
                hold_s: t.hold_s,
            });
        }
        let body = |name: &str| spec.bodies.iter().position(|b| b.name == name);
        let sensors = sensors_spec
            .iter()
            .filter_map(|s| {
                Some(Sensor {
                    body: body(s.body())?,
                    kind: match s {
                        SensorSpec::PointHeight {
                            point,
                            ground_level_m,
                            ..
                        } => SensorKind::Height(*point, *ground_level_m),
                        SensorSpec::AxisAngle { axis, .. } => SensorKind::Angle(*axis),
                    },
                })
            })
            .collect();
        Ok(Hud {
            columns,
            sensors,
            up: up_of(spec.gravity),
            gauges,
            fuel_power,
            fuel_per_joule: 1.0 / (eta * h),
            tasks,
        })
    }

    /// A fresh running state.
    pub fn state(&self) -> HudState {
        HudState {
            gauges: vec![f64::NAN; self.gauges.len()],
            sensors: vec![f64::NAN; self.sensors.len()],
            ..HudState::default()
        }
    }

    /// The number of tasks.
    pub fn n_tasks(&self) -> usize {
        self.tasks.len()
    }

    fn value(&self, st: &HudState, outputs: &[f64], s: Source) -> f64 {
        match s {
            Source::Column(k) => outputs.get(k).copied().unwrap_or(f64::NAN),
            Source::Sensor(k) => st.sensors.get(k).copied().unwrap_or(f64::NAN),
            Source::FuelKg => st.fuel_energy_j * self.fuel_per_joule,
            Source::FuelPower => st.fuel_power_w,
        }
    }

    /// Advances `st` to a snapshot at time `t` [s] with body `poses` and the [`Hud::columns`]
    /// values `outputs` (SI).
    pub fn update(&self, st: &mut HudState, t: f64, poses: &[BodyPose], outputs: &[f64]) {
        let dt = match st.last_t {
            Some(t0) if t >= t0 => t - t0,
            Some(_) => {
                // time went back: a reset
                st.fuel_energy_j = 0.0;
                st.task = 0;
                st.held_s = 0.0;
                st.last_t = None;
                0.0
            }
            None => 0.0,
        };
        for (v, s) in st.sensors.iter_mut().zip(&self.sensors) {
            *v = match (poses.get(s.body), &s.kind) {
                (Some(p), SensorKind::Height(r, h0)) => point_height(p, *r, self.up) - h0,
                (Some(p), SensorKind::Angle(a)) => axis_angle(p, *a, self.up),
                (None, _) => f64::NAN,
            };
        }
        let power: f64 = self
            .fuel_power
            .iter()
            .map(|&k| outputs.get(k).copied().unwrap_or(0.0).max(0.0))
            .sum();
        if st.last_t.is_some() && power.is_finite() {
            st.fuel_energy_j += 0.5 * (st.fuel_power_w + power) * dt;
        }
        st.fuel_power_w = power;
        st.last_t = Some(t);
        if let Some(task) = self.tasks.get(st.task) {
            let holds = task.conditions.iter().all(|c| {
                let v = self.value(st, outputs, c.source) * c.scale;
                v >= c.min && v <= c.max
            });
            if holds {
                st.held_s += dt;
                if st.held_s >= task.hold_s {
                    st.task += 1;
                    st.held_s = 0.0;
                }
            } else {
                st.held_s = 0.0;
            }
        }
        for (k, &(s, scale)) in self.gauges.iter().enumerate() {
            let v = self.value(st, outputs, s) * scale;
            if let Some(g) = st.gauges.get_mut(k) {
                *g = v;
            }
        }
    }
}
