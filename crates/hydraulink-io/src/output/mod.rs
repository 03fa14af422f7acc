//! Result writers: the files a run leaves in its output directory.
//!
//! ```text
//! DIR/results.csv     one row per output step; the columns are the simulation's output labels
//!                     (`time` first), every value in SI units at full precision        (csv.rs)
//! DIR/summary.json    settings, peaks over every step, Newton statistics, timing, outcome
//!                                                                                    (summary.rs)
//! DIR/plots/*.svg     joint coordinates, pressures, energy, constraint violation, Newton
//!                     iterations, cylinders; drawn from the output rows            (plots.rs)
//! ```
//!
//! A [`RunRecorder`] is created with the output labels and the initial row (t = 0), receives one
//! row per step, writes the rows chosen by the [`OutputSchedule`] to `results.csv` as they arrive,
//! and in [`RunRecorder::finish`] writes `summary.json` and the figures. Nothing here runs the
//! simulation: the recorder only sees labels and numbers, so it is tested with synthetic rows.

mod compare;
mod csv;
mod friction_curve;
pub mod linear;
mod plots;
mod summary;

use std::fs;
use std::path::{Path, PathBuf};

pub use compare::{compare_csv, compare_markdown, write_compare_tables, CompareRow};
pub use csv::CsvWriter;
pub use friction_curve::write_friction_curve;
pub use plots::{write_overlay, write_plots, OverlayLine, PLOT_FILES};
pub use summary::{RunStatistics, Summary};

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

/// Which steps become output rows.
///
/// Step n (time n Δt, n = 0 … N with N = round(duration / Δt)) is written when n = round(k r) for
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
        let steps = (duration_s / step_s).round();
        let n_steps = if steps.is_finite() && steps > 0.0 {
            steps as u64
        } else {
            0
        };
        let ratio = output_interval_s / step_s;
        let ratio = if ratio.is_finite() && ratio > 1.0 {
            ratio
        } else {
            1.0
        };
        OutputSchedule { ratio, n_steps }
    }

    /// Number of steps in the run, N = round(duration / Δt).
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

/// Records a run: writes `results.csv` row by row, keeps the statistics of every step and, at
/// the end, writes `summary.json` and `plots/*.svg`.
///
/// ```text
/// create(dir, info, labels, row at t = 0)       header + initial row written
/// record_step(row, iterations, onsets)  × N     statistics of every step; output rows written
/// finish(error, wall_clock_s)                   flush CSV, write summary.json and plots
/// ```
#[derive(Debug)]
pub struct RunRecorder {
    /// Output directory.
    dir: PathBuf,
    /// Run settings.
    info: RunInfo,
    /// Column labels, `time` first.
    labels: Vec<String>,
    /// Which steps are written.
    schedule: OutputSchedule,
    /// `results.csv`, written as rows arrive.
    csv: CsvWriter,
    /// Statistics over every step.
    stats: RunStatistics,
    /// The output rows, row-major (`labels.len()` values each), kept for the figures.
    rows: Vec<f64>,
    /// Steps recorded after the initial row.
    n_recorded: u64,
    /// Time of the last recorded row \[s\].
    last_time_s: f64,
}

impl RunRecorder {
    /// Creates `dir` (and `dir/plots`), writes the CSV header and the initial row (t = 0).
    ///
    /// `labels` are the output labels (`time` first); `initial_row` has one value per label.
    pub fn create(
        dir: &Path,
        info: RunInfo,
        labels: Vec<String>,
        initial_row: &[f64],
    ) -> Result<Self, OutputError> {
        let plots_dir = dir.join(PLOTS_DIR);
        fs::create_dir_all(&plots_dir).map_err(|e| OutputError::io(&plots_dir, e))?;
        let csv = CsvWriter::create(&dir.join(RESULTS_FILE), &labels)?;
        let schedule = OutputSchedule::new(info.step_s, info.duration_s, info.output_interval_s);
        let mut recorder = RunRecorder {
            dir: dir.to_path_buf(),
            stats: RunStatistics::new(&labels),
            info,
            labels,
            schedule,
            csv,
            rows: Vec::new(),
            n_recorded: 0,
            last_time_s: 0.0,
        };
        recorder.record(initial_row, true)?;
        Ok(recorder)
    }

    /// Number of steps to run, N = round(duration / Δt).
    pub fn n_steps(&self) -> u64 {
        self.schedule.n_steps()
    }

    /// Number of steps recorded so far (the initial row not counted).
    pub fn n_recorded(&self) -> u64 {
        self.n_recorded
    }

    /// The output directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Records the row after a converged step: updates the statistics with it, and writes it if
    /// the schedule selects this step. `iterations` are the step's Newton iterations;
    /// `cavitation_onsets` has bit i set when volume i fell below 0 Pa (absolute) in the step.
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

    /// Ends the run: flushes `results.csv`, writes `summary.json` and the figures, and returns
    /// the summary. `error` is the message of the step that failed (`None` for a complete run);
    /// `wall_clock_s` \[s\] is the time the run took. Every file is attempted even if an earlier
    /// one fails; the first failure is returned.
    pub fn finish(
        mut self,
        error: Option<String>,
        wall_clock_s: f64,
    ) -> Result<Summary, OutputError> {
        let csv = self.csv.flush();
        let summary = self.summary(error, wall_clock_s);
        let json = summary.write(&self.dir.join(SUMMARY_FILE));
        let plots = write_plots(&self.dir.join(PLOTS_DIR), &self.labels, &self.rows);
        csv.and(json).and(plots)?;
        Ok(summary)
    }

    /// The summary of the run so far.
    pub fn summary(&self, error: Option<String>, wall_clock_s: f64) -> Summary {
        let simulated_time_s = self.last_time_s;
        let real_time_factor =
            (wall_clock_s > 0.0 && self.n_recorded > 0).then(|| simulated_time_s / wall_clock_s);
        Summary {
            model: self.info.model.clone(),
            formulation: self.info.formulation.clone(),
            step_s: self.info.step_s,
            duration_s: self.info.duration_s,
            output_interval_s: self.info.output_interval_s,
            completed: error.is_none() && self.n_recorded >= self.n_steps(),
            error,
            step_count: self.n_recorded,
            output_rows: (self.rows.len() / self.labels.len().max(1)) as u64,
            simulated_time_s,
            wall_clock_s,
            real_time_factor,
            peak_abs_energy_drift_j: self.stats.peak_abs_energy_drift_j,
            peak_actuator_work_j: self.stats.peak_actuator_work_j,
            peak_constraint_violation: self.stats.peak_constraint_violation,
            newton_iterations_mean: self.stats.newton_iterations_mean(),
            newton_iterations_max: self.stats.newton_iterations_max(),
            cavitation_warnings: self.stats.cavitation_warnings,
        }
    }

    /// Observes a row for the statistics and, if `write`, writes and keeps it.
    fn record(&mut self, row: &[f64], write: bool) -> Result<(), OutputError> {
        assert_eq!(
            row.len(),
            self.labels.len(),
            "an output row has one value per output label"
        );
        self.stats.observe_row(row);
        self.last_time_s = row.first().copied().unwrap_or(f64::NAN);
        if write {
            self.csv.write_row(row)?;
            self.rows.extend_from_slice(row);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            labels(),
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
        let summary = rec.finish(None, 0.5).unwrap();

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
            labels(),
            &row(0, step_s, 0),
        )
        .unwrap();
        for n in 1..=3 {
            rec.record_step(&row(n, step_s, 3), 3, 0).unwrap();
        }
        let summary = rec.finish(Some("Newton failed".into()), 0.0).unwrap();
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
        for file in PLOT_FILES {
            let svg = fs::read_to_string(dir.join(PLOTS_DIR).join(file)).unwrap();
            assert!(svg.contains("<svg"), "{file}");
        }
    }

    #[test]
    fn recorder_with_only_the_initial_row() {
        let dir = temp_dir("initial-only");
        let rec =
            RunRecorder::create(&dir, info(1e-3, 0.0, 1e-3), labels(), &row(0, 1e-3, 0)).unwrap();
        assert_eq!(rec.n_steps(), 0);
        let summary = rec.finish(None, 0.0).unwrap();
        assert!(summary.completed);
        assert_eq!(summary.newton_iterations_mean, None);
        assert_eq!(summary.newton_iterations_max, None);
        assert_eq!(read_csv(&dir).len(), 2);
    }

    #[test]
    fn cavitation_warnings_name_the_volumes() {
        let dir = temp_dir("cavitation");
        let rec =
            RunRecorder::create(&dir, info(1e-3, 1.0, 1e-3), labels(), &row(0, 1e-3, 0)).unwrap();
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
}
