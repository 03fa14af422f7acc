//! Helpers shared by the CLI test binaries (`mod support;` in each).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `hydraulink` binary with `args` (CI mode: no progress bar).
pub fn hydraulink(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hydraulink"))
        .args(args)
        .env("CI", "true")
        .output()
        .expect("the hydraulink binary runs")
}

/// A path relative to the repository root.
pub fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// A fresh, empty directory under the system temp dir, named after the test binary's process
/// and `name`.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hydraulink-cli-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}
