//! Brown–McPhee seal friction (003 Pub II eq. 24; 003a A.7).
//!
//! ```text
//!  F_μ = F_c tanh(4|v|/v_s) sgn v                                   Coulomb, smoothed
//!      + (F_s − F_c) (|v|/v_s) / (¼ (|v|/v_s)² + ¾)² sgn v          stiction hump, peak at v_s
//!      + σ2 v tanh(4)                                               viscous (tanh 4 literal, E.3)
//! ```
//! Static and smooth (C∞): no branch, no internal state. F_μ is positive along v.

use crate::solver::real::Real;

/// Parameters of the Brown–McPhee law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BrownMcPhee {
    /// Coulomb force F_c [N].
    pub coulomb_n: f64,
    /// Static force F_s [N].
    pub static_n: f64,
    /// Stribeck velocity v_s [m/s].
    pub stribeck_velocity_m_s: f64,
    /// Viscous coefficient σ2 [N s/m].
    pub viscous_n_s_m: f64,
}

/// F_μ(v) [N] (003 Pub II eq. 24). Both sgn-terms are odd functions of v, written without sgn.
pub fn force<S: Real>(p: &BrownMcPhee, v: S) -> S {
    let x = v / p.stribeck_velocity_m_s;
    let den = x * x * 0.25 + 0.75;
    super::tanh(x * 4.0) * p.coulomb_n
        + x / (den * den) * (p.static_n - p.coulomb_n)
        + v * (p.viscous_n_s_m * 4f64.tanh())
}
