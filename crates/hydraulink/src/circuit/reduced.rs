//! Reduced hydraulics by singular perturbation (002 Pub II, reference note 002b P-II): a small
//! volume marked `algebraic` takes its pressure from the quasi-steady flow balance instead of an
//! ODE.
//!
//! ```text
//!   ε ṗ = Σ Q_in − V̇,   ε = V / B_e            (002 Pub II eqs. 1, 30–32)
//!   ε → 0:   0 = Σ Q_in(p, …) − V̇                (reduced model, 002 Pub II eqs. 5–6)
//! ```
//!
//! # How a formulation uses it
//! The pressure stays an unknown of the monolithic Newton system, but its row changes. With the
//! pressure rate h = (B_e/V)(Σ Q_in − V̇) that every formulation already evaluates
//! ([`super::pressure_rates`]), the rows are
//!
//! ```text
//!   ODE volume:        (Δt²/4) (ṗ − h)          ṗ by the trapezoidal rule (000 eq. 39)
//!   algebraic volume:  (Δt²/4) (0 − h)  =  −(Δt²/4)(B_e/V)(Σ Q_in − V̇)
//! ```
//!
//! i.e. the flow balance scaled by the characteristic ∂p/∂Q of the volume, B_e/V·(Δt²/4) [Pa s²/m³
//! · s]: the same units and, for the stiff volumes this is meant for, nearly the same tangent row
//! as the ODE row (whose ∂/∂p is Δt/2 + (Δt²/4)(B_e/V)∂ΣQ/∂p with the second term dominating), so
//! the tangent stays as well conditioned as the lumped model's. The trapezoidal rule applied to
//! the index-1 DAE treats the algebraic row exactly like this. Any formulation that builds the
//! pressure rows through [`pressure_row`] supports algebraic volumes (the penalty formulation
//! does; global formulations call it with their own ṗ and h).
//!
//! The ṗ stored for an algebraic volume is the backward difference (p_k+1 − p_k)/Δt (a trapezoidal
//! ṗ would oscillate on a quantity that is not integrated), and p̈ = 0, so the predictor is a
//! linear extrapolation ([`committed_rates`]).
//!
//! # Special case: two orifices in series (002 Pub II eqs. 33–34)
//! Valve path Q = C_v|U| √(p_P − p3) into the volume and throttle Q = C_t √(p3 − p1) out of it
//! (both turbulent): the flow balance gives p3 = (p1 + α p_P)/(1 + α), α = (U C_v/C_t)²
//! ([`series_orifice_pressure`]); the general balance reproduces it (test
//! `reduced::closed_form_is_the_series_orifice_special_case`).
//!
//! # Throttle correction γ± (002 Pub II eq. 35)
//! Not supported: P-II scales the throttle flow into the downstream chamber by hand-tuned γ±
//! (1.16 / 1.05) *without* scaling it out of the reduced volume, which breaks mass conservation
//! and was tuned to one circuit. Tune the throttle area instead, if needed.

use crate::circuit::{component_flows, volume};
use crate::elements::hydraulics::CylinderMotion;
use crate::model::{Model, Volume, VolumeId};
use crate::solver::real::Real;

/// The pressure row of volume `vol`, before the (Δt²/4) scaling of the residual: ṗ − h for an
/// ODE volume, −h (the scaled flow balance) for an algebraic one. `pd` is the trial ṗ [Pa/s],
/// `h` the pressure rate (B_e/V)(Σ Q_in − V̇) [Pa/s].
#[inline]
pub fn pressure_row<S: Real>(vol: &Volume, pd: S, h: S) -> S {
    if vol.algebraic {
        -h
    } else {
        pd - h
    }
}

/// The ṗ and p̈ to store after a step [Pa/s, Pa/s²]. ODE volumes keep the trapezoidal ṗ
/// `pd_trapezoidal` and p̈ = (ṗ_k+1 − ṗ_k)/Δt; algebraic ones the backward difference and p̈ = 0.
#[inline]
pub fn committed_rates(
    vol: &Volume,
    p_old: f64,
    p_new: f64,
    pd_old: f64,
    pd_trapezoidal: f64,
    dt: f64,
) -> (f64, f64) {
    if vol.algebraic {
        ((p_new - p_old) / dt, 0.0)
    } else {
        (pd_trapezoidal, (pd_trapezoidal - pd_old) / dt)
    }
}

/// Nonlinear elimination of the algebraic pressures: sets each algebraic volume's entry of `p`
/// [Pa] to the root of its flow balance g(p_v) = Σ Q_in(p) − V̇_v at the given cylinder motion
/// and valve positions, the other pressures held (Gauss–Seidel over the algebraic volumes, one
/// sweep per call). g is non-increasing in p_v (every orifice flow into a volume falls with its
/// pressure), so the root is bracketed and refined by regula falsi (Illinois), which cannot
/// cycle. Newton applied to the balance directly can: on a turbulent orifice Q ∝ sgn(Δp)√|Δp|
/// the Newton map is Δp → −Δp, a 2-cycle that the laminar patch only breaks when an iterate
/// falls inside it (seen on 002 Pub II at Δt = 5 ms when the valve closes). A formulation calls
/// this before each residual evaluation (the monolithic Newton then only corrects the rest).
/// `q` is scratch of length n_volumes. Returns whether the model has algebraic volumes; a
/// balance that does not depend on p_v (closed valves only) leaves p_v unchanged.
pub fn solve_algebraic(
    model: &Model,
    p: &mut [f64],
    motion: &[CylinderMotion<f64>],
    spools: &[f64],
    q: &mut [f64],
) -> bool {
    let mut any = false;
    let tol = 1e-3 * model.solver.tol_pressure_pa;
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        if !vol.algebraic {
            continue;
        }
        any = true;
        let (_, vd, _) = volume::geometry(model, vol, VolumeId(v), motion);
        let mut g = |pv: f64, p: &mut [f64]| -> f64 {
            p[v] = pv;
            component_flows(model, p, spools, q);
            q[v] - vd
        };
        let p0 = p[v];
        let g0 = g(p0, p);
        if g0 == 0.0 {
            continue;
        }
        // bracket [lo, hi] with g(lo) > 0 > g(hi), expanding from p0
        let dir = if g0 > 0.0 { 1.0 } else { -1.0 };
        let (mut a, mut ga) = (p0, g0);
        let mut d = 1e5;
        let mut bracket = None;
        for _ in 0..24 {
            let b = p0 + dir * d;
            let gb = g(b, p);
            if gb == 0.0 || gb.signum() != g0.signum() {
                bracket = Some((b, gb));
                break;
            }
            (a, ga) = (b, gb);
            d *= 4.0;
        }
        let Some((mut b, mut gb)) = bracket else {
            p[v] = p0;
            continue;
        };
        // Illinois regula falsi on the bracket {a, b}
        for _ in 0..200 {
            if gb == 0.0 || (b - a).abs() <= tol + 1e-15 * b.abs() {
                break;
            }
            let c = b - gb * (b - a) / (gb - ga);
            let gc = g(c, p);
            if gc.signum() != gb.signum() {
                (a, ga) = (b, gb);
            } else {
                ga *= 0.5;
            }
            (b, gb) = (c, gc);
        }
        p[v] = if ga.abs() < gb.abs() { a } else { b };
    }
    any
}

/// P-II closed form (002 Pub II eqs. 33–34): pressure [Pa] of a volume between a valve path of
/// flow constant `cv_u` = C_v|U| [m³/(s √Pa)] from the source at `p_src` and a throttle of flow
/// constant `ct` to a volume at `p_down`, both turbulent: p3 = (p_down + α p_src)/(1 + α),
/// α = (C_v U / C_t)².
pub fn series_orifice_pressure(p_down: f64, p_src: f64, cv_u: f64, ct: f64) -> f64 {
    let alpha = (cv_u / ct).powi(2);
    (p_down + alpha * p_src) / (1.0 + alpha)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_balances_the_two_orifices() {
        let (cv, ct, pp, p1) = (2.138e-7, 3.7e-7, 7.6e6, 4.0e6);
        let p3 = series_orifice_pressure(p1, pp, cv, ct);
        let q_in = cv * (pp - p3).sqrt();
        let q_out = ct * (p3 - p1).sqrt();
        assert!((q_in - q_out).abs() < 1e-12 * q_in, "{q_in} vs {q_out}");
    }
}
