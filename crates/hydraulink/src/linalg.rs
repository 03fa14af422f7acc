//! Dense linear algebra for the step: the only file that names faer's solver types.
//!
//! [`DenseLu`] owns an `n × n` column-major matrix, its LU factors with partial pivoting, the
//! permutation and the scratch memory, all allocated once in [`DenseLu::new`]. `factor` and
//! `solve_in_place` allocate nothing and run sequentially (`Par::Seq`): our systems are small
//! (tens of unknowns) and threading would only cost.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::{factor, solve};
use faer::perm::PermRef;
use faer::{Mat, MatMut, MatRef, Par};

/// The factorization failed: a zero or non-finite pivot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SingularMatrix {
    /// Column of the failed pivot.
    pub column: usize,
}

/// LU factorization with partial pivoting, in caller-owned (pre-allocated) memory.
pub struct DenseLu {
    n: usize,
    a: Mat<f64>,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    mem: MemBuffer,
    factored: bool,
}

impl std::fmt::Debug for DenseLu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseLu").field("n", &self.n).field("factored", &self.factored).finish()
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
            a: Mat::zeros(n, n),
            perm: vec![0; n],
            perm_inv: vec![0; n],
            mem: MemBuffer::new(req),
            factored: false,
        }
    }

    /// Dimension.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The matrix to fill before [`DenseLu::factor`] (its old content is garbage after a factor).
    pub fn matrix_mut(&mut self) -> MatMut<'_, f64> {
        self.factored = false;
        self.a.as_mut()
    }

    /// Read access to the matrix (the factors after `factor`).
    pub fn matrix(&self) -> MatRef<'_, f64> {
        self.a.as_ref()
    }

    /// Factors the matrix in place. Allocation-free.
    pub fn factor(&mut self) -> Result<(), SingularMatrix> {
        let stack = MemStack::new(&mut self.mem);
        let _ = factor::lu_in_place(
            self.a.as_mut(),
            &mut self.perm,
            &mut self.perm_inv,
            Par::Seq,
            stack,
            Default::default(),
        );
        for i in 0..self.n {
            let d = self.a[(i, i)];
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
        let n = self.n;
        let perm = unsafe { PermRef::new_unchecked(&self.perm, &self.perm_inv, n) };
        let stack = MemStack::new(&mut self.mem);
        let b = MatMut::from_column_major_slice_mut(rhs, n, 1);
        solve::solve_in_place(self.a.as_ref(), self.a.as_ref(), perm, b, Par::Seq, stack);
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

    #[test]
    fn reports_a_singular_matrix() {
        let mut lu = DenseLu::new(2);
        lu.matrix_mut().fill(1.0);
        assert!(lu.factor().is_err());
    }
}
