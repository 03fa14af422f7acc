//! The elements: the contract every element implements (`element`), the one registry of them
//! (`component`), and their laws: hydraulic (`hydraulics`), seal friction (`friction`) and
//! mechanical (`end_stop`, `spring_damper`, `external_load`). Below them, what an element is
//! written in: typed ids, frames and circuit nodes (`ids`), input signals (`inputs`) and the
//! field checks of the specs (`field_check`); these import no law, so the state and the model
//! use them without importing one.

pub mod bucket_dig;
pub mod component;
pub mod element;
pub mod end_stop;
pub mod external_load;
pub(crate) mod field_check;
pub mod friction;
pub mod hydraulics;
pub mod ids;
pub mod inputs;
pub mod obb_contact;
pub mod spring_damper;
