//! Paper validation cases.
mod diagnostics;
mod paper_000_fourbar;
mod paper_000_quickreturn;
mod paper_002_rahikainen;
mod paper_003_friction;
mod paper_004_rod;
mod tangent;
