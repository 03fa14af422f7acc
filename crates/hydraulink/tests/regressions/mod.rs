//! Regression tests, one file per issue: `issue_<n>_<slug>.rs`.

mod issue_10_small_steps;
