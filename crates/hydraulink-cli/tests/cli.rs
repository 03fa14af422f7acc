//! The `hydraulink` binary end to end: `run` on the built-in and the shipped four-bar, the files
//! it writes, and its errors.

mod support;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use support::{hydraulink, repo_file, temp_dir};

/// Columns the four-bar's results.csv must have (000 §5.1: joints z1–z3, volumes V1–V3, the valve
/// DCV and the cylinder).
const FOURBAR_COLUMNS: [&str; 21] = [
    "time",
    "z1.q",
    "z1.qd",
    "z2.q",
    "z2.qd",
    "z3.q",
    "z3.qd",
    "V1.p",
    "V2.p",
    "V3.p",
    "DCV.spool",
    "cylinder.length",
    "cylinder.velocity",
    "cylinder.force",
    "cylinder.work",
    "energy.kinetic",
    "energy.potential",
    "energy.actuator_work",
    "energy.drift",
    "constraint.violation",
    "newton.iterations",
];

const SUMMARY_KEYS: [&str; 17] = [
    "status",
    "model",
    "formulation",
    "step_s",
    "duration_s",
    "completed",
    "error",
    "step_count",
    "wall_clock_s",
    "real_time_factor",
    "peak_abs_energy_drift_j",
    "peak_actuator_work_j",
    "peak_constraint_violation",
    "newton_iterations_mean",
    "newton_iterations_max",
    "cavitation_warnings",
    "output_rows",
];

const PLOTS: [&str; 6] = [
    "joint_coordinates.svg",
    "pressures.svg",
    "energy.svg",
    "constraint_violation.svg",
    "newton_iterations.svg",
    "cylinders.svg",
];

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// Checks the files of a complete 0.05 s run at 1 ms with output at every step.
fn check_fourbar_outputs(dir: &Path) {
    let csv = fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "time");
    for column in FOURBAR_COLUMNS {
        assert!(
            header.contains(&column),
            "results.csv has no column '{column}': {header:?}"
        );
    }
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            l.split(',')
                .map(|v| v.parse().expect("every value is a number"))
                .collect()
        })
        .collect();
    // 0.05 s / 1 ms = 50 steps, plus the initial row.
    assert_eq!(rows.len(), 51);
    assert!(rows.iter().all(|r| r.len() == header.len()));
    assert_eq!(rows[0][0], 0.0);
    assert!(
        (rows[50][0] - 0.05).abs() < 1e-12,
        "final time {}",
        rows[50][0]
    );

    let json = summary(dir);
    for key in SUMMARY_KEYS {
        assert!(
            json.get(key).is_some(),
            "summary.json has no key '{key}': {json}"
        );
    }
    assert_eq!(json["model"], "fourbar");
    assert_eq!(json["formulation"], "penalty");
    assert_eq!(json["completed"], true);
    assert_eq!(json["status"], "completed");
    assert_eq!(json["error"], serde_json::Value::Null);
    assert_eq!(json["step_count"], 50);

    // every column's unit and meaning, beside the CSV, in the CSV's order
    let columns: Vec<serde_json::Value> =
        serde_json::from_str(&fs::read_to_string(dir.join("results.columns.json")).unwrap())
            .unwrap();
    let names: Vec<&str> = columns
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, header);
    let unit = |name: &str| {
        columns.iter().find(|c| c["name"] == name).unwrap()["unit"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for (name, expected) in [
        ("time", "s"),
        ("z1.q", "rad"),
        ("z1.qd", "rad/s"),
        ("V1.p", "Pa"),
        ("cylinder.force", "N"),
        ("energy.drift", "J"),
        ("newton.iterations", "-"),
    ] {
        assert_eq!(unit(name), expected, "{name}");
    }
    for c in &columns {
        assert!(
            !c["unit"].as_str().unwrap().is_empty()
                && !c["description"].as_str().unwrap().is_empty(),
            "column without unit or description: {c}"
        );
    }
    assert_eq!(json["output_rows"], 51);
    assert!(json["newton_iterations_max"].as_u64().unwrap() >= 1);

    for plot in PLOTS {
        let svg = fs::read_to_string(dir.join("plots").join(plot)).unwrap();
        assert!(svg.contains("<svg"), "{plot}");
        assert!(svg.contains("time [s]"), "{plot} has no time axis label");
    }
}

#[test]
fn run_default_model() {
    let dir = temp_dir("default");
    let out = dir.to_str().unwrap();
    let output = hydraulink(&["run", "--duration", "0.05", "--out", out]);
    assert!(output.status.success(), "{}", stderr(&output));
    check_fourbar_outputs(&dir);
}

#[test]
fn run_shipped_fourbar_file() {
    let dir = temp_dir("fourbar-file");
    let model = repo_file("models/fourbar.toml");
    let output = hydraulink(&[
        "run",
        model.to_str().unwrap(),
        "--duration",
        "0.05",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    check_fourbar_outputs(&dir);
}

#[test]
fn step_and_duration_override_the_model() {
    let dir = temp_dir("overrides");
    let args = [
        "run",
        "--step",
        "0.002",
        "--duration",
        "0.02",
        "--out",
        dir.to_str().unwrap(),
    ];
    let output = hydraulink(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let json = summary(&dir);
    assert_eq!(json["step_s"], 0.002);
    assert_eq!(json["duration_s"], 0.02);
    assert_eq!(json["step_count"], 10);
    let csv = fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 11);
}

/// The four-bar file with `from` replaced by `to` (once), written to `dir/bad.toml`, and the
/// 1-based line of the replacement.
fn fourbar_with(dir: &Path, from: &str, to: &str) -> (PathBuf, usize) {
    let text = fs::read_to_string(repo_file("models/fourbar.toml")).unwrap();
    let at = text
        .find(from)
        .expect("the four-bar file has the text to replace");
    let line = text[..at].matches('\n').count() + 1;
    let path = dir.join("bad.toml");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
    (path, line)
}

fn assert_invalid_model_at_line(output: &Output, path: &Path, line: usize) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    let location = format!("{}:{line}:", path.display());
    assert!(
        message.contains(&location),
        "expected '{location}' in: {message}"
    );
}

#[test]
fn invalid_field_value_exits_2_with_line() {
    let dir = temp_dir("bad-mass");
    let (path, line) = fourbar_with(&dir, "mass_kg = 225.0", "mass_kg = -225.0");
    let output = hydraulink(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_invalid_model_at_line(&output, &path, line);
    assert!(!dir.join("results.csv").exists());
}

#[test]
fn unknown_field_exits_2_with_line() {
    let dir = temp_dir("bad-field");
    let (path, line) = fourbar_with(&dir, "mass_kg = 35.0", "mass_kgs = 35.0");
    let output = hydraulink(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_invalid_model_at_line(&output, &path, line);
}

/// Ground point E 50 m away: the links (9 m, 1.41 m, 2 m) cannot reach it, so the loop cannot
/// close; the error points at the cut joint's entry.
#[test]
fn loop_that_cannot_close_exits_2_with_line() {
    let dir = temp_dir("init");
    let (path, _) = fourbar_with(&dir, "E = [0.0, -1.0, 0.0]", "E = [50.0, -1.0, 0.0]");
    let text = fs::read_to_string(&path).unwrap();
    let line = text[..text.find("[[cut_joints]]").unwrap()]
        .matches('\n')
        .count()
        + 1;
    let output = hydraulink(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_invalid_model_at_line(&output, &path, line);
    assert!(
        stderr(&output).contains("initialization"),
        "{}",
        stderr(&output)
    );
}

/// A Newton that diverges (increments growing) before its cap: raising max_iterations cannot
/// help, so the hint must not advise it; it names the worst equation's volume and the elements
/// on it (issue 11, newcomer test: the hint sent them to max_iterations, which failed the same).
#[test]
fn diverging_newton_hint_names_the_elements_not_max_iterations() {
    let dir = temp_dir("diverging");
    let output = hydraulink(&[
        "run",
        repo_file("models/excavator.toml").to_str().unwrap(),
        "--step",
        "0.02",
        "--duration",
        "0.1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(
        message.contains("diverging (increments growing)"),
        "{message}"
    );
    let hint = message
        .lines()
        .find(|l| l.starts_with("hint:"))
        .unwrap_or_else(|| panic!("no hint: {message}"));
    assert!(
        hint.contains("will not help")
            && !hint.contains("or raise solver.max_iterations")
            && hint.contains("an element on volume 'VP'")
            && hint.contains("'relief'")
            && hint.contains("opening_range_pa")
            && hint.contains("--step 2e-3"),
        "{hint}"
    );
}

/// One Newton iteration per step is too few once the valve opens at t = 1 s (000 eq. 46), so the
/// run fails there: it must keep the rows before the failure and still write summary and plots.
#[test]
fn failed_step_exits_1_and_keeps_the_rows() {
    let dir = temp_dir("failed-step");
    let (path, _) = fourbar_with(&dir, "max_iterations = 25", "max_iterations = 1");
    let args = [
        "run",
        path.to_str().unwrap(),
        "--duration",
        "1.2",
        "--out",
        dir.to_str().unwrap(),
    ];
    let output = hydraulink(&args);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(
        message.contains("t = ") && message.contains("step"),
        "{message}"
    );

    let json = summary(&dir);
    assert_eq!(json["completed"], false);
    let error = json["error"]
        .as_str()
        .expect("summary.json names the error");
    assert!(
        message.contains(error),
        "stderr: {message}\nsummary: {error}"
    );
    // a Newton failure says what to try (issue 11: `--step 0.5` failed with no advice)
    assert!(
        message.contains("hint:") && message.contains("--step 1e-4"),
        "{message}"
    );
    // the cap was reached (not diverging): more iterations may help, and the hint says so
    assert!(
        message.contains("iteration cap reached")
            && message.contains("or raise solver.max_iterations"),
        "{message}"
    );
    let steps = json["step_count"].as_u64().unwrap();
    assert!(
        steps < 1200,
        "the run was expected to fail before t = 1.2 s"
    );
    let csv = fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(
        csv.lines().count() as u64,
        1 + steps + 1,
        "header, initial row, one row per step"
    );
    for plot in PLOTS {
        assert!(fs::read_to_string(dir.join("plots").join(plot))
            .unwrap()
            .contains("<svg"));
    }
}

#[test]
fn missing_model_file_exits_2() {
    let dir = temp_dir("missing");
    let path = dir.join("no_such_model.toml");
    let output = hydraulink(&["run", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no_such_model.toml"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn unknown_formulation_lists_the_valid_ones() {
    let dir = temp_dir("formulation");
    let args = [
        "run",
        "--formulation",
        "bogus",
        "--out",
        dir.to_str().unwrap(),
    ];
    let output = hydraulink(&args);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains("--formulation"), "{message}");
    assert!(message.contains("bogus"), "{message}");
    assert!(message.contains("penalty"), "{message}");
}

#[test]
fn non_positive_step_is_rejected() {
    let output = hydraulink(&["run", "--step", "0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--step"), "{}", stderr(&output));
}

#[test]
fn help_describes_the_options() {
    let output = hydraulink(&["--help"]);
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("run"), "{text}");

    let output = hydraulink(&["run", "--help"]);
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    for expected in [
        "--out",
        "--step",
        "--duration",
        "--formulation",
        "[s]",
        "out/<model name>/",
        "four-bar",
    ] {
        assert!(text.contains(expected), "no '{expected}' in:\n{text}");
    }
}

#[test]
fn compare_runs_every_formulation_and_writes_tables_and_overlays() {
    let dir = temp_dir("compare");
    let out = hydraulink(&[
        "compare",
        "--formulations",
        "penalty,double-step,kinematic-guidance",
        "--steps",
        "0.001,0.002",
        "--duration",
        "0.05",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = fs::read_to_string(dir.join("compare.csv")).unwrap();
    // header + 3 formulations × 2 steps
    assert_eq!(csv.lines().count(), 7, "{csv}");
    assert!(csv.lines().skip(1).all(|l| l.contains(",yes,")), "{csv}");
    let md = fs::read_to_string(dir.join("compare.md")).unwrap();
    assert!(md.contains("| kinematic-guidance | 0.002 | yes |"), "{md}");
    for f in ["overlay_1e-3_joints.svg", "overlay_2e-3_pressures.svg"] {
        let svg = fs::read_to_string(dir.join("plots").join(f)).unwrap();
        assert!(svg.contains("<svg") && svg.contains("time [s]"), "{f}");
    }
}

#[test]
fn compare_rejects_an_unknown_formulation() {
    let out = hydraulink(&["compare", "--formulations", "penalty,bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bogus"), "{}", stderr(&out));
}

#[test]
fn set_overrides_friction_law_and_parameters() {
    let dir = temp_dir("set");
    let model = repo_file("models/fourbar_friction.toml");
    let out = hydraulink(&[
        "run",
        model.to_str().unwrap(),
        "--duration",
        "0.05",
        "--out",
        dir.to_str().unwrap(),
        "--set",
        "cylinder.friction.type=modified_lugre",
        "--set",
        "cylinder.friction.static_n=900",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = fs::read_to_string(dir.join("results.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for c in [
        "energy.friction_dissipated",
        "cylinder.friction",
        "cylinder.bristle_m",
        "cylinder.film",
    ] {
        assert!(header.split(',').any(|h| h == c), "no column {c}: {header}");
    }
    // an unknown field names the path and lists the valid fields
    let out = hydraulink(&[
        "run",
        model.to_str().unwrap(),
        "--set",
        "cylinder.friction.fs=900",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(e.contains("friction.fs") && e.contains("static_n"), "{e}");
    // an unknown element lists the element names
    let out = hydraulink(&["run", model.to_str().unwrap(), "--set", "cylindr.mass_kg=1"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains("cylindr") && e.contains("crank (bodies[0])"),
        "{e}"
    );
}

#[test]
fn friction_curve_writes_csv_and_svg() {
    let dir = temp_dir("friction-curve");
    let model = repo_file("models/fourbar_friction.toml");
    let out = hydraulink(&[
        "friction-curve",
        model.to_str().unwrap(),
        "--element",
        "cylinder",
        "--v-range",
        "-0.02,0.02",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let steady = fs::read_to_string(dir.join("cylinder_friction_steady.csv")).unwrap();
    assert_eq!(steady.lines().next(), Some("velocity_m_s,friction_n"));
    let sweep = fs::read_to_string(dir.join("cylinder_friction_sweep.csv")).unwrap();
    assert_eq!(
        sweep.lines().next(),
        Some("time_s,velocity_m_s,friction_n,bristle_m")
    );
    // pre-sliding: at the velocity reversals (v ≈ 0) the LuGre force is far from 0
    let rows: Vec<Vec<f64>> = sweep
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let at_reversal = rows
        .iter()
        .skip(rows.len() / 2)
        .filter(|r| r[1].abs() < 1e-5)
        .map(|r| r[2].abs())
        .fold(0.0, f64::max);
    assert!(at_reversal > 100.0, "F at v ≈ 0: {at_reversal} N");
    assert!(fs::read_to_string(dir.join("cylinder_friction.svg"))
        .unwrap()
        .starts_with("<svg"));
    let out = hydraulink(&[
        "friction-curve",
        model.to_str().unwrap(),
        "--element",
        "nope",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("with friction: cylinder"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bad_value_from_set_names_the_option_not_a_file_line() {
    // The value comes from the command line: the error names `--set PATH=VALUE`, the element and
    // the field, and no line of the file (whose own value there is valid). Exit code 2.
    let dir = temp_dir("set-bad-value");
    let model = repo_file("models/fourbar.toml");
    let out = hydraulink(&[
        "run",
        model.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--set",
        "V1.hose_volume_m3=-1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("--set V1.hose_volume_m3=-1"), "{err}");
    assert!(err.contains("volume 'V1'"), "{err}");
    assert!(
        err.contains("hydraulics.volumes[0].hose_volume_m3"),
        "{err}"
    );
    assert!(!err.contains("fourbar.toml:"), "{err}");
    // a field below an overridden one (the law's defaults after `type=`) is the override's too
    let out = hydraulink(&[
        "compare",
        repo_file("models/fourbar_friction.toml").to_str().unwrap(),
        "--formulations",
        "penalty",
        "--out",
        dir.to_str().unwrap(),
        "--set",
        "cylinder.friction={ type = \"lugre\", static_n = 100.0 }",
    ]);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(
        text.contains("--set cylinder.friction={ type = \"lugre\", static_n = 100.0 }"),
        "{text}"
    );
}

#[test]
fn output_interval_is_snapped_to_whole_steps_and_reported() {
    let dir = temp_dir("output-interval");
    let out = hydraulink(&[
        "run",
        "--duration",
        "0.05",
        "--output-interval",
        "0.0025",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("snapped to 0.003 s"), "{err}");
    let json = summary(&dir);
    assert_eq!(json["output_interval_s"], 0.003);
    let csv = fs::read_to_string(dir.join("results.csv")).unwrap();
    let times: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    // every 3rd step (0 … 48 ms), then the final row at 50 ms
    assert_eq!(times.len(), 17 + 1, "{times:?}");
    for (k, t) in times[..17].iter().enumerate() {
        assert!((t - 3e-3 * k as f64).abs() < 1e-12, "{times:?}");
    }
    assert!((times[17] - 0.05).abs() < 1e-12);
    // an interval that is a whole number of steps is not reported
    let out = hydraulink(&[
        "run",
        "--duration",
        "0.01",
        "--output-interval",
        "0.002",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(!stderr(&out).contains("snapped"), "{}", stderr(&out));
    // below one step: invalid, naming the option
    let out = hydraulink(&[
        "run",
        "--output-interval",
        "0.0001",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--output-interval"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_long_run_needs_allow_long_run() {
    let dir = temp_dir("long-run");
    for duration in ["20000", "1e300"] {
        let out = hydraulink(&[
            "run",
            "--duration",
            duration,
            "--out",
            dir.to_str().unwrap(),
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("steps"), "{err}");
        assert!(!dir.join("results.csv").exists());
    }
    let err = stderr(&hydraulink(&["run", "--duration", "20000"]));
    assert!(
        err.contains("--allow-long-run") && err.contains("10000000"),
        "{err}"
    );
    // past 2^53 steps not even with the flag
    let out = hydraulink(&["run", "--duration", "1e300", "--allow-long-run"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Ctrl-C (SIGINT) during a run: the summary said "running" until then, and says
/// "interrupted" after; the CSV ends with a whole row; exit code 130.
#[cfg(unix)]
#[test]
fn ctrl_c_saves_the_run_as_interrupted() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = temp_dir("interrupt");
    let child = Command::new(env!("CARGO_BIN_EXE_hydraulink"))
        .args(["run", "--duration", "1000", "--out", dir.to_str().unwrap()])
        .env("CI", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let running = fs::read_to_string(dir.join("summary.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|j| j["status"] == "running");
        if running && fs::metadata(dir.join("results.csv")).is_ok_and(|m| m.len() > 100_000) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let json = summary(&dir);
    assert_eq!(json["status"], "interrupted");
    assert_eq!(json["completed"], false);
    let steps = json["step_count"].as_u64().unwrap();
    assert!(steps > 0 && steps < 1_000_000, "{steps}");
    let csv = fs::read_to_string(dir.join("results.csv")).unwrap();
    assert!(csv.ends_with('\n'));
    let n_columns = csv.lines().next().unwrap().split(',').count();
    let mut rows = 0;
    for line in csv.lines().skip(1) {
        let values: Vec<f64> = line.split(',').map(|v| v.parse().unwrap()).collect();
        assert_eq!(values.len(), n_columns);
        rows += 1;
    }
    assert_eq!(rows, steps + 1, "every step and the initial row, whole");
    assert_eq!(json["output_rows"], rows);
}

/// A results.csv that cannot be written (the disk is full): exit 1, and the summary, which
/// an earlier complete run left, says output_error.
#[cfg(target_os = "linux")]
#[test]
fn a_write_error_is_recorded_in_the_summary() {
    let dir = temp_dir("disk-full");
    let out = hydraulink(&["run", "--duration", "0.01", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(summary(&dir)["status"], "completed");
    fs::remove_file(dir.join("results.csv")).unwrap();
    std::os::unix::fs::symlink("/dev/full", dir.join("results.csv")).unwrap();
    let out = hydraulink(&["run", "--duration", "0.01", "--out", dir.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("results.csv"), "{err}");
    let json = summary(&dir);
    assert_eq!(json["status"], "output_error");
    assert_eq!(json["completed"], false);
    assert!(json["error"].as_str().unwrap().contains("results.csv"));
}

/// A comparison with failed runs exits 1, marks their cells as failed (not 0.000e0), and
/// prints each error once.
#[test]
fn compare_with_failed_runs_exits_1_and_marks_them() {
    let dir = temp_dir("compare-failed");
    let out = hydraulink(&[
        "compare",
        "--formulations",
        "penalty,double-step",
        "--steps",
        "0.001,0.002",
        "--duration",
        "0.02",
        "--set",
        "solver.max_iterations=1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let (stdout, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{stdout}{err}");
    assert!(err.contains("4 of 4 runs failed"), "{err}");
    let csv = fs::read_to_string(dir.join("compare.csv")).unwrap();
    for line in csv.lines().skip(1) {
        assert!(line.contains(",no,") && line.contains(",failed,"), "{line}");
        assert!(!line.contains("0.000e0"), "{line}");
    }
    // each error once: in the list below the table, not in the progress lines
    let all = format!("{stdout}{err}");
    for line in stdout.lines().filter(|l| l.starts_with("- ")) {
        let error = line.split(" failed: ").nth(1).unwrap();
        assert_eq!(all.matches(error).count(), 1, "{error} in:\n{all}");
    }
}

#[test]
fn compare_overlays_are_named_like_the_columns_in_degrees() {
    let dir = temp_dir("compare-names");
    let out = hydraulink(&[
        "compare",
        "--formulations",
        "penalty,double-step",
        "--duration",
        "0.02",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let joints = fs::read_to_string(dir.join("plots/overlay_1e-3_joints.svg")).unwrap();
    assert!(joints.contains("penalty z1.q") && joints.contains("angle [deg]"));
    assert!(!joints.contains("z[0]") && !joints.contains("rad or m"));
    let pressures = fs::read_to_string(dir.join("plots/overlay_1e-3_pressures.svg")).unwrap();
    assert!(pressures.contains("double-step V1.p"));
}

#[test]
fn check_prints_the_initial_state_without_running() {
    // issue 11: `hydraulink check MODEL` validates, assembles, solves the statics and prints
    // the initial state: pressures with the rule that fixed each, cylinder forces, stroke out
    let boom = repo_file("models/boom.toml");
    let output = hydraulink(&["check", boom.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    for expected in [
        "valid, assembled, in static equilibrium",
        "Vp",
        "given: p0_pa",
        "solved: the static force of cylinder 'cylinder'",
        "of 0.6000 m stroke out",
        "pushing",
        "relief",
    ] {
        assert!(
            text.contains(expected),
            "`{expected}` missing from:\n{text}"
        );
    }
    // the boom's cylinder starts with 0.2142 m of its 0.6 m stroke out (√2 − 1.2 m)
    assert!(text.contains("0.2142 m of 0.6000 m"), "{text}");
    // the four-bar: p1 = p2 solved, the throttle's zero flow and the cylinder force (5.0243 MPa)
    let output = hydraulink(&["check"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(text.contains("5.0243 MPa"), "{text}");
    // a model that cannot start: exit 2, with the line
    let dir = temp_dir("check-bad");
    let (path, line) = fourbar_with(&dir, "retracted_length_m = 1.1", "retracted_length_m = 1.5");
    let output = hydraulink(&["check", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!(":{line}:"))
            && stderr(&output).contains("outside its stroke"),
        "{}",
        stderr(&output)
    );
}

/// Issue 11 item 1/4: a valve that clips its model signal (`saturate = true`) says so in the run
/// summary: `clipped_inputs` in summary.json counts the steps whose command lay outside the
/// range (here U = 10 V against a ±5 V range from t = 1 s on), and stdout names the count. A run
/// without clipping shows 0 in summary.json and no line on stdout.
#[test]
fn clipped_inputs_are_reported_in_the_summary() {
    let dir = temp_dir("clipped");
    let out = hydraulink(&[
        "run",
        "--duration",
        "1.2",
        "--out",
        dir.to_str().unwrap(),
        "--set",
        "DCV.saturate=true",
        "--set",
        "DCV.input_range_v=[-5.0, 5.0]",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let u = header.iter().position(|h| *h == "U.value").unwrap();
    // every step is a row: the rows after t = 0 whose command is outside ±5 V
    let expected = lines
        .skip(1)
        .filter(|l| {
            let v: f64 = l.split(',').nth(u).unwrap().parse().unwrap();
            !(-5.0..=5.0).contains(&v)
        })
        .count() as u64;
    // U = 10 V over (1.0, 1.2] s: 200 steps of 1 ms (201 if the row at t = 1 s took the new value)
    assert!((200..=201).contains(&expected), "{expected}");
    assert_eq!(summary(&dir)["clipped_inputs"], expected);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("clipped input values: {expected} ")),
        "{stdout}"
    );

    let dir = temp_dir("within-range");
    let out = hydraulink(&["run", "--duration", "1.2", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(summary(&dir)["clipped_inputs"], 0);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("clipped input"));
}

/// The columns of a results.csv by name, every row parsed (shortest round-trip numbers: the
/// values read back exactly).
fn csv_columns(dir: &Path) -> std::collections::BTreeMap<String, Vec<f64>> {
    let csv = fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let mut columns: Vec<Vec<f64>> = vec![Vec::new(); header.len()];
    for line in lines {
        for (c, v) in columns.iter_mut().zip(line.split(',')) {
            c.push(v.parse().unwrap());
        }
    }
    header.into_iter().zip(columns).collect()
}

/// Issue 11 item 4: every element that exchanges hydraulic power has a column
/// `<element>.power_w` [W] = −Σ p_i Q_i, described with unit "W" in results.columns.json. Checked
/// on every row against the other columns (node pressures `<volume>.p`, tank pressures from the
/// model, flows, cylinder velocities and areas), to 1e-9 relative to the largest term:
/// - a throttle, relief or check valve, hose: (p_in − p_out) Q ≥ 0;
/// - a pump: −(p_out − p_in) Q (minus the delivered power);
/// - a cylinder: (p_A A_A − p_B A_B) ṡ;
/// - a 4/3 valve, counterbalance valve: ≥ 0 (dissipation; their P and T flows have no column).
#[test]
fn hydraulic_power_columns_match_pressures_and_flows() {
    use hydraulink::elements::component::Component as C;
    use hydraulink::elements::element::Element;
    for (model, duration) in [("pump_relief", "1.0"), ("excavator", "0.3")] {
        let dir = temp_dir(&format!("power-{model}"));
        let file = repo_file(&format!("models/{model}.toml"));
        let out = hydraulink(&[
            "run",
            file.to_str().unwrap(),
            "--duration",
            duration,
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{model}: {}", stderr(&out));
        let text = fs::read_to_string(&file).unwrap();
        let spec = hydraulink_io::parse_model(&text, model).unwrap();
        let m = hydraulink::compile(&spec).unwrap();
        let cols = csv_columns(&dir);
        let table: Vec<serde_json::Value> =
            serde_json::from_str(&fs::read_to_string(dir.join("results.columns.json")).unwrap())
                .unwrap();
        let unit = |name: &str| {
            table
                .iter()
                .find(|c| c["name"] == name)
                .map(|c| c["unit"].as_str().unwrap().to_string())
        };
        let col = |name: &str| {
            cols.get(name)
                .unwrap_or_else(|| panic!("{model}: no column {name}"))
        };
        let n_rows = col("time").len();
        // node pressures of every row from the volume columns (tanks from the model)
        let volume_p: Vec<&Vec<f64>> = m
            .volume_names()
            .iter()
            .map(|v| col(&format!("{v}.p")))
            .collect();
        let node_p = |nodes: &[Option<hydraulink::elements::ids::Node>; 4], r: usize| {
            let p: Vec<f64> = volume_p.iter().map(|c| c[r]).collect();
            hydraulink::circuit::node_port_state(&m, &p, nodes).p
        };
        let close = |a: f64, b: f64, scale: f64, what: &str| {
            assert!(
                (a - b).abs() <= 1e-9 * scale.max(1e-6),
                "{model} {what}: {a} vs {b} (scale {scale})"
            );
        };
        let mut checked = std::collections::BTreeMap::<&str, usize>::new();
        for e in m.elements() {
            let name = e.name();
            let power_name = format!("{name}.power_w");
            if matches!(
                e,
                C::SpringDamper(_) | C::EndStop(_) | C::ExternalLoad(_) | C::Accumulator(_)
            ) {
                assert!(!cols.contains_key(&power_name), "{power_name}");
                continue;
            }
            assert_eq!(unit(&power_name).as_deref(), Some("W"), "{power_name}");
            let power = col(&power_name);
            let nodes = e.ports().nodes;
            for (r, power) in power.iter().enumerate() {
                let p = node_p(&nodes, r);
                match e {
                    C::Throttle(_) | C::ReliefValve(_) | C::CheckValve(_) | C::Hose(_) => {
                        let q = col(&format!("{name}.flow"))[r];
                        let expected = (p[0] - p[1]) * q;
                        close(*power, expected, (p[0] * q).abs(), &power_name);
                        assert!(*power >= -1e-9 * (p[0] * q).abs(), "{power_name}");
                    }
                    C::FixedPump(_) | C::PcPump(_) => {
                        let q = col(&format!("{name}.flow"))[r];
                        let expected = -(p[1] - p[0]) * q;
                        close(*power, expected, (p[1] * q).abs(), &power_name);
                    }
                    C::Valve43(_) | C::CounterbalanceValve(_) | C::BridgeValve(_) => {
                        let scale = p.iter().fold(0.0f64, |a, b| a.max(b.abs()));
                        assert!(*power >= -1e-9 * scale, "{power_name}: {}", *power);
                    }
                    _ => {}
                }
            }
            *checked.entry(name_kind(e)).or_default() += 1;
        }
        for c in m.cylinders() {
            let power_name = format!("{}.power_w", c.name);
            assert_eq!(unit(&power_name).as_deref(), Some("W"), "{power_name}");
            let (power, sd) = (col(&power_name), col(&format!("{}.velocity", c.name)));
            let nodes = c.ports().nodes;
            for r in 0..n_rows {
                let p = node_p(&nodes, r);
                let (fa, fb) = (p[0] * c.area_a_m2, p[1] * c.area_b_m2);
                let expected = (fa - fb) * sd[r];
                close(
                    power[r],
                    expected,
                    (fa.abs() + fb.abs()) * sd[r].abs(),
                    &power_name,
                );
            }
            *checked.entry("cylinder").or_default() += 1;
        }
        eprintln!("{model}: power columns checked on {n_rows} rows: {checked:?}");
        assert!(checked.contains_key("pump") && checked.contains_key("relief"));
        assert!(checked.contains_key("cylinder") && checked.contains_key("valve"));
    }
}

/// A short name of an element's kind, for the test's tally.
fn name_kind(e: &hydraulink::elements::component::Component) -> &'static str {
    use hydraulink::elements::component::Component as C;
    match e {
        C::FixedPump(_) | C::PcPump(_) => "pump",
        C::ReliefValve(_) => "relief",
        C::Valve43(_) | C::BridgeValve(_) => "valve",
        C::Hose(_) => "hose",
        C::CheckValve(_) => "check",
        C::CounterbalanceValve(_) => "counterbalance",
        C::HydraulicMotor(_) => "motor",
        C::Throttle(_) => "throttle",
        _ => "other",
    }
}

#[test]
fn check_reports_a_pressure_fixed_by_a_motor_holding_its_load() {
    // issue 11: a motor holding a 100 kg arm 1 m out (τ = 981 N m, i = 10, D = 0.1 L/rev) with
    // no p0_pa on its inlet volume: the statics fix Δp = 2π τ/(i D) = 6.1638 MPa, so
    // p_A = 6.2638 MPa absolute over the 0.1 MPa tank, and `check` says which rule fixed it
    let dir = temp_dir("check-motor");
    let path = dir.join("held.toml");
    fs::write(
        &path,
        r#"name = "held"
gravity = [0.0, -9.81, 0.0]
[[bodies]]
name = "arm"
mass_kg = 100.0
com = [1.0, 0.0, 0.0]
inertia = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
[[joints]]
name = "pivot"
type = "revolute"
parent = "ground"
child = "arm"
axis = [0.0, 0.0, 1.0]
[hydraulics.fluid]
density_kg_m3 = 870.0
bulk_modulus_pa = 1.5e9
[[hydraulics.volumes]]
name = "VA"
hose_volume_m3 = 1.0e-3
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
[[elements]]
type = "hydraulic_motor"
name = "motor"
port_a = "VA"
port_b = "T"
joint = "pivot"
displacement_m3_per_rev = 1.0e-4
gear_ratio = 10.0
[solver]
step_s = 1.0e-3
duration_s = 1.0
"#,
    )
    .unwrap();
    let output = hydraulink(&["check", path.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    for expected in [
        "in static equilibrium",
        "6.2638 MPa  solved: the holding torque of motor 'motor'",
    ] {
        assert!(
            text.contains(expected),
            "`{expected}` missing from:\n{text}"
        );
    }
}

/// The help texts are user docs: papers by author and journal, never by the repository's paper
/// codes ("paper 000", "001 §3"; issue 11, newcomer test).
#[test]
fn help_texts_cite_papers_by_name_not_by_code() {
    for command in [
        "run",
        "check",
        "linearize",
        "compare",
        "friction-curve",
        "schema",
    ] {
        let output = hydraulink(&[command, "--help"]);
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{command} --help: {text}");
        for code in ["000", "001", "002", "003", "004"] {
            for context in [
                format!("paper {code}"),
                format!("papers {code}"),
                format!("{code} §"),
                format!("{code} eq"),
                format!("{code} Pub"),
                format!("note {code}"),
            ] {
                assert!(
                    !text.contains(&context),
                    "{command} --help cites `{context}`:\n{text}"
                );
            }
        }
    }
}

#[test]
fn check_names_every_motor_that_holds_a_load_with_one_volume() {
    // two equal arms, each held by its own motor, both motors fed from the one volume VA
    // without p0_pa: the statics solve both holding torques and VA's zero net flow together
    // (Δp = 2π τ/(i D) = 6.1638 MPa for each), and `check` names both motors, not the first
    let dir = temp_dir("check-two-motors");
    let path = dir.join("two_held.toml");
    let mut text = String::from(
        r#"name = "two_held"
gravity = [0.0, -9.81, 0.0]
[hydraulics.fluid]
density_kg_m3 = 870.0
bulk_modulus_pa = 1.5e9
[[hydraulics.volumes]]
name = "VA"
hose_volume_m3 = 1.0e-3
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
[solver]
step_s = 1.0e-3
duration_s = 1.0
"#,
    );
    for (k, z) in [(1, 0.0), (2, 1.0)] {
        text.push_str(&format!(
            r#"
[[bodies]]
name = "arm{k}"
mass_kg = 100.0
com = [1.0, 0.0, 0.0]
inertia = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
[[joints]]
name = "pivot{k}"
type = "revolute"
parent = "ground"
child = "arm{k}"
location = [0.0, 0.0, {z}]
axis = [0.0, 0.0, 1.0]
[[elements]]
type = "hydraulic_motor"
name = "motor{k}"
port_a = "VA"
port_b = "T"
joint = "pivot{k}"
displacement_m3_per_rev = 1.0e-4
gear_ratio = 10.0
"#
        ));
    }
    fs::write(&path, text).unwrap();
    let output = hydraulink(&["check", path.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    for expected in [
        "in static equilibrium",
        "6.2638 MPa  solved: the holding torques of motors 'motor1', 'motor2' together",
    ] {
        assert!(
            text.contains(expected),
            "`{expected}` missing from:\n{text}"
        );
    }
}

#[test]
fn check_advice_for_a_pump_turning_into_an_algebraic_chamber() {
    // a pump already turning at t = 0 delivers straight into the algebraic piston-side chamber
    // VA while the boom is at rest: no static pressures exist. The advice used to be "give p0_pa
    // of 'VA'", which an algebraic volume ignores (its p0_pa is only a guess); it now names the
    // pump and the field that helps, a pressure state (algebraic = false) with p0_pa
    let dir = temp_dir("check-pump-algebraic");
    let text = r#"name = "pump_into_algebraic_chamber"
gravity = [0.0, -9.81, 0.0]
[ground.markers]
O = [0.0, 0.0, 0.0]
G = [0.5, -1.0, 0.0]     # cylinder base pin
[[bodies]]
name = "boom"
mass_kg = 500.0
com = [2.0, 0.0, 0.0]
inertia = [1.0, 666.7, 666.7, 0.0, 0.0, 0.0]
markers = { B = [1.5, 0.0, 0.0] }   # cylinder rod pin
[[joints]]
name = "z1"
type = "revolute"
parent = "ground"
child = "boom"
location = [0.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
q0 = 0.0
[hydraulics.fluid]
density_kg_m3 = 870.0
bulk_modulus_pa = 1.5e9
[[hydraulics.volumes]]
name = "VA"
hose_volume_m3 = 1.0e-6
algebraic = true
[[hydraulics.volumes]]
name = "VB"
hose_volume_m3 = 1.0e-4
p0_pa = 1.0e6
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
[[hydraulics.cylinders]]
name = "cylinder"
base = { body = "ground", marker = "G" }
rod = { body = "boom", marker = "B" }
piston_diameter_m = 0.080
rod_diameter_m = 0.045
stroke_m = 0.6
retracted_length_m = 1.2
piston_side = "VA"
rod_side = "VB"
[[elements]]
type = "fixed_pump"
name = "pump"
inlet = "T"
outlet = "VA"
speed_input = "shaft"
displacement_m3_per_rev = 2.8e-5
volumetric_efficiency = 0.95
rated_pressure_pa = 2.0e7
rated_speed_rad_s = 157.08
mechanical_efficiency = 0.9
[[elements]]
type = "relief_valve"
name = "relief"
inlet = "VA"
outlet = "T"
cracking_pressure_pa = 1.4e7
pressure_override_pa = 1.0e6
rated_flow_m3_s = 1.0e-3
[[inputs]]
name = "shaft"
signal = { type = "constant", value = 157.08 }
[solver]
formulation = "penalty"
step_s = 1.0e-3
duration_s = 0.1
"#;
    let path = dir.join("turning.toml");
    fs::write(&path, text).unwrap();
    let output = hydraulink(&["check", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    for expected in [
        "volume 'VA' is algebraic (pump 'pump' already turns at t = 0",
        "p0_pa is only a guess",
        "algebraic = false with p0_pa",
    ] {
        assert!(err.contains(expected), "`{expected}` missing from:\n{err}");
    }
    assert!(!err.contains("give p0_pa of 'VA'"), "{err}");
    // the advice taken: VA with a pressure state and p0_pa starts (accelerating, not at rest)
    let fixed = text.replace("algebraic = true", "p0_pa = 5.0e6");
    assert_ne!(fixed, text);
    let path = dir.join("fixed.toml");
    fs::write(&path, fixed).unwrap();
    let output = hydraulink(&["check", path.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        out.contains("VA               5.0000 MPa  given: p0_pa"),
        "{out}"
    );
}

/// `run` writes a pose per results row for `hydraulink view`: poses.bin with the excavator's 6
/// bodies, one row per results.csv row at the same times, and poses.json naming the model file
/// and the overrides.
#[test]
fn run_writes_a_pose_per_results_row() {
    let dir = temp_dir("poses");
    let model = repo_file("models/excavator.toml");
    let output = hydraulink(&[
        "run",
        model.to_str().unwrap(),
        "--duration",
        "0.05",
        "--output-interval",
        "0.01",
        "--set",
        "solver.max_iterations=30",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let bytes = fs::read(dir.join("poses.bin")).unwrap();
    assert_eq!(&bytes[..8], b"HLPOSE01");
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 6);
    let row = 8 + 48 * 6;
    assert_eq!((bytes.len() - 12) % row, 0);
    let csv = fs::read_to_string(dir.join("results.csv")).unwrap();
    let times: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(times.len(), 6, "t = 0, 0.01, …, 0.05");
    assert_eq!((bytes.len() - 12) / row, times.len());
    for (k, t) in times.iter().enumerate() {
        let at = 12 + k * row;
        let tp = f64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        assert_eq!(tp, *t, "row {k}");
    }
    let info: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("poses.json")).unwrap()).unwrap();
    assert!(info["model_file"]
        .as_str()
        .unwrap()
        .ends_with("models/excavator.toml"));
    assert_eq!(info["overrides"][0], "solver.max_iterations=30");
    assert_eq!(info["bodies"].as_array().unwrap().len(), 6);
}

/// `run` leaves the worksite a model names out, `run --scene` adds it: the contact columns
/// appear and the machine's own columns keep their values (the worksite does not touch the
/// machine in its first 0.2 s).
#[test]
fn run_adds_the_worksite_only_with_scene() {
    let file = repo_file("models/excavator.toml");
    let mut tables = Vec::new();
    for (name, extra) in [("plain", None), ("scene", Some("--scene"))] {
        let dir = temp_dir(&format!("worksite-{name}"));
        let mut args = vec![
            "run",
            file.to_str().unwrap(),
            "--duration",
            "0.2",
            "--out",
            dir.to_str().unwrap(),
        ];
        args.extend(extra);
        let out = hydraulink(&args);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        tables.push(fs::read_to_string(dir.join("results.csv")).unwrap());
    }
    let header = |t: &str| t.lines().next().unwrap().to_string();
    assert!(!header(&tables[0]).contains("arm_obstacles.hits"));
    assert!(header(&tables[1]).contains("arm_obstacles.hits"));
    assert!(header(&tables[1]).contains("bucket_ground.peak_force"));
    // the machine's columns agree, value for value
    let cols = |t: &str| -> Vec<Vec<String>> {
        t.lines()
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect()
    };
    let (a, b) = (cols(&tables[0]), cols(&tables[1]));
    for (j, label) in a[0].iter().enumerate() {
        let k = b[0]
            .iter()
            .position(|l| l == label)
            .expect("same machine column");
        for (ra, rb) in a.iter().zip(&b).skip(1) {
            assert_eq!(ra[j], rb[k], "{label}");
        }
    }
}

/// `hydraulink schema --scene` prints the worksite files' schema, the shipped copy that every
/// shipped scene names in its first line.
#[test]
fn schema_scene_prints_the_shipped_scene_schema() {
    let output = hydraulink(&["schema", "--scene"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let shipped = std::fs::read_to_string(repo_file("models/scenes/hydraulink.scene.schema.json"))
        .expect("the shipped scene schema");
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        printed == shipped,
        "schema --scene differs from the shipped copy"
    );
    assert!(printed.contains("\"title\": \"hydraulink worksite (scene) file\""));
    // --reference is the model reference; with --scene it is refused
    let both = hydraulink(&["schema", "--scene", "--reference"]);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
}
