//! Criterion benchmarks, named `<model>_<horizon>_<step>` (STYLE convention 9), one group per
//! formulation.
//!
//! `cargo bench -p hydraulink --bench main` — the figures go to BENCHMARKS.md.
//! Setup (model compile, consistent initialization, workspace) is outside the timing; each
//! sample runs the whole horizon from the same initial state.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use hydraulink::model::spec::Formulation;
use hydraulink::{model, ModelSpec, Simulation};

/// The shipped models with their horizon and step (the papers' settings).
const MODELS: [(&str, &str); 4] = [
    ("fourbar", "fourbar_10s_1ms"),
    ("quickreturn", "quickreturn_10s_1ms"),
    ("fourbar_rahikainen", "fourbar_rahikainen_7s_1ms"),
    ("rod_naya", "rod_naya_10s_10ms"),
];

fn load(name: &str, formulation: Formulation) -> Option<hydraulink::Model> {
    let path = format!("{}/../../models/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let mut spec: ModelSpec = toml::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    spec.solver.formulation = formulation;
    model::compile(&spec).ok()
}

fn steps(c: &mut Criterion) {
    for formulation in [
        Formulation::Penalty,
        Formulation::DoubleStep,
        Formulation::GlobalAli3p,
        Formulation::GlobalI1al,
        Formulation::KinematicGuidance,
        Formulation::Multirate,
    ] {
        if !formulation.is_available() {
            continue;
        }
        let mut g = c.benchmark_group(formulation.name());
        g.sample_size(10);
        for (name, bench) in MODELS {
            // a formulation that cannot run a model through (e.g. kinematic guidance without a
            // guide) is left out: one probe run decides
            let Some(m) = load(name, formulation) else {
                continue;
            };
            let n = (m.duration_s() / m.step_s()).round() as u64;
            let Ok(mut probe) = Simulation::new(m.clone()) else {
                continue;
            };
            if (0..n).any(|_| probe.step().is_err()) {
                continue;
            }
            g.bench_function(bench, |b| {
                b.iter_batched(
                    || Simulation::new(m.clone()).expect("initialized above"),
                    |mut sim| {
                        for _ in 0..n {
                            sim.step().expect("the probe run completed");
                        }
                        sim
                    },
                    BatchSize::LargeInput,
                )
            });
        }
        g.finish();
    }
}

/// 003 Pub II: the friction four-bar (10 s at 1 ms) under each seal-friction law, and without
/// seal friction for the extra cost. Penalty formulation (the only one with friction states).
fn friction(c: &mut Criterion) {
    let mut g = c.benchmark_group("friction");
    g.sample_size(10);
    for law in [
        "none",
        "bengisu_akay",
        "brown_mcphee",
        "lugre",
        "modified_lugre",
    ] {
        let path = format!(
            "{}/../../models/fourbar_friction.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut spec: ModelSpec =
            toml::from_str(&std::fs::read_to_string(path).expect("shipped model")).unwrap();
        spec.hydraulics.cylinders[0].friction =
            toml::from_str(&format!("type = \"{law}\"")).unwrap();
        let m = model::compile(&spec).expect("compiles");
        let n = (m.duration_s() / m.step_s()).round() as u64;
        g.bench_function(format!("fourbar_friction_10s_1ms_{law}"), |b| {
            b.iter_batched(
                || Simulation::new(m.clone()).expect("initializes"),
                |mut sim| {
                    for _ in 0..n {
                        sim.step().expect("the run completes");
                    }
                    sim
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, steps, friction);
criterion_main!(benches);
