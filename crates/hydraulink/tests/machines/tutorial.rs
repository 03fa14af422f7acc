//! The tutorial "Your first machine" (`docs/tutorial/first-machine.md`): every TOML fragment it
//! shows is part of its step files, and each step does what the text says, checked against
//! physics computed here by hand.

use crate::common::{max_abs, run, spec_from, Run};

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

const STEPS: [&str; 4] = [
    "docs/tutorial/step1_pendulum.toml",
    "docs/tutorial/step2_cylinder.toml",
    "docs/tutorial/step3_valve.toml",
    "docs/tutorial/step4_end_stop.toml",
];

fn run_step(k: usize) -> Run {
    let spec = spec_from(&repo_file(STEPS[k]));
    run(hydraulink::compile(&spec).unwrap_or_else(|e| panic!("{}: {e}", STEPS[k])))
}

/// Every ```toml block of the tutorial appears verbatim in the step file it names in its
/// first line (`# docs/tutorial/stepN_….toml`), so the text cannot drift from the files the
/// tests run.
#[test]
fn the_tutorial_shows_its_step_files() {
    let text = repo_file("docs/tutorial/first-machine.md");
    let mut blocks = 0;
    let mut rest = text.as_str();
    while let Some(i) = rest.find("```toml\n") {
        let body = &rest[i + 8..];
        let end = body.find("```").expect("a closed code block");
        let block = &body[..end];
        let (first, fragment) = block.split_once('\n').expect("a named block");
        let file = first
            .strip_prefix("# ")
            .filter(|f| STEPS.contains(f))
            .unwrap_or_else(|| panic!("a toml block must start with '# <step file>': {first}"));
        assert!(
            repo_file(file).contains(fragment),
            "this fragment of the tutorial is not in {file}:\n{fragment}"
        );
        blocks += 1;
        rest = &body[end + 3..];
    }
    assert!(
        blocks >= 11,
        "the tutorial shows its steps ({blocks} blocks)"
    );
}

/// Every step shows its commands and its run length (issue 11, newcomer test: steps 2–4 had
/// neither, and step 4's lowering at 7 s needs a run of at least 7.5 s): a `check` and a `run`
/// line for each step file, and the `[solver]` block with the file's `duration_s` (the block
/// itself is checked against the file by `the_tutorial_shows_its_step_files`).
#[test]
fn every_step_has_its_commands_and_run_length() {
    let text = repo_file("docs/tutorial/first-machine.md");
    for (k, file) in STEPS.iter().enumerate() {
        for command in ["check", "run"] {
            assert!(
                text.contains(&format!("hydraulink {command} {file}")),
                "step {}: no `hydraulink {command} {file}`",
                k + 1
            );
        }
        let duration = repo_file(file)
            .lines()
            .find(|l| l.starts_with("duration_s"))
            .unwrap_or_else(|| panic!("{file}: no duration_s"))
            .to_string();
        assert!(
            text.contains(&format!(
                "# {file}\n[solver]\nstep_s = 1.0e-3\n{duration}\n"
            )),
            "step {}: the tutorial does not show its [solver] block ({duration})",
            k + 1
        );
    }
}

/// Step 1: the boom swings as a physical pendulum. The period at 30° amplitude is
/// T = 4 √(I_O / (m g d)) K(sin 15°), K the complete elliptic integral of the first kind
/// (I_O = I_c + m d² about the pin, d = 2 m).
#[test]
fn step1_swings_with_the_pendulum_period() {
    let r = run_step(0);
    let (m, d, g, i_c) = (500.0, 2.0, 9.81, 666.7);
    let i_o: f64 = i_c + m * d * d;
    let k = (15.0f64).to_radians().sin();
    // K(k) = π / (2 AGM(1, √(1 − k²)))
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    for _ in 0..10 {
        (a, b) = ((a + b) / 2.0, (a * b).sqrt());
    }
    let kk = std::f64::consts::PI / (2.0 * a);
    let period = 4.0 * (i_o / (m * g * d)).sqrt() * kk;
    // upward crossings of the hanging position θ = −90°, interpolated within the step
    let (t, q) = (r.col("time"), r.col("z1.q"));
    let h = -std::f64::consts::FRAC_PI_2;
    let crossings: Vec<f64> = (1..q.len())
        .filter(|&i| q[i - 1] < h && q[i] >= h)
        .map(|i| t[i - 1] + (h - q[i - 1]) / (q[i] - q[i - 1]) * (t[i] - t[i - 1]))
        .collect();
    assert!(crossings.len() >= 2, "{crossings:?}");
    let measured = crossings[1] - crossings[0];
    // the trapezoidal rule's period error at Δt = 1 ms is O((ω Δt)²/12) ≈ 3e-7
    assert!(
        (measured - period).abs() / period < 1e-4,
        "period {measured} s, expected {period} s"
    );
    // no damping, no drive: the energy is conserved
    assert!(max_abs(&r.col("energy.drift")) < 1e-3, "drift");
}

/// Step 2: trapped oil holds the level boom. The static cylinder force is the virtual-work
/// value m g d / (∂L/∂θ), with ∂L/∂θ = 1.5/√2 m at θ = 0 for base G = (0.5, −1) and rod pin
/// B = (1.5, 0).
#[test]
fn step2_holds_the_boom_with_the_virtual_work_force() {
    let r = run_step(1);
    let expected = 500.0 * 9.81 * 2.0 / (1.5 / 2f64.sqrt());
    let f0 = r.col("cylinder.force")[0];
    assert!(
        (f0 - expected).abs() / expected < 1e-6,
        "{f0} vs {expected}"
    );
    assert!(max_abs(&r.col("z1.q")) < 1e-9, "the boom holds");
}

/// Step 3: the pump lifts the boom through the valve; at rest its whole flow returns over the
/// relief valve, and the pump line never exceeds the relief setting plus its override.
#[test]
fn step3_lifts_on_pump_flow_capped_by_the_relief() {
    let r = run_step(2);
    let z = r.col("z1.q");
    assert!(r.at("z1.q", 2.5) - z[0] > 0.15, "the boom rises");
    let vp = r.col("Vp.p");
    assert!(vp.iter().all(|p| *p <= 1.4e7 + 1.0e6), "relief cap");
    // at rest (valve centred, boom held): pump flow = relief flow
    let (qp, qr) = (r.at("pump.flow", 3.75), r.at("relief.flow", 3.75));
    assert!((qp - qr).abs() < 1e-9, "continuity {qp} vs {qr}");
    assert!(max_abs(&r.col("energy.drift")) < 1e-3 * max_abs(&r.col("energy.actuator_work")));
}

/// Step 4: the lift ends in the cylinder's end stop, which holds the boom.
#[test]
fn step4_holds_the_boom_in_its_end_stop() {
    let r = run_step(3);
    let stop = r.col("stops.force");
    assert!(
        r.at("stops.force", 5.5) != 0.0,
        "the end stop carries the load"
    );
    let (a, b) = (r.at("z1.q", 5.0), r.at("z1.q", 6.0));
    assert!((a - b).abs() < 1e-6, "held: {a} vs {b}");
    assert!(max_abs(&stop) > 0.0);
}
