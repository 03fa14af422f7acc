//! Input signals (000 eqs. 46–47): piecewise constant, piecewise-linear table, step, sine.
//! All are right-continuous: a switch at t_s takes effect on [t_s, …).

use crate::model::spec::SignalSpec;

/// A compiled input signal.
#[derive(Debug, Clone, PartialEq)]
pub enum Signal {
    /// Constant.
    Constant(f64),
    /// `values[i]` on `[times[i], times[i+1])`, `values[0]` before `times[0]`.
    PiecewiseConstant {
        /// Switch times [s].
        times: Vec<f64>,
        /// Values.
        values: Vec<f64>,
    },
    /// Linear interpolation, held outside.
    Table {
        /// Sample times [s].
        times: Vec<f64>,
        /// Values.
        values: Vec<f64>,
    },
    /// Step at `time_s`.
    Step {
        /// Switch time [s].
        time_s: f64,
        /// Before.
        before: f64,
        /// From `time_s` on.
        after: f64,
    },
    /// offset + amplitude · sin(2π f t + phase).
    Sine {
        /// Amplitude.
        amplitude: f64,
        /// Frequency [Hz].
        frequency_hz: f64,
        /// Phase [rad].
        phase_rad: f64,
        /// Offset.
        offset: f64,
    },
}

impl Signal {
    /// Compiles a validated spec.
    pub fn from_spec(s: &SignalSpec) -> Signal {
        match s {
            SignalSpec::Constant { value } => Signal::Constant(*value),
            SignalSpec::PiecewiseConstant { times, values } => Signal::PiecewiseConstant {
                times: times.clone(),
                values: values.clone(),
            },
            SignalSpec::Table { times, values } => Signal::Table {
                times: times.clone(),
                values: values.clone(),
            },
            SignalSpec::Step {
                time_s,
                before,
                after,
            } => Signal::Step {
                time_s: *time_s,
                before: *before,
                after: *after,
            },
            SignalSpec::Sine {
                amplitude,
                frequency_hz,
                phase_rad,
                offset,
            } => Signal::Sine {
                amplitude: *amplitude,
                frequency_hz: *frequency_hz,
                phase_rad: *phase_rad,
                offset: *offset,
            },
        }
    }

    /// The reference values the trapezoidal rule uses at the two ends of the step [t0, t1].
    /// Piecewise-constant signals (and steps) jump exactly on step boundaries, so they use the
    /// value valid on the interval, U_ref(t0), at both ends (interval form, note 000-A.4: second
    /// order, no half-step timing error). Continuous signals use their end-point values.
    pub fn step_values(&self, t0: f64, t1: f64) -> (f64, f64) {
        match self {
            Signal::PiecewiseConstant { .. } | Signal::Step { .. } | Signal::Constant(_) => {
                let v = self.value(t0);
                (v, v)
            }
            Signal::Table { .. } | Signal::Sine { .. } => (self.value(t0), self.value(t1)),
        }
    }

    /// Value at time `t` [s].
    pub fn value(&self, t: f64) -> f64 {
        match self {
            Signal::Constant(v) => *v,
            Signal::PiecewiseConstant { times, values } => {
                // Index of the last switch time ≤ t (right-continuous).
                let i = times.partition_point(|&ti| ti <= t);
                values[i.saturating_sub(1)]
            }
            Signal::Table { times, values } => {
                let n = times.len();
                if t <= times[0] {
                    return values[0];
                }
                if t >= times[n - 1] {
                    return values[n - 1];
                }
                let i = times.partition_point(|&ti| ti <= t); // times[i-1] <= t < times[i]
                let (t0, t1) = (times[i - 1], times[i]);
                let w = (t - t0) / (t1 - t0);
                values[i - 1] + w * (values[i] - values[i - 1])
            }
            Signal::Step {
                time_s,
                before,
                after,
            } => {
                if t >= *time_s {
                    *after
                } else {
                    *before
                }
            }
            Signal::Sine {
                amplitude,
                frequency_hz,
                phase_rad,
                offset,
            } => {
                offset
                    + amplitude * (2.0 * std::f64::consts::PI * frequency_hz * t + phase_rad).sin()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piecewise_constant_is_right_continuous() {
        let s = Signal::PiecewiseConstant {
            times: vec![0.0, 1.0, 2.5],
            values: vec![0.0, 10.0, 0.0],
        };
        assert_eq!(s.value(-1.0), 0.0);
        assert_eq!(s.value(0.999), 0.0);
        assert_eq!(s.value(1.0), 10.0);
        assert_eq!(s.value(2.4999), 10.0);
        assert_eq!(s.value(2.5), 0.0);
    }

    #[test]
    fn table_interpolates_and_holds() {
        let s = Signal::Table {
            times: vec![0.0, 2.0],
            values: vec![1.0, 3.0],
        };
        assert_eq!(s.value(-1.0), 1.0);
        assert!((s.value(0.5) - 1.5).abs() < 1e-15);
        assert_eq!(s.value(5.0), 3.0);
    }
}
