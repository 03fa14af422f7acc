//! Time integrators other than the monolithic trapezoidal rule of the penalty formulation.

pub mod multirate;
pub mod newton;
pub mod step_control;
pub mod tolerances;
