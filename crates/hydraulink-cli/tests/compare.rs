//! `hydraulink compare` end to end (issue 23 item 5): without `--formulations` it runs every
//! formulation that accepts the model and names those it skips, and each cavitation warning
//! names the formulation (and time step) of its run.

mod support;
use std::fs;
use support::{hydraulink, repo_file, temp_dir};

/// Runs `hydraulink compare ARGS… --out <temp>/<name>`; returns (exit code, stdout, stderr, the
/// formulations of compare.csv's rows).
fn compare(name: &str, args: &[&str]) -> (Option<i32>, String, String, Vec<String>) {
    let dir = temp_dir(name);
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", dir.to_str().unwrap()]);
    let out = hydraulink(&all);
    let csv = fs::read_to_string(dir.join("compare.csv")).unwrap_or_default();
    let rows = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        rows,
    )
}

/// The formulations the stderr line `formulations: a, b, … (…)` lists.
fn listed(stderr: &str) -> Vec<String> {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("formulations: "))
        .unwrap_or_else(|| panic!("no formulations line in: {stderr}"));
    line.split(" (")
        .next()
        .unwrap()
        .split(", ")
        .map(str::to_string)
        .collect()
}

/// Every formulation name `hydraulink compare --formulations` takes, from the error it gives
/// for an unknown one (so the test follows the program's own list).
fn every_formulation() -> Vec<String> {
    let out = hydraulink(&["compare", "--formulations", "bogus", "--duration", "0.001"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let names = [
        "penalty",
        "double-step",
        "global-ali3p",
        "global-i1al",
        "kinematic-guidance",
        "multirate",
    ];
    for n in names {
        assert!(
            err.contains(n),
            "'{n}' is not a formulation any more: {err}"
        );
    }
    names.iter().map(|n| n.to_string()).collect()
}

/// The built-in four-bar runs under every formulation: without `--formulations`, `compare`
/// runs them all (it ran `penalty` alone), the model's own (`penalty`) first as the reference,
/// and skips none.
#[test]
fn without_formulations_every_formulation_that_accepts_the_model_runs() {
    let (code, stdout, err, rows) = compare("all", &["--duration", "0.02"]);
    assert_eq!(code, Some(0), "{stdout}\n{err}");
    let all = every_formulation();
    assert_eq!(listed(&err), all, "{err}");
    assert_eq!(rows, all, "one row per formulation, in order");
    assert!(!err.contains("skipped"), "{err}");
    for f in &all {
        assert!(
            stdout.contains(&format!("| {f} |")),
            "{f} in the table: {stdout}"
        );
    }
}

/// A LuGre seal has internal states that only `penalty` integrates: on the 003 four-bar every
/// other formulation is skipped, each named on stderr with the reason the library gives
/// (located in the file), and the comparison of the one left succeeds.
#[test]
fn formulations_that_reject_the_model_are_skipped_with_the_reason() {
    let model = repo_file("models/fourbar_friction.toml");
    let (code, stdout, err, rows) =
        compare("lugre", &[model.to_str().unwrap(), "--duration", "0.02"]);
    assert_eq!(code, Some(0), "{stdout}\n{err}");
    assert_eq!(listed(&err), ["penalty"], "{err}");
    assert_eq!(rows, ["penalty"]);
    for f in every_formulation().iter().filter(|f| *f != "penalty") {
        let line = err
            .lines()
            .find(|l| l.starts_with(&format!("note: skipped '{f}'")))
            .unwrap_or_else(|| panic!("no note for {f}: {err}"));
        assert!(
            line.contains("fourbar_friction.toml:")
                && line.contains("friction law 'lugre' has internal states")
                && line.contains(&format!("formulation '{f}' does not support them")),
            "{line}"
        );
    }
    // asked for by name, a formulation that rejects the model is a failed run, as before
    let (code, _, err, _) = compare(
        "lugre-named",
        &[
            model.to_str().unwrap(),
            "--formulations",
            "penalty,double-step",
            "--duration",
            "0.02",
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("skipped"), "{err}");
}

/// The built-in four-bar's valve closes after the lowering at 8.06 s and its volumes V2 and V1
/// drop below zero (the tutorial quotes the warnings of `run`). Under `compare` every warning
/// names the formulation and the time step of its run; both runs warn.
#[test]
fn cavitation_warnings_name_their_formulation() {
    let (code, stdout, err, _) = compare(
        "cavitation",
        &["--formulations", "penalty,double-step", "--duration", "8.2"],
    );
    assert_eq!(code, Some(0), "{stdout}\n{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert!(!warnings.is_empty(), "{err}");
    for w in &warnings {
        assert!(
            (w.starts_with("warning: penalty at Δt = 0.001 s: volume '")
                || w.starts_with("warning: double-step at Δt = 0.001 s: volume '"))
                && w.contains("pressure below 0 Pa (absolute) at t = 8.0"),
            "{w}"
        );
    }
    for f in ["penalty", "double-step"] {
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with(&format!("warning: {f} at"))),
            "{f}: {err}"
        );
    }
}
