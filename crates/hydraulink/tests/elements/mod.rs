//! Element laws: the dual-number derivatives (which build the Newton tangent) agree with central
//! differences, on both sides of every branch switch (STYLE conventions 5 and 8).

use hydraulink::elements::hydraulics::{cylinder as cylinder_law, fluid, orifice, valve_4_3};
use hydraulink::model::{Cylinder, Frame, FramePoint, Friction, Node, Valve43, VolumeId, V3};
use num_dual::Dual64;
use proptest::prelude::*;

mod counterbalance_valve;
mod cylinder;
mod end_cushion;
mod flow_control_valve;
mod friction;
mod hydraulic_motor;
mod inputs;
mod new_elements;
mod old_components;
mod port_relief;
mod pump_regulators;
mod pumps;
mod relief_poppet;
mod valve_elements;
mod valve_range;

#[path = "../support/loads.rs"]
mod loads;

fn d<F: Fn(Dual64) -> Dual64>(f: F, x: f64) -> f64 {
    f(Dual64::new(x, 1.0)).eps
}

fn fd<F: Fn(f64) -> f64>(f: F, x: f64, h: f64) -> f64 {
    (f(x + h) - f(x - h)) / (2.0 * h)
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    // central differences with h ≈ 1e-4 of the scale: O(h²) truncation ≈ 1e-8 relative
    (a - b).abs() <= 1e-6 * scale.abs().max(a.abs()).max(1e-300)
}

fn valve() -> Valve43 {
    Valve43 {
        name: "DCV".into(),
        p: Node::Source(0),
        t: Node::Source(1),
        a: Node::Volume(VolumeId(0)),
        b: Node::Volume(VolumeId(1)),
        flow_constant: 2.138e-8,
        time_constant_s: 4.5e-3,
        laminar_dp_pa: 2e5,
        input: 0,
        spool0: 0.0,
        input_range: [-10.0, 10.0],
        open_centre: None,
    }
}

fn cyl(friction: Friction) -> Cylinder {
    let p = FramePoint {
        frame: Frame::Ground,
        point_ref: V3::zeros(),
    };
    Cylinder {
        name: "c".into(),
        base: p,
        rod: p,
        area_a_m2: 5.0e-3,
        area_b_m2: 4.0e-3,
        stroke_m: 1.1,
        retracted_length_m: 1.1,
        vol_a: VolumeId(0),
        vol_b: VolumeId(1),
        wall_bulk_pa: Some(3.15e10),
        friction,
    }
}

proptest! {
    #[test]
    fn orifice_flow_derivative(dp in -1e7f64..1e7, tr in 1e4f64..5e5) {
        // keep away from the kink itself, where the one-sided slopes differ by design
        prop_assume!((dp.abs() - tr).abs() > 1e-3 * tr);
        let h = 1e-4 * tr.min(dp.abs().max(tr));
        let a = d(|x| orifice::flow(1e-6, x, tr), dp);
        let b = fd(|x| orifice::flow(1e-6, x, tr), dp, h);
        prop_assert!(close(a, b, a), "dp {dp}: {a} vs {b}");
    }

    #[test]
    fn valve_flow_derivatives(u in -10f64..10.0, pa in 1e5f64..7.5e6, pb in 1e5f64..7.5e6) {
        let v = valve();
        let (pp, pt) = (7.6e6, 1e5);
        for (port, p0) in [(0, pa), (1, pb)] {
            let f = |x: Dual64| {
                let (a, b) = if port == 0 { (x, Dual64::from(pb)) } else { (Dual64::from(pa), x) };
                let q = valve_4_3::flows(&v, u, Dual64::from(pp), Dual64::from(pt), a, b);
                q.into_a + q.into_b * 3.0
            };
            let fr = |x: f64| {
                let (a, b) = if port == 0 { (x, pb) } else { (pa, x) };
                let q = valve_4_3::flows(&v, u, pp, pt, a, b);
                q.into_a + q.into_b * 3.0
            };
            // avoid straddling the laminar kinks at Δp = ±2e5
            let near_kink = [pp - p0, p0 - pt].iter().any(|dp| (dp.abs() - 2e5).abs() < 100.0);
            prop_assume!(!near_kink);
            let a = d(f, p0);
            let b = fd(fr, p0, 10.0);
            prop_assert!(close(a, b, a.abs().max(1e-14)), "port {port}: {a} vs {b}");
        }
    }

    #[test]
    fn cylinder_force_derivatives(pa in 0f64..2e7, pb in 0f64..2e7, sd in -0.2f64..0.2) {
        for fr in [Friction::None, Friction::Viscous { c: 1e5 }, Friction::Efficiency { eta: 0.88, vs: 1e-3 }] {
            let c = cyl(fr);
            // the efficiency law has |F_h|: stay off F_h = 0
            prop_assume!((pa * c.area_a_m2 - pb * c.area_b_m2).abs() > 10.0);
            let a = d(|x| cylinder_law::force(&c, x, Dual64::from(pb), Dual64::from(sd)), pa);
            let b = fd(|x| cylinder_law::force(&c, x, pb, sd), pa, 1.0);
            prop_assert!(close(a, b, c.area_a_m2));
            let a = d(|x| cylinder_law::force(&c, Dual64::from(pa), Dual64::from(pb), x), sd);
            let b = fd(|x| cylinder_law::force(&c, pa, pb, x), sd, 1e-7);
            // scale of ∂F/∂ṡ: the steepest slope of the law (friction build-up (1 − η)|F_h|/v_s,
            // or c); round-off of the difference quotient is ≈ ε|F|/h relative to it.
            let scale = (pa * c.area_a_m2 + pb * c.area_b_m2) * 0.12 / 1e-3 + 1e5;
            prop_assert!(close(a, b, scale), "{fr:?}: {a} vs {b}");
        }
    }

    #[test]
    fn effective_bulk_modulus_derivative(v in 1e-5f64..1e-2, wall in 0f64..1e-11) {
        let a = d(|x| fluid::effective_bulk_modulus(1.5e9, x, Dual64::from(wall)), v);
        let b = fd(|x| fluid::effective_bulk_modulus(1.5e9, x, wall), v, 1e-4 * v);
        prop_assert!(close(a, b, a.abs().max(1.0)));
    }
}

#[test]
fn spool_step_is_the_trapezoidal_rule() {
    // U₊ − U = Δt/2 (U̇(U, U_ref,k) + U̇(U₊, U_ref,k+1)) (000 eq. 27, note 000-A.4)
    let (u, tau, dt) = (1.3, 4.547e-3, 1e-3);
    for (r0, r1) in [(10.0, 10.0), (2.0, 7.5)] {
        let up = valve_4_3::spool_step(u, r0, r1, tau, dt);
        let rhs =
            0.5 * dt * (valve_4_3::spool_rate(u, r0, tau) + valve_4_3::spool_rate(up, r1, tau));
        assert!((up - u - rhs).abs() < 1e-13);
    }
}
