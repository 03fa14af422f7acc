//! Engine tests, mirroring the crate: pacing and overruns under a manual clock, commands and
//! snapshots, bindings, record and replay on the excavator, and one smoke run on the wall clock.
//! No test measures time: the manual clock makes every figure exact.

mod engine;

use hydraulink::Simulation;
use hydraulink_rt::{Channels, Core, EngineOptions, ManualClock};
use std::time::Duration;

/// A shipped model, initialized.
pub fn sim_of(name: &str) -> Simulation {
    let path = format!("{}/../../models/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let spec = hydraulink_io::load_model(std::path::Path::new(&path)).expect("shipped model loads");
    let model = hydraulink::compile(&spec).expect("shipped model compiles");
    Simulation::new(model).expect("shipped model initializes")
}

/// A core on a shipped model with a manual clock whose steps each cost `cost_us` [µs].
pub fn core_of(name: &str, options: EngineOptions, cost_us: u64) -> (Core<ManualClock>, Channels) {
    Core::new(
        sim_of(name),
        options,
        ManualClock::new(Duration::from_micros(cost_us)),
    )
    .expect("valid options")
}

/// A wall-clock run of 50 steps on its own thread: only that the steps ran and the figures are
/// finite (no timing is asserted).
#[test]
fn a_paced_run_on_the_system_clock_reports_finite_statistics() {
    use hydraulink_rt::{Engine, Outcome, SystemClock};
    let options = EngineOptions {
        duration_s: Some(0.05),
        ..EngineOptions::default()
    };
    let engine = Engine::spawn(sim_of("boom"), options, SystemClock::new()).expect("starts");
    let report = engine.join();
    assert!(
        matches!(report.outcome, Outcome::Finished),
        "{:?}",
        report.outcome
    );
    let s = report.statistics;
    assert_eq!(s.steps, 50);
    for (name, v) in [
        ("wall", s.wall_s),
        ("rtf", s.real_time_factor),
        ("mean", s.compute_mean_s),
        ("max", s.compute_max_s),
        ("p99", s.compute_p99_s),
        ("lag", s.lag_s),
    ] {
        assert!(v.is_finite(), "{name} = {v}");
    }
    assert!(s.compute_max_s >= s.compute_mean_s && s.compute_mean_s > 0.0);
    // the wall clock raises the engine thread's priority as far as the system allows; which
    // level that is depends on the machine's rights, so only that a level was reported
    eprintln!("engine thread priority: {}", s.scheduling.name());
}

/// The priority is raised only on the wall clock and only when asked: a manual clock never
/// sleeps, so a real-time thread there would starve its neighbours.
#[test]
fn the_priority_stays_normal_on_a_manual_clock_or_when_not_asked() {
    use hydraulink_rt::{Engine, Scheduling, SystemClock};
    let options = EngineOptions {
        duration_s: Some(0.01),
        ..EngineOptions::default()
    };
    let manual = Engine::spawn(
        sim_of("boom"),
        options.clone(),
        ManualClock::new(Duration::from_micros(10)),
    )
    .expect("starts")
    .join();
    assert_eq!(manual.statistics.scheduling, Scheduling::Normal);
    let not_asked = EngineOptions {
        raise_priority: false,
        ..options
    };
    let wall = Engine::spawn(sim_of("boom"), not_asked, SystemClock::new())
        .expect("starts")
        .join();
    assert_eq!(wall.statistics.scheduling, Scheduling::Normal);
}

/// The engine on its thread takes commands in order: a set input before a stop is applied and
/// recorded, and the stop ends the run (the manual clock, so the thread never waits).
#[test]
fn the_engine_thread_applies_commands_in_order_and_stops() {
    use hydraulink_rt::{Action, Command, Engine, Outcome};
    let engine = Engine::spawn(
        sim_of("boom"),
        EngineOptions::default(),
        ManualClock::new(Duration::from_micros(10)),
    )
    .expect("starts");
    engine
        .channels
        .commands
        .send(Command::SetInput {
            input: "U".into(),
            value: 2.5,
        })
        .expect("send");
    let report = engine.stop();
    assert!(
        matches!(report.outcome, Outcome::Stopped),
        "{:?}",
        report.outcome
    );
    assert_eq!(report.statistics.commands_applied, 2);
    assert_eq!(
        report.recording.events[0].action,
        Action::Set {
            input: "U".into(),
            value: 2.5
        }
    );
}
