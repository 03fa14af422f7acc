//! The game in the server: a [`Game`] fed from the snapshots, its start message from the page,
//! its state in every frame, and its files (leaderboard, attempt log) written when an attempt
//! or a game ends. Runs on the broadcaster and connection threads, never on the engine's.
//!
//! ```text
//! page → server   {"type":"game","action":"start","name":"Ann"}   first attempt of a player
//!                 {"type":"game","action":"start"}                next attempt
//! server → page   frame … "game":{"phase":…,"player":…,"attempt":…,"attempts":…,"time_s":…,
//!                  "time_limit_s":…,"hopper_kg":…,"goal_kg":…,"hits":…,"max_hits":…,"fuel_l":…,
//!                  "fuel_capacity_l":…,"reach_m":…,"results":[…],"score":…,
//!                  "board":N,"rank":R|null,"variants":"…","notice":"…"}
//! GET /leaderboard  {"entries":[…]}  the best 20 games
//! ```

use std::path::PathBuf;

use hydraulink::model::spec::{GameSpec, ModelSpec};
use hydraulink::ModelError;
use hydraulink_rt::Snapshot;
use serde::Deserialize;

use crate::game::{Columns, Game, Phase, Rules};
use crate::leaderboard::{append_log, log_row, unix_time_s, Entry, GameFileError, Leaderboard};

/// How the server runs a game.
#[derive(Debug, Clone)]
pub struct GameOptions {
    /// The rules (`[game]`, or its defaults).
    pub spec: GameSpec,
    /// The leaderboard file.
    pub leaderboard: PathBuf,
    /// The attempt log (CSV).
    pub log: PathBuf,
    /// The variants in force, shown and stored with each game (`bucket=large, …`).
    pub variants: String,
}

/// A message from the page to the game.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum GameMessage {
    /// A game action.
    Game {
        /// What to do.
        action: GameAction,
        /// The player's name (a new player's first attempt).
        #[serde(default)]
        name: String,
    },
}

/// A game action from the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameAction {
    /// Start the next attempt (or a new player's first).
    Start,
}

/// The game of a server.
#[derive(Debug)]
pub struct GameHost {
    game: Game,
    columns: Columns,
    /// Index of the game's first column in the snapshots' outputs.
    first: usize,
    options: GameOptions,
    model: String,
    board: Leaderboard,
    /// Incremented when the board changes (the page fetches `/leaderboard` again).
    board_version: u64,
    rank: Option<usize>,
    notice: String,
}

impl GameHost {
    /// A game on the model `spec` with output columns `labels` and bodies `bodies` (the
    /// snapshots' order), whose snapshots carry the game's columns ([`GameHost::labels`]) from
    /// index `first` on; `dt_s` is the model's step [s]. Reads the leaderboard.
    pub fn new(
        options: GameOptions,
        spec: &ModelSpec,
        labels: &[String],
        bodies: &[String],
        dt_s: f64,
        first: usize,
    ) -> Result<GameHost, GameHostError> {
        let columns = Columns::resolve(&options.spec, spec, labels, bodies)?;
        let board = Leaderboard::load(&options.leaderboard)?;
        Ok(GameHost {
            game: Game::new(Rules::new(&options.spec), dt_s),
            columns,
            first,
            model: spec.name.clone(),
            options,
            board,
            board_version: 0,
            rank: None,
            notice: String::new(),
        })
    }

    /// The output columns the game reads, in the order the snapshots must carry them.
    pub fn labels(&self) -> &[String] {
        &self.columns.labels
    }

    /// The game.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Handles a page's game message; returns whether the machine must be reset (an attempt
    /// starts).
    pub fn handle(&mut self, msg: &GameMessage) -> bool {
        let GameMessage::Game { action, name } = msg;
        match action {
            GameAction::Start => match self.game.start(name) {
                Ok(()) => {
                    self.notice.clear();
                    self.rank = None;
                    true
                }
                Err(e) => {
                    self.notice = e.to_string();
                    false
                }
            },
        }
    }

    /// Feeds a snapshot to the game; writes the files when an attempt ends.
    pub fn observe(&mut self, snap: &Snapshot) {
        let values = snap.outputs.get(self.first..).unwrap_or(&[]);
        let r = self
            .columns
            .reading(snap.step, snap.time_s, values, &snap.poses);
        let Some(a) = self.game.observe(&r) else {
            return;
        };
        let now = unix_time_s();
        let player = self.game.player().to_string();
        let row = log_row(&player, &self.model, &self.options.variants, &a, now);
        if let Err(e) = append_log(&self.options.log, &row) {
            self.notice = format!("attempt log: {e}");
        }
        if self.game.phase() == Phase::GameOver {
            let rank = self.board.insert(Entry {
                player,
                score: self.game.score(),
                model: self.model.clone(),
                variants: self.options.variants.clone(),
                unix_time_s: now,
                attempts: self.game.results().to_vec(),
            });
            self.rank = Some(rank);
            self.board_version += 1;
            if let Err(e) = self.board.save(&self.options.leaderboard) {
                self.notice = format!("leaderboard: {e}");
            }
        }
    }

    /// The game's state as a JSON object (module doc), appended to `out`.
    pub fn write_json(&self, out: &mut String) {
        self.game.write_json(out);
        out.pop(); // the object's closing brace
        out.push_str(&format!(",\"board\":{},\"rank\":", self.board_version));
        match self.rank {
            Some(r) => out.push_str(&r.to_string()),
            None => out.push_str("null"),
        }
        let s = |x: &str| serde_json::to_string(x).unwrap_or_else(|_| "\"\"".into());
        out.push_str(&format!(
            ",\"variants\":{},\"notice\":{}}}",
            s(&self.options.variants),
            s(&self.notice)
        ));
    }

    /// The best `n` games as the JSON of `/leaderboard`.
    pub fn leaderboard_json(&self, n: usize) -> String {
        let top = Leaderboard {
            entries: self.board.entries.iter().take(n).cloned().collect(),
        };
        serde_json::to_string(&top).unwrap_or_else(|_| "{\"entries\":[]}".into())
    }
}

/// A game that cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum GameHostError {
    /// A `[game]` field does not fit the model (a column it does not have, …).
    #[error("{0}")]
    Model(#[from] ModelError),
    /// The leaderboard cannot be read.
    #[error("{0}")]
    File(#[from] GameFileError),
}
