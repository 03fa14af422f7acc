//! Criterion benchmarks of the linearization (paper 001, issue 5): the 3-D four-bar about its
//! equilibrium by the exact method (001 §3, the paper's 5 ms in MATLAB), by the finite-difference
//! counterpart (001 §4.5, the paper's 16 ms), and the eigen-analysis.
//!
//! `cargo bench -p hydraulink --bench linearize` — the figures go to BENCHMARKS.md. The model
//! and its equilibrium are computed outside the timing.

use criterion::{criterion_group, criterion_main, Criterion};
use hydraulink::linearize::eigen::{modes, EigenOptions};
use hydraulink::linearize::equilibrium::{equilibrium, EquilibriumOptions};
use hydraulink::linearize::exact::{linearize, linearize_with, ExactOptions};
use hydraulink::linearize::finite_difference::{self, StepKind};
use hydraulink::linearize::{all_inputs, all_outputs};
use hydraulink::mechanics::assembly::Evaluator;
use hydraulink::ModelSpec;

fn linearization(c: &mut Criterion) {
    let path = format!("{}/../../models/fourbar3d.toml", env!("CARGO_MANIFEST_DIR"));
    let spec: ModelSpec =
        toml::from_str(&std::fs::read_to_string(path).expect("model file")).expect("parses");
    let m = hydraulink::compile(&spec).expect("compiles");
    let eq = equilibrium(&m, &EquilibriumOptions::default()).expect("equilibrium");
    let opts = ExactOptions {
        independent: eq.held.clone(),
        inputs: all_inputs(&m),
        outputs: all_outputs(&m),
        ..Default::default()
    };
    let mut g = c.benchmark_group("linearize");
    g.bench_function("fourbar3d_exact_equilibrium", |b| {
        b.iter(|| linearize(&m, &eq.point, &opts).expect("linearizes"))
    });
    let mut ev = Evaluator::new(&m);
    g.bench_function("fourbar3d_exact_equilibrium_reused_buffers", |b| {
        b.iter(|| linearize_with(&m, &eq.point, &opts, &mut ev).expect("linearizes"))
    });
    g.bench_function("fourbar3d_finite_difference_1e-5", |b| {
        b.iter(|| {
            finite_difference::linearize(
                &m,
                &eq.point,
                1e-5,
                StepKind::Absolute,
                &opts.inputs,
                &opts.outputs,
            )
            .expect("linearizes")
        })
    });
    let lin = linearize(&m, &eq.point, &opts).expect("linearizes");
    g.bench_function("fourbar3d_eigen_6x6", |b| {
        b.iter(|| modes(&lin.ss, &EigenOptions::default()).expect("eigen"))
    });
    g.bench_function("fourbar3d_equilibrium", |b| {
        b.iter(|| equilibrium(&m, &EquilibriumOptions::default()).expect("equilibrium"))
    });
    g.finish();
}

criterion_group!(benches, linearization);
criterion_main!(benches);
