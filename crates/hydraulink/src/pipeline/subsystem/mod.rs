//! Subsystems: the mechanics and the hydraulics of one compiled `Model`, each stepped alone
//! with its own integrator and step, coupled through their ports ([`ports`]): the cylinders'
//! line ports (`mechanics::ports::Line`, 000 eq. 45) and the shafts of the hydraulic motors
//! (`circuit::Shaft`), a motion going one way and its effort coming back:
//!
//! ```text
//!                 s of each cylinder, q of each motor's joint (a Segment over the step)
//!   mechanics  ─────────────────────────────────────────────────────────────►  hydraulics
//!   (z, ż, z̈)  ◄─────────────────────────────────────────────────────────────  (p, spools)
//!                 F = p_A A_A − p_B A_B − F_μ(ṡ) of each cylinder,
//!                 τ = i η D (p_A − p_B)/2π of each motor on its joint
//! ```
//!
//! An engine couples to the hydraulics the same way: with
//! `HydraulicSubsystem::with_drive_ports` every pump's shaft is a drive port
//! (`circuit::Drive`, [`PortKind::Drive`]), its angle over the step in (the pump turns at the
//! segment's rate) and the torque the pump takes from the engine out.
//!
//! - [`mechanical::MechanicalSubsystem`]: z stepped by the z-only ALI3-P step
//!   (`formulations::z_only`, through the one pipeline `pipeline::step::formulation_step`) with
//!   the cylinder forces as its input.
//! - [`hydraulic::HydraulicSubsystem`]: the pressures and valve positions stepped by N forward
//!   Euler or trapezoidal substeps per step with the cylinder motion as its input.
//! - Multi-rate co-integration (004 §4, `formulations::z_only::multirate`) is their first user: the
//!   mechanical z-only step at Δt with the hydraulic sub-integration nested inside every
//!   residual evaluation (generic over `Real`, so that the tangent differentiates through it).
//!
//! A subsystem's state is a `State` (the entries of the other side unused): a snapshot is its
//! clone, and a restored snapshot continues bit for bit. The step allocates nothing.

pub mod hydraulic;
pub mod mechanical;

use crate::circuit::{self, Drive, Shaft};
use crate::model::Model;
use crate::solver::real::Real;
use crate::state::State;
use crate::StepError;

/// What a port couples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortKind {
    /// A cylinder's line (index in `Model::cylinders()`): s [m] and ṡ [m/s] from the mechanics,
    /// the force F [N] (positive pushes the pins apart) from the hydraulics.
    Line {
        /// The cylinder.
        cylinder: usize,
    },
    /// A hydraulic motor's shaft: its joint's angle q [rad] and rate q̇ [rad/s] from the
    /// mechanics, the torque τ [N m] on the joint (positive drives it positive) from the
    /// hydraulics.
    Shaft(Shaft),
    /// A pump's drive (`circuit::Drive`), a port of the hydraulic subsystem alone
    /// (`HydraulicSubsystem::with_drive_ports`): the shaft angle [rad] from an engine, whose
    /// rate is the pump's speed ω, and the torque T [N m] the engine supplies.
    Drive(Drive),
}

/// One port between the mechanical and the hydraulic subsystem.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    /// The cylinder's or the element's name.
    pub name: String,
    /// What it couples.
    pub kind: PortKind,
}

impl Port {
    /// The unit of its motion (the mechanics' output, the hydraulics' input): "m" or "rad".
    pub fn motion_unit(&self) -> &'static str {
        match self.kind {
            PortKind::Line { .. } => "m",
            PortKind::Shaft(_) | PortKind::Drive(_) => "rad",
        }
    }

    /// The unit of its effort (the hydraulics' output, the mechanics' input): "N" or "N m".
    pub fn effort_unit(&self) -> &'static str {
        match self.kind {
            PortKind::Line { .. } => "N",
            PortKind::Shaft(_) | PortKind::Drive(_) => "N m",
        }
    }
}

/// The ports of `model` in the order of both subsystems' inputs and outputs: every cylinder
/// (`Model::cylinders()` order), then every shaft (element order, `circuit::shafts`).
pub fn ports(model: &Model) -> Vec<Port> {
    let lines = model.cylinders().enumerate().map(|(cylinder, c)| Port {
        name: c.name.clone(),
        kind: PortKind::Line { cylinder },
    });
    let shafts = circuit::shafts(model).into_iter().map(|s| Port {
        name: model.elements()[s.element].name().to_string(),
        kind: PortKind::Shaft(s),
    });
    lines.chain(shafts).collect()
}

/// A port signal over one step [t_k, t_k+1] as a straight segment: its values at both ends.
/// A co-simulation manager extrapolating linearly from (x, ẋ) at t_k passes
/// `Segment::extrapolated(x, ẋ, Δt)`; multi-rate passes s_k and the trial s_k+1.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Segment<S: Real = f64> {
    /// Value at t_k.
    pub start: S,
    /// Value at t_k+1.
    pub end: S,
}

impl<S: Real> Segment<S> {
    /// The segment from `x` with rate `rate` over `dt`: end = x + ẋ Δt.
    pub fn extrapolated(x: S, rate: S, dt: f64) -> Self {
        Segment {
            start: x,
            end: x + rate * dt,
        }
    }

    /// Its constant rate (end − start)/Δt over a step `dt`.
    pub fn rate(&self, dt: f64) -> S {
        (self.end - self.start) / dt
    }

    /// The value at fraction `a` ∈ [0, 1] of the step: start + a (end − start) (004 eq. 40).
    pub fn at(&self, a: f64) -> S {
        (self.end - self.start) * a + self.start
    }
}

/// One side of the machine stepped alone: its state, its own step, its inputs over a step and
/// its outputs at the step's end. Co-simulation steps several over a communication step H with
/// extrapolated inputs ([`Segment::extrapolated`]); an FMU wraps one behind `DoStep`; Python
/// steps and snapshots it ([`Subsystem::state`] cloned, [`Subsystem::restore`]).
pub trait Subsystem {
    /// What drives it over one step (one entry per port, in model order).
    type Inputs: ?Sized;
    /// What it returns at the end of the step (one entry per port, in model order).
    type Outputs: ?Sized;

    /// Its step Δt [s].
    fn step_size(&self) -> f64;

    /// Its state at the current time; a clone is a snapshot.
    fn state(&self) -> &State;

    /// Back to `snapshot` (a clone of [`Subsystem::state`]); the steps that follow are those
    /// that followed the snapshot, bit for bit.
    fn restore(&mut self, snapshot: &State);

    /// One step Δt from the current state with `inputs` over it. On error the state stays at
    /// the start of the step.
    fn step(&mut self, model: &Model, inputs: &Self::Inputs) -> Result<&Self::Outputs, StepError>;
}
