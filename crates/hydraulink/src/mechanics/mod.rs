//! Multibody mechanics: tree kinematics in relative coordinates, loop-closure constraints,
//! energies, and the semi-recursive formulation (000 §2).

pub mod constraints;
pub mod end_stop;
pub mod energy;
pub mod external_load;
pub mod global;
pub mod kinematic_guidance;
pub mod kinematics;
pub mod nonholonomic;
pub mod ports;
pub mod semirecursive;
pub mod spring_damper;
pub mod working_range;
