//! Kinematic guidance (004 §4): the actuator length follows a prescribed motion through a
//! rheonomic constraint s − s(t) = 0; no hydraulic dynamics. Work in progress (issue 3).

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
