//! Per-unknown weighted tolerances of the Newton test (`integrator::newton`): the absolute
//! tolerance of each block of unknowns, the relative tolerance and the round-off floor. Plain
//! data that imports nothing of the crate but the scalar trait, so the model's `Layout` can
//! build them.

use super::real::{re, Real};

/// Round-off floor of the weighted norm, in units of the unknown's own spacing ε|x_i|: an
/// increment below a few ulps of x_i cannot be resolved, so no tolerance asks for one.
pub const ROUNDOFF_ULPS: f64 = 16.0;

/// Weight of unknown x with absolute tolerance `atol` and relative tolerance `rtol`:
/// max(atol + rtol |x|, 16 ε |x|). The floor only acts where the tolerances ask for less than
/// 16 ulps of x (|x| > 2.8e12 Pa at 1e-2 Pa, 2.8e7 m at 1e-7 m).
#[inline]
pub fn weight(atol: f64, rtol: f64, x: f64) -> f64 {
    let (w, floor) = (
        atol + rtol * x.abs(),
        ROUNDOFF_ULPS * f64::EPSILON * x.abs(),
    );
    // `f64::max` without its NaN handling (a NaN x gives a NaN weight either way): this runs
    // once per unknown and Newton iteration
    if floor > w {
        floor
    } else {
        w
    }
}

/// Per-unknown absolute tolerances as up to four consecutive ranges of the unknowns (positions
/// [rad or m], pressures [Pa], friction states [m or -], …), and the relative tolerance [-].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    /// (end, atol): unknowns up to (excluding) `end` after the previous range have tolerance
    /// `atol`; unknowns after the last range take the last range's.
    ranges: [(usize, f64); 4],
    n_ranges: usize,
    /// Relative tolerance [-].
    pub rtol: f64,
}

impl Tolerances {
    /// Tolerances from `(count, atol)` ranges in the order of the unknowns (at most four).
    pub fn new(ranges: &[(usize, f64)], rtol: f64) -> Self {
        assert!(
            !ranges.is_empty() && ranges.len() <= 4,
            "Tolerances take one to four ranges (internal invariant)"
        );
        let mut r = [(0usize, 0.0f64); 4];
        let mut end = 0;
        for (k, (count, atol)) in ranges.iter().enumerate() {
            end += count;
            r[k] = (end, *atol);
        }
        Tolerances {
            ranges: r,
            n_ranges: ranges.len(),
            rtol,
        }
    }

    /// Absolute tolerance of unknown `i`.
    #[inline]
    pub fn atol(&self, i: usize) -> f64 {
        for (end, atol) in &self.ranges[..self.n_ranges] {
            if i < *end {
                return *atol;
            }
        }
        self.ranges[self.n_ranges - 1].1
    }

    /// ν = max_i |Δx_i| / w_i after x ← x + Δx (w: [`weight`] at the updated x); non-finite
    /// when any weighted entry is. In a dual scalar `S` the norm is that of the real parts (for
    /// `f64` the real part is the value itself).
    pub fn add_and_measure<S: Real>(&self, x: &mut [S], dx: &[S]) -> f64 {
        self.add_fraction_and_measure(x, dx, None)
    }

    /// [`add_and_measure`](Tolerances::add_and_measure) for x ← x + α Δx (α = `alpha`, the step
    /// fraction of a line search; `None` is the full step x + Δx, added without the product). ν
    /// is that of the full increment Δx, with the weights at the updated x.
    #[inline]
    pub fn add_fraction_and_measure<S: Real>(
        &self,
        x: &mut [S],
        dx: &[S],
        alpha: Option<f64>,
    ) -> f64 {
        let n = x.len().min(dx.len());
        let mut norm: f64 = 0.0;
        let mut finite = true;
        // range by range (the same atol per unknown as [`Tolerances::atol`], without its search
        // per entry); the last range runs to the end
        let mut start = 0;
        for (k, (end, atol)) in self.ranges[..self.n_ranges].iter().enumerate() {
            let end = if k + 1 == self.n_ranges {
                n
            } else {
                (*end).min(n)
            };
            for i in start..end.max(start) {
                let xi = &mut x[i];
                match alpha {
                    None => *xi += dx[i],
                    Some(a) => *xi += dx[i] * a,
                }
                let r = re(dx[i]).abs() / weight(*atol, self.rtol, re(*xi));
                finite &= r.is_finite();
                // a NaN r is caught by `finite`; the comparison spares `f64::max`'s NaN test
                if r > norm {
                    norm = r;
                }
            }
            start = start.max(end);
        }
        if finite {
            norm
        } else {
            f64::NAN
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The range-by-range walk gives the norm of the per-entry definition w_i = weight(atol(i)),
    /// bit for bit, for empty ranges, unknowns past the last range and x shorter than the ranges.
    #[test]
    fn add_and_measure_is_the_per_entry_norm() {
        let cases: [&[(usize, f64)]; 4] = [
            &[(3, 1e-7), (2, 1e-2), (0, 1e-9), (1, 1e-6)],
            &[(0, 1e-7), (4, 1e-2)],
            &[(2, 1e-7)],
            &[(5, 1e-7), (5, 1e-2), (5, 1e-9)],
        ];
        for ranges in cases {
            let t = Tolerances::new(ranges, 1e-9);
            for n in [0, 1, 4, 6, 9] {
                let x0: Vec<f64> = (0..n).map(|i| 1e5 * (i as f64 - 2.5)).collect();
                let dx: Vec<f64> = (0..n).map(|i| 1e-3 / (1.0 + i as f64)).collect();
                let mut x = x0.clone();
                let got = t.add_and_measure(&mut x, &dx);
                let mut want: f64 = 0.0;
                for i in 0..n {
                    let xi = x0[i] + dx[i];
                    assert_eq!(x[i].to_bits(), xi.to_bits());
                    want = want.max(dx[i].abs() / weight(t.atol(i), t.rtol, xi));
                }
                assert_eq!(got.to_bits(), want.to_bits(), "ranges {ranges:?}, n {n}");
            }
        }
    }
}
