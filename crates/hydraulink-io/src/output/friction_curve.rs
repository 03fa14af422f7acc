//! The friction–velocity characteristic of one friction element (`hydraulink friction-curve`,
//! 003 Pub II Fig. 9): `<element>_friction_steady.csv` (v, F_μ), `<element>_friction_sweep.csv`
//! (t, v, F_μ, states) and `<element>_friction.svg` with both curves over v.

use std::io::Write;
use std::path::{Path, PathBuf};

use hydraulink::elements::friction::curve::SweepSample;
use plotters::prelude::*;

use super::OutputError;

/// Writes the CSV files and the figure into `dir` (created if missing); returns the files.
pub fn write_friction_curve(
    dir: &Path,
    element: &str,
    law: &str,
    state_names: &[&str],
    steady: &[[f64; 2]],
    sweep: &[SweepSample],
) -> Result<Vec<PathBuf>, OutputError> {
    std::fs::create_dir_all(dir).map_err(|e| OutputError::io(dir, e))?;
    let steady_path = dir.join(format!("{element}_friction_steady.csv"));
    let sweep_path = dir.join(format!("{element}_friction_sweep.csv"));
    let svg_path = dir.join(format!("{element}_friction.svg"));
    let mut text = String::from("velocity_m_s,friction_n\n");
    for [v, f] in steady {
        text.push_str(&format!("{v},{f}\n"));
    }
    write_file(&steady_path, &text)?;
    let mut text = String::from("time_s,velocity_m_s,friction_n");
    for s in state_names {
        text.push_str(&format!(",{s}"));
    }
    text.push('\n');
    for s in sweep {
        text.push_str(&format!("{},{},{}", s.t, s.v, s.force));
        for w in &s.states[..state_names.len()] {
            text.push_str(&format!(",{w}"));
        }
        text.push('\n');
    }
    write_file(&sweep_path, &text)?;
    draw(&svg_path, element, law, steady, sweep).map_err(|message| OutputError::Plot {
        path: svg_path.clone(),
        message,
    })?;
    Ok(vec![steady_path, sweep_path, svg_path])
}

fn write_file(path: &Path, text: &str) -> Result<(), OutputError> {
    let mut f = std::fs::File::create(path).map_err(|e| OutputError::io(path, e))?;
    f.write_all(text.as_bytes())
        .map_err(|e| OutputError::io(path, e))
}

fn draw(
    path: &Path,
    element: &str,
    law: &str,
    steady: &[[f64; 2]],
    sweep: &[SweepSample],
) -> Result<(), String> {
    let root = SVGBackend::new(path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let xs = steady.iter().map(|p| p[0]).chain(sweep.iter().map(|s| s.v));
    let ys = steady
        .iter()
        .map(|p| p[1])
        .chain(sweep.iter().map(|s| s.force));
    let range = |it: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = it
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        if lo < hi {
            let pad = 0.05 * (hi - lo);
            (lo - pad)..(hi + pad)
        } else if lo.is_finite() {
            (lo - 1.0)..(lo + 1.0)
        } else {
            -1.0..1.0
        }
    };
    let (xr, yr) = (range(&mut xs.clone()), range(&mut ys.clone()));
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{element}: {law} friction"), ("sans-serif", 24))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(90)
        .build_cartesian_2d(xr, yr)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("velocity [m/s]")
        .y_desc("friction force [N]")
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| e.to_string())?;
    let blue = RGBColor(31, 119, 180);
    let orange = RGBColor(255, 127, 14);
    chart
        .draw_series(LineSeries::new(
            steady.iter().map(|p| (p[0], p[1])),
            blue.stroke_width(2),
        ))
        .map_err(|e| e.to_string())?
        .label("steady state")
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], blue.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(
            sweep.iter().map(|s| (s.v, s.force)),
            orange.stroke_width(2),
        ))
        .map_err(|e| e.to_string())?
        .label("sinusoidal sweep")
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], orange.stroke_width(2)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}
