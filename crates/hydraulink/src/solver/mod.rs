//! The solvers every formulation shares: the one Newton (`newton`), its convergence
//! tolerances, dense and sparse linear algebra (`linalg`), and the scalar type `Real` the element
//! laws are written in (real numbers or dual numbers for exact tangents).

pub mod linalg;
pub mod newton;
pub mod real;
pub mod tolerances;
