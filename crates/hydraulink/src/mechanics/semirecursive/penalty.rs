//! The penalty method's step terms in relative coordinates (000 §2.1–4) that the semi-recursive
//! formulations share (penalty, `formulations/penalty.rs`; double-step,
//! `formulations/double_step.rs`; z-only, `formulations/z_only.rs`): the valve positions and
//! the trapezoid's history terms and predictor at the start of a step, and the Newton failure
//! report over the layout's unknowns.

use crate::elements::hydraulics;
use crate::model::Model;
use crate::pipeline::buffers::Buffers;
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
    hydraulics::advance_positions(model, st, model.solver.step_s, &mut ws.spool_new);
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
