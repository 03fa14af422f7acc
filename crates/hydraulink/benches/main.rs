//! Criterion benchmarks, named `<model>_<horizon>_<step>` (STYLE convention 9), one group per
//! formulation.
//!
//! `cargo bench -p hydraulink --bench main` — the figures go to BENCHMARKS.md.
//! Setup (model compile, consistent initialization, workspace) is outside the timing; each
//! sample runs the whole horizon from the same initial state.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use hydraulink::formulations::z_only::kinematic_guidance::{replay_spec, Recorded};
use hydraulink::model::spec::Formulation;
use hydraulink::{ModelSpec, Simulation};

#[path = "../tests/support/chain.rs"]
mod chain;

/// The shipped models at Δt = 1 ms (issue 3), and the rod also at its paper's 10 ms:
/// (file, benchmark name, step override).
const MODELS: [(&str, &str, Option<f64>); 8] = [
    ("fourbar", "fourbar_10s_1ms", None),
    ("quickreturn", "quickreturn_10s_1ms", None),
    ("fourbar_rahikainen", "fourbar_rahikainen_7s_1ms", None),
    ("rod_naya", "rod_naya_10s_1ms", Some(1e-3)),
    ("rod_naya", "rod_naya_10s_10ms", None),
    // the 20 s dig–swing–dump cycle (issue 11: ≤ 10 µs per step in-process); penalty only
    ("excavator", "excavator_20s_1ms", None),
    // the same cycle digging a pile into a hopper: terrain, digging and avalanching in every
    // step (issue 12: ≤ 200 µs per step, whole step with the terrain); penalty only
    ("excavator_dig", "excavator_dig_20s_1ms", None),
    // the machine on its worksite, as `hydraulink serve models/excavator.toml` runs it: terrain,
    // digging, and the collision boxes of boom, arm and bucket against poles, hopper and ground
    ("excavator+worksite", "excavator_worksite_20s_1ms", None),
];

/// A worksite file's tables (what `hydraulink_io::add_scene` adds to the machine).
#[derive(serde::Deserialize)]
struct Worksite {
    elements: Vec<hydraulink::elements::component::ComponentSpec>,
    terrain: Option<hydraulink::terrain::data::TerrainSpec>,
}

fn load(name: &str, formulation: Formulation, step: Option<f64>) -> Option<hydraulink::Model> {
    let models = format!("{}/../../models", env!("CARGO_MANIFEST_DIR"));
    let (name, site) = match name.split_once('+') {
        Some((machine, site)) => (machine, Some(site)),
        None => (name, None),
    };
    let path = format!("{models}/{name}.toml");
    let mut spec: ModelSpec = toml::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    if let Some(site) = site {
        let path = format!("{models}/scenes/{site}.toml");
        let w: Worksite = toml::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
        spec.elements.extend(w.elements);
        spec.terrain = w.terrain;
    }
    if let Some(dt) = step {
        spec.solver.step_s = dt;
    }
    if formulation == Formulation::KinematicGuidance && spec.solver.guidance.is_empty() {
        // no prescribed motion in the model: replay the penalty run's cylinder motion, as
        // `hydraulink compare` does (the recording is outside the timing)
        spec = replay_of_penalty_run(&spec)?;
    }
    spec.solver.formulation = formulation;
    hydraulink::compile(&spec).ok()
}

/// The model under kinematic guidance following the cylinder lengths and rates of its penalty
/// run, sampled every step.
fn replay_of_penalty_run(spec: &ModelSpec) -> Option<ModelSpec> {
    let mut reference = spec.clone();
    reference.solver.formulation = Formulation::Penalty;
    let mut sim = Simulation::new(hydraulink::compile(&reference).ok()?).ok()?;
    let labels = sim.output_labels();
    let names: Vec<String> = spec
        .hydraulics
        .cylinders
        .iter()
        .map(|c| c.name.clone())
        .collect();
    let col = |what: &str, name: &str| labels.iter().position(|l| *l == format!("{name}.{what}"));
    let cols: Vec<(usize, usize)> = names
        .iter()
        .map(|n| Some((col("length", n)?, col("velocity", n)?)))
        .collect::<Option<_>>()?;
    let mut row = vec![0.0; labels.len()];
    let (mut t, mut s, mut sd) = (
        Vec::new(),
        vec![Vec::new(); names.len()],
        vec![Vec::new(); names.len()],
    );
    let n = (sim.model().duration_s() / sim.model().step_s()).round() as u64;
    for k in 0..=n {
        if k > 0 {
            sim.step().ok()?;
        }
        sim.output_row(&mut row);
        t.push(sim.time_s());
        for (c, (ls, lv)) in cols.iter().enumerate() {
            s[c].push(row[*ls]);
            sd[c].push(row[*lv]);
        }
    }
    let recorded: Vec<Recorded> = names
        .iter()
        .enumerate()
        .map(|(c, name)| Recorded {
            cylinder: name,
            length_m: &s[c],
            velocity_m_s: Some(&sd[c]),
        })
        .collect();
    Some(replay_spec(spec, &t, &recorded))
}

fn steps(c: &mut Criterion) {
    for formulation in Formulation::ALL {
        if !formulation.is_available() {
            continue;
        }
        let mut g = c.benchmark_group(formulation.name());
        g.sample_size(10);
        for (name, bench, step) in MODELS {
            // a formulation that cannot run a model through is left out: one probe run decides
            let Some(m) = load(name, formulation, step) else {
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
        let m = hydraulink::compile(&spec).expect("chain compiles");
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
        let m = hydraulink::compile(&spec).expect("chain compiles");
        let sim = Simulation::new(m.clone()).expect("chain initializes");
        let st = sim.state().clone();
        let mut ev = hydraulink::mechanics::assembly::Evaluator::<f64>::new(&m);
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                ev.evaluate(&m, &st.z, &st.zd, &st.p, &st.spool, false);
                ev.f.first().copied()
            })
        });
    }
    g.finish();
    // one penalty residual as the step evaluates it (docs/theory 3.11.1: from 6 links on, M′ z̈
    // by the tree passes, without the dense M′), at the predictor of the first step
    let mut g = c.benchmark_group("chain_residual");
    for n in [2usize, 4, 8, 16, 32, 64] {
        let spec: ModelSpec = toml::from_str(&chain::chain_toml(n, 1.0)).expect("chain parses");
        let m = hydraulink::compile(&spec).expect("chain compiles");
        let sim = Simulation::new(m.clone()).expect("chain initializes");
        let mut ws = hydraulink::Workspace::new(&m);
        hydraulink::formulations::penalty::prepare(&m, sim.state(), &mut ws);
        ws.buffers.ev.x.copy_from_slice(&ws.buffers.x);
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                let b = &mut ws.buffers;
                hydraulink::formulations::penalty::residual(
                    &m,
                    &mut b.ev,
                    &b.hist,
                    &b.lambda,
                    &b.spool_new,
                );
                ws.ev.f.first().copied()
            })
        });
    }
    g.finish();
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
        let m = hydraulink::compile(&spec).expect("compiles");
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

criterion_group!(benches, steps, chain_scaling, friction);
criterion_main!(benches);
