//! The `obb_contact` element against box obstacles with several contact points: the force,
//! point and couple against dual numbers and central differences on both sides of the contact
//! onset and in every regime (one corner inside the damping ramp, a face, a face of the body
//! box pressed by the obstacle's edge); a brick resting on a box (Σ K d_i = m g); the energy
//! balance of a brick tumbling onto a box under two formulations; the hit counter of a bouncing
//! brick; a formulation without body ports refusing the element by name.

use super::element::pose_at;
use crate::common::{run, spec_from};
use hydraulink::contact::hits::HitCounter;
use hydraulink::contact::obb::{box_box, manifold, Obb};
use hydraulink::elements::element::Element;
use hydraulink::elements::ids::{AxisId, Frame};
use hydraulink::elements::obb_contact::{ObbContact, Obstacle};
use nalgebra::{Matrix3, Rotation3, Vector3};
use num_dual::Dual64;

type V = Vector3<f64>;

const K: f64 = 1.0e6;
const C: f64 = 500.0;
const RAMP: f64 = 1e-4;

fn brick(obstacles: Vec<Obstacle>) -> ObbContact {
    ObbContact {
        name: "c".into(),
        frame: Frame::Link(AxisId(0)),
        center: V::zeros(),
        axes: Matrix3::identity(),
        half: V::new(0.2, 0.1, 0.15),
        stiffness: K,
        damping: C,
        damping_ramp_m: RAMP,
        obstacles,
        hit_gap_s: 0.1,
    }
}

/// A table: a box whose top face is y = 0.
fn table() -> Obstacle {
    Obstacle::Box(Obb {
        center: V::new(0.0, -0.5, 0.0),
        axes: Matrix3::identity(),
        half: V::new(1.0, 0.5, 1.0),
    })
}

/// A thin pole along y through x = 0, z = 0, turned 30° about its axis.
fn pole() -> Obstacle {
    Obstacle::Box(Obb {
        center: V::new(0.0, 0.0, 0.0),
        axes: *Rotation3::from_euler_angles(0.0, std::f64::consts::FRAC_PI_6, 0.0).matrix(),
        half: V::new(0.05, 1.5, 0.05),
    })
}

/// Central differences of force, point and couple along the motion at parameter t0 against the
/// dual pass; returns the depth there.
fn check_derivatives(
    name: &str,
    e: &ObbContact,
    t0: f64,
    o: V,
    v: V,
    w: V,
    r: Matrix3<f64>,
) -> f64 {
    let f = |t: f64| {
        let b = e.evaluate_body(&pose_at(t, o, v, w, r), 1.0);
        (b.effort.vector, b.torque, b.at.s, b.effort.force)
    };
    let bd = e.evaluate_body(&pose_at(Dual64::new(t0, 1.0), o, v, w, r), 1.0);
    let h = 1e-8;
    let (fp, tp, _, _) = f(t0 + h);
    let (fm, tm, _, _) = f(t0 - h);
    for i in 0..3 {
        let cd_f = (fp[i] - fm[i]) / (2.0 * h);
        let cd_t = (tp[i] - tm[i]) / (2.0 * h);
        let (df, dt) = (bd.effort.vector[i].eps, bd.torque[i].eps);
        assert!(
            (df - cd_f).abs() <= 1e-5 * (1.0 + cd_f.abs()),
            "{name} at t = {t0}: F[{i}] dual {df} vs CD {cd_f}"
        );
        assert!(
            (dt - cd_t).abs() <= 1e-5 * (1.0 + cd_t.abs()),
            "{name} at t = {t0}: T[{i}] dual {dt} vs CD {cd_t}"
        );
    }
    f(t0).2
}

#[test]
fn box_contact_derivatives_on_both_sides_of_onset_and_in_each_regime() {
    let r = *Rotation3::from_euler_angles(0.05, -0.1, 0.2).matrix();
    // falling onto the table, tilted: the lowest corner crosses y = 0 at some t_on
    let (o, v, w) = (
        V::new(0.1, 0.2, 0.0),
        V::new(0.3, -1.0, 0.2),
        V::new(0.4, -0.3, 0.8),
    );
    let e = brick(vec![table()]);
    let depth = |t: f64| e.evaluate_body(&pose_at(t, o, v, w, r), 1.0).at.s;
    // find the onset by bisection on the deepest corner's depth
    let (mut lo, mut hi) = (0.0, 0.3);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if depth(mid) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let t_on = hi;
    // before the onset: no force, no slope; after: in the damping ramp, then past it, then
    // deep with several corners in
    let d_before = check_derivatives("table, before", &e, t_on - 1e-6, o, v, w, r);
    assert_eq!(d_before, 0.0);
    let b = e.evaluate_body(&pose_at(t_on - 1e-6, o, v, w, r), 1.0);
    assert_eq!(b.effort.force, 0.0);
    let d_ramp = check_derivatives("table, in the ramp", &e, t_on + 2e-5, o, v, w, r);
    assert!(d_ramp > 0.0 && d_ramp < RAMP, "depth {d_ramp}");
    let d_past = check_derivatives("table, past the ramp", &e, t_on + 2e-3, o, v, w, r);
    assert!(d_past > RAMP, "depth {d_past}");
    // several points: deep enough that more than one corner of the incident face is in
    let t_deep = t_on + 0.04;
    check_derivatives("table, deep", &e, t_deep, o, v, w, r);
    let pb = pose_at(t_deep, o, v, w, r);
    let bb = e.body_box(&pb);
    let Obstacle::Box(a) = table() else {
        unreachable!()
    };
    let k = box_box(&a, &bb).expect("in contact");
    let m = manifold(&a, &bb, &k);
    assert!(m.n >= 2, "{} points", m.n);
    // the deepest point of the manifold is the separating-axis depth
    let deepest = m.depths[..m.n].iter().fold(0.0f64, |x, &y| x.max(y));
    assert!(
        (deepest - k.depth).abs() < 1e-12,
        "{deepest} vs {}",
        k.depth
    );
    // the brick's long face against a thin pole: the reference face is the brick's, the pole's
    // faces are clipped by it (points on the pole's edges)
    let e = brick(vec![pole()]);
    let (o, v, w) = (
        V::new(0.3, 0.2, 0.0),
        V::new(-1.0, 0.05, 0.1),
        V::new(0.0, 0.3, 0.2),
    );
    let r = Matrix3::identity();
    for t in [0.1 + 2e-5, 0.1 + 5e-3, 0.1 + 0.02] {
        let d = check_derivatives("pole", &e, t, o, v, w, r);
        assert!(d > 0.0, "pole at t = {t}: depth {d}");
    }
}

/// A brick (10 kg, 0.4 × 0.2 × 0.3 m) on a free joint over a table (a box, top face y = 0),
/// `obb_contact` against it.
fn table_toml(
    y0: f64,
    angles: [f64; 3],
    qd0: [f64; 6],
    damping: f64,
    step_s: f64,
    duration_s: f64,
    formulation: &str,
) -> String {
    format!(
        r#"
name = "table_drop"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "brick"
mass_kg = 10.0
com = [0.0, 0.0, 0.0]
inertia = [0.108333333333, 0.208333333333, 0.166666666667, 0.0, 0.0, 0.0]
markers = {{ centre = [0.0, 0.0, 0.0] }}

[[joints]]
name = "free"
type = "free"
parent = "ground"
child = "brick"
location = [0.0, 0.0, 0.0]
q0 = [0.0, {y0}, 0.0, {a0}, {a1}, {a2}]
qd0 = {qd0:?}

[[elements]]
type = "obb_contact"
name = "table"
body = "brick"
marker = "centre"
half_extents_m = [0.2, 0.1, 0.15]
stiffness_n_m = 1.0e6
damping_n_s_m = {damping:?}
obstacle = {{ kind = "box", center_m = [0.0, -0.5, 0.0], half_extents_m = [1.0, 0.5, 1.0] }}

[solver]
formulation = "{formulation}"
step_s = {step_s:?}
duration_s = {duration_s:?}
tolerance_position = 1e-10
"#,
        a0 = angles[0],
        a1 = angles[1],
        a2 = angles[2],
    )
}

#[test]
fn brick_resting_on_a_box_carries_its_weight() {
    // flat on the table, touching at t = 0 (four corners at m g / (4 K)), damped: after 1 s
    // the contact force is the weight
    let sink = 10.0 * 9.81 / (4.0 * K);
    let text = table_toml(0.1 - sink, [0.0; 3], [0.0; 6], 3000.0, 1e-3, 1.0, "penalty");
    let r = run(hydraulink::compile(&spec_from(&text)).expect("compiles"));
    let last = |c: &str| *r.col(c).last().expect("rows");
    let weight = 10.0 * 9.81;
    let (force, depth) = (last("table.force"), last("table.depth"));
    eprintln!("rest on a box: Σ K d_i = {force:.9} N (m g = {weight}), depth {depth:.6e} m (m g / 4K = {sink:.6e})");
    assert!(
        (force - weight).abs() < 1e-6 * weight,
        "force {force} N ≠ m g"
    );
    assert!((depth - sink).abs() < 1e-6 * sink, "depth {depth} m");
    // the stored energy is that of four corners at m g / (4 K): Σ ½ K d_i² = 2 K (m g / 4K)²
    let stored = *r.col("table.energy_stored").last().unwrap();
    assert!(
        (stored - 2.0 * K * sink * sink).abs() < 1e-5 * stored,
        "stored {stored} J"
    );
    for c in ["free.3.q", "free.4.q", "free.5.q"] {
        assert!(last(c).abs() < 1e-9, "{c} = {}", last(c));
    }
    // resting from t = 0 is not a hit
    assert_eq!(last("table.hits"), 0.0);
}

#[test]
fn brick_tumbling_onto_a_box_keeps_the_energy_balance_under_two_formulations() {
    // tilted, sliding and spinning: it lands on a corner of its own on the table's top face,
    // rocks and bounces. KE + PE + Σ ½ K d_i² + ∫ D dt keeps its initial value up to the
    // integration error: bound 1 % of the dissipated energy (an account left out would be
    // ~100 %; the same bound as on the ground plane, tests/contact/element.rs)
    for formulation in ["penalty", "double-step"] {
        let text = table_toml(
            0.35,
            [0.3, 0.2, -0.25],
            [0.5, 0.0, 0.0, 1.0, 0.0, 2.0],
            300.0,
            1.25e-4,
            1.0,
            formulation,
        );
        let r = run(hydraulink::compile(&spec_from(&text)).expect("compiles"));
        let drift = crate::common::max_abs(&r.col("energy.drift"));
        let diss = *r.col("table.energy_dissipated").last().unwrap();
        let peak = r
            .col("table.energy_stored")
            .iter()
            .fold(0.0f64, |m, &x| m.max(x));
        let hits = *r.col("table.hits").last().unwrap();
        eprintln!(
            "{formulation}: worst drift {drift:.3e} J; dissipated {diss:.3} J; peak stored {peak:.3} J; hits {hits}"
        );
        assert!(
            diss > 5.0 && peak > 0.5,
            "{formulation}: dissipated {diss} J, peak {peak} J"
        );
        assert!(
            drift < 1e-2 * diss,
            "{formulation}: drift {drift} J of {diss} J dissipated"
        );
        assert!(hits >= 1.0, "{formulation}: the landing is a hit");
    }
}

#[test]
fn a_bouncing_brick_counts_each_landing_once() {
    // dropped flat from 0.3 m, lightly damped: it bounces several times. The counter counts
    // the onsets of the force that follow at least hit_gap_s = 0.1 s of flight; recount them
    // from the force column
    let text = table_toml(
        0.4,
        [0.02, 0.0, 0.01],
        [0.0; 6],
        20.0,
        2.5e-4,
        2.0,
        "penalty",
    );
    let r = run(hydraulink::compile(&spec_from(&text)).expect("compiles"));
    let (t, f) = (r.col("time"), r.col("table.force"));
    let mut counter = HitCounter::start(f[0]);
    let (mut onsets, mut touching, mut released) = (0u32, f[0] > 0.0, f64::NEG_INFINITY);
    for k in 1..t.len() {
        counter.advance(t[k], f[k], 0.1);
        if f[k] > 0.0 && !touching {
            if t[k] - released >= 0.1 {
                onsets += 1;
            }
            touching = true;
        } else if f[k] <= 0.0 && touching {
            touching = false;
            released = t[k];
        }
    }
    let hits = *r.col("table.hits").last().unwrap();
    let peak = *r.col("table.peak_force").last().unwrap();
    let fmax = f.iter().fold(0.0f64, |m, &x| m.max(x));
    eprintln!("bouncing brick: {hits} hits, {onsets} onsets recounted, peak {peak:.1} N");
    assert!(hits >= 2.0, "it bounces: {hits} hits");
    assert_eq!(hits, f64::from(onsets));
    assert_eq!(counter.hits, onsets);
    assert_eq!(peak, fmax);
    // an impact is far above the weight
    assert!(peak > 10.0 * 10.0 * 9.81, "peak {peak} N");
}

#[test]
fn hit_counter_ignores_short_releases_and_a_contact_closed_at_the_start() {
    let mut c = HitCounter::start(50.0);
    // resting, lifting for 50 ms, back: no hit (gap 0.1 s)
    for (t, f) in [
        (0.1, 50.0),
        (0.15, 0.0),
        (0.2, 60.0),
        (0.3, 0.0),
        (0.45, 80.0),
        (0.5, 120.0),
    ] {
        c.advance(t, f, 0.1);
    }
    assert_eq!(c.hits, 1);
    assert_eq!(c.last_hit_force_n, 120.0);
    assert_eq!(c.peak_force_n, 120.0);
}

#[test]
fn natural_coordinate_formulations_refuse_the_contact_by_name() {
    let text = table_toml(0.35, [0.0; 3], [0.0; 6], 300.0, 1e-3, 0.1, "global-ali3p");
    let err = hydraulink::compile(&spec_from(&text)).expect_err("refused");
    let msg = err.to_string();
    assert!(
        msg.contains("elements[0]") && msg.contains("global-ali3p") && msg.contains("contact"),
        "{msg}"
    );
}
