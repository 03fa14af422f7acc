//! `results.csv`: a header of output labels, then one line per output row, written as the rows
//! arrive through a buffer that is flushed at the end (also when the run fails).
//!
//! Numbers are written at full precision: the shortest decimal that reads back to the same `f64`,
//! in plain notation for 1e-4 ≤ |v| < 1e15 (`0.001`, `3500000`) and in exponent notation
//! otherwise (`1.5e-9`). `NaN` and `inf` are written as such.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::OutputError;

/// Writes a CSV file row by row.
#[derive(Debug)]
pub struct CsvWriter {
    /// The file, for error messages.
    path: PathBuf,
    /// The buffered file.
    out: BufWriter<File>,
}

impl CsvWriter {
    /// Creates (or truncates) the file at `path` and writes the header `labels`.
    pub fn create(path: &Path, labels: &[String]) -> Result<Self, OutputError> {
        let file = File::create(path).map_err(|e| OutputError::io(path, e))?;
        let mut writer = CsvWriter {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
        };
        writer
            .write_header(labels)
            .map_err(|e| OutputError::io(path, e))?;
        Ok(writer)
    }

    /// Appends one row.
    pub fn write_row(&mut self, row: &[f64]) -> Result<(), OutputError> {
        self.write_values(row)
            .map_err(|e| OutputError::io(&self.path, e))
    }

    /// Writes the buffered rows to the file.
    pub fn flush(&mut self) -> Result<(), OutputError> {
        self.out.flush().map_err(|e| OutputError::io(&self.path, e))
    }

    fn write_header(&mut self, labels: &[String]) -> io::Result<()> {
        for (i, label) in labels.iter().enumerate() {
            if i > 0 {
                self.out.write_all(b",")?;
            }
            write_field(&mut self.out, label)?;
        }
        self.out.write_all(b"\n")
    }

    fn write_values(&mut self, row: &[f64]) -> io::Result<()> {
        for (i, &value) in row.iter().enumerate() {
            if i > 0 {
                self.out.write_all(b",")?;
            }
            write_f64(&mut self.out, value)?;
        }
        self.out.write_all(b"\n")
    }
}

/// Writes a text field, quoted (RFC 4180) when it holds a comma, a quote or a line break.
fn write_field(out: &mut impl Write, text: &str) -> io::Result<()> {
    if text.contains([',', '"', '\n', '\r']) {
        write!(out, "\"{}\"", text.replace('"', "\"\""))
    } else {
        out.write_all(text.as_bytes())
    }
}

/// Writes the shortest decimal that reads back to `value` (see the module doc).
fn write_f64(out: &mut impl Write, value: f64) -> io::Result<()> {
    if value == 0.0 || (1e-4..1e15).contains(&value.abs()) {
        write!(out, "{value}")
    } else {
        write!(out, "{value:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn formatted(value: f64) -> String {
        let mut out = Vec::new();
        write_f64(&mut out, value).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_are_short_and_round_trip() {
        let cases = [
            (0.0, "0"),
            (1e-3, "0.001"),
            (3.5e6, "3500000"),
            (-0.1, "-0.1"),
            (1.5e-9, "1.5e-9"),
            (2.5e20, "2.5e20"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
        ];
        for (value, text) in cases {
            assert_eq!(formatted(value), text);
        }
        for value in [
            0.1 + 0.2,
            std::f64::consts::PI * 1e-7,
            1.0 / 3.0 * 1e17,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(formatted(value).parse::<f64>().unwrap(), value);
        }
    }

    #[test]
    fn labels_with_commas_or_quotes_are_quoted() {
        let mut out = Vec::new();
        for label in ["V1.p", "a,b", "say \"hi\""] {
            write_field(&mut out, label).unwrap();
            out.push(b'|');
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "V1.p|\"a,b\"|\"say \"\"hi\"\"\"|"
        );
    }
}
