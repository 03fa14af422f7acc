//! Evaluation of every element at a point (z, ż, p): kinematics, cylinder ports, hydraulic
//! flows and pressure rates, the semi-recursive M′ and Q′, and the loop-closure constraints.
//! Scalar-generic: `f64` for the residual, `Dual64` for the exact tangent.

use nalgebra::Vector3;

use crate::circuit;
use crate::elements::hydraulics::{cylinder, CylinderMotion};
use crate::mechanics::constraints::{self, ConstraintEval};
use crate::mechanics::kinematics::Kinematics;
use crate::mechanics::nonholonomic::{self, NonholonomicEval};
use crate::mechanics::ports::Line;
use crate::mechanics::semirecursive::Dynamics;
use crate::model::Model;
use crate::solver::real::{v3, Real};

/// Buffers of one evaluation, in scalar type `S`.
#[derive(Debug, Clone)]
pub struct Evaluator<S: Real> {
    /// Kinematics.
    pub kin: Kinematics<S>,
    /// M′, Q′.
    pub dynamics: Dynamics<S>,
    /// Φ, Φ_z, Φ̇_z ż.
    pub constraints: ConstraintEval<S>,
    /// Cylinder s, ṡ.
    pub motion: Vec<CylinderMotion<S>>,
    /// Nonholonomic rows: B, Ψ = B ż, Ḃ ż.
    pub nonholonomic: NonholonomicEval<S>,
    /// Cylinder net force F [N].
    pub cylinder_force: Vec<S>,
    /// Net component inflow per volume [m³/s].
    pub inflow: Vec<S>,
    /// Pressure rates h [Pa/s].
    pub h: Vec<S>,
    /// Trial ż.
    pub zd: Vec<S>,
    /// Trial z̈.
    pub zdd: Vec<S>,
    /// Trial ṗ.
    pub pd: Vec<S>,
    /// Trial unknowns.
    pub x: Vec<S>,
    /// Residual.
    pub f: Vec<S>,
    /// Trial friction states w (bristles, films), cylinder by cylinder (003 Pub II eq. 25).
    pub fstate: Vec<S>,
    /// Their rates u(v, w) from the friction laws.
    pub fstate_rate: Vec<S>,
    /// Their trapezoidal rates ẇ = (2/Δt) w + ŵ̇ (set by the formulation).
    pub fstate_trap: Vec<S>,
    /// Trial internal states e of the elements (`Layout::internal` order; the relief valve's
    /// poppet opening) [unit of the state].
    pub internal: Vec<S>,
    /// Their rates g(e, ports) from the elements' laws [unit / s].
    pub internal_rate: Vec<S>,
    /// Their trapezoidal rates ė = (2/Δt) e + ê̇ (set by the formulation) [unit / s].
    pub internal_trap: Vec<S>,
    /// Friction force F_μ of every cylinder [N].
    pub friction_force: Vec<S>,
    /// Rate ż of every joint-friction axis [rad/s or m/s].
    pub joint_velocity: Vec<S>,
    /// Friction F_μ of every joint-friction element [N m or N].
    pub joint_friction_force: Vec<S>,
    /// Per cylinder, of the last cylinder evaluation: base pin, rod pin, unit direction n
    /// (p-independent; lifted by `evaluate_pressures`).
    pub cylinder_geometry: Vec<[Vector3<S>; 3]>,
    /// Value of each element's driving input at the evaluation time (1 without input); written
    /// by the step pipeline (`step::sample_element_inputs`) [unit of the input].
    pub element_u: Vec<f64>,
    /// The world values each element reads frozen over the step (`element::Frozen`; zeros for
    /// the elements that read none); written by the step pipeline (`step::sample_element_inputs`).
    pub element_frozen: Vec<crate::elements::element::Frozen>,
    /// Port state of each mechanical element at the last evaluation.
    pub element_at: Vec<crate::elements::element::PortState<S>>,
    /// Efforts of each mechanical element at the last evaluation.
    pub element_effort: Vec<crate::elements::element::PortEffort<S>>,
    /// Indices in `Model::elements` of the elements with a mechanical port, in model order
    /// (`mechanics::ports::mechanical_elements`).
    pub mechanical_elements: Vec<usize>,
    /// The ports of those elements, in the same order (`Element::ports`, formed once here rather
    /// than at every evaluation).
    pub mechanical_ports: Vec<crate::elements::element::Ports>,
    /// Indices in `Model::elements` of the elements with a joint port (`MechPort::Joint`).
    pub joint_port_elements: Vec<usize>,
    /// Per volume: whether its pressure acts on the mechanism, through a cylinder chamber or a
    /// node port of a joint-port element (a hydraulic motor). Where it does not, ∂Q′/∂p = 0 and
    /// the tangent's pressure column skips Q′ ([`Evaluator::evaluate_pressure_column`]).
    pub pressure_moves_mechanism: Vec<bool>,
}

impl<S: Real> Evaluator<S> {
    /// Buffers for a model.
    pub fn new(model: &Model) -> Self {
        let (n, m, nv, nc) = (
            model.n_coords(),
            model.n_constraints(),
            model.n_volumes(),
            model.n_cylinders(),
        );
        let nw = model.n_friction_states();
        let ne = model.layout.internal.len();
        let mechanical = crate::mechanics::ports::mechanical_elements(model.elements());
        Evaluator {
            kin: Kinematics::new(n),
            dynamics: Dynamics::new(n, model.bodies.len()),
            constraints: ConstraintEval::new(m, n),
            nonholonomic: NonholonomicEval::new(model.n_nonholonomic(), n),
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
            zd: vec![S::zero(); n],
            zdd: vec![S::zero(); n],
            pd: vec![S::zero(); nv],
            x: vec![S::zero(); n + nv + nw + ne],
            f: vec![S::zero(); n + nv + nw + ne],
            fstate: vec![S::zero(); nw],
            fstate_rate: vec![S::zero(); nw],
            fstate_trap: vec![S::zero(); nw],
            internal: vec![S::zero(); ne],
            internal_rate: vec![S::zero(); ne],
            internal_trap: vec![S::zero(); ne],
            friction_force: vec![S::zero(); nc],
            joint_velocity: vec![S::zero(); model.joint_friction.len()],
            joint_friction_force: vec![S::zero(); model.joint_friction.len()],
            cylinder_geometry: vec![[Vector3::zeros(); 3]; nc],
            element_u: model
                .elements()
                .iter()
                .map(|e| crate::elements::component::signal_value(&model.inputs, e, 0.0))
                .collect(),
            element_frozen: vec![
                [0.0; crate::elements::element::MAX_FROZEN];
                model.elements().len()
            ],
            element_at: vec![crate::elements::element::PortState::zero(); model.elements().len()],
            element_effort: vec![
                crate::elements::element::PortEffort::zero();
                model.elements().len()
            ],
            mechanical_ports: mechanical
                .iter()
                .map(|&i| model.elements()[i].ports())
                .collect(),
            mechanical_elements: mechanical,
            joint_port_elements: joint_port_elements(model),
            pressure_moves_mechanism: pressure_moves_mechanism(model),
        }
    }

    /// Sets the elements' input values for the step sampled in `inputs` (their values at
    /// t_k+1, `inputs::element_inputs`).
    pub fn set_element_inputs(
        &mut self,
        model: &Model,
        inputs: &crate::elements::inputs::InputValues,
    ) {
        crate::elements::inputs::element_inputs(&model.element_input, inputs, &mut self.element_u);
    }

    /// Sets the world values the elements read frozen over the step (`State::world`).
    pub fn set_element_frozen(&mut self, world: &crate::terrain::data::WorldState) {
        for d in &world.diggers {
            self.element_frozen[d.element] = d.frozen;
        }
    }

    /// Positions only, and Φ, Φ_z.
    pub fn positions(&mut self, model: &Model, z: &[S]) {
        self.kin.positions(model, z);
        constraints::evaluate(model, &self.kin, &mut self.constraints);
    }

    /// Full evaluation at (z, ż, p) with spool positions `spools` (friction states from
    /// `fstate`, the elements' internal states from `internal`): fills M′, Q′ (with the cylinder
    /// forces), Φ, Φ_z, cylinder motion and forces, h, the friction-state rates and the internal
    /// rates. With `acc0`, also Φ̇_z ż.
    pub fn evaluate(
        &mut self,
        model: &Model,
        z: &[S],
        zd: &[S],
        p: &[S],
        spools: &[f64],
        acc0: bool,
    ) {
        self.kin.positions(model, z);
        self.evaluate_at_positions(model, z, zd, p, spools, acc0);
    }

    /// [`Evaluator::evaluate`] with the kinematics already at the positions z
    /// (`Kinematics::positions` at the same z, e.g. to read the cylinders' line ports first, as
    /// multi-rate does): everything after the positions. Inlined into both callers, so that
    /// [`Evaluator::evaluate`] stays one function.
    #[inline(always)]
    pub fn evaluate_at_positions(
        &mut self,
        model: &Model,
        z: &[S],
        zd: &[S],
        p: &[S],
        spools: &[f64],
        acc0: bool,
    ) {
        self.dynamics.mass_v_valid = false;
        self.kin.velocities(model, zd);
        self.dynamics.bodies(model, &self.kin);
        // elements on body ports (p-independent: saved with the body terms)
        if model.has_mechanical_elements {
            crate::mechanics::ports::body_forces(
                model.elements(),
                &self.mechanical_elements,
                &self.mechanical_ports,
                &self.element_u,
                &self.element_frozen,
                &self.kin,
                &mut self.dynamics,
                &mut self.element_at,
                &mut self.element_effort,
            );
        }
        self.dynamics.save_body_terms();
        self.cylinders(model, p);
        self.dynamics.accumulate(model, &self.kin);
        for (j, jf) in model.joint_friction.iter().enumerate() {
            self.joint_velocity[j] = zd[jf.axis.0];
        }
        self.joint_friction(model, true);
        if model.has_mechanical_elements {
            crate::mechanics::ports::joint_forces(
                model,
                &self.mechanical_elements,
                &self.mechanical_ports,
                &self.element_u,
                zd,
                z,
                p,
                &mut self.dynamics.force,
                &mut self.element_at,
                &mut self.element_effort,
            );
        }
        constraints::evaluate(model, &self.kin, &mut self.constraints);
        if acc0 {
            constraints::evaluate_acc0(model, &self.kin, &mut self.constraints);
        }
        if !model.nonholonomic.is_empty() {
            nonholonomic::evaluate(model, &self.kin, &mut self.nonholonomic);
        }
        circuit::pressure_rates_with(
            model,
            p,
            &self.motion,
            spools,
            &self.internal,
            &self.element_at,
            &mut self.internal_rate,
            &mut self.inflow,
            &mut self.h,
        );
    }

    /// Like [`Evaluator::evaluate`] where only the pressures differ from the f64 evaluation
    /// `base` at the same (z, ż): kinematics, body terms and constraints do not depend on p and
    /// are lifted from `base`; the cylinder ports, the accumulation and the hydraulics run in `S`.
    /// Used for the pressure columns of the exact tangent ([`Evaluator::lift_pressure_base`]
    /// then [`Evaluator::evaluate_pressure_column`] with M′ and the constraints lifted too).
    pub fn evaluate_pressures(
        &mut self,
        model: &Model,
        base: &Evaluator<f64>,
        p: &[S],
        spools: &[f64],
    ) {
        self.lift_pressure_base(base);
        // M′ does not depend on p: accumulated from the lifted body inertias
        self.dynamics.lift_body_terms(&base.dynamics);
        self.dynamics.accumulate_inertia(model, &self.kin);
        self.evaluate_pressure_column(model, base, p, spools, true);
        // M′ z̈ does not depend on p: the tree passes' product of `base` (at the same z̈), if
        // `base` has one, is taken over by the next `form_residual`
        if !self.dynamics.form_mass && base.dynamics.mass_v_valid {
            for (d, s) in self
                .dynamics
                .mass_v
                .iter_mut()
                .zip(base.dynamics.mass_v.iter())
            {
                *d = S::from(*s);
            }
            self.dynamics.mass_v_valid = true;
        }
    }

    /// The p-independent part of an f64 evaluation `base` at the same (z, ż), lifted once for
    /// all pressure columns of a tangent: kinematics, joint-friction rates, Φ, Φ_z, B, Ψ.
    pub fn lift_pressure_base(&mut self, base: &Evaluator<f64>) {
        self.kin.lift_from(&base.kin);
        for (d, s) in self
            .joint_velocity
            .iter_mut()
            .zip(base.joint_velocity.iter())
        {
            *d = S::from(*s);
        }
        for (d, s) in self
            .constraints
            .phi
            .iter_mut()
            .zip(base.constraints.phi.iter())
        {
            *d = S::from(*s);
        }
        for (d, s) in self
            .constraints
            .jac
            .iter_mut()
            .zip(base.constraints.jac.iter())
        {
            *d = S::from(*s);
        }
        // B and Ψ do not depend on p
        let (nh, bnh) = (&mut self.nonholonomic, &base.nonholonomic);
        for (d, s) in nh.b.iter_mut().zip(bnh.b.iter()) {
            *d = S::from(*s);
        }
        for (d, s) in nh.psi.iter_mut().zip(bnh.psi.iter()) {
            *d = S::from(*s);
        }
    }

    /// One pressure column of the tangent after [`Evaluator::lift_pressure_base`]: the
    /// cylinder forces, the joint-port elements and the hydraulics at pressures `p` (dual in the
    /// column's pressure), the rest lifted from the f64 evaluation `base` at the same (z, ż).
    /// With `mechanism` the generalized forces Q′ are accumulated too (the body forces lifted
    /// first); without, Q′ is left as it was: pass `false` only where p moves no cylinder and
    /// no joint-port element (`Evaluator::pressure_moves_mechanism`), so that ∂Q′/∂p = 0.
    pub fn evaluate_pressure_column(
        &mut self,
        model: &Model,
        base: &Evaluator<f64>,
        p: &[S],
        spools: &[f64],
        mechanism: bool,
    ) {
        if mechanism {
            self.dynamics.lift_body_forces(&base.dynamics);
        }
        self.cylinder_forces(model, base, p, mechanism);
        if mechanism {
            self.dynamics.accumulate_forces(model, &self.kin);
        }
        self.joint_friction(model, mechanism);
        if model.has_mechanical_elements {
            // joint-port elements: generalized forces at the (z, ż) of `base` and the pressures
            // `p` of their node ports, if any (a hydraulic motor); the port state is kept for
            // the flow sum below
            for &i in &self.joint_port_elements {
                let e = &model.elements()[i];
                let ports = e.ports();
                if let crate::elements::element::MechPort::Joint(a) = ports.mech {
                    let at = base.element_at[i];
                    let mut st = circuit::node_port_state(model, p, &ports.nodes);
                    st.s = S::from(at.s);
                    st.sd = S::from(at.sd);
                    st.u = at.u;
                    st.internal = at.internal.map(S::from);
                    if mechanism {
                        self.dynamics.force[a.0] += e.evaluate(&st).force;
                    }
                    self.element_at[i] = st;
                }
            }
        }
        // the elements' internal states e (set by the formulation, dual in their own columns)
        circuit::pressure_rates_with(
            model,
            p,
            &self.motion,
            spools,
            &self.internal,
            &self.element_at,
            &mut self.internal_rate,
            &mut self.inflow,
            &mut self.h,
        );
    }

    /// After [`Evaluator::evaluate`] at the same positions: new velocities `zd`, and with them
    /// Z, Ż⁰, Φ̇_z ż and the cylinder rates and forces (M′, Q′ and h are not updated).
    pub fn velocity_terms(&mut self, model: &Model, zd: &[S], p: &[S]) {
        self.kin.velocities(model, zd);
        constraints::evaluate_acc0(model, &self.kin, &mut self.constraints);
        if !model.nonholonomic.is_empty() {
            nonholonomic::evaluate(model, &self.kin, &mut self.nonholonomic);
        }
        self.cylinders(model, p);
        for (j, jf) in model.joint_friction.iter().enumerate() {
            self.joint_velocity[j] = zd[jf.axis.0];
        }
        self.joint_friction(model, false);
    }

    /// Joint friction: F_μ(ż_axis, w) of every joint-friction element, subtracted from the
    /// generalized force Q′ of its axis when `apply` (after `accumulate`), and the rates of its
    /// states (`Layout::joint_friction` in `fstate`).
    fn joint_friction(&mut self, model: &Model, apply: bool) {
        for (j, jf) in model.joint_friction.iter().enumerate() {
            let r = model.layout.joint_friction(j);
            let v = self.joint_velocity[j];
            let w = &self.fstate[r.clone()];
            let f = crate::elements::friction::force(&jf.friction, S::zero(), v, w);
            crate::elements::friction::rates(&jf.friction, v, w, &mut self.fstate_rate[r]);
            self.joint_friction_force[j] = f;
            if apply {
                self.dynamics.force[jf.axis.0] -= f;
            }
        }
    }

    /// The force of cylinder `c` at rod speed `sd` from its stored geometry [r_base, r_rod, n]:
    /// F(p, ṡ, w) and the friction state rates from `fstate[r]` (003 Pub II eqs. 22–34), F n on
    /// the rod pin and −F n on the base pin; `r`: its states, `Layout::cylinder_friction`. The
    /// cylinder element's fast path: the law functions its `Element::evaluate` calls
    /// (`tests/elements/cylinder.rs` checks that both agree).
    fn cylinder_force_at(
        &mut self,
        c: usize,
        cyl: &crate::model::Cylinder,
        r: std::ops::Range<usize>,
        p: &[S],
        sd: S,
        apply: bool,
    ) {
        let [rb, rr, n] = self.cylinder_geometry[c];
        let w = &self.fstate[r.clone()];
        let (f, fm) = cylinder::force_and_friction(cyl, p[cyl.vol_a.0], p[cyl.vol_b.0], sd, w);
        crate::elements::friction::rates(&cyl.friction, sd, w, &mut self.fstate_rate[r]);
        self.friction_force[c] = fm;
        self.cylinder_force[c] = f;
        if !apply {
            return;
        }
        let line = Line {
            rb,
            rr,
            n,
            s: self.motion[c].s,
        };
        line.apply(&mut self.dynamics, &cyl.base, &cyl.rod, f);
    }

    /// Like [`Evaluator::cylinders`] with the port geometry and motion (which do not depend on p)
    /// lifted from the f64 evaluation `base` at the same (z, ż): only the forces run in `S`,
    /// applied to the bodies when `apply`.
    fn cylinder_forces(&mut self, model: &Model, base: &Evaluator<f64>, p: &[S], apply: bool) {
        for (c, cyl) in model.cylinders().enumerate() {
            let [rb, rr, n] = base.cylinder_geometry[c];
            let (rb, rr, n): (Vector3<S>, Vector3<S>, Vector3<S>) = (v3(&rb), v3(&rr), v3(&n));
            let m = base.motion[c];
            let sd = S::from(m.sd);
            self.motion[c] = CylinderMotion {
                s: S::from(m.s),
                sd,
            };
            self.cylinder_geometry[c] = [rb, rr, n];
            let r = model.layout.cylinder_friction(crate::model::CylinderId(c));
            self.cylinder_force_at(c, cyl, r, p, sd, apply);
        }
    }

    /// Cylinder ports: s = |r_rod − r_base|, ṡ = n·(ṙ_rod − ṙ_base) (000 eq. 45); the force
    /// F n acts on the rod pin and −F n on the base pin. Friction F_μ(ṡ, w) with the states
    /// `fstate` and their rates u(ṡ, w) into `fstate_rate` (003 Pub II eqs. 22–34).
    fn cylinders(&mut self, model: &Model, p: &[S]) {
        for (c, cyl) in model.cylinders().enumerate() {
            // the line port (`mechanics::ports::Line`, 000 eq. 45)
            let line = Line::at(&self.kin, &cyl.base, &cyl.rod);
            let (s, sd) = (line.s, line.rate(&self.kin, &cyl.base, &cyl.rod));
            self.motion[c] = CylinderMotion { s, sd };
            self.cylinder_geometry[c] = [line.rb, line.rr, line.n];
            let r = model.layout.cylinder_friction(crate::model::CylinderId(c));
            self.cylinder_force_at(c, cyl, r, p, sd, true);
        }
    }
}

/// Indices of the elements with a joint port, in model order.
fn joint_port_elements(model: &Model) -> Vec<usize> {
    (0..model.elements().len())
        .filter(|i| {
            matches!(
                model.elements()[*i].ports().mech,
                crate::elements::element::MechPort::Joint(_)
            )
        })
        .collect()
}

/// Per volume: whether its pressure enters Q′ (a cylinder chamber, or a node port of a
/// joint-port element).
fn pressure_moves_mechanism(model: &Model) -> Vec<bool> {
    let mut out = vec![false; model.n_volumes()];
    for cyl in model.cylinders() {
        for v in [cyl.vol_a, cyl.vol_b] {
            out[v.0] = true;
        }
    }
    for i in joint_port_elements(model) {
        for n in model.elements()[i].ports().nodes.iter().flatten() {
            if let crate::model::Node::Volume(v) = n {
                out[v.0] = true;
            }
        }
    }
    out
}
