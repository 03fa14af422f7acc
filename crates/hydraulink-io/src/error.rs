//! [`LoadError`]: a model file that cannot be read, parsed or compiled, with its location.

use std::fmt;

use thiserror::Error;

/// What kind of failure a [`LoadError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadErrorKind {
    /// The file could not be read.
    Io,
    /// The text is not valid TOML.
    Syntax,
    /// Valid TOML that does not describe a model: unknown key, missing field, wrong type.
    Schema,
    /// A well-formed model that is invalid (a `hydraulink::ModelError` from validation or
    /// compilation).
    Model,
}

/// A model file that cannot be loaded.
///
/// Displayed as `{file}:{line}:{column}: {element}: field `{path}`: {message}`; the parts that
/// are not known are left out (`{file}: {message}` for an unreadable file).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct LoadError {
    /// What failed.
    pub kind: LoadErrorKind,
    /// File name as given by the caller (a path, or a label such as `<stdin>`).
    pub file: String,
    /// 1-based line of the defect, when known.
    pub line: Option<u32>,
    /// 1-based column (in characters) of the defect, when known.
    pub column: Option<u32>,
    /// The element, e.g. `body 'body2'`, when known.
    pub element: Option<String>,
    /// Field path in the model, e.g. `bodies[1].mass_kg`, when known.
    pub path: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl LoadError {
    /// An error with only a file and a message.
    pub fn new(kind: LoadErrorKind, file: &str, message: impl Into<String>) -> Self {
        LoadError {
            kind,
            file: file.to_string(),
            line: None,
            column: None,
            element: None,
            path: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if let Some(element) = &self.element {
            write!(f, ": {element}")?;
        }
        if let Some(path) = self.path.as_deref().filter(|p| !p.is_empty()) {
            write!(f, ": field `{path}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_full() {
        let e = LoadError {
            kind: LoadErrorKind::Model,
            file: "m.toml".into(),
            line: Some(33),
            column: Some(1),
            element: Some("body 'body2'".into()),
            path: Some("bodies[1].mass_kg".into()),
            message: "must be greater than 0, got 0.0".into(),
        };
        assert_eq!(
            e.to_string(),
            "m.toml:33:1: body 'body2': field `bodies[1].mass_kg`: must be greater than 0, got 0.0"
        );
    }

    #[test]
    fn display_degrades() {
        let mut e = LoadError::new(LoadErrorKind::Io, "m.toml", "No such file");
        assert_eq!(e.to_string(), "m.toml: No such file");
        e.line = Some(4);
        assert_eq!(e.to_string(), "m.toml:4: No such file");
        e.element = Some("solver".into());
        e.path = Some(String::new());
        assert_eq!(e.to_string(), "m.toml:4: solver: No such file");
        e.line = None;
        e.column = Some(3);
        assert_eq!(e.to_string(), "m.toml: solver: No such file");
    }
}
