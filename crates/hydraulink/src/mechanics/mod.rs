//! Multibody mechanics: tree kinematics in relative coordinates, loop-closure constraints,
//! energies, and the semi-recursive formulation (000 §2).

pub mod advance;
pub mod assembly;
pub mod buffers;
pub mod constraints;
pub mod energy;
pub mod global;
pub mod kinematics;
pub mod loop_closure;
pub mod nonholonomic;
pub mod ports;
pub mod semirecursive;
pub mod working_range;
