//! Modified LuGre seal friction (Yanada–Sekikawa): a bristle state q and a lubricant-film
//! state h (003 Pub II eqs. 28–34; 003a A.7).
//!
//! ```text
//!  q̇ = v − σ0 |v| q / g(v, h)            g(v, h) = F_c + ((1 − |h|) F_s − F_c) e^{−(|v|/v_s)^n}
//!  ḣ = (h_ss(v) − h) / τ_h               h_ss = K_f |v|^{2/3} (|v| ≤ v_b),  K_f v_b^{2/3} above
//!  F_μ = σ0 q + σ1 q̇ + σ2 v              K_f = (1 − F_c/F_s) v_b^{−2/3}
//!
//!  τ_h = τ_hp  (|v| > v_0, |h| ≤ h_ss: film building, acceleration)
//!        τ_hn  (|v| > v_0, |h| > h_ss: film thinning, deceleration)
//!        τ_h0  (|v| ≤ v_0: dwell)
//! ```
//! The regimes are chosen on real parts. ḣ is continuous across the τ_hp/τ_hn switch (it is
//! zero there). "|v| = 0" of the paper is the band |v| ≤ v_0 (note 003b E.4). Below v_0 the
//! film law |v|^{2/3}, whose slope is unbounded at 0, is replaced by its chord
//! K_f v_0^{2/3} |v|/v_0, so the exact tangent stays finite; the residual uses the same law.

use crate::elements::friction::lugre::stribeck_decay;
use crate::solver::real::Real;

/// Parameters of the modified LuGre law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModifiedLuGre {
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
    /// Threshold velocity v_b [m/s] above which the film saturates.
    pub threshold_velocity_m_s: f64,
    /// Film time constant while it builds up (acceleration), τ_hp [s].
    pub tau_accel_s: f64,
    /// Film time constant while it thins (deceleration), τ_hn [s].
    pub tau_decel_s: f64,
    /// Film time constant at rest (dwell), τ_h0 [s].
    pub tau_dwell_s: f64,
    /// Dwell band v_0 [m/s]: |v| ≤ v_0 counts as rest.
    pub dwell_velocity_m_s: f64,
}

impl ModifiedLuGre {
    /// K_f = (1 − F_c/F_s) v_b^{−2/3} [(s/m)^{2/3}] (003 Pub II eq. 33).
    pub fn film_gain(&self) -> f64 {
        (1.0 - self.coulomb_n / self.static_n) * self.threshold_velocity_m_s.powf(-2.0 / 3.0)
    }
}

/// Steady-state film h_ss(v) [-] (003 Pub II eqs. 31–32).
pub fn film_steady<S: Real>(p: &ModifiedLuGre, v: S) -> S {
    let kf = p.film_gain();
    let a = v.abs();
    let (v0, vb) = (p.dwell_velocity_m_s, p.threshold_velocity_m_s);
    if a.re() > vb {
        S::from(kf * vb.powf(2.0 / 3.0))
    } else if a.re() > v0 {
        a.powf(2.0 / 3.0) * kf
    } else {
        a * (kf * v0.powf(-1.0 / 3.0))
    }
}

/// g(v, h) = F_c + ((1 − |h|) F_s − F_c) e^{−(|v|/v_s)^n} [N] (003 Pub II eq. 29).
pub fn g<S: Real>(p: &ModifiedLuGre, v: S, h: S) -> S {
    stribeck_decay(v, p.stribeck_velocity_m_s, p.stribeck_exponent)
        * ((-h.abs() + 1.0) * p.static_n - p.coulomb_n)
        + p.coulomb_n
}

/// q̇ = u2(v, q, h) = v − σ0 |v| q / g(v, h) [m/s] (003 Pub II eq. 28).
pub fn bristle_rate<S: Real>(p: &ModifiedLuGre, v: S, q: S, h: S) -> S {
    v - v.abs() * q * p.stiffness_n_m / g(p, v, h)
}

/// ḣ = u3(v, h) = (h_ss − h)/τ_h [1/s] (003 Pub II eq. 30).
pub fn film_rate<S: Real>(p: &ModifiedLuGre, v: S, h: S) -> S {
    let hss = film_steady(p, v);
    let tau = if v.re().abs() <= p.dwell_velocity_m_s {
        p.tau_dwell_s
    } else if h.re().abs() <= hss.re().abs() {
        p.tau_accel_s
    } else {
        p.tau_decel_s
    };
    (hss - h) / tau
}

/// F_μ = σ0 q + σ1 q̇ + σ2 v [N] (003 Pub II eq. 34).
pub fn force<S: Real>(p: &ModifiedLuGre, v: S, q: S, h: S) -> S {
    q * p.stiffness_n_m + bristle_rate(p, v, q, h) * p.damping_n_s_m + v * p.viscous_n_s_m
}

/// Steady state (q_ss, h_ss) at constant v.
pub fn steady_states(p: &ModifiedLuGre, v: f64) -> (f64, f64) {
    let h = film_steady(p, v);
    let q = if v == 0.0 {
        0.0
    } else {
        g(p, v, h) * v.signum() / p.stiffness_n_m
    };
    (q, h)
}

/// Steady-state friction g(v, h_ss(v)) sgn v + σ2 v [N].
pub fn steady_force(p: &ModifiedLuGre, v: f64) -> f64 {
    let (q, h) = steady_states(p, v);
    force(p, v, q, h)
}
