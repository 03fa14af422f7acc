//! `hydraulink view OUTDIR [--model FILE] [--port N]`: a finished run in the browser viewer, with
//! a time slider and a playback speed (`hydraulink_viewer::Viewer`); and the pose rows that
//! `hydraulink run` writes beside `results.csv` for it (`poses.bin`, `poses.json`).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use clap::Args;
use hydraulink::pipeline::simulation::BodyPose;
use hydraulink::Simulation;
use hydraulink_io::output::poses::{PoseWriter, PosesInfo, POSES_INFO_FILE};
use hydraulink_io::output::{step_time_s, OutputError};
use hydraulink_viewer::world_rows::TerrainWriter;
use hydraulink_viewer::Viewer;

use crate::{watch_for_interrupt, Failure, INTERRUPTED};

/// The pose rows of a run: one per row of `results.csv`; with a worksite (`run --scene`) also
/// its obstacles and terrain (`hydraulink_viewer::world_rows`: world.json, terrain.bin).
pub(crate) struct PoseRows {
    writer: PoseWriter,
    poses: Vec<BodyPose>,
    terrain: Option<TerrainWriter>,
}

impl PoseRows {
    /// Creates `dir/poses.bin` (with the initial row) and `dir/poses.json`, naming the model
    /// file (absolute) and the overrides of the run.
    pub(crate) fn create(
        dir: &Path,
        sim: &mut Simulation,
        model: Option<&PathBuf>,
        overrides: &[String],
    ) -> Result<PoseRows, OutputError> {
        let info = PosesInfo {
            model_file: model.map(|p| {
                std::fs::canonicalize(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
                    .to_string()
            }),
            overrides: overrides.to_vec(),
            bodies: sim.model().bodies.iter().map(|b| b.name.clone()).collect(),
            format: "poses.bin: b\"HLPOSE01\", u32 n_bodies, then per results.csv row: f64 t [s] \
                     and per body 12 f32: x y z [m], rotation A row-major; little-endian"
                .into(),
        };
        let writer = PoseWriter::create(dir, &info)?;
        let terrain = hydraulink_viewer::world_rows::create(dir, sim).map_err(output_error)?;
        let mut rows = PoseRows {
            writer,
            poses: vec![BodyPose::default(); sim.model().bodies.len()],
            terrain,
        };
        rows.write(sim)?;
        Ok(rows)
    }

    /// Appends the poses of the simulation's current state.
    pub(crate) fn write(&mut self, sim: &mut Simulation) -> Result<(), OutputError> {
        sim.body_poses(&mut self.poses);
        // the time of the results.csv row: k Δt
        let time_s = step_time_s(sim.step_index(), sim.model().step_s());
        self.writer.write(time_s, &self.poses)?;
        if let (Some(t), Some(w)) = (&mut self.terrain, &sim.state().world) {
            t.write(time_s, &w.field.h).map_err(output_error)?;
        }
        Ok(())
    }

    /// Flushes the files.
    pub(crate) fn finish(&mut self) -> Result<(), OutputError> {
        self.writer.finish()?;
        if let Some(t) = &mut self.terrain {
            t.finish().map_err(output_error)?;
        }
        Ok(())
    }
}

/// A worksite file that cannot be written, as the pose writer's errors are.
fn output_error((path, source): hydraulink_viewer::world_rows::WriteError) -> OutputError {
    OutputError::Io { path, source }
}

/// The options of `hydraulink view`.
#[derive(Debug, Args)]
pub(crate) struct ViewArgs {
    #[arg(
        value_name = "OUTDIR",
        help = "Output directory of a finished `hydraulink run` (results.csv, poses.bin, poses.json)"
    )]
    dir: PathBuf,

    #[arg(
        long,
        value_name = "FILE",
        help = "Model file; default: the one named in OUTDIR/poses.json (with the run's --set \
                overrides)"
    )]
    model: Option<PathBuf>,

    #[arg(
        long,
        default_value_t = 0,
        help = "TCP port on 127.0.0.1; 0: any free port"
    )]
    port: u16,
}

/// `hydraulink view`: exit code 2 for a missing or foreign run or a bad model, 0 after Ctrl-C.
pub(crate) fn view_command(args: &ViewArgs) -> Result<(), Failure> {
    let info_path = args.dir.join(POSES_INFO_FILE);
    let info: Option<PosesInfo> = match std::fs::read_to_string(&info_path) {
        Ok(text) => Some(
            serde_json::from_str(&text)
                .map_err(|e| Failure::invalid_input(format!("{}: {e}", info_path.display())))?,
        ),
        Err(_) if args.model.is_some() => None,
        Err(e) => {
            return Err(Failure::invalid_input(format!(
                "{}: {e}; run the model with `hydraulink run` (which writes it) or give --model",
                info_path.display()
            )))
        }
    };
    let model = args.model.clone().or_else(|| {
        info.as_ref()
            .and_then(|i| i.model_file.clone().map(PathBuf::from))
    });
    let (text, file) = crate::read_model(model.as_ref())?;
    let spec = hydraulink_io::check_model(&text, &file)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let overrides = info.map(|i| i.overrides).unwrap_or_default();
    let spec = hydraulink_io::apply_overrides(&spec, &overrides)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let step_s = spec.solver.step_s;
    // `mesh` shapes name their files relative to the model file
    let model_dir = model
        .as_ref()
        .and_then(|m| m.parent())
        .map(Path::to_path_buf);
    let viewer = Viewer::start(&spec, step_s, &args.dir, model_dir.as_deref(), args.port)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    watch_for_interrupt();
    // status lines that a closed stdout (`hydraulink view DIR | head -1`) cannot end: the server
    // serves until Ctrl-C whether or not anyone reads them
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "hydraulink viewer of the run in {} ({file}): open {}",
            args.dir.display(),
            viewer.url()
        );
        let _ = writeln!(out, "(Ctrl-C stops the server)");
        let _ = out.flush();
    }
    while !INTERRUPTED.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    viewer.stop();
    Ok(())
}
