//! Double-step semi-recursive formulation with coordinate partitioning (000 §2.2, reference note
//! 000-A.2), coupled monolithically with the hydraulics and integrated with the trapezoidal rule
//! (000 §4).
//!
//! # Partition
//! The relative coordinates are split into m dependent and f = n − m independent ones,
//! z = [z_d ; z_i], by Gaussian elimination with full pivoting on Φ_z (m × n): the pivot columns
//! are dependent, the others independent. Pivots below [`RANK_TOLERANCE`] × max|Φ_z| end the
//! elimination, so redundant rows (a 3-D cut joint in plane motion) are dropped: m is the rank of
//! Φ_z, and only the pivot rows of Φ (the "rows" of the partition) are solved; the others hold
//! identically. Φ_z^d (m × m) and Φ_z^i (m × f) are the pivot rows of Φ_z restricted to the
//! dependent and independent columns.
//!
//! # Velocities and accelerations (000 eqs. 13–15)
//! ```text
//! ż_d = R_z^d ż_i,   R_z^d = −(Φ_z^d)⁻¹ Φ_z^i,        R_z = [R_z^d ; I] (rows in z order)
//! z̈   = R_z z̈_i + Ṙ_z ż_i,   Ṙ_z ż_i = [−(Φ_z^d)⁻¹ Φ̇_z ż ; 0]
//!     ⇔ z̈_d = −(Φ_z^d)⁻¹ (Φ_z^i z̈_i + Φ̇_z ż)          (from Φ_z z̈ + Φ̇_z ż = 0)
//! ```
//! # Equations of motion (000 eqs. 16–17)
//! ```text
//! M″ z̈_i = Q″,   M″ = R_zᵀ M′ R_z,   Q″ = R_zᵀ (Q′ − M′ Ṙ_z ż_i)
//! ⇒ M″ z̈_i − Q″ = R_zᵀ (M′ z̈ − Q′)      with the full z̈ of eq. 15
//! ```
//! so M″ and Q″ are never formed: the residual is R_zᵀ v, v = M′ z̈ − Q′, i.e.
//! v_i + (R_z^d)ᵀ v_d.
//!
//! # Discrete equations (000 eqs. 32–38, 48)
//! Unknowns x = [z_i ; p] at t_{k+1} (000 eq. 48, double-step variant). With the trapezoidal
//! relations (000 eqs. 33–34) on the independent coordinates and the pressures,
//! ```text
//! ż_i = (2/Δt) z_i + ẑ̇_i,k,   z̈_i = (4/Δt²) z_i + ẑ̈_i,k,   ṗ = (2/Δt) p + p̂̇_k
//! ```
//! a trial x is mapped to the full (z, ż, z̈) by
//! 1. the position problem Φ_rows(z_d, z_i) = 0, solved for z_d by Newton with Φ_z^d (inner
//!    loop, increment ≤ [`INNER_TOLERANCE`]; first guess z_d,k + Δt ż_d,k + Δt²/2 z̈_d,k, later
//!    the last solution of the same step);
//! 2. ż_d and z̈_d from 000 eqs. 13–15 at the solved positions;
//!
//! then every element is evaluated at (z, ż, p, U_{k+1}) and (000 eqs. 35–36, 38)
//! ```text
//! f = (Δt²/4) [ R_zᵀ (M′ z̈ − Q′) ;  ṗ − h ]          (f + n_v rows)
//! ```
//! (the pressure rows through `circuit::reduced::pressure_row`, as in the penalty step).
//! Newton–Raphson on f(x) = 0 (000 eq. 37) uses the exact tangent ∂f/∂x: one forward-mode dual
//! pass per unknown through the same generic code. For a column of z_i the dual pass also runs
//! the inner Newton, started from the converged z_d with the implicit-function derivative
//! ∂z_d/∂z_i,j = R_z^d[:, j] (000 eq. 14) as its dual part and refined by one dual Newton step, so
//! the column contains ∂z_d/∂z_i exactly. Pressure columns lift the p-independent part (positions,
//! R_z, z̈) from the f64 evaluation at the same x. After convergence the accepted x is evaluated
//! once more, so the committed z satisfies Φ = 0 to the inner tolerance and ż, z̈ are the exact
//! 000 eqs. 13–15 at it; λ is not used.
//!
//! # Re-selection
//! At the start of every step the dependent block Φ_z^d is factored at z_k; when its smallest
//! pivot (partial pivoting) falls below [`RESELECT_FRACTION`] of its value at the last selection,
//! or when the inner Newton of the step fails, the full-pivot selection is recomputed at z_k
//! (counted in the state) and the step is (re)started with it. The tangent is then recomputed.
//!
//! # State
//! `State::formulation` holds `FormulationState::DoubleStep` (`state::Partition`): r, the number
//! of dependent coordinates (rank of Φ_z at the selection); the smallest pivot of Φ_z^d at the
//! last selection (reference of the test); the selections made since t = 0 (the first one
//! included); the coordinate indices, the r dependent ones then the n − r independent ones, each
//! group ascending; and the constraint rows used (pivot rows; the first r entries, ascending).
//! It is written at every committed step, so a cloned state restarts identically. It is
//! `FormulationState::Relative` before the first step (the initial state is shared by all
//! formulations); the first step selects.

use num_dual::Dual64;

use crate::circuit::reduced;
use crate::formulations::Stepper;
use crate::mechanics::advance;
use crate::mechanics::assembly::Evaluator;
use crate::mechanics::buffers::{Buffers, Counters, History};
use crate::mechanics::semirecursive::penalty;
use crate::model::Model;
use crate::solver::newton::{NewtonProblem, TangentPolicy, Tolerances};
use crate::solver::real::{re, Real};
use crate::state::{FormulationState, Partition, State};
use crate::StepError;
use crate::StepReport;

/// Full-pivot elimination stops at a pivot below this fraction of max|Φ_z|: the remaining rows
/// are redundant [-].
pub const RANK_TOLERANCE: f64 = 1e-9;
/// Re-select the partition when the smallest pivot of Φ_z^d falls below this fraction of its value
/// at the last selection [-].
pub const RESELECT_FRACTION: f64 = 0.1;
/// Convergence of the inner position Newton: largest |Δz_d| [rad or m].
pub const INNER_TOLERANCE: f64 = 1e-12;
/// Iteration cap of the inner position Newton.
pub const INNER_MAX_ITERATIONS: u32 = 20;

/// A partition sized for `n` coordinates and `m` constraint rows, with no selection yet.
fn new_partition(n: usize, m: usize) -> Partition {
    Partition {
        n_dep: 0,
        order: (0..n).collect(),
        rows: vec![0; m],
        pivot_ref: 0.0,
        selections: 0,
    }
}

/// Reads the partition held by the state into `part`; false if the state holds none of these
/// sizes.
fn load_partition(part: &mut Partition, st: &State) -> bool {
    let Some(held) = st.formulation.partition() else {
        return false;
    };
    if held.order.len() != part.order.len()
        || held.rows.len() != part.rows.len()
        || held.n_dep > part.order.len().min(part.rows.len())
    {
        return false;
    }
    copy_partition(part, held);
    true
}

/// `to` = `from`, of the same sizes, without allocating (a derived `clone_from` would).
fn copy_partition(to: &mut Partition, from: &Partition) {
    to.n_dep = from.n_dep;
    to.order.copy_from_slice(&from.order);
    to.rows.copy_from_slice(&from.rows);
    to.pivot_ref = from.pivot_ref;
    to.selections = from.selections;
}

/// Writes `part` into the state (allocates only on the first step).
fn store_partition(part: &Partition, st: &mut State) {
    match &mut st.formulation {
        FormulationState::DoubleStep(held)
            if held.order.len() == part.order.len() && held.rows.len() == part.rows.len() =>
        {
            copy_partition(held, part)
        }
        other => *other = FormulationState::DoubleStep(part.clone()),
    }
}

/// Buffers of one reduced evaluation in scalar type `S` (f64 for the residual, `Dual64` for the
/// tangent columns).
#[derive(Debug, Clone)]
pub struct Reduced<S: Real> {
    /// Full coordinates z of the trial point [rad or m].
    pub z: Vec<S>,
    /// Full ż [rad/s or m/s].
    pub zd: Vec<S>,
    /// Full z̈ [rad/s² or m/s²].
    pub zdd: Vec<S>,
    /// Trial pressures [Pa].
    pub p: Vec<S>,
    /// LU factors of Φ_z^d (r × r, row-major).
    lu: Vec<S>,
    /// Row interchanges of `lu`.
    ipiv: Vec<usize>,
    /// R_z^d = −(Φ_z^d)⁻¹ Φ_z^i (r × f, row-major).
    pub rd: Vec<S>,
    /// Scratch r-vector.
    rhs: Vec<S>,
    /// The position increment over all n coordinates (`solve_positions`): Δz_d on the
    /// dependent ones, −0.0 on the others.
    dz: Vec<S>,
    /// v = M′ z̈ − Q′ (n).
    v: Vec<S>,
}

impl<S: Real> Default for Reduced<S> {
    fn default() -> Self {
        Reduced::new(0, 0)
    }
}

impl<S: Real> Reduced<S> {
    fn new(n: usize, nv: usize) -> Self {
        Reduced {
            z: vec![S::zero(); n],
            zd: vec![S::zero(); n],
            zdd: vec![S::zero(); n],
            p: vec![S::zero(); nv],
            lu: vec![S::zero(); n * n],
            ipiv: vec![0; n],
            rd: vec![S::zero(); n * n],
            rhs: vec![S::zero(); n],
            dz: vec![S::zero(); n],
            v: vec![S::zero(); n],
        }
    }
}

/// Work counters of the double-step formulation (reported, not used for control).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DoubleStepCounters {
    /// Position problems solved (inner Newton runs, f64 and dual).
    pub position_solves: u64,
    /// Inner Newton iterations.
    pub inner_iterations: u64,
    /// Partition selections made by this workspace.
    pub selections: u64,
}

/// Buffers of the double-step formulation (allocated only when it is selected).
#[derive(Debug, Clone, Default)]
pub struct DoubleStepWorkspace {
    /// The partition of the step being solved.
    pub part: Partition,
    /// f64 reduced evaluation (the residual, and the base of the pressure columns).
    pub re: Reduced<f64>,
    /// Dual reduced evaluation (tangent columns).
    du: Reduced<Dual64>,
    /// Newton unknowns x = [z_i ; p] (first f + n_v entries used).
    x: Vec<f64>,
    /// Newton increment.
    dx: Vec<f64>,
    /// Residual f(x).
    f: Vec<f64>,
    /// Scratch residual (the f64 pass of the tangent).
    f0: Vec<f64>,
    /// Dual unknowns and residual of a tangent column.
    xd: Vec<Dual64>,
    fd: Vec<Dual64>,
    /// Tangent ∂f/∂x, row-major (f + n_v)², as last computed.
    tangent: Vec<f64>,
    /// Its LU factors and row interchanges.
    tangent_lu: Vec<f64>,
    tangent_ipiv: Vec<usize>,
    /// Scratch of the full-pivot selection: Φ_z (m × n) and the row/column orders.
    sel: Vec<f64>,
    sel_rows: Vec<usize>,
    sel_cols: Vec<usize>,
    /// Work counters.
    pub counters: DoubleStepCounters,
    /// Whether this step's partition was carried over from the last step (not selected in its
    /// stage `predict`): a failed position problem then selects anew and solves again, once.
    reselect_on_failure: bool,
}

impl DoubleStepWorkspace {
    /// Buffers for `model` (whatever its formulation: `first_independent` uses them too).
    pub fn sized(model: &Model) -> Self {
        let (n, m, nv) = (model.n_coords(), model.n_constraints(), model.n_volumes());
        let nx = n + nv;
        DoubleStepWorkspace {
            part: new_partition(n, m),
            re: Reduced::new(n, nv),
            du: Reduced::new(n, nv),
            x: vec![0.0; nx],
            dx: vec![0.0; nx],
            f: vec![0.0; nx],
            f0: vec![0.0; nx],
            xd: vec![Dual64::from(0.0); nx],
            fd: vec![Dual64::from(0.0); nx],
            tangent: vec![0.0; nx * nx],
            tangent_lu: vec![0.0; nx * nx],
            tangent_ipiv: vec![0; nx],
            sel: vec![0.0; m * n],
            sel_rows: vec![0; m],
            sel_cols: vec![0; n],
            counters: DoubleStepCounters::default(),
            reselect_on_failure: false,
        }
    }

    /// Number of Newton unknowns f + n_v of the current partition.
    pub fn n_unknowns(&self) -> usize {
        self.part.independent().len() + self.re.p.len()
    }
    /// The Newton unknowns x = [z_i ; p] [rad or m, Pa].
    pub fn unknowns(&self) -> &[f64] {
        &self.x[..self.n_unknowns()]
    }
    /// Mutable Newton unknowns (tests perturb them).
    pub fn unknowns_mut(&mut self) -> &mut [f64] {
        let nx = self.n_unknowns();
        &mut self.x[..nx]
    }
    /// The residual of the last [`residual`] call.
    pub fn residual_values(&self) -> &[f64] {
        &self.f[..self.n_unknowns()]
    }
    /// Entry (i, j) of the last tangent computed by [`tangent`].
    pub fn tangent_entry(&self, i: usize, j: usize) -> f64 {
        self.tangent[i * self.n_unknowns() + j]
    }
}

/// Why the position problem failed: the worst constraint row and its |Φ| [m or -].
#[derive(Debug, Clone, Copy)]
pub struct PositionFailure {
    row: usize,
    value: f64,
}

/// A failed attempt of a step.
pub enum Failure {
    /// A failure with its step error.
    Step(StepError),
    /// The position problem Φ(z_d, z_i) = 0 did not converge.
    Position(PositionFailure),
}

// ---------------------------------------------------------------------------------------------
// small dense LU in S: the kernel of `linalg` (partial pivoting on the real part)

/// LU with partial pivoting of the row-major k × k matrix `a` in place
/// ([`crate::solver::linalg::lu_factor_row_major_in_place`]: `a` holds column-major factors after);
/// `ipiv[c]` is the row swapped with row c. Returns the smallest |pivot| (real part), or
/// `None` for a zero or non-finite pivot or entry.
fn lu_factor<S: Real>(a: &mut [S], k: usize, ipiv: &mut [usize]) -> Option<f64> {
    crate::solver::linalg::lu_factor_row_major_in_place(a, k, ipiv).ok()
}

/// Solves with the factors of [`lu_factor`]; `b` holds the right-hand side on entry.
fn lu_solve<S: Real>(a: &[S], k: usize, ipiv: &[usize], b: &mut [S]) {
    crate::solver::linalg::lu_solve_in_place(a, k, ipiv, b)
}

// ---------------------------------------------------------------------------------------------
// partition

/// Full-pivot Gaussian elimination on Φ_z at `z` (000 §2.2): pivot columns dependent, the rest
/// independent, pivot rows used; pivots below [`RANK_TOLERANCE`] × max|Φ_z| are dropped.
///
/// The elimination runs on Φ_z as it is, without column scaling, as in 000. Revolute and
/// prismatic columns then compare m with m/rad; in both shipped models all columns are revolute
/// and the choice is the paper's (z3 for the four-bar, z4 for the quick-return).
fn select(model: &Model, z: &[f64], ev: &mut Evaluator<f64>, ds: &mut DoubleStepWorkspace) {
    let (n, m) = (model.n_coords(), model.n_constraints());
    ev.positions(model, z);
    ds.sel.copy_from_slice(&ev.constraints.jac);
    for (i, r) in ds.sel_rows.iter_mut().enumerate() {
        *r = i;
    }
    for (j, c) in ds.sel_cols.iter_mut().enumerate() {
        *c = j;
    }
    let scale = ds.sel.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    let a = &mut ds.sel;
    let (rows, cols) = (&mut ds.sel_rows, &mut ds.sel_cols);
    let mut r = 0;
    if scale > 0.0 && scale.is_finite() {
        for k in 0..m.min(n) {
            let (mut pi, mut pj, mut best) = (k, k, 0.0f64);
            for i in k..m {
                for j in k..n {
                    let v = a[rows[i] * n + cols[j]].abs();
                    if v > best {
                        (pi, pj, best) = (i, j, v);
                    }
                }
            }
            if best <= RANK_TOLERANCE * scale {
                break;
            }
            rows.swap(k, pi);
            cols.swap(k, pj);
            let (pr, pc) = (rows[k], cols[k]);
            let piv = a[pr * n + pc];
            for &ri in rows[k + 1..].iter() {
                let l = a[ri * n + pc] / piv;
                if l != 0.0 {
                    for &cj in cols[k + 1..].iter() {
                        a[ri * n + cj] -= l * a[pr * n + cj];
                    }
                    a[ri * n + pc] = 0.0;
                }
            }
            r = k + 1;
        }
    }
    let part = &mut ds.part;
    part.n_dep = r;
    part.order.copy_from_slice(cols);
    part.order[..r].sort_unstable();
    part.order[r..].sort_unstable();
    part.rows.fill(0);
    part.rows[..r].copy_from_slice(&rows[..r]);
    part.rows[..r].sort_unstable();
    part.selections += 1;
    ds.counters.selections += 1;
    let pivot = factor_dependent(n, &ds.part, &ev.constraints.jac, &mut ds.re);
    ds.part.pivot_ref = pivot.unwrap_or(0.0);
}

/// Copies Φ_z^d (used rows × dependent columns of `jac`) into `red.lu` and factors it; the
/// smallest pivot, or `None` if singular.
fn factor_dependent<S: Real>(
    n: usize,
    part: &Partition,
    jac: &[S],
    red: &mut Reduced<S>,
) -> Option<f64> {
    let r = part.n_dep;
    for (a, &row) in part.used_rows().iter().enumerate() {
        for (b, &col) in part.dependent().iter().enumerate() {
            red.lu[a * r + b] = jac[row * n + col];
        }
    }
    lu_factor(&mut red.lu[..r * r], r, &mut red.ipiv[..r])
}

/// Stage `partition`: loads the partition from `st.formulation`, or selects one (first step);
/// re-selects when the smallest pivot of Φ_z^d at z_k has fallen below [`RESELECT_FRACTION`] of its value at
/// the last selection. Returns whether a selection was made.
fn check_partition(
    model: &Model,
    st: &State,
    ws: &mut Buffers,
    ds: &mut DoubleStepWorkspace,
) -> bool {
    let n = model.n_coords();
    if !load_partition(&mut ds.part, st) {
        ds.part.selections = 0;
        select(model, &st.z, &mut ws.ev, ds);
        ws.tangent_valid = false;
        return true;
    }
    if ds.part.n_dep > 0 {
        ws.ev.positions(model, &st.z);
        let pivot = factor_dependent(n, &ds.part, &ws.ev.constraints.jac, &mut ds.re);
        if pivot.is_none_or(|p| p < RESELECT_FRACTION * ds.part.pivot_ref) {
            select(model, &st.z, &mut ws.ev, ds);
            ws.tangent_valid = false;
            return true;
        }
    }
    false
}

/// The first independent coordinate of the partition held by `st` (its index in z, 0-based), as
/// a float for the output column `partition.independent`; NaN if there is none. Before the first
/// step the state holds no partition: it is then selected here at `st.z` (this allocates).
pub fn first_independent(model: &Model, st: &State) -> f64 {
    let (n, m) = (model.n_coords(), model.n_constraints());
    if let Some(part) = st
        .formulation
        .partition()
        .filter(|p| p.order.len() == n && p.rows.len() == m && p.n_dep <= n)
    {
        // read in place (no allocation in the output loop)
        return part.independent().first().map_or(f64::NAN, |&i| i as f64);
    }
    let mut ds = DoubleStepWorkspace::sized(model);
    let mut ev = Evaluator::new(model);
    select(model, &st.z, &mut ev, &mut ds);
    ds.part
        .independent()
        .first()
        .map_or(f64::NAN, |&i| i as f64)
}

/// Selections made up to `st` (0 before the first step).
pub fn selections(st: &State) -> u64 {
    st.formulation.partition().map_or(0, |p| p.selections)
}

// ---------------------------------------------------------------------------------------------
// reduced residual

/// Position problem Φ_rows(z_d, z_i) = 0 for z_d in `red.z` (z_i held), by the one Newton
/// (`solver::newton::solve`, in the scalar `S`) with Φ_z^d, from the z_d held in `red.z`. On
/// success `ev` holds positions, Φ and Φ_z at the solved z and `red.lu` the factors of Φ_z^d
/// there. Returns the iterations.
fn solve_positions<S: Real>(
    model: &Model,
    part: &Partition,
    ev: &mut Evaluator<S>,
    red: &mut Reduced<S>,
) -> Result<u32, PositionFailure> {
    if part.n_dep == 0 {
        ev.positions(model, &red.z);
        return Ok(0);
    }
    // −0.0, the exact identity of addition (of both parts of a dual number), on the coordinates
    // the increment does not move
    red.dz.fill(-S::zero());
    let mut problem = Positions {
        model,
        part,
        ev,
        red,
        last: f64::INFINITY,
        increments: 0,
        counters: Counters::default(),
    };
    // full Newton (Φ_z^d at every iterate), converged on the largest |Δz_d| (its real part)
    crate::solver::newton::solve(&mut problem, TangentPolicy::FULL, INNER_MAX_ITERATIONS)
}

/// The position problem of [`solve_positions`] as a problem of the one Newton: unknowns the
/// dependent coordinates of `red.z`, residual the used rows of Φ, tangent Φ_z^d (factored with
/// the evaluation, so that the solve ends with the factors at the solved z), converged when the
/// largest real |Δz_d| of the last increment is at most [`INNER_TOLERANCE`].
struct Positions<'a, S: Real> {
    model: &'a Model,
    part: &'a Partition,
    ev: &'a mut Evaluator<S>,
    red: &'a mut Reduced<S>,
    /// Largest |Re Δz_d| of the last increment (a NaN counts as ∞; ∞ before the first).
    last: f64,
    /// Increments taken.
    increments: u32,
    counters: Counters,
}

impl<S: Real> Positions<'_, S> {
    /// The failure at the current evaluation: the used row of Φ with the largest |Re Φ|.
    fn failure_here(&self) -> PositionFailure {
        let (mut row, mut value) = (0, -1.0);
        for &k in self.part.used_rows() {
            let v = re(self.ev.constraints.phi[k]).abs();
            let v = if v.is_nan() { f64::INFINITY } else { v };
            if v > value {
                (row, value) = (k, v);
            }
        }
        PositionFailure { row, value }
    }
}

impl<S: Real> NewtonProblem<S> for Positions<'_, S> {
    type Error = PositionFailure;
    fn evaluate(&mut self) -> Result<(), PositionFailure> {
        let n = self.model.n_coords();
        self.ev.positions(self.model, &self.red.z);
        if factor_dependent(n, self.part, &self.ev.constraints.jac, self.red).is_none() {
            return Err(self.failure_here());
        }
        Ok(())
    }
    fn form_residual(&mut self) -> Result<(), PositionFailure> {
        // Φ is read in place by `solve_increment`; a non-finite increment ends the solve
        if self.increments > 0 && !self.last.is_finite() {
            return Err(self.failure_here());
        }
        Ok(())
    }
    fn residual_converged(&self) -> bool {
        self.increments > 0 && self.last <= INNER_TOLERANCE
    }
    fn converges_on_residual(&self) -> bool {
        true
    }
    fn tangent_reusable(&self) -> bool {
        false
    }
    fn refresh_tangent(&mut self) -> Result<bool, PositionFailure> {
        // Φ_z^d was factored by `evaluate`
        Ok(true)
    }
    fn solve_increment(&mut self) {
        let (part, red) = (self.part, &mut *self.red);
        let r = part.n_dep;
        for (b, &k) in red.rhs[..r].iter_mut().zip(part.used_rows()) {
            *b = -self.ev.constraints.phi[k];
        }
        lu_solve(&red.lu[..r * r], r, &red.ipiv[..r], &mut red.rhs[..r]);
        self.last = 0.0;
        for (d, &k) in red.rhs[..r].iter().zip(part.dependent()) {
            red.dz[k] = *d;
            let a = re(*d).abs();
            self.last = if a.is_nan() {
                f64::INFINITY
            } else {
                self.last.max(a)
            };
        }
        self.increments += 1;
    }
    fn iterate(&mut self) -> (&mut [S], &[S]) {
        (&mut self.red.z, &self.red.dz)
    }
    fn tolerances(&self) -> Tolerances {
        Tolerances::new(&[(self.red.dz.len(), INNER_TOLERANCE)], 0.0)
    }
    fn counters(&mut self) -> &mut Counters {
        &mut self.counters
    }
    fn failure(&mut self, _iterations: u32, _reason: &str) -> PositionFailure {
        self.failure_here()
    }
}

/// R_z^d = −(Φ_z^d)⁻¹ Φ_z^i into `red.rd` (000 eq. 14), with the factors in `red.lu`.
fn velocity_transform<S: Real>(n: usize, part: &Partition, jac: &[S], red: &mut Reduced<S>) {
    let r = part.n_dep;
    let f = n - r;
    for (j, &col) in part.independent().iter().enumerate() {
        for (b, &row) in red.rhs[..r].iter_mut().zip(part.used_rows()) {
            *b = -jac[row * n + col];
        }
        lu_solve(&red.lu[..r * r], r, &red.ipiv[..r], &mut red.rhs[..r]);
        for a in 0..r {
            red.rd[a * f + j] = red.rhs[a];
        }
    }
}

/// z̈_d = −(Φ_z^d)⁻¹ (Φ_z^i z̈_i + Φ̇_z ż) (000 eq. 15) into `red.zdd`, with z̈_i already there.
fn dependent_accelerations<S: Real>(
    n: usize,
    part: &Partition,
    ev: &Evaluator<S>,
    red: &mut Reduced<S>,
) {
    let r = part.n_dep;
    for (b, &row) in red.rhs[..r].iter_mut().zip(part.used_rows()) {
        let mut s = ev.constraints.acc0[row];
        for &l in part.independent() {
            s += ev.constraints.jac[row * n + l] * red.zdd[l];
        }
        *b = -s;
    }
    lu_solve(&red.lu[..r * r], r, &red.ipiv[..r], &mut red.rhs[..r]);
    for (b, &k) in red.rhs[..r].iter().zip(part.dependent()) {
        red.zdd[k] = *b;
    }
}

/// Stage `assemble`: f = (Δt²/4) [R_zᵀ (M′ z̈ − Q′) ; ṗ − h] (000 eqs. 16–17, 38) from an
/// evaluated point, `red.zdd` and `red.rd`.
fn reduce<S: Real>(
    model: &Model,
    part: &Partition,
    ev: &Evaluator<S>,
    red: &mut Reduced<S>,
    f: &mut [S],
) {
    let n = model.n_coords();
    let fi = n - part.n_dep;
    let dt = model.solver.step_s;
    let c = dt * dt / 4.0;
    for ((v, row), q) in red
        .v
        .iter_mut()
        .zip(ev.dynamics.mass.chunks_exact(n))
        .zip(ev.dynamics.force.iter())
    {
        let mut acc = -*q;
        for (mij, a) in row.iter().zip(red.zdd.iter()) {
            acc += *mij * *a;
        }
        *v = acc;
    }
    for (j, &k) in part.independent().iter().enumerate() {
        let mut s = red.v[k];
        for (a, &l) in part.dependent().iter().enumerate() {
            s += red.rd[a * fi + j] * red.v[l];
        }
        f[j] = s * c;
    }
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        f[fi + v] = reduced::pressure_row(vol, ev.pd[v], ev.h[v]) * c;
    }
}

/// The reduced residual at `x` = [z_i ; p] into `f`, starting the position problem from the z_d
/// held in `red.z`; fills `red` (full z, ż, z̈, R_z^d) and `ev` (every element at the point).
#[allow(clippy::too_many_arguments)]
fn evaluate_reduced<S: Real>(
    model: &Model,
    part: &Partition,
    hist: &History,
    spools: &[f64],
    ev: &mut Evaluator<S>,
    red: &mut Reduced<S>,
    x: &[S],
    f: &mut [S],
) -> Result<u32, PositionFailure> {
    let n = model.n_coords();
    let fi = n - part.n_dep;
    let dt = model.solver.step_s;
    let (c1, c2) = (2.0 / dt, 4.0 / (dt * dt));
    for (j, &k) in part.independent().iter().enumerate() {
        red.z[k] = x[j];
    }
    for (v, (p, pd)) in red.p.iter_mut().zip(ev.pd.iter_mut()).enumerate() {
        *p = x[fi + v];
        *pd = x[fi + v] * c1 + hist.pd_hat[v]; // 000 eq. 33
    }
    let it = solve_positions(model, part, ev, red)?;
    velocity_transform(n, part, &ev.constraints.jac, red);
    // trapezoidal relations on z_i (000 eqs. 33–34), ż_d = R_z^d ż_i (000 eq. 13)
    for (j, &k) in part.independent().iter().enumerate() {
        red.zd[k] = x[j] * c1 + hist.zd_hat[k];
        red.zdd[k] = x[j] * c2 + hist.zdd_hat[k];
    }
    for (a, &k) in part.dependent().iter().enumerate() {
        let mut s = S::zero();
        for (j, &l) in part.independent().iter().enumerate() {
            s += red.rd[a * fi + j] * red.zd[l];
        }
        red.zd[k] = s;
    }
    ev.evaluate(model, &red.z, &red.zd, &red.p, spools, true);
    dependent_accelerations(n, part, ev, red);
    reduce(model, part, ev, red, f);
    Ok(it)
}

/// Stage `predict`: spools, history terms and predictors of the penalty step
/// ([`penalty::prepare`]), the partition (`check_partition`), and x⁰ = [z_i ; p] of the
/// predictor; the position problem starts from z_d,k + Δt ż_d,k + Δt²/2 z̈_d,k. Returns whether the
/// partition was selected in this call.
pub fn prepare(model: &Model, st: &State, ws: &mut Buffers, ds: &mut DoubleStepWorkspace) -> bool {
    let selected = check_partition(model, st, ws, ds);
    penalty::prepare(model, st, ws);
    gather_predictor(model, ws, ds);
    selected
}

/// [`prepare`] after the valves (the stage `predict` of the step), remembering whether a failed
/// position problem may select anew.
fn predict(model: &Model, st: &State, ws: &mut Buffers, ds: &mut DoubleStepWorkspace) {
    let selected = check_partition(model, st, ws, ds);
    penalty::predict(model, st, ws);
    gather_predictor(model, ws, ds);
    ds.reselect_on_failure = !selected;
}

fn gather_predictor(model: &Model, ws: &mut Buffers, ds: &mut DoubleStepWorkspace) {
    let n = model.n_coords();
    let fi = ds.part.independent().len();
    ds.re.z.copy_from_slice(&ws.x[..n]);
    for (j, &k) in ds.part.independent().iter().enumerate() {
        ds.x[j] = ws.x[k];
    }
    for v in 0..model.n_volumes() {
        ds.x[fi + v] = ws.x[n + v];
    }
}

/// The residual f(x) at the unknowns held by the workspace into its residual buffer (see
/// [`DoubleStepWorkspace::residual_values`]). After [`prepare`].
pub fn residual(
    model: &Model,
    st: &State,
    ws: &mut Buffers,
    ds: &mut DoubleStepWorkspace,
) -> Result<(), StepError> {
    residual_inner(model, ws, ds).map_err(|pf| position_error(model, st, pf))
}

fn residual_inner(
    model: &Model,
    ws: &mut Buffers,
    ds: &mut DoubleStepWorkspace,
) -> Result<(), PositionFailure> {
    let nx = ds.n_unknowns();
    let r = evaluate_reduced(
        model,
        &ds.part,
        &ws.hist,
        &ws.spool_new,
        &mut ws.ev,
        &mut ds.re,
        &ds.x[..nx],
        &mut ds.f[..nx],
    );
    ds.counters.position_solves += 1;
    ds.counters.inner_iterations += r? as u64;
    Ok(())
}

/// Exact tangent ∂f/∂x (000 eq. 37) into the workspace (see
/// [`DoubleStepWorkspace::tangent_entry`]): one dual pass per unknown. After [`prepare`].
pub fn tangent(
    model: &Model,
    st: &State,
    ws: &mut Buffers,
    ds: &mut DoubleStepWorkspace,
) -> Result<(), StepError> {
    tangent_inner(model, ws, ds).map_err(|pf| position_error(model, st, pf))
}

fn tangent_inner(
    model: &Model,
    ws: &mut Buffers,
    ds: &mut DoubleStepWorkspace,
) -> Result<(), PositionFailure> {
    let n = model.n_coords();
    let nv = model.n_volumes();
    let dt = model.solver.step_s;
    let c1 = 2.0 / dt;
    let fi = ds.part.independent().len();
    let r = ds.part.n_dep;
    let nx = fi + nv;
    // the f64 evaluation at x the columns build on (warm start: the z_d of the last residual)
    let it = evaluate_reduced(
        model,
        &ds.part,
        &ws.hist,
        &ws.spool_new,
        &mut ws.ev,
        &mut ds.re,
        &ds.x[..nx],
        &mut ds.f0[..nx],
    )?;
    ds.counters.position_solves += 1;
    ds.counters.inner_iterations += it as u64;
    let du = &mut ds.du;
    for j in 0..nx {
        for (k, xd) in ds.xd[..nx].iter_mut().enumerate() {
            *xd = Dual64::new(ds.x[k], if k == j { 1.0 } else { 0.0 });
        }
        if j < fi {
            // z_d: converged value, dual part ∂z_d/∂z_i,j = R_z^d[:, j] (000 eq. 14); the dual
            // inner Newton refines both
            for (a, &k) in ds.part.dependent().iter().enumerate() {
                du.z[k] = Dual64::new(ds.re.z[k], ds.re.rd[a * fi + j]);
            }
            let it = evaluate_reduced(
                model,
                &ds.part,
                &ws.hist,
                &ws.spool_new,
                &mut ws.evd,
                du,
                &ds.xd[..nx],
                &mut ds.fd[..nx],
            )?;
            ds.counters.position_solves += 1;
            ds.counters.inner_iterations += it as u64;
        } else {
            // pressures: positions, rates, R_z and z̈ do not depend on p
            for v in 0..nv {
                du.p[v] = ds.xd[fi + v];
                ws.evd.pd[v] = ds.xd[fi + v] * c1 + ws.hist.pd_hat[v];
            }
            ws.evd
                .evaluate_pressures(model, &ws.ev, &du.p, &ws.spool_new);
            for (d, s) in du.zdd.iter_mut().zip(ds.re.zdd.iter()) {
                *d = Dual64::from(*s);
            }
            for (d, s) in du.rd[..r * fi].iter_mut().zip(ds.re.rd[..r * fi].iter()) {
                *d = Dual64::from(*s);
            }
            reduce(model, &ds.part, &ws.evd, du, &mut ds.fd[..nx]);
        }
        for i in 0..nx {
            ds.tangent[i * nx + j] = ds.fd[i].eps;
        }
    }
    // diagonal in the full layout, for the weighted residual of error messages
    ws.diag.fill(0.0);
    for (j, &k) in ds.part.independent().iter().enumerate() {
        ws.diag[k] = ds.tangent[j * nx + j];
    }
    for v in 0..nv {
        ws.diag[n + v] = ds.tangent[(fi + v) * nx + fi + v];
    }
    Ok(())
}

/// The error of a failed position problem.
fn position_error(model: &Model, st: &State, pf: PositionFailure) -> StepError {
    StepError::NewtonFailed {
        time_s: st.t_s,
        step: st.step,
        iterations: 0,
        equation: model
            .constraints
            .get(pf.row)
            .map(|c| c.name.clone())
            .unwrap_or_default(),
        // |Φ| of the worst row over the position tolerance, like the weighted Newton residual
        value: pf.value / model.solver.tol_position,
        reason: "position problem Φ(z_d, z_i) = 0 did not converge (inner Newton)".to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// the step

/// The double-step semi-recursive formulation (000 §2.2) as a [`Stepper`]. Its partition is
/// selected by the first step's stage `predict` (`check_partition`), which also re-selects it
/// later.
pub struct DoubleStep;

impl Stepper for DoubleStep {
    type Workspace = DoubleStepWorkspace;
    type Failure = Failure;
    type Problem<'a> = DoubleStepNewton<'a>;

    fn workspace(model: &Model) -> DoubleStepWorkspace {
        DoubleStepWorkspace::sized(model)
    }

    /// Nothing here: the partition is selected in the stage `predict`.
    fn initialize(_: &Model, _: &mut State, _: &mut Buffers, _: &mut DoubleStepWorkspace) {}

    /// The row-major nx × nx tangent of the partition the state carries, and its LU factors.
    fn load_tangent(
        _: &mut Buffers,
        ds: &mut DoubleStepWorkspace,
        matrix: &[f64],
        _: &[f64],
    ) -> Option<bool> {
        let len = matrix.len();
        let nx = (len as f64).sqrt().round() as usize;
        if nx * nx != len || len > ds.tangent.len() {
            return None;
        }
        ds.tangent[..len].copy_from_slice(matrix);
        ds.tangent_lu[..len].copy_from_slice(matrix);
        Some(lu_factor(&mut ds.tangent_lu[..len], nx, &mut ds.tangent_ipiv[..nx]).is_some())
    }

    fn predict(model: &Model, st: &State, ws: &mut Buffers, ds: &mut DoubleStepWorkspace) {
        predict(model, st, ws, ds);
    }

    /// The reuse policy of the penalty step: the factored exact tangent of an earlier iteration
    /// or step is reused while it contracts by ×5 or more per iteration, and recomputed when no
    /// valid factors exist or it contracts less. One attempt.
    fn policy(_: &Model, attempt: u32) -> Option<TangentPolicy> {
        (attempt == 0).then_some(TangentPolicy::MODIFIED)
    }

    fn problem<'a>(
        model: &'a Model,
        st: &'a State,
        ws: &'a mut Buffers,
        ds: &'a mut DoubleStepWorkspace,
    ) -> DoubleStepNewton<'a> {
        DoubleStepNewton { model, st, ws, ds }
    }

    /// The accepted x: z_d from the position problem, ż, z̈ (000 eqs. 13–15), every element.
    fn project(
        model: &Model,
        _: &State,
        ws: &mut Buffers,
        ds: &mut DoubleStepWorkspace,
        _: u32,
    ) -> Result<(), Failure> {
        residual_inner(model, ws, ds).map_err(Failure::Position)?;
        ws.counters.residuals += 1;
        Ok(())
    }

    /// The position problem failed with a partition carried over from the last step: select
    /// anew at z_k, predict again, and solve again (once).
    fn retry(
        model: &Model,
        st: &State,
        ws: &mut Buffers,
        ds: &mut DoubleStepWorkspace,
        failure: &Failure,
    ) -> bool {
        if !matches!(failure, Failure::Position(_)) || !ds.reselect_on_failure {
            return false;
        }
        ds.reselect_on_failure = false;
        select(model, &st.z, &mut ws.ev, ds);
        ws.tangent_valid = false;
        penalty::predict(model, st, ws);
        gather_predictor(model, ws, ds);
        true
    }

    fn error(model: &Model, st: &State, failure: Failure) -> StepError {
        failure_error(model, st, failure)
    }

    /// p and ṗ, z, ż, z̈ of the accepted point, the partition, the friction work.
    fn commit(
        model: &Model,
        st: &mut State,
        ws: &mut Buffers,
        ds: &mut DoubleStepWorkspace,
        report: &mut StepReport,
    ) {
        let dt = model.solver.step_s;
        let c1 = 2.0 / dt;
        let fi = ds.part.independent().len();
        report.cavitation_onsets = advance::commit_pressures(model, st, dt, |v| {
            let p_new = ds.x[fi + v];
            (p_new, c1 * p_new + ws.hist.pd_hat[v])
        });
        st.z.copy_from_slice(&ds.re.z);
        st.zd.copy_from_slice(&ds.re.zd);
        st.zdd.copy_from_slice(&ds.re.zdd);
        store_partition(&ds.part, st);
        advance::friction_work(st, &ws.ev.friction_force, &ws.ev.motion, dt);
        advance::joint_friction_work(st, model, &ws.ev.joint_friction_force, dt);
    }

    fn energies(
        model: &Model,
        st: &State,
        ws: &Buffers,
        _: &DoubleStepWorkspace,
        report: &mut StepReport,
    ) {
        advance::energies_and_violation(model, &ws.ev, &st.zd, report);
    }
}

fn failure_error(model: &Model, st: &State, e: Failure) -> StepError {
    match e {
        Failure::Step(e) => e,
        Failure::Position(pf) => position_error(model, st, pf),
    }
}

/// A Newton failure with the weighted residual of [`penalty::newton_failure`]: the reduced
/// residual is scattered into the full layout (dependent coordinates 0).
fn newton_failure(
    model: &Model,
    st: &State,
    ws: &mut Buffers,
    ds: &DoubleStepWorkspace,
    iterations: u32,
    reason: &str,
) -> Failure {
    let n = model.n_coords();
    let fi = ds.part.independent().len();
    ws.ev.f.fill(0.0);
    for (j, &k) in ds.part.independent().iter().enumerate() {
        ws.ev.f[k] = ds.f[j];
    }
    for v in 0..model.n_volumes() {
        ws.ev.f[n + v] = ds.f[fi + v];
    }
    Failure::Step(penalty::newton_failure(model, st, ws, iterations, reason))
}

/// Label index of reduced unknown `j` (x = [z_i ; p]) in the full layout [z ; p].
fn full_index(model: &Model, ds: &DoubleStepWorkspace, j: usize) -> usize {
    let fi = ds.part.independent().len();
    if j < fi {
        ds.part.independent()[j]
    } else {
        model.n_coords() + j - fi
    }
}

/// The double-step Newton problem: x = [z_i ; p] in `ds.x`, f in `ds.f`, the tangent and its
/// factors in `ds.tangent` / `ds.tangent_lu`; every evaluation solves the position problem
/// Φ(z_d, z_i) = 0 first.
pub struct DoubleStepNewton<'a> {
    model: &'a Model,
    st: &'a State,
    ws: &'a mut Buffers,
    ds: &'a mut DoubleStepWorkspace,
}

impl NewtonProblem for DoubleStepNewton<'_> {
    type Error = Failure;

    fn evaluate(&mut self) -> Result<(), Failure> {
        residual_inner(self.model, self.ws, self.ds).map_err(Failure::Position)
    }

    fn form_residual(&mut self) -> Result<(), Failure> {
        let ds = &*self.ds;
        let nx = ds.n_unknowns();
        if let Some(j) = ds.f[..nx].iter().position(|v| !v.is_finite()) {
            return Err(Failure::Step(StepError::NonFinite {
                time_s: self.st.t_s,
                step: self.st.step,
                equation: self.model.layout.names[full_index(self.model, ds, j)].clone(),
            }));
        }
        Ok(())
    }

    fn tangent_reusable(&self) -> bool {
        self.ws.tangent_valid
    }

    fn refresh_tangent(&mut self) -> Result<bool, Failure> {
        let (ws, ds) = (&mut *self.ws, &mut *self.ds);
        tangent_inner(self.model, ws, ds).map_err(Failure::Position)?;
        ws.tangent_valid = false;
        let nx = ds.n_unknowns();
        ws.tangent_id = ws
            .tangent_pending
            .record(self.st.tangent.id, &ds.tangent[..nx * nx], &[]);
        ds.tangent_lu[..nx * nx].copy_from_slice(&ds.tangent[..nx * nx]);
        if lu_factor(
            &mut ds.tangent_lu[..nx * nx],
            nx,
            &mut ds.tangent_ipiv[..nx],
        )
        .is_none()
        {
            return Ok(false);
        }
        ws.tangent_valid = true;
        Ok(true)
    }

    fn solve_increment(&mut self) {
        let ds = &mut *self.ds;
        let nx = ds.n_unknowns();
        for (d, f) in ds.dx[..nx].iter_mut().zip(ds.f[..nx].iter()) {
            *d = -f;
        }
        lu_solve(
            &ds.tangent_lu[..nx * nx],
            nx,
            &ds.tangent_ipiv[..nx],
            &mut ds.dx[..nx],
        );
    }

    fn iterate(&mut self) -> (&mut [f64], &[f64]) {
        let ds = &mut *self.ds;
        let nx = ds.n_unknowns();
        (&mut ds.x[..nx], &ds.dx[..nx])
    }

    fn tolerances(&self) -> Tolerances {
        // x = [z_i; p]: the layout's with the independent coordinates as mechanical block
        let s = &self.model.solver;
        self.model.layout.tolerances_with(
            self.ds.part.independent().len(),
            s.tol_position,
            s.tol_relative,
        )
    }

    fn counters(&mut self) -> &mut Counters {
        &mut self.ws.counters
    }

    fn failure(&mut self, iterations: u32, reason: &str) -> Failure {
        newton_failure(self.model, self.st, self.ws, self.ds, iterations, reason)
    }
}
