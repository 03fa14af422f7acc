//! Contact (003 Publications IV–V): oriented bounding boxes collided by the separating-axis
//! test ([`obb`]) and the penalty contact element of a body's box against a static obstacle
//! ([`obb_contact`]). Derivation: `docs/theory/12_contact.md`.

pub mod obb;
pub mod obb_contact;
