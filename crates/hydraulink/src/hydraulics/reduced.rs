//! Reduced hydraulics by singular perturbation (002 Pub II, reference note 002b P-II): a small
//! volume marked algebraic takes its pressure from the flow balance instead of an ODE.
//! Work in progress (issue 3).
