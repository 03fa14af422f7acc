//! Element loads driven by an input react to `Simulation::set_input` (issue 10): the joint force
//! `drive` of the loads pendulum (tests/support/loads.rs) set from code gives the same run, bit
//! for bit, as the model whose signal makes the same change at the same step.

use super::loads::loads_toml;
use crate::common::*;
use hydraulink::elements::inputs::Signal;
use hydraulink::model::spec::Formulation;
use hydraulink::{Model, Simulation};

/// The loads pendulum under `formulation`, its input `F` replaced by a piecewise-constant
/// signal.
fn pendulum(formulation: Formulation, times: Vec<f64>, values: Vec<f64>) -> Model {
    let mut spec = spec_from(&loads_toml(false));
    spec.solver.formulation = formulation;
    let mut model = hydraulink::compile(&spec).expect("the loads pendulum compiles");
    let f = model.input_names.iter().position(|n| n == "F").unwrap();
    model.inputs[f] = Signal::PiecewiseConstant { times, values };
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

fn column(sim: &Simulation, label: &str) -> usize {
    let labels = sim.output_labels();
    labels
        .iter()
        .position(|l| l == label)
        .unwrap_or_else(|| panic!("no column {label}"))
}

#[test]
fn a_joint_force_set_from_code_matches_the_same_signal_in_the_model() {
    // F = 0 from the model; set to 2.5 at t = 0.4 s from code, against the signal 0, 2.5
    // switching at 0.4 s (on a step boundary, so bit-identical). Then released: back to 0.
    for formulation in [
        Formulation::Penalty,
        Formulation::DoubleStep,
        Formulation::Multirate,
        Formulation::KinematicGuidance,
    ] {
        let name = formulation.name();
        let model = pendulum(formulation, vec![0.0], vec![0.0]);
        let dt = model.step_s();
        let (n_set, n_release, n_end) = (400u64, 900u64, 1300u64);
        let (t_set, t_release) = (n_set as f64 * dt, n_release as f64 * dt);

        let mut a = Simulation::new(model.clone()).unwrap();
        let mut rows_a = Vec::new();
        record(&mut a, n_set, &mut rows_a);
        a.set_input("F", 2.5).unwrap();
        record(&mut a, n_release - n_set, &mut rows_a);
        a.release_input("F").unwrap();
        record(&mut a, n_end - n_release, &mut rows_a);

        let signal_model = pendulum(
            formulation,
            vec![0.0, t_set, t_release],
            vec![0.0, 2.5, 0.0],
        );
        let mut b = Simulation::new(signal_model).unwrap();
        let mut rows_b = Vec::new();
        record(&mut b, n_end, &mut rows_b);
        assert_eq!(rows_a.len(), rows_b.len());
        for (k, (ra, rb)) in rows_a.iter().zip(&rows_b).enumerate() {
            for (c, (x, y)) in ra.iter().zip(rb).enumerate() {
                assert_eq!(
                    x.to_bits(),
                    y.to_bits(),
                    "{name}: row {k}, column {c}: {x} against {y}"
                );
            }
        }

        // the load follows the value set, and the motion reacts: the run without the change
        // agrees up to t_set and differs after it
        let load = column(&a, "drive.load");
        let q = column(&a, "z1.q");
        let k = n_set as usize - 1; // row of step n_set (rows start after the first step)
        assert_eq!(rows_a[k][load], 0.0, "{name}");
        assert_eq!(rows_a[k + 1][load], 2.5, "{name}");
        assert_eq!(rows_a[n_release as usize][load], 0.0, "{name}: released");
        let mut c = Simulation::new(model).unwrap();
        let mut rows_c = Vec::new();
        record(&mut c, n_set + 50, &mut rows_c);
        assert_eq!(rows_a[k][q].to_bits(), rows_c[k][q].to_bits(), "{name}");
        let dq = rows_a[k + 50][q] - rows_c[k + 50][q];
        assert!(
            dq > 0.0,
            "{name}: +2.5 N m turns the arm further, Δq = {dq}"
        );
    }
}
