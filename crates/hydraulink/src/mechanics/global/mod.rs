//! Global formulations in natural (fully Cartesian) coordinates: ALI3-P with unified hydraulics
//! (004 §2–3, [`ali3p`]) and the index-1 augmented Lagrangian (002, [`i1al`]), both monolithic
//! with the hydraulics and integrated by the trapezoidal rule.
//!
//! The same TOML model runs unchanged: [`natural_coordinates::NaturalModel`], compiled into the
//! model (`Model::natural`) when a global formulation is selected, converts the joint tree and
//! the cut joints into natural coordinates and constraints, the initial natural state
//! is computed from the relative one of `initialization`, and after every step the relative
//! z, ż, z̈ are recovered for the outputs.
//!
//! # State (global formulations)
//! `State::formulation` is `FormulationState::Natural` (`state::NaturalState`): q, q̇, q̈
//! (nq = `NaturalModel::nq` each) and λ (m = `NaturalModel::n_eqs()`). A state without one of
//! these sizes (a fresh initial state) is filled from z, ż, z̈ at the first step
//! (`natural_step::ensure_natural_state`).

pub mod natural_coordinates;
pub mod natural_step;

use nalgebra::Vector3;
use num_dual::Dual64;

use crate::circuit;
use crate::circuit::reduced;
use crate::elements::hydraulics::{cylinder, CylinderMotion};
use crate::mechanics::kinematics::Kinematics;
use crate::mechanics::ports::Line;
use crate::model::Model;
use crate::solver::linalg::{DenseCholesky, DenseLu};
use crate::solver::real::Real;
use natural_coordinates::{NatCylinder, NaturalModel};

/// Evaluation buffers of the natural-coordinate residual, in scalar type `S`.
#[derive(Debug, Clone)]
pub struct NatEval<S: Real> {
    /// Unknowns x = [q; p] (ALI3-P) or [q̈; p] (I1AL).
    pub x: Vec<S>,
    /// Trial q (I1AL only, from the Newmark relations) [m or -].
    pub q: Vec<S>,
    /// Trial q̇ [m/s or 1/s].
    pub qd: Vec<S>,
    /// Trial q̈ [m/s² or 1/s²].
    pub qdd: Vec<S>,
    /// Trial ṗ [Pa/s].
    pub pd: Vec<S>,
    /// Φ (m).
    pub phi: Vec<S>,
    /// A of every constraint Φ = A·B − k at q (m).
    pub a_val: Vec<Vector3<S>>,
    /// B of every constraint at q (m).
    pub b_val: Vec<Vector3<S>>,
    /// Ȧ, Ḃ, Ä, B̈ of every constraint (I1AL only; m each).
    pub ab_rates: Vec<[Vector3<S>; 4]>,
    /// Generalized applied forces Q (gravity and cylinders) (nq) [N or N m].
    pub force: Vec<S>,
    /// M q̈ (nq).
    pub mq: Vec<S>,
    /// Cylinder s, ṡ.
    pub motion: Vec<CylinderMotion<S>>,
    /// Cylinder net force F [N].
    pub cylinder_force: Vec<S>,
    /// Net component inflow per volume [m³/s].
    pub inflow: Vec<S>,
    /// Pressure rates h [Pa/s].
    pub h: Vec<S>,
    /// Residual f.
    pub f: Vec<S>,
    /// Value of each element's driving input at the evaluation time (set by the step
    /// pipeline) [unit of the input].
    pub element_u: Vec<f64>,
}

impl<S: Real> Default for NatEval<S> {
    fn default() -> Self {
        NatEval {
            x: Vec::new(),
            q: Vec::new(),
            qd: Vec::new(),
            qdd: Vec::new(),
            pd: Vec::new(),
            phi: Vec::new(),
            a_val: Vec::new(),
            b_val: Vec::new(),
            ab_rates: Vec::new(),
            force: Vec::new(),
            mq: Vec::new(),
            motion: Vec::new(),
            cylinder_force: Vec::new(),
            inflow: Vec::new(),
            h: Vec::new(),
            f: Vec::new(),
            element_u: Vec::new(),
        }
    }
}

impl<S: Real> NatEval<S> {
    fn new(model: &Model, nm: &NaturalModel) -> Self {
        let (nq, m, nv, nc) = (nm.nq, nm.n_eqs(), model.n_volumes(), model.n_cylinders());
        NatEval {
            x: vec![S::zero(); nq + nv],
            q: vec![S::zero(); nq],
            qd: vec![S::zero(); nq],
            qdd: vec![S::zero(); nq],
            pd: vec![S::zero(); nv],
            phi: vec![S::zero(); m],
            a_val: vec![Vector3::zeros(); m],
            b_val: vec![Vector3::zeros(); m],
            ab_rates: vec![[Vector3::zeros(); 4]; m],
            force: vec![S::zero(); nq],
            mq: vec![S::zero(); nq],
            motion: vec![
                CylinderMotion {
                    s: S::zero(),
                    sd: S::zero()
                };
                nc
            ],
            cylinder_force: vec![S::zero(); nc],
            inflow: vec![S::zero(); nv],
            h: vec![S::zero(); nv],
            f: vec![S::zero(); nq + nv],
            element_u: vec![1.0; model.elements().len()],
        }
    }
}

/// Trapezoidal history terms in natural coordinates (004 eqs. 7–8, 18–19).
#[derive(Debug, Clone, Default)]
pub struct GlobalHistory {
    /// q̂̇_n = −(2/Δt q_n + q̇_n).
    pub qd_hat: Vec<f64>,
    /// q̂̈_n = −(4/Δt² q_n + 4/Δt q̇_n + q̈_n).
    pub qdd_hat: Vec<f64>,
    /// p̂̇_n = −(2/Δt p_n + ṗ_n).
    pub pd_hat: Vec<f64>,
}

/// Buffers of the global formulations (allocated only when one is selected).
#[derive(Debug, Default)]
pub struct GlobalWorkspace {
    /// Whether the model carries its natural-coordinate model (`Model::natural`, compiled for a
    /// global formulation); all buffers below are empty otherwise.
    pub active: bool,
    /// f64 evaluation.
    pub ev: NatEval<f64>,
    /// Dual evaluation (tangent columns).
    pub evd: NatEval<Dual64>,
    /// History terms.
    pub hist: GlobalHistory,
    /// Newton tangent (nq + nv) and its LU.
    pub tangent: Option<DenseLu>,
    /// Projection matrix M + (Δt²/4) α Φ_qᵀ Φ_q (nq) and its LU.
    pub projection: Option<DenseLu>,
    /// The projection matrix and its Cholesky factors (the LU above is the fallback).
    pub projection_chol: DenseCholesky,
    /// Unknowns [q; p] of the step being solved.
    pub x: Vec<f64>,
    /// Newton increment.
    pub dx: Vec<f64>,
    /// λ (m) of the step being solved.
    pub lambda: Vec<f64>,
    /// The predictor x⁰ of the step (restart of a failed simplified Newton).
    pub x_predictor: Vec<f64>,
    /// λ⁰ of the step (restart of a failed simplified Newton).
    pub lambda_predictor: Vec<f64>,
    /// Diagonal of the last tangent.
    pub diag: Vec<f64>,
    /// Φ_q, row-major m × nq, at the accepted positions.
    pub jac: Vec<f64>,
    /// Scratch nq-vectors.
    pub tmp: Vec<f64>,
    /// Scratch nq-vector.
    pub tmp2: Vec<f64>,
    /// Scratch m-vector.
    pub tmp_m: Vec<f64>,
    /// Relative-coordinate kinematics (conversion of the initial state).
    pub kin: Option<Kinematics<f64>>,
    /// Labels: natural coordinates, then `<volume>.p`.
    pub labels: Vec<String>,
    /// Unknowns the hydraulic ports depend on: the coordinates the cylinder pins depend on,
    /// then all pressures (the dual columns of the structured tangent).
    pub port_cols: Vec<usize>,
}

impl GlobalWorkspace {
    /// Buffers for `model` (empty unless it carries its natural-coordinate model: the step then
    /// reports the formulation unavailable).
    pub fn new(model: &Model) -> Self {
        let Some(nm) = model.natural.as_ref() else {
            return GlobalWorkspace::default();
        };
        let (nq, m, nv) = (nm.nq, nm.n_eqs(), model.n_volumes());
        // x = [q; p]: the natural coordinates in place of the layout's z block
        let mut labels = nm.labels.clone();
        labels.extend_from_slice(&model.layout.names[model.layout.p.clone()]);
        let mut port_cols: Vec<usize> = nm
            .cylinders
            .iter()
            .flat_map(|c| c.base.columns().chain(c.rod.columns()).map(|(i, _)| i))
            .collect();
        port_cols.extend(
            nm.element_points
                .iter()
                .flatten()
                .flat_map(|c| c.base.columns().chain(c.rod.columns()).map(|(i, _)| i)),
        );
        port_cols.sort_unstable();
        port_cols.dedup();
        port_cols.extend(nq..nq + nv);
        GlobalWorkspace {
            port_cols,
            active: true,
            ev: NatEval::new(model, nm),
            evd: NatEval::new(model, nm),
            hist: GlobalHistory {
                qd_hat: vec![0.0; nq],
                qdd_hat: vec![0.0; nq],
                pd_hat: vec![0.0; nv],
            },
            tangent: Some(DenseLu::new(nq + nv)),
            projection: Some(DenseLu::new(nq)),
            projection_chol: DenseCholesky::new(nq),
            x: vec![0.0; nq + nv],
            dx: vec![0.0; nq + nv],
            lambda: vec![0.0; m],
            x_predictor: vec![0.0; nq + nv],
            lambda_predictor: vec![0.0; m],
            diag: vec![0.0; nq + nv],
            jac: vec![0.0; m * nq],
            tmp: vec![0.0; nq],
            tmp2: vec![0.0; nq],
            tmp_m: vec![0.0; m],
            kin: Some(Kinematics::new(model.n_coords())),
            labels,
        }
    }
}

/// The natural-coordinate model of `model`, compiled with it for a global formulation
/// (`Model::natural`). Called only where the workspace is active, which it is only then.
pub fn natural(model: &Model) -> &NaturalModel {
    model
        .natural
        .as_ref()
        .expect("a global workspace is active only for a model compiled with its natural model")
}

/// The line port in natural coordinates, the one mapping of (q, q̇) to (n, s, ṡ) for
/// cylinders and elements: r = C q + c is linear, and the line port of these two points
/// (`mechanics::ports::Line`: s = ‖r_rod − r_base‖, n = (r_rod − r_base)/s,
/// ṡ = n·(ṙ_rod − ṙ_base), 000 eq. 45). The force F n maps back as Cᵀ F n (`Lin::add_grad`).
#[inline]
pub fn line<S: Real>(pts: &NatCylinder, q: &[S], qd: &[S]) -> (Vector3<S>, S, S) {
    let line = Line::between(pts.base.eval(q), pts.rod.eval(q));
    let sd = line.rate_of(&pts.base.rate(qd), &pts.rod.rate(qd));
    (line.n, line.s, sd)
}

/// Cylinder ports in natural coordinates: s = |r_rod − r_base|, ṡ = n·(ṙ_rod − ṙ_base)
/// (000 eq. 45); the force F n on the rod pin and −F n on the base pin enter Q as Cᵀ F n.
#[allow(clippy::too_many_arguments)]
pub fn cylinders<S: Real>(
    model: &Model,
    nm: &NaturalModel,
    q: &[S],
    qd: &[S],
    p: &[S],
    motion: &mut [CylinderMotion<S>],
    cylinder_force: &mut [S],
    force: &mut [S],
) {
    for (c, (cyl, nc)) in model.cylinders().zip(nm.cylinders.iter()).enumerate() {
        let (n, s, sd) = line(nc, q, qd);
        motion[c] = CylinderMotion { s, sd };
        let f = cylinder::force(cyl, p[cyl.vol_a.0], p[cyl.vol_b.0], sd);
        cylinder_force[c] = f;
        let fv = n * f;
        nc.rod.add_grad(1.0, &fv, force);
        nc.base.add_grad(-1.0, &fv, force);
    }
}

/// The elements' mechanical ports in natural coordinates (`crate::elements::element`): a line port's
/// s = |r_rod − r_base|, ṡ = n·(ṙ_rod − ṙ_base) with r = C q linear in q, its force F n on the
/// rod point and −F n on the base point entering Q as Cᵀ F n (as the cylinders'); a point force
/// in global axes as Cᵀ F⃗. Torques, joint forces and body-axis point forces have no port here
/// (`Component::natural_coordinate_port` is false for them; the model compile rejects them).
pub fn element_forces<S: Real>(
    model: &Model,
    nm: &NaturalModel,
    q: &[S],
    qd: &[S],
    u: &[f64],
    force: &mut [S],
) {
    for (i, (e, pts)) in model
        .elements()
        .iter()
        .zip(nm.element_points.iter())
        .enumerate()
    {
        let Some(pts) = pts else { continue };
        let mut at = crate::elements::element::PortState::zero();
        at.u = u[i];
        match e.ports().mech {
            crate::elements::element::MechPort::Line { .. } => {
                let (n, s, sd) = line(pts, q, qd);
                at.s = s;
                at.sd = sd;
                let fv = n * e.evaluate(&at).force;
                pts.rod.add_grad(1.0, &fv, force);
                pts.base.add_grad(-1.0, &fv, force);
            }
            crate::elements::element::MechPort::Point { .. } => {
                let f = e.evaluate(&at).vector;
                pts.base.add_grad(1.0, &f, force);
            }
            _ => {}
        }
    }
}

/// q̇, q̈, ṗ of x = `ev.x` by the trapezoidal relations (004 eqs. 7–8, 18).
pub fn trapezoidal_rates<S: Real>(
    model: &Model,
    nm: &NaturalModel,
    ev: &mut NatEval<S>,
    hist: &GlobalHistory,
) {
    let nq = nm.nq;
    let dt = model.solver.step_s;
    let (c1, c2) = (2.0 / dt, 4.0 / (dt * dt));
    let (q, p) = ev.x.split_at(nq);
    for i in 0..nq {
        ev.qd[i] = q[i] * c1 + hist.qd_hat[i];
        ev.qdd[i] = q[i] * c2 + hist.qdd_hat[i];
    }
    for (v, pd) in ev.pd.iter_mut().enumerate() {
        *pd = p[v] * c1 + hist.pd_hat[v];
    }
}

/// The hydraulic ports at the rates of `ev`: adds the cylinder forces Cᵀ F n to `ev.force`
/// and evaluates h(p, q, q̇) (000 eqs. 22, 44–45).
pub fn ports<S: Real>(model: &Model, nm: &NaturalModel, ev: &mut NatEval<S>, spools: &[f64]) {
    let (q, p) = ev.x.split_at(nm.nq);
    cylinders(
        model,
        nm,
        q,
        &ev.qd,
        p,
        &mut ev.motion,
        &mut ev.cylinder_force,
        &mut ev.force,
    );
    element_forces(model, nm, q, &ev.qd, &ev.element_u, &mut ev.force);
    circuit::pressure_rates(model, p, &ev.motion, spools, &mut ev.inflow, &mut ev.h);
}

/// Stage `evaluate`: q̇, q̈, ṗ from x by the trapezoidal relations, then Φ, Q(q, q̇, p)
/// (gravity + cylinders), M q̈ and h(p, q, q̇).
pub fn evaluate<S: Real>(
    model: &Model,
    nm: &NaturalModel,
    ev: &mut NatEval<S>,
    hist: &GlobalHistory,
    spools: &[f64],
) {
    trapezoidal_rates(model, nm, ev, hist);
    constraint_values(nm, ev);
    for (f, g) in ev.force.iter_mut().zip(nm.gravity_force.iter()) {
        *f = S::from(*g);
    }
    ports(model, nm, ev, spools);
    nm.mass_times(&ev.qdd, &mut ev.mq);
}

/// Adds the hydraulic port columns of the tangent into `a` (column-major, leading dimension
/// `nx`), by one dual pass per entry j of `port_cols` at the f64 point (q, q̇, p, ṗ): seeding
/// the unknown x_j, with ∂q_j/∂x_j = `dq`, ∂q̇_j/∂x_j = `dqd` for a mechanical unknown
/// (ALI3-P, x = q: 1 and 2/Δt; I1AL, x = q̈: Δt²/4 and Δt/2) and ∂p/∂p = 1, ∂ṗ/∂p = 2/Δt for a
/// pressure. The columns get −(Δt²/4) ∂Q/∂x_j (cylinder forces) in the mechanical rows and
/// (Δt²/4) ∂(ṗ − h)/∂x_j (or the scaled flow balance of an algebraic volume) in the pressure
/// rows.
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_port_columns(
    model: &Model,
    nm: &NaturalModel,
    (q, qd, p, pd): (&[f64], &[f64], &[f64], &[f64]),
    (dq, dqd): (f64, f64),
    port_cols: &[usize],
    spools: &[f64],
    evd: &mut NatEval<Dual64>,
    nx: usize,
    a: &mut [f64],
) {
    let nq = nm.nq;
    let dt = model.solver.step_s;
    let c = dt * dt / 4.0;
    let c1 = 2.0 / dt;
    for (d, v) in evd.q.iter_mut().zip(q) {
        *d = Dual64::from(*v);
    }
    for (d, v) in evd.qd.iter_mut().zip(qd) {
        *d = Dual64::from(*v);
    }
    for (d, v) in evd.x[nq..].iter_mut().zip(p) {
        *d = Dual64::from(*v);
    }
    for (d, v) in evd.pd.iter_mut().zip(pd) {
        *d = Dual64::from(*v);
    }
    let seed = |evd: &mut NatEval<Dual64>, j: usize, on: f64| {
        if j < nq {
            evd.q[j].eps = dq * on;
            evd.qd[j].eps = dqd * on;
        } else {
            evd.x[j].eps = on;
            evd.pd[j - nq].eps = c1 * on;
        }
    };
    for &j in port_cols {
        seed(evd, j, 1.0);
        evd.force.iter_mut().for_each(|f| *f = Dual64::from(0.0));
        let x_p = &evd.x[nq..];
        cylinders(
            model,
            nm,
            &evd.q,
            &evd.qd,
            x_p,
            &mut evd.motion,
            &mut evd.cylinder_force,
            &mut evd.force,
        );
        element_forces(model, nm, &evd.q, &evd.qd, &evd.element_u, &mut evd.force);
        circuit::pressure_rates(model, x_p, &evd.motion, spools, &mut evd.inflow, &mut evd.h);
        let col = &mut a[j * nx..(j + 1) * nx];
        for i in 0..nq {
            col[i] -= c * evd.force[i].eps;
        }
        for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
            col[nq + v] += c * reduced::pressure_row(vol, evd.pd[v], evd.h[v]).eps;
        }
        seed(evd, j, 0.0);
    }
}

/// A, B and Φ = A·B − k of every constraint at q = `ev.x[..nq]` into `ev`.
pub fn constraint_values<S: Real>(nm: &NaturalModel, ev: &mut NatEval<S>) {
    let q = &ev.x[..nm.nq];
    for (((phi, a), b), eq) in ev
        .phi
        .iter_mut()
        .zip(ev.a_val.iter_mut())
        .zip(ev.b_val.iter_mut())
        .zip(nm.eqs.iter())
    {
        *a = eq.a.eval(q);
        *b = eq.b.eval(q);
        *phi = a.dot(b) - S::from(eq.k);
    }
}

/// Φ_q (row-major m × nq) into `jac` from the A, B of an evaluated point (only the sparsity
/// pattern of each row is written; the rest of `jac` must be zero).
pub fn jacobian_at(nm: &NaturalModel, ev: &NatEval<f64>, jac: &mut [f64]) {
    for (((eq, row), a), b) in nm
        .eqs
        .iter()
        .zip(jac.chunks_exact_mut(nm.nq))
        .zip(ev.a_val.iter())
        .zip(ev.b_val.iter())
    {
        for &i in &eq.pattern {
            row[i] = 0.0;
        }
        eq.a.add_grad(b, row);
        eq.b.add_grad(a, row);
    }
}

/// f_q = M q̈ − Q + Φ_qᵀ (α φ + λ) into `ev.f[..nq]` (unscaled), with φ = `ev.phi` (Φ for
/// ALI3-P, Ψ for I1AL) and the A, B of every constraint cached in `ev`.
pub(crate) fn mechanical_residual<S: Real>(
    nm: &NaturalModel,
    ev: &mut NatEval<S>,
    lambda: &[f64],
    alpha: f64,
) {
    let nq = nm.nq;
    for i in 0..nq {
        ev.f[i] = ev.mq[i] - ev.force[i];
    }
    for ((((eq, phi), l), a), b) in nm
        .eqs
        .iter()
        .zip(ev.phi.iter())
        .zip(lambda.iter())
        .zip(ev.a_val.iter())
        .zip(ev.b_val.iter())
    {
        let g = *phi * alpha + *l;
        eq.a.add_grad(&(*b * g), &mut ev.f[..nq]);
        eq.b.add_grad(&(*a * g), &mut ev.f[..nq]);
    }
}

/// Stage `assemble`: f = (Δt²/4)[M q̈ + Φ_qᵀ(αΦ + λ) − Q ; ṗ − h] (004 eq. 25) from an
/// evaluated point.
pub fn form_residual<S: Real>(
    model: &Model,
    nm: &NaturalModel,
    ev: &mut NatEval<S>,
    lambda: &[f64],
) {
    let nq = nm.nq;
    let dt = model.solver.step_s;
    let c = dt * dt / 4.0;
    mechanical_residual(nm, ev, lambda, model.solver.step_penalty());
    for fi in ev.f[..nq].iter_mut() {
        *fi *= c;
    }
    // ODE rows ṗ − h, or the scaled flow balance −h of algebraic volumes (002 Pub II)
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        ev.f[nq + v] = reduced::pressure_row(vol, ev.pd[v], ev.h[v]) * c;
    }
}

/// The matrix held by `lu` (before factoring), column-major `n × n` (test diagnostics).
/// Allocates.
pub fn dense_columns(lu: &DenseLu) -> Vec<f64> {
    let a = lu.matrix();
    let n = lu.n();
    let mut out = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            out[j * n + i] = a[(i, j)];
        }
    }
    out
}

/// ∂f/∂x by one dual pass of `residual` (which fills `evd.f` from `evd.x`) per unknown,
/// column-major `n × n` (the reference for the structured tangents in the tests). Allocates.
pub fn dual_columns(
    x: &[f64],
    evd: &mut NatEval<num_dual::Dual64>,
    mut residual: impl FnMut(&mut NatEval<num_dual::Dual64>),
) -> Vec<f64> {
    let n = x.len();
    let mut out = vec![0.0; n * n];
    for j in 0..n {
        for (k, (d, xk)) in evd.x.iter_mut().zip(x.iter()).enumerate() {
            *d = num_dual::Dual64::new(*xk, if k == j { 1.0 } else { 0.0 });
        }
        residual(evd);
        for i in 0..n {
            out[j * n + i] = evd.f[i].eps;
        }
    }
    out
}
