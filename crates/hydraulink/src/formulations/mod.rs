//! The [`Stepper`] trait: what a formulation is to the step pipeline (STYLE: each formulation is
//! one implementation). A formulation owns its buffers (`Stepper::Workspace`, built only for the
//! selected formulation by `Workspace::new`), fills its part of the state
//! (`State::formulation`) from the relative state once, and advances the state by one step with
//! the shared buffers (`crate::pipeline::buffers::Buffers`). `crate::pipeline::step::step` dispatches to the
//! implementations through the closed enum `crate::pipeline::workspace::FormulationWorkspace`.
//!
//! The implementations: `penalty::Penalty` (000 §2.3, the reference),
//! `double_step::DoubleStep` (000 §2.2), `ali3p::Ali3p` (004 §2–3),
//! `i1al::I1al` (002), `kinematic_guidance::KinematicGuidance` (004 §4) and
//! `multirate::Multirate` (004 §4).

pub mod ali3p;
pub mod double_step;
pub mod i1al;
pub mod kinematic_guidance;
pub mod multirate;
pub mod penalty;
pub mod z_only;

use crate::model::Model;
use crate::pipeline::buffers::Buffers;
use crate::state::State;
use crate::{StepError, StepReport};

/// One time-stepping formulation.
pub trait Stepper {
    /// The formulation's own buffers (scratch, allocated once).
    type Workspace;

    /// Allocates the formulation's buffers for `model`.
    fn workspace(model: &Model) -> Self::Workspace;

    /// Stage `initialize`: fills `st.formulation` from the relative state (z, ż, z̈, p) when it
    /// does not yet hold this formulation's state for `model` (the first step after
    /// `initialization::initialize`); otherwise does nothing. May allocate, once.
    fn initialize(model: &Model, st: &mut State, ws: &mut Buffers, own: &mut Self::Workspace);

    /// One step Δt: valves → predict → Newton → project → commit. On error `st` is left at the
    /// last converged step.
    fn step(
        model: &Model,
        st: &mut State,
        ws: &mut Buffers,
        own: &mut Self::Workspace,
    ) -> Result<StepReport, StepError>;
}
