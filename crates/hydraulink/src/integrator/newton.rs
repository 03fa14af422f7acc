//! Convergence control of the Newton–Raphson loops (STYLE convention 7): the weighted increment
//! test, the contraction-rate rule of the Jacobian-reuse policy, and the divergence test, in one
//! place for every monolithic formulation.

/// What to do after a Newton increment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The weighted increment is within the tolerances.
    Converged,
    /// Iterate again; `refresh_tangent` when the tangent contracted poorly.
    Continue {
        /// The last increment shrank by less than the refresh ratio: recompute the tangent.
        refresh_tangent: bool,
    },
    /// Stop: the reason, for `StepError::NewtonFailed`.
    Fail(&'static str),
}

/// The state of one Newton loop.
#[derive(Debug, Clone, Copy)]
pub struct NewtonControl {
    prev_norm: f64,
    growth: u32,
    refresh_ratio: f64,
}

/// A tangent whose increments shrink by less than ×5 per iteration is refreshed.
pub const REFRESH_RATIO: f64 = 0.2;

impl Default for NewtonControl {
    fn default() -> Self {
        NewtonControl {
            prev_norm: f64::INFINITY,
            growth: 0,
            refresh_ratio: REFRESH_RATIO,
        }
    }
}

impl NewtonControl {
    /// A control that refreshes the tangent when ν_h > `ratio` ν_{h−1} instead of
    /// [`REFRESH_RATIO`].
    pub fn with_refresh_ratio(ratio: f64) -> Self {
        NewtonControl {
            refresh_ratio: ratio,
            ..Default::default()
        }
    }

    /// Judges the weighted increment norm ν_h = max_i |Δx_i| / (atol_i + rtol |x_i|) of
    /// iteration `iterations` (1-based): converged when ν_h ≤ 1; the tangent is refreshed when
    /// ν_h > 0.2 ν_{h−1}; the loop fails on a non-finite ν or when, from the third iteration on,
    /// ν grew three times.
    pub fn judge(&mut self, norm: f64, iterations: u32) -> Verdict {
        if !norm.is_finite() {
            return Verdict::Fail("non-finite Newton increment");
        }
        if norm <= 1.0 {
            return Verdict::Converged;
        }
        let refresh_tangent = norm > self.refresh_ratio * self.prev_norm;
        if iterations >= 3 && norm > self.prev_norm {
            self.growth += 1;
            if self.growth >= 3 {
                return Verdict::Fail("diverging (increments growing)");
            }
        }
        self.prev_norm = norm;
        Verdict::Continue { refresh_tangent }
    }
}

/// `StepError::NonFinite` naming the first non-finite residual entry of `f`, if any.
pub fn check_finite(
    time_s: f64,
    step: u64,
    f: &[f64],
    labels: &[String],
) -> Result<(), crate::StepError> {
    match f.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(crate::StepError::NonFinite {
            time_s,
            step,
            equation: labels.get(i).cloned().unwrap_or_default(),
        }),
        None => Ok(()),
    }
}

/// `StepError::NewtonFailed` naming the equation with the largest weighted residual
/// |f_i / J_ii| / tol_i: the residual turned into an increment by the tangent's diagonal (a zero
/// or non-finite diagonal falls back to the raw residual), over the unknown's tolerance; NaN
/// counts as infinite. `labels[i]` names equation i.
#[allow(clippy::too_many_arguments)]
pub fn failure(
    time_s: f64,
    step: u64,
    iterations: u32,
    f: &[f64],
    diag: &[f64],
    tolerance: impl Fn(usize) -> f64,
    labels: &[String],
    reason: &str,
) -> crate::StepError {
    let mut worst = (0usize, -1.0f64);
    for (i, fi) in f.iter().enumerate() {
        let d = match diag.get(i) {
            Some(d) if *d != 0.0 && d.is_finite() => d.abs(),
            _ => 1.0,
        };
        let w = (fi / d).abs() / tolerance(i);
        let w = if w.is_nan() { f64::INFINITY } else { w };
        if w > worst.1 {
            worst = (i, w);
        }
    }
    crate::StepError::NewtonFailed {
        time_s,
        step,
        iterations,
        equation: labels.get(worst.0).cloned().unwrap_or_default(),
        value: worst.1,
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converges_refreshes_and_detects_divergence() {
        let mut c = NewtonControl::default();
        assert_eq!(
            c.judge(100.0, 1),
            Verdict::Continue {
                refresh_tangent: false
            }
        );
        assert_eq!(
            c.judge(50.0, 2),
            Verdict::Continue {
                refresh_tangent: true
            }
        );
        assert_eq!(c.judge(1.0, 3), Verdict::Converged);
        let mut d = NewtonControl::default();
        let verdicts: Vec<_> = [10.0, 20.0, 40.0, 80.0, 160.0]
            .iter()
            .enumerate()
            .map(|(i, n)| d.judge(*n, i as u32 + 1))
            .collect();
        assert_eq!(verdicts[4], Verdict::Fail("diverging (increments growing)"));
        assert_eq!(
            NewtonControl::default().judge(f64::NAN, 1),
            Verdict::Fail("non-finite Newton increment")
        );
    }
}
