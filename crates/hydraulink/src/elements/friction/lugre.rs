//! LuGre seal friction with one bristle state q (003 Pub II eqs. 25–27; 003a A.7).
//!
//! ```text
//!   rod ──▶ v        bristle: spring σ0, damper σ1, deflection q [m]
//!   ─────/\/\/\──┬── seal        q̇ = v − σ0 |v| q / g(v)
//!        ─[σ1]───┘               g(v) = F_c + (F_s − F_c) e^{−(|v|/v_s)^n}        [N]
//!                                F_μ = σ0 q + σ1 q̇ + σ2 v
//! ```
//! q is a Newton unknown of the monolithic step (003 Pub II Appendix A); F_μ uses q̇ = u1(v, q)
//! evaluated at the trial point, equal to the trapezoidal q̇ at convergence (003b A.6).
//! In steady sliding q = g(v) sgn(v)/σ0 and F_μ = g(v) sgn v + σ2 v. At rest q̇ = 0 for any q:
//! the bristles carry a load up to F_s (pre-sliding).

use crate::solver::real::Real;

/// Parameters of the LuGre law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LuGre {
    /// Coulomb force F_c [N].
    pub coulomb_n: f64,
    /// Static force F_s [N].
    pub static_n: f64,
    /// Stribeck velocity v_s [m/s].
    pub stribeck_velocity_m_s: f64,
    /// Stribeck exponent n [-].
    pub stribeck_exponent: f64,
    /// Bristle stiffness σ0 [N/m].
    pub stiffness_n_m: f64,
    /// Bristle damping σ1 [N s/m].
    pub damping_n_s_m: f64,
    /// Viscous coefficient σ2 [N s/m].
    pub viscous_n_s_m: f64,
}

/// e^{−(|v|/v_s)^n}, the Stribeck decay. For n < 1 the derivative of (|v|/v_s)^n is unbounded
/// at v = 0; there the dual part is taken as its limit in every product it enters (|v| g′(v) → 0),
/// i.e. the power is evaluated as the constant 0.
pub fn stribeck_decay<S: Real>(v: S, vs: f64, n: f64) -> S {
    let x = v.abs() / vs;
    if x.re() == 0.0 {
        S::one()
    } else {
        (-x.powf(n)).exp()
    }
}

/// g(v) = F_c + (F_s − F_c) e^{−(|v|/v_s)^n} [N] (003 Pub II eq. 26).
pub fn g<S: Real>(p: &LuGre, v: S) -> S {
    stribeck_decay(v, p.stribeck_velocity_m_s, p.stribeck_exponent) * (p.static_n - p.coulomb_n)
        + p.coulomb_n
}

/// q̇ = u1(v, q) = v − σ0 |v| q / g(v) [m/s] (003 Pub II eq. 25).
pub fn bristle_rate<S: Real>(p: &LuGre, v: S, q: S) -> S {
    v - v.abs() * q * p.stiffness_n_m / g(p, v)
}

/// F_μ = σ0 q + σ1 q̇ + σ2 v [N] (003 Pub II eq. 27).
pub fn force<S: Real>(p: &LuGre, v: S, q: S) -> S {
    q * p.stiffness_n_m + bristle_rate(p, v, q) * p.damping_n_s_m + v * p.viscous_n_s_m
}

/// Steady-state bristle deflection q_ss = g(v) sgn(v) / σ0 [m] (0 at v = 0).
pub fn steady_bristle(p: &LuGre, v: f64) -> f64 {
    if v == 0.0 {
        0.0
    } else {
        g(p, v) * v.signum() / p.stiffness_n_m
    }
}

/// Steady-state friction g(v) sgn v + σ2 v [N].
pub fn steady_force(p: &LuGre, v: f64) -> f64 {
    force(p, v, steady_bristle(p, v))
}
