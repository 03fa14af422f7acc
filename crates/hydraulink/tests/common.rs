//! Shared helpers: load shipped models, run them and collect per-step series.

use hydraulink::{Model, ModelSpec, Simulation};

pub fn spec_of(name: &str) -> ModelSpec {
    let path = format!("{}/../../models/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("shipped model exists");
    toml::from_str(&text).expect("shipped model parses")
}

pub fn model_of(name: &str) -> Model {
    hydraulink::compile(&spec_of(name)).expect("shipped model compiles")
}

pub fn spec_from(text: &str) -> ModelSpec {
    toml::from_str(text).expect("test model parses")
}

/// Every step's output row (row 0 = initial state), plus the labels.
pub struct Run {
    pub labels: Vec<String>,
    pub rows: Vec<Vec<f64>>,
    pub sim: Simulation,
}

impl Run {
    pub fn col(&self, label: &str) -> Vec<f64> {
        let i = self
            .labels
            .iter()
            .position(|l| l == label)
            .unwrap_or_else(|| panic!("no column {label}"));
        self.rows.iter().map(|r| r[i]).collect()
    }
    pub fn at(&self, label: &str, t: f64) -> f64 {
        let k = (t / self.sim.model().step_s()).round() as usize;
        self.col(label)[k]
    }
}

pub fn run(model: Model) -> Run {
    let mut sim = Simulation::new(model).expect("initialization succeeds");
    let labels = sim.output_labels();
    let mut row = vec![0.0; labels.len()];
    sim.output_row(&mut row);
    let mut rows = vec![row.clone()];
    let n = (sim.model().duration_s() / sim.model().step_s()).round() as u64;
    for _ in 0..n {
        sim.step().unwrap_or_else(|e| panic!("step failed: {e}"));
        sim.output_row(&mut row);
        rows.push(row.clone());
    }
    Run { labels, rows, sim }
}

/// The net cylinder work ∫ F ṡ dt with F including friction (the papers' "actuator work",
/// note 003b E.11): the hydraulic work `energy.actuator_work` minus `energy.friction_dissipated`.
pub fn net_work(r: &Run) -> Vec<f64> {
    r.col("energy.actuator_work")
        .iter()
        .zip(r.col("energy.friction_dissipated"))
        .map(|(w, d)| w - d)
        .collect()
}

pub fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// A tumbling brick, no gravity, spun about a non-principal axis and translating (Newton
/// tolerance tightened so that the integrator error, not the iteration error, is measured).
pub const FREE_BODY: &str = r#"
name = "free_body"
gravity = [0.0, 0.0, 0.0]
[[bodies]]
name = "brick"
mass_kg = 3.0
com = [0.1, 0.2, -0.1]
inertia = [0.5, 0.4, 0.3, 0.01, -0.02, 0.015]
[[joints]]
name = "free"
type = "free"
parent = "ground"
child = "brick"
location = [0.1, 0.2, -0.1]
q0 = [0.0, 0.0, 0.0, 0.1, -0.2, 0.3]
qd0 = [0.3, -0.1, 0.2, 1.0, 2.0, -1.5]
[solver]
step_s = 1e-3
duration_s = 2.0
tolerance_position = 1e-11
"#;

/// A 3-D spherical pendulum under gravity (tightened Newton tolerance, as `FREE_BODY`).
pub const SPHERICAL_PENDULUM: &str = r#"
name = "pendulum"
gravity = [0.0, -9.81, 0.0]
[[bodies]]
name = "bob"
mass_kg = 2.0
com = [0.0, -1.0, 0.0]
inertia = [0.02, 0.01, 0.02, 0.0, 0.0, 0.0]
[[joints]]
name = "ball"
type = "spherical"
parent = "ground"
child = "bob"
location = [0.0, 0.0, 0.0]
q0 = [0.6, 0.0, 0.3]
qd0 = [0.0, 1.5, 0.0]
[solver]
step_s = 1e-3
duration_s = 3.0
tolerance_position = 1e-11
"#;
