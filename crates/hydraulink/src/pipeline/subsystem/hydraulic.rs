//! The hydraulic subsystem stepped alone: [`HydraulicSubsystem`] over the integrator of
//! `crate::circuit::substeps`.

use crate::circuit;
use crate::circuit::substeps::*;
use crate::elements::element::Element;
use crate::elements::hydraulics::cylinder;
use crate::model::Model;
use crate::pipeline::subsystem::{self, Port, PortKind, Segment, Subsystem};
use crate::state::State;
use crate::{ModelError, StepError};

/// The hydraulics of a model stepped alone (module doc): pressures and valve positions in its
/// own `State` (the mechanical entries unused), one step Δt = `HydraulicConfig::step_s` of N
/// substeps per call, driven by the cylinders' and the shafts' motion (`subsystem::ports`).
/// Allocates nothing per step.
#[derive(Debug, Clone)]
pub struct HydraulicSubsystem {
    st: State,
    plan: HydraulicPlan,
    sub: HydraulicBuffers<f64>,
    spool_new: Vec<f64>,
    /// The drive ports taken from outside (`with_drive_ports`); empty: each pump turns at its
    /// input's speed.
    drives: Vec<circuit::Drive>,
    force: Vec<f64>,
    cavitation_onsets: u64,
}

impl HydraulicSubsystem {
    /// The hydraulics of `model` from the state `st` (e.g. `initialization::initialize`), stepped
    /// under `config`; an error naming the element it cannot carry ([`check_supported`]).
    pub fn new(model: &Model, config: HydraulicConfig, st: State) -> Result<Self, ModelError> {
        check_supported(model)?;
        if !(config.step_s > 0.0 && config.step_s.is_finite()) || config.substeps == 0 {
            return Err(ModelError::new(
                "solver.hydraulic_substeps",
                "hydraulic subsystem",
                format!(
                    "needs a positive finite step and at least one substep (step {} s, {} substeps)",
                    config.step_s, config.substeps
                ),
            ));
        }
        let plan = HydraulicPlan::new(model, config);
        Ok(HydraulicSubsystem {
            spool_new: st.spool.clone(),
            st,
            force: vec![0.0; model.n_cylinders() + plan.shafts.len()],
            plan,
            sub: HydraulicBuffers::new(model, false),
            drives: Vec::new(),
            cavitation_onsets: 0,
        })
    }

    /// The same with every pump's shaft a drive port (`circuit::drives`): an engine gives its
    /// angle over the step (the speed ω is the segment's rate, held over the step as the input's
    /// would be), and the pump's shaft torque goes back. The drive ports come after the ports of
    /// [`crate::pipeline::subsystem::ports`] in the inputs and the outputs
    /// ([`HydraulicSubsystem::ports`]).
    pub fn with_drive_ports(
        model: &Model,
        config: HydraulicConfig,
        st: State,
    ) -> Result<Self, ModelError> {
        let mut sys = Self::new(model, config, st)?;
        sys.drives = circuit::drives(model);
        sys.force.resize(sys.force.len() + sys.drives.len(), 0.0);
        Ok(sys)
    }

    /// Its ports in the order of its inputs and outputs: the cylinders' lines and the motors'
    /// shafts (`subsystem::ports`), then the drives if it takes them.
    pub fn ports(&self, model: &Model) -> Vec<Port> {
        let mut ports = subsystem::ports(model);
        ports.extend(self.drives.iter().map(|&d| Port {
            name: model.elements()[d.element].name().to_string(),
            kind: PortKind::Drive(d),
        }));
        ports
    }

    /// Its integrator and step.
    pub fn config(&self) -> HydraulicConfig {
        self.plan.config
    }

    /// Pressures p [Pa] at the current time.
    pub fn pressures(&self) -> &[f64] {
        &self.st.p
    }

    /// Bit v set: volume v dropped below 0 Pa in the last step.
    pub fn cavitation_onsets(&self) -> u64 {
        self.cavitation_onsets
    }

    fn failure(&self, model: &Model, reason: &str) -> StepError {
        let l = &model.layout;
        let (v, value) = self
            .sub
            .r
            .iter()
            .enumerate()
            .map(|(v, r)| (v, r.abs() / model.solver.tol_pressure_pa))
            .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        StepError::NewtonFailed {
            time_s: self.st.t_s,
            step: self.st.step,
            iterations: 0,
            equation: l.names.get(l.p.start + v).cloned().unwrap_or_default(),
            value,
            reason: reason.to_string(),
        }
    }
}

impl Subsystem for HydraulicSubsystem {
    type Inputs = [Segment];
    type Outputs = [f64];

    fn step_size(&self) -> f64 {
        self.plan.config.step_s
    }

    fn state(&self) -> &State {
        &self.st
    }

    fn restore(&mut self, snapshot: &State) {
        self.st.clone_from(snapshot);
    }

    /// One step Δt: inputs one segment per port ([`HydraulicSubsystem::ports`]): s [m] of every
    /// cylinder (`Model::cylinders()` order), then q [rad] of the joint of every shaft port
    /// (element order), then the angle [rad] of every drive it takes. Outputs the effort of each
    /// port at t_k+1: the cylinder force F(p_k+1, ṡ) [N], the shaft torque τ(p_k+1, q̇) [N m] on
    /// its joint and the torque T(p_k+1, ω) [N m] a drive supplies, ṡ, q̇ and ω the segments'
    /// rates. On error the state is left at t_k.
    fn step(&mut self, model: &Model, motion: &[Segment]) -> Result<&[f64], StepError> {
        let nc = model.n_cylinders();
        let ns = self.plan.shafts.len();
        assert_eq!(
            motion.len(),
            nc + ns + self.drives.len(),
            "one motion segment per port (cylinders, shafts, then drives)"
        );
        let dt = self.plan.config.step_s;
        let t0 = self.st.t_s;
        crate::elements::inputs::sample(&model.inputs, t0, t0 + dt, &mut self.st.inputs);
        circuit::advance_positions(model, &self.st, dt, &mut self.spool_new);
        // a driven pump turns at its drive's speed, held over the step (as its input's would be)
        for (d, m) in self.drives.iter().zip(&motion[nc + ns..]) {
            self.spool_new[d.slot] = m.rate(dt);
        }
        plan_step(model, &self.st, &mut self.spool_new, &mut self.plan);
        for (c, m) in motion[..nc].iter().enumerate() {
            self.plan.s0[c] = m.start;
            self.sub.s1[c] = m.end;
        }
        for (j, m) in motion[nc..nc + ns].iter().enumerate() {
            self.plan.q0[j] = m.start;
            self.sub.q1[j] = m.end;
        }
        integrate(model, &mut self.sub, &self.plan);
        if self.sub.failed {
            return Err(self.failure(model, "hydraulic substep did not converge"));
        }
        if let Some(v) = self.sub.p.iter().position(|p| !p.is_finite()) {
            return Err(StepError::NonFinite {
                time_s: t0,
                step: self.st.step,
                equation: model.layout.names[model.layout.p.start + v].clone(),
            });
        }
        self.cavitation_onsets = 0;
        commit(
            model,
            &self.plan,
            &self.sub,
            &mut self.st,
            &mut self.cavitation_onsets,
        );
        self.st.spool.copy_from_slice(&self.spool_new);
        // the pipeline's clock (`advance::work_and_clock`): t = k Δt, no drift
        self.st.step += 1;
        self.st.t_s = self.st.step as f64 * dt;
        for (c, cyl) in model.cylinders().enumerate() {
            let sd = motion[c].rate(dt);
            let (pa, pb) = (self.st.p[cyl.vol_a.0], self.st.p[cyl.vol_b.0]);
            self.force[c] = cylinder::force_and_friction(cyl, pa, pb, sd, &[]).0;
        }
        for (j, shaft) in self.plan.shafts.iter().enumerate() {
            // the element's own law at (p_k+1, q_k+1, q̇): its joint effort (000 eq. 45's
            // rotary counterpart: τ enters Q′ of the joint coordinate)
            let e = &model.elements()[shaft.element];
            let mut at = circuit::node_port_state(model, &self.st.p, &e.ports().nodes);
            at.s = motion[nc + j].end;
            at.sd = motion[nc + j].rate(dt);
            if let Some(k) = model.element_input[shaft.element] {
                at.u = self.st.inputs.step_values(k).1;
            }
            self.force[nc + j] = e.evaluate(&at).force;
        }
        for (k, d) in self.drives.iter().enumerate() {
            let e = &model.elements()[d.element];
            let mut at = circuit::node_port_state(model, &self.st.p, &e.ports().nodes);
            at.position = self.st.spool[d.slot];
            self.force[nc + ns + k] = e.drive_torque(&at);
        }
        Ok(&self.force)
    }
}
