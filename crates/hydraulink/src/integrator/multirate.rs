//! Multi-rate co-integration (004 §4): the hydraulics is integrated with its own smaller step
//! inside each mechanical step. Work in progress (issue 3).

use crate::model::Model;
use crate::state::State;
use crate::workspace::Workspace;
use crate::{StepError, StepReport};

/// Buffers of the multi-rate integrator (allocated only when it is selected).
#[derive(Debug, Clone, Default)]
pub struct MultirateWorkspace {}

impl MultirateWorkspace {
    /// Buffers for `model`.
    pub fn new(model: &Model) -> Self {
        let _ = model;
        MultirateWorkspace {}
    }
}

/// One step of this formulation.
pub fn step(model: &Model, st: &mut State, ws: &mut Workspace) -> Result<StepReport, StepError> {
    let _ = (st, ws);
    Err(StepError::Unavailable {
        formulation: model.solver.formulation.name().to_string(),
    })
}
