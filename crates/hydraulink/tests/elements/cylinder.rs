//! The double-acting cylinder as an element (`Element for Cylinder`): its dual-number Jacobian
//! over the port variables (p_A, p_B, s, ṡ, friction states) against central differences for
//! every friction law; agreement with the formulations' fast path (the `Evaluator`'s cylinder
//! force and friction-state rates, the volume law's ṗ) at states of shipped models; its power
//! balance; and the output columns it describes.

use hydraulink::circuit::{self, volume};
use hydraulink::elements::element::{absorbed_power, Element, MechPort, PortState, MAX_INTERNAL};
use hydraulink::elements::friction::{BengisuAkay, BrownMcPhee, LuGre, ModifiedLuGre};
use hydraulink::elements::hydraulics::fluid;
use hydraulink::mechanics::assembly::Evaluator;
use hydraulink::model::{CylinderId, Friction, Model, Node, VolumeId};
use hydraulink::Simulation;
use num_dual::Dual64;

use super::cyl;
use crate::common::spec_of;

// 003 Pub II Table 2 (the literal σ0/σ1 reading of note 003b E.1), as in `friction.rs`.
const BA: BengisuAkay = BengisuAkay {
    coulomb_n: 210.0,
    static_n: 830.0,
    stribeck_velocity_m_s: 1.25e-2,
    shape_s_m: 50.0,
    viscous_n_s_m: 330.0,
};
const BM: BrownMcPhee = BrownMcPhee {
    coulomb_n: 210.0,
    static_n: 830.0,
    stribeck_velocity_m_s: 1.25e-2,
    viscous_n_s_m: 330.0,
};

fn lugre() -> LuGre {
    LuGre {
        coulomb_n: 210.0,
        static_n: 830.0,
        stribeck_velocity_m_s: 1.25e-2,
        stribeck_exponent: 0.5,
        stiffness_n_m: 54f64.sqrt() * 1e6,
        damping_n_s_m: 10f64.sqrt() * 1e4,
        viscous_n_s_m: 330.0,
    }
}

fn modified_lugre() -> ModifiedLuGre {
    ModifiedLuGre {
        coulomb_n: 210.0,
        static_n: 830.0,
        stribeck_velocity_m_s: 1.25e-2,
        stribeck_exponent: 0.5,
        stiffness_n_m: 54f64.sqrt() * 1e6,
        damping_n_s_m: 10f64.sqrt() * 1e4,
        viscous_n_s_m: 330.0,
        threshold_velocity_m_s: 0.70,
        tau_accel_s: 0.25,
        tau_decel_s: 1.50,
        tau_dwell_s: 40.0,
        dwell_velocity_m_s: 1e-9,
    }
}

/// Every friction law of the cylinder.
fn laws() -> [Friction; 7] {
    [
        Friction::None,
        Friction::Viscous { c: 1e5 },
        Friction::Efficiency {
            eta: 0.88,
            vs: 1e-3,
        },
        Friction::BengisuAkay(BA),
        Friction::BrownMcPhee(BM),
        Friction::LuGre(lugre()),
        Friction::ModifiedLuGre(modified_lugre()),
    ]
}

/// Port variables x = (p_A [Pa], p_B [Pa], s [m], ṡ [m/s], w₀, w₁) → port state.
fn port_state<S: Copy + From<f64>>(x: [S; 6]) -> PortState<S> {
    let zero = S::from(0.0);
    let mut internal = [zero; MAX_INTERNAL];
    internal[0] = x[4];
    internal[1] = x[5];
    PortState {
        p: [x[0], x[1], zero, zero],
        s: x[2],
        sd: x[3],
        u: 1.0,
        position: 0.0,
        internal,
    }
}

/// The efforts as a vector: (F, Q_A, Q_B, ẇ₀, ẇ₁).
fn efforts<S: Copy>(e: &hydraulink::elements::element::PortEffort<S>) -> [S; 5] {
    [
        e.force,
        e.flow[0],
        e.flow[1],
        e.internal_rate[0],
        e.internal_rate[1],
    ]
}

/// Typical magnitude of each port variable: pressures, length, rate, bristle q [m], film h [-].
const SCALE: [f64; 6] = [1e7, 1e7, 1.0, 0.1, 1e-5, 0.1];

/// Points (p_A, p_B, s, ṡ, q, h) on both sides of every switch of the laws: ṡ > v_s (sliding)
/// and ṡ < 0 below v_s (Bengisu–Akay's pre-sliding branch, the Stribeck region), F_h > 0 and
/// F_h < 0 (the efficiency law's |F_h|), the film below its steady state (building).
const POINTS: [[f64; 6]; 3] = [
    [8e6, 3e6, 1.6, 0.03, 2e-6, 0.05],
    [2e6, 9e6, 1.3, -0.004, -1e-6, 0.01],
    [5e6, 1e6, 2.1, -0.2, -3e-6, 0.15],
];

#[test]
fn cylinder_jacobian_matches_central_differences_for_every_friction_law() {
    for law in laws() {
        let c = cyl(law);
        let nw = c.n_friction_states();
        for x0 in POINTS {
            let f0 = efforts(&c.evaluate(&port_state(x0)));
            // the port variables of this law: p_A, p_B, s, ṡ and its friction states
            for j in 0..4 + nw {
                let mut xd = x0.map(Dual64::from);
                xd[j] = Dual64::new(x0[j], 1.0);
                let dual = efforts(&c.evaluate(&port_state(xd)));
                let h = 1e-6 * SCALE[j];
                let (mut xp, mut xm) = (x0, x0);
                xp[j] += h;
                xm[j] -= h;
                let fp = efforts(&c.evaluate(&port_state(xp)));
                let fm = efforts(&c.evaluate(&port_state(xm)));
                for i in 0..3 + nw {
                    let fd = (fp[i] - fm[i]) / (2.0 * h);
                    // relative 1e-6 of the larger of the slope and the output's own scale over
                    // the variable's: O(h²) truncation and ε|f|/h round-off lie far below
                    let tol = 1e-6 * dual[i].eps.abs().max(f0[i].abs() / SCALE[j]).max(1e-30);
                    assert!(
                        (dual[i].eps - fd).abs() <= tol,
                        "{law:?} at {x0:?}: ∂out{i}/∂x{j} dual {} vs central {fd}",
                        dual[i].eps
                    );
                }
            }
            // the state rates beyond the law's states, and the unused node slots, are zero
            let e = c.evaluate(&port_state(x0));
            assert!(e.internal_rate[nw..].iter().all(|r| *r == 0.0), "{law:?}");
            assert_eq!(&e.flow[2..], &[0.0, 0.0], "{law:?}");
        }
    }
}

#[test]
fn cylinder_ports_flows_and_force_follow_the_law() {
    let c = cyl(Friction::None);
    let ports = c.ports();
    assert_eq!(
        ports.nodes,
        [
            Some(Node::Volume(VolumeId(0))),
            Some(Node::Volume(VolumeId(1))),
            None,
            None
        ]
    );
    assert_eq!(
        ports.mech,
        MechPort::Line {
            base: c.base,
            rod: c.rod
        }
    );
    assert_eq!(c.n_internal(), 0, "friction states live in w, not in e");
    let e = c.evaluate(&port_state([8e6, 3e6, 1.6, 0.03, 0.0, 0.0]));
    // 000 eq. 43 (sign of note 000-E.1); Q_A = −A_A ṡ, Q_B = A_B ṡ (000 eq. 22's −V̇)
    assert_eq!(e.force, 8e6 * c.area_a_m2 - 3e6 * c.area_b_m2);
    assert_eq!(e.flow[0], -(0.03 * c.area_a_m2));
    assert_eq!(e.flow[1], 0.03 * c.area_b_m2);
}

#[test]
fn cylinder_power_balances_hydraulic_in_mechanical_out_and_friction() {
    for law in laws() {
        let c = cyl(law);
        for x0 in POINTS {
            let at = port_state(x0);
            let e = c.evaluate(&at);
            let p = c.power(&at, &e);
            let hydraulic_in = absorbed_power(&at, &e);
            let mechanical_out = c.mechanical_power(&at, &e);
            let scale = (x0[0] * c.area_a_m2 + x0[1] * c.area_b_m2) * x0[3].abs();
            // −Σ p_i Q_i from the flows = (p_A A_A − p_B A_B) ṡ from the force law
            assert!(
                (hydraulic_in - p.supplied_w).abs() <= 1e-12 * scale,
                "{law:?} at {x0:?}: hydraulic in {hydraulic_in} vs supplied {}",
                p.supplied_w
            );
            // hydraulic in = mechanical out F ṡ + friction F_μ ṡ
            assert!(
                (hydraulic_in - mechanical_out - p.dissipated_w).abs() <= 1e-12 * scale,
                "{law:?} at {x0:?}: {hydraulic_in} vs {mechanical_out} + {}",
                p.dissipated_w
            );
            assert_eq!(p.stored_j, 0.0);
        }
    }
}

/// Runs `model` for `steps` steps and checks, at the reached state, that the element and the
/// formulations' fast path agree: the `Evaluator`'s cylinder force and friction-state rates
/// (bit for bit: the same law functions), and the volume law's ṗ against
/// (B_e/V)(Q_components + Σ Q_cylinders) with the element's displacement flows.
fn element_agrees_with_fast_path(model: Model, steps: usize) {
    let mut sim = Simulation::new(model).expect("shipped model initializes");
    for _ in 0..steps {
        sim.step().expect("shipped model steps");
    }
    let (m, st) = (sim.model(), sim.state());
    let mut ev = Evaluator::<f64>::new(m);
    ev.fstate.copy_from_slice(&st.friction);
    ev.internal.copy_from_slice(&st.internal);
    ev.evaluate(m, &st.z, &st.zd, &st.p, &st.spool, false);
    let mut inflow = st.p.iter().map(|_| 0.0).collect::<Vec<_>>();
    let mut rates = vec![0.0; st.internal.len()];
    circuit::component_flows_with(m, &st.p, &st.spool, &st.internal, &mut rates, &mut inflow);
    let mut moved = false;
    for (c, cyl) in m.cylinders().enumerate() {
        let r = m.layout.cylinder_friction(CylinderId(c));
        let mut at = PortState::zero();
        at.p[0] = st.p[cyl.vol_a.0];
        at.p[1] = st.p[cyl.vol_b.0];
        at.s = ev.motion[c].s;
        at.sd = ev.motion[c].sd;
        at.internal[..r.len()].copy_from_slice(&st.friction[r.clone()]);
        let e = cyl.evaluate(&at);
        moved |= at.sd.abs() > 1e-3;
        assert_eq!(e.force, ev.cylinder_force[c], "{}: force", cyl.name);
        assert_eq!(
            &e.internal_rate[..r.len()],
            &ev.fstate_rate[r],
            "{}: friction-state rates",
            cyl.name
        );
        for (q, n) in e.flow.iter().zip(cyl.ports().nodes.iter()) {
            if let Some(Node::Volume(v)) = n {
                inflow[v.0] += q;
            }
        }
    }
    assert!(moved, "the state reached moves a cylinder (ṡ ≠ 0)");
    for (v, vol) in m.hydraulics.volumes.iter().enumerate() {
        // the element path: chamber flows as port flows, V and the wall compliance still from
        // the node (the chambers' part of the capacitance)
        let (vv, _, wall) = volume::geometry(m, vol, VolumeId(v), &ev.motion);
        let be = fluid::effective_bulk_modulus(m.hydraulics.oil_bulk_pa, vv, wall);
        let pd = be / vv * inflow[v];
        let scale = (be / vv * ev.inflow[v]).abs().max(1.0);
        assert!(
            (pd - ev.h[v]).abs() <= 1e-9 * scale,
            "{}: ṗ element {pd} vs fast path {}",
            m.volume_names[v],
            ev.h[v]
        );
    }
}

#[test]
fn cylinder_element_agrees_with_fast_path_fourbar() {
    let model = hydraulink::compile(&spec_of("fourbar")).unwrap();
    element_agrees_with_fast_path(model, 1700);
}

#[test]
fn cylinder_element_agrees_with_fast_path_lugre_and_modified_lugre() {
    for law in ["lugre", "modified_lugre"] {
        let mut spec = spec_of("fourbar_friction");
        spec.hydraulics.cylinders[0].friction =
            toml::from_str(&format!("type = \"{law}\"")).expect("law parses");
        let model = hydraulink::compile(&spec).unwrap();
        assert!(model.cylinder(0).n_friction_states() > 0);
        element_agrees_with_fast_path(model, 1700);
    }
}

#[test]
fn cylinder_output_columns_come_from_describe() {
    let model = hydraulink::compile(&spec_of("fourbar")).unwrap();
    let cylinders = model.cylinders().cloned().collect::<Vec<_>>();
    let sim = Simulation::new(model).unwrap();
    let labels = sim.output_labels();
    let mut row = vec![0.0; sim.n_outputs()];
    sim.output_row(&mut row);
    for cyl in &cylinders {
        let mut vars = Vec::new();
        cyl.describe(&mut vars);
        let names: Vec<_> = vars.iter().map(|v| v.name.clone()).collect();
        assert_eq!(
            names,
            [
                format!("{}.length", cyl.name),
                format!("{}.velocity", cyl.name),
                format!("{}.force", cyl.name),
                format!("{}.power_w", cyl.name)
            ]
        );
        let i = labels.iter().position(|l| *l == names[0]).unwrap();
        assert_eq!(labels[i..i + 4], names[..]);
        assert_eq!(labels[i + 4], format!("{}.work", cyl.name));
        // the length column is the pin distance: inside the stroke
        let la = row[i] - cyl.retracted_length_m;
        assert!((0.0..=cyl.stroke_m).contains(&la), "{}: {la}", cyl.name);
    }
}
