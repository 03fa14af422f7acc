//! The whole `hydraulink run` against the simulation it runs (issue 11, "Whole process"): the
//! four-bar of 000 §5.1, 10 s at Δt = 1 ms, measured side by side in one benchmark run.
//!
//! ```text
//! whole_run/simulation_fourbar_10s_1ms       in process: compile, initialize, 10 000 steps
//! whole_run/hydraulink_run_fourbar_10s_1ms   the binary: the same, plus process start,
//!                                            results.csv, results.columns.json, summary.json
//!                                            and plots/*.svg
//! whole_run/recorder_fourbar_10s_1ms         in process: the simulation and the RunRecorder
//!                                            (the writing cost without process start)
//! ```
//! Target: whole run ≤ 2 × simulation. Run with `cargo bench -p hydraulink-cli --bench whole_run`.
//!
//! With `HYDRAULINK_BASELINE_BIN=/path/to/hydraulink` set (another build, e.g. main's), a fourth
//! benchmark `whole_run/baseline_run_fourbar_10s_1ms` times that binary in the same run,
//! between the others, so that both binaries see the same machine load.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use hydraulink::Simulation;
use hydraulink_io::output::{describe_columns, RunInfo, RunRecorder, RunStop};

/// Simulated duration [s] and step [s] of the benchmark run.
const DURATION_S: &str = "10";
const STEP_S: &str = "0.001";

fn fourbar() -> hydraulink::Model {
    let mut spec =
        hydraulink_io::parse_model(hydraulink_io::DEFAULT_MODEL, "fourbar.toml").expect("parses");
    spec.solver.step_s = STEP_S.parse().unwrap();
    spec.solver.duration_s = DURATION_S.parse().unwrap();
    hydraulink::compile(&spec).expect("compiles")
}

fn out_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("hydraulink-bench-{}-{name}", std::process::id()))
}

fn whole_run(c: &mut Criterion) {
    let mut group = c.benchmark_group("whole_run");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));

    group.bench_function("simulation_fourbar_10s_1ms", |b| {
        b.iter(|| {
            let mut sim = Simulation::new(fourbar()).expect("initializes");
            let n = (sim.model().duration_s() / sim.model().step_s()).round() as u64;
            for _ in 0..n {
                sim.step().expect("converges");
            }
            sim.time_s()
        })
    });

    let dir = out_dir("recorder");
    group.bench_function("recorder_fourbar_10s_1ms", |b| {
        b.iter(|| {
            let mut sim = Simulation::new(fourbar()).expect("initializes");
            let labels = sim.output_labels();
            let columns = describe_columns(sim.model(), &labels);
            let info = RunInfo {
                model: "fourbar".into(),
                formulation: "penalty".into(),
                step_s: sim.model().step_s(),
                duration_s: sim.model().duration_s(),
                output_interval_s: sim.model().step_s(),
                volume_names: sim.model().volume_names().to_vec(),
            };
            let mut row = vec![0.0; labels.len()];
            sim.output_row(&mut row);
            let mut rec = RunRecorder::create(&dir, info, columns, &row).expect("writes");
            for _ in 0..rec.n_steps() {
                let report = sim.step().expect("converges");
                sim.output_row(&mut row);
                rec.record_step(&row, report.iterations, report.cavitation_onsets)
                    .expect("writes");
            }
            rec.finish(RunStop::Completed, 1.0).expect("writes")
        })
    });

    let binary = |name: &str, program: &str| {
        let dir = out_dir(name);
        let dir_arg = dir.to_str().expect("a UTF-8 temp dir").to_string();
        let program = program.to_string();
        move || {
            let status = Command::new(&program)
                .args([
                    "run",
                    "--duration",
                    DURATION_S,
                    "--step",
                    STEP_S,
                    "--out",
                    &dir_arg,
                ])
                .env("CI", "true")
                .output()
                .expect("the binary runs")
                .status;
            assert!(status.success());
        }
    };
    if let Some(baseline) = std::env::var_os("HYDRAULINK_BASELINE_BIN") {
        let run = binary("baseline", &baseline.to_string_lossy());
        group.bench_function("baseline_run_fourbar_10s_1ms", |b| b.iter(&run));
    }
    let run = binary("binary", env!("CARGO_BIN_EXE_hydraulink"));
    group.bench_function("hydraulink_run_fourbar_10s_1ms", |b| b.iter(&run));
    group.finish();
}

criterion_group!(benches, whole_run);
criterion_main!(benches);
