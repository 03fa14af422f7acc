//! Bengisu–Akay seal friction, corrected with a viscous term (003 Pub II eq. 22; 003a A.7).
//!
//! ```text
//!  F_μ │        ╭╮ F_s                     |v| < v_s:  F_μ = (F_s − (F_s/v_s²)(|v| − v_s)²) sgn v
//!      │       ╱  ╲__ F_c + σ2 v           |v| ≥ v_s:  F_μ = (F_c + (F_s − F_c) e^{−ξ(|v| − v_s)}) sgn v
//!      │      ╱      ‾‾‾‾‾‾‾‾‾─────                       + σ2 v
//!  ────┼─────╱──────────────────▶ v
//!            0   v_s
//! ```
//! Static: no internal state. The viscous term appears only in the sliding branch, as printed,
//! so the force jumps by σ2 v_s at |v| = v_s (830 → 834.125 N with Table 2; note 003b E.2).
//! F_μ is positive along v (it opposes the motion when subtracted from the hydraulic force).

use crate::solver::real::Real;

/// Parameters of the corrected Bengisu–Akay law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BengisuAkay {
    /// Coulomb force F_c [N].
    pub coulomb_n: f64,
    /// Static (breakaway) force F_s [N].
    pub static_n: f64,
    /// Stribeck velocity v_s [m/s]: the branch switch and the peak.
    pub stribeck_velocity_m_s: f64,
    /// Curve-shape parameter ξ [s/m] of the exponential decay.
    pub shape_s_m: f64,
    /// Viscous coefficient σ2 [N s/m].
    pub viscous_n_s_m: f64,
}

/// F_μ(v) [N] (003 Pub II eq. 22). The branch is decided on the real part of v.
pub fn force<S: Real>(p: &BengisuAkay, v: S) -> S {
    let vs = p.stribeck_velocity_m_s;
    let a = v.re().abs();
    if a < vs {
        // (F_s − (F_s/v_s²)(|v| − v_s)²) sgn v = F_s v (2/v_s − |v|/v_s²): the same polynomial
        // written without sgn, so the dual part is exact at v = 0 as well
        v * (S::from(2.0 / vs) - v.abs() / (vs * vs)) * p.static_n
    } else {
        let sgn = v.re().signum();
        ((v.abs() - vs) * (-p.shape_s_m)).exp() * ((p.static_n - p.coulomb_n) * sgn)
            + p.coulomb_n * sgn
            + v * p.viscous_n_s_m
    }
}
