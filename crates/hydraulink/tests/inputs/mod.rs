//! Inputs set from outside (issue 10 item 6): `Simulation::set_input` / `release_input` /
//! `input` on the four-bar (models/fourbar.toml, input `U`), against runs whose model signal
//! makes the same change.

use crate::common::*;
use hydraulink::elements::inputs::Signal;
use hydraulink::model::spec::Formulation;
use hydraulink::{InputError, Model, ModelSpec, Simulation};

/// The four-bar under `formulation`, compiled.
fn fourbar(formulation: Formulation) -> Model {
    let mut spec: ModelSpec = spec_of("fourbar");
    spec.solver.formulation = formulation;
    hydraulink::compile(&spec).expect("the four-bar compiles")
}

/// `model` with the signal of `U` replaced by a piecewise-constant one.
fn with_u_signal(mut model: Model, times: Vec<f64>, values: Vec<f64>) -> Model {
    let u = model.input_names.iter().position(|n| n == "U").unwrap();
    model.inputs[u] = Signal::PiecewiseConstant { times, values };
    model
}

/// Steps `sim` `n` times, recording every output row.
fn record(sim: &mut Simulation, n: u64, rows: &mut Vec<Vec<f64>>) {
    let mut row = vec![0.0; sim.n_outputs()];
    for _ in 0..n {
        sim.step().unwrap_or_else(|e| panic!("step failed: {e}"));
        sim.output_row(&mut row);
        rows.push(row.clone());
    }
}

fn assert_bit_identical(a: &[Vec<f64>], b: &[Vec<f64>], what: &str) {
    assert_eq!(a.len(), b.len());
    for (k, (ra, rb)) in a.iter().zip(b).enumerate() {
        for (c, (x, y)) in ra.iter().zip(rb).enumerate() {
            assert_eq!(
                x.to_bits(),
                y.to_bits(),
                "{what}: row {k}, column {c}: {x} against {y}"
            );
        }
    }
}

/// The step index whose start time is `t` [s] (t_k = k Δt).
fn steps_to(model: &Model, t: f64) -> u64 {
    (t / model.step_s()).round() as u64
}

#[test]
fn set_input_matches_a_signal_switching_at_the_same_step() {
    // fourbar.toml: U = 0 on [0, 1), 10 on [1, 2.5), 0 on [2.5, 5) … Set U = −3 at t = 1.2 s
    // (valve open, mechanism moving) and compare with the signal 0, 10, −3 switching at 1 and 1.2
    // s; piecewise constant with the switch on a step boundary, so bit-identical.
    for formulation in [
        Formulation::Penalty,
        Formulation::DoubleStep,
        Formulation::GlobalAli3p,
        Formulation::GlobalI1al,
        Formulation::Multirate,
    ] {
        let model = fourbar(formulation);
        let n_set = steps_to(&model, 1.2);
        let t_set = n_set as f64 * model.step_s();
        let signal_model =
            with_u_signal(model.clone(), vec![0.0, 1.0, t_set], vec![0.0, 10.0, -3.0]);

        let mut a = Simulation::new(model.clone()).unwrap();
        let mut rows_a = Vec::new();
        record(&mut a, n_set, &mut rows_a);
        assert_eq!(a.input("U").unwrap(), 10.0);
        a.set_input("U", -3.0).unwrap();
        assert_eq!(a.input("U").unwrap(), -3.0);
        record(&mut a, 300, &mut rows_a);

        let mut b = Simulation::new(signal_model).unwrap();
        let mut rows_b = Vec::new();
        record(&mut b, n_set + 300, &mut rows_b);
        assert_bit_identical(&rows_a, &rows_b, formulation.name());

        // and the spool does change from the next step on: the unchanged model agrees up to
        // t_set and differs after it
        let mut c = Simulation::new(model).unwrap();
        let mut rows_c = Vec::new();
        record(&mut c, n_set + 1, &mut rows_c);
        let spool = a.output_labels().iter().position(|l| l == "DCV.spool");
        let spool = spool.expect("the four-bar's valve is DCV");
        let k = n_set as usize - 1; // row of step n_set (rows start after the first step)
        assert_eq!(rows_a[k][spool].to_bits(), rows_c[k][spool].to_bits());
        assert!(
            rows_a[k + 1][spool] < rows_c[k + 1][spool],
            "{}: U = −3 closes the spool from step {n_set} on",
            formulation.name()
        );
    }
}

#[test]
fn release_input_returns_to_the_signal() {
    // U = −3 on [1.2, 2.0), then released: the signal's 10 until 2.5 s, and 0 after
    let model = fourbar(Formulation::Penalty);
    let (n_set, n_release, n_end) = (
        steps_to(&model, 1.2),
        steps_to(&model, 2.0),
        steps_to(&model, 3.0),
    );
    let dt = model.step_s();
    let signal_model = with_u_signal(
        model.clone(),
        vec![0.0, 1.0, n_set as f64 * dt, n_release as f64 * dt, 2.5],
        vec![0.0, 10.0, -3.0, 10.0, 0.0],
    );

    let mut a = Simulation::new(model).unwrap();
    let mut rows_a = Vec::new();
    record(&mut a, n_set, &mut rows_a);
    a.set_input("U", -3.0).unwrap();
    record(&mut a, n_release - n_set, &mut rows_a);
    assert_eq!(a.input("U").unwrap(), -3.0);
    a.release_input("U").unwrap();
    assert_eq!(
        a.input("U").unwrap(),
        10.0,
        "the signal's value at t = 2.0 s"
    );
    record(&mut a, n_end - n_release, &mut rows_a);
    assert_eq!(a.input("U").unwrap(), 0.0);
    // releasing an input that follows its signal changes nothing
    a.release_input("U").unwrap();

    let mut b = Simulation::new(signal_model).unwrap();
    let mut rows_b = Vec::new();
    record(&mut b, n_end, &mut rows_b);
    assert_bit_identical(&rows_a, &rows_b, "set at 1.2 s, released at 2.0 s");
}

#[test]
fn unknown_input_names_are_errors_listing_the_valid_ones() {
    let mut sim = Simulation::new(fourbar(Formulation::Penalty)).unwrap();
    assert_eq!(sim.input_names(), ["U".to_string()]);
    let unknown = InputError::Unknown {
        name: "u".into(),
        valid: vec!["U".into()],
    };
    assert_eq!(sim.set_input("u", 1.0), Err(unknown.clone()));
    assert_eq!(sim.release_input("u"), Err(unknown.clone()));
    assert_eq!(sim.input("u"), Err(unknown.clone()));
    assert_eq!(
        unknown.to_string(),
        "no input named 'u': the model's inputs are 'U'"
    );
    let before = sim.state().clone();
    for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = sim.set_input("U", value).unwrap_err();
        assert!(matches!(e, InputError::NonFinite { ref name, .. } if name == "U"));
        assert!(e.to_string().contains("not finite"), "{e}");
    }
    assert_eq!(
        sim.state(),
        &before,
        "a rejected value leaves the state unchanged"
    );
}

#[test]
fn a_cloned_state_with_an_override_replays_identically() {
    // the override is part of the State: a fresh simulation restored from a clone continues
    // exactly as the original restored from the same clone (both restored, so that neither
    // reuses a tangent factored before the restart)
    let model = fourbar(Formulation::Penalty);
    let mut a = Simulation::new(model.clone()).unwrap();
    let mut rows = Vec::new();
    record(&mut a, 1100, &mut rows);
    a.set_input("U", 4.0).unwrap();
    record(&mut a, 100, &mut rows);
    let saved = a.state().clone();

    let mut b = Simulation::new(model).unwrap();
    assert_eq!(b.input("U").unwrap(), 0.0, "fresh: the signal at t = 0");
    b.set_state(saved.clone());
    a.set_state(saved);
    assert_eq!(
        b.input("U").unwrap(),
        4.0,
        "the override came with the state"
    );
    let (mut rows_a, mut rows_b) = (Vec::new(), Vec::new());
    // past t = 2.5 s, where the signal would have switched U to 0
    record(&mut a, 1500, &mut rows_a);
    record(&mut b, 1500, &mut rows_b);
    assert_bit_identical(&rows_a, &rows_b, "restarted with U = 4 set");
    assert_eq!(a.state(), b.state());
    assert_eq!(b.input("U").unwrap(), 4.0);
}

#[test]
fn a_guidance_reference_set_from_code_holds_the_cylinder() {
    // kinematic guidance (004 §4) replaying the four-bar's recorded cylinder length (input
    // `cylinder.s_ref`): setting the reference holds s at that value, ṡ_ref = s̈_ref = 0 from
    // the central differences of the held value
    let spec = spec_of("fourbar");
    let mut recorder = Simulation::new(hydraulink::compile(&spec).unwrap()).unwrap();
    let s = recorder
        .output_labels()
        .iter()
        .position(|l| l == "cylinder.length")
        .unwrap();
    let mut rows = Vec::new();
    let mut row = vec![0.0; recorder.n_outputs()];
    recorder.output_row(&mut row);
    rows.push(row.clone());
    record(&mut recorder, 2000, &mut rows);
    let times: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    let lengths: Vec<f64> = rows.iter().map(|r| r[s]).collect();
    let replay = hydraulink::formulations::z_only::kinematic_guidance::replay_spec(
        &spec,
        &times,
        &[
            hydraulink::formulations::z_only::kinematic_guidance::Recorded {
                cylinder: "cylinder",
                length_m: &lengths,
                velocity_m_s: None,
            },
        ],
    );
    let mut sim = Simulation::new(hydraulink::compile(&replay).unwrap()).unwrap();
    // the replay model's own columns (its inputs add `.value` columns of their own)
    let s = sim
        .output_labels()
        .iter()
        .position(|l| l == "cylinder.length")
        .unwrap();
    let mut rows = Vec::new();
    record(&mut sim, 1200, &mut rows); // moving: the valve opened at 1 s
    let held = sim.input("cylinder.s_ref").unwrap() + 1e-3;
    sim.set_input("cylinder.s_ref", held).unwrap();
    record(&mut sim, 300, &mut rows);
    let tol = 10.0 * replay.solver.tolerance_position;
    for r in &rows[1200..] {
        assert!(
            (r[s] - held).abs() < tol,
            "t = {}: s = {} against the held {held}",
            r[0],
            r[s]
        );
    }
    // released: back on the recorded length
    sim.release_input("cylinder.s_ref").unwrap();
    let mut rows = Vec::new();
    record(&mut sim, 1, &mut rows);
    let k = 1501; // row of t = 1.501 s in the recording
    assert!((rows[0][s] - lengths[k]).abs() < tol);
}

#[test]
fn input_values_are_output_columns() {
    // issue 11 item 4: `<input>.value` is the value the step ending at the row used at its
    // end (the signal's, or a value set from outside). fourbar.toml: U = 0 on [0, 1), 10 on
    // [1, 2.5) (piecewise constant, interval form: the step ending at 1 s still used 0); set
    // U = −3 after the row at t = 1.2 s.
    let model = fourbar(Formulation::Penalty);
    let mut sim = Simulation::new(model.clone()).expect("init");
    let labels = sim.output_labels();
    let (col_u, col_t) = (
        labels.iter().position(|l| l == "U.value").expect("U.value"),
        labels.iter().position(|l| l == "time").expect("time"),
    );
    let mut row = vec![0.0; sim.n_outputs()];
    sim.output_row(&mut row);
    assert_eq!(row[col_u], 0.0, "U(0)");
    let mut rows = Vec::new();
    record(&mut sim, steps_to(&model, 1.2), &mut rows);
    sim.set_input("U", -3.0).expect("U exists");
    record(&mut sim, steps_to(&model, 0.1), &mut rows);
    for r in &rows {
        let t = r[col_t];
        let expected = if t < 1.0 + 1e-9 {
            0.0
        } else if t < 1.2 + 1e-9 {
            10.0
        } else {
            -3.0
        };
        assert_eq!(r[col_u], expected, "U at t = {t}");
    }
}
