//! How `run` maps a duration onto whole steps, and how it writes their times.

mod support;

use std::fs;

use support::{hydraulink, repo_file, temp_dir};

/// `hydraulink run MODEL ARGS --out DIR` (the repository's `model`), which must succeed: its
/// stderr and the time column of results.csv as printed.
fn run_times(model: &str, args: &[&str], dir: &std::path::Path) -> (String, Vec<String>) {
    let model = repo_file(model);
    let mut all = vec!["run", model.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", dir.to_str().unwrap()]);
    let output = hydraulink(&all);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let csv = fs::read_to_string(dir.join("results.csv")).unwrap();
    let times = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    (stderr, times)
}

/// A duration that is not a whole number of steps is rounded up to the next step, with a note on
/// stderr; the times in results.csv are k·Δt in the decimal the user wrote (11.998, not
/// 11.998000000000001).
#[test]
fn a_duration_between_steps_is_rounded_up_and_times_are_k_steps() {
    let dir = temp_dir("steps7ms");
    let (stderr, times) = run_times(
        "models/fourbar.toml",
        &["--step", "0.007", "--duration", "12"],
        &dir,
    );
    assert!(
        stderr.contains(
            "note: the duration 12 s is not a whole number of steps of 0.007 s; the run takes \
             1715 steps and ends at t = 12.005 s"
        ),
        "{stderr}"
    );
    assert_eq!(times.len(), 1716);
    assert_eq!(times[1714], "11.998");
    assert_eq!(times[1715], "12.005");
    for (k, t) in times.iter().enumerate() {
        // the shortest form of the decimal k·7 ms: at most three decimals
        let decimals = t.split_once('.').map_or(0, |(_, f)| f.len());
        assert!(decimals <= 3, "row {k}: {t}");
        assert_eq!(
            t.parse::<f64>().unwrap(),
            (k as f64 * 7.0) / 1000.0,
            "row {k}"
        );
    }
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["simulated_time_s"], 12.005);
}

/// A whole number of steps runs exactly that many, with no note.
#[test]
fn a_whole_number_of_steps_gets_no_note() {
    let dir = temp_dir("steps1ms");
    let (stderr, times) = run_times(
        "docs/tutorial/step1_pendulum.toml",
        &["--duration", "0.3", "--step", "0.1"],
        &dir,
    );
    assert!(!stderr.contains("note:"), "{stderr}");
    assert_eq!(times, ["0", "0.1", "0.2", "0.3"]);
}
