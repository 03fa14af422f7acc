//! `hydraulink realtime MODEL`: runs a model paced to the wall clock on the real-time engine
//! (`hydraulink-rt`), headless: no viewer, the operator input from a recording (`--replay`) or
//! none. Prints the statistics at the end and writes them as JSON into `--out`; `--record`
//! saves the run's input changes for a later replay.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use hydraulink::Simulation;
use hydraulink_rt::{Engine, EngineOptions, Outcome, Policy, Recording, Statistics, SystemClock};

use crate::{init_failure, load_compiled, Failure};

/// The overrun policy on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum PolicyArg {
    /// Keep the schedule: late steps run back to back until on time again.
    CatchUp,
    /// Shift the schedule: simulated time falls behind wall time.
    SlowDown,
}

/// The options of `hydraulink realtime`.
#[derive(Debug, Args)]
pub(crate) struct RealtimeArgs {
    #[arg(
        value_name = "MODEL",
        help = "Model file (TOML); default: the built-in four-bar"
    )]
    model: Option<PathBuf>,

    #[arg(
        long,
        value_name = "S",
        help = "Simulated time to run [s]; default: the model's duration_s"
    )]
    duration: Option<f64>,

    #[arg(
        long,
        value_enum,
        default_value = "catch-up",
        help = "What to do when a step overruns"
    )]
    policy: PolicyArg,

    #[arg(
        long,
        value_name = "FILE",
        help = "Save every input change with its step (CSV)"
    )]
    record: Option<PathBuf>,

    #[arg(
        long,
        value_name = "FILE",
        help = "Replay the input changes of a recording"
    )]
    replay: Option<PathBuf>,

    #[arg(
        long,
        value_name = "DIR",
        help = "Write the statistics to DIR/realtime.json"
    )]
    out: Option<PathBuf>,

    #[arg(
        long = "set",
        value_name = "PATH=VALUE",
        help = "Override a model parameter (repeatable), e.g. V3.p0_pa=3e6"
    )]
    set: Vec<String>,

    #[arg(
        long,
        help = "Leave out the worksite the model names (its `scene` key: obstacles and their \
                contacts), which a real-time run includes by default"
    )]
    no_scene: bool,
}

/// `hydraulink realtime`: exit code 2 for a bad model, option or recording, 1 when a step fails
/// (the statistics of the steps before it are still printed and written), 0 otherwise.
pub(crate) fn realtime_command(args: &RealtimeArgs) -> Result<(), Failure> {
    let scene = if args.no_scene {
        hydraulink_io::SceneChoice::None
    } else {
        hydraulink_io::SceneChoice::Model
    };
    let (model, text, file) = load_compiled(args.model.as_ref(), &args.set, &scene)?;
    if model.solver.adaptive.is_some() {
        return Err(Failure::invalid_input(format!(
            "{file}: real time steps at a fixed step; this model asks for adaptive steps \
             (solver.step_control = \"adaptive\"): use --set solver.step_control=\"fixed\""
        )));
    }
    let duration_s = args.duration.unwrap_or(model.duration_s());
    if !(duration_s.is_finite() && duration_s >= 0.0) {
        return Err(Failure::invalid_input(format!(
            "--duration: must be a finite time >= 0 s, got {duration_s}"
        )));
    }
    let replay = match &args.replay {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure::invalid_input(format!("{}: {e}", path.display())))?;
            Some(
                Recording::parse(&text)
                    .map_err(|e| Failure::invalid_input(format!("{}: {e}", path.display())))?,
            )
        }
    };
    let sim = Simulation::new(model).map_err(|e| init_failure(&e, &text, &file))?;
    let options = EngineOptions {
        policy: match args.policy {
            PolicyArg::CatchUp => Policy::CatchUp,
            PolicyArg::SlowDown => Policy::SlowDown,
        },
        duration_s: Some(duration_s),
        replay,
        ..EngineOptions::default()
    };
    let engine = Engine::spawn(sim, options, SystemClock::new())
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    // the consumer: read the snapshots and hand their buffers back, never holding the engine
    while !engine.is_finished() {
        match engine
            .channels
            .snapshots
            .recv_timeout(std::time::Duration::from_millis(50))
        {
            Ok(s) => {
                let _ = engine.channels.recycle.try_send(s);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let report = engine.join();
    print!("{}", summary(&report.statistics, &file));
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::run_failed(format!("{}: {e}", dir.display())))?;
        let path = dir.join("realtime.json");
        let json = serde_json::to_string_pretty(&report.statistics)
            .map_err(|e| Failure::run_failed(e.to_string()))?;
        std::fs::write(&path, json + "\n")
            .map_err(|e| Failure::run_failed(format!("{}: {e}", path.display())))?;
    }
    if let Some(path) = &args.record {
        let text = report
            .recording
            .to_text()
            .map_err(|e| Failure::run_failed(e.to_string()))?;
        std::fs::write(path, text)
            .map_err(|e| Failure::run_failed(format!("{}: {e}", path.display())))?;
    }
    match report.outcome {
        Outcome::Failed(e) => Err(Failure::run_failed(e.to_string())),
        Outcome::Finished | Outcome::Stopped => Ok(()),
    }
}

/// The statistics as printed at the end of a run.
fn summary(s: &Statistics, file: &str) -> String {
    let us = |x: f64| x * 1e6;
    format!(
        "real-time run of {file} ({} policy)\n  \
         steps            {} of {:.6} s = {:.3} s simulated in {:.3} s wall (real-time factor {:.3})\n  \
         compute per step mean {:.1} µs, p50 {:.1} µs, p99 {:.1} µs, p99.9 {:.1} µs, max {:.1} µs (step {})\n  \
         overruns         {} ({:.3} % of steps), lag max {:.1} µs, last {:.1} µs, slip {:.3} ms\n  \
         wake-up delay    max {:.1} µs (the operating system's, after a sleep); thread priority {}\n  \
         snapshots        {} sent, {} dropped; input changes {}\n",
        s.policy.name(),
        s.steps,
        s.step_s,
        s.simulated_s,
        s.wall_s,
        s.real_time_factor,
        us(s.compute_mean_s),
        us(s.compute_p50_s),
        us(s.compute_p99_s),
        us(s.compute_p999_s),
        us(s.compute_max_s),
        s.compute_max_step,
        s.overruns,
        if s.steps > 0 {
            100.0 * s.overruns as f64 / s.steps as f64
        } else {
            0.0
        },
        us(s.max_lag_s),
        us(s.lag_s),
        s.slip_s * 1e3,
        us(s.max_wake_delay_s),
        s.priority(),
        s.snapshots_sent,
        s.snapshots_dropped,
        s.input_events,
    )
}
