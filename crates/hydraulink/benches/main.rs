//! Criterion benchmarks, named `<model>_<horizon>_<step>` (STYLE convention 9), one group per
//! formulation.
//!
//! `cargo bench -p hydraulink --bench main` — the figures go to BENCHMARKS.md.
//! Setup (model compile, consistent initialization, workspace) is outside the timing; each
//! sample runs the whole horizon from the same initial state.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use hydraulink::model::spec::Formulation;
use hydraulink::{model, ModelSpec, Simulation};

#[path = "../tests/support/chain.rs"]
mod chain;

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

/// The n-link chain (`tests/support/chain.rs`), 1 s at 1 ms, n = 2 … 64, under the penalty
/// formulation: the growth of the step cost with n.
fn chain_scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("chain_penalty_1s_1ms");
    g.sample_size(10);
    for n in [2usize, 4, 8, 16, 32, 64] {
        let spec: ModelSpec = toml::from_str(&chain::chain_toml(n, 1.0)).expect("chain parses");
        let m = model::compile(&spec).expect("chain compiles");
        let steps = (m.duration_s() / m.step_s()).round() as u64;
        g.bench_with_input(BenchmarkId::from_parameter(n), &m, |b, m| {
            b.iter_batched(
                || Simulation::new(m.clone()).expect("chain initializes"),
                |mut sim| {
                    for _ in 0..steps {
                        sim.step().expect("chain steps");
                    }
                    sim
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
    // one evaluation of the semi-recursive terms (kinematics, body terms, accumulation of M′
    // and Q′, cylinder ports, hydraulics) at the initial state, without the linear algebra
    let mut g = c.benchmark_group("chain_evaluate");
    for n in [2usize, 4, 8, 16, 32, 64] {
        let spec: ModelSpec = toml::from_str(&chain::chain_toml(n, 1.0)).expect("chain parses");
        let m = model::compile(&spec).expect("chain compiles");
        let sim = Simulation::new(m.clone()).expect("chain initializes");
        let st = sim.state().clone();
        let mut ev = hydraulink::assembly::Evaluator::<f64>::new(&m);
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                ev.evaluate(&m, &st.z, &st.zd, &st.p, &st.spool, false);
                ev.f.first().copied()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, steps, chain_scaling);
criterion_main!(benches);
