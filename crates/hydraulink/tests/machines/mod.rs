//! The shipped machines of issue 11: acceptance tests of `models/crane1.toml`,
//! `models/crane2.toml` (002 Publication III) and `models/loader.toml` (003 Publications IV–V).

mod cranes;
mod loader;
