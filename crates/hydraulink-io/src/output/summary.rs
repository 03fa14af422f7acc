//! `summary.json`: what a run was and how it went, and the statistics behind it.
//!
//! The peaks are taken over every step (the initial row included), not only over the output
//! rows; the Newton statistics are over the steps (the initial row has no Newton solve).
//! Quantities the run has no column for are `null`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::OutputError;

/// Output label of the energy drift column \[J\].
const ENERGY_DRIFT: &str = "energy.drift";
/// Output label of the actuator work column \[J\].
const ACTUATOR_WORK: &str = "energy.actuator_work";
/// Output label of the constraint violation column.
const CONSTRAINT_VIOLATION: &str = "constraint.violation";

/// How a run stands, as `summary.json` tells it: `running` from the start, then how it stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The run has started and not stopped yet (or the process was killed without a chance to
    /// update the file).
    Running,
    /// Every step of the requested duration converged and every file was written.
    Completed,
    /// A step failed (Newton diverged, a state left its range); `error` says which.
    Failed,
    /// The run was interrupted (Ctrl-C, SIGTERM) between two steps.
    Interrupted,
    /// Writing a result file failed; `error` names the file.
    OutputError,
    /// The program met a bug (a Rust panic) during the run; `error` gives its message and
    /// place. The rows so far and the plots are kept; please report it with the model.
    Panicked,
}

/// The content of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Model name.
    pub model: String,
    /// Formulation name (`penalty`).
    pub formulation: String,
    /// Time step Δt \[s\].
    pub step_s: f64,
    /// Requested duration \[s\].
    pub duration_s: f64,
    /// Output interval of `results.csv` \[s\].
    pub output_interval_s: f64,
    /// `running` while the run goes on, then how it stopped.
    pub status: RunStatus,
    /// Whether every step of the requested duration converged (status `completed`).
    pub completed: bool,
    /// What stopped the run early (the failed step, the interruption, the file that could not
    /// be written), or `null`.
    pub error: Option<String>,
    /// Converged steps.
    pub step_count: u64,
    /// Rows in `results.csv` (the initial row included).
    pub output_rows: u64,
    /// Time reached \[s\].
    pub simulated_time_s: f64,
    /// Wall-clock time of the run as timed by the caller \[s\] (`hydraulink run`: the step loop,
    /// rows handed to the CSV writer thread included).
    pub wall_clock_s: f64,
    /// Simulated time / wall-clock time [-]; `null` when no time was measured.
    pub real_time_factor: Option<f64>,
    /// max |energy.drift| over every step \[J\].
    pub peak_abs_energy_drift_j: Option<f64>,
    /// max energy.actuator_work over every step \[J\].
    pub peak_actuator_work_j: Option<f64>,
    /// max |constraint.violation| over every step (its column's unit).
    pub peak_constraint_violation: Option<f64>,
    /// Mean Newton iterations per step [-].
    pub newton_iterations_mean: Option<f64>,
    /// Most Newton iterations in one step [-].
    pub newton_iterations_max: Option<u32>,
    /// Cavitation warnings: volumes that fell below 0 Pa (absolute), counted per onset.
    pub cavitation_warnings: u64,
    /// Input values a 4/3 valve clipped to its `input_range_v` (a model signal with
    /// `saturate = true`, or a value set from code), counted once per step and valve; 0 when
    /// none was clipped. Absent from summaries written before it existed (read as 0).
    #[serde(default)]
    pub clipped_inputs: u64,
    /// Adaptive steps (`solver.step_control = "adaptive"`): the counts of the step-size
    /// control; absent at fixed steps. With adaptive steps `step_s` is the output interval and
    /// `step_count` counts the output intervals (each row is interpolated at its time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive_steps: Option<AdaptiveSteps>,
}

/// The counts of adaptive step-size control in `summary.json`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveSteps {
    /// Accepted steps.
    pub accepted: u64,
    /// Rejected steps (local error above the tolerance, or a failed Newton solve).
    pub rejected: u64,
    /// Smallest accepted step \[s\].
    pub min_step_s: f64,
    /// Largest accepted step \[s\].
    pub max_step_s: f64,
}

impl Summary {
    /// Writes the summary as pretty-printed JSON to `path`, through a temporary file renamed
    /// over it, so that a reader never sees half a summary.
    pub fn write(&self, path: &Path) -> Result<(), OutputError> {
        let io = |e| OutputError::io(path, e);
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = std::path::PathBuf::from(tmp);
        let mut out = BufWriter::new(File::create(&tmp).map_err(io)?);
        serde_json::to_writer_pretty(&mut out, self).map_err(|e| io(e.into()))?;
        out.write_all(b"\n").map_err(io)?;
        out.flush().map_err(io)?;
        drop(out);
        std::fs::rename(&tmp, path).map_err(io)
    }
}

/// Running statistics of a run, updated with every row and every step.
#[derive(Debug, Clone, PartialEq)]
pub struct RunStatistics {
    /// Column of `energy.drift`, if any.
    drift_column: Option<usize>,
    /// Column of `energy.actuator_work`, if any.
    work_column: Option<usize>,
    /// Column of `constraint.violation`, if any.
    violation_column: Option<usize>,
    /// max |energy.drift| so far \[J\].
    pub peak_abs_energy_drift_j: Option<f64>,
    /// max energy.actuator_work so far \[J\].
    pub peak_actuator_work_j: Option<f64>,
    /// max |constraint.violation| so far.
    pub peak_constraint_violation: Option<f64>,
    /// Steps observed.
    pub n_steps: u64,
    /// Newton iterations summed over the steps.
    pub newton_iterations_total: u64,
    /// Most Newton iterations in one step.
    pub newton_iterations_peak: u32,
    /// Cavitation onsets summed over the steps.
    pub cavitation_warnings: u64,
    /// Input values clipped to a valve's input range, summed over the steps and valves.
    pub clipped_inputs: u64,
}

impl RunStatistics {
    /// Statistics for rows laid out as `labels`.
    pub fn new(labels: &[String]) -> Self {
        let column = |name: &str| labels.iter().position(|l| l == name);
        RunStatistics {
            drift_column: column(ENERGY_DRIFT),
            work_column: column(ACTUATOR_WORK),
            violation_column: column(CONSTRAINT_VIOLATION),
            peak_abs_energy_drift_j: None,
            peak_actuator_work_j: None,
            peak_constraint_violation: None,
            n_steps: 0,
            newton_iterations_total: 0,
            newton_iterations_peak: 0,
            cavitation_warnings: 0,
            clipped_inputs: 0,
        }
    }

    /// Takes the peaks over one row.
    pub fn observe_row(&mut self, row: &[f64]) {
        let value = |column: Option<usize>| column.and_then(|c| row.get(c).copied());
        raise(
            &mut self.peak_abs_energy_drift_j,
            value(self.drift_column).map(f64::abs),
        );
        raise(&mut self.peak_actuator_work_j, value(self.work_column));
        raise(
            &mut self.peak_constraint_violation,
            value(self.violation_column).map(f64::abs),
        );
    }

    /// Counts one step with `iterations` Newton iterations and the volumes flagged in
    /// `cavitation_onsets`.
    pub fn observe_step(&mut self, iterations: u32, cavitation_onsets: u64) {
        self.n_steps += 1;
        self.newton_iterations_total += u64::from(iterations);
        self.newton_iterations_peak = self.newton_iterations_peak.max(iterations);
        self.cavitation_warnings += u64::from(cavitation_onsets.count_ones());
    }

    /// Mean Newton iterations per step, `None` before the first step.
    pub fn newton_iterations_mean(&self) -> Option<f64> {
        (self.n_steps > 0).then(|| self.newton_iterations_total as f64 / self.n_steps as f64)
    }

    /// Most Newton iterations in one step, `None` before the first step.
    pub fn newton_iterations_max(&self) -> Option<u32> {
        (self.n_steps > 0).then_some(self.newton_iterations_peak)
    }
}

/// Raises `peak` to `value`; a missing or NaN value leaves it as it is.
fn raise(peak: &mut Option<f64>, value: Option<f64>) {
    if let Some(v) = value.filter(|v| !v.is_nan()) {
        *peak = Some(peak.map_or(v, |p| p.max(v)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peaks_use_absolute_drift_and_signed_work() {
        let labels: Vec<String> = ["time", "energy.actuator_work", "energy.drift"]
            .map(String::from)
            .to_vec();
        let mut stats = RunStatistics::new(&labels);
        for row in [
            [0.0, -5.0, 0.0],
            [1.0, -2.0, -3.0],
            [2.0, -4.0, 2.0],
            [3.0, f64::NAN, 1.0],
        ] {
            stats.observe_row(&row);
        }
        assert_eq!(stats.peak_abs_energy_drift_j, Some(3.0));
        assert_eq!(stats.peak_actuator_work_j, Some(-2.0));
        assert_eq!(stats.peak_constraint_violation, None);
    }

    #[test]
    fn newton_and_cavitation_counts() {
        let mut stats = RunStatistics::new(&[]);
        assert_eq!(stats.newton_iterations_mean(), None);
        stats.observe_step(2, 0);
        stats.observe_step(5, 0b101);
        assert_eq!(stats.newton_iterations_mean(), Some(3.5));
        assert_eq!(stats.newton_iterations_max(), Some(5));
        assert_eq!(stats.cavitation_warnings, 2);
    }

    #[test]
    fn summary_json_has_every_key() {
        let summary = Summary {
            model: "m".into(),
            formulation: "penalty".into(),
            step_s: 1e-3,
            duration_s: 1.0,
            output_interval_s: 1e-3,
            status: RunStatus::Completed,
            completed: true,
            error: None,
            step_count: 1000,
            output_rows: 1001,
            simulated_time_s: 1.0,
            wall_clock_s: 0.5,
            real_time_factor: Some(2.0),
            peak_abs_energy_drift_j: None,
            peak_actuator_work_j: Some(1.0),
            peak_constraint_violation: Some(1e-9),
            newton_iterations_mean: Some(2.5),
            newton_iterations_max: Some(4),
            cavitation_warnings: 0,
            clipped_inputs: 3,
            adaptive_steps: None,
        };
        let json = serde_json::to_value(&summary).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        for key in [
            "model",
            "formulation",
            "step_s",
            "duration_s",
            "status",
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
            "clipped_inputs",
        ] {
            assert!(keys.contains(&key), "{key}");
        }
        assert_eq!(json["error"], serde_json::Value::Null);
        assert_eq!(json["status"], "completed");
        assert_eq!(
            serde_json::from_value::<Summary>(json.clone()).unwrap(),
            summary
        );
        // a summary written before `clipped_inputs` existed reads as 0 clipped values
        let mut old = json;
        old.as_object_mut().unwrap().remove("clipped_inputs");
        let old: Summary = serde_json::from_value(old).unwrap();
        assert_eq!(old.clipped_inputs, 0);
    }
}
