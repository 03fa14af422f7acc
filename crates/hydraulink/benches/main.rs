//! Criterion benchmarks, named `<model>_<horizon>_<step>` (STYLE convention 9).
//!
//! `cargo bench -p hydraulink --bench main` — the figures go to BENCHMARKS.md.
//! Setup (model compile, consistent initialization, workspace) is outside the timing; each
//! sample runs the whole 10 s horizon from the same initial state.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use hydraulink::{model, ModelSpec, Simulation};

fn load(name: &str) -> hydraulink::Model {
    let path = format!("{}/../../models/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let spec: ModelSpec = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    model::compile(&spec).unwrap()
}

fn horizon(c: &mut Criterion, name: &str, bench: &str) {
    let m = load(name);
    let n = (m.duration_s() / m.step_s()).round() as u64;
    let mut g = c.benchmark_group("step");
    g.sample_size(20);
    g.bench_function(bench, |b| {
        b.iter_batched(
            || Simulation::new(m.clone()).unwrap(),
            |mut sim| {
                for _ in 0..n {
                    sim.step().unwrap();
                }
                sim
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn steps(c: &mut Criterion) {
    horizon(c, "fourbar", "fourbar_10s_1ms");
    horizon(c, "quickreturn", "quickreturn_10s_1ms");
    horizon(c, "fourbar_rahikainen", "fourbar_rahikainen_7s_1ms");
    horizon(c, "rod_naya", "rod_naya_10s_10ms");
}

criterion_group!(benches, steps);
criterion_main!(benches);
