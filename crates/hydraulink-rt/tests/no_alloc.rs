//! The engine's step loop allocates nothing once warm (STYLE convention 4): commands applied,
//! bindings ramping an input (one logged change per step, within the log's reserved 4096 entries), paced steps, snapshots at 60 Hz
//! returned through the recycle channel. Own test binary: it installs a counting allocator (the
//! library's, shared by path).

#[path = "../../hydraulink/tests/support/alloc_counter.rs"]
mod alloc_counter;

use alloc_counter::allocations;
use hydraulink::Simulation;
use hydraulink_rt::{BindingSource, Command, Core, EngineOptions, InputBinding, ManualClock};
use std::time::Duration;

#[test]
fn the_paced_loop_allocates_nothing_per_step() {
    let path = format!("{}/../../models/excavator.toml", env!("CARGO_MANIFEST_DIR"));
    let spec = hydraulink_io::load_model(std::path::Path::new(&path)).expect("loads");
    let sim = Simulation::new(hydraulink::compile(&spec).expect("compiles")).expect("init");
    let options = EngineOptions {
        bindings: vec![
            InputBinding {
                input: "U_boom".into(),
                source: BindingSource::Axis("right_y".into()),
                range: [-10.0, 10.0],
                deadband: 0.1,
                rate_limit_per_s: Some(20.0),
            },
            InputBinding {
                input: "U_swing".into(),
                source: BindingSource::Keys {
                    positive: "d".into(),
                    negative: "a".into(),
                },
                range: [-10.0, 10.0],
                deadband: 0.0,
                rate_limit_per_s: Some(20.0),
            },
        ],
        ..EngineOptions::default()
    };
    let (mut core, ch) =
        Core::new(sim, options, ManualClock::new(Duration::from_micros(100))).expect("valid");
    let drain = |ch: &hydraulink_rt::Channels| {
        while let Ok(s) = ch.snapshots.try_recv() {
            ch.recycle
                .try_send(s)
                .expect("the recycle channel has room");
        }
    };
    // warm up: the first steps, and the two snapshot buffers a stretch of 34 steps needs
    // (each snapshot owns three vectors; a buffer missing from the pool is allocated)
    ch.commands
        .send(Command::Axis {
            axis: "right_y".into(),
            value: -0.5,
        })
        .expect("send");
    for _ in 0..5 {
        core.run_steps(34);
        drain(&ch);
    }
    // the commands of the counted stretch, built before counting
    let mut commands: Vec<Command> = (0..10)
        .flat_map(|k| {
            [
                Command::Axis {
                    axis: "right_y".into(),
                    value: if k % 2 == 0 { 0.8 } else { -0.8 },
                },
                Command::Key {
                    key: "d".into(),
                    pressed: k % 2 == 0,
                },
                Command::SetInput {
                    input: "U_arm".into(),
                    value: 0.25 * k as f64,
                },
            ]
        })
        .collect();
    commands.reverse();
    let events_before = core.statistics().input_events;
    let before = allocations();
    while let Some(c) = commands.pop() {
        ch.commands.send(c).expect("send");
        core.run_steps(34);
        drain(&ch);
    }
    let during = allocations() - before;
    let s = core.statistics();
    assert_eq!(during, 0, "allocations in {} steps", 30 * 34);
    assert!(
        s.input_events - events_before > 500,
        "the ramps were logged"
    );
    assert!(s.snapshots_sent >= 60 && s.snapshots_dropped == 0);
}
