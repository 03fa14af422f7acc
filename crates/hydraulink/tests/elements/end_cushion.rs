//! The end cushion of an end stop (issue 24, item 3: a throttled cushion volume): its law
//! against central differences on both sides of every switch (the spear's entry and chamfer,
//! the blend into the needle area, the direction of motion), its energy account (it only
//! dissipates), the defaults and rejections of its fields, and a heavy boom driven into its
//! retracted end at relief: without a cushion the stop takes about twice the cylinder's force
//! at relief, with a cushion sized by the module's constant-deceleration rule well under 1.5
//! times it.

use hydraulink::elements::component::Component;
use hydraulink::elements::element::{Context, CylinderPort, Element, PortState};
use hydraulink::elements::end_stop::{self, Cushion, EndStop, EndStopSpec};
use hydraulink::model::{Frame, FramePoint, V3};
use num_dual::Dual64;

use super::{close, fd};

/// Oil density [kg/m³] and bulk modulus [Pa] of the shipped excavator.
const RHO: f64 = 870.0;
const BULK: f64 = 1.5e9;

fn point(x: f64) -> FramePoint {
    FramePoint {
        frame: Frame::Ground,
        point_ref: V3::new(x, 0.0, 0.0),
    }
}

/// The shipped excavator's boom cylinder: Ø169.7 mm (two Ø120 cylinders as one), stroke 1.3 m,
/// retracted 2.0 m.
fn boom_cylinder() -> CylinderPort {
    let d: f64 = 0.169705627485;
    CylinderPort {
        index: 0,
        base: point(0.0),
        rod: point(1.0),
        retracted_length_m: 2.0,
        stroke_m: 1.3,
        piston_area_m2: 0.25 * std::f64::consts::PI * d * d,
    }
}

/// The end stop `end_stop` compiles from `spec` for `boom_cylinder()` (its defaults: k =
/// 10 A_A B / L, c = k · 1 ms, w = L/500).
fn compile(spec: &EndStopSpec) -> Result<EndStop, hydraulink::error::ModelError> {
    let cyl = |name: &str| (name == "boom_cyl").then(boom_cylinder);
    let cx = Context {
        prefix: "elements[0]".into(),
        element: "end stop 'stops'".into(),
        node: &|_| None,
        marker: &|_, _| None,
        body: &|_| None,
        input: &|_| None,
        joint_axis: &|_| None,
        joint_type: &|_| None,
        cylinder: &cyl,
        oil_bulk_pa: BULK,
        density_kg_m3: RHO,
        step_s: 1e-3,
    };
    spec.compile(&cx)
}

fn spec() -> EndStopSpec {
    EndStopSpec {
        name: "stops".into(),
        cylinder: "boom_cyl".into(),
        stiffness_n_m: None,
        damping_n_s_m: None,
        onset_m: None,
        max_penetration_m: None,
        engage_m: None,
        cushion_length_m: None,
        cushion_diameter_m: None,
        cushion_throttle_area_m2: None,
        cushion_needle_area_m2: None,
        cushion_discharge_coefficient: None,
    }
}

/// A 30 mm cushion with the default throttle.
fn cushioned() -> EndStop {
    compile(&EndStopSpec {
        cushion_length_m: Some(0.03),
        ..spec()
    })
    .expect("a valid cushion")
}

fn at<S: Copy + From<f64>>(s: S, sd: S) -> PortState<S> {
    PortState {
        p: [S::from(0.0); 4],
        s,
        sd,
        u: 1.0,
        position: 0.0,
        internal: [S::from(0.0); hydraulink::elements::element::MAX_INTERNAL],
    }
}

/// ∂F/∂s and ∂F/∂ṡ by duals and by central differences.
fn slopes(e: &Component, s: f64, sd: f64, hs: f64) -> [(f64, f64); 2] {
    let ds = e
        .evaluate(&at(Dual64::new(s, 1.0), Dual64::from(sd)))
        .force
        .eps;
    let dsd = e
        .evaluate(&at(Dual64::from(s), Dual64::new(sd, 1.0)))
        .force
        .eps;
    let fs = |x: f64| e.evaluate(&at(x, sd)).force;
    let fsd = |x: f64| e.evaluate(&at(s, x)).force;
    [(ds, fd(fs, s, hs)), (dsd, fd(fsd, sd, 1e-7))]
}

#[test]
fn cushion_defaults_follow_the_cylinder_size() {
    let stop = cushioned();
    let c = stop.cushion.expect("cushion");
    let cyl = boom_cylinder();
    let bore = (4.0 * cyl.piston_area_m2 / std::f64::consts::PI).sqrt();
    // d_c = 0.7 D: A_c = A_A (1 − 0.49)
    assert!((c.area_m2 - 0.51 * cyl.piston_area_m2).abs() < 1e-12 * cyl.piston_area_m2);
    // a₀: Δp_c = 30 MPa at 0.3 m/s at the entry (the orifice law read backwards)
    let dp = 0.5 * RHO * (c.area_m2 * 0.3 / (0.7 * c.entry_area_m2)).powi(2);
    assert!((dp - 30e6).abs() < 1e-6 * 30e6, "{dp}");
    assert_eq!(c.needle_area_m2, 0.1 * c.entry_area_m2);
    assert_eq!(c.discharge_coefficient, 0.7);
    assert_eq!(c.length_m, 0.03);
    // the stop itself keeps its defaults
    assert_eq!(stop.onset_m, 1.3 / 500.0);
    assert!(bore > 0.16 && bore < 0.17);
    // without the cushion fields, no cushion and the two outputs of before
    let plain = compile(&spec()).expect("plain stop");
    assert_eq!(plain.cushion, None);
    let mut v = Vec::new();
    plain.describe(&mut v);
    assert_eq!(v.len(), 2);
    v.clear();
    stop.describe(&mut v);
    let names: Vec<_> = v.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "stops.force",
            "stops.penetration",
            "stops.cushion_pa",
            "stops.contact_force"
        ]
    );
}

#[test]
fn cushion_fields_are_checked() {
    let err = |s: EndStopSpec| compile(&s).expect_err("rejected");
    let cases: [(EndStopSpec, &str, &str); 7] = [
        (
            EndStopSpec {
                cushion_throttle_area_m2: Some(1e-5),
                ..spec()
            },
            "elements[0].cushion_throttle_area_m2",
            "needs `cushion_length_m`",
        ),
        (
            EndStopSpec {
                cushion_length_m: Some(-0.03),
                ..spec()
            },
            "elements[0].cushion_length_m",
            "must be > 0",
        ),
        (
            EndStopSpec {
                cushion_length_m: Some(0.66),
                ..spec()
            },
            "elements[0].cushion_length_m",
            "less than half the stroke",
        ),
        (
            EndStopSpec {
                cushion_length_m: Some(0.03),
                cushion_diameter_m: Some(0.2),
                ..spec()
            },
            "elements[0].cushion_diameter_m",
            "less than the bore",
        ),
        (
            EndStopSpec {
                cushion_length_m: Some(0.03),
                cushion_throttle_area_m2: Some(0.02),
                ..spec()
            },
            "elements[0].cushion_throttle_area_m2",
            "less than the cushion's annulus",
        ),
        (
            EndStopSpec {
                cushion_length_m: Some(0.03),
                cushion_throttle_area_m2: Some(1e-5),
                cushion_needle_area_m2: Some(2e-5),
                ..spec()
            },
            "elements[0].cushion_needle_area_m2",
            "at most the throttle area",
        ),
        (
            EndStopSpec {
                cushion_length_m: Some(0.03),
                cushion_discharge_coefficient: Some(f64::NAN),
                ..spec()
            },
            "elements[0].cushion_discharge_coefficient",
            "finite",
        ),
    ];
    for (s, path, text) in cases {
        let e = err(s);
        assert_eq!(e.path, path, "{e}");
        assert!(e.to_string().contains(text), "{e}");
    }
}

#[test]
fn cushion_force_slopes_on_each_side_of_every_switch() {
    let stop = cushioned();
    let c = stop.cushion.expect("cushion");
    let e = Component::EndStop(stop.clone());
    let (s0, l) = (2.0, 1.3);
    let (lc, w) = (c.length_m, stop.onset_m);
    // retracted end (stop 1, d = −(s − s0)) and extended end (stop 2, d = s − s0 − L): the
    // cushion's entry (x = 0), the end of its chamfer (x = L_c/10), the blend into the needle
    // area (x = L_c ± w/2) and the metal stop (x = L_c, and L_c + w)
    let depths = [
        -0.002,
        0.0005,
        0.1 * lc - 1e-4,
        0.1 * lc + 1e-4,
        0.5 * lc,
        lc - 0.5 * w - 1e-4,
        lc - 0.25 * w,
        lc + 0.25 * w,
        lc + 0.5 * w + 1e-4,
        lc + w + 1e-4,
    ];
    let mut checked = 0;
    for x in depths {
        // stop 1: d₁ = −l = x − L_c; stop 2: d₂ = l − L = x − L_c
        let d = x - lc;
        for (s, into) in [(s0 - d, -1.0), (s0 + l + d, 1.0)] {
            for v in [0.0, 0.02, 0.25] {
                for sd in [into * v, -into * v] {
                    for (k, (a, b)) in slopes(&e, s, sd, 1e-7).into_iter().enumerate() {
                        let scale = e.evaluate(&at(s, sd)).force.abs() / 1e-4 + 1e3;
                        if k == 1 && sd == 0.0 {
                            // at ṡ = 0 the central difference straddles the one-way switch, where
                            // F_c ∝ ḋ² on one side only: C¹ but not C², so the quotient is off by
                            // K h / 2 with F_c(h) = K h² into the end; the dual slope is 0
                            let h = 1e-7;
                            let k_h2 = c.force(d, h);
                            assert!(
                                (a - b).abs() <= k_h2 / h + 1e-6 * scale,
                                "x {x} ṡ 0: {a} vs {b}"
                            );
                        } else {
                            assert!(close(a, b, scale), "x {x} ṡ {sd} ∂{k}: {a} vs {b}");
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, depths.len() * 2 * 3 * 2 * 2);
    // one-way: leaving the end, only the metal stop's elastic force; entering, more
    let f = |s: f64, sd: f64| e.evaluate(&at(s, sd)).force;
    let s_mid = s0 - (0.5 * lc - lc); // x = L_c/2 at the retracted end
    assert_eq!(f(s_mid, 0.25), 0.0);
    assert!(f(s_mid, -0.25) > 0.0);
    // outside the cushion nothing
    assert_eq!(f(s0 + 0.5 * l, -0.25), 0.0);
    assert_eq!(f(s0 + lc + 1e-4, -0.25), 0.0);
    // the cushion pressure output reads Δp_c on the half-closed taper: at x = L_c/2,
    // a² = a_n² + (a₀² − a_n²)/2
    let a0 = at(s_mid, -0.25);
    let ef = e.evaluate(&a0);
    let mut out = [0.0; hydraulink::elements::element::MAX_OUTPUTS];
    assert_eq!(e.outputs(&a0, &ef, &mut out), 4);
    let a2 = c.needle_area_m2.powi(2) + 0.5 * (c.entry_area_m2.powi(2) - c.needle_area_m2.powi(2));
    let dp = 0.5 * RHO * (c.area_m2 * 0.25 / c.discharge_coefficient).powi(2) / a2;
    assert!((out[2] - dp).abs() <= 1e-12 * dp, "{} vs {dp}", out[2]);
    assert!((ef.force - dp * c.area_m2).abs() <= 1e-12 * ef.force);
    assert_eq!(out[3], 0.0); // no metal contact yet
}

#[test]
fn cushion_only_dissipates() {
    let stop = cushioned();
    let lc = stop.cushion.expect("cushion").length_m;
    let e = Component::EndStop(stop.clone());
    let (s0, l) = (2.0, 1.3);
    for x in [0.001, 0.01, 0.029, 0.0301, 0.032] {
        let d = x - lc;
        for (s, sd) in [
            (s0 - d, -0.2),
            (s0 - d, 0.2),
            (s0 + l + d, 0.2),
            (s0 + l + d, -0.2),
        ] {
            let a = at(s, sd);
            let ef = e.evaluate(&a);
            let p = e.power(&a, &ef);
            assert!(p.dissipated_w >= 0.0, "x {x} ṡ {sd}: {}", p.dissipated_w);
            // d(stored)/dt + dissipated = −F ṡ (the power the stop takes from the mechanism)
            let stored = |y: f64| {
                let b = at(y, sd);
                e.power(&b, &e.evaluate(&b)).stored_j
            };
            let balance = fd(stored, s, 1e-8) * sd + p.dissipated_w + ef.force * sd;
            assert!(
                balance.abs() <= 1e-6 * (ef.force * sd).abs().max(1.0),
                "x {x} ṡ {sd}: {balance}"
            );
        }
    }
}

/// Peak |force| of `stop` [N] (and the energy it dissipated [J]) when a mass `m` [kg] runs at
/// `v0` [m/s] into the retracted end of `boom_cylinder()`, pushed by the cylinder's oil: a
/// flow-driven chamber of stiffness K_h = 2 A_A B / L whose force F_h follows ḞF_h = K_h (v₀ − ṡ),
/// clamped at the relief force `f_relief`. Symplectic Euler at 1 µs, 0.6 s past the entry.
fn drive_into_end(stop: &EndStop, m: f64, v0: f64, f_relief: f64) -> (f64, f64) {
    let cyl = boom_cylinder();
    let e = Component::EndStop(stop.clone());
    let k_h = 2.0 * cyl.piston_area_m2 * BULK / cyl.stroke_m;
    let dt = 1e-6;
    // retracting (ṡ = −v0) from 40 mm before the end, with the oil's force balancing the
    // steady motion (F_h = 0)
    let (mut s, mut sd, mut f_h) = (cyl.retracted_length_m + 0.04, -v0, 0.0f64);
    let (mut peak, mut dissipated, mut s_min) = (0.0f64, 0.0, s);
    let n = ((0.04 / v0 + 0.6) / dt) as usize;
    for _ in 0..n {
        let a = at(s, sd);
        let ef = e.evaluate(&a);
        peak = peak.max(ef.force.abs());
        s_min = s_min.min(s);
        dissipated += e.power(&a, &ef).dissipated_w * dt;
        // the oil pushes toward the end (−): F_h on the line, clamped at the relief
        f_h = (f_h + k_h * (v0 + sd) * dt).clamp(-f_relief, f_relief);
        sd += (ef.force - f_h) / m * dt;
        s += sd * dt;
    }
    // the mass reached the end (within the stop's onset) and the stop held it; after the
    // impact it rocks on the undamped oil column of this drive, so it need not be at rest
    let travel = cyl.retracted_length_m - s_min;
    assert!(travel > -stop.onset_m, "it stopped {} m short", -travel);
    assert!(travel < stop.max_penetration_m, "overrun {travel} m");
    (peak, dissipated)
}

/// The boom lowered onto its retracted stop (issue 24: 2,075 kN, 2.5 times the cylinder's force
/// at relief): a reflected mass of 150 t at 0.25 m/s, pushed at up to the relief force of the
/// 37.45 MPa boom relief. The plain stop takes about twice that force; a 30 mm cushion sized
/// by the constant-deceleration rule for this mass, speed and drive stays well under 1.5 times.
#[test]
fn a_sized_cushion_keeps_the_boom_stop_force_under_one_and_a_half_relief_forces() {
    let cyl = boom_cylinder();
    let f_relief = 37.45e6 * cyl.piston_area_m2;
    let (m, v0, lc) = (1.5e5, 0.25, 0.03);
    let plain = compile(&spec()).expect("plain stop");
    let (peak_plain, _) = drive_into_end(&plain, m, v0, f_relief);
    // the rule: p_c = (½ m v₀² + F_d L_c)/(A_c L_c), a₀ = A_c v₀/(C_d √(2 p_c/ρ)), a_n = a₀/10
    let area = cyl.piston_area_m2 * (1.0 - 0.49);
    let p_c = end_stop::cushion_design_pressure(m, v0, f_relief, area, lc);
    let a0 = end_stop::cushion_entry_area(area, v0, p_c, 0.7, RHO);
    let sized = compile(&EndStopSpec {
        cushion_length_m: Some(lc),
        cushion_throttle_area_m2: Some(a0),
        cushion_needle_area_m2: Some(0.1 * a0),
        ..spec()
    })
    .expect("a valid cushion");
    let (peak, dissipated) = drive_into_end(&sized, m, v0, f_relief);
    eprintln!(
        "relief force {:.0} kN; peak stop force {:.0} kN plain ({:.2}×), {:.0} kN cushioned \
         ({:.2}×, design {:.2}×); cushion dissipated {:.1} kJ",
        f_relief / 1e3,
        peak_plain / 1e3,
        peak_plain / f_relief,
        peak / 1e3,
        peak / f_relief,
        area * p_c / f_relief,
        dissipated / 1e3
    );
    assert!(peak_plain > 1.5 * f_relief, "{peak_plain}");
    assert!(peak < 1.3 * f_relief, "{peak}");
    // the cushion took at least the kinetic energy (plus the drive's work over its length)
    assert!(dissipated >= 0.5 * m * v0 * v0, "{dissipated}");
    // the default throttle (0.3 m/s at 30 MPa) on the same length also lowers the peak
    let (peak_default, _) = drive_into_end(&cushioned(), m, v0, f_relief);
    assert!(peak_default < peak_plain, "{peak_default} vs {peak_plain}");
}

/// A cushion whose fields are given directly (no defaults): the `Cushion` is plain data.
#[test]
fn a_cushion_written_by_hand_is_the_compiled_one() {
    let stop = compile(&EndStopSpec {
        cushion_length_m: Some(0.025),
        cushion_diameter_m: Some(0.12),
        cushion_throttle_area_m2: Some(4e-5),
        cushion_needle_area_m2: Some(2e-6),
        cushion_discharge_coefficient: Some(0.65),
        ..spec()
    })
    .expect("valid");
    let cyl = boom_cylinder();
    assert_eq!(
        stop.cushion,
        Some(Cushion {
            length_m: 0.025,
            area_m2: cyl.piston_area_m2 - 0.25 * std::f64::consts::PI * 0.12 * 0.12,
            entry_area_m2: 4e-5,
            needle_area_m2: 2e-6,
            discharge_coefficient: 0.65,
            density_kg_m3: RHO,
            blend: (1.3 / 500.0) / 0.025,
        })
    );
}
