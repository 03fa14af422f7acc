//! The shipped machines of issue 11: acceptance tests of `models/crane1.toml`,
//! `models/crane2.toml` (002 Publication III), `models/loader.toml` (003 Publications IV–V) and
//! `models/excavator.toml` (003 Publication VI).

mod cranes;
mod excavator;
mod loader;
mod tutorial;
mod worksite;
