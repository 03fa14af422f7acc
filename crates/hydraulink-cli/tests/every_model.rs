//! Every model file in the repository, found by walking the tree (not by a list), goes through
//! the real binary the way a user runs it:
//!
//! - a model (a `.toml` whose first line names `hydraulink.schema.json`): `check`; a short `run`
//!   with every output written (results.csv with only finite numbers, its columns, summary.json
//!   saying `completed`, the plots, the poses); `view` of that run (the page, its scene and state
//!   served); and a `realtime` run of 1 s. A model that names a worksite is also run with it
//!   (`run --scene`) and viewed;
//! - a worksite (scene) file (first line naming `hydraulink.scene.schema.json`) must be named by
//!   some model, which runs with it above;
//! - a file meant to fail (in a `bad_models/` folder) must fail `check` or a short `run` with
//!   exit code 2 and an error that names the file and a line;
//! - a Cargo manifest or tool configuration is not a model.
//!
//! Any other `.toml` fails the test: a new file must say what it is (a `#:schema` first line, or
//! a `bad_models/` folder), so that no file a user can run escapes this test.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{hydraulink, temp_dir};

/// What a `.toml` file of the repository is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A model file a user runs.
    Model,
    /// A worksite (scene) file, added to a model with `--scene`.
    Scene,
    /// A model that must be refused with a located error.
    MeantToFail,
    /// A Cargo manifest or a tool's configuration.
    NotAModel,
}

/// The repository root.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// Every `.toml` under `dir`, skipping build output, version control and hidden folders.
fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                toml_files(&path, out);
            }
        } else if name.ends_with(".toml") {
            out.push(path);
        }
    }
}

/// What `path` (relative to the root) with text `text` is; panics on a file that says nothing.
fn classify(path: &Path, text: &str) -> Kind {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tool_config = [
        "Cargo.toml",
        "rustfmt.toml",
        ".rustfmt.toml",
        "clippy.toml",
        "rust-toolchain.toml",
        "deny.toml",
        "pyproject.toml",
    ];
    if tool_config.contains(&name.as_ref()) {
        return Kind::NotAModel;
    }
    if path.components().any(|c| c.as_os_str() == "bad_models") {
        return Kind::MeantToFail;
    }
    let first = text.lines().next().unwrap_or_default();
    if first.starts_with("#:schema") && first.ends_with("hydraulink.scene.schema.json") {
        return Kind::Scene;
    }
    if first.starts_with("#:schema") && first.ends_with("hydraulink.schema.json") {
        return Kind::Model;
    }
    panic!(
        "{}: a .toml that is neither a model (first line `#:schema …/hydraulink.schema.json`), \
         a worksite (`#:schema …/hydraulink.scene.schema.json`), a model meant to fail (in a \
         bad_models/ folder) nor a tool's configuration; say which it is",
        path.display()
    );
}

/// The stderr and stdout of a finished command, for a failure message.
fn shown(output: &std::process::Output) -> String {
    format!(
        "exit {:?}\n--- stderr\n{}\n--- stdout\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    )
}

/// A short duration for `run`: 40 steps, or the model's own duration if shorter.
fn short_duration(path: &Path, text: &str) -> String {
    let spec = hydraulink_io::check_model(text, &path.display().to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    let d = (40.0 * spec.solver.step_s).min(spec.solver.duration_s);
    format!("{d}")
}

/// `run` with every output, then checks what it wrote: a completed summary, finite results, the
/// columns, the plots and the poses.
fn run_and_check_outputs(path: &Path, text: &str, extra: &[&str], out: &Path) -> String {
    let duration = short_duration(path, text);
    let mut args = vec![
        "run",
        path.to_str().unwrap(),
        "--duration",
        &duration,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = hydraulink(&args);
    let what = format!("hydraulink {}", args.join(" "));
    assert!(output.status.success(), "{what}: {}", shown(&output));
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("summary.json"),
    )
    .expect("summary.json is JSON");
    assert_eq!(summary["status"], "completed", "{what}: {summary}");
    let csv = std::fs::read_to_string(out.join("results.csv")).expect("results.csv");
    let mut lines = csv.lines();
    let header = lines.next().expect("a header");
    let n_columns = header.split(',').count();
    let mut rows = 0;
    for (k, line) in lines.enumerate() {
        let values: Vec<&str> = line.split(',').collect();
        assert_eq!(values.len(), n_columns, "{what}: row {k}: {line}");
        for (value, name) in values.iter().zip(header.split(',')) {
            let x: f64 = value
                .parse()
                .unwrap_or_else(|_| panic!("{what}: row {k}, column {name}: `{value}`"));
            assert!(x.is_finite(), "{what}: row {k}, column {name} is {value}");
        }
        rows += 1;
    }
    assert!(rows >= 2, "{what}: {rows} rows");
    let columns: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("results.columns.json")).expect("columns"),
    )
    .expect("results.columns.json is JSON");
    assert!(columns.is_array() || columns.is_object(), "{what}");
    let plots = std::fs::read_dir(out.join("plots"))
        .unwrap_or_else(|e| panic!("{what}: plots/: {e}"))
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".svg"))
        .count();
    assert!(plots > 0, "{what}: no plots");
    let poses = std::fs::read(out.join("poses.bin")).expect("poses.bin");
    assert_eq!(&poses[..8], b"HLPOSE01", "{what}");
    what
}

/// An HTTP GET of `path` on `host:port`: the status line and the body.
fn get(address: &str, path: &str) -> (String, String) {
    let mut stream = TcpStream::connect(address).unwrap_or_else(|e| panic!("{address}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (
        head.lines().next().unwrap_or_default().to_string(),
        body.to_string(),
    )
}

/// `hydraulink view DIR`: serves the page, the scene and the state of the run, then stops.
fn view_serves(dir: &Path, what: &str) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hydraulink"))
        .args(["view", dir.to_str().unwrap(), "--port", "0"])
        .env("CI", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("view starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut url = None;
    while url.is_none() && Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                url = line
                    .split_whitespace()
                    .find(|w| w.starts_with("http://"))
                    .map(str::to_string)
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Ok(Some(status)) = child.try_wait() {
                    let mut err = String::new();
                    child.stderr.take().unwrap().read_to_string(&mut err).ok();
                    panic!("view of {what} exited with {status}: {err}");
                }
            }
            Err(_) => break,
        }
    }
    let Some(url) = url else {
        let _ = child.kill();
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).ok();
        panic!("view of {what} printed no address: {err}");
    };
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    for path in ["/", "/scene", "/state"] {
        let (status, body) = get(&address, path);
        assert!(
            status.contains("200"),
            "view of {what}: GET {path}: {status}"
        );
        if path != "/" {
            serde_json::from_str::<serde_json::Value>(&body)
                .unwrap_or_else(|e| panic!("view of {what}: GET {path}: {e}: {body}"));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Checks, runs and views `path`, and runs it in real time for 1 s.
fn a_model_runs(root: &Path, path: &Path, text: &str, scenes_named: &mut Vec<PathBuf>) {
    let file = path.to_str().unwrap();
    let output = hydraulink(&["check", file]);
    assert!(
        output.status.success(),
        "hydraulink check {file}: {}",
        shown(&output)
    );
    let slug = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace(['/', '.'], "_");
    let out = temp_dir(&slug);
    let what = run_and_check_outputs(path, text, &[], &out);
    view_serves(&out, &what);

    let spec = hydraulink_io::check_model(text, file).unwrap();
    if let Some(scene) = &spec.scene {
        let scene_path = path.parent().unwrap().join(scene);
        scenes_named.push(scene_path.canonicalize().unwrap_or(scene_path));
        let out = temp_dir(&format!("{slug}_scene"));
        let what = run_and_check_outputs(path, text, &["--scene"], &out);
        view_serves(&out, &what);
    }

    let output = hydraulink(&["realtime", file, "--duration", "1"]);
    assert!(
        output.status.success(),
        "hydraulink realtime {file} --duration 1: {}",
        shown(&output)
    );
}

/// A file meant to fail is refused with exit code 2 and an error naming the file and a line
/// (by `check`, or else by a short `run`, for what only initialization finds).
fn a_bad_model_is_refused(path: &Path) {
    let file = path.to_str().unwrap();
    let output = hydraulink(&["check", file]);
    let output = if output.status.success() {
        let out = temp_dir("bad");
        hydraulink(&[
            "run",
            file,
            "--duration",
            "0.01",
            "--out",
            out.to_str().unwrap(),
        ])
    } else {
        output
    };
    assert_eq!(
        output.status.code(),
        Some(2),
        "{file} is meant to fail with exit code 2: {}",
        shown(&output)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(
        stderr.contains(&*name),
        "{file}: the error does not name the file: {stderr}"
    );
}

#[test]
fn every_toml_in_the_repository_runs_through_the_cli_or_fails_located() {
    let root = repo_root();
    let mut files = Vec::new();
    toml_files(&root, &mut files);
    let mut counts = [0usize; 4];
    let mut scenes = Vec::new();
    let mut scenes_named = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
        let relative = path.strip_prefix(&root).unwrap_or(path);
        let kind = classify(relative, &text);
        counts[kind as usize] += 1;
        let started = Instant::now();
        match kind {
            Kind::Model => a_model_runs(&root, path, &text, &mut scenes_named),
            Kind::Scene => scenes.push(path.canonicalize().unwrap()),
            Kind::MeantToFail => a_bad_model_is_refused(path),
            Kind::NotAModel => {}
        }
        if kind != Kind::NotAModel {
            eprintln!(
                "{:?} {}: {:.1} s",
                kind,
                relative.display(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    for scene in &scenes {
        assert!(
            scenes_named.contains(scene),
            "{}: a worksite no model names (its `scene` key), so no test runs it",
            scene.display()
        );
    }
    eprintln!(
        "{} models, {} worksites, {} meant to fail, {} not models",
        counts[0], counts[1], counts[2], counts[3]
    );
    // the tree has the shipped models, the tutorial's steps and the bad models: a walk that
    // finds none of them walked the wrong tree
    assert!(counts[Kind::Model as usize] >= 20, "{counts:?}");
    assert!(counts[Kind::MeantToFail as usize] >= 50, "{counts:?}");
}
