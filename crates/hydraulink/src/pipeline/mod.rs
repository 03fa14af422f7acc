//! The step pipeline and what it runs on: the `Simulation` front door, the one `step`
//! (sample inputs → formulation step → element energies → commit), the stages every formulation
//! shares (`advance`, `element_energy`), the evaluation of the elements at an iterate
//! (`assembly`), the buffers allocated once (`buffers`, `workspace`), and the consistent initial
//! state (`initialization`).

pub mod advance;
pub mod assembly;
pub mod buffers;
pub mod element_energy;
pub mod initialization;
pub mod simulation;
pub mod step;
pub mod step_control;
pub mod subsystem;
pub mod workspace;
pub mod world;
