//! The excavator of `models/excavator.toml` (after 003 Publication VI, on a fixed base, sized to
//! the Cat 320 class of issue 24): the static cylinder forces at t = 0 by virtual work, the
//! energy balance over the 18 s truck-loading cycle (the swing on its hydraulic motor), flow
//! continuity at the pump line, the pump's compensator and power limit, and the overload
//! acceptance of issue 24 read from the shipped cycle: every chamber below 110 % of its port
//! relief, no negative absolute pressure, no end-stop force above 1.5 times the cylinder's force
//! at its port relief, and the pump's power at rest.

use hydraulink::elements::component::ComponentSpec;
use hydraulink::elements::hydraulics::pc_pump::PcPumpSpec;
use hydraulink::elements::hydraulics::relief_valve::ReliefValveSpec;
use hydraulink::ModelSpec;

use crate::common::*;

type P2 = [f64; 2];

/// Rotation of `p` by `a` [rad] about `c` in the boom plane (x, y).
fn rot(p: P2, c: P2, a: f64) -> P2 {
    let (s, co) = a.sin_cos();
    let (dx, dy) = (p[0] - c[0], p[1] - c[1]);
    [c[0] + co * dx - s * dy, c[1] + s * dx + co * dy]
}

fn dist(a: P2, b: P2) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// The excavator's planar geometry in its initial pose (= the reference configuration, all joint
/// coordinates 0, swing 0), read from the model file's points; masses [kg], g [m/s²].
struct Front {
    g: f64,
    pts: std::collections::BTreeMap<String, P2>,
    /// (body, mass, COM) of the boom, arm, bucket, side link and H-link.
    coms: Vec<(String, f64, P2)>,
}

impl Front {
    fn of(spec: &ModelSpec) -> Front {
        let mut pts = std::collections::BTreeMap::new();
        let mut coms = Vec::new();
        for b in &spec.bodies {
            for (m, p) in &b.markers {
                pts.insert(format!("{}.{m}", b.name), [p[0], p[1]]);
            }
            if b.name != "upper" {
                coms.push((b.name.clone(), b.mass_kg, [b.com[0], b.com[1]]));
            }
        }
        for j in &spec.joints {
            pts.insert(format!("joint.{}", j.name), [j.location[0], j.location[1]]);
        }
        Front {
            g: -spec.gravity[1],
            pts,
            coms,
        }
    }
    fn p(&self, name: &str) -> P2 {
        self.pts[name]
    }

    /// Positions of every body point after a virtual rotation `a` [rad] of the front about one
    /// joint: "boom" (everything distal turns rigidly about A), "arm" (about C) or "bucket"
    /// (the bucket about F; the side link about I, closing the four-bar |K − J| = const by a
    /// scalar Newton; the H-link follows K and J). Returns the map body → rigid motion.
    fn moved(&self, dof: &str, a: f64) -> impl Fn(&str, P2) -> P2 + '_ {
        let (a_pin, c_pin, f_pin, i_pin) = (
            self.p("joint.z_boom"),
            self.p("joint.z_arm"),
            self.p("joint.z_bucket"),
            self.p("joint.z_link1"),
        );
        // the four-bar: the side-link angle φ that keeps |K(φ) − J(a)| = |K − J|
        let (k, j) = (self.p("side_link.K"), self.p("bucket.J"));
        let l_kj = dist(k, j);
        let phi = if dof == "bucket" {
            let jb = rot(j, f_pin, a);
            let f = |phi: f64| dist(rot(k, i_pin, phi), jb) - l_kj;
            let mut phi = 0.0;
            for _ in 0..50 {
                let h = 1e-7;
                let d = (f(phi + h) - f(phi - h)) / (2.0 * h);
                phi -= f(phi) / d;
            }
            assert!(f(phi).abs() < 1e-13, "four-bar closes");
            phi
        } else {
            0.0
        };
        let psi = if dof == "bucket" {
            // H-link: the rigid motion taking (K, J) to (K', J')
            let (k2, j2) = (rot(k, i_pin, phi), rot(j, f_pin, a));
            (j2[1] - k2[1]).atan2(j2[0] - k2[0]) - (j[1] - k[1]).atan2(j[0] - k[0])
        } else {
            0.0
        };
        let dof = dof.to_string();
        move |body: &str, p: P2| match (dof.as_str(), body) {
            (_, "upper") => p,
            ("boom", _) => rot(p, a_pin, a),
            ("arm", "boom") => p,
            ("arm", _) => rot(p, c_pin, a),
            ("bucket", "bucket") => rot(p, f_pin, a),
            ("bucket", "side_link") => rot(p, i_pin, phi),
            ("bucket", "h_link") => {
                let k2 = rot(k, i_pin, phi);
                let q = rot(p, k, psi);
                [q[0] - k[0] + k2[0], q[1] - k[1] + k2[1]]
            }
            ("bucket", _) => p,
            _ => unreachable!(),
        }
    }

    /// Potential energy Σ m g y [J] after the virtual rotation.
    fn potential(&self, dof: &str, a: f64) -> f64 {
        let m = self.moved(dof, a);
        self.coms
            .iter()
            .map(|(b, mass, c)| mass * self.g * m(b, *c)[1])
            .sum()
    }

    /// Length [m] of a cylinder between two body points after the virtual rotation.
    fn length(&self, dof: &str, a: f64, base: (&str, &str), rod: (&str, &str)) -> f64 {
        let m = self.moved(dof, a);
        let point = |(b, k): (&str, &str)| m(b, self.p(&format!("{b}.{k}")));
        dist(point(base), point(rod))
    }
}

/// Static cylinder forces at t = 0 against virtual work: for each of the boom, arm and bucket
/// coordinates θ, F ds/dθ = dV/dθ (gravity's generalized force, the only load at rest; the
/// swing carries none), with V the potential energy and s the one cylinder length that θ
/// changes; derivatives by central differences of the hand kinematics above.
#[test]
fn excavator_static_cylinder_forces_match_virtual_work() {
    statics_by_virtual_work(&spec_of("excavator"));
}

/// The bucket options (after Publication VI's Table I, rescaled to the class: 0.8, 1.0 and
/// 1.2 m³; the mass [kg], the inertia scaled with it) and the dipper-arm cylinder bores of its
/// Table II with the rods we give them (bore, rod [m]; the stroke stays the linkage's 1.504 m):
/// the `--set` variants that models/README.md documents.
fn variant(bucket_kg: f64, arm: (f64, f64)) -> ModelSpec {
    let mut s = spec_of("excavator");
    let b = s.bodies.iter_mut().find(|b| b.name == "bucket").unwrap();
    let scale = bucket_kg / b.mass_kg;
    b.mass_kg = bucket_kg;
    b.inertia.iter_mut().for_each(|i| *i *= scale);
    let c = s
        .hydraulics
        .cylinders
        .iter_mut()
        .find(|c| c.name == "arm_cyl")
        .unwrap();
    (c.piston_diameter_m, c.rod_diameter_m) = arm;
    s
}

const BUCKETS: [f64; 3] = [650.0, 820.0, 980.0];
const ARM_CYLINDERS: [(f64, f64); 3] = [(0.12, 0.085), (0.14, 0.10), (0.16, 0.11)];

#[test]
fn excavator_variants_of_tables_1_and_2_hold_their_statics() {
    for b in BUCKETS {
        for a in ARM_CYLINDERS {
            statics_by_virtual_work(&variant(b, a));
        }
    }
}

/// The paper's most chosen combination (large bucket, large cylinder: 42 % of its users) runs
/// the whole cycle with the energy balance and no cavitation.
#[test]
fn excavator_large_bucket_and_large_arm_cylinder_run_the_cycle() {
    let r = run(hydraulink::compile(&variant(BUCKETS[2], ARM_CYLINDERS[2])).unwrap());
    for v in ["V1.p", "V2.p", "V3.p", "V4.p", "V5.p", "V6.p"] {
        assert!(r.col(v).iter().all(|p| *p > 0.0), "{v}");
    }
    let drift = max_abs(&r.col("energy.drift"));
    let work = max_abs(&r.col("energy.actuator_work"));
    // the load checks keep a cylinder from pushing the pump line above the compensator's cap
    let spec = spec_of("excavator");
    let cap = spec.hydraulics.tanks[0].pressure_pa + compensator_cap(&pump_and_relief(&spec).0);
    assert!(r.col("VP.p").iter().all(|p| *p <= cap), "VP above {cap} Pa");
    eprintln!("large/large: drift {drift} J, peak work {work} J");
    assert!(drift <= 1e-3 * work, "drift {drift} J against {work} J");
}

/// The cycle at twice the step, Δt = 2 ms. Before the Newton solver damped stalled increments
/// (`integrator::newton::DAMPING`) it failed at t = 12.578 s, diverging on the boom's rod side
/// `V2.p`. Now it runs through with the energy balance of the 1 ms run's acceptance.
#[test]
fn excavator_cycle_runs_at_twice_the_step() {
    let mut spec = spec_of("excavator");
    spec.solver.step_s = 2e-3;
    let r = run(hydraulink::compile(&spec).unwrap());
    let drift = max_abs(&r.col("energy.drift"));
    let work = max_abs(&r.col("energy.actuator_work"));
    eprintln!("Δt = 2 ms: drift {drift} J, peak work {work} J");
    assert!(work > 1e4, "peak work {work} J");
    assert!(drift <= 1e-3 * work, "drift {drift} J against {work} J");
}

fn statics_by_virtual_work(spec: &ModelSpec) {
    let front = Front::of(spec);
    let row = initial_row(spec);
    let h = 1e-5;
    let d = |f: &dyn Fn(f64) -> f64| (f(h) - f(-h)) / (2.0 * h);
    for (dof, cyl, base, rod) in [
        ("boom", "boom_cyl", ("upper", "G"), ("boom", "B")),
        ("arm", "arm_cyl", ("boom", "D"), ("arm", "E")),
        ("bucket", "bucket_cyl", ("arm", "H"), ("side_link", "K")),
    ] {
        let dv = d(&|a| front.potential(dof, a));
        let ds = d(&|a| front.length(dof, a, base, rod));
        let by_hand = dv / ds;
        let f = row(&format!("{cyl}.force"));
        // the other two cylinders keep their lengths under this virtual motion
        for (c2, b2, r2) in [
            ("boom_cyl", ("upper", "G"), ("boom", "B")),
            ("arm_cyl", ("boom", "D"), ("arm", "E")),
            ("bucket_cyl", ("arm", "H"), ("side_link", "K")),
        ] {
            if c2 != cyl {
                assert!(
                    d(&|a| front.length(dof, a, b2, r2)).abs() < 1e-9,
                    "{dof}: {c2}"
                );
            }
        }
        // the initial length agrees with the solver's (same pose)
        let s0 = front.length(dof, 0.0, base, rod);
        assert!(
            (s0 - row(&format!("{cyl}.length"))).abs() < 1e-9,
            "{cyl} s0"
        );
        eprintln!(
            "{cyl}: solver {f} N, virtual work {by_hand} N, relative {:.2e}",
            (f - by_hand).abs() / by_hand.abs()
        );
        // acceptance (issue 11): 1e-6 relative
        assert!(
            (f - by_hand).abs() <= 1e-6 * by_hand.abs(),
            "{cyl}: solver {f} N vs virtual work {by_hand} N"
        );
        // and the solver's force is the pressures' p1 A1 − p2 A2 (no friction at rest)
        assert_eq!(row(&format!("{cyl}.friction")), 0.0, "{cyl}");
    }
}

/// The initial output row of `spec` by column name.
fn initial_row(spec: &ModelSpec) -> impl Fn(&str) -> f64 {
    let sim = hydraulink::Simulation::new(hydraulink::compile(spec).unwrap()).unwrap();
    let labels = sim.output_labels();
    let mut row = vec![0.0; labels.len()];
    sim.output_row(&mut row);
    move |c: &str| {
        row[labels
            .iter()
            .position(|l| l == c)
            .unwrap_or_else(|| panic!("no column {c}"))]
    }
}

/// The model's pump and main relief valve.
fn pump_and_relief(spec: &ModelSpec) -> (PcPumpSpec, ReliefValveSpec) {
    let pump = spec.elements.iter().find_map(|e| match e {
        ComponentSpec::PcPump(p) => Some(p.clone()),
        _ => None,
    });
    let relief = spec.elements.iter().find_map(|e| match e {
        ComponentSpec::ReliefValve(r) if r.name == "relief" => Some(r.clone()),
        _ => None,
    });
    (pump.unwrap(), relief.unwrap())
}

/// The pressure difference over the pump where its compensator has destroked it to zero: the
/// pressure cut-off's p_max + Δp_reg on a load-sensing pump (its margin compensator follows LS),
/// else p_c + Δp_reg: it cannot raise the line further (it then only leaks back).
fn compensator_cap(pump: &PcPumpSpec) -> f64 {
    pump.pressure_cutoff_pa
        .unwrap_or(pump.compensator_pressure_pa)
        + pump.regulation_range_pa
}

/// The pump's leakage coefficient C_L = (1 − η_v) D ω_r/(2π Δp_r) [m³/(s Pa)] (the fixed pump's
/// law, which the pc_pump shares).
fn leakage_coefficient(pump: &PcPumpSpec) -> f64 {
    (1.0 - pump.volumetric_efficiency.unwrap())
        * pump.displacement_m3_per_rev
        * pump.rated_speed_rad_s.unwrap()
        / (2.0 * std::f64::consts::PI * pump.rated_pressure_pa.unwrap())
}

/// The whole cycle, once for the three cycle tests.
fn cycle() -> &'static Run {
    static RUN: std::sync::OnceLock<Run> = std::sync::OnceLock::new();
    RUN.get_or_init(|| run(model_of("excavator")))
}

#[test]
fn excavator_cycle_moves_every_joint_without_cavitation_or_end_stops() {
    let r = cycle();
    let range = |v: &[f64]| {
        v.iter().fold(f64::MIN, |m, x| m.max(*x)) - v.iter().fold(f64::MAX, |m, x| m.min(*x))
    };
    // measured ranges: swing 1.12, boom 0.52, arm 0.46, bucket 2.24 rad
    for (z, at_least) in [
        ("swing.q", 1.0),
        ("z_boom.q", 0.4),
        ("z_arm.q", 0.35),
        ("z_bucket.q", 1.8),
    ] {
        assert!(range(&r.col(z)) > at_least, "{z}: {}", range(&r.col(z)));
    }
    // the swing motor turns the upper structure to the truck (measured 63.4°) and back (measured
    // 0.2° at the end), braked by its crossover reliefs
    let swing = r.col("swing.q");
    let peak = swing.iter().fold(f64::MIN, |m, x| m.max(*x));
    assert!(
        peak > 50f64.to_radians(),
        "swing peak {} deg",
        peak.to_degrees()
    );
    assert!(
        swing[swing.len() - 1].abs() < 3f64.to_radians(),
        "swing end"
    );
    // the make-up valves keep every chamber above 0 Pa; no cylinder reaches an end of its stroke
    for v in [
        "VP.p", "V1.p", "V2.p", "V3.p", "V4.p", "V5.p", "V6.p", "VS1.p", "VS2.p",
    ] {
        assert!(r.col(v).iter().all(|p| *p > 0.0), "{v}");
    }
    for s in ["boom_stops", "arm_stops", "bucket_stops"] {
        assert_eq!(max_abs(&r.col(&format!("{s}.force"))), 0.0, "{s}");
    }
    // the loop stays closed
    assert!(max_abs(&r.col("constraint.violation")) < 1e-6);
}

#[test]
fn excavator_energy_drift_over_the_cycle_is_below_a_thousandth_of_the_peak_work() {
    let r = cycle();
    let drift = max_abs(&r.col("energy.drift"));
    let work = max_abs(&r.col("energy.actuator_work"));
    eprintln!(
        "drift {drift} J, peak work {work} J, ratio {:.2e}",
        drift / work
    );
    // acceptance (issue 11): ≤ 0.1 % of the peak hydraulic work
    assert!(work > 1e4, "peak work {work} J");
    assert!(drift <= 1e-3 * work, "drift {drift} J against {work} J");
}

/// Flow continuity at the pump line VP between rows k and k+1: the trapezoidal rule of the
/// pressure equation ṗ = (B_e/V) ΣQ (000 eq. 22) with the constant capacitance C = V/B_e of a
/// hose-only volume (000 eq. 23: C = V_h/B_oil + V_h/B_hose) says
/// C (p_k+1 − p_k) = h/2 (N_k + N_k+1), N = pump delivery − relief − the consumers' flows
/// (through the load-check valves into the four valve sections).
/// The pump's delivery is its stroked flow ε D ω/2π less its leakage C_L Δp.
#[test]
fn excavator_pump_flow_equals_consumers_relief_and_leakage() {
    let r = cycle();
    let spec = spec_of("excavator");
    let vp = spec
        .hydraulics
        .volumes
        .iter()
        .find(|v| v.name == "VP")
        .unwrap();
    let c = vp.hose_volume_m3 / spec.hydraulics.fluid.bulk_modulus_pa
        + vp.hose_volume_m3 / vp.hose_bulk_modulus_pa.unwrap();
    let h = r.sim.model().step_s();
    let p_t = spec.hydraulics.tanks[0].pressure_pa;
    let (p, pump, eps, relief, omega) = (
        r.col("VP.p"),
        r.col("pump.flow"),
        r.col("pump.displacement_fraction"),
        r.col("relief.flow"),
        r.col("engine.value"),
    );
    // the consumers: the four load-check valves from VP into the valves' supply passages
    let checks: Vec<_> = ["boom", "arm", "bucket", "swing"]
        .iter()
        .map(|v| r.col(&format!("load_check_{v}.flow")))
        .collect();
    let consumers = |k: usize| -> f64 { checks.iter().map(|q| q[k]).sum() };
    let net = |k: usize| pump[k] - relief[k] - consumers(k);
    let pc = pump_and_relief(&spec).0;
    let (d, c_l) = (pc.displacement_m3_per_rev, leakage_coefficient(&pc));
    let mut worst = 0.0f64;
    // instants: at rest with the engine up, reaching into the pile, the cut, boom up while
    // swinging, the dump, the swing back with the boom down, at rest
    for t in [1.0, 1.3, 3.0, 6.0, 9.0, 11.5, 15.0] {
        let k = (t / h).round() as usize;
        let lhs = c * (p[k + 1] - p[k]);
        let rhs = 0.5 * h * (net(k) + net(k + 1));
        worst = worst.max((lhs - rhs).abs() / h);
        // the pump's delivery plus its leakage is its stroked flow ε D ω / 2π
        let full = d * omega[k] / (2.0 * std::f64::consts::PI);
        let stroked = eps[k] * full;
        let leak = c_l * (p[k] - p_t);
        assert!(
            (pump[k] + leak - stroked).abs() <= 1e-12 * full,
            "t {t}: {} + {leak} vs {stroked}",
            pump[k]
        );
        assert!(full > 7e-3, "t {t}: pump at speed");
    }
    eprintln!("continuity: worst {worst:e} m³/s");
    // to the Newton tolerance: 0.1 Pa on p is C · 0.1 / h ≈ 4e-10 m³/s of flow
    assert!(worst < 1e-9, "continuity error {worst} m³/s");
}

/// The compensator caps the pump line at p_T + p_c + Δp_reg, below the main relief's cracking
/// pressure, so the main relief never opens; with every valve centred (the rest at the end of
/// the cycle) the pump destrokes to deliver only its own leakage, at the pressure where
/// ε_s(Δp) D ω/2π = C_L Δp, between p_c and p_c + Δp_reg (models/README.md).
#[test]
fn excavator_compensator_caps_the_pump_line_and_the_main_relief_stays_shut() {
    let r = cycle();
    let spec = spec_of("excavator");
    let (pump, relief) = pump_and_relief(&spec);
    let p_t = spec.hydraulics.tanks[0].pressure_pa;
    let cap = p_t + compensator_cap(&pump);
    let p = r.col("VP.p");
    let peak = p.iter().fold(0.0f64, |m, x| m.max(*x));
    eprintln!("pump line: peak {peak} Pa, compensator cap {cap} Pa");
    assert!(peak <= cap, "pump line peak {peak} Pa above {cap} Pa");
    assert!(cap < p_t + relief.cracking_pressure_pa - 0.005 * relief.cracking_pressure_pa);
    assert_eq!(
        max_abs(&r.col("relief.flow")),
        0.0,
        "the main relief opened"
    );
    // at rest: the net delivery is zero, the stroke holds the leakage
    let t = 17.0;
    let (dp, eps, q) = (
        r.at("VP.p", t) - p_t,
        r.at("pump.displacement_fraction", t),
        r.at("pump.flow", t),
    );
    let full = pump.displacement_m3_per_rev * r.at("engine.value", t) / std::f64::consts::TAU;
    eprintln!("at rest: Δp {dp} Pa, ε {eps}, Q {q} m³/s");
    // to the Newton tolerance, as the continuity test: 0.1 Pa on the line is C · 0.1 Pa / h
    // ≈ 4e-10 m³/s (measured 7.9e-11 m³/s)
    assert!(q.abs() < 1e-9, "the pump delivers {q} m³/s at rest");
    assert!(dp > pump.compensator_pressure_pa && dp < compensator_cap(&pump));
    // Q = ε D ω/2π − C_L Δp, exactly (the pump's own law)
    assert!((eps * full - leakage_coefficient(&pump) * dp - q).abs() < 1e-12 * full);
}

/// The excavator with only its swing valve moving: U_swing ramps to `u` [V] over 1.0–1.2 s and
/// closes over `end_s` − 0.2 to `end_s`, for `end_s` + 4 s.
fn swing_alone(u: f64, end_s: f64) -> ModelSpec {
    use hydraulink::elements::inputs::SignalSpec;
    let mut spec = spec_of("excavator");
    for i in &mut spec.inputs {
        match i.name.as_str() {
            "U_boom" | "U_arm" | "U_bucket" => i.signal = SignalSpec::Constant { value: 0.0 },
            "U_swing" => {
                i.signal = SignalSpec::Table {
                    times: vec![0.0, 1.0, 1.2, end_s - 0.2, end_s],
                    values: vec![0.0, 0.0, u, u, 0.0],
                }
            }
            _ => {}
        }
    }
    spec.solver.duration_s = end_s + 4.0;
    spec
}

/// How fast and how far the house swings (models/README.md, the excavator's page). With load
/// sensing the pump holds its line a margin Δp_m above the working port, so the valve's
/// meter-in edge passes Q = C_v U √Δp_m whatever the load; at a steady speed the motor needs
/// almost no pressure difference, both edges carry Q at the same drop, and the house turns at
/// ω = Q/(i D/2π). Δp_m is the regulator's set margin plus half its regulation range (the pump
/// part-stroked). The house accelerates at the crossover reliefs' torque,
/// α_a = i η_hm D Δp_cr/(2π I), and the speed it reaches overshoots ω (the crossover relief
/// still spills when the motor catches up with the valve's flow) before the meter-out edge
/// brings it back. Checked: after a 6 s hold, the run's speed against ω to 10 %, at 5 and
/// 10 V; and the angle turned over the hold and the stop against the angle at ω,
/// θ = ω²/(2α_a) + ω (T − ω/α_a) + ω²/(2α_b) with α_b = i D Δp_cr/(2π η_hm I), to 10 %
/// (the overshoot adds to it).
#[test]
fn house_swing_speed_and_angle_follow_the_hand_estimate() {
    use std::f64::consts::PI;
    let spec = spec_of("excavator");
    let motor = spec
        .elements
        .iter()
        .find_map(|e| match e {
            ComponentSpec::HydraulicMotor(m) => Some(m.clone()),
            _ => None,
        })
        .unwrap();
    let pump = pump_and_relief(&spec).0;
    assert!(
        pump.load_sense.is_some(),
        "the excavator's pump senses the load"
    );
    let crossover = spec
        .elements
        .iter()
        .find_map(|e| match e {
            ComponentSpec::ReliefValve(r) if r.name == "swing_relief_12" => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    let valve = spec
        .hydraulics
        .valves
        .iter()
        .find(|v| v.name == "DCV_swing")
        .unwrap();
    let (i, d) = (motor.gear_ratio.unwrap(), motor.displacement_m3_per_rev);
    let eta_hm = motor.hydromechanical_efficiency.unwrap();
    let per_rad = i * d / (2.0 * PI); // oil per radian of the house [m³/rad]
                                      // the inertia of everything above the swing joint about its axis, from the model: the
                                      // kinetic energy at a swing rate of 1 rad/s is I/2
    let mut spinning = spec.clone();
    let swing = spinning
        .joints
        .iter_mut()
        .find(|j| j.name == "swing")
        .unwrap();
    swing.qd0 = hydraulink::model::spec::Values::One(1.0);
    let st =
        hydraulink::pipeline::initialization::initialize(&hydraulink::compile(&spinning).unwrap())
            .unwrap();
    let inertia = 2.0 * (st.energy0_j - st.potential0_j);
    let dp_cr = crossover.cracking_pressure_pa;
    let accel = i * eta_hm * d * dp_cr / (2.0 * PI) / inertia;
    let brake = i * d * dp_cr / (2.0 * PI * eta_hm) / inertia;
    let dp_m = pump.compensator_pressure_pa + 0.5 * pump.regulation_range_pa;
    let (end_s, held) = (7.0, 6.0); // the mid-ramps 1.1 s and 6.9 s: 5.8 s open, 6 s from the start
    for u in [5.0, 10.0] {
        let w = valve.flow_constant * u * dp_m.sqrt() / per_rad;
        let theta = w * w / (2.0 * accel) + w * (held - w / accel) + w * w / (2.0 * brake);
        let r = run(hydraulink::compile(&swing_alone(u, end_s)).unwrap());
        let rate = r.col("swing.qd");
        let w_run = r.at("swing.qd", end_s - 0.2);
        let w_max = rate.iter().cloned().fold(0.0, f64::max);
        let got = *r.col("swing.q").last().unwrap();
        let (err_w, err_theta) = ((w - w_run) / w_run, (theta - got) / got);
        eprintln!(
            "swing alone at {u} V: I = {inertia:.0} kg m², ω = {w:.3} rad/s ({:.2} rpm) against \
             the run's {w_run:.3} rad/s at the end of the hold ({err_w:+.1e}; it peaked at \
             {w_max:.3}), α = {accel:.3}/{brake:.3} rad/s², angle {:.1}° against the run's \
             {:.1}° ({err_theta:+.1e})",
            w * 60.0 / (2.0 * PI),
            theta.to_degrees(),
            got.to_degrees(),
        );
        assert!(err_w.abs() <= 0.10, "speed {w} rad/s vs run {w_run} rad/s");
        assert!(
            err_theta.abs() <= 0.10,
            "angle {theta} rad vs run {got} rad"
        );
    }
    // the class figure (models/README.md): 11.3 rpm at full stick, to the 10 % of the issue's
    // acceptance for the spec-sheet figures
    let w_full = valve.flow_constant * 10.0 * dp_m.sqrt() / per_rad * 60.0 / (2.0 * PI);
    assert!((w_full - 11.3).abs() < 0.10 * 11.3, "{w_full} rpm at 10 V");
}

/// Every cylinder chamber with the port relief that guards it: (volume, its relief's cracking
/// pressure [Pa], the cylinder, its piston area [m²]).
fn chambers_and_port_reliefs(spec: &ModelSpec) -> Vec<(String, f64, String, f64)> {
    let mut out = Vec::new();
    for c in &spec.hydraulics.cylinders {
        let area = std::f64::consts::PI / 4.0 * c.piston_diameter_m * c.piston_diameter_m;
        for v in [&c.piston_side, &c.rod_side] {
            let relief = spec
                .elements
                .iter()
                .find_map(|e| match e {
                    ComponentSpec::ReliefValve(r) if &r.inlet == v => Some(r.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("chamber {v} of {} has no port relief", c.name));
            out.push((v.clone(), relief.cracking_pressure_pa, c.name.clone(), area));
        }
    }
    out
}

/// Issue 24's acceptance on the shipped cycle: no cylinder chamber above 110 % of its port
/// relief's setting, and the swing motor's pressure difference below 110 % of its crossover
/// reliefs' (every step of the run).
#[test]
fn excavator_cycle_keeps_every_chamber_below_110_percent_of_its_port_relief() {
    let r = cycle();
    let spec = spec_of("excavator");
    let p_t = spec.hydraulics.tanks[0].pressure_pa;
    let chambers = chambers_and_port_reliefs(&spec);
    assert_eq!(
        chambers.len(),
        6,
        "the six chambers of boom, arm and bucket"
    );
    for (v, p_cr, cyl, _) in &chambers {
        let peak = r
            .col(&format!("{v}.p"))
            .iter()
            .fold(0.0f64, |m, x| m.max(*x));
        eprintln!(
            "{v} ({cyl}): peak {:.2} MPa gauge, {:.1} % of its port relief",
            (peak - p_t) / 1e6,
            100.0 * (peak - p_t) / p_cr
        );
        assert!(peak - p_t <= 1.1 * p_cr, "{v}: {peak} Pa");
    }
    let crossover = spec
        .elements
        .iter()
        .find_map(|e| match e {
            ComponentSpec::ReliefValve(r) if r.name == "swing_relief_12" => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    let (a, b) = (r.col("VS1.p"), r.col("VS2.p"));
    let dp = a
        .iter()
        .zip(&b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    eprintln!(
        "swing motor: peak |VS1 − VS2| {:.2} MPa, {:.1} % of its crossover reliefs",
        dp / 1e6,
        100.0 * dp / crossover.cracking_pressure_pa
    );
    assert!(dp <= 1.1 * crossover.cracking_pressure_pa, "{dp} Pa");
}

/// Issue 24's acceptance: no volume of the circuit below 0 Pa absolute at any step of the
/// shipped cycle (the make-up checks feed every chamber an overrunning load would drain).
#[test]
fn excavator_cycle_has_no_negative_absolute_pressure() {
    let r = cycle();
    let spec = spec_of("excavator");
    for v in &spec.hydraulics.volumes {
        let low = r
            .col(&format!("{}.p", v.name))
            .iter()
            .fold(f64::MAX, |m, x| m.min(*x));
        eprintln!("{}: lowest {:.4} MPa absolute", v.name, low / 1e6);
        assert!(low > 0.0, "{}: {low} Pa", v.name);
    }
}

/// Issue 24's acceptance: no end-stop force above 1.5 times the cylinder's force at its port
/// relief (the piston area at the relief's setting) in the shipped cycle.
#[test]
fn excavator_cycle_stop_forces_stay_below_one_and_a_half_relief_forces() {
    let r = cycle();
    let spec = spec_of("excavator");
    for (_, p_cr, cyl, area) in chambers_and_port_reliefs(&spec) {
        let stop = spec
            .elements
            .iter()
            .find_map(|e| match e {
                ComponentSpec::EndStop(s) if s.cylinder == cyl => Some(s.name.clone()),
                _ => None,
            })
            .unwrap();
        let peak = max_abs(&r.col(&format!("{stop}.force")));
        let limit = 1.5 * p_cr * area;
        eprintln!(
            "{stop}: peak {:.1} kN, limit {:.1} kN",
            peak / 1e3,
            limit / 1e3
        );
        assert!(peak <= limit, "{stop}: {peak} N against {limit} N");
    }
}

/// At rest (every valve centred, 13–18 s of the cycle) the load-sensing pump stands by: the
/// shuttles are closed, the bleed drains LS to the tank and the regulator holds the pump line
/// at the margin over LS, delivering only its leakage. Issue 24's acceptance: the shaft power
/// at rest is under 10 % of the rated (limit) power. The HUD shows it (the gauge "pump power"
/// reads `pump.shaft_power`); models/README.md gives the figure.
#[test]
fn excavator_pump_power_at_rest_is_under_a_tenth_of_its_rating() {
    let r = cycle();
    let spec = spec_of("excavator");
    let pump = pump_and_relief(&spec).0;
    let t = 17.0;
    let power = r.at("pump.shaft_power", t);
    let rated = pump.max_power_w.expect("the pump has a power limit");
    eprintln!(
        "at rest: shaft power {:.3} kW ({:.2} % of the {:.0} kW limit), VP {:.3} MPa, LS {:.3} MPa",
        power / 1e3,
        100.0 * power / rated,
        rated / 1e3,
        r.at("VP.p", t) / 1e6,
        r.at("LS.p", t) / 1e6
    );
    assert!(
        power >= 0.0 && power < 0.1 * rated,
        "{power} W of {rated} W"
    );
    assert!(spec
        .hud
        .gauges
        .iter()
        .any(|g| g.sensor == "pump.shaft_power"));
}

/// The power limiter holds the pump's shaft power at its limit through the cycle (up to the
/// smooth minimum's blend, which only gives stroke away: ε ≤ ε_P, so ω T ≤ P_max).
#[test]
fn excavator_pump_power_stays_within_its_limit() {
    let r = cycle();
    let pump = pump_and_relief(&spec_of("excavator")).0;
    let limit = pump.max_power_w.expect("the pump has a power limit");
    let peak = r
        .col("pump.shaft_power")
        .iter()
        .fold(0.0f64, |m, x| m.max(*x));
    eprintln!(
        "pump shaft power: peak {:.1} kW, limit {:.0} kW",
        peak / 1e3,
        limit / 1e3
    );
    assert!(peak <= limit * (1.0 + 1e-9), "{peak} W above {limit} W");
    assert!(peak > 0.9 * limit, "the cycle uses the engine: {peak} W");
}

/// The design script `scripts/design/excavator_linkage.py` (numpy; CI installs it from
/// scripts/requirements.txt) finds every stroke ending before its dead centre and the working
/// range and digging forces within 10 % of the cited figures (its exit status), and the pins it
/// prints for the initial pose are the model's, to the file's 6 decimals.
#[test]
fn excavator_pins_are_the_design_scripts() {
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("python3")
        .arg(format!("{root}/scripts/design/excavator_linkage.py"))
        .arg("--toml")
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let front = Front::of(&spec_of("excavator"));
    let mut checked = 0;
    for (pin, marker) in [
        ("A", "joint.z_boom"),
        ("G", "upper.G"),
        ("B", "boom.B"),
        ("D", "boom.D"),
        ("C", "boom.C"),
        ("E", "arm.E"),
        ("H", "arm.H"),
        ("I", "arm.I"),
        ("F", "arm.F"),
        ("J", "bucket.J"),
        ("P", "bucket.P"),
        ("K", "side_link.K"),
    ] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{pin} = [")))
            .unwrap_or_else(|| panic!("the script prints {pin}"));
        let xy: Vec<f64> = line[line.find('[').unwrap() + 1..line.find(']').unwrap()]
            .split(',')
            .map(|v| v.trim().parse().unwrap())
            .collect();
        let m = front.p(marker);
        assert!(
            (xy[0] - m[0]).abs() < 1e-6 && (xy[1] - m[1]).abs() < 1e-6,
            "{pin}: script {xy:?}, model {m:?}"
        );
        checked += 1;
    }
    assert_eq!(checked, 12);
}
