//! Contact (003 Publications IV–V): oriented bounding boxes collided by the separating-axis
//! test ([`obb`]), the penalty contact element of a body's box against static obstacles
//! ([`obb_contact`]) and its hit counter ([`hits`]). Derivation: `docs/theory/12_contact.md`.

pub mod hits;
pub mod obb;
pub mod obb_contact;
