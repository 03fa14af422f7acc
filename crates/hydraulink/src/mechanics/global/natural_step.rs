//! The natural-coordinate step terms both global formulations take (ALI3-P,
//! `formulations/ali3p.rs`, and I1AL, `formulations/i1al.rs`): the natural state from the
//! relative one, the trapezoid's history terms and predictor, the constant mass and constraint
//! Hessian blocks of their tangents, their tolerances and Newton failure report, and the
//! workspace's availability and restart.

use nalgebra::{DMatrix, DVector};

use super::natural_coordinates::{NatEq, NaturalModel};
use super::{cylinders, natural, GlobalWorkspace};
use crate::model::Model;
use crate::solver::linalg::pinv_solve;
use crate::solver::newton::Tolerances;
use crate::state::{FormulationState, NaturalState, State};
use crate::StepError;

/// Stage `initialize`: fills `st.formulation` with the natural state [q | q̇ | q̈ | λ] from the
/// relative state when it does not hold one of this model yet (the first step after
/// `initialize`). λ solves Φ_qᵀ λ = Q − M q̈ in least squares (minimum norm: the natural
/// constraints are redundant). Allocates, once.
pub fn ensure_natural_state(model: &Model, st: &mut State, g: &mut GlobalWorkspace) {
    let nm = natural(model);
    let (nq, m) = (nm.nq, nm.n_eqs());
    if let Some(ns) = st.formulation.natural() {
        if ns.q.len() == nq && ns.lambda.len() == m {
            return;
        }
    }
    let mut ns = NaturalState {
        q: vec![0.0; nq],
        qd: vec![0.0; nq],
        qdd: vec![0.0; nq],
        lambda: vec![0.0; m],
    };
    let kin = g.kin.as_mut().expect("global workspace is active");
    nm.from_relative(
        model,
        kin,
        &st.z,
        &st.zd,
        &st.zdd,
        &mut ns.q,
        &mut ns.qd,
        &mut ns.qdd,
    );
    let (q, qd, qdd) = (&ns.q, &ns.qd, &ns.qdd);
    let ev = &mut g.ev;
    ev.force.copy_from_slice(&nm.gravity_force);
    cylinders(
        model,
        nm,
        q,
        qd,
        &st.p,
        &mut ev.motion,
        &mut ev.cylinder_force,
        &mut ev.force,
    );
    nm.mass_times(qdd, &mut ev.mq);
    let rhs = DVector::from_iterator(nq, (0..nq).map(|i| ev.force[i] - ev.mq[i]));
    let mut jt = DMatrix::<f64>::zeros(nq, m);
    let mut row = vec![0.0; nq];
    for (r, eq) in nm.eqs.iter().enumerate() {
        row.iter_mut().for_each(|x| *x = 0.0);
        eq.add_grad(q, 1.0, &mut row);
        for i in 0..nq {
            jt[(i, r)] = row[i];
        }
    }
    let lambda = pinv_solve(&jt, &rhs);
    ns.lambda.copy_from_slice(lambda.as_slice());
    st.formulation = FormulationState::Natural(ns);
}

/// Stage `predict`: history terms, predictor x⁰ = [q + Δt q̇ + ½Δt² q̈ ; p + Δt ṗ + ½Δt² p̈]
/// and λ⁰ = λ_n.
pub fn predict(model: &Model, st: &State, g: &mut GlobalWorkspace) {
    let nq = natural(model).nq;
    let nv = model.n_volumes();
    let dt = model.solver.step_s;
    let (c1, c2) = (2.0 / dt, 4.0 / (dt * dt));
    let ns = natural_state(st);
    let (q, qd, qdd) = (&ns.q, &ns.qd, &ns.qdd);
    for i in 0..nq {
        g.hist.qd_hat[i] = -(c1 * q[i] + qd[i]);
        g.hist.qdd_hat[i] = -(c2 * q[i] + 4.0 / dt * qd[i] + qdd[i]);
        g.x[i] = q[i] + dt * qd[i] + 0.5 * dt * dt * qdd[i];
    }
    for v in 0..nv {
        g.hist.pd_hat[v] = -(c1 * st.p[v] + st.pd[v]);
        g.x[nq + v] = st.p[v] + dt * st.pd[v] + 0.5 * dt * dt * st.pdd[v];
    }
    g.lambda.copy_from_slice(&ns.lambda);
}

/// The natural state of `st`, which the stage `initialize` ([`ensure_natural_state`]) has filled.
pub fn natural_state(st: &State) -> &NaturalState {
    st.formulation
        .natural()
        .expect("the natural state is filled by ensure_natural_state before the step")
}

/// `a` (column-major, leading dimension `nx`) += `scale` · M on the q block.
pub fn add_mass(nm: &NaturalModel, scale: f64, nx: usize, a: &mut [f64]) {
    for &(i, j, m) in &nm.mass {
        a[j * nx + i] += scale * m;
    }
}

/// `a` (column-major, leading dimension `nx`) += `w` · H on the q block, H the constant Hessian
/// of Φ = A·B − k: H = A_qᵀ B_q + B_qᵀ A_q (assembled once, [`NatEq::hessian`]).
pub fn add_hessian(eq: &NatEq, w: f64, nx: usize, a: &mut [f64]) {
    if w == 0.0 {
        return;
    }
    for &(i, j, h) in &eq.hessian {
        a[j * nx + i] += w * h;
    }
}

/// `a` (column-major, leading dimension `nx`) += `s` · Φ_qᵀ Φ_q on the q block, from the rows
/// of `jac` (row-major m × nq) on their sparsity patterns.
pub fn add_jtj(nm: &NaturalModel, jac: &[f64], s: f64, nx: usize, a: &mut [f64]) {
    for (eq, row) in nm.eqs.iter().zip(jac.chunks_exact(nm.nq)) {
        for &j in &eq.pattern {
            let sj = s * row[j];
            if sj == 0.0 {
                continue;
            }
            for &i in &eq.pattern {
                a[j * nx + i] += sj * row[i];
            }
        }
    }
}

/// Tolerances of x = [q; p]: natural coordinates [m or -], pressures [Pa] (the layout's with
/// the mechanical block q).
pub fn tolerances(model: &Model, nq: usize) -> Tolerances {
    let s = &model.solver;
    model
        .layout
        .tolerances_with(nq, s.tol_position, s.tol_relative)
}

/// The step error of a failed Newton solve after `iterations`: the worst residuals against
/// their tolerances on the diagonal of the last tangent (`solver::newton::failure`).
pub fn newton_failure(
    model: &Model,
    st: &State,
    g: &GlobalWorkspace,
    iterations: u32,
    reason: &str,
) -> StepError {
    crate::solver::newton::failure(
        st.t_s,
        st.step,
        iterations,
        &g.ev.f,
        &g.diag,
        |i| tolerances(model, natural(model).nq).atol(i),
        &g.labels,
        reason,
    )
}

/// Stage `initialize` of the natural-coordinate formulations (ALI3-P, I1AL): the natural state
/// from the relative one ([`ensure_natural_state`]), when the workspace is active.
pub fn initialize_natural(model: &Model, st: &mut State, own: &mut GlobalWorkspace) {
    if own.active {
        ensure_natural_state(model, st, own);
    }
}

/// Whether a natural-coordinate formulation can step `model` (its workspace is active).
pub fn natural_available(model: &Model, own: &GlobalWorkspace) -> Result<(), StepError> {
    if own.active {
        return Ok(());
    }
    Err(StepError::Unavailable {
        formulation: model.solver.formulation.name().to_string(),
    })
}

/// Back to the predictor and its multipliers (a second Newton attempt).
pub fn restart_natural(g: &mut GlobalWorkspace) {
    g.x.copy_from_slice(&g.x_predictor);
    g.lambda.copy_from_slice(&g.lambda_predictor);
}
