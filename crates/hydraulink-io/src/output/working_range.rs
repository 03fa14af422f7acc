//! The working-range diagram of `hydraulink workspace` (issue 24), drawn as a spec sheet draws
//! it: the envelope of the point in the vertical plane of the front, the ground line, the swing
//! axis, the machine in its initial pose as lines, and the dimensions (reach at ground, digging
//! depth, cutting height, dump height) labelled.

use std::path::Path;

use plotters::prelude::*;

use super::OutputError;

/// A dimension line of the diagram: from `from` to `to` (x, y) [m], with its label.
#[derive(Debug, Clone)]
pub struct Dimension {
    /// One end [m].
    pub from: (f64, f64),
    /// The other end [m].
    pub to: (f64, f64),
    /// Label, e.g. "reach at ground 7.89 m".
    pub label: String,
}

/// What the diagram shows, in the plane of the front (x horizontal distance from the swing axis,
/// y height) [m].
#[derive(Debug, Clone)]
pub struct RangeDiagram {
    /// Title.
    pub title: String,
    /// The envelope, a closed polygon.
    pub envelope: Vec<(f64, f64)>,
    /// Ground height.
    pub ground_y: f64,
    /// The machine in its initial pose, as lines.
    pub machine: Vec<[(f64, f64); 2]>,
    /// Dimension lines.
    pub dimensions: Vec<Dimension>,
}

/// Writes the diagram to `path` (SVG), x and y to the same scale.
pub fn write_working_range(path: &Path, d: &RangeDiagram) -> Result<(), OutputError> {
    let draw = || -> Result<(), String> {
        let pts = d
            .envelope
            .iter()
            .chain(d.machine.iter().flatten())
            .chain(d.dimensions.iter().flat_map(|m| [&m.from, &m.to]))
            .copied()
            .chain([(0.0, d.ground_y)])
            .filter(|p| p.0.is_finite() && p.1.is_finite());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for (x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        let pad = 0.08 * (x1 - x0).max(y1 - y0).max(1e-3);
        let (x0, x1, y0, y1) = (x0 - pad, x1 + 2.0 * pad, y0 - pad, y1 + pad);
        // same scale on both axes: the height follows the width
        let width = 1100u32;
        let plot_w = width as f64 - 110.0;
        let height = ((plot_w * (y1 - y0) / (x1 - x0)) + 110.0).clamp(300.0, 2400.0) as u32;
        let root = SVGBackend::new(path, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&d.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("horizontal distance from the swing axis [m]")
            .y_desc("height [m]")
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|e| e.to_string())?;
        let ground = RGBColor(139, 90, 43);
        chart
            .draw_series(LineSeries::new(
                [(x0, d.ground_y), (x1, d.ground_y)],
                ground.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?
            .label("ground")
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], ground.stroke_width(2)));
        // the swing axis, dashed
        let n = 40;
        let dash = (0..n).filter(|i| i % 2 == 0).map(|i| {
            let a = y0 + (y1 - y0) * i as f64 / n as f64;
            let b = y0 + (y1 - y0) * (i + 1) as f64 / n as f64;
            PathElement::new([(0.0, a), (0.0, b)], BLACK.mix(0.5).stroke_width(1))
        });
        chart.draw_series(dash).map_err(|e| e.to_string())?;
        chart
            .draw_series(LineSeries::new(
                d.envelope.iter().copied(),
                BLUE.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?
            .label("envelope of the point")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLUE.stroke_width(2)));
        chart
            .draw_series(
                d.machine
                    .iter()
                    .map(|l| PathElement::new(l.to_vec(), BLACK.stroke_width(3))),
            )
            .map_err(|e| e.to_string())?
            .label("machine, initial pose")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK.stroke_width(3)));
        let red = RGBColor(200, 30, 30);
        for m in &d.dimensions {
            chart
                .draw_series([PathElement::new(vec![m.from, m.to], red.stroke_width(1))])
                .map_err(|e| e.to_string())?;
            chart
                .draw_series([m.from, m.to].map(|c| Circle::new(c, 3, red.filled())))
                .map_err(|e| e.to_string())?;
            let mid = (0.5 * (m.from.0 + m.to.0), 0.5 * (m.from.1 + m.to.1));
            chart
                .draw_series([Text::new(
                    m.label.clone(),
                    (mid.0 + 0.1, mid.1 + 0.1),
                    ("sans-serif", 15).into_font().color(&red),
                )])
                .map_err(|e| e.to_string())?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())
    };
    draw().map_err(|message| OutputError::Plot {
        path: path.to_path_buf(),
        message,
    })
}
