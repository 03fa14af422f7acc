//! `hydraulink workspace` and the design warnings of `hydraulink check` (issue 24) end to end:
//! the excavator as it was before issue 24 (tests/data/excavator_before_issue24.toml) against the
//! issue's numbers, the shipped excavator and loader (the files exist, their figures are finite,
//! the table parses), and bad options.

mod support;
use std::collections::BTreeMap;
use std::path::Path;

use support::{hydraulink, repo_file, temp_dir};

const BEFORE: &str = "crates/hydraulink-cli/tests/data/excavator_before_issue24.toml";
const LOADER_POINT: &str = "bucket.E";

/// working_range.csv as quantity → value; every value finite.
fn table(dir: &Path) -> BTreeMap<String, f64> {
    let text = std::fs::read_to_string(dir.join("working_range.csv")).expect("the table");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("quantity,value,unit"));
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            assert_eq!(cells.len(), 3, "{l}");
            let v: f64 = cells[1].parse().unwrap_or_else(|e| panic!("{l}: {e}"));
            assert!(v.is_finite(), "{l}");
            (cells[0].to_string(), v)
        })
        .collect()
}

/// Runs `workspace` on `model` into a fresh folder; checks the files and returns the table.
fn workspace(model: &str, point: &str, extra: &[&str]) -> BTreeMap<String, f64> {
    let out = temp_dir(&format!("workspace_{}", point.replace('.', "_")));
    let model = repo_file(model);
    let mut args = vec![
        "workspace",
        model.to_str().unwrap(),
        "--point",
        point,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = hydraulink(&args);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("digging_depth"), "{stdout}");
    let svg = std::fs::read_to_string(out.join("working_range.svg")).expect("the diagram");
    for label in ["digging depth", "cutting height", "dump height", "ground"] {
        assert!(svg.contains(label), "{label} missing from the diagram");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("working_range.json")).unwrap())
            .expect("the JSON parses");
    assert!(json["figures"]["digging_depth_m"]
        .as_f64()
        .unwrap()
        .is_finite());
    table(&out)
}

#[test]
fn check_names_the_dead_centres_of_the_excavator_before_issue24() {
    let o = hydraulink(&["check", repo_file(BEFORE).to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    // the issue: the arm cylinder tops out at 3.112 m, the bucket cylinder at 2.228 m
    assert!(
        stderr.contains("warning: cylinder 'arm_cyl' passes a dead centre at 3.112 m"),
        "{stderr}"
    );
    assert!(
        stderr.contains("warning: cylinder 'bucket_cyl' passes a dead centre at 2.228 m"),
        "{stderr}"
    );
    assert!(!stderr.contains("'boom_cyl' passes"), "{stderr}");
    // no port reliefs: every chamber is named
    for v in ["V1", "V2", "V3", "V4", "V5", "V6"] {
        assert!(
            stderr.contains(&format!("warning: chamber '{v}' (")),
            "{v}: {stderr}"
        );
    }
}

#[test]
fn workspace_of_the_excavator_before_issue24_gives_the_issues_figures() {
    let t = workspace(BEFORE, "bucket.P", &["--pressure-pa", "35.3e6"]);
    // the issue (an independent sweep over every stroke limit): 7.89 m and 4.34 m, 3 digits
    assert!((t["reach_at_ground"] - 7.89).abs() < 0.005, "{t:?}");
    assert!((t["digging_depth"] - 4.34).abs() < 0.005, "{t:?}");
    for c in ["boom_cyl", "arm_cyl", "bucket_cyl"] {
        assert!(
            t[&format!("force_{c}_max")] >= t[&format!("force_{c}_initial")],
            "{t:?}"
        );
    }
}

#[test]
fn workspace_runs_on_the_shipped_excavator_and_loader() {
    let t = workspace("models/excavator.toml", "bucket.P", &["--grid", "21"]);
    assert!(t["max_reach"] > 0.0 && t["reachable_poses"] > 0.0, "{t:?}");
    let t = workspace(
        "models/loader.toml",
        LOADER_POINT,
        &["--grid", "21", "--pressure-pa", "2e7"],
    );
    assert!(t["reachable_poses"] > 0.0, "{t:?}");
}

#[test]
fn unknown_body_or_marker_names_the_option() {
    let model = repo_file("models/excavator.toml");
    let o = hydraulink(&["workspace", model.to_str().unwrap(), "--point", "buckt.P"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--point 'buckt.P'") && stderr.contains("no body 'buckt'"),
        "{stderr}"
    );
    let o = hydraulink(&["workspace", model.to_str().unwrap(), "--point", "bucket.Q"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no marker 'Q'") && stderr.contains("its markers: "),
        "{stderr}"
    );
    // a model without cylinders: a clear error, not a panic
    let disc = repo_file("models/rolling_disc.toml");
    let o = hydraulink(&["workspace", disc.to_str().unwrap(), "--point", "disc.C"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("has no cylinders"), "{stderr}");
}
