//! Writers for `hydraulink linearize`: the state-space model with its names, and the pole map.
//!
//! ```text
//! DIR/linear_model.json   {"states", "inputs", "outputs", "A", "B", "C", "D" (row lists),
//!                          "eigenvalues": [{re, im, natural_frequency_hz, damping_ratio, kind}],
//!                          "mode_shapes": {"variables", "re", "im"}, "operating_point", …}
//!                          numpy: np.array(d["A"]);  MATLAB: d = jsondecode(fileread(...))
//! DIR/A.csv … D.csv       first row: "" then the column names; then one row per row name
//! DIR/poles.svg           pole map: Re λ against Im λ, the whole spectrum and a zoom on the
//!                          slow poles
//! ```

use std::fs;
use std::path::Path;

use hydraulink::linearize::eigen::{Mode, ModeKind};
use hydraulink::linearize::StateSpace;
use nalgebra::DMatrix;
use plotters::prelude::*;
use serde_json::{json, Value};

use super::plots::tick_label;
use super::OutputError;

fn rows(m: &DMatrix<f64>) -> Value {
    Value::Array(
        (0..m.nrows())
            .map(|i| Value::Array((0..m.ncols()).map(|j| json_num(m[(i, j)])).collect()))
            .collect(),
    )
}

fn json_num(x: f64) -> Value {
    serde_json::Number::from_f64(x)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// The JSON document of a linear model (see the module doc); `extra` is merged in at the top
/// level (method, operating point, …).
pub fn state_space_json(
    ss: &StateSpace,
    modes: &[Mode],
    full_names: &[String],
    extra: Value,
) -> Value {
    let eig: Vec<Value> = modes
        .iter()
        .map(|m| {
            json!({
                "re": json_num(m.value.re),
                "im": json_num(m.value.im),
                "natural_frequency_hz": json_num(m.natural_frequency_hz),
                "damping_ratio": json_num(m.damping_ratio),
                "time_constant_s": json_num(m.time_constant_s),
                "kind": m.kind.label(),
            })
        })
        .collect();
    let shapes_re: Vec<Value> = modes
        .iter()
        .map(|m| Value::Array(m.full_shape.iter().map(|c| json_num(c.re)).collect()))
        .collect();
    let shapes_im: Vec<Value> = modes
        .iter()
        .map(|m| Value::Array(m.full_shape.iter().map(|c| json_num(c.im)).collect()))
        .collect();
    let mut doc = json!({
        "states": ss.states,
        "inputs": ss.inputs,
        "outputs": ss.outputs,
        "A": rows(&ss.a),
        "B": rows(&ss.b),
        "C": rows(&ss.c),
        "D": rows(&ss.d),
        "to_full": rows(&ss.to_full),
        "full_variables": full_names,
        "eigenvalues": eig,
        "mode_shapes": {"variables": full_names, "re": shapes_re, "im": shapes_im},
        "n_spurious_zero": ss.n_spurious_zero,
    });
    if let (Value::Object(d), Value::Object(e)) = (&mut doc, extra) {
        d.extend(e);
    }
    doc
}

/// A matrix as CSV with row and column names (shortest round-trip numbers).
pub fn matrix_csv(m: &DMatrix<f64>, row_names: &[String], col_names: &[String]) -> String {
    let mut s = String::from("\"\"");
    for c in col_names {
        s.push_str(&format!(",\"{c}\""));
    }
    s.push('\n');
    for (i, r) in row_names.iter().enumerate() {
        s.push_str(&format!("\"{r}\""));
        for j in 0..m.ncols() {
            s.push_str(&format!(",{:?}", m[(i, j)]));
        }
        s.push('\n');
    }
    s
}

fn write(path: &Path, text: &str) -> Result<(), OutputError> {
    fs::write(path, text).map_err(|e| OutputError::io(path, e))
}

/// Writes linear_model.json, A.csv, B.csv, C.csv, D.csv and poles.svg into `dir`.
pub fn write_linear_model(
    dir: &Path,
    ss: &StateSpace,
    modes: &[Mode],
    full_names: &[String],
    extra: Value,
    title: &str,
) -> Result<(), OutputError> {
    fs::create_dir_all(dir).map_err(|e| OutputError::io(dir, e))?;
    let doc = state_space_json(ss, modes, full_names, extra);
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    write(&dir.join("linear_model.json"), &text)?;
    write(
        &dir.join("A.csv"),
        &matrix_csv(&ss.a, &ss.states, &ss.states),
    )?;
    write(
        &dir.join("B.csv"),
        &matrix_csv(&ss.b, &ss.states, &ss.inputs),
    )?;
    write(
        &dir.join("C.csv"),
        &matrix_csv(&ss.c, &ss.outputs, &ss.states),
    )?;
    write(
        &dir.join("D.csv"),
        &matrix_csv(&ss.d, &ss.outputs, &ss.inputs),
    )?;
    write_pole_map(&dir.join("poles.svg"), modes, title)
}

fn range(vals: impl Iterator<Item = f64> + Clone) -> std::ops::Range<f64> {
    let lo = vals.clone().fold(f64::INFINITY, f64::min);
    let hi = vals.fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return -1.0..1.0;
    }
    let span = (hi - lo).max(1e-9 * hi.abs().max(lo.abs())).max(1e-12);
    (lo - 0.08 * span)..(hi + 0.08 * span)
}

/// Pole map: × for each eigenvalue (spurious zeros as ○), left: all, right: |λ| below the
/// median non-zero modulus × 10 (the slow, lightly damped poles).
pub fn write_pole_map(path: &Path, modes: &[Mode], title: &str) -> Result<(), OutputError> {
    let draw = || -> Result<(), String> {
        let root = SVGBackend::new(path, (1200, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let root = root
            .titled(title, ("sans-serif", 22))
            .map_err(|e| e.to_string())?;
        let (left, right) = root.split_horizontally(600);
        let mut nz: Vec<f64> = modes
            .iter()
            .map(|m| m.value.norm())
            .filter(|&r| r > 0.0)
            .collect();
        nz.sort_by(f64::total_cmp);
        let zoom = nz.get(nz.len() / 2).copied().unwrap_or(1.0) * 10.0;
        for (area, limit, caption) in [
            (&left, f64::INFINITY, "all poles"),
            (&right, zoom, "slow poles (zoom)"),
        ] {
            let pts: Vec<&Mode> = modes.iter().filter(|m| m.value.norm() <= limit).collect();
            let xr = range(pts.iter().map(|m| m.value.re).chain([0.0]));
            let yr = range(pts.iter().map(|m| m.value.im).chain([0.0]));
            let mut chart = ChartBuilder::on(area)
                .caption(caption, ("sans-serif", 18))
                .margin(12)
                .x_label_area_size(45)
                .y_label_area_size(80)
                .build_cartesian_2d(xr.clone(), yr.clone())
                .map_err(|e| e.to_string())?;
            // ticks with the decimals their spacing needs (they all read 0.0 before)
            let x_ticks = |v: &f64| tick_label(*v, &xr);
            let y_ticks = |v: &f64| tick_label(*v, &yr);
            chart
                .configure_mesh()
                .x_desc("Re λ [1/s]")
                .y_desc("Im λ [1/s]")
                .x_label_formatter(&x_ticks)
                .y_label_formatter(&y_ticks)
                .draw()
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(pts.iter().map(|m| {
                    let c = (m.value.re, m.value.im);
                    let style = if m.kind == ModeKind::SpuriousZero {
                        RED.stroke_width(2)
                    } else {
                        BLUE.stroke_width(2)
                    };
                    Cross::new(c, 7, style)
                }))
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())
    };
    draw().map_err(|message| OutputError::Plot {
        path: path.to_path_buf(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_names_and_round_trip_numbers() {
        let m = DMatrix::from_row_slice(2, 2, &[1.0, 0.1, -2.5e9, 0.0]);
        let names = vec!["a".to_string(), "b".to_string()];
        let s = matrix_csv(&m, &names, &names);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "\"\",\"a\",\"b\"");
        assert_eq!(lines[1], "\"a\",1.0,0.1");
        assert_eq!(lines[2], "\"b\",-2500000000.0,0.0");
    }
}
