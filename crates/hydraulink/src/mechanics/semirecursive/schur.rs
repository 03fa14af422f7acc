//! The penalty step's Newton tangent reduced to the joint coordinates by a Schur complement
//! (docs/theory chapter 3, section "Tree-structured residual and Schur-reduced tangent").
//!
//! With x = [z ; y] (y: pressures and friction states) the exact tangent is
//!
//! ```text
//! J = [ A  B ]    A = ∂f_z/∂z (n × n),  B = ∂f_z/∂y,
//!     [ C  D ]    C = ∂f_y/∂z,          D = ∂f_y/∂y.
//! ```
//!
//! When D is invertible, J Δx = r is solved exactly by
//!
//! ```text
//! S = A − B D⁻¹ C,   S Δz = r_z − B D⁻¹ r_y,   Δy = D⁻¹ (r_y − C Δz)
//! ```
//!
//! so only the n × n matrix S is factored (O(n³) instead of O((n + n_y)³)) and each solve costs
//! O(n²) plus two products with B and C, whose columns and rows are scanned only over their
//! non-zero extent (a cylinder's column reaches only the axes on its bodies' paths to the root).
//! D is diagonal when no two volumes are connected to each other by a component and every
//! friction element has one state; the structure is read from the assembled tangent itself
//! (dual-number entries that do not depend on an unknown are exact zeros). A non-diagonal D
//! (volumes coupled by a throttle, say) is factored densely while n_y ≤ 2n. A coupled D saves no
//! arithmetic (each solve then costs two solves with D's factors, n_y² more than the solve with
//! the LU of the whole J), so above that size (the excavator: n = 6 coordinates, n_y = 13
//! volumes coupled by its valves, 5 % fewer instructions per run without the reduction), and for
//! a singular D, the dense LU of J is used. Δx is the same Newton increment up to round-off.

use crate::mechanics::buffers::Buffers;
use crate::solver::linalg::DenseLu;

/// The Schur-reduced tangent: blocks B, C, D⁻¹ and the factors of S.
#[derive(Debug)]
pub struct SchurTangent {
    /// Whether the reduction may be used (set by `Penalty::workspace` from the model; tests switch it
    /// off for the dense reference path).
    pub enabled: bool,
    /// Whether the current tangent factors are the Schur ones.
    active: bool,
    n: usize,
    ny: usize,
    /// B, column-major n × n_y.
    b: Vec<f64>,
    /// Non-zero row extent [lo, hi) of each column of B.
    b_ext: Vec<(usize, usize)>,
    /// C, row-major n_y × n.
    c: Vec<f64>,
    /// Non-zero column extent [lo, hi) of each row of C.
    c_ext: Vec<(usize, usize)>,
    /// Whether D is diagonal (then `dinv`, else `dlu` and `dc`).
    diagonal: bool,
    /// D⁻¹ (diagonal D).
    dinv: Vec<f64>,
    /// LU of a non-diagonal D.
    dlu: DenseLu,
    /// D⁻¹ C of a non-diagonal D, column-major n_y × n.
    dc: Vec<f64>,
    /// Scratch n_y-vector.
    t: Vec<f64>,
    /// S = A − B D⁻¹ C and its LU.
    s: DenseLu,
    /// Scratch: D⁻¹ r_y.
    y: Vec<f64>,
}

/// Smallest number of unknowns for which the reduction is used: below it the dense LU of the
/// whole tangent is as cheap, and the shipped small machines keep their exact arithmetic.
pub const MIN_UNKNOWNS: usize = 12;

impl SchurTangent {
    /// Buffers for `n` joint coordinates and `ny` other unknowns.
    pub fn new(n: usize, ny: usize, enabled: bool) -> Self {
        SchurTangent {
            enabled,
            active: false,
            n,
            ny,
            b: vec![0.0; n * ny],
            b_ext: vec![(0, 0); ny],
            c: vec![0.0; ny * n],
            c_ext: vec![(0, 0); ny],
            diagonal: true,
            dinv: vec![0.0; ny],
            dlu: DenseLu::new(ny),
            dc: vec![0.0; ny * n],
            t: vec![0.0; ny],
            s: DenseLu::new(n),
            y: vec![0.0; ny],
        }
    }

    /// Whether the current factors are the Schur ones.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// From the column-major (n + n_y)² tangent `a`: `None` when D is singular (use the dense
    /// LU of J), else whether S factored.
    pub fn factor(&mut self, a: &[f64]) -> Option<bool> {
        self.active = false;
        let (n, ny) = (self.n, self.ny);
        let nx = n + ny;
        if ny == 0 || a.len() != nx * nx {
            return None;
        }
        // D diagonal?
        self.diagonal = (0..ny).all(|v| {
            let col = &a[(n + v) * nx + n..(n + v + 1) * nx];
            col.iter().enumerate().all(|(w, x)| w == v || *x == 0.0)
        });
        if !self.diagonal && ny > 2 * n {
            // a coupled D more than twice the size of S: the dense LU of J (module doc)
            return None;
        }
        if self.diagonal {
            for v in 0..ny {
                let d = a[(n + v) * nx + n + v];
                if d == 0.0 || !d.is_finite() {
                    return None;
                }
                self.dinv[v] = 1.0 / d;
            }
        } else {
            let d = self.dlu.values_mut();
            for w in 0..ny {
                d[w * ny..(w + 1) * ny].copy_from_slice(&a[(n + w) * nx + n..(n + w + 1) * nx]);
            }
            if self.dlu.factor().is_err() {
                return None;
            }
        }
        // B (columns n.. of the first n rows) and C (rows n.. of the first n columns)
        for v in 0..ny {
            let src = &a[(n + v) * nx..(n + v) * nx + n];
            self.b[v * n..(v + 1) * n].copy_from_slice(src);
            self.b_ext[v] = extent(src);
        }
        for j in 0..n {
            for v in 0..ny {
                self.c[v * n + j] = a[j * nx + n + v];
            }
        }
        for v in 0..ny {
            self.c_ext[v] = extent(&self.c[v * n..(v + 1) * n]);
        }
        // S = A − Σ_v B_:v D⁻¹_v C_v:, column by column
        let s = self.s.values_mut();
        for j in 0..n {
            s[j * n..(j + 1) * n].copy_from_slice(&a[j * nx..j * nx + n]);
        }
        if !self.diagonal {
            // S_:j −= B (D⁻¹ C_:j)
            for j in 0..n {
                let dcj = &mut self.dc[j * ny..(j + 1) * ny];
                for (v, x) in dcj.iter_mut().enumerate() {
                    *x = self.c[v * n + j];
                }
                self.dlu.solve_in_place(dcj);
                for (v, w) in dcj.iter().enumerate() {
                    if *w != 0.0 {
                        let (lo, hi) = self.b_ext[v];
                        let bcol = &self.b[v * n + lo..v * n + hi];
                        for (sij, bi) in s[j * n + lo..j * n + hi].iter_mut().zip(bcol.iter()) {
                            *sij -= bi * w;
                        }
                    }
                }
            }
        }
        for v in (0..ny).filter(|_| self.diagonal) {
            let (blo, bhi) = self.b_ext[v];
            let (clo, chi) = self.c_ext[v];
            let bcol = &self.b[v * n + blo..v * n + bhi];
            for j in clo..chi {
                let w = self.dinv[v] * self.c[v * n + j];
                if w != 0.0 {
                    for (sij, bi) in s[j * n + blo..j * n + bhi].iter_mut().zip(bcol.iter()) {
                        *sij -= bi * w;
                    }
                }
            }
        }
        if self.s.factor().is_err() {
            return Some(false);
        }
        self.active = true;
        Some(true)
    }

    /// Solves J Δx = r in place (`r` = [r_z ; r_y] on entry, [Δz ; Δy] on exit).
    pub fn solve_in_place(&mut self, r: &mut [f64]) {
        debug_assert!(self.active, "SchurTangent::solve_in_place before factor");
        let n = self.n;
        let (rz, ry) = r.split_at_mut(n);
        // y = D⁻¹ r_y
        if self.diagonal {
            for ((y, d), r) in self.y.iter_mut().zip(self.dinv.iter()).zip(ry.iter()) {
                *y = d * r;
            }
        } else {
            self.y.copy_from_slice(ry);
            self.dlu.solve_in_place(&mut self.y);
        }
        // r_z −= B y, then S Δz = r_z, then t = C Δz
        #[cfg(target_arch = "x86_64")]
        if n >= crate::solver::linalg::AVX2_MIN_N && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { apply_b_avx2(&self.b, &self.b_ext, &self.y, rz, n) };
            self.s.solve_in_place(rz);
            // SAFETY: as above.
            unsafe { apply_c_avx2(&self.c, &self.c_ext, rz, &mut self.t, n) };
            self.finish(ry);
            return;
        }
        apply_b(&self.b, &self.b_ext, &self.y, rz, n);
        self.s.solve_in_place(rz);
        apply_c(&self.c, &self.c_ext, rz, &mut self.t, n);
        self.finish(ry);
    }

    /// Δy = y − D⁻¹ t, with t = C Δz.
    fn finish(&mut self, ry: &mut [f64]) {
        if self.diagonal {
            for (t, d) in self.t.iter_mut().zip(self.dinv.iter()) {
                *t *= d;
            }
        } else {
            self.dlu.solve_in_place(&mut self.t);
        }
        for ((r, y), t) in ry.iter_mut().zip(self.y.iter()).zip(self.t.iter()) {
            *r = y - t;
        }
    }
}

/// r −= B y over the non-zero extents of B's columns.
#[inline(always)]
fn apply_b(b: &[f64], b_ext: &[(usize, usize)], y: &[f64], r: &mut [f64], n: usize) {
    for (v, (yv, (lo, hi))) in y.iter().zip(b_ext.iter()).enumerate() {
        for (ri, bi) in r[*lo..*hi].iter_mut().zip(b[v * n + lo..v * n + hi].iter()) {
            *ri -= bi * yv;
        }
    }
}

/// t = C z over the non-zero extents of C's rows.
#[inline(always)]
fn apply_c(c: &[f64], c_ext: &[(usize, usize)], z: &[f64], t: &mut [f64], n: usize) {
    for (v, (tv, (lo, hi))) in t.iter_mut().zip(c_ext.iter()).enumerate() {
        *tv = dot(&c[v * n + lo..v * n + hi], &z[*lo..*hi]);
    }
}

/// [`apply_b`] compiled for AVX2 (the same operations in the same order: bit-identical).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn apply_b_avx2(b: &[f64], b_ext: &[(usize, usize)], y: &[f64], r: &mut [f64], n: usize) {
    apply_b(b, b_ext, y, r, n)
}

/// [`apply_c`] compiled for AVX2 (the same operations in the same order: bit-identical).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn apply_c_avx2(c: &[f64], c_ext: &[(usize, usize)], z: &[f64], t: &mut [f64], n: usize) {
    apply_c(c, c_ext, z, t, n)
}

/// x · y with four partial sums (vectorizable).
#[inline(always)]
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let (xc, yc) = (x.chunks_exact(4), y.chunks_exact(4));
    let (xr, yr) = (xc.remainder(), yc.remainder());
    for (a, b) in xc.zip(yc) {
        for k in 0..4 {
            acc[k] += a[k] * b[k];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (a, b) in xr.iter().zip(yr.iter()) {
        s += a * b;
    }
    s
}

/// [first, last + 1) of the non-zero entries of `x` ((0, 0) if none).
fn extent(x: &[f64]) -> (usize, usize) {
    match x.iter().position(|v| *v != 0.0) {
        None => (0, 0),
        Some(lo) => (lo, x.iter().rposition(|v| *v != 0.0).unwrap_or(lo) + 1),
    }
}

/// Factors the penalty tangent assembled in `ws.tangent`: by the Schur reduction when it is
/// enabled and D is diagonal, else by the dense LU. False (and no reusable tangent) when singular.
pub(crate) fn factor_tangent(ws: &mut Buffers, schur: &mut SchurTangent) -> bool {
    if schur.enabled {
        ws.tangent_valid = false;
        match schur.factor(ws.tangent.values()) {
            Some(true) => {
                ws.tangent_valid = true;
                return true;
            }
            Some(false) => return false,
            None => {}
        }
    }
    schur.active = false;
    ws.factor_tangent()
}

/// Δx = J⁻¹ `ws.dx` in place, with the factors of [`factor_tangent`].
pub(crate) fn solve_in_place(ws: &mut Buffers, schur: &mut SchurTangent) {
    if schur.active {
        schur.solve_in_place(&mut ws.dx);
    } else {
        ws.tangent.solve_in_place(&mut ws.dx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Schur solve equals the dense LU solve of a random system with diagonal D.
    #[test]
    fn schur_solve_matches_dense() {
        let (n, ny) = (5, 7);
        let nx = n + ny;
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let mut a = vec![0.0; nx * nx];
        for j in 0..nx {
            for i in 0..nx {
                let in_d = i >= n && j >= n;
                a[j * nx + i] = if in_d {
                    if i == j {
                        3.0 + rnd()
                    } else {
                        0.0
                    }
                } else if i == j {
                    4.0 + rnd()
                } else if j >= n && i < 2 {
                    0.0 // some structural zeros in B
                } else {
                    rnd()
                };
            }
        }
        let r: Vec<f64> = (0..nx).map(|_| rnd()).collect();
        let mut dense = DenseLu::new(nx);
        dense.values_mut().copy_from_slice(&a);
        dense.factor().unwrap();
        let mut x_dense = r.clone();
        dense.solve_in_place(&mut x_dense);
        let mut s = SchurTangent::new(n, ny, true);
        assert_eq!(s.factor(&a), Some(true));
        let mut x = r.clone();
        s.solve_in_place(&mut x);
        for (u, w) in x.iter().zip(x_dense.iter()) {
            assert!((u - w).abs() < 1e-12, "{u} vs {w}");
        }
        // an off-diagonal entry in D (coupled volumes): D factored densely
        a[(n + 1) * nx + n] = 0.5;
        a[n * nx + n + 2] = -0.3;
        dense.values_mut().copy_from_slice(&a);
        dense.factor().unwrap();
        let mut x_dense = r.clone();
        dense.solve_in_place(&mut x_dense);
        assert_eq!(s.factor(&a), Some(true));
        let mut x = r.clone();
        s.solve_in_place(&mut x);
        for (u, w) in x.iter().zip(x_dense.iter()) {
            assert!((u - w).abs() < 1e-12, "{u} vs {w}");
        }
        // a singular D: not applicable
        for v in 0..ny {
            a[(n + v) * nx + n] = 0.0;
        }
        assert_eq!(s.factor(&a), None);
    }
}
