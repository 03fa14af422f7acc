//! Record and replay: every input change the engine applies, with the engine step before which
//! it took effect, saved as a small CSV text file.
//!
//! The file (`hydraulink realtime --record FILE`, read back by `--replay FILE`):
//!
//! ```text
//! # hydraulink-rt recording 1
//! # model: excavator
//! # step_s: 0.001
//! step,event,input,value
//! 1200,set,U_boom,-5
//! 1450,release,U_boom,
//! 3000,reset,,
//! ```
//!
//! * `step`: the engine's step count (from 0, never rewound by a reset) at which the change
//!   was applied, before that step ran.
//! * `event`: `set` (the input holds `value` from then on), `release` (the model's signal
//!   drives it again) or `reset` (the initial state restored).
//! * `value`: the shortest decimal that reads back to the same `f64`, so a replay applies
//!   bit-identical values and reproduces the trajectory bit for bit.
//!
//! Lines starting with `#` are comments; the `model` and `step_s` lines are checked on replay.

use std::fmt::Write as _;

use thiserror::Error;

/// One recorded change.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Input `input` holds `value` [unit of the input] from this step on.
    Set {
        /// The input's name.
        input: String,
        /// Its value [unit of the input].
        value: f64,
    },
    /// Input `input` follows its signal again.
    Release {
        /// The input's name.
        input: String,
    },
    /// The initial state is restored.
    Reset,
}

/// A change and the engine step before which it was applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Engine step count (from 0) at which the change was applied.
    pub step: u64,
    /// The change.
    pub action: Action,
}

/// The input changes of a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Recording {
    /// The model's name.
    pub model: String,
    /// Physics step Δt [s].
    pub step_s: f64,
    /// The changes, in the order applied (steps non-decreasing).
    pub events: Vec<Event>,
}

/// A recording file that cannot be read.
#[derive(Debug, Error, PartialEq)]
pub enum RecordingError {
    /// A malformed line.
    #[error("recording line {line}: {message}")]
    Line {
        /// Line number, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A name that the CSV cannot hold.
    #[error("input name {name:?} cannot be written to a recording (comma, quote or line break)")]
    Name {
        /// The name.
        name: String,
    },
}

const MAGIC: &str = "# hydraulink-rt recording 1";
const HEADER: &str = "step,event,input,value";

fn check_name(name: &str) -> Result<(), RecordingError> {
    if name.contains([',', '"', '\n', '\r']) {
        return Err(RecordingError::Name {
            name: name.to_string(),
        });
    }
    Ok(())
}

impl Recording {
    /// The file's text.
    pub fn to_text(&self) -> Result<String, RecordingError> {
        let mut s = String::new();
        // writing to a String cannot fail
        let _ = writeln!(s, "{MAGIC}");
        check_name(&self.model)?;
        let _ = writeln!(s, "# model: {}", self.model);
        let _ = writeln!(s, "# step_s: {:?}", self.step_s);
        let _ = writeln!(s, "{HEADER}");
        for e in &self.events {
            let _ = match &e.action {
                Action::Set { input, value } => {
                    check_name(input)?;
                    // `{:?}` of an f64: the shortest text that parses back to the same bits
                    writeln!(s, "{},set,{input},{value:?}", e.step)
                }
                Action::Release { input } => {
                    check_name(input)?;
                    writeln!(s, "{},release,{input},", e.step)
                }
                Action::Reset => writeln!(s, "{},reset,,", e.step),
            };
        }
        Ok(s)
    }

    /// Reads a recording's text.
    pub fn parse(text: &str) -> Result<Recording, RecordingError> {
        let mut rec = Recording::default();
        let mut header = false;
        let mut last_step = 0;
        for (k, raw) in text.lines().enumerate() {
            let line = k + 1;
            let bad = |message: String| RecordingError::Line { line, message };
            let l = raw.trim_end_matches('\r');
            if let Some(comment) = l.strip_prefix('#') {
                let comment = comment.trim();
                if let Some(m) = comment.strip_prefix("model:") {
                    rec.model = m.trim().to_string();
                } else if let Some(dt) = comment.strip_prefix("step_s:") {
                    rec.step_s = dt.trim().parse().map_err(|e| bad(format!("step_s: {e}")))?;
                }
                continue;
            }
            if l.trim().is_empty() {
                continue;
            }
            if !header {
                if l != HEADER {
                    return Err(bad(format!("expected the header `{HEADER}`")));
                }
                header = true;
                continue;
            }
            let f: Vec<&str> = l.split(',').collect();
            let [step, event, input, value] = f[..] else {
                return Err(bad(format!("expected 4 fields, found {}", f.len())));
            };
            let step: u64 = step
                .parse()
                .map_err(|e| bad(format!("step {step:?}: {e}")))?;
            if step < last_step {
                return Err(bad(format!("step {step} is before step {last_step}")));
            }
            last_step = step;
            let need_input = || {
                if input.is_empty() {
                    Err(bad(format!("a `{event}` needs an input name")))
                } else {
                    Ok(input.to_string())
                }
            };
            let action = match event {
                "set" => {
                    let value: f64 = value
                        .parse()
                        .map_err(|e| bad(format!("value {value:?}: {e}")))?;
                    if !value.is_finite() {
                        return Err(bad(format!("value {value} is not finite")));
                    }
                    Action::Set {
                        input: need_input()?,
                        value,
                    }
                }
                "release" => Action::Release {
                    input: need_input()?,
                },
                "reset" => Action::Reset,
                other => {
                    return Err(bad(format!(
                        "unknown event {other:?} (set, release or reset)"
                    )))
                }
            };
            rec.events.push(Event { step, action });
        }
        if !header {
            return Err(RecordingError::Line {
                line: text.lines().count().max(1),
                message: format!("no header `{HEADER}`"),
            });
        }
        Ok(rec)
    }
}
