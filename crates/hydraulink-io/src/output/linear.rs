//! Writers for `hydraulink linearize`: the state-space model with its names, and the pole map.
//!
//! ```text
//! DIR/linear_model.json   {"states", "inputs", "outputs", "A", "B", "C", "D" (row lists),
//!                          "eigenvalues": [{re, im, natural_frequency_hz, damping_ratio,
//!                                           time_constant_s, kind}] (damping_ratio null for a
//!                                           zero eigenvalue, time_constant_s null unless real
//!                                           and non-zero),
//!                          "mode_shapes": {"variables", "re", "im"}, "operating_point", …}
//!                          numpy: np.array(d["A"]);  MATLAB: d = jsondecode(fileread(...))
//! DIR/A.csv … D.csv       first row: "" then the column names; then one row per row name
//! DIR/poles.svg           pole map: Re λ against Im λ, the whole spectrum and a zoom on the
//!                          slow poles (below the widest gap in |λ|, `zoom_limit`)
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
                // null where not defined: ζ of a zero eigenvalue, τ of a complex or zero one
                "damping_ratio": m.damping_ratio.map_or(Value::Null, json_num),
                "time_constant_s": m.time_constant_s.map_or(Value::Null, json_num),
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

/// Smallest ratio between neighbouring non-zero |λ| that [`zoom_limit`] takes for a gap
/// between slow and fast poles.
pub const POLE_GAP: f64 = 3.0;

/// The |λ| [1/s] up to which the zoom panel of the pole map shows poles, from the non-zero
/// moduli `moduli` (zero eigenvalues are always shown). Sorted ascending, the moduli are cut at
/// their largest ratio between neighbours (the gap between the slow mechanical or spool modes
/// and the stiff hydraulic ones, often decades wide), at the geometric mean of the two sides.
/// Without a gap of [`POLE_GAP`] or more, the slower half is shown. `None` when all non-zero
/// moduli are equal, so nothing can be left out.
pub fn zoom_limit(moduli: &[f64]) -> Option<f64> {
    let mut r: Vec<f64> = moduli
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    r.sort_by(f64::total_cmp);
    r.dedup();
    let (i, ratio) = r
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i, w[1] / w[0]))
        .fold((0, 1.0), |best, x| if x.1 > best.1 { x } else { best });
    if ratio >= POLE_GAP {
        Some((r[i] * r[i + 1]).sqrt())
    } else if r.len() >= 2 {
        // the slower half: a limit between the middle modulus and the next
        let k = (r.len() - 1) / 2;
        Some(0.5 * (r[k] + r[k + 1]))
    } else {
        None
    }
}

/// Pole map: × for each eigenvalue (spurious zeros in red), left: all, right: the slow poles,
/// |λ| below [`zoom_limit`] (the caption gives the limit and how many poles it shows).
pub fn write_pole_map(path: &Path, modes: &[Mode], title: &str) -> Result<(), OutputError> {
    let draw = || -> Result<(), String> {
        let root = SVGBackend::new(path, (1200, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let root = root
            .titled(title, ("sans-serif", 22))
            .map_err(|e| e.to_string())?;
        let (left, right) = root.split_horizontally(600);
        let moduli: Vec<f64> = modes
            .iter()
            .filter(|m| !matches!(m.kind, ModeKind::Zero | ModeKind::SpuriousZero))
            .map(|m| m.value.norm())
            .collect();
        let zoom = zoom_limit(&moduli);
        // zero eigenvalues always; the others below the limit
        let within = |m: &Mode, limit: f64| {
            matches!(m.kind, ModeKind::Zero | ModeKind::SpuriousZero) || m.value.norm() < limit
        };
        let zoom_caption = match zoom {
            Some(l) => format!(
                "slow poles (zoom): |λ| < {l:.3e} 1/s, {} of {}",
                modes.iter().filter(|m| within(m, l)).count(),
                modes.len()
            ),
            None => "slow poles (zoom): all poles, no gap in |λ| to zoom in on".to_string(),
        };
        for (area, limit, caption) in [
            (&left, f64::INFINITY, "all poles".to_string()),
            (&right, zoom.unwrap_or(f64::INFINITY), zoom_caption),
        ] {
            let pts: Vec<&Mode> = modes.iter().filter(|m| within(m, limit)).collect();
            let xr = range(pts.iter().map(|m| m.value.re).chain([0.0]));
            let yr = range(pts.iter().map(|m| m.value.im).chain([0.0]));
            let mut chart = ChartBuilder::on(area)
                .caption(&caption, ("sans-serif", 18))
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

    /// The zoom cuts at the widest gap between neighbouring moduli (the four-bar's: the fast
    /// hydraulic pole 2.3e4 1/s against the slow ones up to 220 1/s), falls back to the slower
    /// half without a gap, and has nothing to cut when all moduli are one.
    #[test]
    fn zoom_limit_cuts_at_the_widest_gap() {
        let l = zoom_limit(&[21.97, 205.7, 219.9, 23061.0]).unwrap();
        assert!((l - (219.9_f64 * 23061.0).sqrt()).abs() < 1e-9 * l, "{l}");
        // a conjugate pair counts once; zeros and non-finite moduli are left out
        let l = zoom_limit(&[546.2, 546.2, 0.0, f64::NAN, 222.2, 1e5]).unwrap();
        assert!(546.2 < l && l < 1e5, "{l}");
        let l = zoom_limit(&[1.0, 1.5, 2.0, 2.5]).unwrap();
        assert!(1.5 < l && l < 2.0, "the slower half: {l}");
        assert_eq!(zoom_limit(&[3.0, 3.0]), None);
        assert_eq!(zoom_limit(&[]), None);
    }

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
