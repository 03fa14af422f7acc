//! 4/3 closed-centre directional control valve (000 eqs. 26–27).
//!
//! ```text
//!            A     B
//!            │     │          U ≥ 0:  P → A,  B → T
//!        ┌───┴─────┴───┐      U < 0:  P → B,  A → T
//!        │  ⇅   │  ⇅   │      each open path: Q = C_vd |U| sgn(Δp) √|Δp|  (laminar below Δp_tr)
//!        └───┬─────┬───┘      U = 0: all ports closed
//!            P     T
//! ```
//! Spool dynamics U̇ = (U_ref − U)/τ (000 eq. 27). The ODE is linear and decoupled, so its
//! trapezoidal step has the closed form [`spool_step`].

use crate::hydraulics::orifice;
use crate::model::Valve43;
use crate::real::Real;

/// Flows of a 4/3 valve [m³/s], signed as named.
#[derive(Debug, Clone, Copy)]
pub struct ValveFlows<S> {
    /// Into work port A.
    pub into_a: S,
    /// Into work port B.
    pub into_b: S,
    /// Out of the supply P.
    pub out_of_p: S,
    /// Into the return T.
    pub into_t: S,
}

/// Port flows for spool position `u` and port pressures [Pa].
#[inline]
pub fn flows<S: Real>(v: &Valve43, u: f64, pp: S, pt: S, pa: S, pb: S) -> ValveFlows<S> {
    let c = v.flow_constant * u.abs();
    if u >= 0.0 {
        let q_pa = orifice::flow(c, pp - pa, v.laminar_dp_pa);
        let q_bt = orifice::flow(c, pb - pt, v.laminar_dp_pa);
        ValveFlows {
            into_a: q_pa,
            into_b: -q_bt,
            out_of_p: q_pa,
            into_t: q_bt,
        }
    } else {
        let q_pb = orifice::flow(c, pp - pb, v.laminar_dp_pa);
        let q_at = orifice::flow(c, pa - pt, v.laminar_dp_pa);
        ValveFlows {
            into_a: -q_at,
            into_b: q_pb,
            out_of_p: q_pb,
            into_t: q_at,
        }
    }
}

/// Trapezoidal step of U̇ = (U_ref − U)/τ from U_ref,k = `u_ref0` to U_ref,k+1 = `u_ref1`
/// (see `Signal::step_values` for the interval form of piecewise-constant inputs,
/// reference note 000-A.4): U₊ = [(1 − Δt/2τ) U + (Δt/2τ)(U_ref,k + U_ref,k+1)] / (1 + Δt/2τ).
#[inline]
pub fn spool_step(u: f64, u_ref0: f64, u_ref1: f64, tau: f64, dt: f64) -> f64 {
    let r = dt / (2.0 * tau);
    ((1.0 - r) * u + r * (u_ref0 + u_ref1)) / (1.0 + r)
}

/// Spool rate U̇ [1/s].
#[inline]
pub fn spool_rate(u: f64, u_ref: f64, tau: f64) -> f64 {
    (u_ref - u) / tau
}
