//! Input bindings for front-ends: a joystick axis or a pair of keys drives a named model input
//! through a deadband, a scale to the input's range and a rate limit, applied by the engine at
//! step boundaries.
//!
//! ```text
//!  axis a ∈ [−1, 1]  ──deadband d──▶  s  ──scale to [lo, hi]──▶  target  ──rate limit r──▶  u
//!  keys (+, −): a = +1, −1, or 0 (none or both held)
//!
//!  s = 0                         |a| ≤ d
//!  s = sign(a) (|a| − d)/(1 − d)   |a| > d     (continuous at |a| = d, s = ±1 at a = ±1)
//!  target = c + s (hi − c)  for s ≥ 0,   c + s (c − lo)  for s < 0,
//!           c = 0 when lo ≤ 0 ≤ hi (the rest position of a valve), else (lo + hi)/2
//!  u_{k+1} = u_k + clamp(target − u_k, −r Δt, r Δt)      (no limit: u_{k+1} = target)
//! ```
//!
//! In a model or binding file (TOML), one binding per table:
//!
//! ```toml
//! [[bindings]]
//! input = "U_boom"
//! source = { axis = "right_y" }
//! range = [-10.0, 10.0]
//! deadband = 0.1
//! rate_limit_per_s = 50.0
//!
//! [[bindings]]
//! input = "U_swing"
//! source = { keys = { positive = "d", negative = "a" } }
//! range = [-10.0, 10.0]
//! ```

use serde::{Deserialize, Serialize};

use crate::engine::EngineError;

/// What drives a binding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum BindingSource {
    /// A named axis (a gamepad stick), value in [−1, 1].
    Axis(String),
    /// Two named keys: `positive` held gives +1, `negative` held −1, neither or both 0.
    Keys {
        /// Key that drives the input towards the top of its range.
        positive: String,
        /// Key that drives the input towards the bottom of its range.
        negative: String,
    },
}

/// One binding of an axis or key pair to a named model input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputBinding {
    /// The model input it drives (`[[inputs]]` name).
    pub input: String,
    /// The axis or key pair.
    pub source: BindingSource,
    /// The input's range [lo, hi] [unit of the input]: full deflection maps to its ends.
    pub range: [f64; 2],
    /// Deadband d of the axis [-], 0 ≤ d < 1: |a| ≤ d is rest.
    #[serde(default)]
    pub deadband: f64,
    /// Largest rate of change r of the input [unit of the input per s]; none: no limit.
    #[serde(default)]
    pub rate_limit_per_s: Option<f64>,
}

/// The deadband: axis value `a` (clamped to [−1, 1]) → s ∈ [−1, 1], 0 inside ±`deadband`,
/// rescaled so that s is continuous at the band's edge and reaches ±1 at full deflection.
pub fn deadband(a: f64, deadband: f64) -> f64 {
    let a = a.clamp(-1.0, 1.0);
    if a.abs() <= deadband {
        0.0
    } else {
        a.signum() * (a.abs() - deadband) / (1.0 - deadband)
    }
}

/// The scale: s ∈ [−1, 1] → the input's range [lo, hi]; rest (s = 0) is 0 when the range holds
/// 0, else its middle.
pub fn scale(s: f64, [lo, hi]: [f64; 2]) -> f64 {
    let c = if lo <= 0.0 && 0.0 <= hi {
        0.0
    } else {
        0.5 * (lo + hi)
    };
    if s >= 0.0 {
        c + s * (hi - c)
    } else {
        c + s * (c - lo)
    }
}

/// The rate limit: from `current` towards `target` by at most `max_change` (≥ 0).
pub fn rate_limit(current: f64, target: f64, max_change: f64) -> f64 {
    current + (target - current).clamp(-max_change, max_change)
}

impl InputBinding {
    /// Checks the numbers; errors name `bindings[i].<field>`.
    pub fn check(&self, i: usize) -> Result<(), EngineError> {
        let bad = |field: &str, message: String| EngineError::Binding {
            field: format!("bindings[{i}].{field}"),
            message,
        };
        let [lo, hi] = self.range;
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(bad(
                "range",
                format!("must be two finite numbers lo < hi, got [{lo}, {hi}]"),
            ));
        }
        if !(0.0..1.0).contains(&self.deadband) {
            return Err(bad(
                "deadband",
                format!("must be in [0, 1), got {}", self.deadband),
            ));
        }
        if let Some(r) = self.rate_limit_per_s {
            if !(r.is_finite() && r > 0.0) {
                return Err(bad(
                    "rate_limit_per_s",
                    format!("must be a finite number > 0, got {r}"),
                ));
            }
        }
        let empty = match &self.source {
            BindingSource::Axis(a) => a.is_empty().then_some("source.axis"),
            BindingSource::Keys { positive, negative } => {
                if positive.is_empty() {
                    Some("source.keys.positive")
                } else if negative.is_empty() {
                    Some("source.keys.negative")
                } else {
                    None
                }
            }
        };
        if let Some(field) = empty {
            return Err(bad(field, "must not be empty".into()));
        }
        Ok(())
    }
}

/// A binding's live state in the engine.
#[derive(Debug, Clone)]
pub(crate) struct BindingState {
    pub binding: InputBinding,
    /// The model input's index.
    pub input: usize,
    /// The last axis value [-1, 1] (or the key pair's).
    pub axis: f64,
    pub positive_held: bool,
    pub negative_held: bool,
    /// Whether any event reached it since the start or the last reset: before that, the
    /// model's signal drives the input.
    pub active: bool,
    /// Whether a value was applied since it became active.
    pub applied: bool,
    /// The value last applied [unit of the input].
    pub value: f64,
}

impl BindingState {
    pub fn new(binding: InputBinding, input: usize) -> Self {
        BindingState {
            binding,
            input,
            axis: 0.0,
            positive_held: false,
            negative_held: false,
            active: false,
            applied: false,
            value: 0.0,
        }
    }

    /// The axis value the source gives now.
    fn deflection(&self) -> f64 {
        match self.binding.source {
            BindingSource::Axis(_) => self.axis,
            BindingSource::Keys { .. } => {
                f64::from(u8::from(self.positive_held)) - f64::from(u8::from(self.negative_held))
            }
        }
    }

    /// Whether the source is out of its rest position (outside the deadband).
    pub fn deflected(&self) -> bool {
        deadband(self.deflection(), self.binding.deadband) != 0.0
    }

    /// The value for the next step, from the value applied last, over a step of `dt` [s].
    pub fn next_value(&self, dt: f64) -> f64 {
        let b = &self.binding;
        let target = scale(deadband(self.deflection(), b.deadband), b.range);
        match b.rate_limit_per_s {
            Some(r) => rate_limit(self.value, target, r * dt),
            None => target,
        }
    }
}
