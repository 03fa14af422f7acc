//! Adaptive step-size control (`solver.step_control = "adaptive"`) through the real binary:
//! `run` at rtol 1e-6 against a fine fixed-step run of the same model, row by row (the dense
//! output puts both on the same output times), and the step counts in summary.json.

mod support;

use std::fs;
use std::path::Path;

use support::{hydraulink, repo_file, temp_dir};

/// `hydraulink run MODEL ARGS --out DIR`, which must succeed: the header and rows of
/// results.csv.
fn run(model: &str, args: &[&str], dir: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let model = repo_file(model);
    let mut all = vec!["run", model.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", dir.to_str().unwrap()]);
    let output = hydraulink(&all);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let csv = fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    (header, rows)
}

/// summary.json of the run in `dir`.
fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// Largest |a − b| over every row of the columns `names`, the rows taken at the same times.
fn max_deviation(
    (ha, ra): &(Vec<String>, Vec<Vec<f64>>),
    (hb, rb): &(Vec<String>, Vec<Vec<f64>>),
    names: &[&str],
) -> f64 {
    assert_eq!(ra.len(), rb.len(), "the same output rows");
    let mut worst: f64 = 0.0;
    for name in names {
        let ca = ha.iter().position(|h| h == name).expect("column");
        let cb = hb.iter().position(|h| h == name).expect("column");
        for (a, b) in ra.iter().zip(rb) {
            assert_eq!(a[0], b[0], "rows at the same time");
            worst = worst.max((a[ca] - b[cb]).abs());
        }
    }
    worst
}

/// The step counts of an adaptive run: present, with rejections counted and steps in range.
fn check_counts(dir: &Path) -> serde_json::Value {
    let s = summary(dir);
    assert_eq!(s["status"], "completed", "{s}");
    let a = &s["adaptive_steps"];
    assert!(a["accepted"].as_u64().unwrap() > 0, "{s}");
    assert!(a["rejected"].as_u64().is_some(), "{s}");
    let (min, max) = (
        a["min_step_s"].as_f64().unwrap(),
        a["max_step_s"].as_f64().unwrap(),
    );
    assert!(0.0 < min && min <= max, "{s}");
    s
}

const ADAPTIVE: &[&str] = &[
    "--set",
    "solver.step_control=\"adaptive\"",
    "--set",
    "solver.rtol=1e-6",
];

/// The crane of 002 Publication III after an impulse on its valve (no seal friction): its
/// almost undamped 29.5 Hz oil-column mode rings on after the valve closes at 0.7 s. Adaptive
/// at rtol 1e-6 (step doubling with local extrapolation, the first-order block's estimate
/// filtered through the tangent, `pipeline::step_control`) keeps every chamber pressure within
/// 0.5 % of the supply pressure (7.6 MPa) of a fixed 0.01 ms run at every output row: issue
/// 25's accuracy criterion, over CRANE_DURATION_S instead of 8 s to keep CI short. The
/// tolerance is the issue's own; measured over the full 8 s: 0.26 % (the trapezoid's
/// three-point estimate: 4.1 % at rtol 1e-6), so the 2 s run is not a weaker test of a drift
/// that only shows later. (Most of the 0.26 % is the reference's own: the 0.01 ms run at the
/// model's Newton tolerances is 0.26 % from the same run at tolerances 1000× tighter, which
/// the adaptive run meets to 0.007 %.)
///
/// Its cost, issue 25's other half: the run takes fewer trapezoidal steps (three per attempt,
/// accepted or rejected) than the largest fixed step that meets the 0.5 % over 8 s (between
/// 0.0625 and 0.0714 ms; 62.5 µs taken): 15 210 against 32 000 over 2 s (the unfiltered estimate
/// took 95 427, held at 0.05–0.1 ms by the hose volume V3).
#[test]
fn crane_impulse_adaptive_keeps_the_pressures_of_a_fine_fixed_run() {
    let base = [
        "--set",
        "DCV.input=\"impulse\"",
        "--set",
        "cylinder.friction.type=\"none\"",
        "--duration",
        CRANE_DURATION_S,
        "--output-interval",
        "0.001",
    ];
    let (fine_dir, adaptive_dir) = (temp_dir("crane-fine"), temp_dir("crane-adaptive"));
    let mut fine_args = base.to_vec();
    fine_args.extend_from_slice(&["--step", "1e-5"]);
    let fine = run("models/crane1.toml", &fine_args, &fine_dir);
    let adaptive_args = [
        base.as_slice(),
        &[
            "--set",
            "solver.step_control=\"adaptive\"",
            "--set",
            "solver.rtol=1e-6",
        ],
    ]
    .concat();
    let adaptive = run("models/crane1.toml", &adaptive_args, &adaptive_dir);
    let dev = max_deviation(&adaptive, &fine, &["V1.p", "V2.p", "V3.p"]);
    // 0.5 % of the supply pressure p_P = 7.6 MPa (issue 25)
    assert!(
        dev <= 0.005 * 7.6e6,
        "largest chamber pressure deviation {dev} Pa"
    );
    let s = check_counts(&adaptive_dir);
    let a = &s["adaptive_steps"];
    let attempts = a["accepted"].as_u64().unwrap() + a["rejected"].as_u64().unwrap();
    let duration: f64 = CRANE_DURATION_S.parse().unwrap();
    let fixed_steps = duration / 62.5e-6;
    assert!(
        (3 * attempts) as f64 <= fixed_steps,
        "{attempts} attempts (3 trapezoidal steps each) against {fixed_steps} fixed steps: {s}"
    );
}

/// Duration of the crane test [s]: the pulse (0.3–0.7 s) and the ringing after it.
const CRANE_DURATION_S: &str = "2";

/// The four-bar of 000 (10 s, valve up, hold, down): adaptive at rtol 1e-6 against a fixed
/// 0.1 ms run at every 1 ms output row. Tolerances: 1e-5 rad on the joint angles and 0.2 % of
/// the supply pressure (7.6 MPa) on the pressures; measured 2.1e-6 rad and 6.0 kPa against a
/// 0.01 ms run (the fixed 1 ms step: 4.6e-6 rad and 36 kPa), so they hold the controller to
/// better than the shipped fixed step with a margin of about 2.5 for the reference's own error.
/// With the filtered estimate (2026-11): 1.6e-6 rad and 2.5 kPa against the 0.01 ms run, as
/// with the raw one.
#[test]
fn fourbar_adaptive_matches_a_fine_fixed_run() {
    let (fine_dir, adaptive_dir) = (temp_dir("fourbar-fine"), temp_dir("fourbar-adaptive"));
    let fine = run(
        "models/fourbar.toml",
        &["--step", "1e-4", "--output-interval", "0.001"],
        &fine_dir,
    );
    let mut args = vec!["--output-interval", "0.001"];
    args.extend_from_slice(ADAPTIVE);
    let adaptive = run("models/fourbar.toml", &args, &adaptive_dir);
    let dz = max_deviation(&adaptive, &fine, &["z1.q", "z2.q", "z3.q"]);
    assert!(dz <= 1e-5, "largest joint deviation {dz} rad");
    let dp = max_deviation(&adaptive, &fine, &["V1.p", "V2.p", "V3.p"]);
    assert!(dp <= 0.002 * 7.6e6, "largest pressure deviation {dp} Pa");
    check_counts(&adaptive_dir);
}

/// The excavator (its first 6 s: boom, arm and bucket strokes through the load-sensing
/// circuit): adaptive at rtol 1e-6 against a fixed 0.1 ms run at every 1 ms output row.
/// Tolerances: 3e-5 rad on the joint angles and 10 kPa on the pressures (the circuit works at
/// 1–35 MPa); measured 1.1e-5 rad and 4.2 kPa, about what the fixed 1 ms step gives against the
/// same reference (1.5e-5 rad, 5.6 kPa): at this accuracy the reference's own error counts.
/// Measured again with the filtered estimate (2026-11): 2.6e-5 rad and 4.2 kPa (the raw step
/// doubling, same binary session: 2.5e-5 rad), so the joint tolerance has a margin of 1.15 only.
#[test]
fn excavator_adaptive_matches_a_fine_fixed_run() {
    let (fine_dir, adaptive_dir) = (temp_dir("excavator-fine"), temp_dir("excavator-adaptive"));
    let base = ["--duration", "6", "--output-interval", "0.001"];
    let mut fine_args = base.to_vec();
    fine_args.extend_from_slice(&["--step", "1e-4"]);
    let fine = run("models/excavator.toml", &fine_args, &fine_dir);
    let mut args = base.to_vec();
    args.extend_from_slice(ADAPTIVE);
    let adaptive = run("models/excavator.toml", &args, &adaptive_dir);
    let dz = max_deviation(
        &adaptive,
        &fine,
        &["swing.q", "z_boom.q", "z_arm.q", "z_bucket.q"],
    );
    assert!(dz <= 3e-5, "largest joint deviation {dz} rad");
    let pressures: Vec<String> = fine
        .0
        .iter()
        .filter(|h| h.ends_with(".p"))
        .cloned()
        .collect();
    let names: Vec<&str> = pressures.iter().map(String::as_str).collect();
    let dp = max_deviation(&adaptive, &fine, &names);
    assert!(dp <= 1e4, "largest pressure deviation {dp} Pa");
    check_counts(&adaptive_dir);
}

/// Real time steps at a fixed step: an adaptive model is refused with a clear message.
#[test]
fn realtime_refuses_adaptive_steps() {
    let model = repo_file("models/fourbar.toml");
    let out = hydraulink(&[
        "realtime",
        model.to_str().unwrap(),
        "--set",
        "solver.step_control=\"adaptive\"",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("fixed step"), "{stderr}");
}
