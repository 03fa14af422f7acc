//! The game's files: the leaderboard (JSON, every finished game, best score first) and the
//! attempt log (CSV, one row per attempt: arm reach, time, fuel, hits).
//!
//! Default places ([`default_leaderboard_path`]): `$XDG_DATA_HOME/hydraulink/leaderboard.json`,
//! else `$HOME/.local/share/hydraulink/leaderboard.json` (`%APPDATA%\hydraulink\…` on
//! Windows), else `./hydraulink-leaderboard.json`; the log is `game-log.csv` beside the
//! leaderboard ([`default_log_path`]). `hydraulink serve --leaderboard PATH --game-log PATH`
//! chooses others.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::game::AttemptResult;

/// One finished game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Player name.
    pub player: String,
    /// Score [-] (mean points over the attempts).
    pub score: f64,
    /// Model name.
    pub model: String,
    /// The variants in force (`bucket=large, arm_cylinder=medium`), or empty.
    #[serde(default)]
    pub variants: String,
    /// When the game ended [s since 1970-01-01 UTC].
    pub unix_time_s: u64,
    /// The attempts.
    pub attempts: Vec<AttemptResult>,
}

/// The leaderboard file's contents.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Leaderboard {
    /// Every game, best score first; equal scores: the earlier game first.
    pub entries: Vec<Entry>,
}

/// A game file that cannot be read or written.
#[derive(Debug, Error)]
pub enum GameFileError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The leaderboard is not valid JSON of the expected shape.
    #[error("{path}: line {line}, column {column}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// Line [-], from 1.
        line: usize,
        /// Column [-], from 1.
        column: usize,
        /// What is wrong.
        message: String,
    },
}

fn io_error(path: &Path, source: std::io::Error) -> GameFileError {
    GameFileError::Io {
        path: path.display().to_string(),
        source,
    }
}

impl Leaderboard {
    /// Reads a leaderboard; a file that does not exist is an empty board.
    pub fn load(path: &Path) -> Result<Leaderboard, GameFileError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Leaderboard::default()),
            Err(e) => return Err(io_error(path, e)),
        };
        let mut board: Leaderboard =
            serde_json::from_str(&text).map_err(|e| GameFileError::Parse {
                path: path.display().to_string(),
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            })?;
        board.sort();
        Ok(board)
    }

    /// Writes the board (creating the directory; through a temporary file renamed over the old
    /// one, so a crash leaves either board whole).
    pub fn save(&self, path: &Path) -> Result<(), GameFileError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        }
        let mut text = serde_json::to_string_pretty(self).map_err(|e| GameFileError::Io {
            path: path.display().to_string(),
            source: std::io::Error::other(e),
        })?;
        text.push('\n');
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).map_err(|e| io_error(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| io_error(path, e))
    }

    fn sort(&mut self) {
        // stable: equal scores and times keep their order
        self.entries.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.unix_time_s.cmp(&b.unix_time_s))
        });
    }

    /// Adds a game; returns its rank, from 1.
    pub fn insert(&mut self, entry: Entry) -> usize {
        let rank = self
            .entries
            .iter()
            .take_while(|e| {
                e.score > entry.score
                    || (e.score == entry.score && e.unix_time_s <= entry.unix_time_s)
            })
            .count();
        self.entries.insert(rank, entry);
        rank + 1
    }
}

/// The header of the attempt log.
pub const LOG_HEADER: &str = "player,model,variants,attempt,outcome,time_s,fuel_l,hits,hopper_kg,reach_max_m,reach_mean_m,points,unix_time_s";

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The log row of an attempt (no line break).
pub fn log_row(
    player: &str,
    model: &str,
    variants: &str,
    a: &AttemptResult,
    unix_time_s: u64,
) -> String {
    let opt = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.4}"));
    format!(
        "{},{},{},{},{},{:.3},{:.5},{},{:.2},{},{},{:.2},{unix_time_s}",
        csv_field(player),
        csv_field(model),
        csv_field(variants),
        a.attempt,
        a.outcome.name(),
        a.time_s,
        a.fuel_l,
        a.hits,
        a.hopper_kg,
        opt(a.reach_max_m),
        opt(a.reach_mean_m),
        a.points
    )
}

/// Appends a row to the attempt log, writing the header first when the file is new or empty.
pub fn append_log(path: &Path, row: &str) -> Result<(), GameFileError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| io_error(path, e))?;
    let empty = f.metadata().map(|m| m.len() == 0).unwrap_or(true);
    let mut text = String::new();
    if empty {
        text.push_str(LOG_HEADER);
        text.push('\n');
    }
    text.push_str(row);
    text.push('\n');
    f.write_all(text.as_bytes()).map_err(|e| io_error(path, e))
}

/// The default leaderboard file (module doc).
pub fn default_leaderboard_path() -> PathBuf {
    data_dir().map_or_else(
        || PathBuf::from("hydraulink-leaderboard.json"),
        |d| d.join("hydraulink").join("leaderboard.json"),
    )
}

/// The default attempt log: `game-log.csv` beside the leaderboard `board`, or
/// `./hydraulink-game-log.csv` beside a leaderboard in the working directory.
pub fn default_log_path(board: &Path) -> PathBuf {
    match board.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.join("game-log.csv"),
        None => PathBuf::from("hydraulink-game-log.csv"),
    }
}

fn data_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if cfg!(windows) {
        return var("APPDATA");
    }
    var("XDG_DATA_HOME").or_else(|| var("HOME").map(|h| h.join(".local").join("share")))
}

/// Seconds since 1970-01-01 UTC (0 if the clock is before it).
pub fn unix_time_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Outcome;

    fn attempt(n: u32, outcome: Outcome, points: f64) -> AttemptResult {
        AttemptResult {
            attempt: n,
            outcome,
            time_s: 95.25,
            fuel_l: 1.2345,
            hits: 1,
            hopper_kg: 2003.5,
            reach_max_m: Some(6.4),
            reach_mean_m: Some(5.55),
            points,
        }
    }

    fn entry(player: &str, score: f64, t: u64) -> Entry {
        Entry {
            player: player.into(),
            score,
            model: "excavator_dig".into(),
            variants: "bucket=large".into(),
            unix_time_s: t,
            attempts: vec![attempt(1, Outcome::GoalReached, 3.0 * score)],
        }
    }

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "hydraulink-game-test-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn leaderboard_round_trip_and_ordering() {
        let dir = temp("board");
        let path = dir.join("sub").join("leaderboard.json");
        let mut b = Leaderboard::load(&path).expect("a missing file is an empty board");
        assert!(b.entries.is_empty());
        assert_eq!(b.insert(entry("Ann", 300.0, 10)), 1);
        assert_eq!(b.insert(entry("Bob", 500.0, 20)), 1);
        assert_eq!(b.insert(entry("Cid", 300.0, 30)), 3); // equal score: the earlier first
        assert_eq!(b.insert(entry("Dan", 0.0, 40)), 4);
        b.save(&path).unwrap();
        let back = Leaderboard::load(&path).unwrap();
        assert_eq!(back, b);
        let order: Vec<&str> = back.entries.iter().map(|e| e.player.as_str()).collect();
        assert_eq!(order, ["Bob", "Ann", "Cid", "Dan"]);
        // a hand-edited file out of order is sorted on load
        std::fs::write(
            &path,
            serde_json::to_string(&Leaderboard {
                entries: vec![entry("Low", 1.0, 1), entry("High", 2.0, 2)],
            })
            .unwrap(),
        )
        .unwrap();
        let b = Leaderboard::load(&path).unwrap();
        assert_eq!(b.entries[0].player, "High");
        // a broken file is an error naming the place
        std::fs::write(&path, "{\n  \"entries\": [1,").unwrap();
        let e = Leaderboard::load(&path).unwrap_err().to_string();
        assert!(e.contains("leaderboard.json: line 2"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn csv_log_rows_and_header() {
        let dir = temp("log");
        let path = dir.join("game-log.csv");
        let a = attempt(2, Outcome::TooManyHits, 0.0);
        append_log(&path, &log_row("Ann, \"the\" digger", "m", "", &a, 7)).unwrap();
        let mut b = attempt(3, Outcome::GoalReached, 612.5);
        b.reach_max_m = None;
        b.reach_mean_m = None;
        append_log(&path, &log_row("Bob", "m", "bucket=large", &b, 8)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], LOG_HEADER);
        assert_eq!(
            lines[1],
            "\"Ann, \"\"the\"\" digger\",m,,2,too_many_hits,95.250,1.23450,1,2003.50,6.4000,5.5500,0.00,7"
        );
        assert_eq!(
            lines[2],
            "Bob,m,bucket=large,3,goal_reached,95.250,1.23450,1,2003.50,,,612.50,8"
        );
        assert_eq!(lines[2].split(',').count(), LOG_HEADER.split(',').count());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn default_paths() {
        let b = default_leaderboard_path();
        assert!(b.ends_with("leaderboard.json") || b.ends_with("hydraulink-leaderboard.json"));
        assert_eq!(
            default_log_path(Path::new("/x/hydraulink/leaderboard.json")),
            PathBuf::from("/x/hydraulink/game-log.csv")
        );
        assert_eq!(
            default_log_path(Path::new("hydraulink-leaderboard.json")),
            PathBuf::from("hydraulink-game-log.csv")
        );
    }
}
