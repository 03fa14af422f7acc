//! The step loop allocates nothing after the first step (STYLE convention 4), for every
//! formulation (penalty, double-step, global-ali3p, global-i1al, multirate, kinematic-guidance)
//! and every element (`[[elements]]`: the boom's end stop, check valve, relief valve and
//! accumulator; the loads model's spring–damper, point forces, torque and input-driven joint
//! force; the pump_relief model's fixed pump, hose and a pressure-compensated pump with its
//! swash-plate lag; a hydraulic motor and a counterbalance valve; the contact of a brick on the
//! ground). Own test binary: it installs
//! a counting allocator.

#[path = "support/alloc_counter.rs"]
mod alloc_counter;

#[path = "common.rs"]
#[allow(dead_code)]
mod common;

#[path = "support/loads.rs"]
mod loads;

#[path = "support/contact_drop.rs"]
mod contact_drop;

use alloc_counter::allocations;
use hydraulink::formulations::z_only::kinematic_guidance::{replay_spec, Recorded};
use hydraulink::model::spec::{Formulation, HydraulicIntegrator};

fn check(name: &str, formulation: Formulation) {
    let mut spec = common::spec_of(name);
    spec.solver.formulation = formulation;
    check_spec(name, &spec);
}

/// Steps `spec` once, then 3000 times (3 s at 1 ms) counting the allocations.
fn check_spec(name: &str, spec: &hydraulink::ModelSpec) {
    let formulation = spec.solver.formulation;
    let model = hydraulink::compile(spec)
        .unwrap_or_else(|e| panic!("{name} ({}): {e}", formulation.name()));
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
    let model = hydraulink::compile(&spec).unwrap();
    let mut sim = hydraulink::Simulation::new(model).unwrap();
    assert!(
        sim.workspace()
            .penalty()
            .expect("a penalty workspace")
            .schur
            .enabled
    );
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
    let model = hydraulink::compile(&spec).unwrap();
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

/// `spec` replayed under kinematic guidance from its own penalty run (004 §4): every cylinder's
/// recorded length and velocity as the guidance inputs.
fn guided(spec: &hydraulink::ModelSpec) -> hydraulink::ModelSpec {
    let r = common::run(hydraulink::compile(spec).unwrap());
    let times = r.col("time");
    let cols: Vec<(String, Vec<f64>, Vec<f64>)> = spec
        .hydraulics
        .cylinders
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                r.col(&format!("{}.length", c.name)),
                r.col(&format!("{}.velocity", c.name)),
            )
        })
        .collect();
    let recorded: Vec<Recorded> = cols
        .iter()
        .map(|(n, s, v)| Recorded {
            cylinder: n,
            length_m: s,
            velocity_m_s: Some(v),
        })
        .collect();
    replay_spec(spec, &times, &recorded)
}

#[test]
fn multirate_and_guidance_step_loops_allocate_nothing() {
    for integrator in [
        HydraulicIntegrator::Trapezoidal,
        HydraulicIntegrator::ForwardEuler,
    ] {
        let mut spec = common::spec_of("fourbar");
        spec.solver.formulation = Formulation::Multirate;
        spec.solver.hydraulic_integrator = integrator;
        spec.solver.hydraulic_substeps = 20;
        check_spec("fourbar", &spec);
    }
    let mut spec = common::spec_of("fourbar");
    spec.solver.duration_s = 3.5;
    check_spec("fourbar", &guided(&spec));
}

#[test]
fn boom_step_loop_allocates_nothing_under_every_formulation() {
    // end stop, check valve, relief valve, accumulator: 0.001 … 3 s covers the lift, the impact
    // on the extended stop and the hold against the relief valve
    for f in [
        Formulation::Penalty,
        Formulation::DoubleStep,
        Formulation::GlobalAli3p,
        Formulation::GlobalI1al,
        Formulation::Multirate,
    ] {
        check("boom", f);
    }
    let mut spec = common::spec_of("boom");
    spec.solver.duration_s = 3.5;
    check_spec("boom", &guided(&spec));
    // the relief valve's poppet lag: an internal state in x (penalty only)
    let mut spec = common::spec_of("boom");
    for e in spec.elements.iter_mut() {
        if let hydraulink::elements::component::ComponentSpec::ReliefValve(r) = e {
            r.poppet_time_constant_s = Some(5e-3);
        }
    }
    check_spec("boom with poppet lag", &spec);
}

#[test]
fn pump_elements_step_loop_allocates_nothing_under_every_formulation() {
    // fixed pump (shaft speed run up from an input), hose in its laminar–turbulent blend
    // (the inverse law's Newton iteration), relief valve: models/pump_relief.toml
    for f in [
        Formulation::Penalty,
        Formulation::DoubleStep,
        Formulation::GlobalAli3p,
        Formulation::GlobalI1al,
        Formulation::Multirate,
    ] {
        check("pump_relief", f);
    }
    // the pressure-compensated pump with its swash-plate lag: an internal state (penalty only)
    let mut spec = common::spec_of("pump_relief");
    for e in spec.elements.iter_mut() {
        if let hydraulink::elements::component::ComponentSpec::FixedPump(p) = e {
            let pc = hydraulink::elements::hydraulics::pc_pump::PcPumpSpec {
                name: p.name.clone(),
                inlet: p.inlet.clone(),
                outlet: p.outlet.clone(),
                speed_input: p.speed_input.clone(),
                displacement_m3_per_rev: p.displacement_m3_per_rev,
                compensator_pressure_pa: 1.2e7,
                regulation_range_pa: 5e5,
                volumetric_efficiency: p.volumetric_efficiency,
                rated_pressure_pa: p.rated_pressure_pa,
                rated_speed_rad_s: p.rated_speed_rad_s,
                mechanical_efficiency: p.mechanical_efficiency,
                swash_plate_time_constant_s: Some(0.02),
                // the power limiter and the cut-off too (issue 24): the regulators' smooth
                // minimum allocates nothing either
                max_power_w: Some(8e3),
                load_sense: None,
                pressure_cutoff_pa: Some(1.4e7),
            };
            *e = hydraulink::elements::component::ComponentSpec::PcPump(pc);
        }
    }
    check_spec("pump_relief with a pressure-compensated pump", &spec);
}

#[test]
fn load_elements_step_loop_allocates_nothing_under_every_formulation() {
    // spring–damper, point force (global and body axes), torque, joint force driven by an input
    for f in [
        Formulation::Penalty,
        Formulation::DoubleStep,
        Formulation::Multirate,
        Formulation::KinematicGuidance,
    ] {
        let mut spec = common::spec_from(&loads::loads_toml(false));
        spec.solver.formulation = f;
        check_spec("loads", &spec);
    }
    // the natural-coordinate formulations carry the spring–damper and the global point force
    for f in [Formulation::GlobalAli3p, Formulation::GlobalI1al] {
        let mut spec = common::spec_from(&loads::loads_toml(true));
        spec.solver.formulation = f;
        check_spec("loads (natural)", &spec);
    }
}

#[test]
fn motor_and_counterbalance_step_loops_allocate_nothing() {
    // a hydraulic motor (node ports and a joint port) spinning a turntable from a throttled
    // supply, with leakage and the efficiency blend
    let turntable = common::spec_from(
        r#"
name = "turntable"
[[bodies]]
name = "table"
mass_kg = 200.0
com = [0.0, 0.0, 0.0]
inertia = [50.0, 50.0, 50.0, 0.0, 0.0, 0.0]
[[joints]]
name = "swing"
type = "revolute"
parent = "ground"
child = "table"
axis = [0.0, 1.0, 0.0]
friction = { type = "viscous", coefficient_n_s_m = 573.0 }
[[hydraulics.volumes]]
name = "VA"
hose_volume_m3 = 1.0e-3
p0_pa = 1.0e5
[[hydraulics.pumps]]
name = "P"
pressure_pa = 1.0e7
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
[[hydraulics.throttles]]
name = "feed"
from = "P"
to = "VA"
discharge_coefficient = 0.7
area_m2 = 6.8e-6
[[elements]]
type = "hydraulic_motor"
name = "motor"
port_a = "VA"
port_b = "T"
joint = "swing"
displacement_m3_per_rev = 1.0e-4
gear_ratio = 10.0
volumetric_efficiency = 0.95
rated_pressure_pa = 2.0e7
rated_speed_rad_s = 157.07963267948966
hydromechanical_efficiency = 0.9
[solver]
duration_s = 4.0
"#,
    );
    check_spec("turntable on a motor", &turntable);
    // the boom with a counterbalance valve in its piston-side line, lifting (check open) and
    // holding (valve closed) within the 3 s
    let mut spec = common::spec_of("boom");
    let mut vv = spec.hydraulics.volumes[1].clone();
    vv.name = "VV".into();
    vv.p0_pa = Some(1e6);
    vv.hose_volume_m3 = 1e-3;
    spec.hydraulics.volumes.push(vv);
    spec.hydraulics.valves[0].port_a = "VV".into();
    spec.elements.push(
        toml::from_str(
            r#"
type = "counterbalance_valve"
name = "cbv"
load = "VA"
valve = "VV"
pilot = "VB"
setting_pa = 4.0e7
pilot_ratio = 4.0
opening_range_pa = 1.0e6
discharge_coefficient = 0.7
area_m2 = 2.0e-5
check_opening_range_pa = 1.0e6
"#,
        )
        .unwrap(),
    );
    spec.inputs[0] = toml::from_str(
        r#"
name = "U"
signal = { type = "piecewise_constant", times = [0.0, 0.5, 1.5], values = [0.0, 10.0, 0.0] }
"#,
    )
    .unwrap();
    check_spec("boom with counterbalance valve", &spec);
}

#[test]
fn contact_step_loop_allocates_nothing() {
    // a brick at rest on the ground (four corners in contact), and a tumbling brick landing on a
    // corner (contacts made and lost)
    for (name, text) in [
        (
            "brick at rest",
            contact_drop::drop_toml(0.1, [0.0; 3], [0.0; 6], 3000.0, 1e-3, 3.0, 1e-4),
        ),
        (
            "brick dropped",
            contact_drop::drop_toml(
                0.35,
                [0.3, 0.2, -0.25],
                [0.5, 0.0, 0.0, 1.0, 0.0, 2.0],
                300.0,
                2.5e-4,
                1.0,
                1e-3,
            ),
        ),
    ] {
        let spec: hydraulink::ModelSpec = toml::from_str(&text).unwrap();
        check_spec(name, &spec);
    }
}

#[test]
fn digging_step_loop_allocates_nothing() {
    // the terrain's stage `world` (cut, dump, avalanche, freeze) and the bucket_dig element:
    // 0.001 … 3 s of models/excavator_dig.toml take the bucket into the pile and fill it
    check_spec("excavator_dig", &common::spec_of("excavator_dig"));
}
