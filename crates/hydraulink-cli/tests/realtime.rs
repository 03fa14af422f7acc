//! `hydraulink realtime` end to end on the boom: a short paced run that reports its statistics
//! (no timing is asserted), a replay whose recording comes back unchanged, and a malformed
//! recording refused with its line.

mod support;
use std::fs;
use support::{hydraulink, repo_file, temp_dir};

#[test]
fn realtime_runs_and_reports_its_statistics() {
    let dir = temp_dir("realtime");
    let model = repo_file("models/boom.toml");
    let rec = dir.join("rec.csv");
    let out = hydraulink(&[
        "realtime",
        model.to_str().unwrap(),
        "--duration",
        "0.1",
        "--policy",
        "slow-down",
        "--record",
        rec.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("slow-down policy"), "{stdout}");
    assert!(stdout.contains("steps            100 of"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("realtime.json")).unwrap()).unwrap();
    assert_eq!(json["steps"], 100);
    assert_eq!(json["policy"], "slow-down");
    for key in [
        "real_time_factor",
        "compute_mean_s",
        "compute_max_s",
        "compute_p99_s",
        "overruns",
        "lag_s",
        "slip_s",
        "max_wake_delay_s",
        "snapshots_sent",
        "snapshots_dropped",
    ] {
        assert!(json[key].is_number(), "{key}: {json}");
    }
    // no operator: a recording with the header and no changes
    let text = fs::read_to_string(&rec).unwrap();
    assert!(
        text.starts_with("# hydraulink-rt recording 1\n# model: boom\n"),
        "{text}"
    );
    assert!(text.ends_with("step,event,input,value\n"), "{text}");
}

#[test]
fn realtime_replays_a_recording() {
    let dir = temp_dir("realtime-replay");
    let model = repo_file("models/boom.toml");
    let script = "# hydraulink-rt recording 1\n# model: boom\n# step_s: 0.001\n\
                  step,event,input,value\n10,set,U,5.5\n40,release,U,\n60,reset,,\n";
    let input = dir.join("script.csv");
    fs::write(&input, script).unwrap();
    let again = dir.join("again.csv");
    let out = hydraulink(&[
        "realtime",
        model.to_str().unwrap(),
        "--duration",
        "0.08",
        "--replay",
        input.to_str().unwrap(),
        "--record",
        again.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("input changes 3"));
    assert_eq!(fs::read_to_string(&again).unwrap(), script);

    fs::write(&input, "step,event,input,value\n10,set,U\n").unwrap();
    let out = hydraulink(&[
        "realtime",
        model.to_str().unwrap(),
        "--replay",
        input.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("recording line 2: expected 4 fields"),
        "{stderr}"
    );
}

#[test]
fn serve_stops_with_exit_2_naming_a_missing_mesh_file() {
    // the excavator copied away from its meshes: its cab's OBJ file is not beside it
    let dir = temp_dir("serve-mesh");
    let model = dir.join("excavator.toml");
    fs::copy(repo_file("models/excavator.toml"), &model).unwrap();
    // (without its worksite file, which is not beside the copy either)
    let out = hydraulink(&["serve", model.to_str().unwrap(), "--no-scene"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("body 'upper'")
            && stderr.contains("visual[2].file")
            && stderr.contains("meshes/excavator_cab.obj"),
        "{stderr}"
    );
}
