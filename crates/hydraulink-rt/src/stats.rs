//! Run statistics: per-step compute time (mean, worst with its step, percentiles from a
//! fixed-size histogram), overruns, lag, slip and the real-time factor. Recording a step
//! allocates nothing.

use serde::Serialize;
use std::time::Duration;

use crate::engine::Policy;

/// Number of histogram bins.
const N_BINS: usize = 256;
/// Upper edge of bin 0 [ns]; bin i > 0 holds times in (E₀ gⁱ⁻¹, E₀ gⁱ].
const FIRST_EDGE_NS: f64 = 100.0;
/// Ratio g of consecutive bin edges: a percentile is known to within 10 %.
const GROWTH: f64 = 1.1;

/// A histogram of compute times with logarithmic bins from 100 ns to 100 ns · 1.1²⁵⁵ (about
/// 3.5 · 10³ s), fixed size.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: [u64; N_BINS],
    total: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: [0; N_BINS],
            total: 0,
        }
    }
}

impl Histogram {
    /// The bin of a time [ns].
    fn bin(ns: f64) -> usize {
        if ns <= FIRST_EDGE_NS {
            return 0;
        }
        // smallest i with E₀ gⁱ ≥ ns
        let i = ((ns / FIRST_EDGE_NS).ln() / GROWTH.ln()).ceil();
        (i as usize).min(N_BINS - 1)
    }

    /// Upper edge of bin `i` [s].
    fn edge_s(i: usize) -> f64 {
        FIRST_EDGE_NS * GROWTH.powi(i as i32) * 1e-9
    }

    /// Counts one time.
    pub fn record(&mut self, t: Duration) {
        self.counts[Self::bin(t.as_nanos() as f64)] += 1;
        self.total += 1;
    }

    /// Number of times counted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The `q`-quantile (0 < q ≤ 1) [s], as the upper edge of the bin that holds it (at most
    /// 10 % above the true value); 0 with nothing counted.
    pub fn quantile_s(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::edge_s(i);
            }
        }
        Self::edge_s(N_BINS - 1)
    }
}

/// What a run has measured so far: written into every snapshot, returned at the end, and
/// printed (and saved as JSON) by `hydraulink realtime`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Statistics {
    /// The overrun policy of the run.
    pub policy: Policy,
    /// Physics step Δt [s].
    pub step_s: f64,
    /// Physics steps run (none is ever skipped).
    pub steps: u64,
    /// Simulated time the engine advanced, steps × Δt [s] (resets do not rewind it).
    pub simulated_s: f64,
    /// Wall time from the first step's release to the last step's end, without pauses [s].
    pub wall_s: f64,
    /// Real-time factor: simulated time / wall time [-] (1 when paced on schedule; 0 before
    /// any wall time has passed).
    pub real_time_factor: f64,
    /// Mean compute time of a step [s].
    pub compute_mean_s: f64,
    /// Worst compute time of a step [s].
    pub compute_max_s: f64,
    /// The step (engine count, from 0) with the worst compute time.
    pub compute_max_step: u64,
    /// Median compute time [s] (histogram bin edge, within 10 %).
    pub compute_p50_s: f64,
    /// 90th percentile of the compute time [s].
    pub compute_p90_s: f64,
    /// 99th percentile of the compute time [s].
    pub compute_p99_s: f64,
    /// 99.9th percentile of the compute time [s].
    pub compute_p999_s: f64,
    /// Steps that ended after their deadline (release + Δt).
    pub overruns: u64,
    /// Lag of the last step: its end minus its deadline [s] (negative: ahead of schedule).
    pub lag_s: f64,
    /// Largest lag of any step [s].
    pub max_lag_s: f64,
    /// Largest delay between a step's release and its start after the engine slept for it
    /// [s]: the operating system's wake-up latency, which makes steps late however fast they
    /// compute (0 under the manual clock).
    pub max_wake_delay_s: f64,
    /// Total shift of the schedule under [`Policy::SlowDown`]: how far simulated time has fallen
    /// behind wall time [s] (0 under [`Policy::CatchUp`]).
    pub slip_s: f64,
    /// Wall time spent paused [s].
    pub paused_s: f64,
    /// Snapshots sent to the consumer.
    pub snapshots_sent: u64,
    /// Snapshots dropped because the consumer was slow (its channel full).
    pub snapshots_dropped: u64,
    /// Commands applied.
    pub commands_applied: u64,
    /// Commands refused (an unknown input or key, a non-finite value, an input command during
    /// a replay).
    pub commands_rejected: u64,
    /// Input changes applied and recorded (set, release, reset).
    pub input_events: u64,
    /// The engine thread's scheduling priority (`crate::priority`).
    pub scheduling: crate::priority::Scheduling,
    /// The engine step at which a real-time priority was given up because the engine could not
    /// keep up (`crate::priority::demote`); none: never.
    pub demoted_at_step: Option<u64>,
}

impl Statistics {
    /// The engine thread's priority in words: what it has, and when a real-time priority was
    /// given up (written where it is formatted: a frame allocates nothing for it).
    pub fn priority(&self) -> Priority {
        Priority(self.scheduling, self.demoted_at_step)
    }
}

/// [`Statistics::priority`], for `format!` and `write!`.
#[derive(Debug, Clone, Copy)]
pub struct Priority(crate::priority::Scheduling, Option<u64>);

impl std::fmt::Display for Priority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name())?;
        match self.1 {
            Some(k) => write!(
                f,
                " (real-time given up at step {k}: the engine could not keep up)"
            ),
            None => Ok(()),
        }
    }
}

/// The running measurements behind [`Statistics`] (fixed size).
#[derive(Debug, Clone)]
pub(crate) struct Tracker {
    pub stats: Statistics,
    histogram: Histogram,
    compute_total: Duration,
}

impl Tracker {
    pub fn new(policy: Policy, step_s: f64) -> Self {
        Tracker {
            stats: Statistics {
                policy,
                step_s,
                steps: 0,
                simulated_s: 0.0,
                wall_s: 0.0,
                real_time_factor: 0.0,
                compute_mean_s: 0.0,
                compute_max_s: 0.0,
                compute_max_step: 0,
                compute_p50_s: 0.0,
                compute_p90_s: 0.0,
                compute_p99_s: 0.0,
                compute_p999_s: 0.0,
                overruns: 0,
                lag_s: 0.0,
                max_lag_s: f64::NEG_INFINITY,
                max_wake_delay_s: 0.0,
                slip_s: 0.0,
                paused_s: 0.0,
                snapshots_sent: 0,
                snapshots_dropped: 0,
                commands_applied: 0,
                commands_rejected: 0,
                input_events: 0,
                scheduling: crate::priority::Scheduling::Normal,
                demoted_at_step: None,
            },
            histogram: Histogram::default(),
            compute_total: Duration::ZERO,
        }
    }

    /// One step `step` took `compute`, ended `lag` after its deadline (`late`: positive).
    pub fn step(&mut self, step: u64, compute: Duration, lag_s: f64, overran: bool) {
        let s = &mut self.stats;
        self.histogram.record(compute);
        self.compute_total += compute;
        let c = compute.as_secs_f64();
        if s.steps == 0 || c > s.compute_max_s {
            s.compute_max_s = c;
            s.compute_max_step = step;
        }
        s.steps += 1;
        s.simulated_s = s.steps as f64 * s.step_s;
        s.lag_s = lag_s;
        s.max_lag_s = s.max_lag_s.max(lag_s);
        if overran {
            s.overruns += 1;
        }
    }

    /// The statistics with the derived figures (mean, percentiles, real-time factor) brought up
    /// to date; `wall` is the unpaused wall time so far.
    pub fn summary(&mut self, wall: Duration) -> Statistics {
        let s = &mut self.stats;
        if s.steps > 0 {
            s.compute_mean_s = self.compute_total.as_secs_f64() / s.steps as f64;
        }
        s.compute_p50_s = self.histogram.quantile_s(0.5);
        s.compute_p90_s = self.histogram.quantile_s(0.9);
        s.compute_p99_s = self.histogram.quantile_s(0.99);
        s.compute_p999_s = self.histogram.quantile_s(0.999);
        s.wall_s = wall.as_secs_f64();
        s.real_time_factor = if s.wall_s > 0.0 {
            s.simulated_s / s.wall_s
        } else {
            0.0
        };
        let mut out = *s;
        if out.steps == 0 {
            out.max_lag_s = 0.0;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_bracket_the_times_within_ten_percent() {
        let mut h = Histogram::default();
        // 1, 2, …, 1000 µs
        for k in 1..=1000u64 {
            h.record(Duration::from_micros(k));
        }
        for (q, exact) in [(0.5, 500e-6), (0.9, 900e-6), (0.99, 990e-6), (1.0, 1000e-6)] {
            let v = h.quantile_s(q);
            assert!(v >= exact && v <= exact * GROWTH, "q {q}: {v} vs {exact}");
        }
        assert_eq!(h.count(), 1000);
        assert_eq!(Histogram::default().quantile_s(0.5), 0.0);
    }
}
