//! The counterbalance valve (issue 11 item 1): its law against central differences on both
//! sides of every switch (main stage closed / opening / open, check closed / opening / open,
//! laminar / turbulent), leak-tightness and loss, and a boom that holds its load on a closed
//! valve and lowers it when the pilot pressure rises.

use hydraulink::elements::component::{Component, ComponentSpec};
use hydraulink::elements::element::{PortState, MAX_INTERNAL};
use hydraulink::elements::hydraulics::check_valve::CheckValve;
use hydraulink::elements::hydraulics::counterbalance_valve::{flow, opening, CounterbalanceValve};
use hydraulink::model::{Node, VolumeId};
use num_dual::Dual64;

use super::{close, fd};
use crate::common::{run, spec_of};

fn cbv() -> CounterbalanceValve {
    let k = (2.0f64 / 870.0).sqrt();
    CounterbalanceValve {
        name: "cbv".into(),
        load: Node::Volume(VolumeId(0)),
        valve: Node::Volume(VolumeId(1)),
        pilot: Node::Volume(VolumeId(2)),
        setting_pa: 2e7,
        pilot_ratio: 4.0,
        opening_range_pa: 2e6,
        flow_constant: 0.7 * 2e-5 * k,
        laminar_dp_pa: 2e5,
        check: CheckValve {
            name: "cbv.check".into(),
            inlet: Node::Volume(VolumeId(1)),
            outlet: Node::Volume(VolumeId(0)),
            cracking_pressure_pa: 1e5,
            opening_range_pa: 2e5,
            flow_constant: 0.7 * 2e-5 * k,
            laminar_dp_pa: 2e5,
        },
    }
}

fn at<S: Copy>(pl: S, pv: S, px: S) -> PortState<S> {
    PortState {
        p: [pl, pv, px, pl],
        s: pl,
        sd: pl,
        u: 1.0,
        position: 0.0,
        internal: [pl; MAX_INTERNAL],
    }
}

#[test]
fn counterbalance_law_matches_central_differences_on_both_sides_of_every_switch() {
    let v = cbv();
    let e = Component::CounterbalanceValve(v.clone());
    // ξ = (p_L + 4 p_x − 20 MPa)/2 MPa; points on both sides of ξ = 0 and ξ = 1, with the main
    // stage's Δp turbulent and laminar, and the check closed, opening and open
    let pts = [
        // main stage: closed just below ξ = 0, opening just above, open just below and above ξ = 1
        (1.2e7, 1e6, 1.9e6 - 2e3),
        (1.2e7, 1e6, 2e6 + 2e3),
        (1.2e7, 1e6, 2.5e6 - 2e3),
        (1.2e7, 1e6, 2.5e6 + 2e3),
        // main stage half open, laminar (|Δp| < 2e5) on both sides of Δp = 0
        (1.2e7, 1.2e7 - 1e5, 2.25e6),
        (1.2e7, 1.2e7 + 5e4, 2.25e6),
        // check: closed below the cracking pressure, opening, fully open (main closed)
        (5e6, 5e6 + 0.9e5, 0.0),
        (5e6, 5e6 + 1.5e5, 0.0),
        (5e6, 5e6 + 2.9e5, 0.0),
        (5e6, 5e6 + 3.1e5, 0.0),
        (5e6, 8e6, 0.0),
    ];
    for (pl, pv, px) in pts {
        for k in 0..3 {
            let mut x = [Dual64::from(pl), Dual64::from(pv), Dual64::from(px)];
            x[k].eps = 1.0;
            let exact = e.evaluate(&at(x[0], x[1], x[2])).flow[1].eps;
            let f = |y: f64| {
                let mut p = [pl, pv, px];
                p[k] = y;
                e.evaluate(&at(p[0], p[1], p[2])).flow[1]
            };
            // h = 1 Pa, well inside every regime (the points are ≥ 2 kPa from each switch)
            let c = fd(f, [pl, pv, px][k], 1.0);
            assert!(
                close(exact, c, exact.abs().max(c.abs()).max(1e-15)),
                "at ({pl}, {pv}, {px}): d Q / d p[{k}] exact {exact:e} vs fd {c:e}"
            );
        }
        // the opening's slope too, in p_L and p_x
        for k in [0usize, 2] {
            let mut x = [Dual64::from(pl), Dual64::from(px)];
            x[k / 2].eps = 1.0;
            let exact = opening(&v, x[0], x[1]).eps;
            let f = |y: f64| {
                if k == 0 {
                    opening(&v, y, px)
                } else {
                    opening(&v, pl, y)
                }
            };
            let c = fd(f, [pl, pv, px][k], 1.0);
            assert!(
                (exact - c).abs() <= 1e-9,
                "opening at ({pl}, {px}): {exact} vs {c}"
            );
        }
    }
}

#[test]
fn counterbalance_is_leak_tight_closed_and_only_dissipates() {
    let v = cbv();
    // closed (ξ ≤ 0) and no reverse Δp above the cracking pressure: exactly no flow
    for (pl, pv, px) in [(1.5e7, 1e5, 0.0), (1.9e7, 1.9e7, 2.5e4), (5e6, 5.1e6, 1e6)] {
        assert_eq!(flow(&v, pl, pv, px), 0.0, "({pl}, {pv}, {px})");
    }
    // open: flow from load to valve side; check: from valve side to load
    assert!(flow(&v, 1.2e7, 1e6, 3e6) > 0.0);
    assert!(flow(&v, 5e6, 8e6, 0.0) < 0.0);
    // the loss (p_L − p_V) Q is never negative
    let e = Component::CounterbalanceValve(v);
    for pl in [1e6, 1.2e7, 2.1e7] {
        for pv in [1e5, 1.2e7, 2e7] {
            for px in [0.0, 1e6, 3e6] {
                let a = at(pl, pv, px);
                let p = e.power(&a, &e.evaluate(&a));
                assert!(
                    p.dissipated_w >= 0.0,
                    "({pl}, {pv}, {px}): {}",
                    p.dissipated_w
                );
            }
        }
    }
}

/// The shipped boom with a counterbalance valve in its piston-side line: the cylinder's
/// chamber VA is the load node, a new volume VV between the valve and the directional valve's
/// port A the valve side, the rod-side line VB the pilot. The command lifts the boom (free flow
/// through the check), holds (valve centred), then lowers (P → B: the pilot opens the valve).
/// The closed-centre directional valve traps the rod side at ≈ 6.3 MPa in neutral (load side
/// ≈ 6.2 MPa), so the setting p_s = 40 MPa sits above p_A + ψ p_B ≈ 31 MPa there; lowering
/// raises the rod side to ≈ 12 MPa, and p_A + ψ p_B ≈ 56 MPa opens it fully.
fn boom_with_counterbalance(lower_at: f64) -> hydraulink::ModelSpec {
    let mut spec = spec_of("boom");
    let mut vv = spec.hydraulics.volumes[1].clone();
    vv.name = "VV".into();
    vv.p0_pa = Some(1e6);
    // a hose of 1 L: the check opening into a stiffer one (0.1 L) diverges Newton at 1 ms
    vv.hose_volume_m3 = 1e-3;
    spec.hydraulics.volumes.push(vv);
    spec.hydraulics.valves[0].port_a = "VV".into();
    let cbv: ComponentSpec = toml::from_str(
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
    .unwrap();
    spec.elements.push(cbv);
    // lift 0.5–1.5 s, hold, lower from `lower_at` for 0.5 s, hold
    spec.inputs[0] = toml::from_str(&format!(
        r#"
name = "U"
signal = {{ type = "piecewise_constant", times = [0.0, 0.5, 1.5, {lower_at}, {end}], values = [0.0, 10.0, 0.0, -10.0, 0.0] }}
"#,
        end = lower_at + 0.5
    ))
    .unwrap();
    spec.solver.duration_s = lower_at + 1.0;
    spec
}

#[test]
fn boom_holds_on_a_closed_counterbalance_valve_and_lowers_on_pilot_pressure() {
    let lower_at = 5.5;
    let model = hydraulink::compile(&boom_with_counterbalance(lower_at)).unwrap();
    let r = run(model);
    let s = r.col("cylinder.length");
    let q = r.col("cbv.flow");
    let pa = r.col("VA.p");
    let pb = r.col("VB.p");
    let k = |t: f64| (t / 1e-3).round() as usize;
    // lifted by the free flow through the check (flow into the load node: Q < 0)
    assert!(s[k(1.5)] > s[0] + 0.05, "lift: {} → {}", s[0], s[k(1.5)]);
    assert!(q[k(1.0)] < 0.0);
    // held (t = 2.0 → 5.5 s): the valve is closed (p_L + ψ p_x < p_s) and passes no flow at all
    for i in k(2.0)..k(lower_at) {
        assert!(
            pa[i] + 4.0 * pb[i] < 4.0e7,
            "open at t = {}: p_A {} p_B {}",
            i as f64 * 1e-3,
            pa[i],
            pb[i]
        );
        assert_eq!(q[i], 0.0, "flow at t = {}", i as f64 * 1e-3);
    }
    // the rod settles on the two trapped oil columns within about 2 s (cylinder friction damps
    // it); over the last second of the hold it moves less than 0.1 µm (it moved 38 µm from
    // 2.0 s to 3.5 s while settling, and any leak past the valve would keep it sinking)
    let drift = s[k(lower_at)] - s[k(lower_at - 1.0)];
    eprintln!(
        "boom on counterbalance: lifted {:.4} m, p_A = {:.3} MPa held, drift over the last \
         second {drift:.2e} m",
        s[k(1.5)] - s[0],
        pa[k(lower_at)] * 1e-6
    );
    assert!(drift.abs() < 1e-7, "drift {drift} m while held");
    // lowered: the pilot (rod side) opens the valve and the rod retracts
    let end = s.len() - 1;
    let opened = (k(lower_at)..end).any(|i| q[i] > 0.0);
    assert!(opened, "the valve never opened");
    eprintln!(
        "boom on counterbalance: lowered {:.4} m",
        s[k(lower_at)] - s[end]
    );
    assert!(
        s[end] < s[k(lower_at)] - 0.01,
        "lower: {} → {}",
        s[k(lower_at)],
        s[end]
    );
}
