//! Inputs (000 eqs. 46–47): the model's signals, and the values a step uses.
//!
//! * [`Signal`]: a compiled input signal (piecewise constant, piecewise-linear table, step, sine,
//!   constant). All are right-continuous: a switch at t_s takes effect on [t_s, …).
//! * [`InputValues`]: the part of the [`State`](crate::State) that holds, per named input, the
//!   value set from outside (`Simulation::set_input`) and the pair (u(t_k), u(t_k+1)) sampled for
//!   the step from t_k. A model's signal is the source of an input while no value is set.
//! * [`sample`]: stage `sample inputs` of `step.rs`, which writes that pair before the
//!   formulation's step. The formulations read the pair, never the signals.

use serde::{Deserialize, Serialize};

/// Signal shapes. All right-continuous.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum SignalSpec {
    /// Constant value.
    Constant {
        /// Value.
        value: f64,
    },
    /// `values[i]` on `[times[i], times[i+1])`; `values[0]` before `times[0]` (000 eqs. 46–47).
    PiecewiseConstant {
        /// Switch times [s], strictly increasing.
        times: Vec<f64>,
        /// Values, same length.
        values: Vec<f64>,
    },
    /// Linear interpolation; held constant outside the table.
    Table {
        /// Sample times [s], strictly increasing.
        times: Vec<f64>,
        /// Values, same length.
        values: Vec<f64>,
    },
    /// `before` until `time_s`, then `after`.
    Step {
        /// Switch time [s].
        time_s: f64,
        /// Value before.
        before: f64,
        /// Value from `time_s` on.
        after: f64,
    },
    /// offset + amplitude · sin(2π f t + phase).
    Sine {
        /// Amplitude.
        amplitude: f64,
        /// Frequency [Hz].
        frequency_hz: f64,
        /// Phase [rad].
        #[serde(default)]
        phase_rad: f64,
        /// Offset.
        #[serde(default)]
        offset: f64,
    },
}

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
                // (a NaN time gives the first value, never an index below 0)
                if t <= times[0] || t.is_nan() {
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

/// The values of the model's named inputs (`Model::input_names` order), part of the `State`
/// (STYLE convention 3: inputs are data, and a cloned state replays exactly).
#[derive(Debug, Clone, PartialEq)]
pub struct InputValues {
    /// Per input, the value set from outside (`Simulation::set_input`), or `None` while the
    /// model's signal drives it [unit of the input]. An override is held over whole steps.
    pub overrides: Vec<Option<f64>>,
    /// u(t_k) of each input for the step from `State::t_s` = t_k, written by [`sample`]
    /// [unit of the input].
    pub u_start: Vec<f64>,
    /// u(t_k+1) of each input for the step from t_k, written by [`sample`] [unit of the input].
    pub u_end: Vec<f64>,
    /// The value of each input the step that ended at t_k used at its end point, u(t_k), or
    /// u(t_0) at the start: what the state's output row reports (`<input>.value`) [unit of the
    /// input]. Written by [`sample`] when it moves on to the next step.
    pub u_used: Vec<f64>,
    /// The step [t0, t1] [s] and the overrides the last [`sample`] used: a repeat with the same
    /// step and overrides (the step pipeline samples at its start what the previous step's end
    /// already sampled) returns at once.
    sampled: Option<(f64, f64)>,
    sampled_overrides: Vec<Option<f64>>,
}

impl InputValues {
    /// Values of `signals` with no override, sampled for the step [t0, t1] [s].
    pub fn new(signals: &[Signal], t0: f64, t1: f64) -> Self {
        let n = signals.len();
        let mut values = InputValues {
            overrides: vec![None; n],
            u_start: vec![0.0; n],
            u_end: vec![0.0; n],
            u_used: vec![0.0; n],
            sampled: None,
            sampled_overrides: vec![None; n],
        };
        sample(signals, t0, t1, &mut values);
        values.u_used.copy_from_slice(&values.u_start);
        values
    }

    /// Value of input `i` at time `t` [s]: its override if one is set, else its signal's value.
    pub fn value_at(&self, signals: &[Signal], i: usize, t: f64) -> f64 {
        match self.overrides[i] {
            Some(v) => v,
            None => signals[i].value(t),
        }
    }

    /// The pair (u(t0), u(t1)) of input `i` for a (sub)step [t0, t1] [s]: an override held on
    /// the whole interval, else [`Signal::step_values`]. For steps inside the step (multi-rate
    /// substeps); the step itself reads [`InputValues::step_values`].
    pub fn step_values_at(&self, signals: &[Signal], i: usize, t0: f64, t1: f64) -> (f64, f64) {
        match self.overrides[i] {
            Some(v) => (v, v),
            None => signals[i].step_values(t0, t1),
        }
    }

    /// The sampled pair (u(t_k), u(t_k+1)) of input `i` for the step from t_k.
    pub fn step_values(&self, i: usize) -> (f64, f64) {
        (self.u_start[i], self.u_end[i])
    }
}

/// Each element's input value for the evaluators, u(t_k+1) of the sampled step (the second of
/// [`InputValues::step_values`]; 1 for an element without input), from the per-element input
/// indices `element_input` (`Model::element_input`). Allocates nothing.
pub fn element_inputs(element_input: &[Option<usize>], values: &InputValues, out: &mut [f64]) {
    for (u, input) in out.iter_mut().zip(element_input.iter()) {
        *u = match input {
            Some(i) => values.u_end[*i],
            None => 1.0,
        };
    }
}

/// Stage `sample inputs`: the pair (u(t0), u(t1)) of every input for the step [t0, t1] [s], with
/// an override held on the whole step and the interval form of piecewise-constant signals
/// ([`Signal::step_values`]). Allocates nothing.
pub fn sample(signals: &[Signal], t0: f64, t1: f64, values: &mut InputValues) {
    // the same step with the same overrides: the values are already there (the signals are
    // the model's, immutable)
    if values.sampled == Some((t0, t1)) && values.sampled_overrides == values.overrides {
        return;
    }
    // moving on to the next step: keep the end-point values the step just taken used
    // (any other start time: t_k+1 = (k+1)Δt and t_k + Δt may differ in the last bit)
    if values.sampled.is_some_and(|(t0_last, _)| t0_last != t0) {
        values.u_used.copy_from_slice(&values.u_end);
    }
    for i in 0..signals.len() {
        let (u0, u1) = values.step_values_at(signals, i, t0, t1);
        values.u_start[i] = u0;
        values.u_end[i] = u1;
    }
    values.sampled = Some((t0, t1));
    values.sampled_overrides.copy_from_slice(&values.overrides);
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

    #[test]
    fn an_override_is_held_on_the_step_and_released_to_the_signal() {
        let signals = [
            Signal::Table {
                times: vec![0.0, 2.0],
                values: vec![1.0, 3.0],
            },
            Signal::Step {
                time_s: 1.0,
                before: 0.0,
                after: 5.0,
            },
        ];
        let mut v = InputValues::new(&signals, 0.5, 1.0);
        assert_eq!(v.step_values(0), (1.5, 2.0));
        // interval form: the value valid on [0.5, 1.0) at both ends
        assert_eq!(v.step_values(1), (0.0, 0.0));
        v.overrides[0] = Some(-4.0);
        sample(&signals, 0.5, 1.0, &mut v);
        assert_eq!(v.step_values(0), (-4.0, -4.0));
        assert_eq!(v.value_at(&signals, 0, 1.7), -4.0);
        assert_eq!(v.step_values(1), (0.0, 0.0));
        v.overrides[0] = None;
        sample(&signals, 1.0, 1.5, &mut v);
        assert_eq!(v.step_values(0), (2.0, 2.5));
        assert_eq!(v.step_values(1), (5.0, 5.0));
    }
}
