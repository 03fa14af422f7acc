//! Pressure propagation (003 Pub. V eqs. 12–14), the bounded automaton sweep, the `bucket_dig`
//! law against central differences, the payload in statics and in the energy balance, and the
//! shipped `models/excavator_dig.toml`: it digs, carries and dumps into the hopper, with the
//! terrain + payload + hopper volume constant to round-off and every column height ≥ 0.

use hydraulink::element::{BodyPose, Element, Frozen, MAX_FROZEN};
use hydraulink::model::ids::{AxisId, Frame};
use hydraulink::terrain::cellular::{sweep, sweep_nonnegative, Automaton, Scratch};
use hydraulink::terrain::dig::{slot, BucketDig};
use hydraulink::terrain::heightfield::Heightfield;
use hydraulink::terrain::pressure::{base_excess, propagate, Kernel, Scratch as PScratch};
use hydraulink::{model, Simulation};
use nalgebra::{Matrix3, Rotation3, Vector3};
use num_dual::Dual64;

use crate::common::{spec_from, spec_of};

type V = Vector3<f64>;

/// A 12 × 9 field of 0.1 m cells with uneven columns (0 to 0.93 m), seeded.
fn uneven() -> Heightfield {
    let mut f = Heightfield::flat(12, 9, 0.1, [0.0, 0.0], 0.0).unwrap();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for h in f.h.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *h = (x % 1000) as f64 * 0.93e-3;
    }
    f
}

/// Sand density of the pressure tests [kg/m³].
const DENSITY: f64 = 1600.0;
/// Gravity of the pressure tests [m/s²].
const GRAVITY: f64 = 9.81;

/// The [`uneven`] field with two point loads (2500 N and 800 N), and the weight above its
/// bases: g Σ m + Σ f [N].
fn uneven_loaded() -> (Heightfield, Vec<f64>, f64) {
    let f = uneven();
    let d = f.cell_m;
    let mut force = vec![0.0; f.h.len()];
    force[17] = 2500.0;
    force[60] = 800.0;
    let weight = GRAVITY * DENSITY * d * d * f.h.iter().sum::<f64>() + 3300.0;
    (f, force, weight)
}

#[test]
fn pressure_at_the_base_is_the_weight_above() {
    // Pub. V eq. 12 with φ summing to one: Σ_ij p⁰_ij = g Σ m + Σ f, whatever the kernel
    let (f, force, weight) = uneven_loaded();
    let (rho, g) = (DENSITY, GRAVITY);
    let mut s = PScratch::new(&f);
    let mut out = vec![0.0; f.h.len()];
    for side in [0.0, 0.1, 0.25, 1.0 / 3.0, 0.5] {
        let k = Kernel { side };
        k.check().unwrap();
        propagate(&f, 0.1, rho, g, &force, &k, &mut s, &mut out);
        let total: f64 = out.iter().sum();
        eprintln!("φ(±1) = {side}: Σ p⁰ = {total:.6} N, weight above {weight:.6} N");
        assert!(
            (total - weight).abs() <= 1e-12 * weight,
            "φ(±1) = {side}: {total} ≠ {weight}"
        );
        assert!(out.iter().all(|p| *p >= 0.0));
    }
    assert!(Kernel { side: 0.6 }.check().is_err());
}

#[test]
fn tiny_blocks_are_capped_and_still_carry_the_whole_weight() {
    // A block of 1e-200 m would make ~1e200 layers: propagate caps them at MAX_LAYERS (blocks
    // of top / MAX_LAYERS), so the step ends, and Σ p⁰ = g Σ m + Σ f still holds, the forces
    // on the top blocks included.
    let (f, force, weight) = uneven_loaded();
    let (rho, g) = (DENSITY, GRAVITY);
    let mut s = PScratch::new(&f);
    let mut out = vec![0.0; f.h.len()];
    let k = Kernel { side: 0.25 };
    for block in [1e-200, 1e-9, 0.93e-3 * 999.0 / 300.0] {
        propagate(&f, block, rho, g, &force, &k, &mut s, &mut out);
        let total: f64 = out.iter().sum();
        eprintln!("block {block:e} m: Σ p⁰ = {total:.9} N, weight above {weight:.9} N");
        assert!(
            (total - weight).abs() <= 1e-12 * weight,
            "{total} ≠ {weight}"
        );
    }
}

#[test]
fn only_the_part_of_an_edge_over_the_grid_is_sampled() {
    // the grid is [0, 1.2] × [0, 0.9] in (x, z)
    let f = uneven();
    let close =
        |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() < 1e-15 && (a.1 - b.1).abs() < 1e-15;
    // inside: the whole segment
    let t = f.clip_xz(&[0.1, 5.0, 0.1], &[1.1, -3.0, 0.8]).unwrap();
    assert!(close(t, (0.0, 1.0)), "{t:?}");
    // from x = -1.2 to 2.4 at z = 0.45: x ∈ [0, 1.2] is t ∈ [1/3, 2/3]
    let t = f.clip_xz(&[-1.2, 0.0, 0.45], &[2.4, 0.0, 0.45]).unwrap();
    assert!(close(t, (1.0 / 3.0, 2.0 / 3.0)), "{t:?}");
    // beside the grid, far away, or not finite: nothing
    assert!(f.clip_xz(&[-1.0, 0.0, 2.0], &[3.0, 0.0, 2.0]).is_none());
    assert!(f.clip_xz(&[1e199, 0.0, 0.5], &[2e199, 0.0, 0.5]).is_none());
    assert!(f.clip_xz(&[f64::NAN, 0.0, 0.5], &[0.5, 0.0, 0.5]).is_none());
    // an edge 1e199 m long crossing the grid: the part over it, at most the grid's width (t
    // resolves to 0.5 exactly at this scale: one sample, at x = 0, on the grid)
    let t = f
        .clip_xz(&[-1e199, 0.0, 0.45], &[1e199, 0.0, 0.45])
        .unwrap();
    assert!(
        t.0 <= t.1 && (t.1 - t.0) * 2e199 <= 1.2 * (1.0 + 1e-12),
        "{t:?}"
    );
}

#[test]
fn pressure_propagation_is_symmetric() {
    // a field mirrored in x and z gives a mirrored base load
    let mut f = Heightfield::flat(10, 8, 0.1, [0.0, 0.0], 0.1).unwrap();
    for j in 0..8 {
        for i in 0..10 {
            let (x, z) = (i.min(9 - i) as f64, j.min(7 - j) as f64);
            let k = f.index(i, j);
            f.h[k] += 0.07 * x + 0.05 * z * x;
        }
    }
    let k = Kernel { side: 0.3 };
    let (mut s, mut out) = (PScratch::new(&f), vec![0.0; 80]);
    propagate(&f, 0.05, 1800.0, 9.81, &[], &k, &mut s, &mut out);
    let mut worst: f64 = 0.0;
    for j in 0..8 {
        for i in 0..10 {
            let a = out[f.index(i, j)];
            for b in [
                out[f.index(9 - i, j)],
                out[f.index(i, 7 - j)],
                out[f.index(9 - i, 7 - j)],
            ] {
                worst = worst.max((a - b).abs() / a);
            }
        }
    }
    eprintln!("symmetry: largest relative difference {worst:.1e}");
    assert!(worst <= 1e-13);
}

#[test]
fn a_point_load_spreads_as_the_kernel_says() {
    // 0.3 m columns of 0.1 m blocks: a force on the top block (layer 2) is spread twice, so the
    // base carries f a_s a_t with a = φ ∗ φ: a_0 = φ₀² + 2φ₁², a_±1 = 2 φ₀ φ₁, a_±2 = φ₁²
    let f = Heightfield::flat(9, 9, 0.1, [0.0, 0.0], 0.3).unwrap();
    let k = Kernel { side: 0.25 };
    let (p0, p1) = (k.phi(0), k.phi(1));
    let a = |s: i32| match s.abs() {
        0 => p0 * p0 + 2.0 * p1 * p1,
        1 => 2.0 * p0 * p1,
        2 => p1 * p1,
        _ => 0.0,
    };
    let mut force = vec![0.0; 81];
    let c = f.index(4, 4);
    force[c] = 1000.0;
    let (mut s, mut out) = (PScratch::new(&f), vec![0.0; 81]);
    base_excess(&f, 0.1, &force, &k, &mut s, &mut out);
    for j in 0..9 {
        for i in 0..9 {
            let want = 1000.0 * a(i as i32 - 4) * a(j as i32 - 4);
            let got = out[f.index(i, j)];
            assert!(
                (got - want).abs() <= 1e-12 * 1000.0,
                "({i}, {j}): {got} ≠ {want}"
            );
        }
    }
    assert!((out.iter().sum::<f64>() - 1000.0).abs() <= 1e-10);
}

#[test]
fn the_bounded_sweep_keeps_heights_and_volume() {
    // without forces it is the automaton's sweep, bit for bit
    let mut a1 = uneven();
    let mut a2 = a1.clone();
    let aut = Automaton::paper(1600.0);
    let (mut s1, mut s2) = (Scratch::new(&a1), Scratch::new(&a2));
    for _ in 0..20 {
        sweep(&mut a1, &[], &aut, &mut s1);
        sweep_nonnegative(&mut a2, &[], &aut, &mut s2);
    }
    assert_eq!(a1.h, a2.h);
    // a large force on a shallow column: heights stay ≥ 0, the volume is kept
    let mut f = Heightfield::flat(10, 10, 0.1, [0.0, 0.0], 0.02).unwrap();
    let v0 = f.volume_m3();
    let mut force = vec![0.0; 100];
    force[f.index(5, 5)] = 5.0e4;
    force[f.index(2, 7)] = 2.0e4;
    let mut s = Scratch::new(&f);
    for _ in 0..50 {
        sweep_nonnegative(&mut f, &force, &aut, &mut s);
        assert!(f.h.iter().all(|h| *h >= 0.0), "a negative column");
    }
    let dv = (f.volume_m3() - v0).abs() / v0;
    eprintln!(
        "forced sweeps: min height {:.2e}, volume error {dv:.1e}",
        f.h.iter().cloned().fold(f64::MAX, f64::min)
    );
    assert!(dv <= 1e-14);
    assert!(f.h[f.index(5, 5)] < 0.02, "the force displaced material");
}

// ---- the element law

fn bucket() -> BucketDig {
    BucketDig {
        name: "dig".into(),
        frame: Frame::Link(AxisId(0)),
        points: vec![
            V::new(0.3, -0.4, -0.2),
            V::new(0.35, -0.42, 0.0),
            V::new(0.3, -0.4, 0.2),
        ],
        payload: V::new(0.0, 0.1, 0.0),
        opening: V::new(-1.0, 0.0, 0.0),
        width_m: 0.3,
        cutting_factor: 12.0,
        smoothing_speed_m_s: 0.05,
        damping_ramp_m: 1e-3,
        capacity_m3: 0.5,
        dump_angle_rad: 2.0,
        dump_rate_m3_s: 0.5,
        step_s: 1e-3,
    }
}

fn frozen(mass: f64) -> Frozen {
    let mut f = [0.0; MAX_FROZEN];
    f[slot::ACTIVE] = 1.0;
    f[slot::MASS] = mass;
    f[slot::VEL..slot::VEL + 3].copy_from_slice(&[0.2, -0.1, 0.05]);
    f[slot::ACC..slot::ACC + 3].copy_from_slice(&[1.0, 0.5, -0.3]);
    f[slot::GRAVITY..slot::GRAVITY + 3].copy_from_slice(&[0.0, -9.81, 0.0]);
    f[slot::STIFFNESS] = 2.0e5;
    f[slot::DAMPING] = 2.0e3;
    f[slot::DENSITY] = 1600.0;
    for k in 0..3 {
        // a sloping surface: y_s = 0.05 + 0.2 x − 0.1 z
        f[slot::SURFACE + 3 * k] = 0.05;
        f[slot::SURFACE + 3 * k + 1] = 0.2;
        f[slot::SURFACE + 3 * k + 2] = -0.1;
    }
    f
}

/// A pose at parameter t along a rigid motion: origin o + v t, rotation exp(ω t) R.
fn pose_at<S: hydraulink::real::Real>(t: S, o: V, v: V, w: V, r: Matrix3<f64>) -> BodyPose<S> {
    let lift = |x: V| Vector3::new(S::from(x.x), S::from(x.y), S::from(x.z));
    let th = w.norm();
    let k = w / th;
    let kx = Matrix3::new(0.0, -k.z, k.y, k.z, 0.0, -k.x, -k.y, k.x, 0.0);
    let a = t * S::from(th);
    let rot_t = Matrix3::<S>::identity()
        + kx.map(S::from) * a.sin()
        + (kx * kx).map(S::from) * (S::one() - a.cos());
    let origin = lift(o) + lift(v) * t;
    let v0 = lift(v) - lift(w).cross(&origin);
    BodyPose {
        origin,
        rot: rot_t * r.map(S::from),
        v0,
        omega: lift(w),
    }
}

#[test]
fn dig_law_matches_central_differences_in_and_out_of_the_soil() {
    let e = bucket();
    let r = *Rotation3::from_euler_angles(0.05, -0.1, 0.2).matrix();
    let w = V::new(0.1, -0.2, 0.4);
    // (case, origin height, velocity): deep and fast, deep and slow (below v_ε), inside the
    // damping ramp, above the surface (only the payload)
    for (case, oy, v) in [
        ("deep, fast", 0.2, V::new(0.6, -0.3, 0.1)),
        ("deep, slow", 0.2, V::new(0.01, -0.02, 0.005)),
        ("shallow", 0.3525, V::new(0.3, -0.05, 0.0)),
        ("above", 1.0, V::new(0.3, -0.2, 0.1)),
    ] {
        let o = V::new(0.1, oy, 0.05);
        let f = frozen(80.0);
        let b = e.evaluate_body_in(&pose_at(0.0, o, v, w, r), 1.0, &f);
        let bd = e.evaluate_body_in(&pose_at(Dual64::new(0.0, 1.0), o, v, w, r), 1.0, &f);
        let h = 1e-6;
        let bp = e.evaluate_body_in(&pose_at(h, o, v, w, r), 1.0, &f);
        let bm = e.evaluate_body_in(&pose_at(-h, o, v, w, r), 1.0, &f);
        eprintln!(
            "{case}: depth {:.4} m, F = {:.1?} N, dig {:.1} N",
            b.at.s, b.effort.vector, b.effort.force
        );
        for i in 0..3 {
            for (what, p, m, d) in [
                (
                    "force",
                    bp.effort.vector[i],
                    bm.effort.vector[i],
                    bd.effort.vector[i].eps,
                ),
                ("torque", bp.torque[i], bm.torque[i], bd.torque[i].eps),
                ("point", bp.point[i], bm.point[i], bd.point[i].eps),
            ] {
                let cd = (p - m) / (2.0 * h);
                assert!(
                    (cd - d).abs() <= 1e-5 * (1.0 + d.abs()),
                    "{case}: {what}[{i}] dual {d} ≠ CD {cd}"
                );
            }
        }
        if case == "above" {
            assert_eq!(b.effort.force, 0.0);
        } else {
            assert!(b.at.s > 0.0 && b.effort.force > 0.0, "{case}: no cut");
        }
    }
}

#[test]
fn dig_power_balances_the_work_on_the_bucket() {
    // along a motion at constant record: −F·v − T·ω = dE_stored/dt + P_dissipated, where the
    // payload's inertia uses the trapezoidal acceleration (not the exact one), so the payload is
    // left out here (mass 0) and checked in the simulations below
    let e = bucket();
    let r = *Rotation3::from_euler_angles(0.05, -0.1, 0.2).matrix();
    let (o, v, w) = (
        V::new(0.1, 0.2, 0.05),
        V::new(0.4, -0.3, 0.1),
        V::new(0.1, -0.2, 0.4),
    );
    let f = frozen(0.0);
    let h = 1e-6;
    let st = |t: f64| e.evaluate_body_in(&pose_at(t, o, v, w, r), 1.0, &f);
    let b = st(0.0);
    let dstored = (st(h).power.stored_j - st(-h).power.stored_j) / (2.0 * h);
    let p = pose_at(0.0, o, v, w, r);
    let work_rate = b.effort.vector.dot(&p.velocity(&b.point)) + b.torque.dot(&w);
    let balance = -work_rate - dstored - b.power.dissipated_w;
    eprintln!(
        "power: work on the bucket {work_rate:.4} W, dE/dt {dstored:.4} W, dissipated {:.4} W",
        b.power.dissipated_w
    );
    assert!(b.power.dissipated_w > 0.0);
    assert!(balance.abs() <= 1e-6 * work_rate.abs(), "balance {balance}");
}

// ---- the payload in the dynamics

/// A bucket on a vertical slider held by a cylinder with closed chambers (the 4/3 valve stays
/// centred), over a terrain that it never touches.
fn slider(friction: f64, duration: f64, qd0: f64) -> String {
    format!(
        r#"
name = "slider"
gravity = [0.0, -9.81, 0.0]
[ground.markers]
G = [0.0, 0.0, 0.0]
[[bodies]]
name = "bucket"
mass_kg = 200.0
com = [0.0, 1.0, 0.0]
inertia = [10.0, 10.0, 10.0, 0.0, 0.0, 0.0]
markers = {{ B = [0.0, 1.0, 0.0], E1 = [-0.3, 0.9, 0.0], E2 = [0.3, 0.9, 0.0], C = [0.1, 1.2, 0.0] }}
[[joints]]
name = "y"
type = "prismatic"
parent = "ground"
child = "bucket"
location = [0.0, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]
qd0 = {qd0}
[hydraulics.fluid]
density_kg_m3 = 870.0
bulk_modulus_pa = 1.5e9
[[hydraulics.volumes]]
name = "Vp"
hose_volume_m3 = 1.0e-4
hose_bulk_modulus_pa = 5.5e8
p0_pa = 5.0e6
[[hydraulics.volumes]]
name = "VA"
hose_volume_m3 = 1.0e-4
hose_bulk_modulus_pa = 5.5e8
[[hydraulics.volumes]]
name = "VB"
hose_volume_m3 = 1.0e-4
hose_bulk_modulus_pa = 5.5e8
p0_pa = 1.0e6
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
[[hydraulics.valves]]
name = "DCV"
port_p = "Vp"
port_t = "T"
port_a = "VA"
port_b = "VB"
flow_constant = 1.0e-9
time_constant_s = 0.01
laminar_dp_pa = 2.0e5
input = "U"
[[hydraulics.cylinders]]
name = "cyl"
base = {{ body = "ground", marker = "G" }}
rod = {{ body = "bucket", marker = "B" }}
piston_diameter_m = 0.05
rod_diameter_m = 0.03
stroke_m = 0.8
retracted_length_m = 0.6
piston_side = "VA"
rod_side = "VB"
friction = {{ type = "viscous", coefficient_n_s_m = {friction} }}
[[inputs]]
name = "U"
signal = {{ type = "constant", value = 0.0 }}
[[elements]]
type = "bucket_dig"
name = "dig"
body = "bucket"
edge = ["E1", "E2"]
payload_marker = "C"
opening = [0.0, 1.0, 0.0]
width_m = 0.3
cutting_factor = 10.0
capacity_m3 = 1.0
dump_angle_deg = 90.0
dump_rate_m3_s = 0.1
[terrain]
origin_m = [10.0, 10.0]
cells = [4, 4]
cell_m = 0.5
density_kg_m3 = 1600.0
stiffness_n_m = 1.0e5
damping_n_s_m = 1.0e3
[solver]
formulation = "penalty"
step_s = 1.0e-3
duration_s = {duration}
tolerance_pressure_pa = 1.0e-2
"#
    )
}

/// A simulation of `text` whose bucket holds `mass` [kg] of payload from t = 0.
fn loaded(text: &str, mass: f64) -> Simulation {
    let m = model::compile(&spec_from(text)).unwrap();
    let mut sim = Simulation::new(m).unwrap();
    let mut st = sim.state().clone();
    let w = st.world.as_mut().unwrap();
    w.diggers[0].payload_m3 = mass / 1600.0;
    w.diggers[0].frozen[slot::MASS] = mass;
    w.diggers[0].frozen_used[slot::MASS] = mass;
    sim.set_state(st);
    sim
}

fn column(sim: &Simulation, label: &str) -> f64 {
    let labels = sim.output_labels();
    let mut row = vec![0.0; labels.len()];
    sim.output_row(&mut row);
    row[labels.iter().position(|l| l == label).unwrap()]
}

#[test]
fn a_held_payload_needs_exactly_its_weight_from_the_cylinder() {
    // statics: the closed chambers settle where p_A A_A − p_B A_B = (m + m_p) g
    let (m, mp, g) = (200.0, 150.0, 9.81);
    let mut sim = loaded(&slider(2.0e4, 1.0, 0.0), mp);
    let f0 = column(&sim, "cyl.force");
    for _ in 0..1000 {
        sim.step().unwrap();
    }
    let f1 = column(&sim, "cyl.force");
    let st = sim.state();
    let p = (st.p[1], st.p[2]);
    let (aa, ab) = (
        std::f64::consts::PI * 0.025 * 0.025,
        std::f64::consts::PI * (0.025 * 0.025 - 0.015 * 0.015),
    );
    let pressure_force = p.0 * aa - p.1 * ab;
    eprintln!(
        "statics: cylinder force {f0:.4} N empty → {f1:.4} N with {mp} kg (want {:.4} N), \
         p_A A_A − p_B A_B = {pressure_force:.4} N, payload {:.3} kg",
        (m + mp) * g,
        column(&sim, "dig.payload_kg")
    );
    assert!((f0 - m * g).abs() <= 1e-6 * m * g, "empty: {f0}");
    assert!(
        (f1 - (m + mp) * g).abs() <= 1e-6 * (m + mp) * g,
        "loaded: {f1}"
    );
    assert!((pressure_force - (m + mp) * g).abs() <= 1e-6 * (m + mp) * g);
}

#[test]
fn the_energy_balance_closes_with_a_moving_payload() {
    // the bucket on a linear spring instead of the cylinder (whose oil spring has a drift of
    // its own, ±0.09 J here with or without a payload), loaded with 150 kg and moving up at
    // 0.3 m/s: KE + PE of bucket and payload and the spring's energy stay constant
    let text = slider(0.0, 1.0, 0.3);
    let (a, b) = (
        text.find("[hydraulics.fluid]").unwrap(),
        text.find("[[elements]]").unwrap(),
    );
    let spring = r#"[[elements]]
type = "spring_damper"
name = "spring"
end1 = { body = "ground", marker = "G" }
end2 = { body = "bucket", marker = "B" }
stiffness_n_m = 2.0e5
free_length_m = 1.0
"#;
    let text = format!("{}{spring}{}", &text[..a], &text[b..]);
    let mut sim = loaded(&text, 150.0);
    sim.step().unwrap();
    let d1 = sim.energy_drift_j();
    let (mut worst, mut ke_max): (f64, f64) = (0.0, 0.0);
    for _ in 0..999 {
        let r = sim.step().unwrap();
        worst = worst.max((sim.energy_drift_j() - d1).abs());
        ke_max = ke_max.max(r.kinetic_j);
    }
    let stored = column(&sim, "dig.energy_stored");
    eprintln!(
        "payload energy: drift {worst:.3e} J over 1 s, peak KE of the bucket {ke_max:.3} J, \
         payload energy now {stored:.3} J"
    );
    assert!(ke_max > 1.0, "the bucket moves");
    // measured 1.7e-11 J against 26 J of kinetic energy: round-off and the Newton tolerance
    assert!(worst <= 1e-9 * ke_max, "drift {worst} J");
}

// ---- the shipped model

#[test]
fn excavator_dig_loads_the_hopper_and_keeps_the_volume() {
    let m = model::compile(&spec_of("excavator_dig")).unwrap();
    let mut sim = Simulation::new(m).unwrap();
    let v0 = sim.state().world.as_ref().unwrap().total_m3();
    let n = (sim.model().duration_s() / sim.model().step_s()).round() as u64;
    let (mut dv, mut payload_max, mut hmin): (f64, f64, f64) = (0.0, 0.0, f64::MAX);
    let mut payload_at_swing = 0.0;
    for k in 1..=n {
        sim.step().unwrap_or_else(|e| panic!("step {k}: {e}"));
        let w = sim.state().world.as_ref().unwrap();
        dv = dv.max((w.total_m3() - v0).abs());
        payload_max = payload_max.max(w.payload_m3());
        hmin = hmin.min(w.field.h.iter().cloned().fold(f64::MAX, f64::min));
        if k == 9000 {
            payload_at_swing = w.payload_m3() * 1600.0;
        }
    }
    let w = sim.state().world.as_ref().unwrap();
    let (hopper, dug) = (column(&sim, "dig.hopper_kg"), column(&sim, "dig.dug_m3"));
    eprintln!(
        "excavator_dig: dug {dug:.4} m³, payload at 9 s {payload_at_swing:.1} kg (peak {:.1} kg), \
         hopper {hopper:.1} kg, left in the bucket {:.1} kg; volume error {dv:.2e} m³ of {v0:.3}; \
         lowest column {hmin:.3e} m",
        payload_max * 1600.0,
        w.payload_m3() * 1600.0
    );
    assert!(
        payload_at_swing > 100.0,
        "the bucket carries a payload after the dig"
    );
    assert!(hopper > 100.0, "the dump reaches the hopper");
    assert!(dv <= 1e-12 * v0, "volume error {dv}");
    assert!(hmin >= 0.0, "a column below the bedrock: {hmin}");
}
