//! The [`Stepper`] trait: what a formulation is to the step pipeline (STYLE: each formulation is
//! one implementation). A formulation supplies its equations only: its buffers
//! (`Stepper::Workspace`, built only for the selected formulation by `Workspace::new`), its part
//! of the state (`State::formulation`, filled from the relative state once), its prediction, its
//! Newton problem (`Stepper::Problem`, a `solver::newton::NewtonProblem`: unknowns, residual,
//! tangent) with its tangent policy, its projection and the write-back of its unknowns. The
//! sequence restore → valves → predict → Newton → project → end stops → commit, the
//! tangent restore and the iteration loop are the pipeline's (`crate::pipeline::step`, one
//! generic `formulation_step`, statically dispatched through the closed enum
//! `crate::pipeline::workspace::FormulationWorkspace`).
//!
//! The implementations: `penalty::Penalty` (000 §2.3, the reference),
//! `double_step::DoubleStep` (000 §2.2), `ali3p::Ali3p` (004 §2–3),
//! `i1al::I1al` (002), `kinematic_guidance::KinematicGuidance` (004 §4) and
//! `multirate::Multirate` (004 §4).

pub mod ali3p;
pub mod double_step;
pub mod i1al;
pub mod penalty;
pub mod z_only;

use crate::mechanics::buffers::Buffers;
use crate::model::Model;
use crate::solver::newton::{NewtonProblem, TangentPolicy};
use crate::state::State;
use crate::{StepError, StepReport};

/// One time-stepping formulation: its equations, which the one step
/// (`crate::pipeline::step::formulation_step`) runs through restore → valves → predict →
/// Newton → project → end stops → commit. A formulation holds no loop over iterations and no
/// restore or commit of its own: it supplies its unknowns and their prediction, its Newton
/// problem (residual and tangent, [`NewtonProblem`]), its projection, and the write-back of its
/// state.
pub trait Stepper {
    /// The formulation's own buffers (scratch, allocated once).
    type Workspace;

    /// What its equations report on failure (a [`StepError`], or more, turned into one by
    /// [`Stepper::error`]).
    type Failure;

    /// Its Newton problem over one step's unknowns, borrowing the step's data.
    type Problem<'a>: NewtonProblem<Error = Self::Failure>
    where
        Self: 'a,
        Self::Workspace: 'a;

    /// Allocates the formulation's buffers for `model`.
    fn workspace(model: &Model) -> Self::Workspace;

    /// Stage `initialize`: fills `st.formulation` from the relative state (z, ż, z̈, p) when it
    /// does not yet hold this formulation's state for `model` (the first step after
    /// `initialization::initialize`); otherwise does nothing. May allocate, once.
    fn initialize(model: &Model, st: &mut State, ws: &mut Buffers, own: &mut Self::Workspace);

    /// Whether the formulation can step `model` (an error when it cannot).
    fn available(_model: &Model, _own: &Self::Workspace) -> Result<(), StepError> {
        Ok(())
    }

    /// Stage `restore`: loads the tangent `matrix` (with its `side` data) of `State::tangent`
    /// into the formulation's tangent and factors it; `None` when the sizes do not fit,
    /// else whether the factorization succeeded. The policy around it (when, what is
    /// counted) is the pipeline's (`pipeline::step::restore_tangent`).
    fn load_tangent(
        ws: &mut Buffers,
        own: &mut Self::Workspace,
        matrix: &[f64],
        side: &[f64],
    ) -> Option<bool>;

    /// Stage `predict` (after the valves): history terms, the predictor of the unknowns and
    /// the multipliers λ⁰.
    fn predict(model: &Model, st: &State, ws: &mut Buffers, own: &mut Self::Workspace);

    /// The tangent policy of Newton attempt `attempt` (0, 1, …) from the same predictor;
    /// `None`: no further attempt.
    fn policy(model: &Model, attempt: u32) -> Option<TangentPolicy>;

    /// Back to the predictor (unknowns and multipliers) before attempt `attempt` > 0.
    fn restart(_ws: &mut Buffers, _own: &mut Self::Workspace) {}

    /// Its Newton problem at the current predictor or iterate.
    fn problem<'a>(
        model: &'a Model,
        st: &'a State,
        ws: &'a mut Buffers,
        own: &'a mut Self::Workspace,
    ) -> Self::Problem<'a>;

    /// Stage `project`: from the converged unknowns to the step's end point (the last
    /// multiplier update, projections, cylinder ports into `ws.ev.motion` and
    /// `ws.ev.cylinder_force` for the end stops and the actuator work).
    fn project(
        model: &Model,
        st: &State,
        ws: &mut Buffers,
        own: &mut Self::Workspace,
        iterations: u32,
    ) -> Result<(), Self::Failure>;

    /// After `failure` of Newton or projection: whether to predict anew (done here) and
    /// solve again.
    fn retry(
        _model: &Model,
        _st: &State,
        _ws: &mut Buffers,
        _own: &mut Self::Workspace,
        _failure: &Self::Failure,
    ) -> bool {
        false
    }

    /// The step error of `failure`.
    fn error(model: &Model, st: &State, failure: Self::Failure) -> StepError;

    /// Stage `commit`, its part: the write-back of its unknowns and rates into `st` (and the
    /// cavitation onsets into `report`), before the pipeline's spools, actuator work and clock.
    fn commit(
        model: &Model,
        st: &mut State,
        ws: &mut Buffers,
        own: &mut Self::Workspace,
        report: &mut StepReport,
    );

    /// Energies and constraint violation of the committed state into `report`.
    fn energies(
        model: &Model,
        st: &State,
        ws: &Buffers,
        own: &Self::Workspace,
        report: &mut StepReport,
    );
}
