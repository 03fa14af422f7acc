//! Subsystems: the mechanics and the hydraulics of one compiled `Model`, each stepped alone
//! with its own integrator and step, coupled through the cylinders' line ports
//! (`mechanics::ports::Line`, 000 eq. 45):
//!
//! ```text
//!                 s, ṡ of each cylinder (a Segment of s over the step)
//!   mechanics  ─────────────────────────────────────────────────────►  hydraulics
//!   (z, ż, z̈)  ◄─────────────────────────────────────────────────────  (p, spools)
//!                 F = p_A A_A − p_B A_B − F_μ(ṡ) of each cylinder
//! ```
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
//! Not yet ports: the shafts of hydraulic motors (a joint's ż in, torque out); a model with
//! one is rejected by both subsystems' `check_supported`.

pub mod hydraulic;
pub mod mechanical;

use crate::model::Model;
use crate::solver::real::Real;
use crate::state::State;
use crate::StepError;

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
