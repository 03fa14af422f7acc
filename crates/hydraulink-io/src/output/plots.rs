//! The figures of a run (000 §6), drawn from the output rows as SVG.
//!
//! | file                       | columns                                          | y axis             |
//! |----------------------------|--------------------------------------------------|--------------------|
//! | `joint_coordinates.svg`    | every `<joint>.q`                                | \[rad or m\]       |
//! | `pressures.svg`            | every `<volume>.p`                               | \[MPa\]            |
//! | `energy.svg`               | `energy.kinetic/potential/actuator_work/friction_dissipated/drift` | \[J\] |
//! | `constraint_violation.svg` | `constraint.violation`                           | log scale when > 0 |
//! | `newton_iterations.svg`    | `newton.iterations` (steps only)                 | \[-\]              |
//! | `cylinders.svg`            | `<cyl>.length` above `<cyl>.force`               | \[m\], \[kN\]      |
//!
//! Every figure is written, with axes and a legend, even when the model has no column for it, so
//! that a run always leaves the same files. Non-finite values are left out of the lines. Text is
//! written as SVG `<text>` elements; no font is needed to draw it.

use std::ops::Range;
use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::OutputError;

/// The figure files, in the order they are written.
pub const PLOT_FILES: [&str; 6] = [
    "joint_coordinates.svg",
    "pressures.svg",
    "energy.svg",
    "constraint_violation.svg",
    "newton_iterations.svg",
    "cylinders.svg",
];

/// Size of a one-panel figure \[px\].
const FIGURE_PX: (u32, u32) = (1000, 600);
/// Size of a two-panel figure \[px\].
const TWO_PANEL_PX: (u32, u32) = (1000, 1000);
/// Line colours, in order (Tableau 10); more series cycle through them.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
/// Label of every time axis.
const TIME_AXIS: &str = "time [s]";

/// Writes every figure of [`PLOT_FILES`] into `dir` from the output rows `rows` (row-major,
/// `labels.len()` values each, `time` in the first column). Returns the files written.
pub fn write_plots(
    dir: &Path,
    labels: &[String],
    rows: &[f64],
) -> Result<Vec<PathBuf>, OutputError> {
    let table = Table { labels, rows };
    let energy = [
        ("energy.kinetic", "kinetic"),
        ("energy.potential", "potential"),
        ("energy.actuator_work", "actuator work"),
        ("energy.friction_dissipated", "friction work"),
        ("energy.drift", "drift"),
    ];
    let figures: [(&str, Vec<Panel>); 6] = [
        (
            PLOT_FILES[0],
            vec![Panel::linear(
                "Joint coordinates",
                "joint coordinate [rad or m]",
                table.series_with_suffix(".q", 1.0),
            )],
        ),
        (
            PLOT_FILES[1],
            vec![Panel::linear(
                "Pressures",
                "pressure [MPa]",
                table.series_with_suffix(".p", 1e-6),
            )],
        ),
        (
            PLOT_FILES[2],
            vec![Panel::linear(
                "Energy balance",
                "energy [J]",
                energy
                    .iter()
                    .filter_map(|&(label, name)| table.series(label, name, 1.0, 0))
                    .collect(),
            )],
        ),
        (
            PLOT_FILES[3],
            vec![Panel {
                title: "Constraint violation",
                y_label: "constraint violation ‖Φ‖",
                series: table
                    .series("constraint.violation", "‖Φ‖", 1.0, 0)
                    .into_iter()
                    .collect(),
                log_y: true,
            }],
        ),
        (
            PLOT_FILES[4],
            // The initial row has no Newton solve.
            vec![Panel::linear(
                "Newton iterations per step",
                "iterations [-]",
                table
                    .series("newton.iterations", "iterations", 1.0, 1)
                    .into_iter()
                    .collect(),
            )],
        ),
        (
            PLOT_FILES[5],
            vec![
                Panel::linear(
                    "Cylinder length",
                    "length [m]",
                    table.series_with_suffix(".length", 1.0),
                ),
                Panel::linear(
                    "Cylinder force",
                    "force [kN]",
                    table.series_with_suffix(".force", 1e-3),
                ),
            ],
        ),
    ];
    figures
        .iter()
        .map(|(file, panels)| {
            let path = dir.join(file);
            draw_figure(&path, panels).map_err(|message| OutputError::Plot {
                path: path.clone(),
                message,
            })?;
            Ok(path)
        })
        .collect()
}

/// Output rows with their labels.
struct Table<'a> {
    labels: &'a [String],
    /// Row-major values, `labels.len()` per row.
    rows: &'a [f64],
}

impl Table<'_> {
    /// The rows from `first_row` on.
    fn rows(&self, first_row: usize) -> impl Iterator<Item = &[f64]> {
        self.rows
            .chunks_exact(self.labels.len().max(1))
            .skip(first_row)
    }

    /// The column `label` scaled by `scale` against time, as the series `name`.
    fn series(&self, label: &str, name: &str, scale: f64, first_row: usize) -> Option<Series> {
        let column = self.labels.iter().position(|l| l == label)?;
        let points = self
            .rows(first_row)
            .map(|row| (row[0], scale * row[column]))
            .filter(|(t, v)| t.is_finite() && v.is_finite())
            .collect();
        Some(Series {
            name: name.to_string(),
            points,
        })
    }

    /// Every column whose label ends with `suffix`, named by the label without it.
    fn series_with_suffix(&self, suffix: &str, scale: f64) -> Vec<Series> {
        self.labels
            .iter()
            .filter_map(|label| {
                let name = label.strip_suffix(suffix)?;
                self.series(label, name, scale, 0)
            })
            .collect()
    }
}

/// One line of a chart.
struct Series {
    /// Legend entry.
    name: String,
    /// (time \[s\], value in display unit).
    points: Vec<(f64, f64)>,
}

/// One chart of a figure.
struct Panel {
    title: &'static str,
    y_label: &'static str,
    series: Vec<Series>,
    /// Log y axis when every plotted value can be positive; zeros and negatives are left out.
    log_y: bool,
}

impl Panel {
    fn linear(title: &'static str, y_label: &'static str, series: Vec<Series>) -> Self {
        Panel {
            title,
            y_label,
            series,
            log_y: false,
        }
    }
}

/// Draws `panels` one above the other into the SVG file `path`.
fn draw_figure(path: &Path, panels: &[Panel]) -> Result<(), String> {
    let size = if panels.len() > 1 {
        TWO_PANEL_PX
    } else {
        FIGURE_PX
    };
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    for (area, panel) in root.split_evenly((panels.len(), 1)).iter().zip(panels) {
        draw_panel(area, panel)?;
    }
    root.present().map_err(|e| e.to_string())
}

/// Draws one chart with axes, axis labels and a legend.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
) -> Result<(), String> {
    let points = || panel.series.iter().flat_map(|s| s.points.iter());
    let x_range = padded_range(points().map(|p| p.0), 0.0);
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(panel.title, ("sans-serif", 24))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(90);
    let positive = || points().map(|p| p.1).filter(|&v| v > 0.0);
    if panel.log_y && positive().next().is_some() {
        let (lo, hi) = positive().fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let y_label = format!("{} (log scale)", panel.y_label);
        let mut chart = builder
            .build_cartesian_2d(x_range, (lo / 2.0..hi * 2.0).log_scale())
            .map_err(|e| e.to_string())?;
        draw_lines(&mut chart, &y_label, &panel.series, true)
    } else {
        let y_range = padded_range(points().map(|p| p.1), 0.05);
        let mut chart = builder
            .build_cartesian_2d(x_range, y_range)
            .map_err(|e| e.to_string())?;
        draw_lines(&mut chart, panel.y_label, &panel.series, false)
    }
}

/// Draws the mesh, the lines and the legend. On a log axis (`log_y`), values ≤ 0 are left out
/// and the ticks are labelled `1e-9`.
fn draw_lines<'a, DB, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>,
    y_label: &str,
    series: &[Series],
    log_y: bool,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let power_of_ten = |v: &f64| format!("{v:.0e}");
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(TIME_AXIS)
        .y_desc(y_label)
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 14));
    if log_y {
        mesh.y_label_formatter(&power_of_ten);
    }
    mesh.draw().map_err(|e| e.to_string())?;
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let points = s.points.iter().copied().filter(|&(_, v)| !log_y || v > 0.0);
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    if !series.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 16))
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The range of the finite `values`, widened by `pad` of its width on each side; a single
/// value or no value gives a range of width 2 (or 2 |v| / 10) around it.
fn padded_range(values: impl Iterator<Item = f64>, pad: f64) -> Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return 0.0..1.0;
    }
    let width = hi - lo;
    if width > 0.0 {
        lo - pad * width..hi + pad * width
    } else {
        let half = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
        lo - half..hi + half
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::tests::temp_dir;

    fn labels() -> Vec<String> {
        [
            "time",
            "z1.q",
            "z2.q",
            "V1.p",
            "cyl.length",
            "cyl.force",
            "energy.kinetic",
            "energy.potential",
            "energy.actuator_work",
            "energy.drift",
            "constraint.violation",
            "newton.iterations",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn every_figure_has_axes_units_and_legend() {
        let dir = temp_dir("plots");
        std::fs::create_dir_all(&dir).unwrap();
        let labels = labels();
        let mut rows = Vec::new();
        for n in 0..50 {
            let t = n as f64 * 1e-3;
            let violation = if n == 0 { 0.0 } else { 1e-10 * (1.0 + t) };
            rows.extend([t, t, -t, 3.5e6, 1.4, 2e4, t, -t, t, 1e-6, violation, 3.0]);
        }
        let files = write_plots(&dir, &labels, &rows).unwrap();
        assert_eq!(files.len(), PLOT_FILES.len());
        let expected = [
            vec!["joint coordinate [rad or m]", "z1", "z2"],
            vec!["pressure [MPa]", "V1"],
            vec![
                "energy [J]",
                "kinetic",
                "potential",
                "actuator work",
                "drift",
            ],
            vec!["(log scale)", "‖Φ‖"],
            vec!["iterations [-]"],
            vec!["length [m]", "force [kN]", "cyl"],
        ];
        for (file, texts) in files.iter().zip(expected) {
            let svg = std::fs::read_to_string(file).unwrap();
            assert!(svg.contains("<svg"), "{}", file.display());
            assert!(svg.contains(TIME_AXIS), "{}", file.display());
            for text in texts {
                assert!(svg.contains(text), "{}: no '{text}'", file.display());
            }
        }
    }

    #[test]
    fn figures_without_columns_or_rows_are_still_written() {
        let dir = temp_dir("plots-empty");
        std::fs::create_dir_all(&dir).unwrap();
        let files = write_plots(&dir, &["time".to_string()], &[]).unwrap();
        for file in files {
            assert!(std::fs::read_to_string(file).unwrap().contains("<svg"));
        }
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(padded_range([].into_iter(), 0.05), 0.0..1.0);
        assert_eq!(padded_range([0.0, 0.0].into_iter(), 0.05), -1.0..1.0);
        assert_eq!(padded_range([2.0, f64::NAN].into_iter(), 0.0), 1.8..2.2);
        assert_eq!(padded_range([0.0, 10.0].into_iter(), 0.1), -1.0..11.0);
    }
}

/// One line of an overlay figure: legend entry and (time \[s\], value) points.
#[derive(Debug, Clone, PartialEq)]
pub struct OverlayLine {
    /// Legend entry.
    pub name: String,
    /// (time \[s\], value in the unit of the y axis).
    pub points: Vec<(f64, f64)>,
}

/// Writes a one-panel figure with several lines on a common time axis (the overlays of
/// `hydraulink compare`).
pub fn write_overlay(
    path: &Path,
    title: &str,
    y_label: &str,
    lines: &[OverlayLine],
) -> Result<(), OutputError> {
    let series: Vec<Series> = lines
        .iter()
        .map(|l| Series {
            name: l.name.clone(),
            points: l
                .points
                .iter()
                .copied()
                .filter(|p| p.1.is_finite())
                .collect(),
        })
        .collect();
    let draw = || -> Result<(), String> {
        let root = SVGBackend::new(path, FIGURE_PX).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let points = || series.iter().flat_map(|s| s.points.iter());
        let x_range = padded_range(points().map(|p| p.0), 0.0);
        let y_range = padded_range(points().map(|p| p.1), 0.05);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 24))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(90)
            .build_cartesian_2d(x_range, y_range)
            .map_err(|e| e.to_string())?;
        draw_lines(&mut chart, y_label, &series, false)?;
        root.present().map_err(|e| e.to_string())
    };
    draw().map_err(|message| OutputError::Plot {
        path: path.to_path_buf(),
        message,
    })
}
