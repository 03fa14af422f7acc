//! The drawing backend of the figures: plotters' SVG text, with the lines and polylines (the
//! mesh and the series) written here, and the series' points thinned to what a pixel shows.
//!
//! ```text
//! plotters' chart ──► LineSvg ──► <line …/> and <polyline … points="x,y …"/>  written here
//!                             └─► text, rectangles, circles, pixels: SVGBackend, on a scratch
//!                                 string, its element copied into the file
//! ```
//!
//! plotters' SVG backend writes every attribute with `format!` and copies each one character by
//! character to escape it: some 6 000 instructions per mesh line and 1 000 per point of a
//! series, most of a figure's drawing time. Here the style part of a `<line>` or `<polyline>`
//! (`opacity`, `stroke`, `stroke-width`) is plotters' own text, taken once per style from an
//! element it draws on the scratch string, and only the coordinates are written per element
//! (integer pixels, as plotters writes them): the file is byte for byte plotters' when nothing
//! is thinned (`same_file_as_plotters_when_nothing_is_thinned`).
//!
//! Thinning ([`thin_into`]): consecutive points on the same pixel column of the figure
//! (the same integer x) draw one vertical stroke from their lowest to their highest pixel;
//! only the first, the lowest, the highest and the last of them are kept, in their order, and
//! a point on the same pixel as the point before is dropped. Every pixel column keeps its
//! minimum and maximum (the figure's min/max envelope is unchanged), and the strokes into and
//! out of a column start and end where they did.

use plotters::prelude::SVGBackend;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// Appends `path` to `out` without the points that add no pixel (see the module doc): of each
/// run of consecutive points with the same x, the first, the lowest, the highest and the last,
/// in their order, with no point repeated right after itself.
pub(crate) fn thin_into(out: &mut Vec<BackendCoord>, path: impl IntoIterator<Item = BackendCoord>) {
    /// A run of points on one pixel column: (index in the run, y) of its first, lowest,
    /// highest and last point.
    struct Run {
        x: i32,
        first: (usize, i32),
        low: (usize, i32),
        high: (usize, i32),
        last: (usize, i32),
    }
    fn flush(out: &mut Vec<BackendCoord>, run: &Run) {
        let mut kept = [run.first, run.low, run.high, run.last];
        kept.sort_unstable_by_key(|&(i, _)| i);
        for (_, y) in kept {
            if out.last() != Some(&(run.x, y)) {
                out.push((run.x, y));
            }
        }
    }
    let mut run: Option<Run> = None;
    for (x, y) in path {
        match &mut run {
            Some(r) if r.x == x => {
                let i = r.last.0 + 1;
                if y < r.low.1 {
                    r.low = (i, y);
                }
                if y > r.high.1 {
                    r.high = (i, y);
                }
                r.last = (i, y);
            }
            _ => {
                if let Some(r) = &run {
                    flush(out, r);
                }
                run = Some(Run {
                    x,
                    first: (0, y),
                    low: (0, y),
                    high: (0, y),
                    last: (0, y),
                });
            }
        }
    }
    if let Some(r) = &run {
        flush(out, r);
    }
}

/// The error of plotters' SVG backend.
type SvgError = <SVGBackend<'static> as DrawingBackend>::ErrorType;

/// The end of plotters' SVG text.
const CLOSE: &str = "</svg>\n";

/// A line style: colour, opacity bits, stroke width.
type StyleKey = ((u8, u8, u8), u64, u32);

/// The style key of `style`.
fn style_key<S: BackendStyle>(style: &S) -> StyleKey {
    let color = style.color();
    (color.rgb, color.alpha.to_bits(), style.stroke_width())
}

/// An SVG backend that writes the figure into `out`: lines and polylines here, every other
/// element by plotters' SVG backend.
pub(crate) struct LineSvg<'a> {
    /// The file so far.
    out: &'a mut Vec<u8>,
    /// Size \[px\].
    size: (u32, u32),
    /// Length of plotters' `<svg …>` opening line.
    header_len: usize,
    /// Where plotters writes an element that is copied into `out`.
    scratch: String,
    /// Per line style, plotters' `<line` tag up to its coordinates.
    line_styles: Vec<(StyleKey, String)>,
    /// Per polyline style, plotters' `<polyline` tag up to its points.
    path_styles: Vec<(StyleKey, String)>,
    /// Scratch for the thinned points of a polyline.
    points: Vec<BackendCoord>,
    /// Whether the closing `</svg>` is written.
    closed: bool,
}

impl<'a> LineSvg<'a> {
    /// A backend of `size` \[px\] writing the SVG file into `out` (complete after `present`).
    pub(crate) fn new(out: &'a mut Vec<u8>, size: (u32, u32)) -> Self {
        let mut scratch = String::new();
        drop(SVGBackend::with_string(&mut scratch, size));
        let header_len = scratch.len().saturating_sub(CLOSE.len());
        out.extend_from_slice(&scratch.as_bytes()[..header_len]);
        LineSvg {
            out,
            size,
            header_len,
            scratch,
            line_styles: Vec::new(),
            path_styles: Vec::new(),
            points: Vec::new(),
            closed: false,
        }
    }

    /// Appends what `draw` draws, in plotters' text.
    fn delegate(
        &mut self,
        draw: impl FnOnce(&mut SVGBackend<'_>) -> Result<(), SvgErrorKind>,
    ) -> Result<(), SvgErrorKind> {
        let text = plotters_text(&mut self.scratch, self.size, self.header_len, draw)?;
        self.out.extend_from_slice(text.as_bytes());
        Ok(())
    }

    /// Index in `line_styles` of plotters' `<line` tag up to ` x1="` for `style`.
    fn line_style<S: BackendStyle>(&mut self, style: &S) -> Result<usize, SvgErrorKind> {
        let key = style_key(style);
        if let Some(i) = self.line_styles.iter().position(|(k, _)| *k == key) {
            return Ok(i);
        }
        let text = plotters_text(&mut self.scratch, self.size, self.header_len, |svg| {
            svg.draw_line((0, 0), (0, 0), style)
        })?;
        let head = text.find(" x1=\"").map(|at| text[..at].to_string());
        let head = head.ok_or_else(unexpected)?;
        self.line_styles.push((key, head));
        Ok(self.line_styles.len() - 1)
    }

    /// Index in `path_styles` of plotters' `<polyline` tag up to and with `points="` for
    /// `style`.
    fn path_style<S: BackendStyle>(&mut self, style: &S) -> Result<usize, SvgErrorKind> {
        let key = style_key(style);
        if let Some(i) = self.path_styles.iter().position(|(k, _)| *k == key) {
            return Ok(i);
        }
        let text = plotters_text(&mut self.scratch, self.size, self.header_len, |svg| {
            svg.draw_path(std::iter::empty(), style)
        })?;
        let head = text
            .strip_suffix("\"/>\n")
            .filter(|head| head.ends_with(" points=\""))
            .map(str::to_string);
        let head = head.ok_or_else(unexpected)?;
        self.path_styles.push((key, head));
        Ok(self.path_styles.len() - 1)
    }
}

/// plotters' text of what `draw` draws on an empty figure of `size` \[px\] (written into
/// `scratch`), without the figure's opening line (`header_len` bytes) and closing tag.
fn plotters_text(
    scratch: &mut String,
    size: (u32, u32),
    header_len: usize,
    draw: impl FnOnce(&mut SVGBackend<'_>) -> Result<(), SvgErrorKind>,
) -> Result<&str, SvgErrorKind> {
    scratch.clear();
    {
        let mut svg = SVGBackend::with_string(scratch, size);
        draw(&mut svg)?;
        svg.present()?;
    }
    scratch
        .get(header_len..)
        .and_then(|body| body.strip_suffix(CLOSE))
        .ok_or_else(unexpected)
}

/// A drawing error of this backend.
type SvgErrorKind = DrawingErrorKind<SvgError>;

/// The error for plotters' text not being of the form this file expects (another plotters).
fn unexpected() -> SvgErrorKind {
    DrawingErrorKind::DrawingError(std::io::Error::other(
        "plotters' SVG text is not of the expected form",
    ))
}

/// Appends `v` in decimal, as `{}` writes it.
fn push_int(out: &mut Vec<u8>, v: i32) {
    let mut digits = [0u8; 11];
    let mut i = digits.len();
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        i -= 1;
        digits[i] = b'-';
    }
    out.extend_from_slice(&digits[i..]);
}

impl DrawingBackend for LineSvg<'_> {
    type ErrorType = SvgError;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Result<(), SvgErrorKind> {
        Ok(())
    }

    fn present(&mut self) -> Result<(), SvgErrorKind> {
        if !self.closed {
            self.out.extend_from_slice(CLOSE.as_bytes());
            self.closed = true;
        }
        Ok(())
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), SvgErrorKind> {
        self.delegate(|svg| svg.draw_pixel(point, color))
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), SvgErrorKind> {
        // as plotters: a transparent line writes no element
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let i = self.line_style(style)?;
        let out = &mut *self.out;
        out.extend_from_slice(self.line_styles[i].1.as_bytes());
        for (name, v) in [
            (" x1=\"", from.0),
            ("\" y1=\"", from.1),
            ("\" x2=\"", to.0),
            ("\" y2=\"", to.1),
        ] {
            out.extend_from_slice(name.as_bytes());
            push_int(out, v);
        }
        out.extend_from_slice(b"\"/>\n");
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), SvgErrorKind> {
        self.delegate(|svg| svg.draw_rect(upper_left, bottom_right, style, fill))
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), SvgErrorKind> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let i = self.path_style(style)?;
        self.points.clear();
        thin_into(&mut self.points, path);
        let out = &mut *self.out;
        out.extend_from_slice(self.path_styles[i].1.as_bytes());
        for &(x, y) in &self.points {
            push_int(out, x);
            out.push(b',');
            push_int(out, y);
            out.push(b' ');
        }
        out.extend_from_slice(b"\"/>\n");
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), SvgErrorKind> {
        self.delegate(|svg| svg.draw_circle(center, radius, style, fill))
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), SvgErrorKind> {
        self.delegate(|svg| svg.fill_polygon(vert, style))
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), SvgErrorKind> {
        self.delegate(|svg| svg.draw_text(text, style, pos))
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), SvgErrorKind> {
        self.delegate(|svg| svg.blit_bitmap(pos, size, src))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::*;

    /// A pseudo-random walk in pixels: runs of equal x of random length, random y steps.
    fn walk(seed: u64, n: usize) -> Vec<BackendCoord> {
        let mut s = seed | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let (mut x, mut y) = (0i32, 300i32);
        (0..n)
            .map(|_| {
                let r = next();
                if r % 3 == 0 {
                    x += 1 + (r >> 8) as i32 % 2;
                }
                y += ((r >> 16) % 7) as i32 - 3;
                (x, y)
            })
            .collect()
    }

    /// (x, lowest y, highest y) of each run of equal x.
    fn envelope(points: &[BackendCoord]) -> Vec<(i32, i32, i32)> {
        let mut columns: Vec<(i32, i32, i32)> = Vec::new();
        for &(x, y) in points {
            match columns.last_mut() {
                Some(c) if c.0 == x => {
                    c.1 = c.1.min(y);
                    c.2 = c.2.max(y);
                }
                _ => columns.push((x, y, y)),
            }
        }
        columns
    }

    #[test]
    fn thinning_keeps_ends_and_the_envelope_of_every_pixel_column() {
        for seed in 1..200 {
            let path = walk(seed, 1 + (seed as usize * 37) % 3000);
            let mut thin = Vec::new();
            thin_into(&mut thin, path.iter().copied());
            assert_eq!(thin.first(), path.first(), "seed {seed}");
            assert_eq!(thin.last(), path.last(), "seed {seed}");
            assert_eq!(envelope(&thin), envelope(&path), "seed {seed}");
            assert!(thin.windows(2).all(|w| w[0] != w[1]), "seed {seed}");
            // at most 4 points per pixel column, taken from the path in its order
            assert!(thin.len() <= 4 * envelope(&path).len());
            let mut rest = path.iter();
            assert!(thin.iter().all(|p| rest.any(|q| q == p)), "seed {seed}");
        }
        let mut thin = Vec::new();
        thin_into(
            &mut thin,
            [(5, 1), (5, 1), (5, 9), (5, 4), (5, 0), (5, 3), (6, 3)],
        );
        assert_eq!(thin, [(5, 1), (5, 9), (5, 0), (5, 3), (6, 3)]);
        thin.clear();
        thin_into(&mut thin, []);
        assert!(thin.is_empty());
    }

    #[test]
    fn integers_as_display_writes_them() {
        for v in [0, 7, -7, 10, 999, -1000, i32::MAX, i32::MIN] {
            let mut out = Vec::new();
            push_int(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), v.to_string());
        }
    }

    /// A chart with two lines and a legend, drawn on `backend`.
    fn chart<DB: DrawingBackend>(backend: DB, lines: &[Vec<(f64, f64)>]) {
        let root = backend.into_drawing_area();
        root.fill(&WHITE).unwrap();
        let mut chart = ChartBuilder::on(&root)
            .caption("a <title> & \"quotes\"", ("sans-serif", 20))
            .x_label_area_size(30)
            .y_label_area_size(40)
            .build_cartesian_2d(0.0..10.0, -2.0..2.0)
            .unwrap();
        chart.configure_mesh().draw().unwrap();
        for (i, points) in lines.iter().enumerate() {
            let color = Palette99::pick(i).stroke_width(2);
            chart
                .draw_series(LineSeries::new(points.iter().copied(), color))
                .unwrap()
                .label(format!("line {i}"))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color));
        }
        chart.configure_series_labels().draw().unwrap();
        root.present().unwrap();
    }

    /// With nothing to thin (a new pixel column at every point), the file is byte for byte the
    /// one plotters writes: text, mesh, lines, legend.
    #[test]
    fn same_file_as_plotters_when_nothing_is_thinned() {
        let lines: Vec<Vec<(f64, f64)>> = (0..2)
            .map(|k| {
                (0..60)
                    .map(|n| {
                        let t = n as f64 / 6.0;
                        (t, (t + k as f64).sin())
                    })
                    .collect()
            })
            .collect();
        let mut plain = String::new();
        chart(SVGBackend::with_string(&mut plain, (640, 480)), &lines);
        let mut ours = Vec::new();
        chart(LineSvg::new(&mut ours, (640, 480)), &lines);
        assert!(plain.matches("<polyline").count() >= 4);
        assert!(plain.matches("<line").count() > 20);
        assert!(
            String::from_utf8(ours).unwrap() == plain,
            "not plotters' text"
        );
    }

    /// A polyline that goes up and down on one pixel column is written with fewer points.
    #[test]
    fn lines_are_thinned_in_the_file() {
        let dense: Vec<(f64, f64)> = (0..5000)
            .map(|n| (n as f64 * 2e-3, if n % 2 == 0 { 1.0 } else { -1.0 }))
            .collect();
        let mut plain = String::new();
        chart(
            SVGBackend::with_string(&mut plain, (640, 480)),
            std::slice::from_ref(&dense),
        );
        let mut ours = Vec::new();
        chart(LineSvg::new(&mut ours, (640, 480)), &[dense]);
        let ours = String::from_utf8(ours).unwrap();
        assert_eq!(
            ours.matches("<polyline").count(),
            plain.matches("<polyline").count()
        );
        // 5 000 points on about 600 pixel columns: at most 4 a column are kept
        let points = |svg: &str| svg.matches(',').count();
        assert!(points(&plain) > 5000, "{}", points(&plain));
        assert!(points(&ours) < 2600, "{}", points(&ours));
    }
}
