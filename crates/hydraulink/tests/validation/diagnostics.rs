//! Failure diagnostics and warnings (issue 2: "a run that diverges stops with a message naming the
//! time, the step and the equation"; "cavitation warning").

use crate::common::*;
use hydraulink::{Simulation, StepError};

#[test]
fn a_diverging_run_names_time_step_and_equation_and_keeps_its_state() {
    // The four-bar at Δt = 100 ms (1/10 of the oil column's period) cannot follow the valve
    // opening at t = 1 s.
    let mut spec = spec_of("fourbar");
    spec.solver.step_s = 0.1;
    let model = hydraulink::compile(&spec).unwrap();
    let mut sim = Simulation::new(model).unwrap();
    let mut err = None;
    for _ in 0..200 {
        match sim.step() {
            Ok(_) => {}
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let err = err.expect("the run must fail");
    let StepError::NewtonFailed {
        time_s,
        step,
        equation,
        ..
    } = &err
    else {
        panic!("{err}")
    };
    assert!(*time_s >= 1.0 && *time_s < 2.5, "failed at {time_s}");
    assert_eq!(
        *step,
        sim.state().step,
        "the state stays at the last converged step"
    );
    assert!(!equation.is_empty());
    let msg = err.to_string();
    assert!(
        msg.contains("t = ") && msg.contains("step") && msg.contains(equation.as_str()),
        "{msg}"
    );
    assert!(sim.state().p.iter().all(|p| p.is_finite()));
}

#[test]
fn cavitation_is_reported_when_a_volume_goes_below_zero() {
    // The four-bar's oil column rings after the valve closes at 8 s (11 Hz, note 000-B.3); the
    // piston-side pressure then dips below 0 Pa absolute for a few ms.
    let model = model_of("fourbar");
    let names = model.volume_names().to_vec();
    let mut sim = Simulation::new(model).unwrap();
    let mut onsets = Vec::new();
    for _ in 0..10_000 {
        let r = sim.step().unwrap();
        for (v, name) in names.iter().enumerate() {
            if r.cavitation_onsets & (1 << v) != 0 {
                onsets.push((name.clone(), sim.time_s()));
                assert!(sim.state().p[v] < 0.0);
            }
        }
    }
    assert!(
        !onsets.is_empty(),
        "expected a cavitation warning after 8 s"
    );
    for (name, t) in &onsets {
        assert!(*t > 8.0 && *t < 8.2, "{name} at {t}");
    }
}

#[test]
fn a_cylinder_that_leaves_its_stroke_stops_the_run() {
    // Lowering the four-bar without stopping retracts the cylinder fully (|s| → l = 1.1 m).
    let mut spec = spec_of("fourbar");
    spec.inputs[0].signal = hydraulink::model::spec::SignalSpec::Step {
        time_s: 1.0,
        before: 0.0,
        after: -10.0,
    };
    let mut sim = Simulation::new(hydraulink::compile(&spec).unwrap()).unwrap();
    let err = loop {
        if let Err(e) = sim.step() {
            break e;
        }
        assert!(sim.time_s() < 10.0, "the cylinder should have bottomed out");
    };
    let StepError::OutOfStroke {
        cylinder,
        chamber_m,
        ..
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(cylinder, "cylinder");
    assert!(*chamber_m < 0.0);
    assert!(err.to_string().contains("left its stroke"));
}
