//! Viscous friction F_μ = c ṡ, and the efficiency law F_μ = (1 − η)|F_h| tanh(ṡ/v_s) of the core
//! (000 §5, note 000-E item 5). Static laws without internal state.

use crate::solver::real::Real;

/// F_μ = c v [N].
#[inline]
pub fn viscous<S: Real>(c: f64, v: S) -> S {
    v * c
}

/// F_μ = (1 − η)|F_h| tanh(v / v_s) [N]: a fraction 1 − η of the hydraulic force F_h opposes
/// the motion.
#[inline]
pub fn efficiency<S: Real>(eta: f64, vs: f64, f_hyd: S, v: S) -> S {
    f_hyd.abs() * (1.0 - eta) * super::tanh(v / vs)
}
