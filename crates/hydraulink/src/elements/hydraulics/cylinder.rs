//! Double-acting cylinder (000 eqs. 28–29, 42–45).
//!
//! ```text
//!  base ●══════[ A: p_A │▌ B: p_B ]══════════● rod        s = |r_rod − r_base|
//!              ◀─ l_A ─▶   ◀─ l_B ─▶                      l_A = s − s_min,  l_B = stroke − l_A
//!                                                          V̇_A = A_A ṡ,  V̇_B = −A_B ṡ
//!  F = p_A A_A − p_B A_B − F_μ   (pushes the pins apart when positive)
//! ```
//! (000 eq. 43 with its sign corrected, reference note 000-E.1.)
//!
//! ## The cylinder as an element
//!
//! [`Cylinder`] implements [`Element`]: node ports A (`vol_a`) and B (`vol_b`), a line port
//! from `base` to `rod` (s, ṡ in, F out), and its seal friction states w (bristle q, film h of
//! 003 Pub II) in [`PortState::internal`] with their rates in [`PortEffort::internal_rate`].
//! The friction states are unknowns of the block w of x (`Layout::friction`), not of the
//! elements' block e, so [`Element::n_internal`] is 0 and [`Cylinder::n_friction_states`]
//! gives their number.
//!
//! It is an arm of the one element list, `Component::Cylinder`, in `Model::components`, where
//! the cylinders follow every other element (`Model::cylinders`, in `CylinderId` order). The
//! element loops of the step (flows, mechanical ports, energy accounts, generic output
//! columns) visit `Model::elements`, the list before them, because the formulations assemble
//! a cylinder at its own place:
//! - its chamber volumes are part of their nodes' capacitance V/B_e (000 eqs. 22–23, with the
//!   wall compliance), which the element interface does not carry (it adds an extra ∂V/∂p
//!   only): `circuit::volume` puts them in V, V̇ and the wall compliance;
//! - its force and flows enter the residual at their own place in the sums
//!   (`mechanics::assembly::Evaluator`, `circuit::pressure_rates`), on which every shipped
//!   model's results depend bit for bit.
//!
//! Both call the law functions of this file ([`force_and_friction`], [`chamber_volume`]), which
//! [`Element::evaluate`] calls too, and `tests/elements/cylinder.rs` checks that the element
//! and the fast path agree on shipped models. Its line-port kinematics are the one
//! `mechanics::ports::Line`. Everything else goes through the element: the output columns
//! (`describe`, `outputs`), the actuator power ([`line_power`]), the spec check ([`check`]) and
//! the compile ([`compile`]).

use crate::elements::element::{
    Element, EnergyDomain, MechPort, PortEffort, PortState, Ports, Power, Variable, MAX_INTERNAL,
    MAX_NODES, MAX_OUTPUTS,
};
use crate::elements::friction::compile::FrictionSpec;
use crate::elements::friction::Friction;
use crate::elements::ids::{AttachmentSpec, FramePoint, Node, VolumeId};
use crate::error::ModelError;
use crate::solver::real::Real;
use serde::{Deserialize, Serialize};

/// A double-acting cylinder. Its chambers belong to the volumes `piston_side` and `rod_side`.
///
/// Pin-to-pin length s = |r_rod − r_base|. Piston-side chamber length l_A = s − retracted_length,
/// rod-side l_B = stroke − l_A (000 eq. 43 with its sign corrected).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CylinderSpec {
    /// Unique name.
    pub name: String,
    /// Barrel end.
    pub base: AttachmentSpec,
    /// Rod end.
    pub rod: AttachmentSpec,
    /// Piston diameter [m].
    pub piston_diameter_m: f64,
    /// Rod diameter [m], < piston diameter.
    pub rod_diameter_m: f64,
    /// Stroke [m].
    pub stroke_m: f64,
    /// Pin-to-pin length at full retraction [m].
    pub retracted_length_m: f64,
    /// Volume that holds the piston-side chamber.
    pub piston_side: String,
    /// Volume that holds the rod-side chamber.
    pub rod_side: String,
    /// Bulk modulus of the cylinder wall B_c [Pa] (000 eq. 23). Omit for a rigid wall.
    #[serde(default)]
    pub wall_bulk_modulus_pa: Option<f64>,
    /// Friction law.
    #[serde(default)]
    pub friction: FrictionSpec,
}

/// Compiled double-acting cylinder.
#[derive(Debug, Clone, PartialEq)]
pub struct Cylinder {
    /// Name.
    pub name: String,
    /// Barrel pin.
    pub base: FramePoint,
    /// Rod pin.
    pub rod: FramePoint,
    /// Piston area A_A [m²].
    pub area_a_m2: f64,
    /// Annulus area A_B [m²].
    pub area_b_m2: f64,
    /// Stroke [m].
    pub stroke_m: f64,
    /// Pin-to-pin length at full retraction [m].
    pub retracted_length_m: f64,
    /// Volume holding the piston-side chamber.
    pub vol_a: VolumeId,
    /// Volume holding the rod-side chamber.
    pub vol_b: VolumeId,
    /// Wall bulk modulus B_c [Pa].
    pub wall_bulk_pa: Option<f64>,
    /// Friction law.
    pub friction: Friction,
}

/// Kinematic state of a cylinder: pin-to-pin length s [m] and rate ṡ [m/s].
#[derive(Debug, Clone, Copy)]
pub struct CylinderMotion<S> {
    /// s [m].
    pub s: S,
    /// ṡ [m/s].
    pub sd: S,
}

/// Piston side (A) or rod side (B).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Piston side.
    A,
    /// Rod side.
    B,
}

/// The volume holding a chamber.
#[inline]
pub fn volume_of(c: &Cylinder, side: Side) -> VolumeId {
    match side {
        Side::A => c.vol_a,
        Side::B => c.vol_b,
    }
}

/// Chamber volume [m³] and its rate [m³/s].
#[inline]
pub fn chamber_volume<S: Real>(c: &Cylinder, side: Side, m: CylinderMotion<S>) -> (S, S) {
    let la = m.s - c.retracted_length_m;
    match side {
        Side::A => (la * c.area_a_m2, m.sd * c.area_a_m2),
        Side::B => (
            (S::from(c.stroke_m) - la) * c.area_b_m2,
            -(m.sd * c.area_b_m2),
        ),
    }
}

/// Hydraulic force p_A A_A − p_B A_B [N].
#[inline]
pub fn hydraulic_force<S: Real>(c: &Cylinder, pa: S, pb: S) -> S {
    pa * c.area_a_m2 - pb * c.area_b_m2
}

/// Net force F = p_A A_A − p_B A_B − F_μ [N] of a law without internal states (the natural
/// coordinates' cylinder ports); laws with states (LuGre) go through [`force_and_friction`].
#[inline]
pub fn force<S: Real>(c: &Cylinder, pa: S, pb: S, sd: S) -> S {
    debug_assert_eq!(crate::elements::friction::n_states(&c.friction), 0);
    force_and_friction(c, pa, pb, sd, &[]).0
}

/// (F, F_μ) [N] with the friction states `w` of this cylinder (003 Pub II eq. 11: F_cyl =
/// p1 A1 − p2 A2 − F_μ).
#[inline]
pub fn force_and_friction<S: Real>(c: &Cylinder, pa: S, pb: S, sd: S, w: &[S]) -> (S, S) {
    let fh = hydraulic_force(c, pa, pb);
    let fm = crate::elements::friction::force(&c.friction, fh, sd, w);
    (fh - fm, fm)
}

/// Power through a line port, F ṡ [W] (force [N] times the rate of the length [m/s]): the
/// mechanical power a cylinder delivers to the mechanism with its net force F, or the friction
/// power F_μ ṡ. The actuator work (`advance::work_and_clock`) and friction work
/// (`advance::friction_work`) integrate it.
#[inline]
pub fn line_power<S: Real>(force: S, sd: S) -> S {
    force * sd
}

// the modified LuGre law has 2 friction states (bristle q, film h), all carried in
// `PortState::internal`
const _: () = assert!(MAX_INTERNAL >= 2 && MAX_NODES >= 2 && MAX_OUTPUTS >= 4);

impl Cylinder {
    /// Number of seal-friction states w of this cylinder (0, 1 for LuGre, 2 for modified LuGre):
    /// the first entries of [`PortState::internal`] and [`PortEffort::internal_rate`]. They are
    /// unknowns of the block w of x (`Layout::friction`), not of the elements' block e.
    pub fn n_friction_states(&self) -> usize {
        crate::elements::friction::n_states(&self.friction)
    }

    /// Mechanical power delivered to the mechanism through the line port, F ṡ [W], at the port
    /// state `at` with the efforts `e` (the net force F of [`Element::evaluate`], or the force
    /// the formulation applied, e.g. a guided cylinder's constraint force).
    pub fn mechanical_power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> f64 {
        line_power(e.force, at.sd)
    }
}

impl Element for Cylinder {
    fn name(&self) -> &str {
        &self.name
    }
    /// Nodes A (`vol_a`) and B (`vol_b`), a line port from `base` to `rod`, no input.
    fn ports(&self) -> Ports {
        Ports {
            nodes: [
                Some(Node::Volume(self.vol_a)),
                Some(Node::Volume(self.vol_b)),
                None,
                None,
            ],
            mech: MechPort::Line {
                base: self.base,
                rod: self.rod,
            },
            input: None,
        }
    }
    /// `<name>.length` [m], `<name>.velocity` [m/s], `<name>.force` [N] (the output columns;
    /// the work `<name>.work` is the integrated [`line_power`], an account of the state).
    fn describe(&self, out: &mut Vec<Variable>) {
        for (q, unit) in [("length", "m"), ("velocity", "m/s"), ("force", "N")] {
            out.push(Variable {
                name: format!("{}.{q}", self.name),
                unit,
            });
        }
        crate::elements::element::describe_power(&self.name, out);
    }
    /// The line force F = p_A A_A − p_B A_B − F_μ(ṡ, w) (000 eq. 43, note 000-E.1; 003 Pub II
    /// eq. 11), the displacement flow into each chamber's node, Q_A = −V̇_A = −A_A ṡ and
    /// Q_B = −V̇_B = A_B ṡ (the −V̇ term of 000 eq. 22, so that Σ Q − V̇ of the node is the
    /// same), and the friction-state rates ẇ = u(ṡ, w) (003 Pub II eqs. 25, 28, 30).
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let nw = self.n_friction_states();
        let w = &at.internal[..nw];
        let (f, _) = force_and_friction(self, at.p[0], at.p[1], at.sd, w);
        let m = CylinderMotion { s: at.s, sd: at.sd };
        let mut e = PortEffort::zero();
        e.force = f;
        e.flow[0] = -chamber_volume(self, Side::A, m).1;
        e.flow[1] = -chamber_volume(self, Side::B, m).1;
        crate::elements::friction::rates(&self.friction, at.sd, w, &mut e.internal_rate[..nw]);
        e
    }
    /// Hydraulic power in, −(p_A Q_A + p_B Q_B) = (p_A A_A − p_B A_B) ṡ, as `supplied_w` (the
    /// hydraulic work W of `Simulation::energy_drift_j`), and the friction power F_μ ṡ as
    /// `dissipated_w`; the mechanical power out ([`Cylinder::mechanical_power`]) is their
    /// difference F ṡ. Nothing is stored (the oil's energy is the nodes').
    fn power(&self, at: &PortState<f64>, _e: &PortEffort<f64>) -> Power {
        let fh = hydraulic_force(self, at.p[0], at.p[1]);
        let w = &at.internal[..self.n_friction_states()];
        let (_, fm) = force_and_friction(self, at.p[0], at.p[1], at.sd, w);
        Power {
            stored_j: 0.0,
            dissipated_w: line_power(fm, at.sd),
            supplied_w: line_power(fh, at.sd),
        }
    }
    fn domain(&self) -> EnergyDomain {
        EnergyDomain::Mechanical
    }
    /// s, ṡ and F, in the order of [`Element::describe`].
    fn outputs(
        &self,
        at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        out[0] = at.s;
        out[1] = at.sd;
        out[2] = e.force;
        // −Σ p_i Q_i with Q = −V̇ of each chamber: (p_A A_A − p_B A_B) ṡ, the `supplied_w` of
        // `power` (000 eq. 28 times ṡ); `at.p` holds the chamber pressures
        out[3] = line_power(hydraulic_force(self, at.p[0], at.p[1]), at.sd);
        4
    }
}

/// Piston area A_A = π d²/4 and annulus area A_B = A_A − π d_r²/4 [m²] from the piston and rod
/// diameters [m].
pub fn areas(piston_diameter_m: f64, rod_diameter_m: f64) -> (f64, f64) {
    let area_a = std::f64::consts::PI * piston_diameter_m.powi(2) / 4.0;
    let area_b = area_a - std::f64::consts::PI * rod_diameter_m.powi(2) / 4.0;
    (area_a, area_b)
}

/// What the spec check of a cylinder ([`check`]) needs of the model being validated
/// (`pipeline::validate` implements it): errors at `hydraulics.cylinders[i].<field>` naming
/// `cylinder '<name>'` with the messages of every spec check, and the references to bodies,
/// markers and volumes, which only the whole spec resolves.
pub trait SpecChecks {
    /// The full path of `field` (`hydraulics.cylinders[0].friction`).
    fn path(&self, field: &str) -> String;
    /// The element, `cylinder '<name>'`.
    fn element(&self) -> &str;
    /// The error at `field`.
    fn error(&self, field: &str, message: String) -> ModelError;
    /// A finite value.
    fn finite(&self, field: &str, x: f64) -> Result<f64, ModelError>;
    /// A finite value > 0.
    fn positive(&self, field: &str, x: f64) -> Result<f64, ModelError>;
    /// A finite value ≥ 0.
    fn non_negative(&self, field: &str, x: f64) -> Result<f64, ModelError>;
    /// `<field>.body` names a body or the ground and `<field>.marker` one of its markers.
    fn attachment(&self, field: &str, end: &AttachmentSpec) -> Result<(), ModelError>;
    /// `name` is a volume (not a pump or tank).
    fn volume(&self, field: &str, name: &str) -> Result<(), ModelError>;
}

/// Checks a cylinder's spec, field by field in declaration order; the first error names the
/// field and the cylinder.
pub fn check(cylinder: &CylinderSpec, cx: &impl SpecChecks) -> Result<(), ModelError> {
    cx.attachment("base", &cylinder.base)?;
    cx.attachment("rod", &cylinder.rod)?;
    if cylinder.rod.body == cylinder.base.body {
        return Err(cx.error(
            "rod.body",
            format!(
                "is the same body as base.body ('{}'); a cylinder acts between two bodies",
                cylinder.base.body
            ),
        ));
    }
    let piston = cx.positive("piston_diameter_m", cylinder.piston_diameter_m)?;
    let rod = cx.non_negative("rod_diameter_m", cylinder.rod_diameter_m)?;
    if rod >= piston {
        return Err(cx.error(
            "rod_diameter_m",
            format!(
                "{rod:?} m is not smaller than the piston diameter {piston:?} m; the rod-side \
                 annulus would have no area"
            ),
        ));
    }
    // the areas compile derives must be finite and positive
    let (area_a, area_b) = areas(piston, rod);
    if !(area_a.is_finite() && area_a > 0.0) {
        return Err(cx.error(
            "piston_diameter_m",
            format!("{piston:?} m is out of range: the piston area π d²/4 is {area_a:?} m²"),
        ));
    }
    if area_b <= 0.0 {
        return Err(cx.error(
            "rod_diameter_m",
            format!("{rod:?} m leaves a rod-side annulus area of {area_b:?} m²"),
        ));
    }
    cx.positive("stroke_m", cylinder.stroke_m)?;
    cx.positive("retracted_length_m", cylinder.retracted_length_m)?;
    cx.volume("piston_side", &cylinder.piston_side)?;
    cx.volume("rod_side", &cylinder.rod_side)?;
    if cylinder.rod_side == cylinder.piston_side {
        return Err(cx.error(
            "rod_side",
            format!(
                "is the same volume as piston_side ('{}'); the two chambers must belong to \
                 different volumes",
                cylinder.piston_side
            ),
        ));
    }
    if let Some(bulk) = cylinder.wall_bulk_modulus_pa {
        cx.positive("wall_bulk_modulus_pa", bulk)?;
    }
    match cylinder.friction {
        FrictionSpec::None => Ok(()),
        FrictionSpec::Viscous { coefficient_n_s_m } => cx
            .non_negative("friction.coefficient_n_s_m", coefficient_n_s_m)
            .map(drop),
        FrictionSpec::Efficiency {
            efficiency,
            velocity_scale_m_s,
        } => {
            let eta = cx.finite("friction.efficiency", efficiency)?;
            if !(eta > 0.0 && eta <= 1.0) {
                return Err(cx.error(
                    "friction.efficiency",
                    format!("must be in (0, 1], got {eta:?}"),
                ));
            }
            cx.positive("friction.velocity_scale_m_s", velocity_scale_m_s)
                .map(drop)
        }
        ref seal => {
            crate::elements::friction::compile::validate(&cx.path("friction"), cx.element(), seal)
        }
    }
}

/// Compiles a checked spec ([`check`]): `marker(field, end)` resolves an attachment
/// (`base.marker`, `rod.marker`) to its frame point and `volume(field, name)` a chamber's volume,
/// each with an error naming the field; the areas from the diameters ([`areas`]), the friction
/// law from its spec.
pub fn compile(
    spec: &CylinderSpec,
    marker: &dyn Fn(&str, &AttachmentSpec) -> Result<FramePoint, ModelError>,
    volume: &dyn Fn(&str, &str) -> Result<VolumeId, ModelError>,
) -> Result<Cylinder, ModelError> {
    let base = marker("base.marker", &spec.base)?;
    let rod = marker("rod.marker", &spec.rod)?;
    let (area_a_m2, area_b_m2) = areas(spec.piston_diameter_m, spec.rod_diameter_m);
    Ok(Cylinder {
        name: spec.name.clone(),
        base,
        rod,
        area_a_m2,
        area_b_m2,
        stroke_m: spec.stroke_m,
        retracted_length_m: spec.retracted_length_m,
        vol_a: volume("piston_side", &spec.piston_side)?,
        vol_b: volume("rod_side", &spec.rod_side)?,
        wall_bulk_pa: spec.wall_bulk_modulus_pa,
        friction: crate::elements::friction::compile::seal_friction(&spec.friction),
    })
}
