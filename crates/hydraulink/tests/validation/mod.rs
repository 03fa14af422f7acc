//! Paper validation cases.
mod diagnostics;
mod paper_000_fourbar;
mod paper_000_quickreturn;
mod tangent;
