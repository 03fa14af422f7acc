//! Global ALI3-P in natural coordinates with the unified hydraulic tangent (004 eqs. 5–26).
//! Work in progress (issue 3).

use crate::model::Model;
use crate::state::State;
use crate::workspace::Workspace;
use crate::{StepError, StepReport};

/// One step of this formulation.
pub fn step(model: &Model, st: &mut State, ws: &mut Workspace) -> Result<StepReport, StepError> {
    let _ = (st, ws);
    Err(StepError::Unavailable {
        formulation: model.solver.formulation.name().to_string(),
    })
}
