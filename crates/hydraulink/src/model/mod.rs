//! The compiled, immutable [`Model`]: typed ids, resolved references, derived constants.
//!
//! A [`spec::ModelSpec`] (plain data, as read from a file) is validated and compiled by
//! [`compile`]. After that nothing in the model changes; the mutable part of a simulation is the
//! [`crate::State`], and all scratch memory is in the [`crate::Workspace`].

pub mod game;
pub mod hud;
pub mod layout;
pub mod natural_model;
pub mod spec;

pub use crate::elements::ids::*;

pub use crate::elements::friction::Friction;
pub use crate::elements::hydraulics::bridge_valve::BridgeValve;
pub use crate::elements::hydraulics::cylinder::Cylinder;
pub use crate::elements::hydraulics::throttle::Throttle;
pub use crate::elements::hydraulics::valve_4_3::Valve43;

/// One relative coordinate z_k: an elementary axis of a tree joint.
///
/// Its pose composes on the parent frame: pose_k = pose_parent ∘ T_k(z_k), where T_k rotates
/// about the line (`point_ref`, `dir_ref`) or translates along `dir_ref`, both given in the
/// reference configuration (000 §2.1; b_k, d_k as in reference note 000-A.1).
#[derive(Debug, Clone)]
pub struct Axis {
    /// Coordinate label (`z1`, or `hip.0` for multi-coordinate joints).
    pub name: String,
    /// Revolute or prismatic.
    pub kind: AxisKind,
    /// Parent frame.
    pub parent: Frame,
    /// A point on the axis [m], reference configuration.
    pub point_ref: V3,
    /// Unit direction, reference configuration.
    pub dir_ref: V3,
    /// Initial value [rad or m].
    pub q0: f64,
    /// Initial rate [rad/s or m/s].
    pub qd0: f64,
    /// The joint this axis belongs to.
    pub joint: usize,
}

/// A rigid body.
#[derive(Debug, Clone)]
pub struct Body {
    /// Name.
    pub name: String,
    /// Mass [kg].
    pub mass_kg: f64,
    /// Centre of mass [m], reference configuration.
    pub com_ref: V3,
    /// Inertia about the COM [kg m²], reference axes.
    pub inertia_ref: M3,
    /// The frame the body moves with.
    pub frame: Frame,
}

/// A tree joint (for labels and output).
#[derive(Debug, Clone)]
pub struct Joint {
    /// Name.
    pub name: String,
    /// Its axes, `z[first_axis .. first_axis + n_axes]`.
    pub first_axis: usize,
    /// Number of coordinates.
    pub n_axes: usize,
}

/// One scalar loop-closure equation. Every cut joint is a set of these two primitives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConstraintEq {
    /// Φ = e · (r₁ − r₂): distance of two points along a direction.
    PointDot {
        /// The direction e.
        e: FrameDir,
        /// Point r₁.
        p1: FramePoint,
        /// Point r₂.
        p2: FramePoint,
    },
    /// Φ = e₁ · e₂: two directions stay perpendicular.
    DirDot {
        /// e₁.
        e1: FrameDir,
        /// e₂.
        e2: FrameDir,
    },
}

/// A loop-closure equation with its label and cut joint.
#[derive(Debug, Clone)]
pub struct Constraint {
    /// Label, e.g. `E.x`.
    pub name: String,
    /// Index of the cut joint.
    pub cut_joint: usize,
    /// The equation.
    pub eq: ConstraintEq,
}

/// The rolling-disc geometry of a nonholonomic row: the contact point is r_C − R ĝ with
/// ĝ = w/|w|, w = n − (n·a) a (a: disc axis, n: ground-plane normal).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiscContact {
    /// Disc axis a (body-fixed).
    pub axis: FrameDir,
    /// Ground-plane normal n (global, unit).
    pub normal: V3,
    /// Radius R [m].
    pub radius_m: f64,
}

/// One scalar nonholonomic equation Ψ = e · v_Q = 0, with v_Q the velocity of the body's material
/// point at Q = `point` (+ the disc offset −R ĝ for a rolling disc).
#[derive(Debug, Clone)]
pub struct NonholonomicRow {
    /// Label, e.g. `blade` or `disc.t1`.
    pub name: String,
    /// The direction e (body-fixed for a knife edge, ground-fixed for a disc).
    pub e: FrameDir,
    /// The body point (knife contact, or disc centre).
    pub point: FramePoint,
    /// Rolling-disc offset of the contact point.
    pub disc: Option<DiscContact>,
}

/// A lumped volume.
#[derive(Debug, Clone)]
pub struct Volume {
    /// Name.
    pub name: String,
    /// Hose volume V_h [m³].
    pub hose_m3: f64,
    /// Hose wall bulk modulus B_h [Pa], `None` for rigid.
    pub hose_bulk_pa: Option<f64>,
    /// Initial pressure [Pa], `None` = solved by statics.
    pub p0_pa: Option<f64>,
    /// Algebraic (reduced, 002 Pub II): pressure from the flow balance, no ODE.
    pub algebraic: bool,
    /// The cylinder chambers this volume holds (derived at compile time).
    pub chambers: Vec<(CylinderId, crate::elements::hydraulics::cylinder::Side)>,
}

/// A constant-pressure boundary node.
#[derive(Debug, Clone)]
pub struct Source {
    /// Name.
    pub name: String,
    /// Pressure [Pa].
    pub pressure_pa: f64,
}

/// Friction on one elementary joint axis (revolute: torque, prismatic: force).
#[derive(Debug, Clone, PartialEq)]
pub struct JointFriction {
    /// The joint's name.
    pub joint: String,
    /// Its axis (coordinate).
    pub axis: AxisId,
    /// The law, with forces in N m (revolute) or N (prismatic).
    pub friction: Friction,
}

/// The compiled hydraulic circuit.
#[derive(Debug, Clone, Default)]
pub struct Hydraulics {
    /// Oil density ρ [kg/m³].
    pub density_kg_m3: f64,
    /// Oil bulk modulus B_oil [Pa].
    pub oil_bulk_pa: f64,
    /// Volumes.
    pub volumes: Vec<Volume>,
    /// Pumps and tanks.
    pub sources: Vec<Source>,
}

/// Solver settings, validated.
#[derive(Debug, Clone)]
pub struct SolverOptions {
    /// Formulation.
    pub formulation: spec::Formulation,
    /// Δt [s].
    pub step_s: f64,
    /// Duration [s].
    pub duration_s: f64,
    /// Output interval [s].
    pub output_interval_s: f64,
    /// α.
    pub penalty: f64,
    /// Newton tolerance on coordinates [rad or m].
    pub tol_position: f64,
    /// Newton tolerance on pressures [Pa].
    pub tol_pressure_pa: f64,
    /// Relative Newton tolerance [-].
    pub tol_relative: f64,
    /// Iteration cap.
    pub max_iterations: u32,
    /// Multi-rate: hydraulic substeps per mechanical step, ≥ 1.
    pub hydraulic_substeps: u32,
    /// Multi-rate: integrator of the substeps.
    pub hydraulic_integrator: spec::HydraulicIntegrator,
    /// Kinematic guidance: prescribed cylinder lengths.
    pub guidance: Vec<Guidance>,
    /// Newton tolerance on friction states [m or -].
    pub tol_friction_state: f64,
    /// Global formulations: planar or spatial natural frames.
    pub natural_frames: spec::NaturalFrames,
    /// Energy accounts of the hydraulic elements at every step (`hydraulic_element_energy`).
    pub hydraulic_element_energy: bool,
    /// Adaptive step-size control (`step_control = "adaptive"`), or `None` for fixed steps.
    pub adaptive: Option<AdaptiveOptions>,
}

impl SolverOptions {
    /// The penalty factor the augmented-Lagrangian formulations use at the model's step:
    /// α (Δt_α/Δt)² for Δt < Δt_α, else α [N/m or N·m/rad]. It keeps αΔt²/4, the penalty term's
    /// weight against the mass matrix in the iteration matrix and the projections, at least its
    /// value at Δt_α (`crate::solver::newton::PENALTY_REFERENCE_STEP_S`), so the multiplier update
    /// contracts the violation per iteration as fast as at Δt_α. At and above Δt_α it is α itself
    /// (bit-identical results there). A method of the options, not of the solver, so the solver
    /// imports nothing of the model.
    pub fn step_penalty(&self) -> f64 {
        crate::solver::newton::penalty_at(self.penalty, self.step_s)
    }
}

/// The settings of adaptive step-size control (`crate::pipeline::step_control`), validated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveOptions {
    /// Relative tolerance of the local error [-].
    pub rtol: f64,
    /// Absolute tolerance of the local error as a multiple of each unknown's Newton tolerance [-].
    pub atol_scale: f64,
    /// Smallest step [s].
    pub min_step_s: f64,
    /// Largest step [s].
    pub max_step_s: f64,
}

/// A cylinder length prescribed by an input signal (kinematic guidance, 004 eq. 39).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guidance {
    /// The guided cylinder.
    pub cylinder: CylinderId,
    /// Index of the input signal s_ref(t) [m] in `Model::inputs`.
    pub input: usize,
    /// Index of the input signal ṡ_ref(t) [m/s], if given.
    pub velocity_input: Option<usize>,
}

/// The compiled, immutable model.
#[derive(Debug, Clone)]
pub struct Model {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Gravity [m/s²].
    pub gravity: V3,
    /// Relative coordinates, parents before children.
    pub axes: Vec<Axis>,
    /// Bodies.
    pub bodies: Vec<Body>,
    /// Tree joints.
    pub joints: Vec<Joint>,
    /// Cut-joint names.
    pub cut_joints: Vec<String>,
    /// Loop-closure equations, cut joint by cut joint.
    pub constraints: Vec<Constraint>,
    /// Hydraulic circuit.
    pub hydraulics: Hydraulics,
    /// Input signals.
    pub inputs: Vec<crate::elements::inputs::Signal>,
    /// Input names.
    pub input_names: Vec<String>,
    /// Solver settings.
    pub solver: SolverOptions,
    /// Volume names (for the CLI's warnings).
    pub volume_names: Vec<String>,
    /// Joint friction elements; their states follow the cylinders' in the friction states.
    pub joint_friction: Vec<JointFriction>,
    /// Nonholonomic rows B(z) ż = 0 (knife edges, rolling discs).
    pub nonholonomic: Vec<NonholonomicRow>,
    /// Every element of the element model (`crate::elements::element`), one list of
    /// [`Component`](crate::elements::component::Component)s: first the elements assembled
    /// through the element interface ([`Model::elements`]: the hydraulics sections' 4/3 valves,
    /// bridge valves and throttles, then the model file's `[[elements]]` in file order: relief
    /// and check valves, accumulators, end stops, spring–dampers, loads, …), then the cylinders
    /// of `[[hydraulics.cylinders]]` in file order ([`Model::cylinders`], `CylinderId` order).
    ///
    /// The cylinders come last and apart because their chambers are part of their volumes'
    /// capacitance V/B_e (000 eqs. 22–23), which the formulations assemble with the volumes
    /// (`circuit::volume`), and because their forces and flows are summed at their own place in
    /// the residual (`Evaluator::cylinders`, `circuit::pressure_rates`), which the shipped
    /// results depend on bit for bit. Everything else about a cylinder (its law, ports,
    /// outputs, power, compile and checks) is the element's (`elements/hydraulics/cylinder.rs`).
    pub components: Vec<crate::elements::component::Component>,
    /// Number of the elements assembled through the element interface: `components[..n]`;
    /// the cylinders are `components[n..]`.
    pub n_elements: usize,
    /// Some element adds compliance to a node (an accumulator).
    pub has_node_compliance: bool,
    /// Per element of [`Model::elements`]: evaluated at every step by the stage `elements`
    /// (`element_energy::commit`), with its energy account; the others (hydraulic elements
    /// without `solver.hydraulic_element_energy`) are evaluated only when an output row asks.
    pub element_every_step: Vec<bool>,
    /// Per element of [`Model::elements`]: the index of its input signal
    /// (`ElementPorts::input`), found once so the per-step input stage does not ask every
    /// element for its ports.
    pub element_input: Vec<Option<usize>>,
    /// Some element has a mechanical port (`Component::is_mechanical`): without one the
    /// evaluators skip the element port loops.
    pub has_mechanical_elements: bool,
    /// The layout of the Newton unknowns x = [z; p; w; e]: offsets, names, units, tolerances
    /// (built last by [`compile`]).
    pub layout: layout::Layout,
    /// Per cylinder (`CylinderId` order), the index in [`Model::elements`] of its end-stop
    /// element, if it has one.
    pub cylinder_end_stop: Vec<Option<usize>>,
    /// The markers of `[outputs] markers`: their label (`body.marker`) and point, whose global
    /// positions are result columns (computed by the stage `elements`, `element_energy::commit`).
    pub output_markers: Vec<(String, FramePoint)>,
    /// The natural-coordinate model of the global formulations (004 §2), compiled when one of
    /// them is selected; `None` otherwise.
    pub natural: Option<natural_model::NaturalModel>,
    /// The deformable terrain of `[terrain]` and the `bucket_dig` elements that dig it; `None`
    /// without one (`crate::pipeline::world`).
    pub terrain: Option<crate::terrain::data::Terrain>,
}

impl Model {
    /// The elements assembled through the element interface (every element but the
    /// cylinders), in model order: what the element loops (flows, mechanical ports, energy
    /// accounts, outputs) visit. Indices into this slice are the element indices of the layout,
    /// the outputs and the energy accounts.
    #[inline]
    pub fn elements(&self) -> &[crate::elements::component::Component] {
        &self.components[..self.n_elements]
    }
    /// [`Model::elements`], mutable (a test or a front-end that edits a compiled element).
    #[inline]
    pub fn elements_mut(&mut self) -> &mut [crate::elements::component::Component] {
        &mut self.components[..self.n_elements]
    }
    /// The cylinders, in `CylinderId` order (the elements of [`Model::components`] after
    /// [`Model::elements`]).
    #[inline]
    pub fn cylinders(&self) -> Cylinders<'_> {
        self.components[self.n_elements..].iter().map(as_cylinder)
    }
    /// Cylinder `c` (`CylinderId(c)`).
    #[inline]
    pub fn cylinder(&self, c: usize) -> &Cylinder {
        as_cylinder(&self.components[self.n_elements + c])
    }
    /// Cylinder `c`, mutable (a test or a front-end that edits a compiled cylinder).
    #[inline]
    pub fn cylinder_mut(&mut self, c: usize) -> &mut Cylinder {
        match &mut self.components[self.n_elements + c] {
            crate::elements::component::Component::Cylinder(cyl) => cyl,
            _ => unreachable!("compile puts only cylinders after the elements"),
        }
    }
    /// Number of cylinders.
    #[inline]
    pub fn n_cylinders(&self) -> usize {
        self.components.len() - self.n_elements
    }
    /// The signal that drives input `name` when nothing sets it from outside (its `signal` in
    /// the model file, compiled), or `None` for an unknown name. A script that plays the model's
    /// own inputs as an operator would (`Simulation::set_input` at every step) reads them here.
    pub fn input_signal(&self, name: &str) -> Option<&crate::elements::inputs::Signal> {
        let i = self.input_names.iter().position(|n| n == name)?;
        self.inputs.get(i)
    }

    /// Name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Δt [s].
    pub fn step_s(&self) -> f64 {
        self.solver.step_s
    }
    /// Duration [s].
    pub fn duration_s(&self) -> f64 {
        self.solver.duration_s
    }
    /// Number of steps of a run of the model's duration: [`steps_covering`] it.
    pub fn n_steps(&self) -> u64 {
        steps_covering(self.solver.duration_s, self.solver.step_s)
    }
    /// Output interval [s].
    pub fn output_interval_s(&self) -> f64 {
        self.solver.output_interval_s
    }
    /// Volume names in `VolumeId` order.
    pub fn volume_names(&self) -> &[String] {
        &self.volume_names
    }
    /// Number of relative coordinates.
    pub fn n_coords(&self) -> usize {
        self.axes.len()
    }
    /// Number of loop-closure equations.
    pub fn n_constraints(&self) -> usize {
        self.constraints.len()
    }
    /// Number of valve positions (`State::spool`): Σ `Element::n_position` over the elements.
    pub fn n_valve_positions(&self) -> usize {
        use crate::elements::element::Element;
        self.elements().iter().map(|e| e.n_position()).sum()
    }
    /// The elements with a valve position and their slots in `State::spool`, in element order
    /// (`Layout::element_position`).
    pub fn position_elements(
        &self,
    ) -> impl Iterator<Item = (usize, &crate::elements::component::Component)> + Clone {
        use crate::elements::element::Element;
        self.elements()
            .iter()
            .filter(|e| e.n_position() > 0)
            .enumerate()
    }
    /// The 4/3 valves among the elements, in element order.
    pub fn valves_4_3(&self) -> impl Iterator<Item = &Valve43> + Clone {
        self.elements().iter().filter_map(|e| match e {
            crate::elements::component::Component::Valve43(v) => Some(v),
            _ => None,
        })
    }
    /// The open-centre bridge valves among the elements, in element order.
    pub fn bridge_valves(&self) -> impl Iterator<Item = &BridgeValve> + Clone {
        self.elements().iter().filter_map(|e| match e {
            crate::elements::component::Component::BridgeValve(v) => Some(v),
            _ => None,
        })
    }
    /// Number of nonholonomic equations l.
    pub fn n_nonholonomic(&self) -> usize {
        self.nonholonomic.len()
    }
    /// Number of pressure states.
    pub fn n_volumes(&self) -> usize {
        self.hydraulics.volumes.len()
    }
    /// Number of friction states (LuGre bristles, lubricant films), stored after the pressures.
    pub fn n_friction_states(&self) -> usize {
        self.cylinders()
            .map(|c| crate::elements::friction::n_states(&c.friction))
            .chain(
                self.joint_friction
                    .iter()
                    .map(|j| crate::elements::friction::n_states(&j.friction)),
            )
            .sum()
    }
    /// Number of friction states of the cylinders (the joints' follow them).
    pub fn n_cylinder_friction_states(&self) -> usize {
        self.cylinders()
            .map(|c| crate::elements::friction::n_states(&c.friction))
            .sum()
    }
}

impl layout::FrictionOwner {
    /// The friction law of this element in `model`.
    pub fn law<'m>(&self, model: &'m Model) -> &'m Friction {
        match *self {
            layout::FrictionOwner::Cylinder(c) => &model.cylinder(c.0).friction,
            layout::FrictionOwner::Joint { index, .. } => &model.joint_friction[index].friction,
        }
    }
}

/// The iterator of [`Model::cylinders`].
pub type Cylinders<'m> = std::iter::Map<
    std::slice::Iter<'m, crate::elements::component::Component>,
    fn(&crate::elements::component::Component) -> &Cylinder,
>;

/// The cylinder in `c`: `Model::components` holds only cylinders after `Model::n_elements`
/// (`pipeline::compile` builds it so and nothing else writes it).
#[inline]
fn as_cylinder(c: &crate::elements::component::Component) -> &Cylinder {
    match c {
        crate::elements::component::Component::Cylinder(cyl) => cyl,
        _ => unreachable!("compile puts only cylinders after the elements"),
    }
}

/// The number of steps of Δt = `step_s` [s] that a run of `duration_s` [s] takes: N = T/Δt when
/// T is a whole number of steps (within 1e-9 of a step, the rounding of the two decimals), else
/// the next whole number, so that a run never ends before T: it ends at N Δt ≥ T. Non-finite or
/// non-positive inputs give no step.
pub fn steps_covering(duration_s: f64, step_s: f64) -> u64 {
    let ratio = duration_s / step_s;
    if !(ratio.is_finite() && ratio > 0.0) {
        return 0;
    }
    let nearest = ratio.round();
    let n = if (ratio - nearest).abs() <= 1e-9 * nearest.max(1.0) {
        nearest
    } else {
        ratio.ceil()
    };
    // saturating: a count beyond u64 is refused by the callers' step limits
    n as u64
}

#[cfg(test)]
mod tests {
    use super::steps_covering;

    /// A whole number of steps stays as it is, despite the decimals' rounding; anything else is
    /// rounded up, so that a run never ends before its duration.
    #[test]
    fn a_duration_is_covered_by_whole_steps() {
        assert_eq!(steps_covering(10.0, 1e-3), 10_000);
        assert_eq!(steps_covering(8.0, 1e-3), 8_000);
        assert_eq!(steps_covering(0.3, 0.1), 3);
        assert_eq!(steps_covering(12.0, 10.0), 2);
        assert_eq!(steps_covering(12.0, 7e-3), 1715);
        assert_eq!(steps_covering(1e-3, 1e-3), 1);
        assert_eq!(steps_covering(0.0, 1e-3), 0);
        assert_eq!(steps_covering(f64::NAN, 1e-3), 0);
        assert_eq!(steps_covering(1.0, 0.0), 0);
        assert_eq!(steps_covering(-1.0, 1e-3), 0);
    }
}
