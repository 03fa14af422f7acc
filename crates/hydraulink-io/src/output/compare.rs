//! The table of `hydraulink compare`: one row per formulation and step, written as CSV and as a
//! Markdown table.

use std::fmt::Write as _;
use std::path::Path;

use super::OutputError;

/// One run of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    /// Formulation name.
    pub formulation: String,
    /// Time step Δt \[s\].
    pub step_s: f64,
    /// `None` when the run completed, else the error.
    pub error: Option<String>,
    /// Steps taken.
    pub steps: u64,
    /// Mean Newton iterations per step.
    pub iterations_mean: f64,
    /// Maximum Newton iterations in a step.
    pub iterations_max: u32,
    /// Wall-clock time of the stepping \[s\].
    pub wall_s: f64,
    /// Simulated time / wall time.
    pub real_time_factor: f64,
    /// Peak ‖Φ‖.
    pub peak_constraint_violation: f64,
    /// Peak |energy drift| \[J\].
    pub peak_energy_drift_j: f64,
    /// Largest |z − z_ref| over joints and common steps \[rad or m\] (None for the reference).
    pub max_joint_deviation: Option<f64>,
    /// Largest |p − p_ref| over volumes and common steps \[Pa\].
    pub max_pressure_deviation_pa: Option<f64>,
}

const HEADER: [&str; 12] = [
    "formulation",
    "step_s",
    "completed",
    "steps",
    "newton_mean",
    "newton_max",
    "wall_s",
    "real_time_factor",
    "peak_constraint_violation",
    "peak_energy_drift_j",
    "max_joint_deviation",
    "max_pressure_deviation_pa",
];

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3e}")).unwrap_or_else(|| "-".into())
}

/// The text of a cell that a failed run has no value for.
pub const FAILED_CELL: &str = "failed";

fn cells(r: &CompareRow) -> [String; 12] {
    let failed = r.error.is_some();
    // a failed run's statistics are not results: its cells say so instead of showing 0
    let value = |text: String| {
        if failed {
            FAILED_CELL.to_string()
        } else {
            text
        }
    };
    [
        r.formulation.clone(),
        format!("{}", r.step_s),
        if failed { "no".into() } else { "yes".into() },
        r.steps.to_string(),
        value(format!("{:.3}", r.iterations_mean)),
        value(r.iterations_max.to_string()),
        value(format!("{:.4}", r.wall_s)),
        value(format!("{:.1}", r.real_time_factor)),
        value(format!("{:.3e}", r.peak_constraint_violation)),
        value(format!("{:.3e}", r.peak_energy_drift_j)),
        value(opt(r.max_joint_deviation)),
        value(opt(r.max_pressure_deviation_pa)),
    ]
}

/// The failed runs grouped by their error, in order of first appearance: each error once, with
/// the runs (`penalty at Δt = 0.001 s`) it stopped.
pub fn compare_failures(rows: &[CompareRow]) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for r in rows {
        let Some(error) = &r.error else { continue };
        let run = format!("{} at Δt = {} s", r.formulation, r.step_s);
        match groups.iter_mut().find(|(e, _)| e == error) {
            Some((_, runs)) => runs.push(run),
            None => groups.push((error.clone(), vec![run])),
        }
    }
    groups
}

/// The table as CSV text (header first).
pub fn compare_csv(rows: &[CompareRow]) -> String {
    let mut s = HEADER.join(",");
    s.push('\n');
    for r in rows {
        s.push_str(&cells(r).join(","));
        s.push('\n');
    }
    s
}

/// The table as Markdown, with the errors of the failed runs listed below it, each error once
/// with the runs it stopped.
pub fn compare_markdown(rows: &[CompareRow]) -> String {
    let mut s = format!(
        "| {} |\n|{}\n",
        HEADER.join(" | "),
        "---|".repeat(HEADER.len())
    );
    for r in rows {
        let _ = writeln!(s, "| {} |", cells(r).join(" | "));
    }
    for (error, runs) in compare_failures(rows) {
        let _ = writeln!(s, "\n- {} failed: {error}", runs.join(", "));
    }
    s
}

/// Writes `compare.csv` and `compare.md` into `dir`.
pub fn write_compare_tables(dir: &Path, rows: &[CompareRow]) -> Result<(), OutputError> {
    for (name, text) in [
        ("compare.csv", compare_csv(rows)),
        ("compare.md", compare_markdown(rows)),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| OutputError::Io { path, source })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, err: Option<&str>) -> CompareRow {
        CompareRow {
            formulation: name.into(),
            step_s: 1e-3,
            error: err.map(Into::into),
            steps: 10,
            iterations_mean: 1.5,
            iterations_max: 3,
            wall_s: 0.01,
            real_time_factor: 1000.0,
            peak_constraint_violation: 1e-11,
            peak_energy_drift_j: 0.04,
            max_joint_deviation: if name == "penalty" { None } else { Some(1e-6) },
            max_pressure_deviation_pa: None,
        }
    }

    #[test]
    fn failed_cells_say_failed_and_each_error_is_listed_once() {
        let rows = [
            row("penalty", None),
            row("double-step", Some("Newton failed")),
            row("global-i1al", Some("Newton failed")),
            row("multirate", Some("other")),
        ];
        let csv = compare_csv(&rows);
        let failed_line = csv.lines().nth(2).unwrap();
        assert!(failed_line.starts_with("double-step,0.001,no,10,failed,failed"));
        assert!(!failed_line.contains("e0") && !failed_line.contains("1000.0"));
        let md = compare_markdown(&rows);
        assert_eq!(md.matches("Newton failed").count(), 1, "{md}");
        assert!(md.contains(
            "- double-step at Δt = 0.001 s, global-i1al at Δt = 0.001 s failed: Newton failed"
        ));
        assert_eq!(compare_failures(&rows).len(), 2);
    }

    #[test]
    fn tables_have_a_row_per_run_and_list_failures() {
        let rows = [
            row("penalty", None),
            row("double-step", Some("Newton failed")),
        ];
        let csv = compare_csv(&rows);
        assert_eq!(csv.lines().count(), 3);
        assert!(csv
            .lines()
            .next()
            .unwrap()
            .starts_with("formulation,step_s,completed"));
        let md = compare_markdown(&rows);
        assert!(md.contains("| penalty | 0.001 | yes |"));
        assert!(md.contains("double-step at Δt = 0.001 s failed: Newton failed"));
    }
}
