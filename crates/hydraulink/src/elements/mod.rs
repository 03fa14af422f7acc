//! The elements: the contract every element implements (`element`), the one registry of them
//! (`component`), and their laws: hydraulic (`hydraulics`), seal friction (`friction`) and
//! mechanical (`end_stop`, `spring_damper`, `external_load`).

pub mod component;
pub mod element;
pub mod end_stop;
pub mod external_load;
pub mod friction;
pub mod hydraulics;
pub mod spring_damper;
