//! The worksite of a finished run, for `hydraulink view`: `hydraulink run --scene` writes it
//! beside the poses, and the player sends it to the page as `serve` does (the scene's
//! obstacles and terrain, then the frames' terrain changes through
//! [`crate::protocol::write_terrain`]).
//!
//! ```text
//! world.json    {"obstacles":[SceneObstacle…], "terrain":SceneTerrain|null}   at the start
//! terrain.bin   b"HLTERR01", u32 n_cells, then per results.csv row:
//!               f64 t [s], u32 n, n × (u32 k, i32 height of column k [mm])
//!               (the first row lists every column, the others the columns whose height in
//!               millimetres changed); little-endian
//! ```
//!
//! A run without obstacles or terrain writes neither file (and removes those of an earlier
//! run in the same folder).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::protocol::millimetres;
use crate::scene::{SceneObstacle, SceneTerrain};

/// The worksite file's name.
pub const WORLD_FILE: &str = "world.json";
/// The terrain rows' file name.
pub const TERRAIN_FILE: &str = "terrain.bin";
const MAGIC: &[u8; 8] = b"HLTERR01";

/// `world.json`: what the page draws of the worksite before the first frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct World {
    /// The static obstacles (`crate::scene::obstacles`).
    pub obstacles: Vec<SceneObstacle>,
    /// The terrain's grid and its heights at the start (`crate::scene::terrain`).
    pub terrain: Option<SceneTerrain>,
}

impl World {
    /// The worksite of `sim` now; none when it has neither obstacles nor terrain.
    pub fn of(sim: &hydraulink::Simulation) -> Option<World> {
        let w = World {
            obstacles: crate::scene::obstacles(sim.model()),
            terrain: crate::scene::terrain(sim),
        };
        (!w.obstacles.is_empty() || w.terrain.is_some()).then_some(w)
    }
}

/// Writes `terrain.bin`, one row per call.
#[derive(Debug)]
pub struct TerrainWriter {
    out: BufWriter<std::fs::File>,
    path: PathBuf,
    sent_mm: Vec<i32>,
}

/// A file that cannot be written, and why.
pub type WriteError = (PathBuf, std::io::Error);

fn io_error(path: &Path, e: std::io::Error) -> WriteError {
    (path.to_path_buf(), e)
}

/// Writes `dir/world.json` (and creates `dir/terrain.bin` when there is a terrain) for `sim`,
/// or removes both when it has no worksite; the terrain's writer, if any.
pub fn create(
    dir: &Path,
    sim: &hydraulink::Simulation,
) -> Result<Option<TerrainWriter>, WriteError> {
    let world_path = dir.join(WORLD_FILE);
    let terrain_path = dir.join(TERRAIN_FILE);
    let Some(world) = World::of(sim) else {
        for p in [&world_path, &terrain_path] {
            match std::fs::remove_file(p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_error(p, e)),
                _ => {}
            }
        }
        return Ok(None);
    };
    let text = serde_json::to_string(&world)
        .map_err(|e| io_error(&world_path, std::io::Error::other(e)))?;
    std::fs::write(&world_path, text).map_err(|e| io_error(&world_path, e))?;
    let Some(t) = world.terrain else {
        let _ = std::fs::remove_file(&terrain_path);
        return Ok(None);
    };
    let file = std::fs::File::create(&terrain_path).map_err(|e| io_error(&terrain_path, e))?;
    let mut out = BufWriter::new(file);
    let n = u32::try_from(t.heights_mm.len()).map_err(|_| {
        io_error(
            &terrain_path,
            std::io::Error::other("too many terrain columns"),
        )
    })?;
    out.write_all(MAGIC)
        .and_then(|()| out.write_all(&n.to_le_bytes()))
        .map_err(|e| io_error(&terrain_path, e))?;
    Ok(Some(TerrainWriter {
        out,
        path: terrain_path,
        sent_mm: Vec::new(),
    }))
}

impl TerrainWriter {
    /// Appends the row of time `t` [s] with the column heights `heights_m` [m] (as many as the
    /// grid has columns).
    pub fn write(&mut self, t: f64, heights_m: &[f64]) -> Result<(), WriteError> {
        let first = self.sent_mm.len() != heights_m.len();
        if first {
            self.sent_mm = vec![i32::MIN; heights_m.len()];
        }
        let mut changes: Vec<(u32, i32)> = Vec::new();
        for (k, (h, s)) in heights_m.iter().zip(self.sent_mm.iter_mut()).enumerate() {
            let mm = millimetres(*h);
            if mm != *s {
                *s = mm;
                changes.push((k as u32, mm));
            }
        }
        let mut row = Vec::with_capacity(12 + 8 * changes.len());
        row.extend_from_slice(&t.to_le_bytes());
        row.extend_from_slice(&(changes.len() as u32).to_le_bytes());
        for (k, mm) in changes {
            row.extend_from_slice(&k.to_le_bytes());
            row.extend_from_slice(&mm.to_le_bytes());
        }
        self.out
            .write_all(&row)
            .map_err(|e| io_error(&self.path, e))
    }

    /// Flushes the file.
    pub fn finish(&mut self) -> Result<(), WriteError> {
        self.out.flush().map_err(|e| io_error(&self.path, e))
    }
}

/// A finished run's worksite: `world.json` and the terrain's heights per row.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedWorld {
    /// What `world.json` says.
    pub world: World,
    /// Per row, the changed columns (k, height [mm]); empty without a terrain.
    pub rows: Vec<Vec<(u32, i32)>>,
    /// Columns of the grid.
    pub n_cells: usize,
}

impl RecordedWorld {
    /// Reads `dir/world.json` and `dir/terrain.bin`; none when the run has no worksite.
    pub fn read(dir: &Path) -> Result<Option<RecordedWorld>, (PathBuf, String)> {
        let world_path = dir.join(WORLD_FILE);
        let text = match std::fs::read_to_string(&world_path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err((world_path, e.to_string())),
        };
        let world: World =
            serde_json::from_str(&text).map_err(|e| (world_path.clone(), e.to_string()))?;
        let Some(terrain) = &world.terrain else {
            return Ok(Some(RecordedWorld {
                world,
                rows: Vec::new(),
                n_cells: 0,
            }));
        };
        let path = dir.join(TERRAIN_FILE);
        let bytes = std::fs::read(&path).map_err(|e| (path.clone(), e.to_string()))?;
        let bad = |m: &str| (path.clone(), m.to_string());
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            return Err(bad("not a hydraulink terrain file (HLTERR01)"));
        }
        let u32_at =
            |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let n_cells = u32_at(8) as usize;
        if n_cells != terrain.heights_mm.len() {
            return Err(bad(&format!(
                "{n_cells} columns, but {WORLD_FILE} has {}",
                terrain.heights_mm.len()
            )));
        }
        let mut rows = Vec::new();
        let mut i = 12;
        // a row cut off by an interrupted run ends the rows
        while i + 12 <= bytes.len() {
            let n = u32_at(i + 8) as usize;
            let end = i + 12 + 8 * n;
            if end > bytes.len() {
                break;
            }
            let mut row = Vec::with_capacity(n);
            for c in 0..n {
                let at = i + 12 + 8 * c;
                let k = u32_at(at);
                if k as usize >= n_cells {
                    return Err(bad(&format!("row {}: column {k} of {n_cells}", rows.len())));
                }
                row.push((k, u32_at(at + 4) as i32));
            }
            rows.push(row);
            i = end;
        }
        Ok(Some(RecordedWorld {
            world,
            rows,
            n_cells,
        }))
    }

    /// The heights [mm] after row `i`, from `heights_mm` after row `from − 1` (rows `from..=i`
    /// applied; `from = 0` starts from `world.json`'s heights).
    pub fn advance(&self, heights_mm: &mut Vec<i32>, from: usize, i: usize) {
        if from == 0 {
            heights_mm.clear();
            if let Some(t) = &self.world.terrain {
                heights_mm.extend_from_slice(&t.heights_mm);
            }
        }
        for row in self.rows.iter().take(i + 1).skip(from) {
            for &(k, mm) in row {
                if let Some(h) = heights_mm.get_mut(k as usize) {
                    *h = mm;
                }
            }
        }
    }
}
