//! Record → replay on the excavator: a scripted operator (direct sets, a rate-limited axis, a
//! key pair, a release, a reset) drives a run; its recording, written to text and read back,
//! replays the same trajectory bit for bit, checked by a hash of the full state after every
//! step.

use crate::sim_of;
use hydraulink::Simulation;
use hydraulink_rt::{
    BindingSource, Command, Core, EngineOptions, InputBinding, ManualClock, Recording,
};
use std::time::Duration;

/// FNV-1a over the bits of every number of the state that the next step reads or a result
/// shows: t, z, ż, z̈, p, ṗ, p̈, valve positions, λ, friction and internal states, the input
/// values and overrides, actuator work, and the whole output row.
fn state_hash(sim: &Simulation, row: &mut [f64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |x: f64| {
        for b in x.to_bits().to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    let st = sim.state();
    eat(st.t_s);
    eat(st.step as f64);
    for v in [
        &st.z,
        &st.zd,
        &st.zdd,
        &st.p,
        &st.pd,
        &st.pdd,
        &st.spool,
        &st.lambda,
        &st.friction,
        &st.internal,
        &st.actuator_work_j,
    ] {
        v.iter().for_each(|&x| eat(x));
    }
    for i in 0..st.inputs.overrides.len() {
        eat(st.inputs.overrides[i].unwrap_or(f64::NAN));
    }
    sim.output_row(row);
    row.iter().for_each(|&x| eat(x));
    h
}

const STEPS: u64 = 2500;

fn bindings() -> Vec<InputBinding> {
    vec![
        InputBinding {
            input: "U_boom".into(),
            source: BindingSource::Axis("right_y".into()),
            range: [-10.0, 10.0],
            deadband: 0.1,
            rate_limit_per_s: Some(50.0),
        },
        InputBinding {
            input: "U_swing".into(),
            source: BindingSource::Keys {
                positive: "d".into(),
                negative: "a".into(),
            },
            range: [-10.0, 10.0],
            deadband: 0.0,
            rate_limit_per_s: Some(40.0),
        },
    ]
}

/// The operator's commands by engine step.
fn script(step: u64) -> Vec<Command> {
    let set = |input: &str, value: f64| Command::SetInput {
        input: input.into(),
        value,
    };
    let key = |key: &str, pressed: bool| Command::Key {
        key: key.into(),
        pressed,
    };
    let axis = |value: f64| Command::Axis {
        axis: "right_y".into(),
        value,
    };
    match step {
        0 => vec![axis(-0.6)],
        150 => vec![set("U_arm", 8.0), set("U_bucket", 6.5)],
        400 => vec![axis(0.9), key("d", true)],
        700 => vec![
            key("d", false),
            Command::ReleaseInput {
                input: "U_arm".into(),
            },
        ],
        900 => vec![Command::Reset],
        950 => vec![axis(0.7), set("U_bucket", -7.25)],
        1500 => vec![key("a", true)],
        1900 => vec![axis(0.0), key("a", false)],
        _ => vec![],
    }
}

/// Runs `STEPS` steps, sending the script's commands before their steps; the hashes after
/// every step and the report.
fn run(options: EngineOptions, operator: bool) -> (Vec<u64>, hydraulink_rt::Report) {
    let (mut core, ch) = Core::new(
        sim_of("excavator"),
        options,
        ManualClock::new(Duration::from_micros(20)),
    )
    .expect("valid options");
    let mut row = vec![0.0; core.simulation().n_outputs()];
    let mut hashes = Vec::with_capacity(STEPS as usize);
    for k in 0..STEPS {
        if operator {
            for c in script(k) {
                ch.commands.send(c).expect("send");
            }
        }
        core.run_steps(1);
        hashes.push(state_hash(core.simulation(), &mut row));
    }
    (hashes, core.finish())
}

#[test]
fn a_replayed_recording_reproduces_the_excavator_bit_for_bit() {
    let options = EngineOptions {
        bindings: bindings(),
        ..EngineOptions::default()
    };
    let (recorded, report) = run(options, true);
    assert_eq!(
        report.statistics.commands_rejected, 0,
        "{:?}",
        report.last_rejection
    );
    let rec = &report.recording;
    assert_eq!(rec.model, "excavator");
    // the ramps log one change per step while they move
    assert!(rec.events.len() > 100, "{} events", rec.events.len());
    assert!(rec
        .events
        .iter()
        .any(|e| e.action == hydraulink_rt::Action::Reset));
    // the file round trip is exact
    let text = rec.to_text().expect("writes");
    let read = Recording::parse(&text).expect("reads back");
    assert_eq!(&read, rec);
    // the operator changed the trajectory: without input the hashes differ
    let (quiet, _) = run(EngineOptions::default(), false);
    assert_ne!(quiet[STEPS as usize - 1], recorded[STEPS as usize - 1]);
    // replay: same hashes after every step, same recording again
    let (replayed, again) = run(
        EngineOptions {
            replay: Some(read),
            ..EngineOptions::default()
        },
        false,
    );
    let first_difference = recorded.iter().zip(&replayed).position(|(a, b)| a != b);
    assert_eq!(first_difference, None, "the replay departs at this step");
    assert_eq!(&again.recording, rec);
}

/// A replay refuses operator input (it would break the reproduction) and a recording of
/// another model or step.
#[test]
fn a_replay_refuses_operator_input_and_foreign_recordings() {
    let rec = Recording {
        model: "excavator".into(),
        step_s: 1e-3,
        events: vec![],
    };
    let (mut core, ch) = Core::new(
        sim_of("excavator"),
        EngineOptions {
            replay: Some(rec.clone()),
            ..EngineOptions::default()
        },
        ManualClock::new(Duration::ZERO),
    )
    .expect("valid");
    ch.commands
        .send(Command::SetInput {
            input: "U_boom".into(),
            value: 1.0,
        })
        .expect("send");
    core.run_steps(2);
    assert_eq!(core.statistics().commands_rejected, 1);
    for (bad, field) in [
        (
            Recording {
                step_s: 2e-3,
                ..rec.clone()
            },
            "replay.step_s",
        ),
        (
            Recording {
                model: "boom".into(),
                ..rec.clone()
            },
            "replay.model",
        ),
        (
            Recording {
                events: vec![hydraulink_rt::Event {
                    step: 3,
                    action: hydraulink_rt::Action::Release { input: "U".into() },
                }],
                ..rec.clone()
            },
            "replay.events[0].input",
        ),
    ] {
        let e = Core::new(
            sim_of("excavator"),
            EngineOptions {
                replay: Some(bad),
                ..EngineOptions::default()
            },
            ManualClock::new(Duration::ZERO),
        )
        .expect_err("refused")
        .to_string();
        assert!(e.starts_with(field), "{e}");
    }
}

/// Malformed recording files name the line.
#[test]
fn a_malformed_recording_names_its_line() {
    for (text, want) in [
        (
            "step,event,input,value\n1,set,U\n",
            "line 2: expected 4 fields",
        ),
        ("step,event,input,value\nx,set,U,1\n", "line 2: step"),
        (
            "step,event,input,value\n5,set,U,1\n4,set,U,2\n",
            "line 3: step 4 is before",
        ),
        (
            "step,event,input,value\n1,jump,U,1\n",
            "line 2: unknown event",
        ),
        (
            "step,event,input,value\n1,set,,1\n",
            "line 2: a `set` needs an input",
        ),
        (
            "step,event,input,value\n1,set,U,inf\n",
            "line 2: value inf is not finite",
        ),
        ("# only a comment\n", "no header"),
    ] {
        let e = Recording::parse(text).expect_err("malformed").to_string();
        assert!(e.contains(want), "{text:?}: {e}");
    }
}
