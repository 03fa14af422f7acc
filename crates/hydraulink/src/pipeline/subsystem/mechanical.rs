//! The mechanical subsystem: the joint coordinates z stepped alone, with the cylinder forces and
//! the shaft torques as its input through their ports (`subsystem::ports`) and the cylinders'
//! s, ṡ and the shafts' joint angles and rates as its output.
//!
//! Its step is the z-only ALI3-P step with the trapezoidal rule (000 §2.3, 004 §4;
//! `formulations::z_only`) through the one pipeline (`pipeline::step::formulation_step`):
//! ```text
//! f(z) = (Δt²/4) [ M′ z̈ + Φ_zᵀ (α Φ + λ) − Q′(z, ż; F_k+1) ]                   (000 eq. 39)
//! ```
//! where each cylinder's force F_k+1 (the end of its input [`Segment`]; the trapezoidal residual
//! is written at t_k+1) acts as F n on the rod pin and −F n on the base pin (`Line::apply`), and
//! each shaft port's torque τ_k+1 (a hydraulic motor, `circuit::Shaft`) is the generalized force
//! of its joint coordinate in Q′.
//! Exact tangent by dual numbers, projections of ż and z̈ (000 eqs. 20–21), the tangent reused
//! across steps as in the penalty formulation. The pressures of its `State` are not touched.

use num_dual::Dual64;

use crate::circuit::{self, Shaft};
use crate::elements::hydraulics::CylinderMotion;
use crate::formulations::z_only::{self, ZOnly, ZOnlyStep};
use crate::mechanics::assembly::Evaluator;
use crate::mechanics::buffers::Buffers;
use crate::mechanics::ports::Line;
use crate::model::Model;
use crate::pipeline::step;
use crate::pipeline::subsystem::{Segment, Subsystem};
use crate::solver::real::Real;
use crate::state::State;
use crate::{ModelError, StepError, StepReport};

/// The z-only step's port efforts given from outside: F of each cylinder and τ of each shaft
/// port at t_k+1.
#[derive(Debug, Clone)]
pub struct LineForces {
    /// F per cylinder (`Model::cylinders()` order), positive pushes the pins apart [N].
    pub force: Vec<f64>,
    /// The shaft ports (`circuit::shafts`).
    pub shafts: Vec<Shaft>,
    /// τ per shaft port on its joint coordinate, positive drives it positive [N m].
    pub torque: Vec<f64>,
}

/// Evaluation at (z, ż) = (`ev.x[..n]`, `ev.zd`) with the port efforts of `given`.
fn evaluate<S: Real>(model: &Model, ev: &mut Evaluator<S>, given: &LineForces) {
    z_only::evaluate_with_line_forces(
        model,
        ev,
        |model, ev| {
            for (c, cyl) in model.cylinders().enumerate() {
                let line = Line::at(&ev.kin, &cyl.base, &cyl.rod);
                let (s, sd) = (line.s, line.rate(&ev.kin, &cyl.base, &cyl.rod));
                ev.motion[c] = CylinderMotion { s, sd };
                let f = S::from(given.force[c]);
                ev.cylinder_force[c] = f;
                line.apply(&mut ev.dynamics, &cyl.base, &cyl.rod, f);
            }
        },
        |_, ev| {
            for (shaft, tau) in given.shafts.iter().zip(&given.torque) {
                ev.dynamics.force[shaft.axis.0] += S::from(*tau);
            }
        },
    );
}

impl ZOnly for LineForces {
    fn new(model: &Model) -> Self {
        let shafts = circuit::shafts(model);
        LineForces {
            force: vec![0.0; model.n_cylinders()],
            torque: vec![0.0; shafts.len()],
            shafts,
        }
    }

    fn prepare(&mut self, _model: &Model, _st: &State, _ws: &mut Buffers) {}

    fn evaluate(&mut self, model: &Model, ev: &mut Evaluator<f64>) {
        evaluate(model, ev, self);
    }

    fn evaluate_dual(&mut self, model: &Model, ev: &mut Evaluator<Dual64>) {
        evaluate(model, ev, self);
    }

    /// Cylinder rates at the projected velocities (`ws.ev.kin` holds them), the given forces.
    fn ports(&mut self, model: &Model, ws: &mut Buffers, _zd: &[f64]) {
        for (c, cyl) in model.cylinders().enumerate() {
            let line = Line::at(&ws.ev.kin, &cyl.base, &cyl.rod);
            ws.ev.motion[c] = CylinderMotion {
                s: line.s,
                sd: line.rate(&ws.ev.kin, &cyl.base, &cyl.rod),
            };
            ws.ev.cylinder_force[c] = self.force[c];
        }
    }

    fn commit(&self, _model: &Model, _st: &mut State, _report: &mut StepReport) {}
}

/// What the mechanical subsystem cannot carry in `model`: nonholonomic rows and joint friction
/// (the z-only step has neither), a terrain. (A hydraulic motor is a shaft port,
/// `circuit::Shaft`.)
pub fn check_supported(model: &Model) -> Result<(), ModelError> {
    if !model.nonholonomic.is_empty() {
        return Err(ModelError::new(
            "nonholonomic[0]",
            "mechanical subsystem",
            "nonholonomic constraints are not carried by the mechanical subsystem (z-only step)",
        ));
    }
    if !model.joint_friction.is_empty() {
        return Err(ModelError::new(
            "joint_friction[0]",
            "mechanical subsystem",
            "joint friction is not carried by the mechanical subsystem (z-only step)",
        ));
    }
    if model.terrain.is_some() {
        return Err(ModelError::new(
            "terrain",
            "mechanical subsystem",
            "a terrain is not carried by the mechanical subsystem",
        ));
    }
    Ok(())
}

/// The mechanics of a model stepped alone (module doc): z, ż, z̈, λ in its own `State` (the
/// pressures unused), one step Δt = `solver.step_s` per call, driven by the cylinder forces.
/// Allocates nothing per step.
#[derive(Debug)]
pub struct MechanicalSubsystem {
    st: State,
    buffers: Buffers,
    forces: LineForces,
    motion: Vec<CylinderMotion<f64>>,
    report: StepReport,
    dt: f64,
}

impl MechanicalSubsystem {
    /// The mechanics of `model` from the state `st` (e.g. `initialization::initialize`); an
    /// error naming what it cannot carry ([`check_supported`]).
    pub fn new(model: &Model, st: State) -> Result<Self, ModelError> {
        check_supported(model)?;
        let mut buffers = Buffers::new(model);
        // the projections need the dense M′ (the penalty step on a tree may skip it)
        buffers.ev.dynamics.form_mass = true;
        buffers.evd.dynamics.form_mass = true;
        let zero = CylinderMotion { s: 0.0, sd: 0.0 };
        let forces = LineForces::new(model);
        Ok(MechanicalSubsystem {
            st,
            buffers,
            motion: vec![zero; model.n_cylinders() + forces.shafts.len()],
            forces,
            report: StepReport::default(),
            dt: model.solver.step_s,
        })
    }

    /// What the last step did (iterations, energies, constraint violation).
    pub fn report(&self) -> &StepReport {
        &self.report
    }

    /// The ports' motion at the current state: the cylinders' s, ṡ (line ports at z, ż), then
    /// the shafts' joint angle and rate.
    fn line_ports(&mut self, model: &Model) {
        let kin = &mut self.buffers.ev.kin;
        kin.positions(model, &self.st.z);
        kin.velocities(model, &self.st.zd);
        for (c, cyl) in model.cylinders().enumerate() {
            let line = Line::at(kin, &cyl.base, &cyl.rod);
            self.motion[c] = CylinderMotion {
                s: line.s,
                sd: line.rate(kin, &cyl.base, &cyl.rod),
            };
        }
        let nc = model.n_cylinders();
        for (j, shaft) in self.forces.shafts.iter().enumerate() {
            self.motion[nc + j] = CylinderMotion {
                s: self.st.z[shaft.axis.0],
                sd: self.st.zd[shaft.axis.0],
            };
        }
    }

    /// The ports' motion at the current state (`subsystem::ports` order): each cylinder's
    /// s [m], ṡ [m/s], then each shaft's joint angle q [rad] and rate q̇ [rad/s] (in the fields
    /// `s`, `sd`): the outputs a co-simulation reads before the first step.
    pub fn motion(&mut self, model: &Model) -> &[CylinderMotion<f64>] {
        self.line_ports(model);
        &self.motion
    }
}

impl Subsystem for MechanicalSubsystem {
    type Inputs = [Segment];
    type Outputs = [CylinderMotion<f64>];

    fn step_size(&self) -> f64 {
        self.dt
    }

    fn state(&self) -> &State {
        &self.st
    }

    fn restore(&mut self, snapshot: &State) {
        self.st.clone_from(snapshot);
    }

    /// One step Δt = `solver.step_s`: inputs the effort of every port over the step
    /// (`subsystem::ports` order: each cylinder's force [N], then each shaft's torque [N m];
    /// the end value enters the residual at t_k+1); outputs the ports' motion at t_k+1 (as
    /// [`MechanicalSubsystem::motion`]). On error the state is left at t_k.
    fn step(
        &mut self,
        model: &Model,
        forces: &[Segment],
    ) -> Result<&[CylinderMotion<f64>], StepError> {
        let nc = model.n_cylinders();
        assert_eq!(
            forces.len(),
            nc + self.forces.shafts.len(),
            "one effort segment per port (cylinders, then shafts)"
        );
        step::check_state(model, &self.st)?;
        step::sample_inputs(model, &mut self.st);
        if !model.elements().is_empty() {
            self.buffers.ev.set_element_inputs(model, &self.st.inputs);
            self.buffers.evd.set_element_inputs(model, &self.st.inputs);
        }
        for (f, seg) in self.forces.force.iter_mut().zip(&forces[..nc]) {
            *f = seg.end;
        }
        for (tau, seg) in self.forces.torque.iter_mut().zip(&forces[nc..]) {
            *tau = seg.end;
        }
        self.report = step::formulation_step::<ZOnlyStep<LineForces>>(
            model,
            &mut self.st,
            &mut self.buffers,
            &mut self.forces,
        )?;
        step::sample_inputs(model, &mut self.st);
        self.line_ports(model);
        Ok(&self.motion)
    }
}
