//! The figures of a run (000 §6), drawn as SVG from the run's plot copy ([`Decimated`]: the
//! minimum and maximum of each column per pixel column), so that a figure's size does not grow
//! with the run's length.
//!
//! | file                       | columns (legend = column name)                    | y axes               |
//! |----------------------------|---------------------------------------------------|----------------------|
//! | `joint_coordinates.svg`    | every `<joint>.q`: angles, then positions         | \[deg\], \[m\]       |
//! | `pressures.svg`            | every pressure `<volume>.p`                       | \[MPa\]              |
//! | `flows.svg`                | 4/3 and bridge valve flows above every other column in m³/s (pump, relief, check, motor flows); lines at zero throughout listed, not drawn; legend beside the chart | \[L/min\], \[L/min\] |
//! | `energy.svg`               | `energy.kinetic/potential/actuator_work/friction_dissipated`, then `energy.drift` | \[J\], \[J\] |
//! | `constraint_violation.svg` | `constraint.violation`                            | log scale when > 0   |
//! | `newton_iterations.svg`    | `newton.iterations` (steps only)                  | \[-\]                |
//! | `cylinders.svg`            | `<cyl>.length` above `<cyl>.force`                | \[m\], \[kN\]        |
//!
//! A panel with no column is left out, and a figure with no panel is not written (a stale file
//! of that name from an earlier run is removed). Non-finite values are left out of the lines.
//! Tick labels carry as many decimals as the tick spacing needs. Text is written as SVG
//! `<text>` elements; no font is needed to draw it.

use std::ops::Range;
use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::columns::ColumnInfo;
use super::decimate::{decimate_points, Decimated};
use super::svg_lines::LineSvg;
use super::OutputError;

/// Every figure file a run can write, in the order they are written.
pub const PLOT_FILES: [&str; 7] = [
    "joint_coordinates.svg",
    "pressures.svg",
    "flows.svg",
    "energy.svg",
    "constraint_violation.svg",
    "newton_iterations.svg",
    "cylinders.svg",
];

/// Most points drawn in one figure, over all its lines: bounds the SVG size (about 10 bytes a
/// point) whatever the run's length.
pub const MAX_POINTS_PER_FIGURE: usize = 12_000;

/// Size of a one-panel figure \[px\].
const FIGURE_PX: (u32, u32) = (1000, 600);
/// Height of each panel of a figure with more than one \[px\].
const PANEL_PX: u32 = 500;
/// Line colours, in order (Tableau 10, the dark half of [`COLORS_20`]); more series cycle
/// through them.
const COLORS: &[RGBColor] = COLORS_20.split_at(10).0;
/// Line colours of a panel with its legend beside it (Tableau 20: ten hues, dark then light).
const COLORS_20: [RGBColor; 20] = [
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
    RGBColor(174, 199, 232),
    RGBColor(255, 187, 120),
    RGBColor(152, 223, 138),
    RGBColor(255, 152, 150),
    RGBColor(197, 176, 213),
    RGBColor(196, 156, 148),
    RGBColor(247, 182, 210),
    RGBColor(199, 199, 199),
    RGBColor(219, 219, 141),
    RGBColor(158, 218, 229),
];
/// Width of the legend column beside a chart that has one \[px\].
const SIDE_LEGEND_PX: u32 = 260;
/// Label of every time axis.
const TIME_AXIS: &str = "time [s]";

/// Which columns a panel draws, and how.
struct PanelSpec {
    title: &'static str,
    y_label: &'static str,
    /// Picks a column by its name and unit.
    pick: fn(&ColumnInfo) -> bool,
    /// Display value = scale × SI value.
    scale: f64,
    log_y: bool,
}

impl PanelSpec {
    const fn linear(
        title: &'static str,
        y_label: &'static str,
        pick: fn(&ColumnInfo) -> bool,
        scale: f64,
    ) -> Self {
        PanelSpec {
            title,
            y_label,
            pick,
            scale,
            log_y: false,
        }
    }
}

fn is_energy_term(c: &ColumnInfo) -> bool {
    [
        "energy.kinetic",
        "energy.potential",
        "energy.actuator_work",
        "energy.friction_dissipated",
    ]
    .contains(&c.name.as_str())
}

/// A directional valve's port flow (`<valve>.flow_a`, `.flow_b`).
fn is_valve_flow(c: &ColumnInfo) -> bool {
    c.unit == "m^3/s" && (c.name.ends_with(".flow_a") || c.name.ends_with(".flow_b"))
}

/// The panels of each file of [`PLOT_FILES`].
fn figure_specs() -> [(&'static str, Vec<PanelSpec>); 7] {
    [
        (
            PLOT_FILES[0],
            vec![
                PanelSpec::linear(
                    "Joint angles",
                    "angle [deg]",
                    |c| c.name.ends_with(".q") && c.unit == "rad",
                    180.0 / std::f64::consts::PI,
                ),
                PanelSpec::linear(
                    "Joint positions",
                    "position [m]",
                    |c| c.name.ends_with(".q") && c.unit == "m",
                    1.0,
                ),
            ],
        ),
        (
            PLOT_FILES[1],
            vec![PanelSpec::linear(
                "Pressures",
                "pressure [MPa]",
                |c| c.name.ends_with(".p") && c.unit == "Pa",
                1e-6,
            )],
        ),
        (
            PLOT_FILES[2],
            vec![
                PanelSpec::linear("Valve flows", "flow [L/min]", is_valve_flow, 6e4),
                PanelSpec::linear(
                    "Pump, relief, check, motor and other flows",
                    "flow [L/min]",
                    |c| c.unit == "m^3/s" && !is_valve_flow(c),
                    6e4,
                ),
            ],
        ),
        (
            PLOT_FILES[3],
            vec![
                PanelSpec::linear("Energy balance", "energy [J]", is_energy_term, 1.0),
                PanelSpec::linear(
                    "Energy drift",
                    "drift [J]",
                    |c| c.name == "energy.drift",
                    1.0,
                ),
            ],
        ),
        (
            PLOT_FILES[4],
            vec![PanelSpec {
                title: "Constraint violation",
                y_label: "constraint violation ‖Φ‖",
                pick: |c| c.name == "constraint.violation",
                scale: 1.0,
                log_y: true,
            }],
        ),
        (
            PLOT_FILES[5],
            vec![PanelSpec::linear(
                "Newton iterations per step",
                "iterations [-]",
                |c| c.name == "newton.iterations",
                1.0,
            )],
        ),
        (
            PLOT_FILES[6],
            vec![
                PanelSpec::linear(
                    "Cylinder length",
                    "length [m]",
                    |c| c.name.ends_with(".length") && c.unit == "m",
                    1.0,
                ),
                PanelSpec::linear(
                    "Cylinder force",
                    "force [kN]",
                    |c| c.name.ends_with(".force") && c.unit == "N",
                    1e-3,
                ),
            ],
        ),
    ]
}

/// Writes the figures of [`PLOT_FILES`] that have data into `dir`, from the plot copy `data`
/// of a table laid out as `columns` (`time` first). A figure with no column is not written,
/// and a file of its name left from an earlier run is removed. Returns the files written.
pub fn write_plots(
    dir: &Path,
    columns: &[ColumnInfo],
    data: &Decimated,
) -> Result<Vec<PathBuf>, OutputError> {
    // the figures are built here and drawn below, two at a time
    let mut jobs: Vec<(PathBuf, Vec<Panel>)> = Vec::new();
    for (file, specs) in figure_specs() {
        let path = dir.join(file);
        let picked: Vec<(&PanelSpec, Vec<usize>)> = specs
            .iter()
            .map(|s| {
                let cols = (1..columns.len())
                    .filter(|&i| (s.pick)(&columns[i]))
                    .collect();
                (s, cols)
            })
            .filter(|(_, cols): &(_, Vec<usize>)| !cols.is_empty())
            .collect();
        if picked.is_empty() {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(OutputError::io(&path, e)),
            }
            continue;
        }
        let n_lines: usize = picked.iter().map(|(_, cols)| cols.len()).sum();
        let max_points = MAX_POINTS_PER_FIGURE / n_lines.max(1);
        // the flows of a machine are many, and many stay at zero (make-up checks, reliefs):
        // those are listed instead of drawn, and the legend goes beside the chart
        let side_legend = file == "flows.svg";
        let panels: Vec<Panel> = picked
            .iter()
            .map(|(spec, cols)| {
                let mut series: Vec<Series> = cols
                    .iter()
                    .map(|&i| Series {
                        name: columns[i].name.clone(),
                        points: data
                            .series(i, max_points)
                            .into_iter()
                            .map(|(t, v)| (t, spec.scale * v))
                            .collect(),
                    })
                    .collect();
                let mut at_zero = Vec::new();
                if side_legend {
                    let (zero, drawn): (Vec<Series>, Vec<Series>) = series
                        .into_iter()
                        .partition(|s| s.points.iter().all(|&(_, v)| v == 0.0));
                    at_zero = zero.into_iter().map(|s| s.name).collect();
                    series = drawn;
                }
                Panel {
                    title: spec.title.to_string(),
                    y_label: spec.y_label.to_string(),
                    log_y: spec.log_y,
                    series,
                    side_legend,
                    at_zero,
                }
            })
            .collect();
        jobs.push((path, panels));
    }
    let drawn = draw_figures(&jobs);
    let mut written = Vec::new();
    for ((path, _), result) in jobs.into_iter().zip(drawn) {
        result.map_err(|message| OutputError::Plot {
            path: path.clone(),
            message,
        })?;
        written.push(path);
    }
    Ok(written)
}

/// Draws every figure of `jobs` (file, panels), on this thread and one more (the figures are
/// independent; the SVG text of the lines is most of a run's writing time after the CSV). The
/// results are in the order of `jobs`.
fn draw_figures(jobs: &[(PathBuf, Vec<Panel>)]) -> Vec<Result<(), String>> {
    let draw = |(path, panels): &(PathBuf, Vec<Panel>)| draw_figure(path, panels);
    if jobs.len() < 2 {
        return jobs.iter().map(draw).collect();
    }
    // the other thread takes every second figure
    std::thread::scope(|scope| {
        let other = scope.spawn(|| jobs.iter().skip(1).step_by(2).map(draw).collect::<Vec<_>>());
        let mine: Vec<_> = jobs.iter().step_by(2).map(draw).collect();
        let theirs = other.join().unwrap_or_else(|_| {
            vec![Err("the drawing thread panicked".to_string()); jobs.len() / 2]
        });
        let (mut mine, mut theirs) = (mine.into_iter(), theirs.into_iter());
        (0..jobs.len())
            .map(|i| {
                let next = if i % 2 == 0 {
                    mine.next()
                } else {
                    theirs.next()
                };
                next.unwrap_or_else(|| Err("figure not drawn".to_string()))
            })
            .collect()
    })
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
    title: String,
    y_label: String,
    series: Vec<Series>,
    /// Log y axis when every plotted value can be positive; zeros and negatives are left out.
    log_y: bool,
    /// Legend in a column beside the chart instead of over it, colours from [`COLORS_20`].
    side_legend: bool,
    /// Columns left out because they are zero throughout (listed in the side legend).
    at_zero: Vec<String>,
}

/// Draws `panels` one above the other into the SVG file `path`.
fn draw_figure(path: &Path, panels: &[Panel]) -> Result<(), String> {
    let size = if panels.len() > 1 {
        (FIGURE_PX.0, PANEL_PX * panels.len() as u32)
    } else {
        FIGURE_PX
    };
    // plotters' SVG text, its lines written faster and thinned (svg_lines.rs)
    let mut svg = Vec::new();
    {
        let root = LineSvg::new(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        for (area, panel) in root.split_evenly((panels.len(), 1)).iter().zip(panels) {
            draw_panel(area, panel)?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    // an earlier run's figure is removed, not truncated
    super::remove_earlier(path);
    std::fs::write(path, svg).map_err(|e| e.to_string())
}

/// Draws one chart with axes, axis labels and a legend.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
) -> Result<(), String> {
    let points = || panel.series.iter().flat_map(|s| s.points.iter());
    let x_range = padded_range(points().map(|p| p.0), 0.0);
    let (chart_area, legend_area) = if panel.side_legend {
        let (w, _) = area.dim_in_pixel();
        let (chart, legend) = area.split_horizontally(w.saturating_sub(SIDE_LEGEND_PX));
        (chart, Some(legend))
    } else {
        (area.clone(), None)
    };
    if let Some(legend) = &legend_area {
        draw_side_legend(legend, panel)?;
    }
    let area = &chart_area;
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(panel.title.as_str(), ("sans-serif", 24))
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
        draw_lines(&mut chart, &y_label, &panel.series, None, panel.side_legend)
    } else {
        let y_range = padded_range(points().map(|p| p.1), 0.05);
        let mut chart = builder
            .build_cartesian_2d(x_range, y_range.clone())
            .map_err(|e| e.to_string())?;
        draw_lines(
            &mut chart,
            &panel.y_label,
            &panel.series,
            Some(y_range),
            panel.side_legend,
        )
    }
}

/// Colour of line `i` of a panel: [`COLORS`], or [`COLORS_20`] for a panel with its legend
/// beside it (up to 20 lines with a colour each).
fn line_color(i: usize, side_legend: bool) -> RGBColor {
    if side_legend {
        COLORS_20[i % COLORS_20.len()]
    } else {
        COLORS[i % COLORS.len()]
    }
}

/// The legend of `panel` in its own column `area` beside the chart: one row per drawn line,
/// then the columns left out because they are zero throughout, as many as fit.
fn draw_side_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
) -> Result<(), String> {
    const ROW: i32 = 17;
    let (_, h) = area.dim_in_pixel();
    let rows = ((h as i32 - 60) / ROW).max(1) as usize;
    let mut lines: Vec<(Option<RGBColor>, String)> = panel
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (Some(line_color(i, true)), s.name.clone()))
        .collect();
    if !panel.at_zero.is_empty() {
        lines.push((None, "zero throughout (not drawn):".to_string()));
        lines.extend(panel.at_zero.iter().map(|n| (None, format!("  {n}"))));
    }
    if lines.len() > rows {
        let more = lines.len() - (rows - 1);
        lines.truncate(rows - 1);
        lines.push((None, format!("… and {more} more")));
    }
    let font = ("sans-serif", 13).into_font();
    for (k, (color, text)) in lines.iter().enumerate() {
        let y = 50 + ROW * k as i32;
        let style = match color {
            Some(c) => {
                area.draw(&PathElement::new([(8, y), (32, y)], c.stroke_width(2)))
                    .map_err(|e| e.to_string())?;
                font.color(&BLACK)
            }
            None => font.color(&RGBColor(90, 90, 90)),
        };
        area.draw(&Text::new(text.as_str(), (38, y - 7), style))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Draws the mesh, the lines and the legend. `linear_y` is the range of a linear y axis, whose
/// ticks get as many decimals as their spacing needs; on a log axis (`None`), values ≤ 0 are
/// left out and the ticks are labelled `1e-9`. With `side_legend` the lines take
/// [`COLORS_20`] and the legend is left to [`draw_side_legend`].
fn draw_lines<'a, DB, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>,
    y_label: &str,
    series: &[Series],
    linear_y: Option<Range<f64>>,
    side_legend: bool,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let log_y = linear_y.is_none();
    let power_of_ten = |v: &f64| format!("{v:.0e}");
    let x_range = chart.x_range();
    let x_ticks = |v: &f64| tick_label(*v, &x_range);
    let y_range = linear_y.unwrap_or(0.0..1.0);
    let y_ticks = |v: &f64| tick_label(*v, &y_range);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(TIME_AXIS)
        .y_desc(y_label)
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 14))
        .x_label_formatter(&x_ticks);
    if log_y {
        mesh.y_label_formatter(&power_of_ten);
    } else {
        mesh.y_label_formatter(&y_ticks);
    }
    mesh.draw().map_err(|e| e.to_string())?;
    for (i, s) in series.iter().enumerate() {
        let color = line_color(i, side_legend);
        let points = s.points.iter().copied().filter(|&(_, v)| !log_y || v > 0.0);
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    if !series.is_empty() && !side_legend {
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

/// The label of tick `v` on an axis spanning `range`, about ten ticks: one decimal more than
/// the tick spacing needs, trailing zeros dropped (`0.25`, `1200`), in exponent notation
/// (`1.5e-6`, `2.5e7`) when the values are very small or very large, so that neighbouring ticks
/// never read the same.
pub(crate) fn tick_label(v: f64, range: &Range<f64>) -> String {
    let span = (range.end - range.start).abs();
    let magnitude = range.start.abs().max(range.end.abs());
    if !span.is_finite() || span <= 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    if v.abs() < 1e-9 * span {
        // a tick at zero that the tick arithmetic left at 1e-29
        return "0".to_string();
    }
    // tick spacing ~ span / 10, rounded down to a power of ten
    let step_exp = (span / 10.0).log10().floor() as i32;
    let mag_exp = magnitude.log10().floor() as i32;
    if !(-3..6).contains(&mag_exp) || step_exp < -4 {
        // significant digits: from the magnitude down to the step, and one more
        let digits = (mag_exp - step_exp + 1).clamp(0, 15) as usize;
        let text = format!("{v:.digits$e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        return format!("{}e{exponent}", trim_zeros(mantissa));
    }
    let decimals = (1 - step_exp).max(0) as usize;
    let text = trim_zeros(&format!("{v:.decimals$}"));
    // no "-0"
    if text == "-0" {
        "0".to_string()
    } else {
        text
    }
}

/// `1.2500` → `1.25`, `3.000` → `3`, `120` → `120`.
fn trim_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text.to_string()
    }
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
    use crate::output::PLOT_BUCKETS;

    fn columns() -> Vec<ColumnInfo> {
        [
            ("time", "s"),
            ("z1.q", "rad"),
            ("z2.q", "m"),
            ("V1.p", "Pa"),
            ("cyl.length", "m"),
            ("cyl.force", "N"),
            ("energy.kinetic", "J"),
            ("energy.potential", "J"),
            ("energy.actuator_work", "J"),
            ("energy.drift", "J"),
            ("constraint.violation", "m or -"),
            ("newton.iterations", "-"),
        ]
        .map(|(n, u)| ColumnInfo::new(n, u, ""))
        .to_vec()
    }

    #[test]
    fn every_figure_has_axes_units_legend_named_like_the_columns() {
        let dir = temp_dir("plots");
        std::fs::create_dir_all(&dir).unwrap();
        let columns = columns();
        let mut data = Decimated::new(columns.len(), 0.05, PLOT_BUCKETS);
        for n in 0..50 {
            let t = n as f64 * 1e-3;
            let violation = if n == 0 { 0.0 } else { 1e-10 * (1.0 + t) };
            data.push(&[t, t, -t, 3.5e6, 1.4, 2e4, t, -t, t, 1e-6, violation, 3.0]);
        }
        // a stale figure of an earlier run, which this one has no column for
        std::fs::write(dir.join("flows.svg"), "old").unwrap();
        let files = write_plots(&dir, &columns, &data).unwrap();
        assert!(!dir.join("flows.svg").exists(), "no empty figure");
        let expected = [
            (
                "joint_coordinates.svg",
                vec!["angle [deg]", "position [m]", "z1.q", "z2.q"],
            ),
            ("pressures.svg", vec!["pressure [MPa]", "V1.p"]),
            (
                "energy.svg",
                vec!["energy [J]", "drift [J]", "energy.kinetic", "energy.drift"],
            ),
            (
                "constraint_violation.svg",
                vec!["(log scale)", "constraint.violation"],
            ),
            ("newton_iterations.svg", vec!["iterations [-]"]),
            (
                "cylinders.svg",
                vec!["length [m]", "force [kN]", "cyl.length"],
            ),
        ];
        assert_eq!(files.len(), expected.len());
        for (file, texts) in expected {
            let svg = std::fs::read_to_string(dir.join(file)).unwrap();
            assert!(svg.contains(TIME_AXIS), "{file}");
            for text in texts {
                assert!(svg.contains(text), "{file}: no '{text}'");
            }
        }
    }

    /// The flows figure of a machine (issue 11, newcomer test: 22 lines on 10 repeating colours
    /// under the legend): valve flows above the others, each line its own colour, the legend
    /// beside the chart, and the columns at zero throughout listed there instead of drawn.
    #[test]
    fn flows_split_by_kind_with_the_legend_beside_and_zero_lines_listed() {
        let dir = temp_dir("flows");
        std::fs::create_dir_all(&dir).unwrap();
        let mut columns = vec![ColumnInfo::new("time", "s", "")];
        let mut names = vec!["DCV.flow_a".to_string(), "DCV.flow_b".to_string()];
        names.extend((0..14).map(|k| format!("relief{k}.flow")));
        names.push("makeup.flow".to_string());
        columns.extend(names.iter().map(|n| ColumnInfo::new(n, "m^3/s", "")));
        let mut data = Decimated::new(columns.len(), 0.05, PLOT_BUCKETS);
        for n in 0..50 {
            let t = n as f64 * 1e-3;
            let mut row = vec![t];
            // every flow moves but the make-up check's
            row.extend((0..names.len() - 1).map(|k| (k as f64 + 1.0) * 1e-4 * t));
            row.push(0.0);
            data.push(&row);
        }
        write_plots(&dir, &columns, &data).unwrap();
        let svg = std::fs::read_to_string(dir.join("flows.svg")).unwrap();
        assert!(svg.contains("Valve flows") && svg.contains("Pump, relief, check"));
        assert!(svg.contains("zero throughout (not drawn):") && svg.contains("makeup.flow"));
        // 14 drawn lines in the second panel, each its own colour of the 20
        for color in &COLORS_20[..14] {
            let hex = format!("#{:02X}{:02X}{:02X}", color.0, color.1, color.2);
            assert!(svg.to_uppercase().contains(&hex), "no line in {hex}");
        }
        // no legend box over the chart (plotters draws it with a black border)
        assert!(
            !svg.contains("opacity=\"0.85\""),
            "a legend box over the data"
        );
    }

    #[test]
    fn figures_without_columns_are_not_written() {
        let dir = temp_dir("plots-empty");
        std::fs::create_dir_all(&dir).unwrap();
        let data = Decimated::new(1, 1.0, 10);
        let files = write_plots(&dir, &[ColumnInfo::new("time", "s", "")], &data).unwrap();
        assert!(files.is_empty());
    }

    /// Neighbouring ticks never read the same, however small the span (poles.svg read 0.0 on
    /// every tick).
    #[test]
    fn tick_labels_are_distinct() {
        for (lo, hi) in [
            (0.0, 1.0),
            (-2000.0, 1500.0),
            (1.0, 1.0 + 1e-9),
            (-3e-7, 2e-7),
            (3.4e6, 3.6e6),
            (0.0, 10.0),
            (-0.05, 0.0),
        ] {
            let range = lo..hi;
            let labels: Vec<String> = (0..=10)
                .map(|k| tick_label(lo + (hi - lo) * k as f64 / 10.0, &range))
                .collect();
            for w in labels.windows(2) {
                assert_ne!(w[0], w[1], "{lo}..{hi}: {labels:?}");
            }
        }
        assert_eq!(tick_label(0.25, &(0.0..1.0)), "0.25");
        assert_eq!(tick_label(-1500.0, &(-2000.0..1500.0)), "-1500");
        assert_eq!(tick_label(-0.0, &(-1.0..1.0)), "0");
        assert_eq!(tick_label(2.5e-7, &(-3e-7..3e-7)), "2.5e-7");
        assert_eq!(tick_label(1.26e-29, &(-1e-13..1e-13)), "0");
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(padded_range([].into_iter(), 0.05), 0.0..1.0);
        assert_eq!(padded_range([0.0, 0.0].into_iter(), 0.05), -1.0..1.0);
        assert_eq!(padded_range([2.0, f64::NAN].into_iter(), 0.0), 1.8..2.2);
        assert_eq!(padded_range([0.0, 10.0].into_iter(), 0.1), -1.0..11.0);
    }

    #[test]
    fn overlays_of_long_lines_stay_small() {
        let dir = temp_dir("overlay");
        std::fs::create_dir_all(&dir).unwrap();
        let line = |name: &str, f: f64| OverlayLine {
            name: name.into(),
            points: (0..1_000_000)
                .map(|n| (n as f64 * 1e-3, (n as f64 * f).sin()))
                .collect(),
        };
        let path = dir.join("overlay.svg");
        let written = write_overlay(
            &path,
            "overlay",
            &[
                OverlayPanel {
                    y_label: "angle [deg]".into(),
                    lines: vec![line("penalty z1.q", 1e-2), line("double-step z1.q", 2e-2)],
                },
                OverlayPanel {
                    y_label: "position [m]".into(),
                    lines: Vec::new(),
                },
            ],
        )
        .unwrap();
        assert!(written);
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.len() <= 300_000, "{} bytes", svg.len());
        assert!(svg.contains("penalty z1.q") && !svg.contains("position [m]"));
        assert!(!write_overlay(&dir.join("none.svg"), "none", &[]).unwrap());
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

/// One panel of an overlay figure: its y-axis label (with the unit) and its lines.
#[derive(Debug, Clone, PartialEq)]
pub struct OverlayPanel {
    /// Y-axis label, unit in brackets (`angle [deg]`).
    pub y_label: String,
    /// The lines.
    pub lines: Vec<OverlayLine>,
}

/// Writes a figure with several lines on a common time axis (the overlays of
/// `hydraulink compare`), one panel per entry of `panels` that has a line, titled `title`.
/// Long lines are reduced to the minimum and maximum per time bucket, so that the figure stays
/// small. Returns whether a file was written (not when no panel has a line).
pub fn write_overlay(
    path: &Path,
    title: &str,
    panels: &[OverlayPanel],
) -> Result<bool, OutputError> {
    let panels: Vec<&OverlayPanel> = panels.iter().filter(|p| !p.lines.is_empty()).collect();
    if panels.is_empty() {
        return Ok(false);
    }
    let n_lines: usize = panels.iter().map(|p| p.lines.len()).sum();
    let max_points = MAX_POINTS_PER_FIGURE / n_lines.max(1);
    let drawn: Vec<Panel> = panels
        .iter()
        .map(|p| Panel {
            title: title.to_string(),
            y_label: p.y_label.clone(),
            log_y: false,
            side_legend: false,
            at_zero: Vec::new(),
            series: p
                .lines
                .iter()
                .map(|l| {
                    let finite: Vec<(f64, f64)> = l
                        .points
                        .iter()
                        .copied()
                        .filter(|p| p.0.is_finite() && p.1.is_finite())
                        .collect();
                    Series {
                        name: l.name.clone(),
                        points: decimate_points(&finite, max_points),
                    }
                })
                .collect(),
        })
        .collect();
    draw_figure(path, &drawn).map_err(|message| OutputError::Plot {
        path: path.to_path_buf(),
        message,
    })?;
    Ok(true)
}
