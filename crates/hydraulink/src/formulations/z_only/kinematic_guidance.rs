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
//! The Newton loop and projections over the mechanical unknowns z only are
//! `formulations::z_only`, shared with the multi-rate formulation
//! (`formulations::z_only::multirate`), which feeds the cylinder forces from a sub-integrated hydraulics
//! instead; this module supplies the guidance rows through `z_only::ZOnly`.

use num_dual::Dual64;

use crate::elements::hydraulics::CylinderMotion;
use crate::formulations::z_only::{self, ZOnly};
use crate::mechanics::assembly::Evaluator;
use crate::mechanics::buffers::Buffers;
use crate::mechanics::ports::Line;
use crate::model::spec::{Formulation, GuidanceSpec, InputSpec, ModelSpec, SignalSpec};
use crate::model::Model;

use crate::solver::real::Real;
use crate::state::{FormulationState, GuidanceState, State};
use crate::StepReport;

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

/// Guided evaluation at (z, ż) = (`ev.x[..n]`, `ev.zd`): kinematics, body terms, the guidance
/// forces F_c = −(α(s_c − s_ref,c) + λ_g,c), M′, Q′, Φ, Φ_z.
fn evaluate_guided<S: Real>(model: &Model, ev: &mut Evaluator<S>, gw: &GuidanceWorkspace) {
    let alpha = model.solver.step_penalty();
    z_only::evaluate_with_line_forces(
        model,
        ev,
        |model, ev| {
            for (k, g) in model.solver.guidance.iter().enumerate() {
                let cyl = model.cylinder(g.cylinder.0);
                let line = Line::at(&ev.kin, &cyl.base, &cyl.rod);
                let (s, sd) = (line.s, line.rate(&ev.kin, &cyl.base, &cyl.rod));
                ev.motion[g.cylinder.0] = CylinderMotion { s, sd };
                let f = -((s - gw.s_ref[k]) * alpha + gw.lambda[k]);
                ev.cylinder_force[g.cylinder.0] = f;
                line.apply(&mut ev.dynamics, &cyl.base, &cyl.rod, f);
            }
        },
        |_, _| {},
    );
}

/// Stage `initialize`: λ_g and s̈_ref(0) into `st.formulation` when it holds no guidance state
/// of this model (the first step).
fn initialize_guidance(
    model: &Model,
    st: &mut State,
    ws: &mut Buffers,
    gw: &mut GuidanceWorkspace,
) {
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
        guidance_terms(model, &ws.ev, gw, &st.zd);
        let n = model.n_coords();
        for k in 0..ng {
            let row = &gw.jac[k * n..(k + 1) * n];
            let a: f64 = row.iter().zip(st.zdd.iter()).map(|(a, b)| a * b).sum();
            gs.sdd_ref.push(a + gw.acc0[k]);
        }
        st.formulation = FormulationState::Guidance(gs);
    }
}

/// Guidance data of the step: λ_g from the state, s_ref and its central differences at t_k+1.
fn prepare_guidance(model: &Model, st: &State, gw: &mut GuidanceWorkspace) {
    let dt = model.solver.step_s;
    let t1 = st.t_s + dt;
    let gs = st
        .formulation
        .guidance()
        .expect("the guidance state is filled by the stage initialize");
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

/// Φ_g, Φ_g,z and Φ̇_g,z ż at the evaluated point of `ev` with velocities `zd` (f64).
fn guidance_terms(model: &Model, ev: &Evaluator<f64>, gw: &mut GuidanceWorkspace, zd: &[f64]) {
    let n = model.n_coords();
    for (k, g) in model.solver.guidance.iter().enumerate() {
        let cyl = model.cylinder(g.cylinder.0);
        let line = Line::at(&ev.kin, &cyl.base, &cyl.rod);
        gw.phi[k] = line.s - gw.s_ref[k];
        let row = &mut gw.jac[k * n..(k + 1) * n];
        line.jacobian_row(model, &ev.kin, &cyl.base, &cyl.rod, row);
        let (vb, vr) = line.velocities(&ev.kin, &cyl.base, &cyl.rod);
        // ṡ = Φ_g,z ż, the row's own product (not n·(ṙ₂ − ṙ₁): the same up to rounding)
        let sd: f64 = row.iter().zip(zd.iter()).map(|(a, b)| a * b).sum();
        let ab = ev.kin.point_acc0(cyl.base.frame, &line.rb, &vb);
        let ar = ev.kin.point_acc0(cyl.rod.frame, &line.rr, &vr);
        gw.acc0[k] = line.acceleration_bias(&vb, &vr, &ab, &ar, sd);
    }
}

/// Kinematic guidance's part of the z-only step (`formulations::z_only`): the rheonomic
/// constraint forces and rows.
impl ZOnly for GuidanceWorkspace {
    fn new(model: &Model) -> Self {
        GuidanceWorkspace::new(model)
    }

    fn initialize(&mut self, model: &Model, st: &mut State, ws: &mut Buffers) {
        initialize_guidance(model, st, ws, self);
    }

    fn prepare(&mut self, model: &Model, st: &State, _ws: &mut Buffers) {
        prepare_guidance(model, st, self);
    }

    /// λ_g ← λ_g + αΦ_g at the positions of `x` (000 eq. 19), before the evaluation: the
    /// guidance multipliers change the cylinder forces.
    fn update_multipliers(
        &mut self,
        model: &Model,
        ev: &mut Evaluator<f64>,
        x: &[f64],
        alpha: f64,
    ) {
        let n = model.n_coords();
        ev.kin.positions(model, &x[..n]);
        for (k, g) in model.solver.guidance.iter().enumerate() {
            let cyl = model.cylinder(g.cylinder.0);
            let s = Line::at(&ev.kin, &cyl.base, &cyl.rod).s;
            self.lambda[k] += alpha * (s - self.s_ref[k]);
        }
    }

    fn evaluate(&mut self, model: &Model, ev: &mut Evaluator<f64>) {
        evaluate_guided(model, ev, self);
    }

    fn evaluate_dual(&mut self, model: &Model, ev: &mut Evaluator<Dual64>) {
        evaluate_guided(model, ev, self);
    }

    fn n_rows(&self) -> usize {
        self.lambda.len()
    }

    fn rows_jacobian(&self) -> &[f64] {
        &self.jac
    }

    fn rheonomic_terms(&mut self, model: &Model, ev: &Evaluator<f64>, zd: &[f64]) {
        guidance_terms(model, ev, self, zd);
    }

    fn last_multiplier_update(&mut self, alpha: f64, dx: &[f64], n: usize) {
        for k in 0..self.lambda.len() {
            let row = &self.jac[k * n..(k + 1) * n];
            let dphi: f64 = row.iter().zip(dx.iter()).map(|(a, b)| a * b).sum();
            self.lambda[k] += alpha * (self.phi[k] + dphi);
        }
    }

    fn velocity_rhs(&self, k: usize) -> f64 {
        self.sd_ref[k]
    }

    fn acceleration_rhs(&self, k: usize) -> f64 {
        self.acc0[k] - self.sdd_ref[k]
    }

    /// The guided cylinders' rates ṡ = Φ_g,z ż and forces F = −λ_g.
    fn ports(&mut self, model: &Model, ws: &mut Buffers, zd: &[f64]) {
        let n = model.n_coords();
        for (k, g) in model.solver.guidance.iter().enumerate() {
            let row = &self.jac[k * n..(k + 1) * n];
            let sd: f64 = row.iter().zip(zd.iter()).map(|(a, b)| a * b).sum();
            ws.ev.motion[g.cylinder.0].sd = sd;
            ws.ev.cylinder_force[g.cylinder.0] = -self.lambda[k];
        }
    }

    fn commit(&self, _model: &Model, st: &mut State, _report: &mut StepReport) {
        let gs = st
            .formulation
            .guidance_mut()
            .expect("the guidance state is filled by the stage initialize");
        gs.lambda.copy_from_slice(&self.lambda);
        gs.sdd_ref.copy_from_slice(&self.sdd_ref);
    }
}

/// Kinematic guidance (004 §4): the z-only formulation (`z_only::ZOnlyStep`) with the
/// guidance rows.
pub type KinematicGuidance = z_only::ZOnlyStep<GuidanceWorkspace>;

#[cfg(test)]
mod tests {
    use super::*;

    fn fourbar(formulation: Formulation) -> ModelSpec {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/fourbar.toml");
        let mut spec: ModelSpec =
            toml::from_str(&std::fs::read_to_string(path).expect("model exists")).unwrap();
        spec.solver.formulation = formulation;
        spec
    }

    /// The dual tangent ∂f/∂z against central differences of the f64 residual, at a point of
    /// the valve opening (t ≈ 1.02 s) moved off the predictor.
    fn check_tangent(spec: &ModelSpec) {
        let model = crate::pipeline::compile(spec).unwrap();
        let mut st = crate::pipeline::initialization::initialize(&model).unwrap();
        let mut ws = crate::pipeline::workspace::Workspace::new(&model);
        for _ in 0..1020 {
            crate::pipeline::step::step(&model, &mut st, &mut ws).unwrap();
        }
        let crate::pipeline::workspace::Workspace {
            buffers,
            formulation: crate::pipeline::workspace::FormulationWorkspace::KinematicGuidance(gw),
        } = &mut ws
        else {
            panic!("a kinematic-guidance workspace");
        };
        z_only::check_tangent(&model, &st, buffers, gw);
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
        check_tangent(&spec);
    }
}
