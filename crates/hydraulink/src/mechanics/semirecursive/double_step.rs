//! Double-step semi-recursive formulation with coordinate partitioning (000 §2.2, reference note
//! 000-A.2). Work in progress (issue 3): not yet available.

use crate::model::Model;
use crate::state::State;
use crate::workspace::Workspace;
use crate::{StepError, StepReport};

/// Buffers of the double-step formulation (allocated only when it is selected).
#[derive(Debug, Clone, Default)]
pub struct DoubleStepWorkspace {}

impl DoubleStepWorkspace {
    /// Buffers for `model`.
    pub fn new(model: &Model) -> Self {
        let _ = model;
        DoubleStepWorkspace {}
    }
}

/// One step of this formulation.
pub fn step(model: &Model, st: &mut State, ws: &mut Workspace) -> Result<StepReport, StepError> {
    let _ = (st, ws);
    Err(StepError::Unavailable {
        formulation: model.solver.formulation.name().to_string(),
    })
}
