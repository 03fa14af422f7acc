//! The pose file `poses.bin` beside `results.csv`: every body's global pose at every output row,
//! for `hydraulink view`, and its side file `poses.json` (the model file, overrides, body
//! names), both written by `hydraulink run`.
//!
//! ```text
//! poses.bin, little-endian:
//!   header   8 bytes  b"HLPOSE01"
//!            u32      n_bodies
//!   row ×N   f64      t [s]  (the row's `time` in results.csv, same order, same count)
//!            per body (model order, as `poses.json` "bodies"): 12 × f32
//!                     x, y, z [m]  (body frame origin, global)
//!                     a00 a01 a02 a10 a11 a12 a20 a21 a22 [-]  (rotation A, row-major:
//!                     a point r̄ of the body's reference coordinates is at x + A r̄)
//! ```
//!
//! A row costs 8 + 48 n_bodies bytes (152 B for the four-bar's 3 bodies, 296 B for the
//! excavator's 6); single precision keeps positions to about 1 µm on a 10 m machine, plenty to
//! draw. A run that stops early keeps the rows written so far (whole rows only: a reader drops a
//! partial last row).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use hydraulink::pipeline::simulation::BodyPose;
use serde::{Deserialize, Serialize};

use super::OutputError;

/// The pose file's name.
pub const POSES_FILE: &str = "poses.bin";
/// Its side file's name.
pub const POSES_INFO_FILE: &str = "poses.json";
/// The first 8 bytes of a pose file.
pub const POSES_MAGIC: &[u8; 8] = b"HLPOSE01";

/// `poses.json`: what `hydraulink view` needs to draw the run again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PosesInfo {
    /// The model file as given to `run` (absolute), or none for the built-in four-bar.
    pub model_file: Option<String>,
    /// The `--set` overrides of the run, as given (`PATH=VALUE`).
    pub overrides: Vec<String>,
    /// The bodies, in the order of the poses.
    pub bodies: Vec<String>,
    /// The layout, in words.
    pub format: String,
}

/// Writes `poses.bin` row by row (buffered).
#[derive(Debug)]
pub struct PoseWriter {
    path: PathBuf,
    out: BufWriter<File>,
    /// One row's bytes, sized once.
    row: Vec<u8>,
}

impl PoseWriter {
    /// Creates `dir/poses.bin` with its header and `dir/poses.json`.
    pub fn create(dir: &Path, info: &PosesInfo) -> Result<PoseWriter, OutputError> {
        let info_path = dir.join(POSES_INFO_FILE);
        let text = serde_json::to_string_pretty(info).map_err(|e| OutputError::Io {
            path: info_path.clone(),
            source: std::io::Error::other(e),
        })?;
        std::fs::write(&info_path, text + "\n").map_err(|e| OutputError::io(&info_path, e))?;
        let path = dir.join(POSES_FILE);
        let file = File::create(&path).map_err(|e| OutputError::io(&path, e))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        let n = info.bodies.len();
        out.write_all(POSES_MAGIC)
            .and_then(|()| out.write_all(&(n as u32).to_le_bytes()))
            .map_err(|e| OutputError::io(&path, e))?;
        Ok(PoseWriter {
            path,
            out,
            row: vec![0u8; 8 + 48 * n],
        })
    }

    /// Appends a row: time `t` \[s\] and the first `n_bodies` poses (missing ones as zeros), in
    /// one buffered write.
    pub fn write(&mut self, t: f64, poses: &[BodyPose]) -> Result<(), OutputError> {
        let row = &mut self.row;
        row[..8].copy_from_slice(&t.to_le_bytes());
        for (b, p) in row[8..].chunks_exact_mut(48).zip(poses) {
            let values = p.position_m.iter().chain(p.rotation.iter().flatten());
            for (out, &x) in b.chunks_exact_mut(4).zip(values) {
                out.copy_from_slice(&(x as f32).to_le_bytes());
            }
        }
        self.out
            .write_all(row)
            .map_err(|e| OutputError::io(&self.path, e))
    }

    /// Flushes the file.
    pub fn finish(&mut self) -> Result<(), OutputError> {
        self.out.flush().map_err(|e| OutputError::io(&self.path, e))
    }
}

/// A pose file read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Poses {
    /// Bodies per row.
    pub n_bodies: usize,
    /// The rows' times \[s\].
    pub times: Vec<f64>,
    /// The poses, row after row (`n_bodies` per row).
    pub poses: Vec<BodyPose>,
}

/// Reads `poses.bin` (a partial last row is dropped); errors say what is wrong.
pub fn read_poses(path: &Path) -> Result<Poses, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() < 12 || &bytes[..8] != POSES_MAGIC {
        return Err(format!(
            "{}: not a pose file (it does not start with {:?})",
            path.display(),
            String::from_utf8_lossy(POSES_MAGIC)
        ));
    }
    let n_bodies = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize;
    let row = 8 + 48 * n_bodies;
    let body = &bytes[12..];
    let n_rows = body.len() / row;
    let mut times = Vec::with_capacity(n_rows);
    let mut poses = Vec::with_capacity(n_rows * n_bodies);
    let f32_at =
        |b: &[u8], k: usize| f64::from(f32::from_le_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]));
    for r in body.chunks_exact(row) {
        let mut t = [0u8; 8];
        t.copy_from_slice(&r[..8]);
        times.push(f64::from_le_bytes(t));
        for b in r[8..].chunks_exact(48) {
            let v: Vec<f64> = (0..12).map(|k| f32_at(b, 4 * k)).collect();
            poses.push(BodyPose {
                position_m: [v[0], v[1], v[2]],
                rotation: [[v[3], v[4], v[5]], [v[6], v[7], v[8]], [v[9], v[10], v[11]]],
            });
        }
    }
    Ok(Poses {
        n_bodies,
        times,
        poses,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pose_file_reads_back_what_was_written() {
        let dir = std::env::temp_dir().join(format!("hydraulink-poses-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let info = PosesInfo {
            model_file: Some("m.toml".into()),
            overrides: vec![],
            bodies: vec!["a".into(), "b".into()],
            format: "test".into(),
        };
        let mut w = PoseWriter::create(&dir, &info).unwrap();
        let pose = |x: f64| BodyPose {
            position_m: [x, -x, 0.5],
            rotation: [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
        };
        for k in 0..3 {
            let t = f64::from(k) * 1e-3;
            w.write(t, &[pose(t), pose(2.0 * t)]).unwrap();
        }
        w.finish().unwrap();
        // a partial last row is dropped
        let path = dir.join(POSES_FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[0u8; 20]);
        std::fs::write(&path, bytes).unwrap();
        let p = read_poses(&path).unwrap();
        assert_eq!((p.n_bodies, p.times.len(), p.poses.len()), (2, 3, 6));
        assert_eq!(p.times[2], 2e-3);
        assert_eq!(p.poses[5], pose(f64::from(4e-3_f32)));
        let back: PosesInfo =
            serde_json::from_str(&std::fs::read_to_string(dir.join(POSES_INFO_FILE)).unwrap())
                .unwrap();
        assert_eq!(back, info);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
