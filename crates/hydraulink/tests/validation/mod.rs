//! Paper validation cases.
mod paper_000_fourbar;
mod paper_000_quickreturn;
mod tangent;
