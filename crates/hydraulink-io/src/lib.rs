//! File formats for hydraulink: TOML model files with line-numbered errors, and result writers.
//!
//! # Model files
//! A model file is the TOML form of `hydraulink::model::spec::ModelSpec` (all SI; unknown keys
//! are errors). [`parse_model`] reads the text into a spec, [`check_model`] also validates it,
//! and [`compile_model`] compiles it into a `hydraulink::Model`. Every failure is a
//! [`LoadError`] that names the file, line, column, element and field:
//!
//! ```text
//! models/fourbar.toml:33:1: body 'body2': field `bodies[1].mass_kg`: must be greater than 0, got 0.0
//! ```
//!
//! Errors found later, against a compiled model, are mapped back with [`line_of_path`] (any
//! model path) and [`locate_init_error`] (a loop that cannot close).
#![warn(missing_docs)]

mod error;
mod locate;
mod model_file;
pub mod output;
mod overrides;
pub mod scene;
pub mod schema;

pub use error::{LoadError, LoadErrorKind};
pub use locate::{line_of_path, locate_init_error};
pub use model_file::{
    check_model, compile_model, load_model, locate_model_error, locate_model_error_with_overrides,
    parse_model, read_model_file, DEFAULT_MODEL, DEFAULT_MODEL_NAME,
};
pub use overrides::{
    apply_overrides, apply_overrides_traced, variant_choices, variant_overrides, Applied,
    OverrideError,
};
pub use scene::{
    add_scene, load_scene, parse_scene, scene_path, with_scene, Scene, SceneChoice, SceneSpec,
};
