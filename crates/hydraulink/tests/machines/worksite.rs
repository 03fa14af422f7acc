//! The excavator with its worksite (`models/scenes/worksite.toml`, the file `models/excavator.toml`
//! names in `scene`): the worksite's elements compile against the machine; swinging from the
//! reference pose drives the arm and bucket into the pole in the swing's path, the hit
//! counters count it, the pole stops the swing, and the energy balance with the contacts
//! closes.

use crate::common::spec_of;
use hydraulink::elements::component::ComponentSpec;
use hydraulink::Simulation;

/// The excavator with the worksite's elements appended and its terrain and game (what
/// `hydraulink_io::add_scene` does).
fn excavator_with_worksite(duration_s: f64) -> hydraulink::ModelSpec {
    let mut spec = spec_of("excavator");
    assert_eq!(spec.scene.as_deref(), Some("scenes/worksite.toml"));
    let path = format!(
        "{}/../../models/scenes/worksite.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("the worksite exists");
    #[derive(serde::Deserialize)]
    struct Scene {
        #[allow(dead_code)]
        description: String,
        elements: Vec<ComponentSpec>,
        terrain: Option<hydraulink::terrain::data::TerrainSpec>,
        game: Option<hydraulink::model::spec::GameSpec>,
    }
    let scene: Scene = toml::from_str(&text).expect("the worksite parses");
    spec.elements.extend(scene.elements);
    spec.terrain = scene.terrain;
    spec.game = scene.game;
    spec.solver.duration_s = duration_s;
    spec
}

/// The operator's moves: the arm out (−8 V) for the first `ARM_OUT_S`, so the bucket reaches
/// past the pole, then the swing at −10 V (towards +z); the columns `labels` every step.
fn swing(spec: &hydraulink::ModelSpec, labels: &[&str]) -> (Vec<Vec<f64>>, Simulation) {
    let model = hydraulink::compile(spec).expect("the excavator with its worksite compiles");
    let mut sim = Simulation::new(model).expect("initialization succeeds");
    for (name, u) in [
        ("U_swing", 0.0),
        ("U_boom", 0.0),
        ("U_arm", -8.0),
        ("U_bucket", 0.0),
    ] {
        sim.set_input(name, u)
            .expect("the excavator has this input");
    }
    let all = sim.output_labels();
    let idx: Vec<usize> = labels
        .iter()
        .map(|l| {
            all.iter()
                .position(|a| a == l)
                .unwrap_or_else(|| panic!("no column {l}"))
        })
        .collect();
    let mut row = vec![0.0; all.len()];
    let mut out = vec![Vec::new(); labels.len()];
    let n = (sim.model().duration_s() / sim.model().step_s()).round() as usize;
    for _ in 0..=n {
        sim.output_row(&mut row);
        for (k, &i) in idx.iter().enumerate() {
            out[k].push(row[i]);
        }
        if (sim.state().t_s - ARM_OUT_S).abs() < 0.5 * sim.model().step_s() {
            sim.set_input("U_arm", 0.0).expect("input");
            sim.set_input("U_swing", -10.0).expect("input");
        }
        if sim.state().t_s < sim.model().duration_s() - 0.5 * sim.model().step_s() {
            sim.step().unwrap_or_else(|e| panic!("step failed: {e}"));
        }
    }
    (out, sim)
}

/// How long the arm moves out before the swing [s]: z_arm reaches 0.45 rad (the load-sensing
/// pump's arm valve, sized for its margin, moves it there in 1.0 s; 1.5 s before it).
const ARM_OUT_S: f64 = 1.0;

#[test]
fn excavator_swings_into_a_pole_counts_the_hit_and_keeps_the_energy_balance() {
    let spec = excavator_with_worksite(4.0);
    let labels = [
        "time",
        "swing.q",
        "arm_obstacles.hits",
        "z_arm.q",
        "bucket_obstacles.hits",
        "boom_obstacles.hits",
        "bucket_ground.hits",
        "arm_obstacles.peak_force",
        "bucket_obstacles.peak_force",
        "energy.drift",
        "energy.kinetic",
        "arm_obstacles.energy_dissipated",
        "bucket_obstacles.energy_dissipated",
    ];
    let (c, _) = swing(&spec, &labels);
    let last = |k: usize| *c[k].last().unwrap();
    let (arm, bucket, boom, ground) = (last(2), last(4), last(5), last(6));
    let k_arm_out = (ARM_OUT_S / 1e-3) as usize;
    eprintln!("z_arm after {ARM_OUT_S} s: {:.4} rad", c[3][k_arm_out]);
    let swing_max = c[1].iter().fold(f64::MIN, |m, &x| m.max(-x));
    eprintln!(
        "swing into pole_a: hits arm {arm}, bucket {bucket}, boom {boom}, ground {ground}; \
         peak force arm {:.0} N, bucket {:.0} N; largest swing {swing_max:.4} rad; final {:.4} rad",
        last(7),
        last(8),
        last(1)
    );
    // the arm reaches the pole (ψ ≈ −0.5 rad, 5.5 m out) at about 3.5 m height, the bucket
    // hangs beyond it: the arm's hits are counted (measured 2: the impact, and the swing motor
    // pressing it back on after the rebound), the bucket, the boom and the ground are not touched
    assert!(arm >= 1.0, "no hit of the arm counted");
    assert_eq!(bucket, 0.0);
    assert_eq!(boom, 0.0);
    assert_eq!(ground, 0.0);
    assert!(last(7).max(last(8)) > 1e3, "the hit carries a force");
    // the pole stops the swing short of its angle (|ψ| = 0.5 rad less the pole's and the boxes' half
    // widths)
    assert!(
        swing_max < 0.5,
        "the swing passed the pole: {swing_max} rad"
    );
    // energy: KE + PE − W_act + D_μ + Σ (ΔE_stored − E_supplied + E_dissipated) of the elements
    // keeps its initial value up to the integration error; the swing motor's supplied work and
    // the contacts' dissipation are in it. Bound: 1 % of the energy the contacts dissipated (an
    // account left out would be ~100 %); measured below.
    let drift = c[9].iter().fold(0.0f64, |m, &x| m.max(x.abs()));
    let dissipated = last(11) + last(12);
    let ke = c[10].iter().fold(0.0f64, |m, &x| m.max(x));
    eprintln!(
        "energy: worst drift {drift:.3e} J, contacts dissipated {dissipated:.3e} J, largest KE {ke:.3e} J"
    );
    assert!(dissipated > 100.0, "the hit dissipates: {dissipated} J");
    assert!(
        drift < 1e-2 * dissipated,
        "drift {drift} J of {dissipated} J dissipated"
    );
}
