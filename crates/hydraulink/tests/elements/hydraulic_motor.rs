//! The hydraulic motor (issue 11 item 1): its law against central differences in every regime
//! (motoring, pumping, the efficiency blend at rest), its power balance, the coupled Newton
//! tangent of a model with a motor against central differences, a motor spinning an inertia up
//! to steady speed with the energy balance, a motor holding a gravity torque, and the rejection
//! by the formulations that cannot carry it (penalty and multi-rate can).

use hydraulink::elements::component::{Component, ComponentSpec};
use hydraulink::elements::element::{PortState, MAX_INTERNAL};
use hydraulink::elements::hydraulics::hydraulic_motor::{law, power_split, HydraulicMotor};
use hydraulink::formulations::penalty;
use hydraulink::model::{AxisId, Node, VolumeId};
use hydraulink::pipeline::initialization::initialize;
use hydraulink::pipeline::step;
use hydraulink::Workspace;
use num_dual::Dual64;

use super::{close, fd};
use crate::common::{run, spec_from};

const TWO_PI: f64 = 2.0 * std::f64::consts::PI;

fn motor() -> HydraulicMotor {
    HydraulicMotor {
        name: "swing".into(),
        a: Node::Volume(VolumeId(0)),
        b: Node::Volume(VolumeId(1)),
        axis: AxisId(0),
        displacement_m3_per_rev: 1e-4,
        gear_ratio: 10.0,
        leakage_m3_s_pa: 1e-4 * 25.0 * (1.0 / 0.95 - 1.0) / 2e7,
        hydromechanical_efficiency: 0.9,
        blend_power_w: 10.0,
    }
}

fn at<S: Copy>(pa: S, pb: S, qd: S) -> PortState<S> {
    PortState {
        p: [pa, pb, pa, pa],
        s: qd,
        sd: qd,
        u: 1.0,
        position: 0.0,
        internal: [pa; MAX_INTERNAL],
    }
}

/// [flow, torque] and their slopes in (p_A, p_B, q̇) by duals and by central differences.
#[test]
fn motor_law_matches_central_differences_motoring_pumping_and_at_rest() {
    let m = motor();
    let e = Component::HydraulicMotor(m.clone());
    // (p_A, p_B, q̇): motoring both ways, pumping both ways, and inside the blend (|P_id| ≲ P_s)
    let points = [
        (1.2e7, 1e6, 2.0),
        (1e6, 1.2e7, -2.0),
        (1.2e7, 1e6, -2.0),
        (1e6, 1.2e7, 2.0),
        (8e6, 1e5, 1e-5),
        (8e6, 1e5, -1e-5),
        (8e6, 1e5, 0.0),
        (1e5, 1e5, 1.0),
    ];
    for (pa, pb, qd) in points {
        let eval = |pa: f64, pb: f64, qd: f64| {
            let ef = e.evaluate(&at(pa, pb, qd));
            [ef.flow[1], ef.force]
        };
        for (k, h) in [(0usize, 1.0), (1, 1.0), (2, 1e-7)] {
            let mut x = [Dual64::from(pa), Dual64::from(pb), Dual64::from(qd)];
            x[k].eps = 1.0;
            let ef = e.evaluate(&at(x[0], x[1], x[2]));
            let exact = [ef.flow[1].eps, ef.force.eps];
            for (out, ex) in exact.iter().enumerate() {
                let f = |v: f64| {
                    let mut y = [pa, pb, qd];
                    y[k] = v;
                    eval(y[0], y[1], y[2])[out]
                };
                let c = fd(f, [pa, pb, qd][k], h);
                // scale: the derivative's size over the regime (dual and difference agree to
                // 1e-6 of it)
                let scale = ex.abs().max(c.abs()).max(1e-12);
                assert!(
                    close(*ex, c, scale),
                    "at ({pa}, {pb}, {qd}): d out[{out}]/d x[{k}] exact {ex:e} vs fd {c:e}"
                );
            }
        }
        // the flow out of A is the flow into B
        let ef = e.evaluate(&at(pa, pb, qd));
        assert_eq!(ef.flow[0], -ef.flow[1]);
    }
}

#[test]
fn motor_efficiency_and_leakage_follow_the_rated_point() {
    let m = motor();
    // well above the blend power: η = η_hm motoring, 1/η_hm pumping
    let mot = law(&m, 2e7, 0.0, 2.0);
    assert_eq!(mot.efficiency, 0.9);
    let pump = law(&m, 2e7, 0.0, -2.0);
    assert!((pump.efficiency - 1.0f64 / 0.9).abs() < 1e-15);
    assert_eq!(law(&m, 2e7, 0.0, 0.0).efficiency, 1.0);
    // τ = i η D Δp / 2π
    let tau = 10.0 * 0.9 * 1e-4 * 2e7 / TWO_PI;
    assert!((mot.torque - tau).abs() <= 1e-12 * tau);
    // η_v at the rated point (Δp_r = 20 MPa, n_r = 25 rev/s = 1500 rpm)
    let w_rated = 25.0 * TWO_PI / 10.0; // joint rate that turns the motor at n_r
    let q = law(&m, 2e7, 0.0, w_rated).flow;
    let eta_v = 1e-4 * 25.0 / q;
    assert!((eta_v - 0.95).abs() < 1e-12, "η_v = {eta_v}");
}

#[test]
fn motor_power_balance_holds_with_nonnegative_losses() {
    let m = motor();
    for pa in [1e5, 3e6, 1.5e7] {
        for pb in [1e5, 5e6] {
            for qd in [-3.0, -1e-4, 0.0, 1e-5, 0.5, 4.0] {
                let [hyd, mech, fric, leak] = power_split(&m, pa, pb, qd);
                assert!(fric >= 0.0 && leak >= 0.0, "{pa} {pb} {qd}: {fric} {leak}");
                assert!(
                    (hyd - mech - fric - leak).abs() <= 1e-12 * hyd.abs().max(mech.abs()),
                    "{pa} {pb} {qd}: {hyd} ≠ {mech} + {fric} + {leak}"
                );
                // the element's energy account: supplied − dissipated = τ q̇
                let e = Component::HydraulicMotor(m.clone());
                let a = at(pa, pb, qd);
                let p = e.power(&a, &e.evaluate(&a));
                assert!((p.supplied_w - hyd).abs() <= 1e-9 * hyd.abs().max(1.0));
                assert!((p.supplied_w - p.dissipated_w - mech).abs() <= 1e-9 * hyd.abs().max(1.0));
            }
        }
    }
}

/// A turntable (I = 50 kg m², no gravity torque) on a revolute joint with viscous friction c,
/// driven through a gear by a motor fed from a 10 MPa pump through a throttle into VA, draining
/// to the tank. `extra` goes into the motor's entry, `formulation` into the solver.
fn turntable(extra: &str, formulation: &str, duration: f64) -> String {
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
friction = {{ type = "viscous", coefficient_n_s_m = 573.0 }}
[hydraulics.fluid]
density_kg_m3 = 870.0
bulk_modulus_pa = 1.5e9
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
laminar_dp_pa = 2.0e5
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
{extra}
[solver]
formulation = "{formulation}"
step_s = 1.0e-3
duration_s = {duration}
tolerance_pressure_pa = 1.0e-3
"#
    )
}

#[test]
fn motor_spins_an_inertia_to_steady_speed_with_the_energy_balance() {
    let spec = spec_from(&turntable("", "penalty", 3.0));
    let model = hydraulink::compile(&spec).unwrap();
    let r = run(model);
    let dt = 1e-3;
    let qd = r.col("swing.qd");
    let pa = r.col("VA.p");
    let flow = r.col("motor.flow");
    let torque = r.col("motor.torque");
    let power = r.col("motor.power");
    let n = qd.len() - 1;
    let m = match &r.sim.model().elements()[1] {
        Component::HydraulicMotor(m) => m.clone(),
        other => panic!("element 1 is {}", other.name()),
    };
    // steady speed: the motor torque carries the joint's viscous load, c q̇ = τ, and the
    // throttle's flow is the motor's (flow continuity into VA, ṗ = 0)
    let c = 573.0;
    let tau_steady = torque[n];
    eprintln!(
        "turntable: q̇ = {:.6} rad/s, p_A = {:.4} MPa, τ = {:.3} N m, Q = {:.4e} m³/s",
        qd[n],
        pa[n] * 1e-6,
        tau_steady,
        flow[n]
    );
    assert!(qd[n] > 1.0, "the table must turn: q̇ = {}", qd[n]);
    assert!(
        (c * qd[n] - tau_steady).abs() <= 1e-6 * tau_steady,
        "steady speed: c q̇ = {} vs τ = {}",
        c * qd[n],
        tau_steady
    );
    let q_throttle = 0.7 * 6.8e-6 * (2.0f64 / 870.0).sqrt() * (1e7 - pa[n]).sqrt();
    assert!(
        (q_throttle - flow[n]).abs() <= 1e-6 * flow[n],
        "flow continuity: throttle {q_throttle:e} vs motor {:e}",
        flow[n]
    );
    // energy: hydraulic work into the motor = kinetic energy + joint friction + motor losses.
    // Each integral is the trapezoidal sum over the committed steps (the integrator's rule).
    let trapz = |f: &dyn Fn(usize) -> f64| (0..n).map(|k| 0.5 * dt * (f(k) + f(k + 1))).sum();
    let w_hyd: f64 = trapz(&|k| power[k]);
    let ke = 0.5 * 50.0 * qd[n] * qd[n];
    let d_joint: f64 = trapz(&|k| c * qd[k] * qd[k]);
    let losses: f64 = trapz(&|k| {
        let [_, _, fric, leak] = power_split(&m, pa[k], 1e5, qd[k]);
        fric + leak
    });
    let err = w_hyd - ke - d_joint - losses;
    eprintln!(
        "turntable energy: W_hyd {w_hyd:.3} J = KE {ke:.3} + joint {d_joint:.3} + motor losses \
         {losses:.3} + {err:.2e} J"
    );
    assert!(
        err.abs() <= 1e-4 * w_hyd,
        "energy balance off by {err} J of {w_hyd} J"
    );
    // the library's own account agrees: mechanical drift (KE − motor work + joint friction)
    let drift = crate::common::max_abs(&r.col("energy.drift"));
    eprintln!(
        "turntable: steady c q̇ − τ = {:.2e} N m, throttle − motor flow = {:.2e} m³/s, \
         max |drift| = {drift:.2e} J",
        c * qd[n] - tau_steady,
        q_throttle - flow[n]
    );
    assert!(drift <= 1e-4 * w_hyd, "drift {drift} J of {w_hyd} J");
}

/// A pendulum (100 kg at 1 m) held horizontal by a motor on its pivot, A a closed volume, B the
/// tank; viscous joint damping lets it settle. Starts 10 % off the holding pressure. The oil
/// spring (i D/2π)² B/V = 3.8e4 N m/rad and c = 3000 N m s (about critical, with the blend's
/// own ≈ 100 N m s near rest at P_s = 1 kW) settle it within 4 s.
fn held_pendulum(p0: f64) -> String {
    format!(
        r#"
name = "held"
gravity = [0.0, -9.81, 0.0]
[[bodies]]
name = "arm"
mass_kg = 100.0
com = [1.0, 0.0, 0.0]
inertia = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
[[joints]]
name = "pivot"
type = "revolute"
parent = "ground"
child = "arm"
axis = [0.0, 0.0, 1.0]
q0 = 0.0
friction = {{ type = "viscous", coefficient_n_s_m = 3000.0 }}
[hydraulics.fluid]
density_kg_m3 = 870.0
bulk_modulus_pa = 1.5e9
[[hydraulics.volumes]]
name = "VA"
hose_volume_m3 = 1.0e-3
p0_pa = {p0}
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
[[elements]]
type = "hydraulic_motor"
name = "motor"
port_a = "VA"
port_b = "T"
joint = "pivot"
displacement_m3_per_rev = 1.0e-4
gear_ratio = 10.0
hydromechanical_efficiency = 0.9
efficiency_blend_power_w = 1000.0
[solver]
step_s = 1.0e-3
duration_s = 4.0
tolerance_pressure_pa = 1.0e-4
tolerance_position = 1.0e-10
"#
    )
}

#[test]
fn motor_holds_a_gravity_torque_at_the_static_pressure() {
    // holding pressure at the horizontal: Δp = 2π m g L / (i D η), η = 1 at rest (the blend)
    let dp0 = TWO_PI * 100.0 * 9.81 * 1.0 / (10.0 * 1e-4);
    let r = run(hydraulink::compile(&spec_from(&held_pendulum(1e5 + 0.9 * dp0))).unwrap());
    let q = r.col("pivot.q");
    let qd = r.col("pivot.qd");
    let pa = r.col("VA.p");
    let n = q.len() - 1;
    let tau = 100.0 * 9.81 * 1.0 * q[n].cos(); // gravity torque at the settled angle [N m]
    let dp_static = TWO_PI * tau / (10.0 * 1e-4 * 1.0);
    let dp = pa[n] - 1e5;
    eprintln!(
        "held pendulum: q = {:.6e} rad, q̇ = {:.2e} rad/s, Δp = {dp:.6e} Pa vs static \
         {dp_static:.6e} Pa, relative error {:.1e}",
        q[n],
        qd[n],
        (dp - dp_static).abs() / dp_static
    );
    assert!(qd[n].abs() < 1e-9, "not at rest: q̇ = {}", qd[n]);
    assert!(
        (dp - dp_static).abs() <= 1e-6 * dp_static,
        "Δp = {dp} vs 2π τ/(i D η) = {dp_static}"
    );
}

#[test]
fn motor_coupled_tangent_matches_central_differences() {
    // mid spin-up (t = 0.2 s): the torque depends on p_A and the flow into VA on q̇, so the
    // tangent's off-diagonal blocks ∂(M′z̈ − Q′)/∂p and ∂(ṗ − h)/∂z are non-zero and must match
    let model = hydraulink::compile(&spec_from(&turntable("", "penalty", 1.0))).unwrap();
    let (n, nv) = (model.n_coords(), model.n_volumes());
    assert_eq!((n, nv), (1, 1));
    let mut st = initialize(&model).unwrap();
    let mut ws = Workspace::new(&model);
    for _ in 0..200 {
        step::step(&model, &mut st, &mut ws).unwrap();
    }
    penalty::prepare(&model, &st, &mut ws);
    for (i, x) in ws.x.iter_mut().enumerate() {
        *x += if i < n { 1e-4 } else { 2e3 };
    }
    penalty::tangent(&model, &mut ws);
    let nx = ws.x.len();
    let x0 = ws.x.clone();
    for j in 0..nx {
        let h = if j < n { 1e-7 } else { 1.0 };
        let mut fp = vec![0.0; nx];
        let mut fm = vec![0.0; nx];
        for (sign, out) in [(1.0, &mut fp), (-1.0, &mut fm)] {
            ws.ev.x.copy_from_slice(&x0);
            ws.ev.x[j] += sign * h;
            let b = &mut ws.buffers;
            penalty::residual(&model, &mut b.ev, &b.hist, &b.lambda, &b.spool_new);
            out.copy_from_slice(&ws.ev.f);
        }
        for i in 0..nx {
            let c = (fp[i] - fm[i]) / (2.0 * h);
            let exact = ws.tangent.matrix()[(i, j)];
            eprintln!(
                "motor tangent d f[{i}]/d x[{j}]: exact {exact:e}, fd {c:e}, relative {:.1e}",
                (c - exact).abs() / exact.abs()
            );
            assert!(
                exact != 0.0,
                "d f[{i}]/d x[{j}] is zero: the coupling is missing"
            );
            assert!(
                (c - exact).abs() <= 1e-6 * exact.abs(),
                "d f[{i}]/d x[{j}]: exact {exact:e}, fd {c:e}"
            );
        }
    }
}

/// Penalty and multi-rate carry a motor (multi-rate through its shaft port, `circuit::Shaft`);
/// the other formulations reject it by name.
#[test]
fn motor_is_rejected_by_the_formulations_without_a_shaft_port_by_name() {
    let frictionless = |f: &str| {
        turntable("", f, 1.0).replace(
            "friction = { type = \"viscous\", coefficient_n_s_m = 573.0 }",
            "",
        )
    };
    hydraulink::compile(&spec_from(&frictionless("multirate"))).expect("multirate carries it");
    for f in [
        "double-step",
        "global-ali3p",
        "global-i1al",
        "kinematic-guidance",
    ] {
        // without the joint friction, which some of them reject first
        let spec = spec_from(&frictionless(f));
        let err = match hydraulink::compile(&spec) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{f} accepted a hydraulic motor"),
        };
        assert!(
            err.contains("hydraulic motor 'motor'") && err.contains("elements[0]"),
            "{f}: {err}"
        );
    }
    assert!(matches!(
        spec_from(&turntable("", "penalty", 1.0)).elements[0],
        ComponentSpec::HydraulicMotor(_)
    ));
}

/// Far above the blend power (P_id = 10⁵ P_s, a 1 MW motor with the 10 W default) the law and
/// its dual derivative stay finite: num-dual's tanh (sinh/cosh) overflowed to a NaN tangent
/// there before the blend was held at ±1 past |P_id/P_s| = 20.
#[test]
fn motor_tangent_is_finite_far_above_the_blend_power() {
    let m = motor();
    // Δp = 2e7 Pa, ω_m = 50 rad/s: P_id = 2e7 · 50 · 1e-4/2π ≈ 1.6e4 W per unit gear ratio
    for (pa, qd) in [(2.0e7 + 1e5, 5.0), (1e5, -5.0)] {
        let pb = if pa > 1e6 { 1e5 } else { 2.0e7 };
        let x = [
            Dual64::from(pa).derivative(),
            Dual64::from(pb),
            Dual64::from(qd),
        ];
        let e = law(&m, x[0], x[1], x[2]);
        assert!(
            e.torque.re.is_finite() && e.torque.eps.is_finite(),
            "{:?}",
            e.torque
        );
        assert!(e.flow.eps.is_finite());
        let f = law(&m, pa, pb, qd);
        // motoring: η = η_hm; pumping: η = 1/η_hm
        let want = if (pa - pb) * qd > 0.0 { 0.9 } else { 1.0 / 0.9 };
        assert!((f.efficiency - want).abs() < 1e-15, "{}", f.efficiency);
    }
}

/// The held pendulum with VA's `p0_pa` left out: the static initialization solves it.
fn held_pendulum_free(extra: &str) -> hydraulink::Model {
    let text = held_pendulum(0.0).replace("p0_pa = 0\n", "").replace(
        "hydromechanical_efficiency = 0.9\n",
        &format!("hydromechanical_efficiency = 0.9\n{extra}"),
    );
    assert!(!text.contains("p0_pa"));
    hydraulink::compile(&spec_from(&text)).unwrap()
}

#[test]
fn motor_holds_a_gravity_load_from_a_free_pressure_at_the_hand_formula() {
    // no p0_pa: the statics give the holding pressure Δp = 2π τ/(i D η), η = 1 at rest, with
    // τ = m g L = 981 N m of the horizontal arm
    let model = held_pendulum_free("");
    let st = initialize(&model).unwrap();
    let dp_hand = TWO_PI * 100.0 * 9.81 * 1.0 / (10.0 * 1e-4 * 1.0);
    let dp = st.p[0] - 1e5;
    let zdd = st.zdd[0];
    eprintln!(
        "held pendulum from a free pressure: Δp = {dp:.9e} Pa vs hand {dp_hand:.9e} Pa \
         (relative {:.1e}), z̈₀ = {zdd:.1e} rad/s²",
        (dp - dp_hand).abs() / dp_hand
    );
    assert!(
        (dp - dp_hand).abs() <= 1e-12 * dp_hand,
        "Δp = {dp} vs 2π τ/(i D) = {dp_hand}"
    );
    // in equilibrium: the gravity torque 981 N m on an arm of I = 101 kg m² is balanced to
    // |z̈| ≤ 1e-9 rad/s² (the torque to 1e-7 N m)
    assert!(zdd.abs() <= 1e-9, "z̈₀ = {zdd}");
    // … and it stays put: 0.5 s of simulation moves it by less than 1e-9 rad
    let mut sim = hydraulink::Simulation::new(model).unwrap();
    for _ in 0..500 {
        sim.step().unwrap();
    }
    let q = sim.state().z[0];
    eprintln!("held pendulum after 0.5 s: q = {q:.1e} rad");
    assert!(q.abs() <= 1e-9, "q = {q}");
}

#[test]
fn a_leaking_motor_cannot_hold_a_free_volume_and_says_so() {
    // η_v < 1: C_L Δp drains VA at the holding pressure, so no static pressure exists
    let model = held_pendulum_free(
        "volumetric_efficiency = 0.95\nrated_pressure_pa = 2.0e7\nrated_speed_rad_s = 157.0\n",
    );
    let err = initialize(&model).unwrap_err().to_string();
    eprintln!("{err}");
    assert!(err.contains("hydraulic motor 'motor'"), "{err}");
    assert!(err.contains("volume 'VA'"), "{err}");
    assert!(err.contains("p0_pa"), "{err}");
}

#[test]
fn a_motor_between_two_free_volumes_asks_for_one_p0() {
    // A and B both free and closed: the holding torque fixes p_A − p_B only, so the start
    // stops and names both volumes, asking for one p0_pa
    let text = held_pendulum(0.0)
        .replace("p0_pa = 0\n", "")
        .replace("port_b = \"T\"", "port_b = \"VB\"")
        .replace(
            "[[hydraulics.tanks]]",
            "[[hydraulics.volumes]]\nname = \"VB\"\nhose_volume_m3 = 1.0e-3\n[[hydraulics.tanks]]",
        );
    let model = hydraulink::compile(&spec_from(&text)).unwrap();
    let err = initialize(&model).unwrap_err();
    let shown = err.to_string();
    eprintln!("{shown}");
    assert!(
        matches!(&err, hydraulink::InitError::UndeterminedPressures { volumes, missing: 1 }
            if volumes == &["VA".to_string(), "VB".to_string()]),
        "{shown}"
    );
}
