//! `results.csv`: a header of output labels, then one line per output row, written as the rows
//! arrive.
//!
//! Numbers are written at full precision: the shortest decimal that reads back to the same `f64`,
//! in plain notation for 1e-4 ≤ |v| < 1e15 (`0.001`, `3500000`) and in exponent notation
//! otherwise (`1.5e-9`). `NaN` and `inf` are written as such. (The digits come from `zmij`, the
//! text is the same as Rust's `{}` / `{:e}` would give.)
//!
//! Rows are formatted into a buffer and written to the file in whole rows only: the file never
//! ends inside a row. When a write fails, the file is cut back to the last whole row.
//! [`CsvStream`] does the formatting and writing on a thread of its own.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::OutputError;

/// Bytes buffered before they are written to the file.
const BUFFER_BYTES: usize = 1 << 16;

/// Writes a CSV file row by row.
#[derive(Debug)]
pub struct CsvWriter {
    /// The file, for error messages.
    path: PathBuf,
    /// The file.
    file: File,
    /// Whole rows not yet written to the file.
    buffer: Vec<u8>,
    /// Bytes of whole rows written to the file.
    committed: u64,
    /// Per column of the previous row: its value's bits and where its text is in `buffer`.
    previous: Vec<(u64, usize, usize)>,
    /// Whether the texts of `previous` are still in `buffer` (not flushed since).
    previous_in_buffer: bool,
}

impl CsvWriter {
    /// Creates (or replaces) the file at `path` and writes the header `labels`.
    pub fn create(path: &Path, labels: &[String]) -> Result<Self, OutputError> {
        // an earlier run's file is removed rather than truncated (a link is written through)
        super::remove_earlier(path);
        let file = File::create(path).map_err(|e| OutputError::io(path, e))?;
        let mut writer = CsvWriter {
            path: path.to_path_buf(),
            file,
            buffer: Vec::with_capacity(BUFFER_BYTES + 4096),
            committed: 0,
            previous: Vec::with_capacity(labels.len()),
            previous_in_buffer: false,
        };
        for (i, label) in labels.iter().enumerate() {
            if i > 0 {
                writer.buffer.push(b',');
            }
            write_field(&mut writer.buffer, label);
        }
        writer.buffer.push(b'\n');
        writer.flush()?;
        Ok(writer)
    }

    /// Appends one row (written to the file once the buffer is full, or at [`CsvWriter::flush`]).
    ///
    /// A value with the same bits as in the previous row gets a copy of that row's text (a
    /// fifth of the values of a typical run: inputs, iteration counts, a machine at rest)
    /// instead of being formatted again.
    pub fn write_row(&mut self, row: &[f64]) -> Result<(), OutputError> {
        let mut floats = zmij::Buffer::new();
        let reuse = self.previous_in_buffer && self.previous.len() == row.len();
        self.previous.resize(row.len(), (0, 0, 0));
        for (i, (&value, previous)) in row.iter().zip(&mut self.previous).enumerate() {
            if i > 0 {
                self.buffer.push(b',');
            }
            let start = self.buffer.len();
            let bits = value.to_bits();
            if reuse && previous.0 == bits {
                self.buffer.extend_from_within(previous.1..previous.2);
            } else {
                push_f64(&mut self.buffer, &mut floats, value);
            }
            *previous = (bits, start, self.buffer.len());
        }
        self.previous_in_buffer = true;
        self.buffer.push(b'\n');
        if self.buffer.len() >= BUFFER_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows to the file. On failure the file is cut back to its last whole
    /// row and the buffered rows are dropped.
    pub fn flush(&mut self) -> Result<(), OutputError> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        self.previous_in_buffer = false;
        let written = self
            .file
            .write_all(&self.buffer)
            .and_then(|()| self.file.flush());
        match written {
            Ok(()) => {
                self.committed += self.buffer.len() as u64;
                self.buffer.clear();
                Ok(())
            }
            Err(e) => {
                self.buffer.clear();
                // best effort: the error to report is the write's
                let _ = self.file.set_len(self.committed);
                Err(OutputError::io(&self.path, e))
            }
        }
    }

    /// Bytes held in memory (the row buffer), bounded whatever the number of rows.
    pub fn retained_bytes(&self) -> usize {
        self.buffer.capacity()
    }
}

/// Rows per batch handed to the writer thread of a [`CsvStream`].
const STREAM_BATCH_ROWS: usize = 512;
/// Batches that may wait for the writer thread; the producer blocks beyond.
const STREAM_QUEUE: usize = 4;

/// A [`CsvWriter`] on its own thread: rows are collected into batches on the caller's thread
/// and formatted and written on the other, so that the simulation does not wait for the
/// formatting. At most 4 batches of 512 rows wait; the memory is bounded. The writer hands
/// every written batch back, emptied, and the next batch is collected in it: after the first
/// few batches no row buffer is allocated, freed or faulted in again.
#[derive(Debug)]
pub struct CsvStream {
    /// The file, for error messages.
    path: PathBuf,
    /// Values per row.
    n_columns: usize,
    /// Rows not yet handed over, row-major.
    batch: Vec<f64>,
    /// To the writer thread; `None` once closed.
    sender: Option<std::sync::mpsc::SyncSender<Vec<f64>>>,
    /// Written batches handed back by the writer thread, empty, for reuse.
    returned: std::sync::mpsc::Receiver<Vec<f64>>,
    /// The writer thread; returns the first write error.
    writer: Option<std::thread::JoinHandle<Result<(), OutputError>>>,
}

impl CsvStream {
    /// Creates (or truncates) the file at `path`, writes the header `labels` and starts the
    /// writer thread.
    pub fn create(path: &Path, labels: &[String]) -> Result<Self, OutputError> {
        let mut csv = CsvWriter::create(path, labels)?;
        let n_columns = labels.len();
        let (sender, receiver) = std::sync::mpsc::sync_channel::<Vec<f64>>(STREAM_QUEUE);
        // at most STREAM_QUEUE + 2 batches exist, so this channel never holds more
        let (give_back, returned) = std::sync::mpsc::channel::<Vec<f64>>();
        let writer = std::thread::Builder::new()
            .name("results.csv".into())
            .spawn(move || {
                for mut batch in receiver {
                    for row in batch.chunks_exact(n_columns.max(1)) {
                        csv.write_row(row)?;
                    }
                    batch.clear();
                    // the producer may be gone (finished): the batch is then dropped here
                    let _ = give_back.send(batch);
                }
                csv.flush()
            })
            .map_err(|e| OutputError::io(path, e))?;
        Ok(CsvStream {
            path: path.to_path_buf(),
            n_columns,
            batch: Vec::with_capacity(STREAM_BATCH_ROWS * n_columns),
            sender: Some(sender),
            returned,
            writer: Some(writer),
        })
    }

    /// Appends one row. A write error of an earlier batch is returned here (or at
    /// [`CsvStream::finish`]).
    pub fn write_row(&mut self, row: &[f64]) -> Result<(), OutputError> {
        self.batch.extend_from_slice(row);
        if self.batch.len() >= STREAM_BATCH_ROWS * self.n_columns {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Writes every row and waits for the file to be flushed; the file then ends with a whole
    /// row. Returns the first write error. Later rows are not written.
    pub fn finish(&mut self) -> Result<(), OutputError> {
        let handed = self.hand_over();
        self.sender = None;
        let written = match self.writer.take() {
            Some(writer) => writer.join().unwrap_or_else(|_| {
                Err(OutputError::io(
                    &self.path,
                    std::io::Error::other("the writer thread panicked"),
                ))
            }),
            None => Ok(()),
        };
        // the writer's error is the cause of a failed hand-over
        written.and(handed)
    }

    /// Bytes held in memory for rows on this thread and in the queue, at most: bounded
    /// whatever the number of rows.
    pub fn retained_bytes(&self) -> usize {
        (STREAM_QUEUE + 2) * STREAM_BATCH_ROWS * self.n_columns * std::mem::size_of::<f64>()
            + BUFFER_BYTES
    }

    /// Hands the collected rows to the writer thread now (rather than when the batch is full).
    /// A write error of an earlier batch is returned here (or at [`CsvStream::finish`]).
    pub fn hand_over(&mut self) -> Result<(), OutputError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.batch);
        let sent = self.sender.as_ref().map(|s| s.send(batch));
        match sent {
            Some(Ok(())) => {
                // a batch the writer is done with, or (while the queue fills) a new one
                self.batch = self
                    .returned
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(STREAM_BATCH_ROWS * self.n_columns));
                Ok(())
            }
            // the writer stopped: at a write error, which finish() returns
            _ => {
                self.sender = None;
                match self.writer.take().map(|w| w.join()) {
                    Some(Ok(Err(e))) => Err(e),
                    _ => Err(OutputError::io(
                        &self.path,
                        std::io::Error::other("the writer thread stopped"),
                    )),
                }
            }
        }
    }
}

impl Drop for CsvStream {
    fn drop(&mut self) {
        // a recorder dropped without finish(): still end the file with whole rows
        let _ = self.finish();
    }
}

/// Appends a text field, quoted (RFC 4180) when it holds a comma, a quote or a line break.
fn write_field(out: &mut Vec<u8>, text: &str) {
    if text.contains([',', '"', '\n', '\r']) {
        out.push(b'"');
        out.extend_from_slice(text.replace('"', "\"\"").as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

/// Appends the shortest decimal that reads back to `value` (see the module doc).
fn push_f64(out: &mut Vec<u8>, floats: &mut zmij::Buffer, value: f64) {
    if !value.is_finite() {
        let text: &[u8] = if value.is_nan() {
            b"NaN"
        } else if value > 0.0 {
            b"inf"
        } else {
            b"-inf"
        };
        out.extend_from_slice(text);
        return;
    }
    if value == 0.0 {
        out.extend_from_slice(if value.is_sign_negative() {
            b"-0"
        } else {
            b"0"
        });
        return;
    }
    let text = floats.format_finite(value).as_bytes();
    // Fast paths, where the formatter's notation is already ours: plain in [1e-4, 1e15) but
    // for a trailing `.0`, exponent below 1e-5 (`1.5e-9`), exponent with a `+` from 1e16 on.
    // (zmij writes plain for 1e-5 ≤ |v| < 1e16; `same_text_as_std_formatting` checks it.)
    let a = value.abs();
    if (1e-4..1e15).contains(&a) {
        out.extend_from_slice(text.strip_suffix(b".0").unwrap_or(text));
        return;
    }
    // (the exponent of |v| < 1e-5 is e-6 … e-324: its `e` is among the last 5 bytes, followed by
    // a `-`; a byte loop, as `contains` calls memchr, a tenth of a row's formatting time)
    if a < 1e-5 {
        let tail = &text[text.len().saturating_sub(5)..];
        if let Some(at) = tail.iter().position(|&b| b == b'e') {
            if tail.get(at + 1) == Some(&b'-') {
                out.extend_from_slice(text);
                return;
            }
        }
    }
    if a >= 1e16 {
        if let Some(at) = text.windows(2).position(|w| w == b"e+") {
            out.extend_from_slice(&text[..=at]);
            out.extend_from_slice(&text[at + 2..]);
            return;
        }
    }
    // Otherwise split the shortest representation into its significant digits d1 d2 … dn and
    // the exponent e of d1 (value = ±d1.d2…dn × 10^e), whatever notation the formatter chose.
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (mantissa, exp10) = match text.iter().position(|&b| b == b'e' || b == b'E') {
        Some(at) => (&text[..at], parse_exponent(&text[at + 1..])),
        None => (text, 0),
    };
    let mut digits = [0u8; 40];
    let mut n = 0;
    let mut point = None; // digits before the decimal point
    let mut leading = true;
    let mut leading_zeros_after_point = 0i32;
    for &b in mantissa {
        if b == b'.' {
            point = Some(n);
            continue;
        }
        if leading && b == b'0' {
            if point.is_some() {
                leading_zeros_after_point += 1;
            }
            continue;
        }
        leading = false;
        if n < digits.len() {
            digits[n] = b;
            n += 1;
        }
    }
    let int_digits = point.unwrap_or(n) as i32;
    // with no non-zero digit before the point, d1 sits after the leading zeros
    let e = if int_digits > 0 {
        int_digits - 1 + exp10
    } else {
        -1 - leading_zeros_after_point + exp10
    };
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    let digits = &digits[..n];
    if negative {
        out.push(b'-');
    }
    if (-4..15).contains(&e) {
        // plain: 1e-4 ≤ |v| < 1e15
        if e < 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-e - 1) as usize));
            out.extend_from_slice(digits);
        } else {
            let before = e as usize + 1;
            if digits.len() <= before {
                out.extend_from_slice(digits);
                out.extend(std::iter::repeat_n(b'0', before - digits.len()));
            } else {
                out.extend_from_slice(&digits[..before]);
                out.push(b'.');
                out.extend_from_slice(&digits[before..]);
            }
        }
    } else {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        let _ = write!(out, "{e}");
    }
}

/// The integer of an exponent's text (`-9`, `+20`, `20`).
fn parse_exponent(text: &[u8]) -> i32 {
    let (sign, digits) = match text.split_first() {
        Some((b'-', rest)) => (-1, rest),
        Some((b'+', rest)) => (1, rest),
        _ => (1, text),
    };
    sign * digits
        .iter()
        .fold(0i32, |acc, &b| acc * 10 + i32::from(b.wrapping_sub(b'0')))
}

/// Writes `value` as [`CsvWriter`] does, to any writer.
#[cfg(test)]
fn write_f64(out: &mut impl Write, value: f64) -> std::io::Result<()> {
    let mut text = Vec::with_capacity(32);
    push_f64(&mut text, &mut zmij::Buffer::new(), value);
    out.write_all(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn formatted(value: f64) -> String {
        let mut out = Vec::new();
        write_f64(&mut out, value).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The text of the formatter before `zmij`: Rust's own shortest round-trip output.
    fn std_formatted(value: f64) -> String {
        if value == 0.0 || (1e-4..1e15).contains(&value.abs()) {
            format!("{value}")
        } else {
            format!("{value:e}")
        }
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

    /// The fast path writes exactly what `{}` / `{:e}` wrote, over every magnitude and at the
    /// boundaries of the two notations.
    #[test]
    fn same_text_as_std_formatting() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut values = vec![
            1e-4,
            9.999999999999999e-5,
            1e15,
            999999999999999.9,
            -0.0,
            f64::MAX,
            -f64::MIN_POSITIVE,
            5e-324,
            123456789012345.6,
            0.00012345,
            f64::NEG_INFINITY,
        ];
        for _ in 0..200_000 {
            // xorshift: random bit patterns cover every exponent
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(f64::from_bits(x));
            let decimal = (x % 2_000_000) as f64 * 10f64.powi((x >> 40) as i32 % 40 - 20);
            values.push(decimal);
        }
        let mut same = 0;
        let n = values.len();
        for v in values.into_iter().filter(|v| !v.is_nan()) {
            let (fast, std) = (formatted(v), std_formatted(v));
            if fast == std {
                same += 1;
                continue;
            }
            // Both are shortest: at 17 digits they may pick a different last digit of the
            // interval that reads back to v. Same notation, same length, same value.
            assert_eq!(fast.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{v:?}");
            assert_eq!(fast.len(), std.len(), "{fast} vs {std}");
            assert_eq!(fast.contains('e'), std.contains('e'), "{fast} vs {std}");
        }
        assert!(same * 1000 > n * 999, "{same} of {n} identical");
    }

    /// Rows with values repeated from the row before, across several buffer flushes, read
    /// the same as every value formatted on its own.
    #[test]
    fn repeated_values_are_written_as_formatted() {
        let path = std::env::temp_dir().join(format!(
            "hydraulink-csv-{}-repeated.csv",
            std::process::id()
        ));
        let labels: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let mut csv = CsvWriter::create(&path, &labels).unwrap();
        let mut expected = labels.join(",") + "\n";
        let specials = [0.0, -0.0, f64::NAN, 1.5e-9, 2.5e20, -0.1];
        for n in 0..20_000u32 {
            let row = [
                n as f64 * 1e-3,
                specials[(n / 7) as usize % specials.len()],
                if n % 3 == 0 { 1.0 / 3.0 } else { -1.0 / 3.0 },
                (n / 500) as f64 * 0.1,
            ];
            csv.write_row(&row).unwrap();
            let texts: Vec<String> = row.iter().map(|&v| formatted(v)).collect();
            expected += &(texts.join(",") + "\n");
        }
        csv.flush().unwrap();
        assert!(expected.len() > 4 * BUFFER_BYTES);
        let written = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(
            written == expected,
            "the file differs from the values formatted one by one"
        );
    }

    #[test]
    fn labels_with_commas_or_quotes_are_quoted() {
        let mut out = Vec::new();
        for label in ["V1.p", "a,b", "say \"hi\""] {
            write_field(&mut out, label);
            out.push(b'|');
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "V1.p|\"a,b\"|\"say \"\"hi\"\"\"|"
        );
    }
}
