//! Friction elements (003 Pub II): the force F_μ a cylinder seal (or, later, a joint) opposes to
//! its relative velocity v, its internal states and their rates.
//!
//! | law | module | states |
//! |---|---|---|
//! | none, viscous, efficiency | [`viscous`] | — |
//! | Bengisu–Akay (corrected) | [`bengisu_akay`] | — |
//! | Brown–McPhee | [`brown_mcphee`] | — |
//! | LuGre | [`lugre`] | bristle q [m] |
//! | modified LuGre | [`modified_lugre`] | bristle q [m], film h [-] |
//!
//! Every law is one scalar-generic function (`f64` or `Dual64`), so the exact tangent of the
//! monolithic step comes from the same code as the residual. The internal states are Newton
//! unknowns of the penalty formulation (003 Pub II Appendix A), stored after the pressures:
//! x = [z; p; w]. Sign convention: F_μ > 0 along v; the cylinder applies F = F_h − F_μ.

pub mod bengisu_akay;
pub mod brown_mcphee;
pub mod compile;
pub mod curve;
pub mod lugre;
pub mod modified_lugre;
pub mod viscous;

pub use bengisu_akay::BengisuAkay;
pub use brown_mcphee::BrownMcPhee;
pub use lugre::LuGre;
pub use modified_lugre::ModifiedLuGre;

use crate::solver::real::Real;

/// Cylinder friction law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Friction {
    /// None.
    None,
    /// F_μ = c ṡ.
    Viscous {
        /// c [N s/m].
        c: f64,
    },
    /// F_μ = (1 − η)|F_h| tanh(ṡ / v_s).
    Efficiency {
        /// η.
        eta: f64,
        /// v_s [m/s].
        vs: f64,
    },
    /// Corrected Bengisu–Akay (003 Pub II eq. 22).
    BengisuAkay(BengisuAkay),
    /// Brown–McPhee (003 Pub II eq. 24).
    BrownMcPhee(BrownMcPhee),
    /// LuGre, one bristle state (003 Pub II eqs. 25–27).
    LuGre(LuGre),
    /// Modified LuGre, bristle and film states (003 Pub II eqs. 28–34).
    ModifiedLuGre(ModifiedLuGre),
}

/// tanh(x) for any scalar, safe for large |x|: num-dual's `tanh` is sinh/cosh, which is NaN
/// once cosh overflows (|x| > 710, e.g. v/v_s for a fast cylinder). The value is f64 `tanh` and
/// the first-order dual part (1 − tanh²) ẋ, exact for `Dual64`.
#[inline]
pub fn tanh<S: Real>(x: S) -> S {
    let t = x.re().tanh();
    S::from(t) + (x - S::from(x.re())) * (1.0 - t * t)
}

/// Number of internal states of a law.
pub fn n_states(f: &Friction) -> usize {
    match f {
        Friction::LuGre(_) => 1,
        Friction::ModifiedLuGre(_) => 2,
        _ => 0,
    }
}

/// Names of the internal states (suffixes of `<cylinder>.` in labels and columns).
pub fn state_names(f: &Friction) -> &'static [&'static str] {
    match f {
        Friction::LuGre(_) => &["bristle_m"],
        Friction::ModifiedLuGre(_) => &["bristle_m", "film"],
        _ => &[],
    }
}

/// Name of the law as written in model files.
pub fn law_name(f: &Friction) -> &'static str {
    match f {
        Friction::None => "none",
        Friction::Viscous { .. } => "viscous",
        Friction::Efficiency { .. } => "efficiency",
        Friction::BengisuAkay(_) => "bengisu_akay",
        Friction::BrownMcPhee(_) => "brown_mcphee",
        Friction::LuGre(_) => "lugre",
        Friction::ModifiedLuGre(_) => "modified_lugre",
    }
}

/// F_μ [N] at relative velocity `v` with internal states `w` (length [`n_states`]); `f_hyd`
/// is the hydraulic force, used by the efficiency law only.
pub fn force<S: Real>(f: &Friction, f_hyd: S, v: S, w: &[S]) -> S {
    match f {
        Friction::None => S::zero(),
        Friction::Viscous { c } => viscous::viscous(*c, v),
        Friction::Efficiency { eta, vs } => viscous::efficiency(*eta, *vs, f_hyd, v),
        Friction::BengisuAkay(p) => bengisu_akay::force(p, v),
        Friction::BrownMcPhee(p) => brown_mcphee::force(p, v),
        Friction::LuGre(p) => lugre::force(p, v, w[0]),
        Friction::ModifiedLuGre(p) => modified_lugre::force(p, v, w[0], w[1]),
    }
}

/// Rates ẇ = u(v, w) of the internal states into `out` (003 Pub II eqs. 25, 28, 30).
pub fn rates<S: Real>(f: &Friction, v: S, w: &[S], out: &mut [S]) {
    match f {
        Friction::LuGre(p) => out[0] = lugre::bristle_rate(p, v, w[0]),
        Friction::ModifiedLuGre(p) => {
            out[0] = modified_lugre::bristle_rate(p, v, w[0], w[1]);
            out[1] = modified_lugre::film_rate(p, v, w[1]);
        }
        _ => {}
    }
}

/// Predictor of the internal states at t_k+1: one trapezoidal step of the state equations
/// alone at the velocity `v` (their unknown in closed form, since u is linear in w for a given
/// v and film regime), from w_k and ẇ_k. The bristle equation is stiff in sliding
/// (σ0|v|/g ≈ 10³ 1/s), so this starts the Newton iteration much closer than w_k + Δt ẇ_k.
pub fn predict(f: &Friction, v: f64, w: &[f64], wd: &[f64], dt: f64, out: &mut [f64]) {
    let c = 0.5 * dt;
    match f {
        Friction::LuGre(p) => {
            let a = p.stiffness_n_m * v.abs() / lugre::g(p, v);
            out[0] = (w[0] + c * (wd[0] + v)) / (1.0 + c * a);
        }
        Friction::ModifiedLuGre(p) => {
            let hss = modified_lugre::film_steady(p, v);
            // the regime's τ from ḣ = (h_ss − h)/τ at (v, w_k)
            let tau = (hss - w[1]) / modified_lugre::film_rate(p, v, w[1]);
            let h = if tau.is_finite() && tau > 0.0 {
                (w[1] + c * (wd[1] + hss / tau)) / (1.0 + c / tau)
            } else {
                w[1] + dt * wd[1]
            };
            let a = p.stiffness_n_m * v.abs() / modified_lugre::g(p, v, h);
            out[0] = (w[0] + c * (wd[0] + v)) / (1.0 + c * a);
            out[1] = h;
        }
        _ => {}
    }
}

/// Steady-state internal states at constant velocity `v` into `out`.
pub fn steady_states(f: &Friction, v: f64, out: &mut [f64]) {
    match f {
        Friction::LuGre(p) => out[0] = lugre::steady_bristle(p, v),
        Friction::ModifiedLuGre(p) => {
            let (q, h) = modified_lugre::steady_states(p, v);
            out[0] = q;
            out[1] = h;
        }
        _ => {}
    }
}

/// Steady-state friction force at constant velocity `v` [N] (hydraulic force `f_hyd` for the
/// efficiency law).
pub fn steady_force(f: &Friction, f_hyd: f64, v: f64) -> f64 {
    let mut w = [0.0; 2];
    steady_states(f, v, &mut w);
    force(f, f_hyd, v, &w[..n_states(f)])
}

/// Internal states at rest carrying the static load `load_n` = F_h − F_required [N] in
/// pre-sliding (σ0 q = load, film h = 0). Errors when the load exceeds the breakaway force F_s:
/// the seal cannot hold it and the model does not start at rest.
pub fn rest_states(f: &Friction, load_n: f64, out: &mut [f64]) -> Result<(), String> {
    let (sigma0, fs) = match f {
        Friction::LuGre(p) => (p.stiffness_n_m, p.static_n),
        Friction::ModifiedLuGre(p) => (p.stiffness_n_m, p.static_n),
        _ => return Ok(()),
    };
    if load_n.abs() > fs {
        return Err(format!(
            "the seal must carry {load_n:.3} N at rest, more than its static force F_s = {fs} N; \
             the mechanism cannot start at rest with these pressures"
        ));
    }
    out[0] = load_n / sigma0;
    if n_states(f) > 1 {
        out[1] = 0.0;
    }
    Ok(())
}
