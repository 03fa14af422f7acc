//! Reading TOML model files into a `ModelSpec`, a checked spec, or a compiled `Model`, with every
//! error located by file, line and column.
//!
//! Three stages, each reporting a [`LoadError`]:
//! 1. **TOML** ([`LoadErrorKind::Syntax`]): the text is parsed once, keeping spans.
//! 2. **Schema** ([`LoadErrorKind::Schema`]): serde deserializes the spec (unknown keys, missing
//!    fields, wrong types). The error's span is turned back into a model path and its element.
//! 3. **Model** ([`LoadErrorKind::Model`]): `hydraulink::pipeline::validate` (and, for
//!    [`compile_model`], `hydraulink::compile`) report a `ModelError` with a path, which
//!    [`locate_model_error`] maps to the line of that field.

use std::path::Path;

use hydraulink::error::ModelError;
use hydraulink::model::spec::ModelSpec;
use serde::Deserialize;
use toml::de::DeTable;

use crate::error::{LoadError, LoadErrorKind};
use crate::locate::{element_of, format_path, line_column, locate_path, path_at, Segment};

/// The built-in default model (the four-bar of paper 000 §5.1), used when no file is given.
pub const DEFAULT_MODEL: &str = include_str!("../../../models/fourbar.toml");

/// The name under which [`DEFAULT_MODEL`] is reported in errors and outputs.
pub const DEFAULT_MODEL_NAME: &str = "models/fourbar.toml";

/// Parses a model from TOML `text`; `file` names it in errors. Does not validate the model.
pub fn parse_model(text: &str, file: &str) -> Result<ModelSpec, LoadError> {
    let doc = DeTable::parse(text).map_err(|error| {
        // Recover what can be parsed, to name the element the syntax error is in.
        let (recovered, _) = DeTable::parse_recoverable(text);
        toml_error(text, file, LoadErrorKind::Syntax, &error, &recovered)
    })?;
    ModelSpec::deserialize(toml::de::Deserializer::from(doc.clone()))
        .map_err(|error| toml_error(text, file, LoadErrorKind::Schema, &error, &doc))
}

/// Parses and validates a model (`hydraulink::pipeline::validate`): every check that needs only
/// the spec. Returns the spec.
pub fn check_model(text: &str, file: &str) -> Result<ModelSpec, LoadError> {
    let spec = parse_model(text, file)?;
    hydraulink::pipeline::validate::validate(&spec)
        .map_err(|error| locate_model_error(text, file, &error))?;
    Ok(spec)
}

/// Parses and compiles a model (compilation validates it first).
pub fn compile_model(text: &str, file: &str) -> Result<hydraulink::Model, LoadError> {
    let spec = parse_model(text, file)?;
    hydraulink::compile(&spec).map_err(|error| locate_model_error(text, file, &error))
}

/// Reads a model file as text.
pub fn read_model_file(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|error| {
        LoadError::new(
            LoadErrorKind::Io,
            &path.display().to_string(),
            format!("cannot read model file: {error}"),
        )
    })
}

/// Reads and parses a model file (not validated).
pub fn load_model(path: &Path) -> Result<ModelSpec, LoadError> {
    let text = read_model_file(path)?;
    parse_model(&text, &path.display().to_string())
}

/// Turns a `ModelError` about the model in `text` into a [`LoadError`] at the line and column
/// of its field (or of the nearest enclosing element present in the text).
pub fn locate_model_error(text: &str, file: &str, error: &ModelError) -> LoadError {
    let location = locate_path(text, &error.path);
    LoadError {
        kind: LoadErrorKind::Model,
        file: file.to_string(),
        line: location.and_then(|(line, _)| u32::try_from(line).ok()),
        column: location.and_then(|(_, column)| u32::try_from(column).ok()),
        element: Some(error.element.clone()),
        path: Some(error.path.clone()),
        message: error.message.clone(),
    }
}

/// [`locate_model_error`], but an error in a field that a `--set` override wrote (the field
/// itself or one below it, e.g. `friction.static_n` after `friction.type=lugre`) names the
/// last such override instead of a line of the file.
pub fn locate_model_error_with_overrides(
    text: &str,
    file: &str,
    error: &ModelError,
    applied: &[crate::overrides::Applied],
) -> LoadError {
    let below = |p: &str| {
        error.path == p
            || error.path.starts_with(&format!("{p}."))
            || error.path.starts_with(&format!("{p}["))
    };
    match applied.iter().rev().find(|a| below(&a.path)) {
        Some(a) => LoadError {
            kind: LoadErrorKind::Model,
            file: format!("--set {}", a.text),
            line: None,
            column: None,
            element: Some(error.element.clone()),
            path: Some(error.path.clone()),
            message: error.message.clone(),
        },
        None => locate_model_error(text, file, error),
    }
}

/// A `toml` parse or deserialization error, located in `text` and attributed to a model path
/// and element through `doc` (the parsed, or partly recovered, document).
pub(crate) fn toml_error(
    text: &str,
    file: &str,
    kind: LoadErrorKind,
    error: &toml::de::Error,
    doc: &toml::Spanned<DeTable<'_>>,
) -> LoadError {
    let message = explain(error.message().trim());
    let Some(span) = error.span() else {
        return LoadError::new(kind, file, message);
    };
    let (line, column) = line_column(text, span.start);
    let mut path = path_at(doc, text, span);
    let element = element_of(doc.get_ref(), &path);
    // serde reports a missing field at the table that lacks it: name the field itself.
    if let Some(field) = missing_field(&message) {
        path.push(Segment::Key(field.to_string()));
    }
    let path = format_path(&path);
    LoadError {
        kind,
        file: file.to_string(),
        line: u32::try_from(line).ok(),
        column: u32::try_from(column).ok(),
        element: Some(element),
        path: (!path.is_empty()).then_some(path),
        message,
    }
}

/// serde's message, reworded where it names an internal type.
fn explain(message: &str) -> String {
    if message.contains("untagged enum Values") {
        "invalid initial value: expected a number or a list of numbers, one per joint coordinate"
            .to_string()
    } else {
        message.to_string()
    }
}

/// `x` from serde's "missing field `x`".
fn missing_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split('`').next().filter(|field| !field.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_model_checks() {
        let spec = check_model(DEFAULT_MODEL, DEFAULT_MODEL_NAME)
            .unwrap_or_else(|e| panic!("default model: {e}"));
        assert_eq!(spec.name, "fourbar");
        assert_eq!(spec.bodies.len(), 3);
    }

    #[test]
    fn missing_field_names() {
        assert_eq!(missing_field("missing field `mass_kg`"), Some("mass_kg"));
        assert_eq!(missing_field("unknown field `x`"), None);
        assert_eq!(missing_field("missing field ``"), None);
    }

    #[test]
    fn unreadable_file() {
        let e = load_model(Path::new("/nonexistent/model.toml"))
            .err()
            .unwrap_or_else(|| panic!("loading a missing file succeeded"));
        assert_eq!(e.kind, LoadErrorKind::Io);
        assert_eq!(e.line, None);
        assert!(
            e.to_string()
                .starts_with("/nonexistent/model.toml: cannot read model file"),
            "{e}"
        );
    }

    #[test]
    fn root_level_missing_field() {
        let e = parse_model("description = \"x\"\n", "m.toml")
            .err()
            .unwrap_or_else(|| panic!("a model without name parsed"));
        assert_eq!(e.kind, LoadErrorKind::Schema);
        assert_eq!(e.element.as_deref(), Some("model"));
        assert_eq!(e.path.as_deref(), Some("name"));
    }

    #[test]
    fn error_in_empty_text() {
        let e = parse_model("", "m.toml")
            .err()
            .unwrap_or_else(|| panic!("empty text parsed"));
        assert_eq!(e.kind, LoadErrorKind::Schema);
        assert_eq!(e.path.as_deref(), Some("name"));
    }
}
