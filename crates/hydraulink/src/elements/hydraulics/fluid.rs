//! Effective bulk modulus of a compound volume (000 eq. 23):
//!
//! ```text
//! 1/B_e = 1/B_oil + Σ_s V_s / (V B_s)
//! ```
//! over the sub-volumes V_s (hose, cylinder chamber) of V = Σ V_s, each with wall modulus B_s.

use crate::solver::real::Real;

/// B_e from the oil modulus, the total volume `v` [m³] and Σ V_s/B_s [m³/Pa].
#[inline]
pub fn effective_bulk_modulus<S: Real>(oil_bulk_pa: f64, v: S, wall_compliance: S) -> S {
    (S::from(1.0 / oil_bulk_pa) + wall_compliance / v).recip()
}
