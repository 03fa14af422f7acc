//! Pacing, overruns under both policies, snapshots, pause, reset and refused commands, all
//! under the manual clock (Δt = 1 ms for the boom).

use crate::core_of;
use hydraulink_rt::{Clock, Command, EngineError, EngineOptions, Outcome, Policy};
use std::time::Duration;

const MS: f64 = 1e-3;
const US: f64 = 1e-6;

/// Steps that take 0.3 ms of a 1 ms step: every step is released on its tick, never late; the
/// engine sleeps the remaining 0.7 ms; the statistics are exact.
#[test]
fn steps_faster_than_real_time_run_on_schedule() {
    let (mut core, _ch) = core_of("boom", EngineOptions::default(), 300);
    core.run_steps(1000);
    let s = core.statistics();
    assert_eq!(s.steps, 1000);
    assert_eq!(s.overruns, 0);
    assert_eq!(s.slip_s, 0.0);
    assert_eq!(s.max_wake_delay_s, 0.0, "the manual clock wakes on time");
    assert!((s.lag_s + 0.7 * MS).abs() < 1e-12, "lag {}", s.lag_s);
    assert!((s.max_lag_s + 0.7 * MS).abs() < 1e-12);
    // the last step is released at 999 ms and ends 0.3 ms later
    assert_eq!(core.clock().now(), Duration::from_micros(999_300));
    assert_eq!(core.clock().slept(), Duration::from_micros(999 * 700));
    assert!((s.simulated_s - 1.0).abs() < 1e-12);
    assert!((s.real_time_factor - 1.0 / 0.9993).abs() < 1e-9);
    assert!((s.compute_mean_s - 300.0 * US).abs() < 1e-12);
    assert_eq!(s.compute_max_s, 300.0 * US);
    // percentiles are bin edges within 10 % above the time
    for p in [s.compute_p50_s, s.compute_p99_s, s.compute_p999_s] {
        assert!((300.0 * US..=330.0 * US).contains(&p), "{p}");
    }
    assert!((core.simulation().time_s() - 1.0).abs() < 1e-9);
}

/// The artificially slow step: step 100 takes 5.5 ms, every other 0.2 ms.
fn slow_step_costs(k: u64) -> Duration {
    Duration::from_micros(if k == 100 { 5_500 } else { 200 })
}

/// Catch-up: step 100 ends 4.5 ms late; the late steps after it run back to back, each
/// gaining 0.8 ms, so steps 100–105 overrun (lags 4.5, 3.7, 2.9, 2.1, 1.3, 0.5 ms) and step
/// 106 is on schedule again. No step is skipped and the schedule never moves.
#[test]
fn catch_up_runs_late_steps_back_to_back_until_on_schedule() {
    let (mut core, _ch) = core_of_costs(Policy::CatchUp);
    core.run_steps(1000);
    let s = core.statistics();
    assert_eq!(s.steps, 1000, "no step is dropped");
    assert_eq!(s.overruns, 6);
    assert!((s.max_lag_s - 4.5 * MS).abs() < 1e-12, "{}", s.max_lag_s);
    assert_eq!(s.compute_max_step, 100);
    assert!((s.compute_max_s - 5.5 * MS).abs() < 1e-12);
    assert_eq!(s.slip_s, 0.0);
    assert!(
        (s.lag_s + 0.8 * MS).abs() < 1e-12,
        "back on schedule: {}",
        s.lag_s
    );
    // on schedule again: the last step ends 0.2 ms after its release at 999 ms
    assert_eq!(core.clock().now(), Duration::from_micros(999_200));
    assert!((core.simulation().time_s() - 1.0).abs() < 1e-9);
}

/// Slow-down: step 100's 4.5 ms overrun shifts the schedule; the steps after it are on the
/// new schedule, simulated time stays 4.5 ms behind wall time (the slip).
#[test]
fn slow_down_shifts_the_schedule_and_reports_the_slip() {
    let (mut core, _ch) = core_of_costs(Policy::SlowDown);
    core.run_steps(1000);
    let s = core.statistics();
    assert_eq!(s.steps, 1000);
    assert_eq!(s.overruns, 1);
    assert!((s.slip_s - 4.5 * MS).abs() < 1e-12, "{}", s.slip_s);
    assert!((s.max_lag_s - 4.5 * MS).abs() < 1e-12);
    assert!((s.lag_s + 0.8 * MS).abs() < 1e-12);
    assert_eq!(core.clock().now(), Duration::from_micros(999_200 + 4_500));
    assert!((s.real_time_factor - 1.0 / 1.0037).abs() < 1e-9);
}

fn core_of_costs(
    policy: Policy,
) -> (
    hydraulink_rt::Core<hydraulink_rt::ManualClock>,
    hydraulink_rt::Channels,
) {
    hydraulink_rt::Core::new(
        crate::sim_of("boom"),
        EngineOptions {
            policy,
            ..EngineOptions::default()
        },
        hydraulink_rt::ManualClock::with_costs(slow_step_costs),
    )
    .expect("valid options")
}

/// A consumer that never reads: the snapshot channel fills, later snapshots are dropped and
/// counted, and every physics step still runs.
#[test]
fn a_slow_consumer_loses_snapshots_never_steps() {
    let options = EngineOptions {
        display_hz: 1000.0, // one per step of 1 ms
        snapshot_capacity: 2,
        outputs: Some(vec!["z1.q".into(), "U.value".into()]),
        ..EngineOptions::default()
    };
    let (mut core, ch) = core_of("boom", options, 100);
    core.run_steps(100);
    let s = core.statistics();
    assert_eq!(
        (s.steps, s.snapshots_sent, s.snapshots_dropped),
        (100, 2, 98)
    );
    assert_eq!(ch.names.outputs, ["z1.q", "U.value"]);
    assert_eq!(ch.names.inputs, ["U"]);
    assert_eq!(
        ch.names.bodies.len(),
        core.simulation().model().bodies.len()
    );
    let first = ch.snapshots.try_recv().expect("first snapshot");
    assert_eq!(first.step, 1);
    assert_eq!(first.outputs.len(), 2);
    assert_eq!(first.poses.len(), ch.names.bodies.len());
    assert!((first.time_s - 1e-3).abs() < 1e-15);
    // once the consumer reads and returns buffers, snapshots flow again
    ch.recycle.send(first).expect("recycle");
    let _ = ch.snapshots.try_recv().expect("second snapshot");
    core.run_steps(1);
    let last = ch.snapshots.try_recv().expect("a fresh snapshot");
    assert_eq!(last.step, 101);
    assert_eq!(last.outputs[0], core.simulation().state().z[0]);
}

/// At 60 Hz and Δt = 1 ms, one snapshot every 17 steps.
#[test]
fn snapshots_come_at_the_display_rate() {
    let (mut core, ch) = core_of("boom", EngineOptions::default(), 100);
    core.run_steps(170);
    let steps: Vec<u64> = ch.snapshots.try_iter().map(|s| s.step).collect();
    assert_eq!(steps, [17, 34, 51, 68]); // capacity 4; the rest dropped
    assert_eq!(core.statistics().snapshots_dropped, 6);
}

/// Pause holds the physics until Resume; Reset restores the initial state bit for bit (the
/// engine's step count goes on); Stop ends the run.
#[test]
fn pause_reset_and_stop() {
    let (mut core, ch) = core_of("boom", EngineOptions::default(), 100);
    let z0 = core.simulation().state().z.clone();
    let p0 = core.simulation().state().p.clone();
    ch.commands
        .send(Command::SetInput {
            input: "U".into(),
            value: 10.0,
        })
        .expect("send");
    core.run_steps(300);
    assert_ne!(core.simulation().state().z, z0, "the boom moved");
    ch.commands.send(Command::Pause).expect("send");
    ch.commands.send(Command::Reset).expect("send");
    ch.commands.send(Command::Resume).expect("send");
    core.run_steps(1);
    assert_eq!(core.steps(), 301);
    assert_eq!(
        core.simulation().step_index(),
        1,
        "the model's clock restarted"
    );
    // one step from the initial state, with U back on its signal (0 at t = 0)
    let (mut fresh, _f) = core_of("boom", EngineOptions::default(), 100);
    fresh.run_steps(1);
    assert_eq!(core.simulation().state().z, fresh.simulation().state().z);
    assert_eq!(core.simulation().state().p, fresh.simulation().state().p);
    assert_ne!(
        fresh.simulation().state().p,
        p0,
        "a step changes the pressures"
    );
    ch.commands.send(Command::Stop).expect("send");
    assert!(core.run_steps(10), "stopped");
    assert_eq!(core.steps(), 301);
    let report = core.finish();
    assert!(matches!(report.outcome, Outcome::Stopped));
    assert_eq!(report.statistics.commands_applied, 5);
}

/// Unknown names and non-finite values are refused and counted; the run goes on.
#[test]
fn bad_commands_are_refused_and_counted() {
    let (mut core, ch) = core_of("boom", EngineOptions::default(), 100);
    for c in [
        Command::SetInput {
            input: "V".into(),
            value: 1.0,
        },
        Command::SetInput {
            input: "U".into(),
            value: f64::NAN,
        },
        Command::Axis {
            axis: "left_x".into(),
            value: 0.5,
        },
        Command::Key {
            key: "w".into(),
            pressed: true,
        },
    ] {
        ch.commands.send(c).expect("send");
    }
    core.run_steps(10);
    let report = core.finish();
    assert_eq!(report.statistics.commands_rejected, 4);
    assert_eq!(report.statistics.steps, 10);
    assert!(report
        .last_rejection
        .expect("a reason")
        .contains("key \"w\""));
}

/// Setup errors name the option field.
#[test]
fn bad_options_name_their_field() {
    let cases: Vec<(EngineOptions, &str)> = vec![
        (
            EngineOptions {
                outputs: Some(vec!["z1.q".into(), "nope".into()]),
                ..EngineOptions::default()
            },
            "outputs[1]",
        ),
        (
            EngineOptions {
                display_hz: 0.0,
                ..EngineOptions::default()
            },
            "display_hz",
        ),
        (
            EngineOptions {
                duration_s: Some(-1.0),
                ..EngineOptions::default()
            },
            "duration_s",
        ),
        (
            EngineOptions {
                snapshot_capacity: 0,
                ..EngineOptions::default()
            },
            "snapshot_capacity",
        ),
    ];
    for (options, field) in cases {
        let e = hydraulink_rt::Core::new(
            crate::sim_of("boom"),
            options,
            hydraulink_rt::ManualClock::new(Duration::ZERO),
        )
        .expect_err("refused");
        assert!(e.to_string().starts_with(field), "{e}");
        assert!(matches!(
            e,
            EngineError::Option { .. } | EngineError::UnknownName { .. }
        ));
    }
}

/// While paused, a viewer still gets snapshots of the held state (at the display period of wall
/// time), and a run with a duration ends with a snapshot of its last step even between display
/// steps. (The pause lasts 150 ms of wall time; at a period of 17 ms at least two snapshots come,
/// a loose bound that a loaded machine meets.)
#[test]
fn snapshots_come_while_paused_and_at_the_end() {
    let options = EngineOptions {
        snapshot_capacity: 64,
        duration_s: Some(0.02),
        ..EngineOptions::default()
    };
    let (mut core, ch) = core_of("boom", options, 100);
    core.run_steps(17);
    ch.commands.send(Command::Pause).expect("send");
    let tx = ch.commands.clone();
    let resume = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(150));
        tx.send(Command::Resume).expect("send");
    });
    core.run_steps(1);
    resume.join().expect("resume thread");
    let steps: Vec<u64> = ch.snapshots.try_iter().map(|s| s.step).collect();
    let held = steps.iter().filter(|&&k| k == 17).count();
    assert!(
        held >= 3,
        "one at step 17 and at least two while paused: {steps:?}"
    );
    assert!(core.run_steps(10), "the duration ends the run");
    assert_eq!(core.steps(), 20);
    let last: Vec<u64> = ch.snapshots.try_iter().map(|s| s.step).collect();
    assert_eq!(last, [20], "the last step, not a display step (17, 34, …)");
}
