//! The penalty method's step terms in relative coordinates (000 §2.1–4) that the semi-recursive
//! formulations share (penalty, `formulations/penalty.rs`; double-step,
//! `formulations/double_step.rs`; z-only, `formulations/z_only/mod.rs`): the valve positions and
//! the trapezoid's history terms and predictor at the start of a step, the residual rows
//! (000 eq. 39), the projection matrix (000 eqs. 20–21), and the Newton failure report over the
//! layout's unknowns.

use crate::circuit;
use crate::circuit::reduced;
use crate::mechanics::assembly::Evaluator;
use crate::mechanics::buffers::Buffers;
use crate::model::Model;

use crate::solver::real::Real;
use crate::state::State;
use crate::StepError;

/// The step error of a failed Newton solve after `iterations`: the worst residuals against
/// the layout's tolerances on the diagonal of the last tangent (`solver::newton::failure`).
pub fn newton_failure(
    model: &Model,
    st: &State,
    ws: &Buffers,
    iterations: u32,
    reason: &str,
) -> StepError {
    crate::solver::newton::failure(
        st.t_s,
        st.step,
        iterations,
        &ws.ev.f,
        &ws.diag,
        |i| model.layout.atol(i),
        &model.layout.names,
        reason,
    )
}

/// Stages `advance valves` and `predict`: spool positions at t_k+1 (every element's by its own
/// law), then `predict`.
pub fn prepare(model: &Model, st: &State, ws: &mut Buffers) {
    circuit::advance_positions(model, st, model.solver.step_s, &mut ws.spool_new);
    predict(model, st, ws);
}

/// Stage `predict`: history terms, predictor x⁰ and λ⁰ = λ_k.
pub fn predict(model: &Model, st: &State, ws: &mut Buffers) {
    let n = model.n_coords();
    let nv = model.n_volumes();
    let dt = model.solver.step_s;
    let (c1, c2) = (2.0 / dt, 4.0 / (dt * dt));
    // History terms (000 eqs. 33–34) and predictors (000 §4).
    for i in 0..n {
        ws.hist.zd_hat[i] = -(c1 * st.z[i] + st.zd[i]);
        ws.hist.zdd_hat[i] = -(c2 * st.z[i] + 4.0 / dt * st.zd[i] + st.zdd[i]);
        ws.x[i] = st.z[i] + dt * st.zd[i] + 0.5 * dt * dt * st.zdd[i];
    }
    for v in 0..nv {
        ws.hist.pd_hat[v] = -(c1 * st.p[v] + st.pd[v]);
        // second-order predictor, like the positions' (000 §4 uses p + Δt ṗ; this one starts
        // closer to the solution and saves iterations while the oil column oscillates)
        ws.x[n + v] = st.p[v] + dt * st.pd[v] + 0.5 * dt * dt * st.pdd[v];
    }
    // friction states: ŵ̇_k and the local trapezoidal predictor (`friction::predict`)
    for j in 0..st.friction.len() {
        ws.hist.wd_hat[j] = -(c1 * st.friction[j] + st.friction_rate[j]);
    }
    let w0 = model.layout.w.start;
    for (e, b) in model.layout.friction.iter().enumerate() {
        let r = b.states.clone();
        crate::elements::friction::predict(
            b.owner.law(model),
            st.friction_velocity_m_s[e],
            &st.friction[r.clone()],
            &st.friction_rate[r.clone()],
            dt,
            &mut ws.x[w0 + r.start..w0 + r.end],
        );
    }
    // internal states: ê̇_k and the predictor e_k + Δt ė_k
    let e0 = model.layout.internal.start;
    for (j, (e, ed)) in st.internal.iter().zip(st.internal_rate.iter()).enumerate() {
        ws.hist.ed_hat[j] = -(c1 * e + ed);
        ws.x[e0 + j] = e + dt * ed;
    }
    ws.lambda.copy_from_slice(&st.lambda);
}

/// Stage `assemble`: f = (Δt²/4)[M′ z̈ + Φ_zᵀ(αΦ + λ) − Q′ ; ṗ − h] from an evaluated point.
pub fn form_residual<S: Real>(model: &Model, ev: &mut Evaluator<S>, lambda: &[f64]) {
    form_mechanism_rows(model, ev, lambda);
    form_state_rows(model, ev);
}

/// The rows of the joint coordinates: f_z = (Δt²/4)[M′ z̈ + Φ_zᵀ(αΦ + λ) + Bᵀ(α_v Ψ + σ) − Q′].
fn form_mechanism_rows<S: Real>(model: &Model, ev: &mut Evaluator<S>, lambda: &[f64]) {
    let n = model.n_coords();
    let dt = model.solver.step_s;
    let c = dt * dt / 4.0;
    let alpha = model.solver.step_penalty();
    // g_r = αΦ_r + λ_r, then f_z = c (M′ z̈ + Φ_zᵀ g − Q′), row by row; on a tree without
    // the dense M′, M′ z̈ by the tree passes (recursive_mass.rs)
    if !ev.dynamics.form_mass {
        if !ev.dynamics.mass_v_valid {
            ev.dynamics.mass_times(model, &ev.kin, &ev.zdd);
        }
        ev.dynamics.mass_v_valid = false;
        let (jac, phi) = (&ev.constraints.jac, &ev.constraints.phi);
        for i in 0..n {
            let mut acc = ev.dynamics.mass_v[i] - ev.dynamics.force[i];
            for (r, (ph, l)) in phi.iter().zip(lambda.iter()).enumerate() {
                acc += jac[r * n + i] * (*ph * alpha + *l);
            }
            ev.f[i] = acc * c;
        }
    } else {
        let (mass, jac, phi) = (&ev.dynamics.mass, &ev.constraints.jac, &ev.constraints.phi);
        for (i, (row, q)) in mass
            .chunks_exact(n.max(1))
            .zip(ev.dynamics.force.iter())
            .enumerate()
        {
            let mut acc = -*q;
            for (mij, a) in row.iter().zip(ev.zdd.iter()) {
                acc += *mij * *a;
            }
            for (r, (ph, l)) in phi.iter().zip(lambda.iter()).enumerate() {
                acc += jac[r * n + i] * (*ph * alpha + *l);
            }
            ev.f[i] = acc * c;
        }
    }
    // nonholonomic rows (docs/theory 9.8): + Bᵀ(α_v Ψ + σ), α_v = α Δt/2, σ after λ
    let m = model.n_constraints();
    let nh = &ev.nonholonomic;
    let av = alpha * dt / 2.0;
    for (r, (psi, sg)) in nh.psi.iter().zip(lambda[m..].iter()).enumerate() {
        let g = (*psi * av + *sg) * c;
        for (fi, bi) in ev.f[..n].iter_mut().zip(nh.b[r * n..(r + 1) * n].iter()) {
            *fi += *bi * g;
        }
    }
}

/// The rows of the first-order states: (Δt²/4)(ṗ − h) (or the scaled flow balance of an
/// algebraic volume), (Δt²/4)(ẇ − u), (Δt²/4)(ė − g).
pub fn form_state_rows<S: Real>(model: &Model, ev: &mut Evaluator<S>) {
    let n = model.n_coords();
    let dt = model.solver.step_s;
    let c = dt * dt / 4.0;
    // ODE rows ṗ − h, or the scaled flow balance −h of algebraic volumes (002 Pub II)
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        ev.f[n + v] = reduced::pressure_row(vol, ev.pd[v], ev.h[v]) * c;
    }
    // friction-state rows (Δt²/4)(ẇ − u(ṡ, w)) (003 Pub II Appendix A)
    let nv = model.n_volumes();
    for (j, (wt, u)) in ev.fstate_trap.iter().zip(ev.fstate_rate.iter()).enumerate() {
        ev.f[n + nv + j] = (*wt - *u) * c;
    }
    // internal-state rows (Δt²/4)(ė − g(e, ports)), scaled like the friction-state rows
    let e0 = model.layout.internal.start;
    for (j, (et, g)) in ev
        .internal_trap
        .iter()
        .zip(ev.internal_rate.iter())
        .enumerate()
    {
        ev.f[e0 + j] = (*et - *g) * c;
    }
}

/// P = M′ + (Δt²/4) α Σ_r Φ_r,zᵀ Φ_r,z, the matrix of the projections (000 eqs. 20–21), from
/// the row-major M′ and constraint-Jacobian `rows`; `ca` = (Δt²/4) α. P is symmetric, so the
/// row-major fill is also the column-major one `a` expects.
pub fn projection_matrix<'a>(
    a: &mut [f64],
    mass: &[f64],
    rows: impl Iterator<Item = &'a [f64]>,
    ca: f64,
) {
    let n = (mass.len() as f64).sqrt().round() as usize;
    a.copy_from_slice(mass);
    for jr in rows {
        for (i, ji) in jr.iter().enumerate() {
            if *ji != 0.0 {
                let s = ca * ji;
                for (aij, jj) in a[i * n..(i + 1) * n].iter_mut().zip(jr.iter()) {
                    *aij += s * jj;
                }
            }
        }
    }
}

/// out = A v for the row-major n × n matrix `a` (n = v.len()); `out` may be longer.
pub fn mat_vec(out: &mut [f64], a: &[f64], v: &[f64]) {
    if v.is_empty() {
        return;
    }
    for (t, row) in out.iter_mut().zip(a.chunks_exact(v.len())) {
        *t = row.iter().zip(v.iter()).map(|(x, y)| x * y).sum();
    }
}
