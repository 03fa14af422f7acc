//! `hydraulink workspace MODEL --point BODY.MARKER`: the working range of a point, swept over the
//! cylinder strokes with the loops closed (`hydraulink::mechanics::working_range`), drawn as a
//! spec sheet draws it (DIR/working_range.svg) and tabulated (DIR/working_range.csv and .json,
//! and on stdout).

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use hydraulink::mechanics::working_range::{
    machine_lines, working_range, RangeOptions, WorkingRange,
};
use hydraulink_io::output::working_range::{write_working_range, Dimension, RangeDiagram};

use crate::{default_out_dir, locate, read_model, Failure};

/// The options of `hydraulink workspace`.
#[derive(Debug, Args)]
pub(crate) struct WorkspaceArgs {
    #[arg(value_name = "MODEL", help = "Model file (TOML)")]
    model: PathBuf,

    #[arg(
        long,
        value_name = "BODY.MARKER",
        help = "The point whose working range is drawn, e.g. bucket.P (the bucket's tip)"
    )]
    point: String,

    #[arg(
        long,
        short,
        value_name = "DIR",
        help = "Output directory [default: out/<model name>/]"
    )]
    out: Option<PathBuf>,

    #[arg(
        long = "pressure-pa",
        value_name = "P",
        help = "Piston-side pressure [Pa] for the force each cylinder produces at the point \
                (rod side at tank, the other cylinders held), e.g. the relief setting"
    )]
    pressure_pa: Option<f64>,

    #[arg(
        long,
        value_name = "N",
        default_value_t = 41,
        help = "Grid points per cylinder stroke (N^cylinders poses)"
    )]
    grid: usize,

    #[arg(
        long = "ground-y",
        value_name = "Y",
        default_value_t = 0.0,
        allow_hyphen_values = true,
        help = "Height of the ground plane [m] (along −g)"
    )]
    ground_y: f64,

    #[arg(
        long = "set",
        value_name = "PATH=VALUE",
        help = "Override a model parameter (repeatable), e.g. variants.bucket.choice=large"
    )]
    set: Vec<String>,
}

/// The model with `--point` as an output marker, and that marker's point. An unknown body or
/// marker is an error naming `--point` and what the model has.
fn load(
    args: &WorkspaceArgs,
) -> Result<(hydraulink::Model, hydraulink::model::FramePoint), Failure> {
    let (text, file) = read_model(Some(&args.model))?;
    let spec = hydraulink_io::parse_model(&text, &file)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let (mut spec, applied) = hydraulink_io::apply_overrides_traced(&spec, &args.set)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let bad = |why: String| Failure::invalid_input(format!("--point '{}': {why}", args.point));
    let Some((body, marker)) = args.point.split_once('.') else {
        return Err(bad(
            "must be written BODY.MARKER (a body's name, a dot, one of its markers)".into(),
        ));
    };
    let markers = if body == "ground" {
        Some(&spec.ground.markers)
    } else {
        spec.bodies
            .iter()
            .find(|b| b.name == body)
            .map(|b| &b.markers)
    };
    let Some(markers) = markers else {
        let names: Vec<&str> = spec.bodies.iter().map(|b| b.name.as_str()).collect();
        return Err(bad(format!(
            "{file} has no body '{body}' (its bodies: {})",
            names.join(", ")
        )));
    };
    if !markers.contains_key(marker) {
        let names: Vec<&str> = markers.keys().map(String::as_str).collect();
        return Err(bad(format!(
            "body '{body}' of {file} has no marker '{marker}' (its markers: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )));
    }
    if !spec.outputs.markers.contains(&args.point) {
        spec.outputs.markers.push(args.point.clone());
    }
    let model = hydraulink::compile(&spec)
        .map_err(|e| Failure::invalid_input(locate(&text, &file, &e, &applied, None)))?;
    let point = model
        .output_markers
        .iter()
        .find(|m| m.0 == args.point)
        .map(|m| m.1)
        .ok_or_else(|| bad("not found after compiling".into()))?;
    Ok((model, point))
}

/// `hydraulink workspace`.
pub(crate) fn workspace_command(args: &WorkspaceArgs) -> Result<(), Failure> {
    if let Some(p) = args.pressure_pa {
        if !(p.is_finite() && p > 0.0) {
            return Err(Failure::invalid_input(format!(
                "--pressure-pa: must be a finite pressure > 0 [Pa] (got {p})"
            )));
        }
    }
    if !args.ground_y.is_finite() {
        return Err(Failure::invalid_input(
            "--ground-y: must be a finite height [m]",
        ));
    }
    let (model, point) = load(args)?;
    let opts = RangeOptions {
        grid: args.grid,
        ground_y_m: args.ground_y,
        pressure_pa: args.pressure_pa,
    };
    let wr = working_range(&model, &point, &opts).map_err(|e| {
        Failure::invalid_input(format!("workspace of '{}': {e}", args.model.display()))
    })?;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| default_out_dir(model.name()));
    std::fs::create_dir_all(&dir).map_err(|e| {
        Failure::run_failed(format!("cannot create the folder {}: {e}", dir.display()))
    })?;
    let rows = table(&model, &wr);
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| Failure::run_failed(format!("cannot write {}: {e}", path.display())))
    };
    let mut csv = String::from("quantity,value,unit\n");
    for r in &rows {
        let _ = writeln!(csv, "{},{},{}", r.0, r.1, r.2);
    }
    write("working_range.csv", csv)?;
    let json: serde_json::Map<String, serde_json::Value> = rows
        .iter()
        .map(|r| (format!("{}_{}", r.0, r.2), serde_json::json!(r.1)))
        .collect();
    write(
        "working_range.json",
        serde_json::to_string_pretty(&serde_json::json!({
            "model": model.name(),
            "point": args.point,
            "figures": json,
        }))
        .unwrap_or_default()
            + "\n",
    )?;
    let svg = dir.join("working_range.svg");
    write_working_range(&svg, &diagram(&model, &point, &wr, &args.point))?;
    println!(
        "working range of {} ({}), {} of {} stroke-grid poses reachable:",
        args.point,
        args.model.display(),
        wr.points.len(),
        wr.points.len() + wr.unreachable
    );
    for r in &rows {
        println!("  {:<40} {:>14.6} {}", r.0, r.1, r.2);
    }
    if wr.figures.reach_at_ground_m.is_none() {
        println!("  (the point never reaches the ground: no reach at ground)");
    }
    println!(
        "wrote {}, {} and {}",
        dir.join("working_range.csv").display(),
        dir.join("working_range.json").display(),
        svg.display()
    );
    Ok(())
}

/// The table: (quantity, value, unit).
fn table(model: &hydraulink::Model, wr: &WorkingRange) -> Vec<(String, f64, &'static str)> {
    let f = &wr.figures;
    let mut rows = Vec::new();
    if let Some(r) = f.reach_at_ground_m {
        rows.push(("reach_at_ground".to_string(), r, "m"));
    }
    rows.push(("max_reach".into(), f.max_reach_m, "m"));
    rows.push(("digging_depth".into(), f.digging_depth_m, "m"));
    rows.push(("cutting_height".into(), f.cutting_height_m, "m"));
    rows.push(("dump_height".into(), f.dump_height_m, "m"));
    rows.push(("ground_y".into(), f.ground_y_m, "m"));
    rows.push(("reachable_poses".into(), wr.points.len() as f64, "-"));
    rows.push(("unreachable_poses".into(), wr.unreachable as f64, "-"));
    for force in &wr.forces {
        let name = &model.cylinder(force.cylinder.0).name;
        rows.push((format!("force_{name}_initial"), force.initial_n, "N"));
        rows.push((format!("force_{name}_max"), force.max_n, "N"));
        rows.push((
            format!("force_{name}_max_at_length"),
            force.max_at_length_m,
            "m",
        ));
    }
    rows
}

/// The diagram of the sweep.
fn diagram(
    model: &hydraulink::Model,
    point: &hydraulink::model::FramePoint,
    wr: &WorkingRange,
    label: &str,
) -> RangeDiagram {
    let f = &wr.figures;
    let g = f.ground_y_m;
    let lowest = wr.points.iter().fold(
        [f64::NAN, f64::MAX],
        |a, q| if q.xy[1] < a[1] { q.xy } else { a },
    );
    let highest =
        wr.points.iter().fold(
            [f64::NAN, f64::MIN],
            |a, q| if q.xy[1] > a[1] { q.xy } else { a },
        );
    let mut dimensions = Vec::new();
    if let Some(r) = f.reach_at_ground_m {
        dimensions.push(Dimension {
            from: (0.0, g),
            to: (r, g),
            label: format!("reach at ground {r:.2} m"),
        });
    }
    dimensions.push(Dimension {
        from: (lowest[0], g),
        to: (lowest[0], lowest[1]),
        label: format!("digging depth {:.2} m", f.digging_depth_m),
    });
    dimensions.push(Dimension {
        from: (highest[0], g),
        to: (highest[0], highest[1]),
        label: format!("cutting height {:.2} m", f.cutting_height_m),
    });
    if f.dump_x_m.is_finite() {
        dimensions.push(Dimension {
            from: (f.dump_x_m, g),
            to: (f.dump_x_m, g + f.dump_height_m),
            label: format!("dump height {:.2} m", f.dump_height_m),
        });
    }
    RangeDiagram {
        title: format!("{}: working range of {label}", model.name()),
        envelope: wr.envelope.iter().map(|p| (p[0], p[1])).collect(),
        ground_y: g,
        machine: machine_lines(model, &wr.front.plane, &wr.front.z0, point)
            .iter()
            .map(|l| [(l[0][0], l[0][1]), (l[1][0], l[1][1])])
            .collect(),
        dimensions,
    }
}
