//! Contact (003 Publications IV–V): oriented bounding boxes collided by the separating-axis
//! test ([`obb`]) and the hit counter of a contact element ([`hits`]), below the elements; the
//! penalty contact element of a body's box against static obstacles is
//! `crate::elements::obb_contact`. Derivation: `docs/theory/12_contact.md`.

pub mod hits;
pub mod obb;
