//! Turbulent orifice flow with a laminar region (000 eqs. 24–26):
//!
//! ```text
//! Q = C sgn(Δp) √|Δp|            |Δp| ≥ Δp_tr
//! Q = C Δp / √Δp_tr              |Δp| <  Δp_tr   (linear, continuous at Δp_tr;
//!                                                  000 gives no formula, note 000-A.4)
//! ```
//! Residual and tangent take the same branch (decided on the real part of Δp).

use crate::solver::real::Real;

/// Laminar-transition pressure difference Δp_tr of a model file that gives none [Pa].
pub const DEFAULT_LAMINAR_DP_PA: f64 = 2.0e5;

/// Flow [m³/s] through an orifice with flow constant `c` [m³/(s √Pa)].
#[inline]
pub fn flow<S: Real>(c: f64, dp: S, dp_tr: f64) -> S {
    if dp.re().abs() >= dp_tr {
        if dp.re() >= 0.0 {
            dp.sqrt() * c
        } else {
            -((-dp).sqrt() * c)
        }
    } else {
        dp * (c / dp_tr.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::Dual64;

    #[test]
    fn continuous_at_the_transition() {
        let (c, tr) = (2e-8, 2e5);
        let below = flow(c, tr * (1.0 - 1e-12), tr);
        let above = flow(c, tr * (1.0 + 1e-12), tr);
        assert!((below - above).abs() < 1e-15);
        assert!((flow(c, -tr * (1.0 - 1e-12), tr) + above).abs() < 1e-15);
    }

    #[test]
    fn dual_derivative_matches_central_difference_on_both_branches() {
        let (c, tr) = (2e-8, 2e5);
        for dp in [-3e6, -1e5, 0.0, 5e4, 1.9e5, 2.1e5, 4e6] {
            let d = flow(c, Dual64::new(dp, 1.0), tr).eps;
            let h = 1.0;
            let fd = (flow(c, dp + h, tr) - flow(c, dp - h, tr)) / (2.0 * h);
            assert!(
                (d - fd).abs() <= 1e-6 * fd.abs() + 1e-18,
                "dp {dp}: {d} vs {fd}"
            );
        }
    }
}
