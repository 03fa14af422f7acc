//! Loop closure: Φ(z) = 0 by a Gauss–Newton with minimum-norm steps over the free coordinates
//! (the others held), through the one Newton (`solver::newton::solve`). Used by the consistent
//! initial state (`crate::pipeline::initialization`), the working range and the equilibrium of
//! `linearize`; here, below them, beside the kinematics it iterates on.

use nalgebra::{DMatrix, DVector};

use crate::mechanics::assembly::Evaluator;
use crate::model::Model;
use crate::solver::linalg::pinv_solve;
use crate::solver::newton::{self, Counters, NewtonProblem, TangentPolicy, Tolerances};

/// Closes the loops, Φ(z) = 0, by Newton with minimum-norm steps Δz_f = −J_fᵀ(J_f J_fᵀ)⁺ Φ over
/// the coordinates `free` (J_f = the columns `free` of Φ_z; the others are held), until
/// ‖Φ‖ < `tol`. `ev` holds the last evaluated positions. Err((‖Φ‖, iterations)) when it does not
/// converge in 50 iterations.
pub(crate) fn close_loops(
    model: &Model,
    ev: &mut Evaluator<f64>,
    z: &mut [f64],
    free: &[usize],
    tol: f64,
) -> Result<(), (f64, u32)> {
    close_loops_with(model, ev, z, free, tol, &mut |_, _, _| {})
}

/// The extra equations of [`close_loops_with`]: `(ev, g, g_z)`.
pub(crate) type ExtraRows<'a> = dyn FnMut(&Evaluator<f64>, &mut Vec<f64>, &mut Vec<f64>) + 'a;

/// [`close_loops`] with more equations g(z) = 0 below Φ (the working range holds cylinder
/// lengths, `mechanics::working_range`): `extra(ev, g, g_z)` appends the values of g at the
/// positions of `ev` to `g` and their Jacobian rows (n entries each, row-major) to `g_z`. With no
/// extra equation the iteration is the one of [`close_loops`], number for number.
pub(crate) fn close_loops_with(
    model: &Model,
    ev: &mut Evaluator<f64>,
    z: &mut [f64],
    free: &[usize],
    tol: f64,
    extra: &mut ExtraRows,
) -> Result<(), (f64, u32)> {
    let n = model.n_coords();
    let mut problem = LoopClosure {
        model,
        ev,
        z,
        free,
        tol,
        extra,
        g: Vec::new(),
        g_z: Vec::new(),
        norm: f64::INFINITY,
        j: DMatrix::zeros(0, 0),
        dz: vec![-0.0; n],
        counters: Counters::default(),
    };
    // full Newton (a tangent at every iteration), converged on ‖Φ‖ < tol, at most 50 increments
    newton::solve(&mut problem, TangentPolicy::FULL, 50).map(|_| ())
}

/// The loop closure of [`close_loops_with`] as a problem of the one Newton
/// (`solver::newton::solve`): minimum-norm increments over the free coordinates, converged on the
/// residual norm.
struct LoopClosure<'a, 'e> {
    model: &'a Model,
    ev: &'a mut Evaluator<f64>,
    z: &'a mut [f64],
    free: &'a [usize],
    tol: f64,
    extra: &'a mut ExtraRows<'e>,
    /// Φ (and the extra rows) at the iterate, and their Jacobian rows (row-major, n columns).
    g: Vec<f64>,
    g_z: Vec<f64>,
    /// ‖g‖ at the iterate.
    norm: f64,
    /// J_f: the free columns of the Jacobian at the iterate.
    j: DMatrix<f64>,
    /// The increment over all n coordinates: −Δz_f on the free ones, −0.0 (the exact identity of
    /// addition) on the held ones.
    dz: Vec<f64>,
    counters: Counters,
}

impl NewtonProblem for LoopClosure<'_, '_> {
    type Error = (f64, u32);
    fn evaluate(&mut self) -> Result<(), (f64, u32)> {
        self.ev.positions(self.model, self.z);
        Ok(())
    }
    fn form_residual(&mut self) -> Result<(), (f64, u32)> {
        self.g.clear();
        self.g.extend_from_slice(&self.ev.constraints.phi);
        self.g_z.clear();
        self.g_z.extend_from_slice(&self.ev.constraints.jac);
        (self.extra)(self.ev, &mut self.g, &mut self.g_z);
        self.norm = DVector::from_column_slice(&self.g).norm();
        if !self.norm.is_finite() {
            return Err((self.norm, self.counters.iterations as u32));
        }
        Ok(())
    }
    fn converges_on_residual(&self) -> bool {
        true
    }
    fn residual_converged(&self) -> bool {
        self.norm < self.tol
    }
    fn tangent_reusable(&self) -> bool {
        false
    }
    fn refresh_tangent(&mut self) -> Result<bool, (f64, u32)> {
        let n = self.model.n_coords();
        self.j =
            DMatrix::from_row_slice(self.g.len(), n, &self.g_z).select_columns(self.free.iter());
        Ok(true)
    }
    fn solve_increment(&mut self) {
        // Δz_f = J_fᵀ (J_f J_fᵀ)⁺ Φ, taken with the minus sign
        let phi = DVector::from_column_slice(&self.g);
        let y = pinv_solve(&(&self.j * self.j.transpose()), &phi);
        let dz = self.j.transpose() * y;
        for (i, &k) in self.free.iter().enumerate() {
            self.dz[k] = -dz[i];
        }
        self.counters.iterations += 1;
    }
    fn iterate(&mut self) -> (&mut [f64], &[f64]) {
        (self.z, &self.dz)
    }
    fn tolerances(&self) -> Tolerances {
        Tolerances::new(&[(self.dz.len(), 0.0)], 0.0)
    }
    fn counters(&mut self) -> &mut Counters {
        &mut self.counters
    }
    fn failure(&mut self, iterations: u32, _reason: &str) -> (f64, u32) {
        (self.norm, iterations)
    }
}
