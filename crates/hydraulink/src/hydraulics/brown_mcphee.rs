//! Brown & McPhee cylinder friction (001 eq. 8):
//!
//! ```text
//!   F_μ(ṡ) = F_c tanh(4 ṡ/v_s) + (F_s − F_c) (ṡ/v_s) / (¼ (ṡ/v_s)² + ¾)² + σ₂ ṡ
//!
//!   F_μ ▲        ╭─╮ F_s (breakaway, near ṡ = v_s)
//!       │      ╭─╯ ╰──────── F_c + σ₂ ṡ
//!   ────┼─────╯──────────▶ ṡ          opposes ṡ; odd in ṡ; smooth (no switch)
//! ```
//! The slope at rest, the only friction quantity in a linearization about a static equilibrium,
//! is c_eq = 4F_c/v_s + (16/9)(F_s − F_c)/v_s + σ₂ (reference note 001 A.1).

use crate::real::Real;

/// F_μ [N] at the rod speed `sd` [m/s] (positive when it opposes a positive ṡ).
#[inline]
pub fn force<S: Real>(fc: f64, fs: f64, vs: f64, sigma2: f64, sd: S) -> S {
    let r = sd / vs;
    let den = r * r * 0.25 + 0.75;
    (r * 4.0).tanh() * fc + r * (fs - fc) / (den * den) + sd * sigma2
}

/// dF_μ/dṡ at ṡ = 0 [N s/m] (reference note 001 A.1).
pub fn slope_at_rest(fc: f64, fs: f64, vs: f64, sigma2: f64) -> f64 {
    4.0 * fc / vs + 16.0 / 9.0 * (fs - fc) / vs + sigma2
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::Dual64;

    #[test]
    fn slope_at_rest_matches_the_dual_derivative() {
        let (fc, fs, vs, s2) = (210.0, 830.0, 0.0125, 330.0);
        let d = force(fc, fs, vs, s2, Dual64::new(0.0, 1.0)).eps;
        let c = slope_at_rest(fc, fs, vs, s2);
        // 001 A.1: c_eq = 67200 + 88177.78 + 330
        assert!((c - 155_707.777_777_777_8).abs() < 1e-6);
        assert!((d - c).abs() < 1e-9 * c);
    }

    #[test]
    fn odd_and_dual_matches_central_difference() {
        let (fc, fs, vs, s2) = (210.0, 830.0, 0.0125, 330.0);
        for v in [-0.3_f64, -0.01, 0.002, 0.0125, 0.05, 1.0] {
            assert!((force(fc, fs, vs, s2, v) + force(fc, fs, vs, s2, -v)).abs() < 1e-9);
            let d = force(fc, fs, vs, s2, Dual64::new(v, 1.0)).eps;
            let h = 1e-7;
            let fd = (force(fc, fs, vs, s2, v + h) - force(fc, fs, vs, s2, v - h)) / (2.0 * h);
            assert!(
                (d - fd).abs() <= 1e-5 * d.abs().max(1.0),
                "{v}: {d} vs {fd}"
            );
        }
    }
}
