//! The elements of the element model (`hydraulink::elements::element`): each law's dual-number
//! derivative over its port variables against central differences on both sides of every
//! branch switch, and the energy account (stored energy rate + dissipation = port power).

use hydraulink::elements::component::Component;
use hydraulink::elements::element::{Element, PortState};
use hydraulink::elements::hydraulics::{accumulator, check_valve, relief_valve};
use hydraulink::elements::{end_stop, spring_damper};
use hydraulink::model::{Frame, FramePoint, Node, VolumeId, V3};
use num_dual::Dual64;
use proptest::prelude::*;

use super::{close, fd};

fn relief() -> relief_valve::ReliefValve {
    relief_valve::ReliefValve {
        name: "relief".into(),
        inlet: Node::Volume(VolumeId(0)),
        outlet: Node::Source(0),
        cracking_pressure_pa: 1.4e7,
        gradient_m3_s_pa: 1e-3 / 1e6,
        smoothing_pa: 1.4e5,
        poppet: None,
    }
}

fn check() -> check_valve::CheckValve {
    check_valve::CheckValve {
        name: "check".into(),
        inlet: Node::Volume(VolumeId(0)),
        outlet: Node::Volume(VolumeId(1)),
        cracking_pressure_pa: 5e4,
        opening_range_pa: 2e5,
        flow_constant: 0.7 * 5e-5 * (2.0f64 / 870.0).sqrt(),
        laminar_dp_pa: 2e5,
    }
}

fn acc() -> accumulator::Accumulator {
    accumulator::Accumulator {
        name: "acc".into(),
        node: Node::Volume(VolumeId(0)),
        precharge_pressure_pa: 8e6,
        gas_volume_m3: 1e-3,
        exponent: 1.4,
    }
}

fn point(x: f64) -> FramePoint {
    FramePoint {
        frame: Frame::Ground,
        point_ref: V3::new(x, 0.0, 0.0),
    }
}

fn stop() -> end_stop::EndStop {
    end_stop::EndStop {
        name: "stops".into(),
        cylinder: hydraulink::elements::element::CylinderPort {
            index: 0,
            base: point(0.0),
            rod: point(1.0),
            retracted_length_m: 1.2,
            stroke_m: 0.6,
            piston_area_m2: 5e-3,
        },
        stiffness_n_m: 1.25e8,
        damping_n_s_m: 1.25e5,
        onset_m: 1.2e-3,
        max_penetration_m: 6e-3,
        engage_m: 0.0,
        cushion: None,
    }
}

fn spring() -> spring_damper::SpringDamper {
    spring_damper::SpringDamper {
        name: "spring".into(),
        end1: point(0.0),
        end2: point(1.0),
        stiffness_n_m: 2e4,
        damping_n_s_m: 300.0,
        free_length_m: 1.0,
    }
}

/// State with pressures (p0, p1) and line (s, ṡ).
fn at<S: Copy>(p0: S, p1: S, s: S, sd: S) -> PortState<S> {
    PortState {
        p: [p0, p1, p0, p0],
        s,
        sd,
        u: 1.0,
        position: 0.0,
        internal: [p0; hydraulink::elements::element::MAX_INTERNAL],
    }
}

/// ∂(flow into port 1)/∂p0 by duals and by central differences.
fn flow_slope(e: &Component, p0: f64, p1: f64) -> (f64, f64) {
    let d = e
        .evaluate(&at(
            Dual64::new(p0, 1.0),
            Dual64::from(p1),
            Dual64::from(0.0),
            Dual64::from(0.0),
        ))
        .flow[1]
        .eps;
    let f = |x: f64| e.evaluate(&at(x, p1, 0.0, 0.0)).flow[1];
    (d, fd(f, p0, 1.0))
}

/// ∂F/∂s and ∂F/∂ṡ of a line element by duals and by central differences.
fn force_slopes(e: &Component, s: f64, sd: f64) -> [(f64, f64); 2] {
    let ds = e
        .evaluate(&at(
            Dual64::from(0.0),
            Dual64::from(0.0),
            Dual64::new(s, 1.0),
            Dual64::from(sd),
        ))
        .force
        .eps;
    let dsd = e
        .evaluate(&at(
            Dual64::from(0.0),
            Dual64::from(0.0),
            Dual64::from(s),
            Dual64::new(sd, 1.0),
        ))
        .force
        .eps;
    let fs = |x: f64| e.evaluate(&at(0.0, 0.0, x, sd)).force;
    let fsd = |x: f64| e.evaluate(&at(0.0, 0.0, s, x)).force;
    [(ds, fd(fs, s, 1e-8)), (dsd, fd(fsd, sd, 1e-7))]
}

#[test]
fn relief_valve_flow_and_slope_on_each_branch() {
    let e = Component::ReliefValve(relief());
    let p_out = 1e5;
    // closed, onset, open: on each side of the two switches (p_cr and p_cr + w)
    for dp in [1.0e7, 1.39e7, 1.4005e7, 1.4139e7, 1.4141e7, 1.45e7, 1.6e7] {
        let (d, f) = flow_slope(&e, p_out + dp, p_out);
        assert!(close(d, f, 1e-9), "Δp {dp}: {d} vs {f}");
    }
    let q = |dp: f64| e.evaluate(&at(p_out + dp, p_out, 0.0, 0.0)).flow[1];
    assert_eq!(q(1.39e7), 0.0);
    // at p_cr + Δp_override + w/2 the rated flow (1e-3 m³/s)
    assert!((q(1.4e7 + 1e6 + 0.5 * 1.4e5) - 1e-3).abs() < 1e-12);
    // continuous across both switches
    for sw in [1.4e7, 1.4e7 + 1.4e5] {
        assert!((q(sw * (1.0 + 1e-12)) - q(sw * (1.0 - 1e-12))).abs() < 1e-12);
    }
}

#[test]
fn check_valve_blocks_reverse_flow_and_slope_on_each_branch() {
    let e = Component::CheckValve(check());
    let p1 = 1e6;
    for dp in [-1e6, 4e4, 6e4, 1.0e5, 1.9e5, 2.4e5, 2.6e5, 1e6, 5e6] {
        let (d, f) = flow_slope(&e, p1 + dp, p1);
        assert!(close(d, f, 1e-9), "Δp {dp}: {d} vs {f}");
    }
    let q = |dp: f64| e.evaluate(&at(p1 + dp, p1, 0.0, 0.0)).flow[1];
    assert_eq!(q(-5e6), 0.0);
    assert_eq!(q(4e4), 0.0);
    assert!(q(1e6) > 0.0);
    // mass conservation between the two ports
    let ef = e.evaluate(&at(p1 + 1e6, p1, 0.0, 0.0));
    assert_eq!(ef.flow[0], -ef.flow[1]);
}

#[test]
fn accumulator_compliance_is_the_gas_volume_slope() {
    let a = acc();
    let e = Component::Accumulator(a.clone());
    for p in [5e6, 7.99e6, 8.01e6, 1e7, 2e7] {
        let c = e.evaluate(&at(p, 0.0, 0.0, 0.0)).compliance[0];
        // C = ∂V_f/∂p = −∂V_g/∂p
        let fdc = -fd(|x| accumulator::gas_volume(&a, x), p, 1.0);
        assert!(close(c, fdc, 1e-13), "p {p}: {c} vs {fdc}");
        let dc = e
            .evaluate(&at(
                Dual64::new(p, 1.0),
                Dual64::from(0.0),
                Dual64::from(0.0),
                Dual64::from(0.0),
            ))
            .compliance[0]
            .eps;
        let fdd = fd(|x| e.evaluate(&at(x, 0.0, 0.0, 0.0)).compliance[0], p, 1.0);
        assert!(close(dc, fdd, 1e-20), "p {p}: {dc} vs {fdd}");
    }
    // stored energy: dE/dp = p ∂V_f/∂p (work of the oil on the gas)
    for p in [9e6, 1.5e7] {
        let de = fd(|x| accumulator::stored_energy(&a, x), p, 10.0);
        let c = accumulator::compliance(&a, p);
        assert!((de - p * c).abs() <= 1e-6 * de.abs(), "{de} vs {}", p * c);
    }
}

#[test]
fn end_stop_force_slopes_on_each_branch_and_energy_rate() {
    let e = Component::EndStop(stop());
    // s_ret = 1.2, stroke 0.6: stop 1 below s = 1.2, stop 2 above s = 1.8; onset 1.2 mm
    for s in [
        1.19, 1.1991, 1.1995, 1.2005, 1.5, 1.7995, 1.8005, 1.8009, 1.81,
    ] {
        for sd in [-0.05, 0.0, 0.05] {
            for (k, (d, f)) in force_slopes(&e, s, sd).into_iter().enumerate() {
                assert!(close(d, f, 1e3), "s {s} ṡ {sd} ∂{k}: {d} vs {f}");
            }
        }
    }
    // energy: d(stored)/dt + dissipated = −F ṡ (the power the stop takes from the mechanism)
    for (s, sd) in [
        (1.195, -0.02),
        (1.1995, 0.01),
        (1.803, 0.03),
        (1.805, -0.01),
    ] {
        let a0 = at(0.0, 0.0, s, sd);
        let ef = e.evaluate(&a0);
        let p = e.power(&a0, &ef);
        let h = 1e-7;
        let e_at = |x: f64| {
            let a = at(0.0, 0.0, x, sd);
            e.power(&a, &e.evaluate(&a)).stored_j
        };
        let stored_rate = fd(e_at, s, h) * sd;
        let balance = stored_rate + p.dissipated_w + ef.force * sd;
        assert!(
            balance.abs() <= 1e-6 * (ef.force * sd).abs().max(1.0),
            "s {s}: stored rate {stored_rate} + dissipated {} vs −F ṡ {}",
            p.dissipated_w,
            -ef.force * sd
        );
        assert!(p.dissipated_w >= 0.0);
    }
    // the stop pushes, never pulls: fast separation gives no force
    assert_eq!(e.evaluate(&at(0.0, 0.0, 1.1995, 10.0)).force, 0.0);
}

#[test]
fn spring_damper_slopes_and_energy_rate() {
    let e = Component::SpringDamper(spring());
    for (s, sd) in [(0.8, 0.1), (1.2, -0.3)] {
        for (d, f) in force_slopes(&e, s, sd) {
            assert!(close(d, f, 1e3), "{d} vs {f}");
        }
        let a0 = at(0.0, 0.0, s, sd);
        let ef = e.evaluate(&a0);
        let p = e.power(&a0, &ef);
        let stored_rate = spring().stiffness_n_m * (s - 1.0) * sd;
        assert!((stored_rate + p.dissipated_w + ef.force * sd).abs() < 1e-9);
    }
}

proptest! {
    #[test]
    fn relief_and_check_derivatives_match_central_differences(dp in -2e7f64..3e7, p1 in 1e5f64..1e7) {
        for e in [Component::ReliefValve(relief()), Component::CheckValve(check())] {
            let (d, f) = flow_slope(&e, p1 + dp, p1);
            // a central difference that straddles a branch switch is not a derivative: skip those
            let h = 1.0;
            let near = [1.4e7, 1.4e7 + 1.4e5, 5e4, 2.5e5, 2e5, -2e5]
                .iter()
                .any(|sw| (dp - sw).abs() < 2.0 * h);
            if !near {
                prop_assert!(close(d, f, 1e-9), "{}: Δp {}: {} vs {}", e.name(), dp, d, f);
            }
        }
    }
}

#[test]
fn element_traits_describe_their_outputs() {
    let mut v = Vec::new();
    relief().describe(&mut v);
    check().describe(&mut v);
    acc().describe(&mut v);
    stop().describe(&mut v);
    spring().describe(&mut v);
    let names: Vec<_> = v.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "relief.flow",
            "relief.power_w",
            "check.flow",
            "check.power_w",
            "acc.gas_volume",
            "acc.energy",
            "stops.force",
            "stops.penetration",
            "spring.length",
            "spring.force"
        ]
    );
}
