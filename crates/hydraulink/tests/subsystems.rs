//! Subsystems stepped alone (`pipeline::subsystem`): the hydraulics of the 000 four-bar driven by
//! a prescribed cylinder motion, its mechanics driven by prescribed cylinder forces, snapshots,
//! and the step loops allocation-free; the shaft ports of a hydraulic motor (a turntable) alone
//! and coupled. Own binary: it counts allocations (thread-local counting allocator). The
//! multi-rate co-integration built on both is tested in `multirate.rs`.

#[path = "common.rs"]
#[allow(dead_code)]
mod common;

#[path = "support/alloc_counter.rs"]
mod alloc_counter;

use common::*;
use hydraulink::circuit::drives as circuit_drives;
use hydraulink::circuit::substeps::HydraulicConfig;
use hydraulink::model::spec::HydraulicIntegrator;
use hydraulink::pipeline::initialization::initialize;
use hydraulink::pipeline::subsystem::hydraulic::HydraulicSubsystem;
use hydraulink::pipeline::subsystem::mechanical::MechanicalSubsystem;
use hydraulink::pipeline::subsystem::{ports, PortKind, Segment, Subsystem};
use hydraulink::Model;

/// The four-bar's data (000 Table 1, `models/fourbar.toml`), written out here so that the
/// expected pressure does not come from the code under test.
const B_OIL: f64 = 1.5e9; // oil bulk modulus [Pa]
const V3_HOSE: f64 = 7.85e-5; // rod-side hose volume [m³]
const B_HOSE: f64 = 5.5e8; // hose bulk modulus [Pa]
const B_WALL: f64 = 3.15e10; // cylinder wall bulk modulus [Pa]
const STROKE: f64 = 1.1; // [m]
const RETRACTED: f64 = 1.1; // [m]

/// Rod-side annulus A_B = π/4 (D² − d²), D = 80 mm, d = 35 mm [m²].
fn area_b() -> f64 {
    std::f64::consts::FRAC_PI_4 * (0.080f64.powi(2) - 0.035f64.powi(2))
}

/// p3(s) of the closed rod-side volume V3 (the DCV closed: U = 0 before 1 s) when the rod moves
/// from `s0` to `s1`, by the lumped-fluid equation (000 eq. 22 with Q = 0):
/// ṗ = (B_e/V)(0 − V̇), 1/B_e = 1/B_oil + Σ V_s/(V B_s), so V/B_e = C(s) =
/// V/B_oil + V_h/B_h + V_c/B_c with V_c = A_B (stroke − (s − retracted)), V̇ = −A_B ṡ:
/// dp/ds = A_B / C(s), C linear in s, C(s) = a − b s, hence
/// p(s1) − p(s0) = (A_B/b) ln((a − b s0)/(a − b s1)).
fn closed_chamber_pressure(p0: f64, s0: f64, s1: f64) -> f64 {
    let ab = area_b();
    let l_full = STROKE + RETRACTED; // V_c = A_B (l_full − s)
    let a = (V3_HOSE + ab * l_full) / B_OIL + V3_HOSE / B_HOSE + ab * l_full / B_WALL;
    let b = ab / B_OIL + ab / B_WALL;
    p0 + ab / b * ((a - b * s0) / (a - b * s1)).ln()
}

fn fourbar() -> Model {
    model_of("fourbar")
}

/// The cylinder's initial length s0 = |F − G| = √2 m (000 §5).
const S0: f64 = std::f64::consts::SQRT_2;

/// The hydraulics alone, the rod extending at 2 mm/s for 0.5 s while the valve is closed: the
/// rod-side pressure follows the closed-chamber equation (exact quadrature above) under both
/// substep rules, and the cylinder force is the chambers' p A difference (friction at ṡ).
#[test]
fn hydraulics_alone_closed_chamber_builds_pressure_by_the_lumped_fluid_equation() {
    let model = fourbar();
    let v = 2e-3; // ṡ [m/s]
    for (integrator, substeps, rel) in [
        // trapezoidal: ṗ depends on s only, smooth: error O(h²) of a nearly constant rate
        (HydraulicIntegrator::Trapezoidal, 10, 1e-9),
        // forward Euler: O(h) of a rate that changes by ~1e-4 over the run (C(s) over 1 mm)
        (HydraulicIntegrator::ForwardEuler, 50, 1e-6),
    ] {
        let st = initialize(&model).unwrap();
        let p3_0 = st.p[2];
        let config = HydraulicConfig {
            step_s: 1e-3,
            substeps,
            integrator,
        };
        let mut hyd = HydraulicSubsystem::new(&model, config, st).unwrap();
        let dt = hyd.step_size();
        let mut s = S0;
        let mut force = 0.0;
        for _ in 0..500 {
            let seg = Segment::extrapolated(s, v, dt);
            force = hyd.step(&model, &[seg]).unwrap()[0];
            s = seg.end;
        }
        let p = hyd.pressures();
        let expected = closed_chamber_pressure(p3_0, S0, s);
        let dp = expected - p3_0;
        eprintln!(
            "{integrator:?} × {substeps}: p3 {:.6e} Pa, expected {expected:.6e} Pa (Δp {dp:.4e}), \
             relative error {:.3e}",
            p[2],
            ((p[2] - expected) / dp).abs()
        );
        assert!(dp > 1e5, "the closed chamber is compressed: Δp = {dp} Pa");
        assert!(
            (p[2] - expected).abs() <= rel * dp,
            "{integrator:?}: p3 = {} Pa, lumped-fluid equation {expected} Pa",
            p[2]
        );
        assert!((hyd.state().t_s - 0.5).abs() < 1e-12);
        // the output: F = p2 A_A − p3 A_B − F_μ, |F_μ| ≤ (1 − η)|p2 A_A − p3 A_B| (efficiency law)
        let aa = std::f64::consts::FRAC_PI_4 * 0.080f64.powi(2);
        let fh = p[1] * aa - p[2] * area_b();
        assert!(
            (force - fh).abs() <= 0.12 * fh.abs() + 1e-9,
            "force {force} N, hydraulic {fh} N"
        );
    }
}

/// A snapshot (the state's clone) restored continues bit for bit, and the step allocates nothing.
#[test]
fn hydraulics_alone_snapshot_continues_bit_for_bit_and_allocates_nothing() {
    let model = fourbar();
    let st = initialize(&model).unwrap();
    let config = HydraulicConfig::of_model(&{
        let mut spec = spec_of("fourbar");
        spec.solver.hydraulic_substeps = 10;
        hydraulink::compile(&spec).unwrap()
    });
    let mut hyd = HydraulicSubsystem::new(&model, config, st).unwrap();
    let dt = hyd.step_size();
    // the rod follows a slow sine through the valve opening at 1 s
    let s_at = |t: f64| S0 + 0.01 * (2.0 * t).sin();
    let run = |hyd: &mut HydraulicSubsystem, n: usize| {
        for _ in 0..n {
            let t = hyd.state().t_s;
            let seg = Segment {
                start: s_at(t),
                end: s_at(t + dt),
            };
            hyd.step(&model, &[seg]).unwrap();
        }
    };
    run(&mut hyd, 900);
    let snapshot = hyd.state().clone();
    let before = alloc_counter::allocations();
    run(&mut hyd, 300);
    assert_eq!(alloc_counter::allocations() - before, 0, "allocations");
    let first = hyd.state().p.clone();
    hyd.restore(&snapshot);
    run(&mut hyd, 300);
    let again = &hyd.state().p;
    for (a, b) in first.iter().zip(again) {
        assert_eq!(a.to_bits(), b.to_bits(), "restored run differs: {a} vs {b}");
    }
}

/// Total mechanical energy of the mechanics' state from its last step report [J].
fn energy(mech: &MechanicalSubsystem) -> f64 {
    mech.report().kinetic_j + mech.report().potential_j
}

/// The mechanics alone under prescribed cylinder forces. Held by the force of the static
/// initialization (p2 A_A − p3 A_B, no friction at rest), it stays where it is; pushed by a
/// constant force 20 % larger, its mechanical energy grows by the force's work F Δs (exact
/// for a constant force), up to the trapezoidal/penalty scheme's error.
#[test]
fn mechanics_alone_static_hold_and_energy_balance() {
    let model = fourbar();
    let st = initialize(&model).unwrap();
    let aa = std::f64::consts::FRAC_PI_4 * 0.080f64.powi(2);
    let f0 = st.p[1] * aa - st.p[2] * area_b();
    let z0 = st.z.clone();

    // static hold
    let mut mech = MechanicalSubsystem::new(&model, st.clone()).unwrap();
    let hold = Segment { start: f0, end: f0 };
    for _ in 0..1000 {
        mech.step(&model, &[hold]).unwrap();
    }
    let dz = mech
        .state()
        .z
        .iter()
        .zip(&z0)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    eprintln!("static hold with F0 = {f0:.6e} N: max |z − z0| after 1 s = {dz:.3e} rad");
    assert!(dz < 1e-8, "held mechanism moved by {dz} rad");

    // energy balance under a constant force
    let mut mech = MechanicalSubsystem::new(&model, st).unwrap();
    let s_start = mech.motion(&model)[0].s;
    let push = Segment {
        start: 1.2 * f0,
        end: 1.2 * f0,
    };
    mech.step(&model, &[push]).unwrap();
    // the first step's report holds the energies after it; start the balance there
    let (e1, s1) = (energy(&mech), mech.motion(&model)[0].s);
    let before = alloc_counter::allocations();
    for _ in 0..299 {
        mech.step(&model, &[push]).unwrap();
    }
    assert_eq!(
        alloc_counter::allocations() - before,
        0,
        "mechanical step allocates"
    );
    let s_end = mech.motion(&model)[0].s;
    let work = 1.2 * f0 * (s_end - s1);
    let de = energy(&mech) - e1;
    eprintln!(
        "push 1.2 F0 for 0.3 s: Δs = {:.4e} m, work {work:.4e} J, ΔE {de:.4e} J, relative \
         mismatch {:.3e}",
        s_end - s_start,
        ((de - work) / work).abs()
    );
    assert!(s_end - s_start > 1e-3, "the push moves the rod");
    assert!(
        // measured 2.1e-6: the trapezoidal/penalty scheme conserves to its tolerances
        (de - work).abs() <= 2e-5 * work.abs(),
        "energy {de} J vs work {work} J"
    );
}

/// A turntable (I = 50 kg m² about the vertical joint `swing`) turned by a hydraulic motor
/// (D = 100 cm³/rev, gear 10:1) between volume VA and the tank T; `feed` goes into the hydraulics
/// (a throttle from a pump into VA, or nothing), `motor` into the motor's entry.
fn turntable(feed: &str, motor: &str) -> String {
    format!(
        r#"
name = "turntable"
gravity = [0.0, -9.81, 0.0]
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
q0 = 0.0
[hydraulics.fluid]
density_kg_m3 = 870.0
bulk_modulus_pa = 1.5e9
[[hydraulics.volumes]]
name = "VA"
hose_volume_m3 = 1.0e-3
p0_pa = 1.0e6
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
{feed}
[[elements]]
type = "hydraulic_motor"
name = "motor"
port_a = "VA"
port_b = "T"
joint = "swing"
displacement_m3_per_rev = 1.0e-4
gear_ratio = 10.0
{motor}
[solver]
step_s = 1.0e-3
duration_s = 2.0
tolerance_pressure_pa = 1.0e-3
"#
    )
}

/// The feed of the spinning turntable: a throttle from a 10 MPa pump into VA.
const THROTTLE_FEED: &str = r#"
[[hydraulics.pumps]]
name = "P"
pressure_pa = 1.0e7
[[hydraulics.throttles]]
name = "feed"
from = "P"
to = "VA"
discharge_coefficient = 0.7
area_m2 = 6.8e-6
laminar_dp_pa = 2.0e5
"#;

/// The ports of both subsystems, in the order of their inputs and outputs: the cylinders, then
/// the motors' shafts (the excavator: three cylinders, the swing motor).
#[test]
fn ports_are_the_cylinders_then_the_motor_shafts() {
    let model = model_of("excavator");
    let ports = ports(&model);
    let names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();
    let cylinders: Vec<&str> = model.cylinders().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), cylinders.len() + 1);
    assert_eq!(&names[..cylinders.len()], &cylinders[..]);
    assert_eq!(names[cylinders.len()], "swing_motor");
    for (c, p) in ports.iter().take(cylinders.len()).enumerate() {
        assert_eq!(p.kind, PortKind::Line { cylinder: c });
        assert_eq!((p.motion_unit(), p.effort_unit()), ("m", "N"));
    }
    let shaft = ports.last().unwrap();
    let PortKind::Shaft(s) = shaft.kind else {
        panic!("the swing motor is a shaft port: {shaft:?}");
    };
    assert_eq!(model.elements()[s.element].name(), "swing_motor");
    assert_eq!((shaft.motion_unit(), shaft.effort_unit()), ("rad", "N m"));
    // and the subsystems take the excavator (session 20 rejected its motor)
    let st = initialize(&model).unwrap();
    HydraulicSubsystem::new(&model, HydraulicConfig::of_model(&model), st.clone()).unwrap();
    MechanicalSubsystem::new(&model, st).unwrap();
}

/// The hydraulics alone with a shaft port: the table turned backwards at a constant
/// q̇ = −0.01 rad/s makes the lossless motor pump Q = i D |q̇|/2π from the tank into the closed
/// volume VA, so p_A rises at the constant rate (B/V) i D |q̇|/2π (000 eq. 22, B_e = B_oil: a
/// hose volume without a wall), which both substep rules integrate exactly; the output torque
/// is the motor's τ = i D (p_A − p_T)/2π (η_hm = 1), opposing the turning.
#[test]
fn hydraulics_alone_a_motor_turned_backwards_pumps_up_a_closed_volume() {
    let model = hydraulink::compile(&spec_from(&turntable("", ""))).unwrap();
    let two_pi = 2.0 * std::f64::consts::PI;
    let (b, v, d, i, qd) = (1.5e9, 1.0e-3, 1.0e-4, 10.0, -0.01);
    for integrator in [
        HydraulicIntegrator::Trapezoidal,
        HydraulicIntegrator::ForwardEuler,
    ] {
        let st = initialize(&model).unwrap();
        let p0 = st.p[0];
        let config = HydraulicConfig {
            step_s: 1e-3,
            substeps: 4,
            integrator,
        };
        let mut hyd = HydraulicSubsystem::new(&model, config, st).unwrap();
        let dt = hyd.step_size();
        let mut q = 0.0;
        let mut torque = 0.0;
        for _ in 0..500 {
            let seg = Segment::extrapolated(q, qd, dt);
            torque = hyd.step(&model, &[seg]).unwrap()[0];
            q = seg.end;
        }
        let t = hyd.state().t_s;
        let expected = p0 + b / v * i * d * qd.abs() / two_pi * t;
        let pa = hyd.pressures()[0];
        let tau = i * d * (pa - 1e5) / two_pi;
        eprintln!(
            "{integrator:?}: p_A {pa:.9e} Pa, expected {expected:.9e} Pa; torque {torque:.9e} N m, \
             expected {tau:.9e} N m"
        );
        assert!(expected - p0 > 1e6, "the volume is pumped up");
        // exact up to the rounding of 2000 substeps and the Newton tolerance (1e-3 Pa)
        assert!(
            (pa - expected).abs() <= 1e-9 * expected,
            "p_A {pa} vs {expected}"
        );
        assert!((torque - tau).abs() <= 1e-12 * tau, "τ {torque} vs {tau}");
        assert!(
            torque * qd < 0.0,
            "a pumping motor's torque opposes the turning"
        );
    }
}

/// The mechanics alone with a shaft torque: the torque the motor exerts at the initial state,
/// τ = i D (p_A − p_T)/2π = 143.2 N m (so that the initial z̈ of `initialize`, which the
/// trapezoidal rule carries into the first step, is the one of this torque), held constant, spins
/// the table (I = 50 kg m²) at q̈ = τ/I, which the trapezoidal rule integrates exactly:
/// q = τ t²/2I, q̇ = τ t/I, output at the shaft port.
#[test]
fn mechanics_alone_a_shaft_torque_spins_the_table() {
    let model = hydraulink::compile(&spec_from(&turntable("", ""))).unwrap();
    let st = initialize(&model).unwrap();
    let mut mech = MechanicalSubsystem::new(&model, st).unwrap();
    let tau = 10.0 * 1.0e-4 * (1.0e6 - 1.0e5) / (2.0 * std::f64::consts::PI);
    let inertia = 50.0;
    let push = Segment {
        start: tau,
        end: tau,
    };
    let mut out = mech.motion(&model)[0];
    assert_eq!((out.s, out.sd), (0.0, 0.0));
    for _ in 0..1000 {
        out = mech.step(&model, &[push]).unwrap()[0];
    }
    let t = mech.state().t_s;
    let (q, qd) = (tau * t * t / (2.0 * inertia), tau * t / inertia);
    eprintln!(
        "shaft torque {tau:.4} N m: q {:.12} rad (exact {q:.12}), q̇ {:.12} rad/s (exact {qd:.12})",
        out.s, out.sd
    );
    assert!((out.s - q).abs() <= 1e-9 * q && (out.sd - qd).abs() <= 1e-9 * qd);
}

/// The two subsystems coupled from outside, as a co-simulation manager would (sequential,
/// communication step H = Δt = 1 ms): the mechanics steps with the cylinder force extrapolated
/// linearly from the last two, then the hydraulics with the segment of s the mechanics just
/// took. Through the lift (U = 10 V on [1, 2.5) s) it stays near the monolithic penalty run.
#[test]
fn subsystems_coupled_sequentially_follow_the_monolithic_run() {
    let model = fourbar();
    let st = initialize(&model).unwrap();
    let mut spec = spec_of("fourbar");
    spec.solver.duration_s = 2.5;
    let unified = run(hydraulink::compile(&spec).unwrap());
    let config = HydraulicConfig {
        step_s: model.step_s(),
        substeps: 10,
        integrator: HydraulicIntegrator::Trapezoidal,
    };
    let mut hyd = HydraulicSubsystem::new(&model, config, st.clone()).unwrap();
    let mut mech = MechanicalSubsystem::new(&model, st.clone()).unwrap();
    let aa = std::f64::consts::FRAC_PI_4 * 0.080f64.powi(2);
    let mut f = st.p[1] * aa - st.p[2] * area_b();
    let mut f_prev = f;
    let mut s = mech.motion(&model)[0].s;
    let (mut dz, mut dp) = (0.0f64, 0.0f64);
    let z3 = unified.col("z3.q");
    let p3 = unified.col("V3.p");
    for k in 1..=2500 {
        let force = Segment {
            start: f,
            end: 2.0 * f - f_prev,
        };
        let s1 = mech.step(&model, &[force]).unwrap()[0].s;
        f_prev = f;
        f = hyd.step(&model, &[Segment { start: s, end: s1 }]).unwrap()[0];
        s = s1;
        dz = dz.max((mech.state().z[2] - z3[k]).abs());
        dp = dp.max((hyd.pressures()[2] - p3[k]).abs());
    }
    eprintln!("sequential co-simulation at 1 ms vs monolithic: max |Δz3| {dz:.3e} rad, max |Δp3| {dp:.3e} Pa");
    // the multi-rate bounds of issue 3 (joints 1e-4 rad, pressures 0.1 % of the pump pressure,
    // 7.6 MPa); measured 8.6e-6 rad, 4.9 kPa
    assert!(dz < 1e-4 && dp < 1e-3 * 7.6e6, "Δz3 {dz} rad, Δp3 {dp} Pa");
}

/// The co-simulation of the motor-driven turntable through its shaft port (the sequence of the
/// test above: the mechanics with the torque extrapolated from the last two, then the
/// hydraulics with the segment of q the mechanics just took) against the monolithic penalty run
/// of the same model: the throttle-fed motor spins the table up over 2 s.
#[test]
fn subsystems_coupled_through_a_shaft_follow_the_monolithic_run() {
    let spec = spec_from(&turntable(THROTTLE_FEED, ""));
    let model = hydraulink::compile(&spec).unwrap();
    let unified = run(hydraulink::compile(&spec).unwrap());
    let st = initialize(&model).unwrap();
    let config = HydraulicConfig {
        step_s: model.step_s(),
        substeps: 10,
        integrator: HydraulicIntegrator::Trapezoidal,
    };
    let mut hyd = HydraulicSubsystem::new(&model, config, st.clone()).unwrap();
    let mut mech = MechanicalSubsystem::new(&model, st).unwrap();
    // the torque at rest: τ = i D (p_A − p_T)/2π · η(0) = 1
    let mut tau = 10.0 * 1.0e-4 * (hyd.pressures()[0] - 1e5) / (2.0 * std::f64::consts::PI);
    let mut tau_prev = tau;
    let mut q = mech.motion(&model)[0].s;
    let (qd_ref, pa_ref) = (unified.col("swing.qd"), unified.col("VA.p"));
    let (mut dqd, mut dp) = (0.0f64, 0.0f64);
    let mut allocations = 0;
    for k in 1..=2000 {
        let before = alloc_counter::allocations();
        let torque = Segment {
            start: tau,
            end: 2.0 * tau - tau_prev,
        };
        let out = mech.step(&model, &[torque]).unwrap()[0];
        tau_prev = tau;
        tau = hyd
            .step(
                &model,
                &[Segment {
                    start: q,
                    end: out.s,
                }],
            )
            .unwrap()[0];
        q = out.s;
        if k > 1 {
            // (the first mechanical step fills the state's tangent cache, `State::tangent`)
            allocations += alloc_counter::allocations() - before;
        }
        dqd = dqd.max((out.sd - qd_ref[k]).abs());
        dp = dp.max((hyd.pressures()[0] - pa_ref[k]).abs());
    }
    let n = qd_ref.len() - 1;
    eprintln!(
        "turntable co-simulation at 1 ms vs monolithic: q̇ {:.4} rad/s (monolithic {:.4}), \
         max |Δq̇| {dqd:.3e} rad/s, max |Δp_A| {dp:.3e} Pa",
        mech.state().zd[0],
        qd_ref[n]
    );
    assert!(qd_ref[n] > 1.0, "the table spins up: {} rad/s", qd_ref[n]);
    // the bounds of the four-bar's co-simulation above, relative: 0.1 % of the final speed,
    // 0.1 % of the pump pressure (measured 3.1e-3 rad/s of 4.5, 3.2 kPa)
    assert!(
        dqd < 1e-3 * qd_ref[n] && dp < 1e-3 * 1e7,
        "Δq̇ {dqd} rad/s, Δp_A {dp} Pa"
    );
    assert_eq!(allocations, 0, "the coupled steps through a shaft allocate");
}

/// `models/pump_relief.toml`'s pump (`fixed_pump`: D = 28 cm³/rev, η_hm = 0.9) and its shaft
/// input, a ramp from 0 to 157.08 rad/s over 0.2 s, written out here.
const PUMP_D: f64 = 2.8e-5;
const PUMP_ETA_HM: f64 = 0.9;
fn pump_relief_shaft_speed(t: f64) -> f64 {
    157.08 * (t / 0.2).min(1.0)
}

/// `pump_relief` for its hydraulics alone: the model, its initial state, 4 trapezoidal substeps
/// per 1 ms step, and the cylinder's segment that holds it at its initial length.
fn pump_relief_alone() -> (Model, hydraulink::State, HydraulicConfig, Segment) {
    let model = model_of("pump_relief");
    let st = initialize(&model).unwrap();
    let config = HydraulicConfig {
        step_s: 1e-3,
        substeps: 4,
        integrator: HydraulicIntegrator::Trapezoidal,
    };
    let s0 = MechanicalSubsystem::new(&model, st.clone())
        .unwrap()
        .motion(&model)[0]
        .s;
    (model, st, config, Segment { start: s0, end: s0 })
}

/// The hydraulics of `pump_relief` alone for 0.45 s (the valve closed, the cylinder held), the
/// pump's shaft a drive port whose angle segments turn it at its input's speed: the run is the
/// one that takes the speed from the input (to the rounding of the speed, a segment's rate),
/// and the drive's output is the pump's shaft torque T = D (p_Vp − p_T)/(2π η_hm) against the
/// relief valve.
#[test]
fn hydraulics_alone_a_pump_drive_port_is_its_input_speed_and_returns_the_torque() {
    let (model, st, config, hold) = pump_relief_alone();
    let mut by_input = HydraulicSubsystem::new(&model, config, st.clone()).unwrap();
    let mut driven = HydraulicSubsystem::with_drive_ports(&model, config, st).unwrap();
    let ports = driven.ports(&model);
    assert_eq!(ports.len(), 2, "{ports:?}");
    assert!(matches!(ports[1].kind, PortKind::Drive(_)) && ports[1].name == "pump");
    assert_eq!(by_input.ports(&model).len(), 1);
    let dt = config.step_s;
    let (mut angle, mut torque) = (0.0, 0.0);
    for k in 0..450 {
        by_input.step(&model, &[hold]).unwrap();
        let end = angle + pump_relief_shaft_speed((k + 1) as f64 * dt) * dt;
        let out = driven
            .step(&model, &[hold, Segment { start: angle, end }])
            .unwrap();
        torque = out[1];
        angle = end;
    }
    let (a, b) = (by_input.pressures(), driven.pressures());
    let dp = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    let p_vp = b[0];
    let t_hand = PUMP_D * (p_vp - 1e5) / (2.0 * std::f64::consts::PI * PUMP_ETA_HM);
    eprintln!(
        "pump drive port: max |Δp| against the input's speed {dp:.3e} Pa at p_Vp = {p_vp:.4e} \
         Pa; torque {torque:.6} N m, by hand {t_hand:.6} N m"
    );
    assert!(
        p_vp > 1.3e7,
        "the relief valve holds the pump line: {p_vp} Pa"
    );
    assert!(dp <= 1e-9 * p_vp, "pressures differ by {dp} Pa");
    assert!(
        (torque - t_hand).abs() <= 1e-12 * t_hand,
        "T {torque} vs {t_hand}"
    );
    // the speed column is the drive's
    let slot = match ports[1].kind {
        PortKind::Drive(d) => d.slot,
        _ => unreachable!(),
    };
    assert!((driven.state().spool[slot] - 157.08).abs() <= 1e-9 * 157.08);
}

/// An engine as a third subsystem, written here: a flywheel J = 1 kg m² under a proportional
/// governor τ_e = k (ω_set − ω), k = 20 N m s/rad (forward Euler at the hydraulics' 1 ms),
/// drives the pump of `pump_relief` through its drive port. When the relief valve opens the
/// pump's torque pulls the engine down until the governor carries it: at the end
/// k (ω_set − ω) = T, and the pump turns at the engine's speed.
#[test]
fn an_engine_drives_the_pump_through_its_drive_port_to_the_governor_balance() {
    let (model, st, config, hold) = pump_relief_alone();
    let mut hyd = HydraulicSubsystem::with_drive_ports(&model, config, st).unwrap();
    let (j, k, w_set, dt) = (1.0, 20.0, 157.08, config.step_s);
    let (mut w, mut angle, mut torque) = (w_set, 0.0, 0.0);
    let mut allocations = 0;
    for step in 0..450 {
        let before = alloc_counter::allocations();
        w += dt / j * (k * (w_set - w) - torque);
        let end = angle + w * dt;
        torque = hyd
            .step(&model, &[hold, Segment { start: angle, end }])
            .unwrap()[1];
        angle = end;
        if step > 0 {
            allocations += alloc_counter::allocations() - before;
        }
    }
    let governor = k * (w_set - w);
    eprintln!(
        "engine: ω {w:.4} rad/s (set {w_set}), governor {governor:.4} N m, pump torque \
         {torque:.4} N m at p_Vp = {:.4e} Pa",
        hyd.pressures()[0]
    );
    assert!(torque > 50.0, "the pump loads the engine: {torque} N m");
    assert!(w_set - w > 2.0, "the engine droops: ω = {w}");
    // steady: ω settles with the governor's time constant J/k = 50 ms, 9 of them in 0.45 s
    assert!(
        (governor - torque).abs() <= 1e-3 * torque,
        "{governor} vs {torque}"
    );
    let d = circuit_drives(&model)[0];
    assert!((hyd.state().spool[d.slot] - w).abs() <= 1e-9 * w);
    assert_eq!(allocations, 0, "the driven step allocates");
}
