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

fn cells(r: &CompareRow) -> [String; 12] {
    [
        r.formulation.clone(),
        format!("{}", r.step_s),
        if r.error.is_none() {
            "yes".into()
        } else {
            "no".into()
        },
        r.steps.to_string(),
        format!("{:.3}", r.iterations_mean),
        r.iterations_max.to_string(),
        format!("{:.4}", r.wall_s),
        format!("{:.1}", r.real_time_factor),
        format!("{:.3e}", r.peak_constraint_violation),
        format!("{:.3e}", r.peak_energy_drift_j),
        opt(r.max_joint_deviation),
        opt(r.max_pressure_deviation_pa),
    ]
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

/// The table as Markdown, with the errors of failed runs listed below it.
pub fn compare_markdown(rows: &[CompareRow]) -> String {
    let mut s = format!(
        "| {} |\n|{}\n",
        HEADER.join(" | "),
        "---|".repeat(HEADER.len())
    );
    for r in rows {
        let _ = writeln!(s, "| {} |", cells(r).join(" | "));
    }
    for r in rows.iter().filter(|r| r.error.is_some()) {
        let _ = writeln!(
            s,
            "\n- {} at Δt = {} s failed: {}",
            r.formulation,
            r.step_s,
            r.error.as_deref().unwrap_or_default()
        );
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
