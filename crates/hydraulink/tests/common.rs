//! Shared helpers: load shipped models, run them and collect per-step series.

use hydraulink::{model, Model, ModelSpec, Simulation};

pub fn spec_of(name: &str) -> ModelSpec {
    let path = format!("{}/../../models/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("shipped model exists");
    toml::from_str(&text).expect("shipped model parses")
}

pub fn model_of(name: &str) -> Model {
    model::compile(&spec_of(name)).expect("shipped model compiles")
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

pub fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}
