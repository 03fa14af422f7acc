//! Kinematic guidance (004 §4, reference note 004-A.4): no hydraulic dynamics; the length of
//! each guided cylinder follows a prescribed signal through a rheonomic constraint added to the
//! penalty formulation's constraint set (000 §2.3):
//!
//! ```text
//! Φ_g,c(z, t) = s_c(z) − s_ref,c(t) = 0                                   (004 eq. 39)
//! ```
//!
//! Unknowns z only (the pressures are held at their initial values and reported as such). With
//! the trapezoidal relations (000 eqs. 33–34) the residual is
//! ```text
//! f = (Δt²/4) [ M′ z̈ + Φ_zᵀ (α Φ + λ) + Φ_g,zᵀ (α Φ_g + λ_g) − Q′(z, ż) ]      (000 eq. 39)
//! ```
//! where Φ_g,zᵀ (αΦ_g + λ_g) is applied as the cylinder force F_c = −(α Φ_g,c + λ_g,c) along the
//! cylinder axis (the generalized force of F n at the pins is (∂s/∂z)ᵀ F). λ_g ← λ_g + αΦ_g after
//! each solve (000 eq. 19). Projections with the rheonomic terms (004 eqs. 14–15):
//! ```text
//! P = M′ + (Δt²/4) α (Φ_zᵀ Φ_z + Φ_g,zᵀ Φ_g,z)
//! P ż = M′ ż* − (Δt²/4) α Φ_g,zᵀ Φ_t,                          Φ_t = −ṡ_ref
//! P z̈ = M′ z̈* − (Δt²/4) α [Φ_zᵀ Φ̇_z ż + Φ_g,zᵀ (Φ̇_g,z ż + Φ̇_t)],  Φ̇_t = −s̈_ref
//! ```
//! ṡ_ref is the `velocity_input` signal if given (a recorded `<cylinder>.velocity` column: 004
//! recorded s, ṡ and s̈), and s̈_ref its trapezoidal derivative s̈_k+1 = 2(ṡ_k+1 − ṡ_k)/Δt − s̈_k
//! from s̈(0) of the initial state (consistent with the trapezoidal run that recorded ṡ);
//! without it both are central differences of s_ref over ±Δt (second order). The trapezoidal history carries ż and z̈ from
//! step to step undamped, so errors of ṡ_ref/s̈_ref show up in the force (not in the positions):
//! replay the recorded velocity when force accuracy matters. Φ̇_g,z ż is the
//! velocity-product part of s̈: n·(r̈⁰_rod − r̈⁰_base) + (|ḋ|² − ṡ²)/s.
//!
//! The reported actuator force `<cylinder>.force` is the constraint force along the cylinder,
//! F = −λ_g after the last multiplier update (positive pushes the pins apart, like the
//! hydraulic force). Pressures and spools are reported: pressures stay at p(0); spools follow
//! their inputs as usual (they drive nothing).
//!
//! `State::formulation` holds `FormulationState::Guidance` (`state::GuidanceState`): λ_g and
//! s̈_ref(t_k), one entry each per `Model::solver.guidance` entry (filled at the first step).
//!
//! The Newton loop and projections over the mechanical unknowns z only (`step_z_only`) are
//! shared with the multi-rate formulation (`integrator::multirate`), which feeds the cylinder
//! forces from a sub-integrated hydraulics instead.

use nalgebra::Vector3;
use num_dual::Dual64;

use crate::advance;
use crate::assembly::Evaluator;
use crate::hydraulics::CylinderMotion;
use crate::integrator::multirate;
use crate::integrator::newton::{self, NewtonProblem, TangentPolicy, Tolerances};
use crate::mechanics::constraints;
use crate::mechanics::kinematics::for_each_on_path;
use crate::mechanics::semirecursive::penalty;
use crate::model::spec::{Formulation, GuidanceSpec, InputSpec, ModelSpec, SignalSpec};
use crate::model::Model;
use crate::real::Real;
use crate::state::{FormulationState, GuidanceState, State};
use crate::workspace::{Counters, Workspace};
use crate::{StepError, StepReport};

/// Buffers of the kinematic-guidance formulation.
#[derive(Debug, Clone, Default)]
pub struct GuidanceWorkspace {
    /// Trial multipliers λ_g of the guidance constraints [N].
    pub lambda: Vec<f64>,
    /// s_ref(t_k+1) [m].
    pub s_ref: Vec<f64>,
    /// ṡ_ref(t_k+1) [m/s].
    pub sd_ref: Vec<f64>,
    /// s̈_ref(t_k+1) [m/s²].
    pub sdd_ref: Vec<f64>,
    /// Φ_g [m].
    pub phi: Vec<f64>,
    /// Φ_g,z = ∂s/∂z, row-major n_guided × n [-].
    pub jac: Vec<f64>,
    /// Φ̇_g,z ż [m/s²].
    pub acc0: Vec<f64>,
}

impl GuidanceWorkspace {
    /// Buffers for `model`.
    pub fn new(model: &Model) -> Self {
        let (g, n) = (model.solver.guidance.len(), model.n_coords());
        GuidanceWorkspace {
            lambda: vec![0.0; g],
            s_ref: vec![0.0; g],
            sd_ref: vec![0.0; g],
            sdd_ref: vec![0.0; g],
            phi: vec![0.0; g],
            jac: vec![0.0; g * n],
            acc0: vec![0.0; g],
        }
    }
}

/// A piecewise-linear table signal from recorded samples (e.g. the `<cylinder>.length` column of
/// a results file): `times` [s] strictly increasing, as long as `values`.
pub fn table_signal(times: &[f64], values: &[f64]) -> SignalSpec {
    SignalSpec::Table {
        times: times.to_vec(),
        values: values.to_vec(),
    }
}

/// One recorded cylinder for [`replay_spec`].
#[derive(Debug, Clone, Copy)]
pub struct Recorded<'a> {
    /// Cylinder name.
    pub cylinder: &'a str,
    /// Pin-to-pin lengths s [m] (the `<cylinder>.length` column).
    pub length_m: &'a [f64],
    /// Rates ṡ [m/s] (the `<cylinder>.velocity` column), if recorded: the replay then uses the
    /// recorded rate instead of differentiating the length (004 §4 recorded s, ṡ and s̈).
    pub velocity_m_s: Option<&'a [f64]>,
}

/// A copy of `spec` that replays a recorded run under kinematic guidance (004 §4): formulation
/// `kinematic-guidance`, table inputs `<cylinder>.s_ref` (and `<cylinder>.sd_ref`) per recorded
/// cylinder (from [`table_signal`]) and the matching `solver.guidance` entries (replacing any),
/// sampled at `times` [s]. The result still goes through validation when compiled.
pub fn replay_spec(spec: &ModelSpec, times: &[f64], recorded: &[Recorded]) -> ModelSpec {
    let mut out = spec.clone();
    out.solver.formulation = Formulation::KinematicGuidance;
    out.solver.guidance.clear();
    for r in recorded {
        let name = format!("{}.s_ref", r.cylinder);
        out.inputs.retain(|i| i.name != name);
        out.inputs.push(InputSpec {
            name: name.clone(),
            signal: table_signal(times, r.length_m),
        });
        let velocity_input = r.velocity_m_s.map(|v| {
            let vname = format!("{}.sd_ref", r.cylinder);
            out.inputs.retain(|i| i.name != vname);
            out.inputs.push(InputSpec {
                name: vname.clone(),
                signal: table_signal(times, v),
            });
            vname
        });
        out.solver.guidance.push(GuidanceSpec {
            cylinder: r.cylinder.to_string(),
            input: name,
            velocity_input,
        });
    }
    out
}

/// Which z-only formulation [`step_z_only`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ZOnly {
    /// Kinematic guidance (this module).
    Guidance,
    /// Multi-rate co-integration (`integrator::multirate`).
    Multirate,
}

/// Pin geometry of cylinder `cyl`: (r_base, r_rod, n, s).
#[inline]
fn pins<S: Real>(
    ev: &Evaluator<S>,
    cyl: &crate::model::Cylinder,
) -> (Vector3<S>, Vector3<S>, Vector3<S>, S) {
    let line = crate::mechanics::ports::Line::at(&ev.kin, &cyl.base, &cyl.rod);
    (line.rb, line.rr, line.n, line.s)
}

/// Guided evaluation at (z, ż) = (`ev.x[..n]`, `ev.zd`): kinematics, body terms, the guidance
/// forces F_c = −(α(s_c − s_ref,c) + λ_g,c), M′, Q′, Φ, Φ_z.
fn evaluate_guided<S: Real>(model: &Model, ev: &mut Evaluator<S>, gw: &GuidanceWorkspace) {
    let n = model.n_coords();
    let alpha = newton::step_penalty(&model.solver);
    ev.kin.positions(model, &ev.x[..n]);
    ev.kin.velocities(model, &ev.zd);
    ev.dynamics.bodies(model, &ev.kin);
    if !model.elements.is_empty() {
        crate::mechanics::ports::body_forces(
            &model.elements,
            &ev.element_u,
            &ev.kin,
            &mut ev.dynamics,
            &mut ev.element_at,
            &mut ev.element_effort,
        );
    }
    ev.dynamics.save_body_terms();
    for (k, g) in model.solver.guidance.iter().enumerate() {
        let cyl = &model.hydraulics.cylinders[g.cylinder.0];
        let (rb, rr, nv, s) = pins(ev, cyl);
        let vb = ev.kin.point_velocity(cyl.base.frame, &rb);
        let vr = ev.kin.point_velocity(cyl.rod.frame, &rr);
        let sd = nv.dot(&(vr - vb));
        ev.motion[g.cylinder.0] = CylinderMotion { s, sd };
        let f = -((s - gw.s_ref[k]) * alpha + gw.lambda[k]);
        ev.cylinder_force[g.cylinder.0] = f;
        let fv = nv * f;
        ev.dynamics.add_point_force(cyl.rod.frame, &rr, &fv);
        ev.dynamics.add_point_force(cyl.base.frame, &rb, &(-fv));
    }
    ev.dynamics.accumulate(model, &ev.kin);
    if !model.elements.is_empty() {
        let zd = std::mem::take(&mut ev.zd);
        crate::mechanics::ports::joint_forces(
            &model.elements,
            &ev.element_u,
            &zd,
            &ev.x[..n],
            &mut ev.dynamics.force,
            &mut ev.element_at,
            &mut ev.element_effort,
        );
        ev.zd = zd;
    }
    constraints::evaluate(model, &ev.kin, &mut ev.constraints);
}

/// ż, z̈ of `ev.x[..n]` by the trapezoidal relations (000 eqs. 33–34).
fn trapezoidal_rates<S: Real>(
    model: &Model,
    ev: &mut Evaluator<S>,
    ws_hist: &crate::workspace::History,
) {
    let dt = model.solver.step_s;
    let (c1, c2) = (2.0 / dt, 4.0 / (dt * dt));
    for i in 0..model.n_coords() {
        ev.zd[i] = ev.x[i] * c1 + ws_hist.zd_hat[i];
        ev.zdd[i] = ev.x[i] * c2 + ws_hist.zdd_hat[i];
    }
}

/// f64 evaluation and residual at `ws.x` into `ws.ev.f` (pressure rows 0). With `update`, the
/// multipliers are first updated with Φ at this point, λ ← λ + αΦ (000 eq. 19), as the penalty
/// formulation does after each solve.
fn residual_f64(model: &Model, ws: &mut Workspace, kind: ZOnly, update: bool) {
    let n = model.n_coords();
    let alpha = newton::step_penalty(&model.solver);
    ws.ev.x.copy_from_slice(&ws.x);
    trapezoidal_rates(model, &mut ws.ev, &ws.hist);
    if update && kind == ZOnly::Guidance {
        ws.ev.kin.positions(model, &ws.x[..n]);
        let gw = &mut ws.guidance;
        for (k, g) in model.solver.guidance.iter().enumerate() {
            let (_, _, _, s) = pins(&ws.ev, &model.hydraulics.cylinders[g.cylinder.0]);
            gw.lambda[k] += alpha * (s - gw.s_ref[k]);
        }
    }
    match kind {
        ZOnly::Guidance => evaluate_guided(model, &mut ws.ev, &ws.guidance),
        ZOnly::Multirate => {
            multirate::evaluate(model, &mut ws.ev, &mut ws.multirate.sub, &ws.multirate.plan)
        }
    }
    if update {
        for (l, phi) in ws.lambda.iter_mut().zip(ws.ev.constraints.phi.iter()) {
            *l += alpha * phi;
        }
    }
    penalty::form_residual(model, &mut ws.ev, &ws.lambda);
    for f in ws.ev.f[n..].iter_mut() {
        *f = 0.0;
    }
}

/// Exact tangent ∂f/∂z by one dual pass per coordinate; the pressure block is the identity (the
/// pressures are not Newton unknowns here: their increments are zero).
fn tangent(model: &Model, ws: &mut Workspace, kind: ZOnly) {
    let n = model.n_coords();
    let nx = ws.x.len();
    for j in 0..n {
        for k in 0..nx {
            ws.evd.x[k] = Dual64::new(ws.x[k], if k == j { 1.0 } else { 0.0 });
        }
        trapezoidal_rates(model, &mut ws.evd, &ws.hist);
        match kind {
            ZOnly::Guidance => evaluate_guided(model, &mut ws.evd, &ws.guidance),
            ZOnly::Multirate => multirate::evaluate(
                model,
                &mut ws.evd,
                &mut ws.multirate.sub_dual,
                &ws.multirate.plan,
            ),
        }
        penalty::form_residual(model, &mut ws.evd, &ws.lambda);
        if kind == ZOnly::Multirate {
            let mr = &mut ws.multirate;
            for (v, p) in mr.sub_dual.p.iter().enumerate() {
                mr.plan.dpdz[v * n + j] = p.eps;
            }
        }
        let mut a = ws.tangent.matrix_mut();
        for i in 0..n {
            a[(i, j)] = ws.evd.f[i].eps;
        }
        for i in n..nx {
            a[(i, j)] = 0.0;
        }
        ws.diag[j] = ws.evd.f[j].eps;
    }
    let mut a = ws.tangent.matrix_mut();
    for j in n..nx {
        for i in 0..nx {
            a[(i, j)] = if i == j { 1.0 } else { 0.0 };
        }
        ws.diag[j] = 1.0;
    }
}

fn failure(model: &Model, st: &State, ws: &Workspace, iterations: u32, reason: &str) -> StepError {
    let n = model.n_coords();
    crate::integrator::newton::failure(
        st.t_s,
        st.step,
        iterations,
        &ws.ev.f[..n],
        &ws.diag,
        |_| model.solver.tol_position,
        &ws.labels,
        reason,
    )
}

/// Guidance data of the step: λ_g from the state, s_ref and its central differences at t_k+1.
fn prepare_guidance(model: &Model, st: &mut State, ws: &mut Workspace) {
    let ng = model.solver.guidance.len();
    if st
        .formulation
        .guidance()
        .is_none_or(|g| g.lambda.len() != ng || g.sdd_ref.len() != ng)
    {
        // first step (allocates once): λ_g = −F_c(0), the cylinder forces of the consistent
        // initialization, which hold the mechanism in its initial state; s̈(0) = Φ_g,z z̈ + Φ̇_g,z ż
        ws.ev
            .evaluate(model, &st.z, &st.zd, &st.p, &st.spool, false);
        let mut gs = GuidanceState::default();
        for g in &model.solver.guidance {
            gs.lambda.push(-ws.ev.cylinder_force[g.cylinder.0]);
        }
        guidance_terms(model, ws, &st.zd);
        let n = model.n_coords();
        for k in 0..ng {
            let row = &ws.guidance.jac[k * n..(k + 1) * n];
            let a: f64 = row.iter().zip(st.zdd.iter()).map(|(a, b)| a * b).sum();
            gs.sdd_ref.push(a + ws.guidance.acc0[k]);
        }
        st.formulation = FormulationState::Guidance(gs);
    }
    let dt = model.solver.step_s;
    let t1 = st.t_s + dt;
    let gw = &mut ws.guidance;
    let gs = st
        .formulation
        .guidance()
        .expect("the guidance state is filled above");
    gw.lambda.copy_from_slice(&gs.lambda);
    for (k, g) in model.solver.guidance.iter().enumerate() {
        let s_ref = |t| st.inputs.value_at(&model.inputs, g.input, t);
        let (sm, s0, sp) = (s_ref(t1 - dt), s_ref(t1), s_ref(t1 + dt));
        gw.s_ref[k] = s0;
        match g.velocity_input {
            Some(vi) => {
                // trapezoidal derivative of the recorded rate, consistent with the integrator
                // that produced it: s̈_k+1 = 2(ṡ_k+1 − ṡ_k)/Δt − s̈_k
                let v = |t| st.inputs.value_at(&model.inputs, vi, t);
                gw.sd_ref[k] = v(t1);
                gw.sdd_ref[k] = 2.0 * (v(t1) - v(st.t_s)) / dt - gs.sdd_ref[k];
            }
            None => {
                gw.sd_ref[k] = (sp - sm) / (2.0 * dt);
                gw.sdd_ref[k] = (sp - 2.0 * s0 + sm) / (dt * dt);
            }
        }
    }
}

/// Φ_g, Φ_g,z and Φ̇_g,z ż at the evaluated point of `ws.ev` with velocities `zd` (f64).
fn guidance_terms(model: &Model, ws: &mut Workspace, zd: &[f64]) {
    let n = model.n_coords();
    let gw = &mut ws.guidance;
    let ev = &ws.ev;
    for (k, g) in model.solver.guidance.iter().enumerate() {
        let cyl = &model.hydraulics.cylinders[g.cylinder.0];
        let (rb, rr, nv, s) = pins(ev, cyl);
        gw.phi[k] = s - gw.s_ref[k];
        let row = &mut gw.jac[k * n..(k + 1) * n];
        row.fill(0.0);
        for_each_on_path(model, cyl.rod.frame, |i| {
            row[i] += nv.dot(&ev.kin.point_jacobian_col(i, &rr))
        });
        for_each_on_path(model, cyl.base.frame, |i| {
            row[i] -= nv.dot(&ev.kin.point_jacobian_col(i, &rb))
        });
        let vb = ev.kin.point_velocity(cyl.base.frame, &rb);
        let vr = ev.kin.point_velocity(cyl.rod.frame, &rr);
        let dd = vr - vb;
        let sd: f64 = row.iter().zip(zd.iter()).map(|(a, b)| a * b).sum();
        let ab = ev.kin.point_acc0(cyl.base.frame, &rb, &vb);
        let ar = ev.kin.point_acc0(cyl.rod.frame, &rr, &vr);
        gw.acc0[k] = nv.dot(&(ar - ab)) + (dd.dot(&dd) - sd * sd) / s;
    }
}

/// The Newton problem of guidance and multi-rate: x = z in `ws.x[..n]` (the pressures are not
/// unknowns), f in `ws.ev.f`, the tangent in `ws.tangent`.
struct ZOnlyNewton<'a> {
    model: &'a Model,
    st: &'a State,
    ws: &'a mut Workspace,
    kind: ZOnly,
    /// Evaluations so far: every one after the first follows an increment.
    evaluations: u32,
}

impl NewtonProblem for ZOnlyNewton<'_> {
    type Error = StepError;

    /// The evaluation with the multiplier updates of [`residual_f64`] after an increment: the
    /// guidance multipliers λ_g change the cylinder forces, so they are updated before the
    /// evaluation, and λ with the Φ of it.
    fn evaluate(&mut self) -> Result<(), StepError> {
        let update = self.evaluations > 0;
        self.evaluations += 1;
        residual_f64(self.model, self.ws, self.kind, update);
        Ok(())
    }

    fn form_residual(&mut self) -> Result<(), StepError> {
        let ws = &*self.ws;
        newton::check_finite(self.st.t_s, self.st.step, &ws.ev.f, &ws.labels)?;
        if self.kind == ZOnly::Multirate && ws.multirate.sub.failed {
            let iterations = self.evaluations - 1;
            return Err(self.failure(iterations, "hydraulic substep did not converge"));
        }
        Ok(())
    }

    fn tangent_reusable(&self) -> bool {
        self.ws.tangent_valid
    }

    fn refresh_tangent(&mut self) -> Result<bool, StepError> {
        let ws = &mut *self.ws;
        tangent(self.model, ws, self.kind);
        let side: &[f64] = match self.kind {
            ZOnly::Guidance => &[],
            ZOnly::Multirate => &ws.multirate.plan.dpdz,
        };
        ws.tangent_id = ws
            .tangent_pending
            .record(self.st.tangent.id, ws.tangent.values(), side);
        Ok(ws.factor_tangent())
    }

    fn solve_increment(&mut self) {
        let ws = &mut *self.ws;
        for (d, f) in ws.dx.iter_mut().zip(ws.ev.f.iter()) {
            *d = -f;
        }
        ws.tangent.solve_in_place(&mut ws.dx);
    }

    fn iterate(&mut self) -> (&mut [f64], &[f64]) {
        let n = self.model.n_coords();
        (&mut self.ws.x[..n], &self.ws.dx[..n])
    }

    fn tolerances(&self) -> Tolerances {
        let s = &self.model.solver;
        Tolerances::new(&[(self.model.n_coords(), s.tol_position)], s.tol_relative)
    }

    /// Multi-rate: the pressures are not Newton unknowns, but p_k+1(z) is hypersensitive to z;
    /// the change Δp = (∂p_k+1/∂z) Δz that the increment implies (∂p_k+1/∂z from the dual passes
    /// of the last tangent), weighted by the pressure tolerance, joins the test.
    fn implied_norm(&self) -> f64 {
        if self.kind != ZOnly::Multirate {
            return 0.0;
        }
        let (model, ws) = (self.model, &*self.ws);
        let n = model.n_coords();
        let mr = &ws.multirate;
        let mut p_norm: f64 = 0.0;
        for (v, p) in mr.sub.p.iter().enumerate() {
            let row = &mr.plan.dpdz[v * n..(v + 1) * n];
            let dp: f64 = row.iter().zip(ws.dx.iter()).map(|(a, b)| a * b).sum();
            let w = newton::weight(model.solver.tol_pressure_pa, model.solver.tol_relative, *p);
            p_norm = p_norm.max(dp.abs() / w);
        }
        p_norm
    }

    fn counters(&mut self) -> &mut Counters {
        &mut self.ws.counters
    }

    fn failure(&mut self, iterations: u32, reason: &str) -> StepError {
        failure(self.model, self.st, self.ws, iterations, reason)
    }
}

/// Stage `restore`: the state's tangent (`State::tangent`; multi-rate: with ∂p_k+1/∂z, which
/// the convergence test uses) factored again when the workspace does not hold it (see
/// `penalty::restore_tangent`).
fn restore_tangent(st: &State, ws: &mut Workspace, kind: ZOnly) {
    let cache = &st.tangent;
    if !cache.needs_restore(ws.tangent_id) {
        return;
    }
    ws.tangent_id = cache.id;
    ws.tangent_valid = false;
    let side_len = match kind {
        ZOnly::Guidance => 0,
        ZOnly::Multirate => ws.multirate.plan.dpdz.len(),
    };
    if cache.id == 0
        || cache.matrix.len() != ws.tangent.values().len()
        || cache.side.len() != side_len
    {
        return;
    }
    ws.tangent.values_mut().copy_from_slice(&cache.matrix);
    if kind == ZOnly::Multirate {
        ws.multirate.plan.dpdz.copy_from_slice(&cache.side);
    }
    ws.counters.factorizations += 1;
    ws.factor_tangent();
}

/// One step of an ALI3-P formulation whose Newton unknowns are z only: kinematic guidance or
/// multi-rate. Newton (modified, with the penalty formulation's tangent-reuse policy), then the
/// projections (000 eqs. 20–21, with the rheonomic terms of 004 eqs. 14–15 for guidance), then
/// commit. On error the state is unchanged (except `State::formulation` filled on the first step).
pub(crate) fn step_z_only(
    model: &Model,
    st: &mut State,
    ws: &mut Workspace,
    kind: ZOnly,
) -> Result<StepReport, StepError> {
    let n = model.n_coords();
    let nv = model.n_volumes();
    let dt = model.solver.step_s;
    let c = dt * dt / 4.0;
    let alpha = newton::step_penalty(&model.solver);

    restore_tangent(st, ws, kind);
    penalty::prepare(model, st, ws);
    ws.x[n..].copy_from_slice(&st.p);
    match kind {
        ZOnly::Guidance => prepare_guidance(model, st, ws),
        ZOnly::Multirate => multirate::prepare(model, st, ws),
    }

    // Jacobian reuse as in the penalty formulation: a tangent of an earlier step is refreshed
    // when it contracts by less than ×5, at most once per step: the multiplier updates converge
    // linearly whatever the tangent, so a second fresh tangent would not speed them up (measured:
    // no fewer iterations). (With ×2 instead of ×5: 2.16 instead of 1.88 iterations per step on
    // the multi-rate quick-return.)
    let iterations = newton::solve(
        &mut ZOnlyNewton {
            model,
            st,
            ws,
            kind,
            evaluations: 0,
        },
        TangentPolicy {
            keep_fresh: true,
            ..TangentPolicy::MODIFIED
        },
        model.solver.max_iterations,
    )?;

    // ---- the last Newton evaluation, at x_h = x − Δx_h, serves the projections, as in the
    // penalty formulation: the accepted iterate differs from it by one converged increment.
    // Φ and Φ_g are carried to the accepted z to first order, Φ(z) = Φ(z_h) + Φ_z Δz_h, for the
    // last multiplier update λ ← λ + αΦ (000 eq. 19); the multi-rate pressures are p_k+1(z_h),
    // within the pressure tolerance of p_k+1(z) (convergence test above).
    let (c1, c2) = (2.0 / dt, 4.0 / (dt * dt));
    for i in 0..n {
        ws.ev.zd[i] = c1 * ws.x[i] + ws.hist.zd_hat[i];
        ws.ev.zdd[i] = c2 * ws.x[i] + ws.hist.zdd_hat[i];
    }
    let m0 = model.n_constraints();
    for r in 0..m0 {
        let mut v = ws.ev.constraints.phi[r];
        for j in 0..n {
            v += ws.ev.constraints.jac[r * n + j] * ws.dx[j];
        }
        ws.ev.constraints.phi[r] = v;
    }
    for (l, phi) in ws.lambda.iter_mut().zip(ws.ev.constraints.phi.iter()) {
        *l += alpha * phi;
    }

    // ---- projections (000 eqs. 20–21; 004 eqs. 14–15 for the guidance rows)
    let zd_star = std::mem::take(&mut ws.ev.zd);
    if kind == ZOnly::Guidance {
        guidance_terms(model, ws, &zd_star);
        let gw = &mut ws.guidance;
        for k in 0..model.solver.guidance.len() {
            let row = &gw.jac[k * n..(k + 1) * n];
            let dphi: f64 = row.iter().zip(ws.dx.iter()).map(|(a, b)| a * b).sum();
            gw.lambda[k] += alpha * (gw.phi[k] + dphi);
        }
    }
    let ng = if kind == ZOnly::Guidance {
        model.solver.guidance.len()
    } else {
        0
    };
    penalty::projection_matrix(
        ws.projection.values_mut(),
        &ws.ev.dynamics.mass,
        ws.ev
            .constraints
            .jac
            .chunks_exact(n)
            .chain(ws.guidance.jac[..ng * n].chunks_exact(n)),
        c * alpha,
    );
    ws.counters.factorizations += 1;
    if ws.projection.factor().is_err() {
        ws.ev.zd = zd_star;
        return Err(failure(
            model,
            st,
            ws,
            iterations,
            "singular projection matrix",
        ));
    }
    penalty::mat_vec(&mut ws.tmp, &ws.ev.dynamics.mass, &zd_star);
    // − cα Φ_g,zᵀ Φ_t = + cα Φ_g,zᵀ ṡ_ref
    for k in 0..ng {
        let s = c * alpha * ws.guidance.sd_ref[k];
        for (t, ji) in ws
            .tmp
            .iter_mut()
            .zip(ws.guidance.jac[k * n..(k + 1) * n].iter())
        {
            *t += s * ji;
        }
    }
    ws.projection.solve_in_place(&mut ws.tmp[..n]);
    ws.ev.zd = zd_star;
    let zd_proj = std::mem::take(&mut ws.tmp);
    // velocity-product terms at the projected velocities
    ws.ev.kin.velocities(model, &zd_proj[..n]);
    constraints::evaluate_acc0(model, &ws.ev.kin, &mut ws.ev.constraints);
    if kind == ZOnly::Guidance {
        guidance_terms(model, ws, &zd_proj[..n]);
    }
    penalty::mat_vec(&mut ws.tmp2, &ws.ev.dynamics.mass, &ws.ev.zdd);
    for (jr, a0) in ws
        .ev
        .constraints
        .jac
        .chunks_exact(n)
        .zip(ws.ev.constraints.acc0.iter())
    {
        let s = c * alpha * a0;
        for (t, ji) in ws.tmp2.iter_mut().zip(jr.iter()) {
            *t -= s * ji;
        }
    }
    for k in 0..ng {
        let s = c * alpha * (ws.guidance.acc0[k] - ws.guidance.sdd_ref[k]);
        for (t, ji) in ws
            .tmp2
            .iter_mut()
            .zip(ws.guidance.jac[k * n..(k + 1) * n].iter())
        {
            *t -= s * ji;
        }
    }
    ws.projection.solve_in_place(&mut ws.tmp2[..n]);

    // cylinder ports at the projected velocities (forces: guidance −λ_g; multi-rate F(p_k+1, ṡ))
    match kind {
        ZOnly::Guidance => {
            for (k, g) in model.solver.guidance.iter().enumerate() {
                let row = &ws.guidance.jac[k * n..(k + 1) * n];
                let sd: f64 = row.iter().zip(zd_proj.iter()).map(|(a, b)| a * b).sum();
                ws.ev.motion[g.cylinder.0].sd = sd;
                ws.ev.cylinder_force[g.cylinder.0] = -ws.guidance.lambda[k];
            }
        }
        ZOnly::Multirate => {
            ws.x[n..].copy_from_slice(&ws.multirate.sub.p);
            let p = std::mem::take(&mut ws.x);
            ws.ev.velocity_terms(model, &zd_proj[..n], &p[n..]);
            ws.x = p;
        }
    }

    // ---- end stops
    if let Err(e) = advance::check_stroke(model, st, &ws.ev.motion) {
        ws.tmp = zd_proj;
        return Err(e);
    }

    // ---- commit
    let mut report = StepReport {
        iterations,
        ..Default::default()
    };
    if kind == ZOnly::Multirate {
        for v in 0..nv {
            let p_new = ws.multirate.sub.p[v];
            if p_new < 0.0 && st.p[v] >= 0.0 && v < 64 {
                report.cavitation_onsets |= 1 << v;
            }
            let pd_new = ws.multirate.sub.pd[v];
            st.pdd[v] = (pd_new - st.pd[v]) / dt;
            st.pd[v] = pd_new;
            st.p[v] = p_new;
        }
    } else {
        let gs = st
            .formulation
            .guidance_mut()
            .expect("the guidance state is filled by the stage predict");
        gs.lambda.copy_from_slice(&ws.guidance.lambda);
        gs.sdd_ref.copy_from_slice(&ws.guidance.sdd_ref);
    }
    for i in 0..n {
        st.z[i] = ws.x[i];
        st.zd[i] = zd_proj[i];
        st.zdd[i] = ws.tmp2[i];
    }
    ws.tmp = zd_proj;
    st.spool.copy_from_slice(&ws.spool_new);
    st.lambda.copy_from_slice(&ws.lambda);
    advance::work_and_clock(st, &ws.ev.cylinder_force, &ws.ev.motion, dt);
    advance::energies_and_violation(model, &ws.ev, &st.zd, &mut report);
    st.tangent.commit(ws.tangent_id, &ws.tangent_pending);
    Ok(report)
}

/// One step of kinematic guidance.
pub fn step(model: &Model, st: &mut State, ws: &mut Workspace) -> Result<StepReport, StepError> {
    step_z_only(model, st, ws, ZOnly::Guidance)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spec::HydraulicIntegrator;

    fn fourbar(formulation: Formulation) -> ModelSpec {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/fourbar.toml");
        let mut spec: ModelSpec =
            toml::from_str(&std::fs::read_to_string(path).expect("model exists")).unwrap();
        spec.solver.formulation = formulation;
        spec
    }

    /// The dual tangent ∂f/∂z against central differences of the f64 residual, at a point of
    /// the valve opening (t ≈ 1.02 s) moved off the predictor.
    fn check_tangent(spec: &ModelSpec, kind: ZOnly) {
        let model = crate::model::compile(spec).unwrap();
        let mut st = crate::initialization::initialize(&model).unwrap();
        let mut ws = Workspace::new(&model);
        for _ in 0..1020 {
            crate::step::step(&model, &mut st, &mut ws).unwrap();
        }
        let n = model.n_coords();
        penalty::prepare(&model, &st, &mut ws);
        ws.x[n..].copy_from_slice(&st.p);
        match kind {
            ZOnly::Guidance => prepare_guidance(&model, &mut st, &mut ws),
            ZOnly::Multirate => multirate::prepare(&model, &st, &mut ws),
        }
        for i in 0..n {
            ws.x[i] += 1e-6 * (i as f64 + 1.0);
        }
        tangent(&model, &mut ws, kind);
        let x0 = ws.x.clone();
        for j in 0..n {
            let h = 1e-7;
            ws.x.copy_from_slice(&x0);
            ws.x[j] += h;
            residual_f64(&model, &mut ws, kind, false);
            let fp = ws.ev.f.clone();
            ws.x[j] -= 2.0 * h;
            residual_f64(&model, &mut ws, kind, false);
            let fm = ws.ev.f.clone();
            let a = ws.tangent.matrix();
            let scale = (0..n).map(|i| a[(i, j)].abs()).fold(0.0, f64::max);
            for i in 0..n {
                let fd = (fp[i] - fm[i]) / (2.0 * h);
                assert!(
                    (a[(i, j)] - fd).abs() <= 1e-5 * scale,
                    "{kind:?} ∂f{i}/∂z{j}: dual {} vs central difference {fd}",
                    a[(i, j)]
                );
            }
        }
    }

    #[test]
    fn multirate_tangent_matches_central_differences() {
        for integrator in [
            HydraulicIntegrator::Trapezoidal,
            HydraulicIntegrator::ForwardEuler,
        ] {
            let mut spec = fourbar(Formulation::Multirate);
            spec.solver.hydraulic_integrator = integrator;
            spec.solver.hydraulic_substeps = 5;
            check_tangent(&spec, ZOnly::Multirate);
        }
    }

    #[test]
    fn guidance_tangent_matches_central_differences() {
        // s_ref: the initial length √2 m rising by 5 cm over 2 s
        let base = fourbar(Formulation::Penalty);
        let s0 = 2f64.sqrt();
        let spec = replay_spec(
            &base,
            &[0.0, 1.0, 3.0],
            &[Recorded {
                cylinder: "cylinder",
                length_m: &[s0, s0, s0 + 0.05],
                velocity_m_s: None,
            }],
        );
        check_tangent(&spec, ZOnly::Guidance);
    }
}
