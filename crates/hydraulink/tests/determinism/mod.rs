//! Two runs of the same model are bit-identical.

use crate::common::*;
use hydraulink::Simulation;

#[test]
fn two_runs_are_bit_identical() {
    let mut spec = spec_of("fourbar");
    spec.solver.duration_s = 3.0;
    let a = run(hydraulink::model::compile(&spec).unwrap());
    let b = run(hydraulink::model::compile(&spec).unwrap());
    assert_eq!(a.rows.len(), b.rows.len());
    for (ra, rb) in a.rows.iter().zip(b.rows.iter()) {
        for (x, y) in ra.iter().zip(rb.iter()) {
            assert_eq!(x.to_bits(), y.to_bits());
        }
    }
}

/// Runs `spec` for 1200 steps, restarts a second simulation from a clone of the state, and
/// returns both after 300 more steps each.
fn restarted_pair(spec: &hydraulink::ModelSpec) -> (Simulation, Simulation) {
    let model = hydraulink::model::compile(spec).unwrap();
    let mut sim = Simulation::new(model).unwrap();
    for _ in 0..1200 {
        sim.step().unwrap();
    }
    let saved = sim.state().clone();
    let mut sim2 = Simulation::new(sim.model().clone()).unwrap();
    sim2.set_state(saved.clone());
    sim.set_state(saved);
    for _ in 0..300 {
        sim.step().unwrap();
        sim2.step().unwrap();
    }
    (sim, sim2)
}

#[test]
fn a_cloned_state_restarts_identically() {
    let mut spec = spec_of("quickreturn");
    spec.solver.duration_s = 2.0;
    let (sim, sim2) = restarted_pair(&spec);
    assert_eq!(sim.state().z, sim2.state().z);
    assert_eq!(sim.state().p, sim2.state().p);
}

#[test]
fn a_cloned_state_with_friction_states_restarts_identically() {
    // the modified LuGre bristle and film states (and the predictor's ṡ) are part of the State
    let mut spec = spec_of("fourbar_friction");
    spec.hydraulics.cylinders[0].friction = toml::from_str("type = \"modified_lugre\"").unwrap();
    let (sim, sim2) = restarted_pair(&spec);
    assert_eq!(sim.state(), sim2.state());
}
