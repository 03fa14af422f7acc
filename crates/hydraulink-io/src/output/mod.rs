//! Result writers: the files a run leaves in its output directory.
//!
//! ```text
//! DIR/results.csv           one row per output step; the columns are the simulation's output
//!                           labels (`time` first), every value in SI units at full precision (csv.rs)
//! DIR/results.columns.json  name, unit and meaning of every column of results.csv  (columns.rs)
//! DIR/summary.json          status (running, then completed, failed, interrupted or
//!                           output_error), settings, peaks over every step, Newton statistics,
//!                           timing                                                  (summary.rs)
//! DIR/poses.bin, poses.json every body's pose per output row, for `hydraulink view`  (poses.rs)
//! DIR/plots/*.svg           joint angles and positions, pressures, flows, energy and drift,
//!                           constraint violation, Newton iterations, cylinders; drawn from the
//!                           min/max per pixel column of every step        (plots.rs, decimate.rs)
//! ```
//!
//! A [`RunRecorder`] is created with the columns and the initial row (t = 0): it writes the CSV
//! header, the column table and a `running` summary at once. It then receives one row per step,
//! streams the rows chosen by the [`OutputSchedule`] to `results.csv`, and keeps of every step
//! only the statistics and the plot copy ([`Decimated`]), both of a fixed size: memory does not
//! grow with the run's length. [`RunRecorder::finish`] writes the final summary and the figures,
//! whatever stopped the run ([`RunStop`]). Nothing here runs the simulation: the recorder only
//! sees columns and numbers, so it is tested with synthetic rows.

mod columns;
mod compare;
mod csv;
mod decimate;
mod friction_curve;
pub mod linear;
mod plots;
pub mod poses;
mod summary;
mod svg_lines;
pub mod working_range;

use std::fs;
use std::path::{Path, PathBuf};

pub use columns::{describe_columns, write_columns, ColumnInfo, COLUMNS_FILE, INPUT_UNIT};
pub use compare::{
    compare_csv, compare_failures, compare_markdown, write_compare_tables, CompareRow, FAILED_CELL,
};
pub use csv::{CsvStream, CsvWriter};
pub use decimate::{decimate_points, Decimated, PLOT_BUCKETS};
pub use friction_curve::write_friction_curve;
pub use plots::{
    write_overlay, write_plots, OverlayLine, OverlayPanel, MAX_POINTS_PER_FIGURE, PLOT_FILES,
};
pub use summary::{AdaptiveSteps, RunStatistics, RunStatus, Summary};

/// Most steps a run may take without an explicit permission (`hydraulink run --allow-long-run`):
/// 10 million, e.g. 10 000 s at Δt = 1 ms. Such a run writes gigabytes of CSV at an output every
/// step and takes many minutes; a typo in `--duration` should not start it.
pub const MAX_STEPS_WITHOUT_PERMISSION: u64 = 10_000_000;

/// Most steps any run may take: 2^53, the last step count an `f64` time index counts exactly.
pub const MAX_STEPS: u64 = 1 << 53;

/// The output interval snapped to a whole number of steps: k Δt with k = round(interval / Δt),
/// at least 1. Returns the snapped interval \[s\] and whether it differs from the requested one
/// (by more than a rounding error of 1e-9 relative). Non-finite or non-positive input gives
/// one step.
pub fn snap_output_interval(step_s: f64, output_interval_s: f64) -> (f64, bool) {
    if !(step_s.is_finite() && step_s > 0.0) {
        return (output_interval_s, false);
    }
    let k = (output_interval_s / step_s).round();
    let k = if k.is_finite() && k >= 1.0 { k } else { 1.0 };
    let snapped = k * step_s;
    let changed = output_interval_s.is_nan()
        || (snapped - output_interval_s).abs() > 1e-9 * output_interval_s.abs();
    (snapped, changed)
}

/// The time of step `k`, k Δt \[s\], as the double nearest to the decimal k·Δt when Δt is a
/// decimal of at most 15 digits after the point (`0.007` → step 1714 is `11.998`, where the
/// product of doubles is 11.998000000000001), else the product k·Δt. Printed in the shortest
/// form that reads back exactly, it is the decimal k·Δt.
pub fn step_time_s(k: u64, step_s: f64) -> f64 {
    let product = k as f64 * step_s;
    if !(step_s.is_finite() && step_s > 0.0) {
        return product;
    }
    // Δt = m / 10^d exactly in decimal, with the fewest decimals d that give Δt back (no
    // formatting: this runs for every row)
    let Some(decimals) = (0..=15).find(|&d| {
        let scale = 10f64.powi(d);
        (step_s * scale).round() / scale == step_s
    }) else {
        return product;
    };
    let scale = 10f64.powi(decimals);
    let m = (step_s * scale).round();
    let km = k as f64 * m;
    // k m must be an exact integer in a double; the division by 10^d (exact for d ≤ 22) is then
    // correctly rounded: the nearest double to k m / 10^d
    if m < 1.0 || km >= (1u64 << 53) as f64 {
        return product;
    }
    km / scale
}

/// A note for stderr when `duration_s` is not a whole number of steps of `step_s`: the run is
/// rounded up to the next step and ends later than asked (`hydraulink::model::steps_covering`).
pub fn duration_note(step_s: f64, duration_s: f64) -> Option<String> {
    let n = hydraulink::model::steps_covering(duration_s, step_s);
    let end = step_time_s(n, step_s);
    (n > 0 && (end - duration_s).abs() > 1e-9 * step_s).then(|| {
        format!(
            "note: the duration {duration_s} s is not a whole number of steps of {step_s} s; the \
             run takes {n} steps and ends at t = {end} s"
        )
    })
}

/// File name of the result table inside the output directory.
pub const RESULTS_FILE: &str = "results.csv";
/// File name of the run summary inside the output directory.
pub const SUMMARY_FILE: &str = "summary.json";
/// Folder of the figures inside the output directory.
pub const PLOTS_DIR: &str = "plots";

/// A failure to write a result file.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Creating, writing or flushing a file or folder failed.
    #[error("cannot write '{}': {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Drawing a figure failed.
    #[error("cannot draw '{}': {message}", path.display())]
    Plot {
        /// The SVG file.
        path: PathBuf,
        /// The plotting library's message.
        message: String,
    },
}

impl OutputError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        OutputError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Removes an earlier run's file at `path` before it is written again, when it is a plain file
/// of its own (not a symbolic link, not hard-linked elsewhere; those are written through, as
/// before). Truncating a file frees its blocks in the writing process, and ext4 writes a
/// truncated-and-rewritten file out to disk when it is closed (its safeguard for files
/// rewritten in place): both cost the run time that a new file does not. Nothing happens when
/// there is no such file or it cannot be removed (it is then truncated when written).
pub(crate) fn remove_earlier(path: &Path) {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return;
    };
    #[cfg(unix)]
    let own = std::os::unix::fs::MetadataExt::nlink(&meta) == 1;
    #[cfg(not(unix))]
    let own = true;
    if meta.file_type().is_file() && own {
        // best effort: a file that stays is truncated by its writer
        let _ = fs::remove_file(path);
    }
}

/// Which steps become output rows.
///
/// Step n (time n Δt, n = 0 … N with N = duration / Δt rounded up) is written when n = round(k r) for
/// some integer k ≥ 0, where r = output interval / Δt; the last step N is always written. Each
/// output index is rounded on its own from k, so no error accumulates over a long run. An interval
/// shorter than Δt writes every step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputSchedule {
    /// Output interval in steps, r [-].
    ratio: f64,
    /// Number of steps in the run, N.
    n_steps: u64,
}

impl OutputSchedule {
    /// The schedule of a run of `duration_s` \[s\] with steps of `step_s` \[s\] and an output every
    /// `output_interval_s` \[s\]. Non-finite or non-positive inputs give a run of no steps, or
    /// output at every step.
    pub fn new(step_s: f64, duration_s: f64, output_interval_s: f64) -> Self {
        let n_steps = hydraulink::model::steps_covering(duration_s, step_s);
        let ratio = output_interval_s / step_s;
        let ratio = if ratio.is_finite() && ratio > 1.0 {
            ratio
        } else {
            1.0
        };
        OutputSchedule { ratio, n_steps }
    }

    /// Number of steps in the run, N = duration / Δt, rounded up to a whole number of steps
    /// (`hydraulink::model::steps_covering`).
    pub fn n_steps(&self) -> u64 {
        self.n_steps
    }

    /// Whether step `n` (0 = the initial state) is an output row.
    pub fn is_output(&self, n: u64) -> bool {
        if n == 0 || n >= self.n_steps || self.ratio <= 1.0 {
            return true;
        }
        // round(k r) = n needs |k − n/r| ≤ 0.5/r ≤ 0.5, so k is round(n/r) or, at a tie, a
        // neighbour of it.
        let n = n as f64;
        let k = (n / self.ratio).round();
        [k - 1.0, k, k + 1.0]
            .into_iter()
            .any(|k| k >= 0.0 && (k * self.ratio).round() == n)
    }
}

/// What a run is: the settings that go into `summary.json` and decide the output rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    /// Model name.
    pub model: String,
    /// Formulation name as written in model files (`penalty`).
    pub formulation: String,
    /// Time step Δt \[s\].
    pub step_s: f64,
    /// Duration \[s\].
    pub duration_s: f64,
    /// Output interval \[s\].
    pub output_interval_s: f64,
    /// Volume names, indexed like the bits of `StepReport::cavitation_onsets`.
    pub volume_names: Vec<String>,
}

/// The summary of a run that has not taken its first step: status `running`, no statistics.
fn starting_summary(info: &RunInfo) -> Summary {
    Summary {
        model: info.model.clone(),
        formulation: info.formulation.clone(),
        step_s: info.step_s,
        duration_s: info.duration_s,
        output_interval_s: info.output_interval_s,
        status: RunStatus::Running,
        completed: false,
        error: None,
        step_count: 0,
        output_rows: 0,
        simulated_time_s: 0.0,
        wall_clock_s: 0.0,
        real_time_factor: None,
        peak_abs_energy_drift_j: None,
        peak_actuator_work_j: None,
        peak_constraint_violation: None,
        newton_iterations_mean: None,
        newton_iterations_max: None,
        cavitation_warnings: 0,
        clipped_inputs: 0,
        adaptive_steps: None,
    }
}

/// Why a run stopped, for [`RunRecorder::finish`].
#[derive(Debug, Clone, PartialEq)]
pub enum RunStop {
    /// Every requested step was taken.
    Completed,
    /// A step failed; its message.
    StepFailed(String),
    /// The user interrupted the run (Ctrl-C) between two steps.
    Interrupted,
    /// Writing a result file failed; its message.
    OutputFailed(String),
    /// The program panicked during the run; the panic's message and place.
    Panicked(String),
}

/// Records a run: streams `results.csv` row by row, keeps the statistics and a fixed-size plot
/// copy of every step and, at the end, writes `summary.json` and `plots/*.svg`.
///
/// ```text
/// create(dir, info, columns, row at t = 0)  summary.json with status "running", CSV header,
///                                           initial row and results.columns.json written
/// record_step(row, iterations, onsets) × N  statistics and plot copy of every step; output
///                                           rows written
/// finish(stop, wall_clock_s)                flush CSV, write summary.json (final status) and plots
/// ```
#[derive(Debug)]
pub struct RunRecorder {
    /// Output directory.
    dir: PathBuf,
    /// Run settings.
    info: RunInfo,
    /// The columns, `time` first.
    columns: Vec<ColumnInfo>,
    /// Which steps are written.
    schedule: OutputSchedule,
    /// `results.csv`, written as rows arrive (on a thread of its own).
    csv: CsvStream,
    /// Statistics over every step.
    stats: RunStatistics,
    /// Min/max per time bucket of every column over every step, for the figures.
    plot: Decimated,
    /// Column of `newton.iterations`: left out of the plot copy at t = 0 (no Newton solve).
    iterations_column: Option<usize>,
    /// Rows written to `results.csv` (the initial row included).
    output_rows: u64,
    /// Steps recorded after the initial row.
    n_recorded: u64,
    /// Time of the last recorded row \[s\].
    last_time_s: f64,
    /// The row as written: the row recorded, with the time k Δt ([`step_time_s`]).
    written: Vec<f64>,
    /// Whether the first column is the time (then written as k Δt).
    time_column: bool,
    /// The counts of adaptive step-size control ([`RunRecorder::set_adaptive_steps`]).
    adaptive_steps: Option<AdaptiveSteps>,
}

impl RunRecorder {
    /// Creates `dir` (and `dir/plots`), writes `summary.json` with status `running` (replacing
    /// an earlier run's), the CSV header and the initial row (t = 0), and
    /// `results.columns.json`. When the CSV or the column table cannot be written, the summary
    /// says `output_error` before the error is returned.
    ///
    /// `columns` describe the output labels (`time` first); `initial_row` has one value per
    /// column.
    pub fn create(
        dir: &Path,
        info: RunInfo,
        columns: Vec<ColumnInfo>,
        initial_row: &[f64],
    ) -> Result<Self, OutputError> {
        let plots_dir = dir.join(PLOTS_DIR);
        fs::create_dir_all(&plots_dir).map_err(|e| OutputError::io(&plots_dir, e))?;
        // First of all, replace an earlier run's summary: from here on, summary.json tells
        // this run's status.
        let summary_path = dir.join(SUMMARY_FILE);
        let starting = starting_summary(&info);
        starting.write(&summary_path)?;
        let labels: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
        let csv = CsvStream::create(&dir.join(RESULTS_FILE), &labels)
            .and_then(|csv| write_columns(&dir.join(COLUMNS_FILE), &columns).map(|()| csv))
            .inspect_err(|e| {
                let failed = Summary {
                    status: RunStatus::OutputError,
                    error: Some(e.to_string()),
                    ..starting.clone()
                };
                // best effort: the error to report is the first one
                let _ = failed.write(&summary_path);
            })?;
        let schedule = OutputSchedule::new(info.step_s, info.duration_s, info.output_interval_s);
        // the plots span the steps taken, to N Δt (a duration rounded up to a whole step)
        let plot = Decimated::new(
            columns.len(),
            step_time_s(schedule.n_steps(), info.step_s).max(info.duration_s),
            PLOT_BUCKETS,
        );
        let time_column = columns.first().is_some_and(|c| c.name == "time");
        let mut recorder = RunRecorder {
            dir: dir.to_path_buf(),
            stats: RunStatistics::new(&labels),
            iterations_column: labels.iter().position(|l| l == "newton.iterations"),
            info,
            columns,
            schedule,
            csv,
            plot,
            output_rows: 0,
            n_recorded: 0,
            last_time_s: 0.0,
            written: vec![0.0; labels.len()],
            time_column,
            adaptive_steps: None,
        };
        recorder.record(initial_row, true)?;
        Ok(recorder)
    }

    /// Number of steps to run, N = duration / Δt rounded up to a whole step.
    pub fn n_steps(&self) -> u64 {
        self.schedule.n_steps()
    }

    /// Number of steps recorded so far (the initial row not counted).
    pub fn n_recorded(&self) -> u64 {
        self.n_recorded
    }

    /// Rows written to `results.csv` so far (the initial row included).
    pub fn output_rows(&self) -> u64 {
        self.output_rows
    }

    /// The output directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The columns, `time` first.
    pub fn columns(&self) -> &[ColumnInfo] {
        &self.columns
    }

    /// Bytes the recorder holds on the heap for rows (CSV buffer and plot copy): fixed when the
    /// run starts, whatever the number of rows.
    pub fn retained_bytes(&self) -> usize {
        self.csv.retained_bytes() + self.plot.retained_bytes()
    }

    /// Records the row after a converged step: updates the statistics and the plot copy with it,
    /// and writes it if the schedule selects this step. `iterations` are the step's Newton
    /// iterations; `cavitation_onsets` has bit i set when volume i fell below 0 Pa (absolute) in
    /// the step.
    pub fn record_step(
        &mut self,
        row: &[f64],
        iterations: u32,
        cavitation_onsets: u64,
    ) -> Result<(), OutputError> {
        self.n_recorded += 1;
        self.stats.observe_step(iterations, cavitation_onsets);
        let write = self.schedule.is_output(self.n_recorded);
        self.record(row, write)
    }

    /// Sets the counts of adaptive step-size control that the summary reports (a run with
    /// `solver.step_control = "adaptive"`: then each recorded "step" is an output interval).
    pub fn set_adaptive_steps(&mut self, steps: AdaptiveSteps) {
        self.adaptive_steps = Some(steps);
    }

    /// Counts `n` input values that a valve clipped to its input range (in the step just
    /// recorded): they go into the summary's `clipped_inputs`.
    pub fn add_clipped_inputs(&mut self, n: u64) {
        self.stats.clipped_inputs += n;
    }

    /// The warnings for the volumes flagged in `cavitation_onsets` at time `time_s` \[s\], one per
    /// flagged volume: `volume 'V2' pressure below 0 Pa (absolute) at t = 1.234 s`.
    pub fn cavitation_warnings(
        &self,
        time_s: f64,
        cavitation_onsets: u64,
    ) -> impl Iterator<Item = String> + '_ {
        (0..u64::BITS as usize)
            .filter(move |i| (cavitation_onsets >> i) & 1 == 1)
            .map(move |i| {
                let name = self.info.volume_names.get(i).map_or("?", String::as_str);
                format!("volume '{name}' pressure below 0 Pa (absolute) at t = {time_s:.3} s")
            })
    }

    /// Ends the run: flushes `results.csv` (whole rows only), writes `summary.json` with the
    /// status of `stop` and the figures, and returns the summary. `wall_clock_s` \[s\] is the
    /// time the run took. Every file is attempted even if an earlier one fails; the first
    /// failure is returned, and a failed CSV flush is recorded in the summary as `output_error`.
    pub fn finish(mut self, stop: RunStop, wall_clock_s: f64) -> Result<Summary, OutputError> {
        // the last rows go to the writer thread, which formats them while the figures are drawn
        let handed = self.csv.hand_over();
        let plots = write_plots(&self.dir.join(PLOTS_DIR), &self.columns, &self.plot);
        let csv = self.csv.finish().and(handed);
        let (status, error) = match (&stop, &csv) {
            (RunStop::Completed, Ok(())) if self.n_recorded >= self.n_steps() => {
                (RunStatus::Completed, None)
            }
            (RunStop::Completed, Ok(())) => (
                RunStatus::Failed,
                Some(format!(
                    "stopped after {} of {} steps",
                    self.n_recorded,
                    self.n_steps()
                )),
            ),
            (RunStop::StepFailed(e), _) => (RunStatus::Failed, Some(e.clone())),
            (RunStop::Interrupted, _) => (
                RunStatus::Interrupted,
                Some(format!("interrupted at t = {} s", self.last_time_s)),
            ),
            (RunStop::OutputFailed(e), _) => (RunStatus::OutputError, Some(e.clone())),
            (RunStop::Panicked(e), _) => (RunStatus::Panicked, Some(e.clone())),
            (RunStop::Completed, Err(e)) => (RunStatus::OutputError, Some(e.to_string())),
        };
        let summary = self.summary(status, error, wall_clock_s);
        let json = summary.write(&self.dir.join(SUMMARY_FILE));
        csv.and(json).and(plots)?;
        Ok(summary)
    }

    /// The summary of the run so far, with `status` and `error`.
    pub fn summary(&self, status: RunStatus, error: Option<String>, wall_clock_s: f64) -> Summary {
        let simulated_time_s = self.last_time_s;
        let real_time_factor =
            (wall_clock_s > 0.0 && self.n_recorded > 0).then(|| simulated_time_s / wall_clock_s);
        Summary {
            model: self.info.model.clone(),
            formulation: self.info.formulation.clone(),
            step_s: self.info.step_s,
            duration_s: self.info.duration_s,
            output_interval_s: self.info.output_interval_s,
            status,
            completed: status == RunStatus::Completed,
            error,
            step_count: self.n_recorded,
            output_rows: self.output_rows,
            simulated_time_s,
            wall_clock_s,
            real_time_factor,
            peak_abs_energy_drift_j: self.stats.peak_abs_energy_drift_j,
            peak_actuator_work_j: self.stats.peak_actuator_work_j,
            peak_constraint_violation: self.stats.peak_constraint_violation,
            newton_iterations_mean: self.stats.newton_iterations_mean(),
            newton_iterations_max: self.stats.newton_iterations_max(),
            cavitation_warnings: self.stats.cavitation_warnings,
            clipped_inputs: self.stats.clipped_inputs,
            adaptive_steps: self.adaptive_steps,
        }
    }

    /// Observes a row for the statistics and the plot copy and, if `write`, writes it.
    fn record(&mut self, row: &[f64], write: bool) -> Result<(), OutputError> {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "an output row has one value per output column"
        );
        self.stats.observe_row(row);
        match self.iterations_column {
            // the initial row has no Newton solve: its 0 is not plotted
            Some(c) if self.n_recorded == 0 => {
                let mut initial = row.to_vec();
                initial[c] = f64::NAN;
                self.plot.push(&initial);
            }
            _ => self.plot.push(row),
        }
        self.written.copy_from_slice(row);
        if self.time_column {
            // k Δt, not the sum of the steps: 1714 steps of 7e-3 s read 11.998, not
            // 11.998000000000001
            self.written[0] = step_time_s(self.n_recorded, self.info.step_s);
        }
        self.last_time_s = self.written.first().copied().unwrap_or(f64::NAN);
        if write {
            self.csv.write_row(&self.written)?;
            self.output_rows += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Times are k Δt in the decimal the user wrote: 1714 steps of 7 ms end at 11.998, printed
    /// so; a step of no short decimal form keeps the product.
    #[test]
    fn step_times_are_k_times_the_step() {
        assert_eq!(format!("{}", step_time_s(1714, 7e-3)), "11.998");
        assert_eq!(format!("{}", 1714.0 * 7e-3), "11.998000000000001");
        assert_eq!(step_time_s(10_000, 1e-3), 10.0);
        assert_eq!(step_time_s(3, 0.1), 0.3);
        assert_eq!(step_time_s(0, 1e-3), 0.0);
        assert_eq!(step_time_s(3, 1.0 / 3.0), 3.0 * (1.0 / 3.0));
        for k in 0..20_000u64 {
            let t = step_time_s(k, 1e-3);
            assert_eq!(format!("{t}").parse::<f64>().unwrap(), t);
            assert!((t - k as f64 * 1e-3).abs() <= 1e-12, "{k}");
        }
        assert!(duration_note(1e-3, 10.0).is_none());
        let note = duration_note(7e-3, 12.0).unwrap();
        assert!(
            note.contains("1715 steps") && note.contains("12.005 s"),
            "{note}"
        );
    }

    /// A run that panicked is finished with the status `panicked` and the message, its rows
    /// kept.
    #[test]
    fn a_panicked_run_says_so() {
        let dir = temp_dir("panicked");
        let info = RunInfo {
            model: "m".into(),
            formulation: "penalty".into(),
            step_s: 0.1,
            duration_s: 1.0,
            output_interval_s: 0.1,
            volume_names: vec![],
        };
        let columns = vec![
            ColumnInfo::new("time", "s", "simulated time t"),
            ColumnInfo::new("x", "m", "x"),
        ];
        let mut rec = RunRecorder::create(&dir, info, columns, &[0.0, 1.0]).unwrap();
        rec.record_step(&[0.1, 2.0], 1, 0).unwrap();
        let summary = rec
            .finish(
                RunStop::Panicked("hydraulink panicked at x.rs:1:1: boom".into()),
                0.0,
            )
            .unwrap();
        assert_eq!(summary.status, RunStatus::Panicked);
        let text = fs::read_to_string(dir.join(SUMMARY_FILE)).unwrap();
        assert!(text.contains("\"status\": \"panicked\""), "{text}");
        assert!(text.contains("boom"), "{text}");
        let csv = fs::read_to_string(dir.join(RESULTS_FILE)).unwrap();
        assert_eq!(csv.lines().count(), 3, "{csv}");
    }

    /// A fresh, empty directory under the system temp dir.
    pub(crate) fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "hydraulink-io-output-{}-{name}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn labels() -> Vec<String> {
        [
            "time",
            "z1.q",
            "z1.qd",
            "V1.p",
            "V2.p",
            "cyl.length",
            "cyl.velocity",
            "cyl.force",
            "energy.kinetic",
            "energy.potential",
            "energy.actuator_work",
            "energy.drift",
            "constraint.violation",
            "newton.iterations",
        ]
        .map(String::from)
        .to_vec()
    }

    fn columns() -> Vec<ColumnInfo> {
        labels()
            .into_iter()
            .map(|name| {
                let unit = match name.as_str() {
                    "time" | "cyl.length" => "s",
                    "z1.q" => "rad",
                    "V1.p" | "V2.p" => "Pa",
                    "cyl.force" => "N",
                    n if n.starts_with("energy") => "J",
                    _ => "-",
                };
                ColumnInfo::new(name, unit, "")
            })
            .collect()
    }

    fn info(step_s: f64, duration_s: f64, output_interval_s: f64) -> RunInfo {
        RunInfo {
            model: "synthetic".into(),
            formulation: "penalty".into(),
            step_s,
            duration_s,
            output_interval_s,
            volume_names: vec!["V1".into(), "V2".into()],
        }
    }

    /// A row at step n: every column is a simple function of t, with a drift that changes sign.
    fn row(n: u64, step_s: f64, iterations: u32) -> Vec<f64> {
        let t = n as f64 * step_s;
        vec![
            t,
            0.1 * t,
            0.1,
            1e6 + t,
            2e6 - t,
            1.4 + 0.01 * t,
            0.01,
            5e3,
            t * t,
            -t,
            100.0 * t - 50.0 * t * t,
            if n.is_multiple_of(2) { 0.5 * t } else { -t },
            if n == 0 { 0.0 } else { 1e-9 * t },
            iterations as f64,
        ]
    }

    fn read_csv(dir: &Path) -> Vec<String> {
        fs::read_to_string(dir.join(RESULTS_FILE))
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    }

    /// The output steps of a complete run.
    fn output_steps(s: &OutputSchedule) -> Vec<u64> {
        (0..=s.n_steps()).filter(|&n| s.is_output(n)).collect()
    }

    #[test]
    fn schedule_every_step_by_default() {
        let s = OutputSchedule::new(1e-3, 0.05, 1e-3);
        assert_eq!(s.n_steps(), 50);
        assert_eq!(output_steps(&s), (0..=50).collect::<Vec<_>>());
    }

    #[test]
    fn schedule_rounds_each_output_index_without_drift() {
        // r = 0.01 / 0.001 is not exactly 10 in binary; rows must still fall on every 10th step.
        let s = OutputSchedule::new(1e-3, 10.0, 0.01);
        assert_eq!(s.n_steps(), 10_000);
        let rows = output_steps(&s);
        assert_eq!(rows.len(), 1001);
        assert!(rows.iter().enumerate().all(|(k, &n)| n == 10 * k as u64));
    }

    #[test]
    fn schedule_non_integer_ratio_and_final_row() {
        // r = 2.5: k = 0, 1, 2, 3, 4 → round(0, 2.5, 5, 7.5, 10) = 0, 3, 5, 8, 10 (ties away
        // from zero), and the last step 11 is added.
        let s = OutputSchedule::new(0.2, 2.2, 0.5);
        assert_eq!(s.n_steps(), 11);
        let rows = output_steps(&s);
        assert_eq!(rows, [0, 3, 5, 8, 10, 11]);
    }

    #[test]
    fn schedule_interval_shorter_than_step_writes_every_step() {
        let s = OutputSchedule::new(1e-3, 0.01, 1e-4);
        assert_eq!(output_steps(&s).len(), 11);
    }

    #[test]
    fn schedule_rejects_bad_input_without_panicking() {
        assert_eq!(OutputSchedule::new(0.0, 1.0, 1e-3).n_steps(), 0);
        assert_eq!(OutputSchedule::new(1e-3, f64::NAN, 1e-3).n_steps(), 0);
        assert_eq!(
            output_steps(&OutputSchedule::new(1e-3, 1.0, f64::NAN)).len(),
            1001
        );
    }

    #[test]
    fn recorder_writes_selected_rows_and_statistics_of_every_step() {
        let dir = temp_dir("stats");
        let (step_s, duration_s) = (1e-3, 0.02);
        let mut rec = RunRecorder::create(
            &dir,
            info(step_s, duration_s, 5e-3),
            columns(),
            &row(0, step_s, 0),
        )
        .unwrap();
        assert_eq!(rec.n_steps(), 20);
        let mut iterations = Vec::new();
        for n in 1..=rec.n_steps() {
            let it = 2 + (n % 3) as u32;
            iterations.push(it);
            let onsets = if n == 7 { 0b10 } else { 0 };
            rec.record_step(&row(n, step_s, it), it, onsets).unwrap();
        }
        let summary = rec.finish(RunStop::Completed, 0.5).unwrap();

        let lines = read_csv(&dir);
        assert_eq!(lines[0], labels().join(","));
        let times: Vec<f64> = lines[1..]
            .iter()
            .map(|l| l.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(times, [0.0, 5e-3, 1e-2, 1.5e-2, 2e-2]);

        assert!(summary.completed);
        assert_eq!(summary.error, None);
        assert_eq!(summary.step_count, 20);
        assert_eq!(summary.output_rows, 5);
        assert_eq!(summary.simulated_time_s, 0.02);
        assert_eq!(summary.real_time_factor, Some(0.02 / 0.5));
        // The largest |drift| is at the odd step 19 (−0.019), not on an output row.
        assert_eq!(summary.peak_abs_energy_drift_j, Some(19.0 * step_s));
        // Actuator work 100 t − 50 t² grows on [0, 0.02]: its maximum is at the end.
        assert_eq!(
            summary.peak_actuator_work_j,
            Some(100.0 * 0.02 - 50.0 * 0.02 * 0.02)
        );
        assert_eq!(summary.peak_constraint_violation, Some(1e-9 * 0.02));
        let mean = iterations.iter().sum::<u32>() as f64 / iterations.len() as f64;
        assert_eq!(summary.newton_iterations_mean, Some(mean));
        assert_eq!(summary.newton_iterations_max, Some(4));
        assert_eq!(summary.cavitation_warnings, 1);
    }

    #[test]
    fn recorder_failed_run_keeps_rows_and_reports_error() {
        let dir = temp_dir("failed");
        let step_s = 1e-3;
        let mut rec = RunRecorder::create(
            &dir,
            info(step_s, 1.0, step_s),
            columns(),
            &row(0, step_s, 0),
        )
        .unwrap();
        for n in 1..=3 {
            rec.record_step(&row(n, step_s, 3), 3, 0).unwrap();
        }
        let summary = rec
            .finish(RunStop::StepFailed("Newton failed".into()), 0.0)
            .unwrap();
        assert!(!summary.completed);
        assert_eq!(summary.error.as_deref(), Some("Newton failed"));
        assert_eq!(summary.step_count, 3);
        assert_eq!(summary.real_time_factor, None);
        assert_eq!(read_csv(&dir).len(), 1 + 4);

        let json: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(dir.join(SUMMARY_FILE)).unwrap()).unwrap();
        assert_eq!(json["completed"], false);
        assert_eq!(json["error"], "Newton failed");
        assert_eq!(json["real_time_factor"], serde_json::Value::Null);
        assert_eq!(json["status"], "failed");
        for file in ["joint_coordinates.svg", "pressures.svg", "energy.svg"] {
            let svg = fs::read_to_string(dir.join(PLOTS_DIR).join(file)).unwrap();
            assert!(svg.contains("<svg"), "{file}");
        }
    }

    #[test]
    fn recorder_with_only_the_initial_row() {
        let dir = temp_dir("initial-only");
        let rec =
            RunRecorder::create(&dir, info(1e-3, 0.0, 1e-3), columns(), &row(0, 1e-3, 0)).unwrap();
        assert_eq!(rec.n_steps(), 0);
        let summary = rec.finish(RunStop::Completed, 0.0).unwrap();
        assert!(summary.completed);
        assert_eq!(summary.newton_iterations_mean, None);
        assert_eq!(summary.newton_iterations_max, None);
        assert_eq!(read_csv(&dir).len(), 2);
    }

    #[test]
    fn cavitation_warnings_name_the_volumes() {
        let dir = temp_dir("cavitation");
        let rec =
            RunRecorder::create(&dir, info(1e-3, 1.0, 1e-3), columns(), &row(0, 1e-3, 0)).unwrap();
        let warnings: Vec<String> = rec.cavitation_warnings(1.2344, 0b11 | 1 << 5).collect();
        assert_eq!(
            warnings,
            [
                "volume 'V1' pressure below 0 Pa (absolute) at t = 1.234 s",
                "volume 'V2' pressure below 0 Pa (absolute) at t = 1.234 s",
                "volume '?' pressure below 0 Pa (absolute) at t = 1.234 s",
            ]
        );
    }

    fn read_summary(dir: &Path) -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(dir.join(SUMMARY_FILE)).unwrap()).unwrap()
    }

    #[test]
    fn summary_says_running_from_the_start_and_interrupted_at_a_stop() {
        let dir = temp_dir("running");
        let step_s = 1e-3;
        let mut rec = RunRecorder::create(
            &dir,
            info(step_s, 1.0, step_s),
            columns(),
            &row(0, step_s, 0),
        )
        .unwrap();
        let json = read_summary(&dir);
        assert_eq!(json["status"], "running");
        assert_eq!(json["completed"], false);
        // the column table is there from the start
        let table: Vec<ColumnInfo> =
            serde_json::from_str(&fs::read_to_string(dir.join(COLUMNS_FILE)).unwrap()).unwrap();
        assert_eq!(table, columns());
        for n in 1..=5 {
            rec.record_step(&row(n, step_s, 2), 2, 0).unwrap();
        }
        let summary = rec.finish(RunStop::Interrupted, 0.1).unwrap();
        assert_eq!(summary.status, RunStatus::Interrupted);
        let json = read_summary(&dir);
        assert_eq!(json["status"], "interrupted");
        assert_eq!(json["completed"], false);
        assert!(json["error"].as_str().unwrap().contains("interrupted"));
        assert_eq!(json["step_count"], 5);
        // whole rows only: every line has every column
        let lines = read_csv(&dir);
        assert_eq!(lines.len(), 1 + 6);
        assert!(lines.iter().all(|l| l.split(',').count() == labels().len()));
        let json = RunRecorder::create(
            &dir,
            info(step_s, 1.0, step_s),
            columns(),
            &row(0, step_s, 0),
        )
        .unwrap()
        .finish(RunStop::OutputFailed("disk full".into()), 0.0)
        .unwrap();
        assert_eq!(json.status, RunStatus::OutputError);
        assert_eq!(read_summary(&dir)["status"], "output_error");
        assert_eq!(read_summary(&dir)["error"], "disk full");
    }

    /// 2 million steps: the recorder's memory does not grow with the rows, and every figure
    /// stays below 300 KB.
    #[test]
    fn memory_is_bounded_and_figures_small_on_a_long_run() {
        let dir = temp_dir("long");
        let (step_s, duration_s) = (1e-3, 2000.0);
        let mut rec = RunRecorder::create(
            &dir,
            info(step_s, duration_s, 1.0),
            columns(),
            &row(0, step_s, 0),
        )
        .unwrap();
        let mut r = row(0, step_s, 0);
        let mut sizes = Vec::new();
        for n in 1..=rec.n_steps() {
            let t = n as f64 * step_s;
            // a fast oscillation: every bucket has a distinct min and max
            r[0] = t;
            r[1] = (t * 40.0).sin();
            r[3] = 1e6 * (1.0 + (t * 33.0).cos());
            r[11] = 1e-3 * (t * 50.0).sin();
            rec.record_step(&r, 3, 0).unwrap();
            if n % 500_000 == 0 {
                sizes.push(rec.retained_bytes());
            }
        }
        assert!(sizes.windows(2).all(|w| w[0] == w[1]), "{sizes:?}");
        assert!(sizes[0] < 4 << 20, "{} bytes", sizes[0]);
        let summary = rec.finish(RunStop::Completed, 1.0).unwrap();
        assert!(summary.completed);
        assert_eq!(summary.output_rows, 2001);
        for file in PLOT_FILES {
            let path = dir.join(PLOTS_DIR).join(file);
            if let Ok(meta) = fs::metadata(&path) {
                assert!(meta.len() <= 300_000, "{file}: {} bytes", meta.len());
            }
        }
        let energy = fs::read_to_string(dir.join(PLOTS_DIR).join("energy.svg")).unwrap();
        assert!(energy.contains("drift [J]") && energy.contains("energy.drift"));
        let joints = fs::read_to_string(dir.join(PLOTS_DIR).join("joint_coordinates.svg")).unwrap();
        assert!(joints.contains("angle [deg]") && joints.contains("z1.q"));
        assert!(!joints.contains("position [m]"), "no empty panel");
    }

    #[test]
    fn output_interval_is_snapped_to_whole_steps() {
        assert_eq!(snap_output_interval(1e-3, 1e-3), (1e-3, false));
        let (snapped, changed) = snap_output_interval(1e-3, 2.6e-3);
        assert!(changed);
        assert!((snapped - 3e-3).abs() < 1e-15);
        // 0.01 / 0.001 is 10 up to rounding: not reported
        assert!(!snap_output_interval(1e-3, 0.01).1);
        // below one step: one step
        assert_eq!(snap_output_interval(1e-3, 1e-4), (1e-3, true));
        // the snapped interval gives evenly spaced rows
        let (snapped, _) = snap_output_interval(0.2, 0.5);
        let s = OutputSchedule::new(0.2, 2.2, snapped);
        let rows = output_steps(&s);
        assert!((snapped - 0.6).abs() < 1e-15);
        assert_eq!(rows, [0, 3, 6, 9, 11]);
    }
}
