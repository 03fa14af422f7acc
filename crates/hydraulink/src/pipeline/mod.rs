//! The pipeline from a spec to steps, in order: validate the spec (`validate`, with the
//! assembled pose mapped back by `pose`), compile it into the immutable `Model` (`compile`),
//! the consistent initial state (`initialization`), the buffers allocated once (`buffers`,
//! `workspace`), and the one `step` (sample inputs → formulation step → element energies →
//! world → commit) with the stages every formulation shares (`advance`, `element_energy`,
//! `world`), the evaluation of the elements at an iterate (`assembly`), the adaptive step
//! control (`step_control`), the subsystems (`subsystem`) and the `Simulation` front door.
//! Compile sits here, above the mechanics, because it derives the cut-joint equations and the
//! natural-coordinate model through the kinematics.

pub mod compile;
pub mod element_energy;
pub mod initialization;
pub mod pose;
pub mod simulation;
pub mod step;
pub mod step_control;
pub mod subsystem;
pub mod validate;
pub mod workspace;
pub mod world;

pub use compile::compile;
