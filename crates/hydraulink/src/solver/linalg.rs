//! Dense linear algebra for the step: the only file that names faer's solver types.
//!
//! [`DenseLu`] owns an `n × n` column-major matrix, its LU factors with partial pivoting, the
//! permutation and the scratch memory, all allocated once in [`DenseLu::new`]. `factor` and
//! `solve_in_place` allocate nothing and run sequentially (`Par::Seq`).
//!
//! **Small systems.** faer's LU is built for large matrices; for the systems of a real-time
//! machine model (n ≈ 5–30) its per-call dispatch (stack, permutation objects, blocked
//! triangular kernels) costs several times the arithmetic: measured with callgrind on the
//! quick-return model (n = 8), faer's `lu_in_place` + `solve_in_place` took 20 % of all
//! instructions of a run, ≈ 1,300 instructions per 8 × 8 solve. Below [`SMALL_N`] we therefore
//! factor and substitute with the textbook unblocked Doolittle loop (partial pivoting, the same
//! algorithm faer uses below its recursion threshold), and above it we call faer. The two paths
//! are cross-checked in the tests of this file.
//!
//! **One LU kernel.** [`lu_factor_in_place`] and [`lu_solve_in_place`] are that unblocked kernel,
//! generic over the scalar (`f64`, or a dual number pivoting on its real part, as the
//! double-step position solves need) and over the right-hand side (dual right-hand sides against
//! `f64` factors, as the multi-rate sub-integration needs). [`DenseLu`] calls them below
//! [`SMALL_N`]; the double-step and multi-rate formulations call them on their small systems.
//! Every factorization refuses a non-finite entry (an error, never a NaN solution).

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::{factor, solve};
use faer::perm::PermRef;
use faer::{MatMut, MatRef, Par};
use std::ops::{Div, Mul};

use crate::solver::real::Real;

/// The factorization failed: a zero or non-finite pivot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SingularMatrix {
    /// Column of the failed pivot.
    pub column: usize,
}

/// Why a dense kernel refused its input or gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// A NaN or infinite matrix entry (the first one in row-major order).
    #[error("non-finite matrix entry at row {row}, column {column}")]
    NonFiniteMatrix {
        /// Row of the entry.
        row: usize,
        /// Column of the entry.
        column: usize,
    },
    /// A NaN or infinite right-hand side entry.
    #[error("non-finite right-hand side entry at row {row}")]
    NonFiniteRhs {
        /// Row of the entry.
        row: usize,
    },
    /// The iteration (SVD, eigen-solver) did not converge within its cap.
    #[error("the iteration did not converge")]
    NoConvergence,
    /// Finite input, but the solution overflows.
    #[error("the solution overflows")]
    Overflow,
}

/// The first non-finite entry of `a`, in row-major order.
pub fn first_non_finite(a: &nalgebra::DMatrix<f64>) -> Option<(usize, usize)> {
    (0..a.nrows())
        .flat_map(|i| (0..a.ncols()).map(move |j| (i, j)))
        .find(|&(i, j)| !a[(i, j)].is_finite())
}

/// Minimum-norm least-squares solution of `a x = b` by SVD (singular values below 1e-12 of the
/// largest are dropped). For the initialization and the linearization only: it allocates.
///
/// Never panics and never loops: an empty `a` gives x = 0 (the minimum-norm solution of no
/// equations, or of no unknowns); non-finite entries are refused; the SVD's iterations are capped.
pub fn try_pinv_solve(
    a: &nalgebra::DMatrix<f64>,
    b: &nalgebra::DVector<f64>,
) -> Result<nalgebra::DVector<f64>, KernelError> {
    if let Some((row, column)) = first_non_finite(a) {
        return Err(KernelError::NonFiniteMatrix { row, column });
    }
    if let Some(row) = b.iter().position(|x| !x.is_finite()) {
        return Err(KernelError::NonFiniteRhs { row });
    }
    if a.nrows() == 0 || a.ncols() == 0 {
        return Ok(nalgebra::DVector::zeros(a.ncols()));
    }
    // nalgebra's `svd` iterates without a cap (an infinite entry never converges); the same
    // tolerance (5 ε) with a cap
    let max_niter = 200 * (a.nrows() + a.ncols());
    let svd = a
        .clone()
        .try_svd(true, true, 5.0 * f64::EPSILON, max_niter)
        .ok_or(KernelError::NoConvergence)?;
    let smax = svd.singular_values.max();
    let x = svd
        .solve(b, 1e-12 * smax.max(1e-300))
        .unwrap_or_else(|_| nalgebra::DVector::zeros(a.ncols()));
    if x.iter().any(|v| !v.is_finite()) {
        return Err(KernelError::Overflow);
    }
    Ok(x)
}

/// Singular values of `a`, descending, as nalgebra's `svd(false, false)` gives them, but never
/// panicking or looping: empty for an empty `a`, all NaN (so that no rank test counts them) for a
/// non-finite `a` or a non-converged SVD.
pub fn singular_values(a: &nalgebra::DMatrix<f64>) -> nalgebra::DVector<f64> {
    let k = a.nrows().min(a.ncols());
    if k == 0 {
        return nalgebra::DVector::zeros(0);
    }
    if first_non_finite(a).is_some() {
        return nalgebra::DVector::from_element(k, f64::NAN);
    }
    let max_niter = 200 * (a.nrows() + a.ncols());
    a.clone()
        .try_svd(false, false, 5.0 * f64::EPSILON, max_niter)
        .map_or_else(
            || nalgebra::DVector::from_element(k, f64::NAN),
            |svd| svd.singular_values,
        )
}

/// [`try_pinv_solve`] where a failure is left to the caller's finiteness checks: on a refused
/// input or a non-converged SVD every entry of the result is NaN.
pub fn pinv_solve(
    a: &nalgebra::DMatrix<f64>,
    b: &nalgebra::DVector<f64>,
) -> nalgebra::DVector<f64> {
    try_pinv_solve(a, b).unwrap_or_else(|_| nalgebra::DVector::from_element(a.ncols(), f64::NAN))
}

/// Eigenvalues and right eigenvectors (columns) of a real square matrix, by faer's non-symmetric
/// eigen-solver (Hessenberg QR). For the linearization only: it allocates. `None` if the QR
/// iteration does not converge or `a` has a non-finite entry.
#[allow(clippy::type_complexity)]
pub fn eigen_real(
    a: &nalgebra::DMatrix<f64>,
) -> Option<(
    Vec<nalgebra::Complex<f64>>,
    nalgebra::DMatrix<nalgebra::Complex<f64>>,
)> {
    if first_non_finite(a).is_some() {
        return None;
    }
    let n = a.nrows();
    let m = faer::Mat::<f64>::from_fn(n, n, |i, j| a[(i, j)]);
    let e = faer::linalg::solvers::Eigen::new_from_real(m.as_ref()).ok()?;
    let s = e.S();
    let u = e.U();
    let vals = (0..n)
        .map(|i| {
            let c = s[i];
            nalgebra::Complex::new(c.re, c.im)
        })
        .collect();
    let vecs = nalgebra::DMatrix::from_fn(n, n, |i, j| {
        let c = u[(i, j)];
        nalgebra::Complex::new(c.re, c.im)
    });
    Some((vals, vecs))
}

/// Dimension up to which the unblocked kernel is used instead of faer: below it faer's per-call
/// overhead outweighs its blocking (the global formulations' 39–65 unknowns factor about twice
/// as fast unblocked, since the kernel skips the zeros of their block-sparse tangents).
pub const SMALL_N: usize = 80;

/// Dimension from which the substitutions of the unblocked kernel run in a copy compiled for
/// AVX2 (4-wide instead of SSE2's 2-wide vectors; the same operations in the same order, so the
/// results are bit-identical), when the CPU has it.
pub const AVX2_MIN_N: usize = 16;

/// Whether `x` is exactly zero in every part, so that an update it multiplies can be skipped:
/// only for `f64` (num-dual compares real parts only, and a dual zero can carry a derivative).
#[inline(always)]
fn exactly_zero<S: Real>(x: S) -> bool {
    S::NDERIV == 0 && x.re() == 0.0
}

/// LU factorization with partial pivoting, P A = L U, of the column-major `n × n` matrix `a`
/// (`a[j * n + i]` = A_ij), in place: the unit L below the diagonal, U on and above it.
/// `ipiv[k]` is the row swapped with row k at step k (pivot on the real part). Right-looking
/// unblocked Doolittle elimination, column-oriented. Returns the smallest |pivot|.
///
/// Fails on a zero pivot, on a non-finite entry (every entry of A is read, as a pivot candidate
/// or as a row of U, before it can reach the factors), and on a pivot whose reciprocal overflows.
/// Allocation-free.
pub fn lu_factor_in_place<S: Real>(
    a: &mut [S],
    n: usize,
    ipiv: &mut [usize],
) -> Result<f64, SingularMatrix> {
    let a = &mut a[..n * n];
    let mut min_pivot = f64::INFINITY;
    for k in 0..n {
        let singular = Err(SingularMatrix { column: k });
        // pivot: largest |a_ik|, i ≥ k, in column k
        let (mut piv, mut best) = (k, 0.0f64);
        for (i, v) in a[k * n + k..(k + 1) * n].iter().enumerate() {
            let m = v.re().abs();
            if !m.is_finite() {
                return singular;
            }
            if m > best {
                best = m;
                piv = k + i;
            }
        }
        if best == 0.0 {
            return singular;
        }
        ipiv[k] = piv;
        if piv != k {
            for col in a.chunks_exact_mut(n) {
                col.swap(k, piv);
            }
        }
        // column-oriented elimination: l = a[k+1.., k] / a_kk, then a[k+1.., j] -= l a_kj
        let (left, right) = a.split_at_mut((k + 1) * n);
        let colk = &mut left[k * n..];
        let d = S::one() / colk[k];
        if !d.re().is_finite() {
            return singular;
        }
        // the multipliers end at the last nonzero of the column: the update skips the zero
        // tail (a banded or block-sparse matrix pays for its profile only)
        let mut end = k + 1;
        for (i, x) in colk[k + 1..].iter_mut().enumerate() {
            if !exactly_zero(*x) {
                *x *= d;
                end = k + 2 + i;
            }
        }
        let l = &colk[k + 1..end];
        for colj in right.chunks_exact_mut(n) {
            let akj = colj[k];
            if !akj.re().is_finite() {
                return singular;
            }
            if !exactly_zero(akj) {
                for (x, li) in colj[k + 1..end].iter_mut().zip(l.iter()) {
                    *x -= *li * akj;
                }
            }
        }
        min_pivot = min_pivot.min(best);
    }
    Ok(min_pivot)
}

/// [`lu_factor_in_place`] of a row-major `n × n` matrix (`a[i * n + j]` = A_ij): transposed in
/// place to the kernel's column-major layout first, so `a` holds column-major factors after.
pub fn lu_factor_row_major_in_place<S: Real>(
    a: &mut [S],
    n: usize,
    ipiv: &mut [usize],
) -> Result<f64, SingularMatrix> {
    for i in 0..n {
        for j in i + 1..n {
            a.swap(i * n + j, j * n + i);
        }
    }
    lu_factor_in_place(a, n, ipiv)
}

/// Forward substitution with the unit L, then back substitution with U, of the column-major
/// factors `a` (n × n), in place on the permuted right-hand side `y`.
#[inline(always)]
fn substitute<S: Real, B: Real + Mul<S, Output = B> + Div<S, Output = B>>(
    a: &[S],
    n: usize,
    y: &mut [B],
) {
    if n == 0 {
        return;
    }
    // forward substitution with unit L, column by column
    for (j, col) in a.chunks_exact(n).enumerate() {
        let yj = y[j];
        if !exactly_zero(yj) {
            for (yi, lij) in y[j + 1..].iter_mut().zip(col[j + 1..].iter()) {
                *yi -= yj * *lij;
            }
        }
    }
    // back substitution with U, column by column
    for (j, col) in a.chunks_exact(n).enumerate().rev() {
        y[j] = y[j] / col[j];
        let yj = y[j];
        for (yi, uij) in y[..j].iter_mut().zip(col[..j].iter()) {
            *yi -= yj * *uij;
        }
    }
}

/// Applies the row interchanges `ipiv` of [`lu_factor_in_place`] to `y`, in order.
#[inline(always)]
fn permute<B: Copy>(ipiv: &[usize], y: &mut [B]) {
    for (k, &p) in ipiv.iter().enumerate() {
        if p != k {
            y.swap(k, p);
        }
    }
}

/// Solves A x = b with the factors and interchanges of [`lu_factor_in_place`] (or
/// [`lu_factor_row_major_in_place`]); `b` holds b on entry and x on exit. The right-hand side
/// may be dual against `f64` factors. Allocation-free.
pub fn lu_solve_in_place<S: Real, B: Real + Mul<S, Output = B> + Div<S, Output = B>>(
    lu: &[S],
    n: usize,
    ipiv: &[usize],
    b: &mut [B],
) {
    let y = &mut b[..n];
    permute(&ipiv[..n], y);
    substitute(&lu[..n * n], n, y);
}

/// [`substitute`] in `f64`, compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn substitute_avx2(a: &[f64], n: usize, y: &mut [f64]) {
    substitute(a, n, y)
}

/// The column stride of [`DenseLu`]'s inverse: n rounded up to a multiple of 4, so every column
/// is whole groups of four (one AVX2 register each).
fn inverse_stride(n: usize) -> usize {
    n.div_ceil(4).max(1) * 4
}

/// out = A b for the column-major matrix `a` with column stride `out.len()` (a multiple of 4)
/// and b.len() columns, column by column in groups of four rows.
#[inline(always)]
fn columns_times(a: &[f64], b: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for (col, bj) in a.chunks_exact(out.len()).zip(b.iter()) {
        for (o, c) in out.chunks_exact_mut(4).zip(col.chunks_exact(4)) {
            for (ok, ck) in o.iter_mut().zip(c.iter()) {
                *ok += ck * bj;
            }
        }
    }
}

/// [`columns_times`] for a column stride LD known at compile time: the sums stay in registers
/// (LD/4 AVX2 registers) for the whole sweep instead of being loaded and stored per column. Each
/// row sums the same products in the same order, so the result is the same to the bit.
#[inline(always)]
fn columns_times_fixed<const LD: usize>(a: &[f64], b: &[f64], out: &mut [f64]) {
    let mut acc = [0.0f64; LD];
    for (col, bj) in a.chunks_exact(LD).zip(b.iter()) {
        for (s, c) in acc.iter_mut().zip(col.iter()) {
            *s += c * bj;
        }
    }
    out[..LD].copy_from_slice(&acc);
}

/// [`columns_times`] with the strides of up to 32 rows by [`columns_times_fixed`].
#[inline(always)]
fn columns_times_by_stride(a: &[f64], b: &[f64], out: &mut [f64]) {
    match out.len() {
        4 => columns_times_fixed::<4>(a, b, out),
        8 => columns_times_fixed::<8>(a, b, out),
        12 => columns_times_fixed::<12>(a, b, out),
        16 => columns_times_fixed::<16>(a, b, out),
        20 => columns_times_fixed::<20>(a, b, out),
        24 => columns_times_fixed::<24>(a, b, out),
        28 => columns_times_fixed::<28>(a, b, out),
        32 => columns_times_fixed::<32>(a, b, out),
        _ => columns_times(a, b, out),
    }
}

/// [`columns_times_by_stride`], compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn columns_times_avx2(a: &[f64], b: &[f64], out: &mut [f64]) {
    columns_times_by_stride(a, b, out)
}

/// LU factorization with partial pivoting, in caller-owned (pre-allocated) memory.
pub struct DenseLu {
    n: usize,
    /// The matrix, then its factors, column-major (`a[j * n + i]` = A_ij).
    a: Vec<f64>,
    /// Row interchanges of the small kernel ([`lu_factor_in_place`]).
    ipiv: Vec<usize>,
    /// faer's row permutation and its inverse (above [`SMALL_N`]).
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    mem: MemBuffer,
    factored: bool,
    /// A⁻¹, column-major with the column stride n rounded up to a multiple of 4 (the padding
    /// rows are 0), formed by [`DenseLu::factor`] when [`DenseLu::keep_inverse`] asked for it
    /// (else empty).
    inverse: Vec<f64>,
    /// Scratch of the product with the inverse: b (n), then x (the stride).
    scratch: Vec<f64>,
}

impl std::fmt::Debug for DenseLu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseLu")
            .field("n", &self.n)
            .field("factored", &self.factored)
            .finish()
    }
}

impl DenseLu {
    /// Allocates everything for an `n × n` system.
    pub fn new(n: usize) -> Self {
        let req = StackReq::any_of(&[
            factor::lu_in_place_scratch::<usize, f64>(n, n, Par::Seq, Default::default()),
            solve::solve_in_place_scratch::<usize, f64>(n, 1, Par::Seq),
        ]);
        DenseLu {
            n,
            a: vec![0.0; n * n],
            ipiv: vec![0; n],
            perm: vec![0; n],
            perm_inv: vec![0; n],
            mem: MemBuffer::new(req),
            factored: false,
            inverse: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// From now on [`DenseLu::factor`] also forms A⁻¹ from the factors (n more substitutions),
    /// and [`DenseLu::solve_in_place`] is the product x = A⁻¹ b: n² multiply-adds in one sweep
    /// over contiguous columns instead of the two triangular substitutions with their row
    /// interchanges, about a sixth of the instructions at n = 19. For a matrix factored once and
    /// solved with many times: the modified-Newton tangent of a large system
    /// (`Buffers::new`). An increment then differs from the substituted one by round-off
    /// amplified by the condition number, as an LU solve's does; the Newton iteration's own
    /// test still decides convergence on the exact residual. Allocates here, never later.
    pub fn keep_inverse(&mut self) {
        let ld = inverse_stride(self.n);
        self.inverse = vec![0.0; ld * self.n];
        self.scratch = vec![0.0; self.n + ld];
    }

    /// Whether [`DenseLu::keep_inverse`] was asked for.
    pub fn keeps_inverse(&self) -> bool {
        !self.inverse.is_empty()
    }

    /// Dimension.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The matrix to fill before [`DenseLu::factor`] (its old content is garbage after a factor).
    pub fn matrix_mut(&mut self) -> MatMut<'_, f64> {
        self.factored = false;
        MatMut::from_column_major_slice_mut(&mut self.a, self.n, self.n)
    }

    /// The matrix as a column-major slice (`[j * n + i]` = A_ij), to fill before `factor`.
    pub fn values_mut(&mut self) -> &mut [f64] {
        self.factored = false;
        &mut self.a
    }

    /// The matrix as a column-major slice, read-only (the factors after `factor`).
    pub fn values(&self) -> &[f64] {
        &self.a
    }

    /// Read access to the matrix (the factors after `factor`).
    pub fn matrix(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.a, self.n, self.n)
    }

    /// Factors the matrix in place. Allocation-free.
    pub fn factor(&mut self) -> Result<(), SingularMatrix> {
        if self.n <= SMALL_N {
            self.factor_small()?;
        } else {
            self.factor_faer()?;
        }
        if self.keeps_inverse() {
            self.form_inverse();
        }
        Ok(())
    }

    /// A⁻¹ column by column, column j = A⁻¹ e_j by the substitutions (see
    /// [`DenseLu::keep_inverse`]).
    fn form_inverse(&mut self) {
        let n = self.n;
        let ld = inverse_stride(n);
        let mut inverse = std::mem::take(&mut self.inverse);
        for (j, col) in inverse.chunks_exact_mut(ld).enumerate() {
            col.fill(0.0);
            col[j] = 1.0;
            self.substitute_in_place(&mut col[..n]);
        }
        self.inverse = inverse;
    }

    /// The unblocked kernel, [`lu_factor_in_place`].
    fn factor_small(&mut self) -> Result<(), SingularMatrix> {
        lu_factor_in_place(&mut self.a, self.n, &mut self.ipiv)?;
        self.factored = true;
        Ok(())
    }

    fn factor_faer(&mut self) -> Result<(), SingularMatrix> {
        let n = self.n;
        // faer does not check its input: refuse a non-finite entry as the small kernel does
        if let Some(k) = self.a.iter().position(|x| !x.is_finite()) {
            return Err(SingularMatrix { column: k / n });
        }
        let stack = MemStack::new(&mut self.mem);
        let _ = factor::lu_in_place(
            MatMut::from_column_major_slice_mut(&mut self.a, n, n),
            &mut self.perm,
            &mut self.perm_inv,
            Par::Seq,
            stack,
            Default::default(),
        );
        for i in 0..self.n {
            let d = self.a[i * n + i];
            if d == 0.0 || !d.is_finite() {
                return Err(SingularMatrix { column: i });
            }
        }
        self.factored = true;
        Ok(())
    }

    /// Whether valid factors are held.
    pub fn is_factored(&self) -> bool {
        self.factored
    }

    /// Solves `A x = b` in place (`rhs` holds b on entry, x on exit). Allocation-free.
    pub fn solve_in_place(&mut self, rhs: &mut [f64]) {
        debug_assert!(self.factored, "DenseLu::solve_in_place before factor");
        if self.keeps_inverse() {
            self.multiply_inverse(rhs);
            return;
        }
        self.substitute_in_place(rhs);
    }

    /// x = A⁻¹ b by the substitutions with the factors.
    fn substitute_in_place(&mut self, rhs: &mut [f64]) {
        if self.n <= SMALL_N {
            self.solve_small(rhs);
        } else {
            self.solve_faer(rhs);
        }
    }

    /// x = A⁻¹ b with the formed inverse: x = Σ_j b_j (A⁻¹)_{:,j}.
    fn multiply_inverse(&mut self, rhs: &mut [f64]) {
        let n = self.n;
        let (b, x) = self.scratch.split_at_mut(n);
        b.copy_from_slice(&rhs[..n]);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { columns_times_avx2(&self.inverse, b, x) };
            rhs[..n].copy_from_slice(&x[..n]);
            return;
        }
        columns_times(&self.inverse, b, x);
        rhs[..n].copy_from_slice(&x[..n]);
    }

    fn solve_small(&self, rhs: &mut [f64]) {
        let n = self.n;
        let y = &mut rhs[..n];
        permute(&self.ipiv, y);
        #[cfg(target_arch = "x86_64")]
        if n >= AVX2_MIN_N && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { substitute_avx2(&self.a, n, y) };
            return;
        }
        substitute(&self.a, n, y);
    }

    fn solve_faer(&mut self, rhs: &mut [f64]) {
        let n = self.n;
        let perm = unsafe { PermRef::new_unchecked(&self.perm, &self.perm_inv, n) };
        let stack = MemStack::new(&mut self.mem);
        let b = MatMut::from_column_major_slice_mut(rhs, n, 1);
        let lu = MatRef::from_column_major_slice(&self.a, n, n);
        solve::solve_in_place(lu, lu, perm, b, Par::Seq, stack);
    }
}

/// Cholesky factorization A = L Lᵀ of a symmetric positive definite matrix, in caller-owned
/// (pre-allocated) memory: half the work of [`DenseLu`] and no pivoting, for the projection
/// matrices M + (Δt²/4) α Φ_qᵀ Φ_q. Unblocked right-looking kernel (the systems are small);
/// only the lower triangle of the matrix is read.
#[derive(Debug, Clone, Default)]
pub struct DenseCholesky {
    n: usize,
    /// The matrix, then L in its lower triangle, column-major (`a[j * n + i]` = A_ij).
    a: Vec<f64>,
    factored: bool,
}

impl DenseCholesky {
    /// Allocates everything for an `n × n` system.
    pub fn new(n: usize) -> Self {
        DenseCholesky {
            n,
            a: vec![0.0; n * n],
            factored: false,
        }
    }

    /// Dimension.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The matrix as a column-major slice (`[j * n + i]` = A_ij), to fill before `factor`
    /// (the lower triangle is enough).
    pub fn values_mut(&mut self) -> &mut [f64] {
        self.factored = false;
        &mut self.a
    }

    /// Factors in place. Fails on a pivot that is not positive and finite (the matrix is not
    /// numerically positive definite). Allocation-free.
    pub fn factor(&mut self) -> Result<(), SingularMatrix> {
        // the small projection matrices (a machine's joint coordinates) by a kernel of fixed size
        // (`cholesky_fixed`), the same operations in the same order
        match self.n {
            1 => return self.factor_fixed::<1>(),
            2 => return self.factor_fixed::<2>(),
            3 => return self.factor_fixed::<3>(),
            4 => return self.factor_fixed::<4>(),
            5 => return self.factor_fixed::<5>(),
            6 => return self.factor_fixed::<6>(),
            7 => return self.factor_fixed::<7>(),
            8 => return self.factor_fixed::<8>(),
            _ => {}
        }
        self.factor_general()
    }

    /// [`DenseCholesky::factor`] for any n: the column of L ends at its last nonzero, and the
    /// update skips the zero tail.
    fn factor_general(&mut self) -> Result<(), SingularMatrix> {
        let n = self.n;
        let a = &mut self.a;
        for k in 0..n {
            let d = a[k * n + k];
            if d.is_nan() || d <= 0.0 || !d.is_finite() {
                return Err(SingularMatrix { column: k });
            }
            let lkk = d.sqrt();
            let (left, right) = a.split_at_mut((k + 1) * n);
            let colk = &mut left[k * n..];
            colk[k] = lkk;
            let inv = 1.0 / lkk;
            // the column of L ends at its last nonzero: the update skips the zero tail
            let mut end = k + 1;
            for (i, x) in colk[k + 1..].iter_mut().enumerate() {
                if *x != 0.0 {
                    *x *= inv;
                    end = k + 2 + i;
                }
            }
            let l = &colk[k + 1..end];
            // a[j.., j] −= L_jk L[j.., k] for k < j < end (lower triangle only)
            for (jj, colj) in right.chunks_exact_mut(n).take(end - k - 1).enumerate() {
                let ljk = l[jj];
                if ljk != 0.0 {
                    let j = k + 1 + jj;
                    for (x, li) in colj[j..end].iter_mut().zip(l[jj..].iter()) {
                        *x -= li * ljk;
                    }
                }
            }
        }
        self.factored = true;
        Ok(())
    }

    /// [`DenseCholesky::factor`] for n = N known at compile time: the loops unroll and the
    /// indices need no checks. Each entry sees the operations of the general kernel in its order
    /// (the general kernel's skipped products with an exact zero leave an entry unchanged), so the
    /// factors are the same to the bit.
    fn factor_fixed<const N: usize>(&mut self) -> Result<(), SingularMatrix> {
        let a = &mut self.a[..N * N];
        for k in 0..N {
            let d = a[k * N + k];
            if d.is_nan() || d <= 0.0 || !d.is_finite() {
                return Err(SingularMatrix { column: k });
            }
            let lkk = d.sqrt();
            a[k * N + k] = lkk;
            let inv = 1.0 / lkk;
            for i in k + 1..N {
                a[k * N + i] *= inv;
            }
            // a[j.., j] −= L_jk L[j.., k] for j > k (lower triangle only)
            for j in k + 1..N {
                let ljk = a[k * N + j];
                for i in j..N {
                    a[j * N + i] -= a[k * N + i] * ljk;
                }
            }
        }
        self.factored = true;
        Ok(())
    }

    /// [`DenseCholesky::solve_in_place`] for n = N known at compile time (see
    /// [`DenseCholesky::factor_fixed`]): the same operations in the same order.
    fn solve_fixed<const N: usize>(&self, rhs: &mut [f64]) {
        let (a, y) = (&self.a[..N * N], &mut rhs[..N]);
        for j in 0..N {
            y[j] /= a[j * N + j];
            let yj = y[j];
            for i in j + 1..N {
                y[i] -= a[j * N + i] * yj;
            }
        }
        for j in (0..N).rev() {
            // −0.0: the start of `Iterator::sum`, which the general kernel uses
            let mut s = -0.0;
            for i in j + 1..N {
                s += a[j * N + i] * y[i];
            }
            y[j] = (y[j] - s) / a[j * N + j];
        }
    }

    /// Solves `A x = b` in place (`rhs` holds b on entry, x on exit). Allocation-free.
    pub fn solve_in_place(&self, rhs: &mut [f64]) {
        debug_assert!(self.factored, "DenseCholesky::solve_in_place before factor");
        match self.n {
            1 => return self.solve_fixed::<1>(rhs),
            2 => return self.solve_fixed::<2>(rhs),
            3 => return self.solve_fixed::<3>(rhs),
            4 => return self.solve_fixed::<4>(rhs),
            5 => return self.solve_fixed::<5>(rhs),
            6 => return self.solve_fixed::<6>(rhs),
            7 => return self.solve_fixed::<7>(rhs),
            8 => return self.solve_fixed::<8>(rhs),
            _ => {}
        }
        self.solve_general(rhs)
    }

    /// [`DenseCholesky::solve_in_place`] for any n.
    fn solve_general(&self, rhs: &mut [f64]) {
        let n = self.n;
        let y = &mut rhs[..n];
        // L y = b, column by column
        for (j, col) in self.a.chunks_exact(n).enumerate() {
            y[j] /= col[j];
            let yj = y[j];
            if yj != 0.0 {
                for (yi, lij) in y[j + 1..].iter_mut().zip(col[j + 1..].iter()) {
                    *yi -= lij * yj;
                }
            }
        }
        // Lᵀ x = y: x_j = (y_j − Σ_{i>j} L_ij x_i) / L_jj
        for (j, col) in self.a.chunks_exact(n).enumerate().rev() {
            let s: f64 = col[j + 1..]
                .iter()
                .zip(y[j + 1..].iter())
                .map(|(l, x)| l * x)
                .sum();
            y[j] = (y[j] - s) / col[j];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_small_nonsymmetric_system() {
        let mut lu = DenseLu::new(3);
        let a = [[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1e-3]];
        {
            let mut m = lu.matrix_mut();
            for i in 0..3 {
                for j in 0..3 {
                    m[(i, j)] = a[i][j];
                }
            }
        }
        lu.factor().unwrap();
        let x = [1.0, -2.0, 0.5];
        let mut b = [0.0; 3];
        for i in 0..3 {
            for j in 0..3 {
                b[i] += a[i][j] * x[j];
            }
        }
        lu.solve_in_place(&mut b);
        for i in 0..3 {
            assert!((b[i] - x[i]).abs() < 1e-12);
        }
    }

    fn random_matrix(n: usize, seed: u64) -> Vec<f64> {
        // xorshift: deterministic, no dependency
        let mut x = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
        (0..n * n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x as f64 / u64::MAX as f64) * 2.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn small_kernel_agrees_with_faer() {
        for (n, seed) in [(1, 1), (3, 2), (8, 3), (17, 4), (32, 5), (SMALL_N, 6)] {
            let a = random_matrix(n, seed);
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let mut small = DenseLu::new(n);
            let mut big = DenseLu::new(n);
            for lu in [&mut small, &mut big] {
                let mut m = lu.matrix_mut();
                for i in 0..n {
                    for j in 0..n {
                        m[(i, j)] = a[i * n + j];
                    }
                }
            }
            small.factor_small().unwrap();
            big.factor_faer().unwrap();
            big.factored = true;
            let (mut xs, mut xb) = (b.clone(), b.clone());
            small.solve_small(&mut xs);
            big.solve_faer(&mut xb);
            for i in 0..n {
                assert!(
                    (xs[i] - xb[i]).abs() <= 1e-10 * (1.0 + xb[i].abs()),
                    "n {n}: {} vs {}",
                    xs[i],
                    xb[i]
                );
            }
            // and the residual is small
            for i in 0..n {
                let r: f64 = (0..n).map(|j| a[i * n + j] * xs[j]).sum::<f64>() - b[i];
                assert!(r.abs() < 1e-9, "n {n}: residual {r}");
            }
        }
    }

    /// A kept inverse solves as the substitutions do, to round-off, whatever n modulo 4 (the
    /// padded column stride), in both LU paths, and after a refactorization of another matrix.
    #[test]
    fn a_kept_inverse_solves_as_the_substitutions() {
        for (n, seed) in [
            (1, 11),
            (3, 12),
            (4, 13),
            (5, 14),
            (19, 15),
            (SMALL_N + 1, 16),
        ] {
            let mut plain = DenseLu::new(n);
            let mut inv = DenseLu::new(n);
            inv.keep_inverse();
            assert!(inv.keeps_inverse() && !plain.keeps_inverse());
            for round in 0..2 {
                let a = random_matrix(n, seed + 100 * round);
                for lu in [&mut plain, &mut inv] {
                    lu.values_mut().copy_from_slice(&a);
                    lu.factor().expect("regular");
                }
                let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.71 + 0.3).cos()).collect();
                let (mut xp, mut xi) = (b.clone(), b.clone());
                plain.solve_in_place(&mut xp);
                inv.solve_in_place(&mut xi);
                let scale = xp.iter().fold(1.0f64, |m, x| m.max(x.abs()));
                for (p, i) in xp.iter().zip(xi.iter()) {
                    assert!((p - i).abs() <= 1e-10 * scale, "n {n}: {p} vs {i}");
                }
            }
        }
    }

    #[test]
    fn faer_path_is_used_above_the_threshold() {
        let n = SMALL_N + 3;
        let a = random_matrix(n, 9);
        let mut lu = DenseLu::new(n);
        {
            let mut m = lu.matrix_mut();
            for i in 0..n {
                for j in 0..n {
                    m[(i, j)] = a[i * n + j] + if i == j { 4.0 } else { 0.0 };
                }
            }
        }
        lu.factor().unwrap();
        let mut x = vec![1.0; n];
        lu.solve_in_place(&mut x);
        for i in 0..n {
            let r: f64 = (0..n)
                .map(|j| (a[i * n + j] + if i == j { 4.0 } else { 0.0 }) * x[j])
                .sum::<f64>()
                - 1.0;
            assert!(r.abs() < 1e-10);
        }
    }

    #[test]
    fn one_kernel_for_row_major_and_dual_systems() {
        use num_dual::Dual64;
        // row-major A (n = 4), f64 factors, a dual right-hand side: x = A⁻¹ b and ẋ = A⁻¹ ḃ
        let n = 4;
        let a = random_matrix(n, 21);
        let mut lu = a.clone();
        let mut ipiv = vec![0; n];
        lu_factor_row_major_in_place(&mut lu, n, &mut ipiv).unwrap();
        let x: Vec<Dual64> = (0..n)
            .map(|i| Dual64::new(1.0 + i as f64, 0.5 - i as f64))
            .collect();
        let mut b = vec![Dual64::from(0.0); n];
        for i in 0..n {
            for j in 0..n {
                b[i] += x[j] * a[i * n + j];
            }
        }
        lu_solve_in_place(&lu, n, &ipiv, &mut b);
        for i in 0..n {
            assert!((b[i].re - x[i].re).abs() < 1e-12, "{i}: {:?}", b[i]);
            assert!((b[i].eps - x[i].eps).abs() < 1e-12, "{i}: {:?}", b[i]);
        }
        // dual factors: a derivative on a zero entry is kept (not skipped as a zero)
        let ad = [
            Dual64::new(2.0, 0.0),
            Dual64::new(0.0, 1.0),
            Dual64::new(1.0, 0.0),
            Dual64::new(3.0, 0.0),
        ];
        let mut lu = ad;
        let mut ipiv = [0; 2];
        lu_factor_in_place(&mut lu, 2, &mut ipiv).unwrap();
        // A = [[2, 1], [ε, 3]] (column-major above); A x = [1, 0]: x₀ = 3/(6 − ε) ≈ ½ + ε/12
        let mut rhs = [Dual64::from(1.0), Dual64::from(0.0)];
        lu_solve_in_place(&lu, 2, &ipiv, &mut rhs);
        assert!((rhs[0].re - 0.5).abs() < 1e-15 && (rhs[0].eps - 1.0 / 12.0).abs() < 1e-15);
        // n = 0 is a no-op
        lu_solve_in_place::<f64, f64>(&[], 0, &[], &mut []);
    }

    #[test]
    fn kernels_refuse_non_finite_input() {
        // a NaN off the diagonal in the last row, an infinity on it, in both LU paths
        for n in [3, SMALL_N + 2] {
            for bad in [f64::NAN, f64::INFINITY] {
                let mut lu = DenseLu::new(n);
                {
                    let mut m = lu.matrix_mut();
                    for i in 0..n {
                        m[(i, i)] = 1.0;
                    }
                    m[(n - 1, 0)] = bad;
                }
                assert!(lu.factor().is_err(), "n {n}, {bad}");
            }
        }
        let a = nalgebra::DMatrix::from_row_slice(2, 2, &[1.0, 0.0, f64::NAN, 1.0]);
        let b = nalgebra::DVector::from_column_slice(&[1.0, 1.0]);
        assert_eq!(
            try_pinv_solve(&a, &b),
            Err(KernelError::NonFiniteMatrix { row: 1, column: 0 })
        );
        assert!(pinv_solve(&a, &b).iter().all(|x| x.is_nan()));
        let eye = nalgebra::DMatrix::<f64>::identity(2, 2);
        let inf = nalgebra::DVector::from_column_slice(&[1.0, f64::INFINITY]);
        assert_eq!(
            try_pinv_solve(&eye, &inf),
            Err(KernelError::NonFiniteRhs { row: 1 })
        );
        // nothing to solve: the minimum-norm solution is zero (nalgebra's SVD panics here)
        let empty = nalgebra::DMatrix::<f64>::zeros(0, 3);
        assert_eq!(
            try_pinv_solve(&empty, &nalgebra::DVector::zeros(0)),
            Ok(nalgebra::DVector::zeros(3))
        );
        assert!(eigen_real(&a).is_none());
        // Cholesky: a NaN below the diagonal reaches a later pivot
        let mut ch = DenseCholesky::new(2);
        ch.values_mut().copy_from_slice(&[4.0, f64::NAN, 0.0, 4.0]);
        assert_eq!(ch.factor(), Err(SingularMatrix { column: 1 }));
        assert!(singular_values(&a).iter().all(|x| x.is_nan()));
        assert_eq!(singular_values(&empty).len(), 0);
    }

    #[test]
    fn reports_a_singular_matrix() {
        let mut lu = DenseLu::new(2);
        lu.matrix_mut().fill(1.0);
        assert!(lu.factor().is_err());
    }

    /// A = B Bᵀ + I, column-major: symmetric positive definite.
    fn spd_matrix(n: usize, seed: u64) -> Vec<f64> {
        let b = random_matrix(n, seed);
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let mut v = if i == j { 1.0 } else { 0.0 };
                for k in 0..n {
                    v += b[k * n + i] * b[k * n + j];
                }
                a[j * n + i] = v;
            }
        }
        a
    }

    /// The fixed-size Cholesky kernels (n ≤ 8) give the general kernel's factors and solutions
    /// to the bit, also on matrices with zero couplings (the general kernel's skipped tails).
    #[test]
    fn fixed_size_cholesky_is_the_general_kernel_bit_for_bit() {
        for n in 1..=8 {
            for (seed, sparse) in [(5, false), (9, true)] {
                let mut a = spd_matrix(n, seed);
                if sparse {
                    // decouple the last two unknowns from the first: zero tails in L
                    for i in 0..n {
                        for j in 0..n {
                            if (i + 2 < n && j + 2 >= n) || (j + 2 < n && i + 2 >= n) {
                                a[j * n + i] = 0.0;
                            }
                        }
                    }
                }
                let (mut fixed, mut general) = (DenseCholesky::new(n), DenseCholesky::new(n));
                fixed.values_mut().copy_from_slice(&a);
                general.values_mut().copy_from_slice(&a);
                fixed.factor().unwrap();
                general.factor_general().unwrap();
                for j in 0..n {
                    for i in j..n {
                        assert_eq!(
                            fixed.a[j * n + i].to_bits(),
                            general.a[j * n + i].to_bits(),
                            "n = {n}: L_{i}{j}"
                        );
                    }
                }
                let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.71).cos()).collect();
                let (mut x1, mut x2) = (b.clone(), b);
                fixed.solve_in_place(&mut x1);
                general.solve_general(&mut x2);
                for i in 0..n {
                    assert_eq!(x1[i].to_bits(), x2[i].to_bits(), "n = {n}: x_{i}");
                }
            }
        }
    }

    /// The product with a kept inverse by the fixed strides (`columns_times_fixed`), in the
    /// default code and in the AVX2 copy where the CPU has it, is the general loop's to the bit,
    /// for every stride it serves and one it does not.
    #[test]
    fn fixed_stride_products_are_the_general_loop_bit_for_bit() {
        for ld in (4..=36).step_by(4) {
            let cols = ld - 1;
            let a = random_matrix(ld, 17 + ld as u64)[..ld * cols].to_vec();
            let b: Vec<f64> = (0..cols).map(|j| (j as f64 * 0.37).sin()).collect();
            let mut general = vec![0.0; ld];
            columns_times(&a, &b, &mut general);
            let mut fixed = vec![0.0; ld];
            columns_times_by_stride(&a, &b, &mut fixed);
            let mut products = vec![("default", fixed)];
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let mut x = vec![0.0; ld];
                // SAFETY: the CPU supports AVX2 (checked just above).
                unsafe { columns_times_avx2(&a, &b, &mut x) };
                products.push(("avx2", x));
            }
            for (code, x) in &products {
                for i in 0..ld {
                    assert_eq!(
                        x[i].to_bits(),
                        general[i].to_bits(),
                        "{code}, stride {ld}: row {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn cholesky_solves_spd_systems_and_rejects_indefinite_ones() {
        for (n, seed) in [(1, 3), (5, 7), (23, 11), (65, 13)] {
            let a = spd_matrix(n, seed);
            let mut ch = DenseCholesky::new(n);
            ch.values_mut().copy_from_slice(&a);
            ch.factor().unwrap();
            let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let mut rhs = vec![0.0; n];
            for i in 0..n {
                for j in 0..n {
                    rhs[i] += a[j * n + i] * x[j];
                }
            }
            ch.solve_in_place(&mut rhs);
            let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for i in 0..n {
                assert!(
                    (rhs[i] - x[i]).abs() < 1e-10 * scale,
                    "n = {n}: x_{i} = {} vs {}",
                    rhs[i],
                    x[i]
                );
            }
        }
        // indefinite: diag(1, −1)
        let mut ch = DenseCholesky::new(2);
        ch.values_mut().copy_from_slice(&[1.0, 0.0, 0.0, -1.0]);
        assert_eq!(ch.factor(), Err(SingularMatrix { column: 1 }));
    }
}
