//! The first run of a new user (issue 23): every command of the docs' ```sh and ```console
//! blocks, run by `scripts/first_run.py` from a fresh copy of the repository with this binary in
//! place of `cargo run --release --` and `hydraulink`, each checked for its exit code and for the
//! numbers the text quotes about its output (the `<!-- check … -->` comments after the blocks).
//! So a doc and the program cannot drift apart. The script's own behaviour (a drifted number
//! fails and names the doc, the line and the quote) is tested here on a small doc of our own.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs scripts/first_run.py on `root` with `args`.
fn first_run(root: &Path, args: &[&str]) -> Output {
    Command::new("python3")
        .arg(repo().join("scripts/first_run.py"))
        .arg("--repo")
        .arg(root)
        .args(args)
        .output()
        .expect("python3 runs scripts/first_run.py (the test suite needs python3)")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn every_command_of_the_docs_runs_and_prints_what_the_text_quotes() {
    let out = first_run(&repo(), &["--bin", env!("CARGO_BIN_EXE_hydraulink")]);
    // the report: what ran, how long it took, what failed (shown with --nocapture, or on failure)
    println!("{}", text(&out));
    assert!(
        out.status.success(),
        "the first-run check failed: its report is above"
    );
}

#[test]
fn every_number_quoted_near_a_command_is_checked_or_marked_unchecked() {
    let out = first_run(&repo(), &["--unchecked", "--strict"]);
    let report = text(&out);
    assert!(out.status.success(), "{report}");
}

/// A repository of one model and one doc whose text says `quoted` about the run's end time.
fn tiny_repo(name: &str, quoted: &str, check: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("first_run_{name}"));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("models")).unwrap();
    std::fs::copy(
        repo().join("models/fourbar.toml"),
        root.join("models/fourbar.toml"),
    )
    .unwrap();
    std::fs::write(
        root.join("README.md"),
        format!(
            "# Try it\n\n```sh\nhydraulink run models/fourbar.toml --out out/x\n```\n\
             <!-- check\n{check}\n-->\n\nThe run {quoted}.\n"
        ),
    )
    .unwrap();
    root
}

#[test]
fn a_number_that_drifted_fails_naming_the_doc_the_line_and_the_quote() {
    let bin = env!("CARGO_BIN_EXE_hydraulink");
    // the four-bar runs 10 s: the right number passes
    let root = tiny_repo(
        "right",
        "ends at 10 s",
        r#"out/x/results.csv time last = "ends at 10 s""#,
    );
    let out = first_run(&root, &["--bin", bin]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("1 checks (1 numbers)"),
        "{}",
        text(&out)
    );

    // a drifted one fails with the doc, the line of the quote, the quote and the value found
    let root = tiny_repo(
        "drifted",
        "ends at 11 s",
        r#"out/x/results.csv time last = "ends at 11 s""#,
    );
    let out = first_run(&root, &["--bin", bin]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains(r#"README.md:10: the text says "ends at 11 s""#)
            && report.contains("out/x/results.csv time last is 10 s"),
        "{report}"
    );

    // a check whose quote the text no longer holds is refused before anything runs
    let root = tiny_repo(
        "stale",
        "ends at 10 s",
        r#"out/x/results.csv time last = "ends at 12 s""#,
    );
    let out = first_run(&root, &["--bin", bin]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(2), "{report}");
    assert!(
        report.contains(r#"README.md:7: the check quotes "ends at 12 s""#),
        "{report}"
    );

    // and a number of the text without a check is listed
    let root = tiny_repo("unlisted", "ends at 10 s", "exit = \"ends\" as 0");
    let out = first_run(&root, &["--unchecked", "--strict"]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(report.contains("README.md:10: 10 s"), "{report}");
}
