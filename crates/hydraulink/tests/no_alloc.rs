//! The step loop allocates nothing after the first step (STYLE convention 4), for every
//! formulation that runs the shipped models. Own test binary: it installs a counting allocator.

#[path = "support/alloc_counter.rs"]
mod alloc_counter;

use alloc_counter::allocations;
use hydraulink::model::spec::Formulation;

fn check(name: &str, formulation: Formulation) {
    let path = format!("{}/../../models/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let mut spec: hydraulink::ModelSpec =
        toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    spec.solver.formulation = formulation;
    let model = hydraulink::model::compile(&spec).unwrap();
    let mut sim = hydraulink::Simulation::new(model).unwrap();
    let mut row = vec![0.0; sim.n_outputs()];
    // the first step may touch lazily initialised state (the double-step partition)
    sim.step().unwrap();
    let before = allocations();
    // 0.001 … 3 s: rest, valve opening (tangent refreshes), motion, valve closing
    for _ in 0..3000 {
        sim.step().unwrap();
        sim.output_row(&mut row);
    }
    let n = allocations() - before;
    assert_eq!(
        n,
        0,
        "{name} ({}): {n} allocations in 3000 steps",
        formulation.name()
    );
}

#[test]
fn penalty_step_loop_allocates_nothing() {
    check("fourbar", Formulation::Penalty);
    check("quickreturn", Formulation::Penalty);
    // LuGre seal: friction states as Newton unknowns (003 Pub II)
    check("fourbar_friction", Formulation::Penalty);
}

#[test]
fn double_step_loop_allocates_nothing() {
    check("fourbar", Formulation::DoubleStep);
    check("quickreturn", Formulation::DoubleStep);
}

#[test]
fn global_step_loops_allocate_nothing() {
    // the first step converts the initial relative state into natural coordinates (allocates once)
    for f in [Formulation::GlobalAli3p, Formulation::GlobalI1al] {
        check("fourbar", f);
        check("quickreturn", f);
    }
}

#[test]
fn penalty_step_loop_with_nonholonomic_rows_allocates_nothing() {
    // knife edge (1 row) and rolling disc (2 rows): B, Ψ, Ḃż in the residual and the projections
    check("sled_knife_edge", Formulation::Penalty);
    check("rolling_disc", Formulation::Penalty);
}

#[path = "support/chain.rs"]
mod chain;

#[test]
fn penalty_step_loop_on_a_chain_allocates_nothing() {
    // the tree passes for M′ z̈ and the Schur-reduced tangent (docs/theory 3.11), with tangent
    // refreshes inside the loop (32 links: two in 1 s)
    let spec: hydraulink::ModelSpec = toml::from_str(&chain::chain_toml(32, 1.0)).unwrap();
    let model = hydraulink::model::compile(&spec).unwrap();
    let mut sim = hydraulink::Simulation::new(model).unwrap();
    assert!(sim.workspace().schur.enabled);
    assert!(!sim.workspace().ev.dynamics.form_mass);
    let mut row = vec![0.0; sim.n_outputs()];
    sim.step().unwrap();
    let before = allocations();
    for _ in 0..999 {
        sim.step().unwrap();
        sim.output_row(&mut row);
    }
    let n = allocations() - before;
    assert!(
        sim.workspace().counters.tangents >= 2,
        "no refresh inside the loop"
    );
    assert_eq!(n, 0, "chain32 (penalty): {n} allocations in 999 steps");
}

#[test]
fn step_loop_with_inputs_set_from_code_allocates_nothing() {
    // `Simulation::set_input` / `release_input` between steps, and steps with a value held
    let path = format!("{}/../../models/fourbar.toml", env!("CARGO_MANIFEST_DIR"));
    let spec: hydraulink::ModelSpec =
        toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let model = hydraulink::model::compile(&spec).unwrap();
    let mut sim = hydraulink::Simulation::new(model).unwrap();
    sim.step().unwrap();
    let before = allocations();
    for k in 0..2000 {
        match k {
            500 => sim.set_input("U", 6.0).unwrap(),
            1000 => sim.set_input("U", -6.0).unwrap(),
            1500 => sim.release_input("U").unwrap(),
            _ => {}
        }
        sim.step().unwrap();
    }
    assert_eq!(allocations() - before, 0);
}
