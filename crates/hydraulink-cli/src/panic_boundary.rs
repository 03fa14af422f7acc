//! The command boundary for bugs: a panic anywhere in a command (in its thread) is caught,
//! reported as a bug with its message and place, and ends the process with exit code 101 (as
//! an uncaught panic would) after the command has written what it could. `run` catches it
//! around its steps, so that `summary.json` says `panicked` instead of staying at `running`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Exit code of a command that met a bug (a panic), the code Rust gives an uncaught panic.
pub(crate) const EXIT_PANICKED: u8 = 101;

/// The place (`file:line:column`) of the last panic, recorded by the hook.
static LAST_PLACE: Mutex<Option<String>> = Mutex::new(None);

/// Records the place of every panic, then lets the default hook print it (and the backtrace
/// when `RUST_BACKTRACE` asks for it).
pub(crate) fn install_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Some(place) = info.location() {
            *LAST_PLACE.lock().unwrap_or_else(|e| e.into_inner()) = Some(place.to_string());
        }
        default(info);
    }));
}

/// Runs `f`; a panic in it becomes `Err` with the message for the user: what went wrong, where,
/// and that it is a bug to report.
pub(crate) fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let place = LAST_PLACE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .map_or_else(String::new, |p| format!(" at {p}"));
        format!(
            "hydraulink panicked{place}: {what}\nthis is a bug in hydraulink, not in your model: \
             please report it with the model file and the command"
        )
    })
}
