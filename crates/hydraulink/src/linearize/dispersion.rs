//! What a fixed trapezoidal step does to the lightly damped modes of the linear model: the
//! frequency it reproduces, its phase error per period and over a run, its numerical damping,
//! and a step that keeps the phase error over the run below a limit.
//!
//! ```text
//!   ẋ = λ x, trapezoid at step h:  x_{k+1} = z x_k,   z = (1 + λh/2)/(1 − λh/2)
//!   discrete-time equivalent:      λ_h = ln z / h          (principal logarithm)
//!   undamped λ = iω:               |z| = 1,  Im λ_h = ω_h = (2/h)·atan(ωh/2)
//!                                  ω − ω_h = ω³h²/12 − ω⁵h⁴/80 + …   (second order in h)
//!   frequency the step reproduces: f_h = Im λ_h / 2π
//!   phase error per period:        2π |Im λ − Im λ_h| / Im λ    [rad]
//!   phase error over a run T:      |Im λ − Im λ_h| · T           [rad]
//!   numerical damping:             ζ_h − ζ,  ζ = −Re λ/|λ|,  ζ_h = −Re λ_h/|λ_h|
//! ```
//! The trapezoid maps the imaginary axis onto the unit circle (it is A-stable and adds no
//! damping to an undamped mode), but it warps the frequency: the bilinear transform's frequency
//! warping, ω_h = (2/h)·atan(ωh/2), the relation behind its "prewarping" (A. V. Oppenheim,
//! R. W. Schafer, *Discrete-Time Signal Processing*, 3rd ed., Pearson 2010, §7.2.2, eq. 7.26 with
//! Ω = ωh; E. Hairer, G. Wanner, *Solving Ordinary Differential Equations II*, 2nd ed.,
//! Springer 1996, §IV.3, the stability function R(z) = (1 + z/2)/(1 − z/2) of the trapezoidal
//! rule). A mode is reported when it is lightly damped (ζ < [`LIGHT_DAMPING_RATIO`]) and above
//! [`MIN_FREQUENCY_HZ`]; each conjugate pair once (Im λ > 0).

use nalgebra::Complex;

use crate::linearize::eigen::{Mode, ModeKind};

/// Damping ratio below which a mode counts as lightly damped [-].
pub const LIGHT_DAMPING_RATIO: f64 = 0.05;

/// Frequency above which a lightly damped mode is reported [Hz].
pub const MIN_FREQUENCY_HZ: f64 = 1.0;

/// Phase error over the run above which `check` warns and that [`suggested_step`] keeps below
/// [rad].
pub const PHASE_ERROR_LIMIT_RAD: f64 = 1.0;

/// The trapezoid's discrete-time equivalent λ_h = ln z / h of an eigenvalue λ at step h, with
/// z = (1 + λh/2)/(1 − λh/2) (the trapezoidal rule applied to ẋ = λx) and the principal
/// logarithm [1/s]. `h` [s] > 0; λ h/2 = 1 (a pole of z) gives a non-finite result.
pub fn trapezoid_eigenvalue(lambda: Complex<f64>, h: f64) -> Complex<f64> {
    let half = lambda * (0.5 * h);
    let one = Complex::new(1.0, 0.0);
    let z = (one + half) / (one - half);
    // principal log: ln|z| + i arg z, arg z in (−π, π]
    Complex::new(z.norm().ln(), z.arg()) / h
}

/// A lightly damped mode and what a fixed trapezoidal step does to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dispersion {
    /// The eigenvalue λ of the linear model (Im λ > 0) [1/s].
    pub lambda: Complex<f64>,
    /// The step h [s].
    pub step_s: f64,
    /// The trapezoid's discrete-time equivalent λ_h ([`trapezoid_eigenvalue`]) [1/s].
    pub lambda_h: Complex<f64>,
    /// Frequency of the mode, Im λ/2π (its damped frequency) [Hz].
    pub frequency_hz: f64,
    /// Damping ratio ζ = −Re λ/|λ| [-].
    pub damping_ratio: f64,
    /// The frequency the step reproduces, Im λ_h/2π [Hz].
    pub frequency_h_hz: f64,
    /// Phase error per period of the mode, 2π |Im λ − Im λ_h|/Im λ [rad].
    pub phase_error_per_period_rad: f64,
    /// Numerical damping ζ_h − ζ, ζ_h = −Re λ_h/|λ_h| (0 for an undamped mode: the trapezoid
    /// keeps |z| = 1 on the imaginary axis) [-].
    pub damping_error: f64,
}

impl Dispersion {
    /// What step `h` [s] does to the mode of eigenvalue `lambda` (Im λ > 0).
    pub fn new(lambda: Complex<f64>, h: f64) -> Self {
        let lambda_h = trapezoid_eigenvalue(lambda, h);
        let two_pi = 2.0 * std::f64::consts::PI;
        Dispersion {
            lambda,
            step_s: h,
            lambda_h,
            frequency_hz: lambda.im / two_pi,
            damping_ratio: -lambda.re / lambda.norm(),
            frequency_h_hz: lambda_h.im / two_pi,
            phase_error_per_period_rad: two_pi * (lambda.im - lambda_h.im).abs() / lambda.im,
            damping_error: -lambda_h.re / lambda_h.norm() + lambda.re / lambda.norm(),
        }
    }

    /// Phase error accumulated over a run of `duration_s` [s]: |Im λ − Im λ_h|·T [rad].
    pub fn phase_error_over(&self, duration_s: f64) -> f64 {
        (self.lambda.im - self.lambda_h.im).abs() * duration_s
    }
}

/// Whether `m` is reported: one of a complex pair with Im λ > 0, damping ratio below
/// [`LIGHT_DAMPING_RATIO`] and frequency Im λ/2π above [`MIN_FREQUENCY_HZ`].
pub fn is_lightly_damped(m: &Mode) -> bool {
    m.kind == ModeKind::Complex
        && m.value.im > 0.0
        && m.damping_ratio.is_some_and(|z| z < LIGHT_DAMPING_RATIO)
        && m.value.im / (2.0 * std::f64::consts::PI) > MIN_FREQUENCY_HZ
}

/// The lightly damped modes of `modes` ([`is_lightly_damped`]) at step `h` [s], in the order
/// of `modes` (ascending |λ|).
pub fn lightly_damped(modes: &[Mode], h: f64) -> Vec<Dispersion> {
    modes
        .iter()
        .filter(|m| is_lightly_damped(m))
        .map(|m| Dispersion::new(m.value, h))
        .collect()
}

/// A fixed step [s] at which the phase error of the mode `lambda` (Im λ > 0) over a run of
/// `duration_s` stays at or below `limit_rad`: the largest such step by bisection on the exact
/// [`Dispersion`] (the error grows with h), started from the small-step estimate
/// ω³h²T/12 = limit, then rounded down to 1, 2 or 5 × 10ⁿ s so that it reads as a step a user
/// types. `None` when `duration_s` or `limit_rad` is not finite and positive, or Im λ ≤ 0.
pub fn suggested_step(lambda: Complex<f64>, duration_s: f64, limit_rad: f64) -> Option<f64> {
    let w = lambda.im;
    if !(w > 0.0 && duration_s > 0.0 && limit_rad > 0.0 && duration_s.is_finite()) {
        return None;
    }
    let err = |h: f64| Dispersion::new(lambda, h).phase_error_over(duration_s);
    // small-step estimate: ω − ω_h ≈ ω³h²/12
    let estimate = (12.0 * limit_rad / (w * w * w * duration_s)).sqrt();
    let (mut lo, mut hi) = (estimate, estimate);
    // bracket: err(lo) ≤ limit < err(hi) (a NaN error counts as above the limit)
    let within = |h: f64| err(h) <= limit_rad;
    let mut halvings = 0;
    while !within(lo) {
        lo *= 0.5;
        halvings += 1;
        if halvings > 200 {
            return None;
        }
    }
    while within(hi) {
        hi *= 2.0;
        // beyond ωh = 1e6 the warped frequency is near zero and stays so: lo is the answer
        if w * hi > 1e6 {
            return Some(nice_step_below(lo));
        }
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if within(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(nice_step_below(lo))
}

/// The largest of 1, 2 or 5 × 10ⁿ [s] at or below `h` [s] (> 0, finite), computed as
/// d·10ⁿ or d/10⁻ⁿ so that it is the double nearest the decimal (5e-5, not 5.000000000000001e-5).
fn nice_step_below(h: f64) -> f64 {
    let decade = |e: i32| -> f64 {
        if e >= 0 {
            10f64.powi(e)
        } else {
            1.0 / 10f64.powi(-e)
        }
    };
    let scaled = |d: f64, e: i32| -> f64 {
        if e >= 0 {
            d * 10f64.powi(e)
        } else {
            d / 10f64.powi(-e)
        }
    };
    let mut e = h.log10().floor() as i32;
    // log10 may round across a power of ten
    if decade(e) > h {
        e -= 1;
    }
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|d| scaled(d, e))
        .find(|&s| s <= h)
        .unwrap_or_else(|| scaled(5.0, e - 1))
}

/// The step [s] that keeps every mode of `modes` at or below `limit_rad` of phase error over
/// `duration_s` ([`suggested_step`] of each, the smallest); `None` when `modes` is empty.
pub fn suggested_step_for(modes: &[Dispersion], duration_s: f64, limit_rad: f64) -> Option<f64> {
    modes
        .iter()
        .filter_map(|d| suggested_step(d.lambda, duration_s, limit_rad))
        .reduce(f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    #[test]
    fn undamped_mode_maps_to_the_closed_form() {
        // the 29.5 Hz oil column of the crane at the shipped 1 ms
        for (f, h) in [(29.5, 1e-3), (29.5, 5e-5), (3.0, 1e-2), (200.0, 1e-3)] {
            let w = 2.0 * PI * f;
            let lh = trapezoid_eigenvalue(Complex::new(0.0, w), h);
            let closed = (2.0 / h) * (w * h / 2.0).atan();
            assert!((lh.im - closed).abs() <= 1e-12 * closed, "{f} Hz, h = {h}");
            // the trapezoid adds no damping on the imaginary axis
            assert!(
                lh.re.abs() <= 1e-9 * w,
                "{f} Hz, h = {h}: Re λ_h = {}",
                lh.re
            );
            let d = Dispersion::new(Complex::new(0.0, w), h);
            assert_eq!(d.damping_ratio, 0.0);
            assert!(d.damping_error.abs() <= 1e-9);
            assert!(d.frequency_h_hz < d.frequency_hz);
        }
        // the small-step expansion f − f_h = f·(ωh)²/12 − f·(ωh)⁴/80 + f·(ωh)⁶/448 − … (the
        // atan series, alternating and decreasing for ωh/2 < 1): at 29.5 Hz and 1 ms the first
        // two terms are within the third of the exact value (29.5 Hz comes out at 29.416 Hz)
        let (f, h) = (29.5, 1e-3);
        let wh: f64 = 2.0 * PI * f * h;
        let d = Dispersion::new(Complex::new(0.0, 2.0 * PI * f), h);
        let series = f * wh.powi(2) / 12.0 - f * wh.powi(4) / 80.0;
        // + 1e-12: the rounding of f_h (≈ 1e-14 Hz)
        assert!(
            ((f - d.frequency_h_hz) - series).abs() <= f * wh.powi(6) / 448.0 + 1e-12,
            "{}",
            d.frequency_h_hz
        );
        assert!(
            (d.frequency_h_hz - 29.416).abs() < 5e-4,
            "{}",
            d.frequency_h_hz
        );
    }

    #[test]
    fn phase_error_falls_as_the_square_of_the_step() {
        let lambda = Complex::new(-0.01 * 2.0 * PI * 29.5, 2.0 * PI * 29.5);
        let mut h = 2e-3;
        let mut last = Dispersion::new(lambda, h).phase_error_per_period_rad;
        for _ in 0..6 {
            h *= 0.5;
            let e = Dispersion::new(lambda, h).phase_error_per_period_rad;
            let ratio = last / e;
            // second order: ratio 4 as h → 0. The next term of ω − ω_h = ω³h²/12 − ω⁵h⁴/80
            // lowers it by about 4·(3/20)·(ωh)²·(3/4) = 1.5 % at the first halving (ωh = 0.37),
            // less after: 2 % of 4 covers it
            assert!((ratio - 4.0).abs() < 0.02 * 4.0, "h = {h}: ratio {ratio}");
            assert!(
                ratio < 4.0,
                "the h⁴ term makes the error fall a little less than 4×"
            );
            last = e;
        }
    }

    #[test]
    fn suggested_step_keeps_the_phase_error_below_the_limit() {
        for (f, zeta, t) in [
            (29.5, 0.0, 10.0),
            (29.5, 0.01, 8.0),
            (2.0, 0.04, 100.0),
            (800.0, 0.0, 1.0),
        ] {
            let w = 2.0 * PI * f;
            let lambda = Complex::new(-zeta * w / (1.0 - zeta * zeta).sqrt(), w);
            let h = suggested_step(lambda, t, PHASE_ERROR_LIMIT_RAD).unwrap();
            let e = Dispersion::new(lambda, h).phase_error_over(t);
            assert!(e <= PHASE_ERROR_LIMIT_RAD, "{f} Hz: h = {h}, error {e}");
            // and not needlessly small: the 1-2-5 rounding loses at most a factor 2.5
            let e_next = Dispersion::new(lambda, 2.5 * h).phase_error_over(t);
            assert!(e_next > PHASE_ERROR_LIMIT_RAD, "{f} Hz: h = {h} too small");
            // the small-step estimate ω³h²T/12 agrees
            assert!(w.powi(3) * h * h * t / 12.0 <= 1.01 * PHASE_ERROR_LIMIT_RAD);
        }
        // several modes: the step of the fastest one, which keeps the slower ones below too
        let modes: Vec<Dispersion> = [2.0, 29.5, 68.6]
            .iter()
            .map(|f| Dispersion::new(Complex::new(-0.1, 2.0 * PI * f), 1e-3))
            .collect();
        let h = suggested_step_for(&modes, 8.0, PHASE_ERROR_LIMIT_RAD).unwrap();
        assert_eq!(
            Some(h),
            suggested_step(modes[2].lambda, 8.0, PHASE_ERROR_LIMIT_RAD)
        );
        for d in &modes {
            let e = Dispersion::new(d.lambda, h).phase_error_over(8.0);
            assert!(e <= PHASE_ERROR_LIMIT_RAD, "{d:?}: {e}");
        }
        assert_eq!(suggested_step_for(&[], 8.0, 1.0), None);
        assert_eq!(suggested_step(Complex::new(0.0, 1.0), 0.0, 1.0), None);
        assert_eq!(suggested_step(Complex::new(-1.0, 0.0), 1.0, 1.0), None);
    }

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step_below(7.3e-5), 5e-5);
        assert_eq!(nice_step_below(4.9e-4), 2e-4);
        assert_eq!(nice_step_below(1.9e-3), 1e-3);
        assert_eq!(nice_step_below(1e-3), 1e-3);
        assert_eq!(nice_step_below(0.7), 0.5);
        assert_eq!(nice_step_below(20.0), 20.0);
    }
}
