//! The drawing backend of the figures: plotters' SVG backend for everything but the lines of
//! the series, whose points this file writes itself, without the points that add no pixel.
//!
//! ```text
//! plotters (axes, ticks, text, legend)  ──►  SVGBackend ──► <polyline … points=""/>   (no points)
//! plotters (every polyline)             ──►  LineSvg keeps its pixel points, thinned
//! LineSvg::finish                            writes "x,y " per kept point into each points=""
//! ```
//!
//! plotters writes each point of a polyline with `write!` and then copies the whole attribute
//! character by character to escape it: about 1 000 instructions a point, most of a figure's
//! drawing time. Here plotters still writes every element (its tag, style and place in the
//! file are plotters' own) but gets no points for a polyline; the points are written at the
//! end in plotters' text (`x,y ` per point, integer pixels), some 30 instructions a point.
//!
//! Thinning ([`thin_into`]): consecutive points on the same pixel column of the figure
//! (the same integer x) draw one vertical stroke from their lowest to their highest pixel;
//! only the first, the lowest, the highest and the last of them are kept, in their order, and
//! a point on the same pixel as the point before is dropped. Every pixel column keeps its
//! minimum and maximum (the figure's min/max envelope is unchanged), and the strokes into and
//! out of a column start and end where they did.

use std::cell::RefCell;

use plotters::prelude::SVGBackend;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// The pixel points of every polyline of a figure, in drawing order.
#[derive(Debug, Default)]
pub(crate) struct Polylines {
    /// The kept points of every polyline, one after the other.
    points: Vec<BackendCoord>,
    /// End of each polyline in `points` (exclusive).
    ends: Vec<usize>,
}

impl Polylines {
    /// The points of polyline `i`.
    fn line(&self, i: usize) -> &[BackendCoord] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.points[start..self.ends[i]]
    }
}

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

/// plotters' SVG backend, except that the points of every polyline are kept in `lines` (thinned)
/// instead of being written; [`LineSvg::finish`] writes them into the SVG text.
pub(crate) struct LineSvg<'a> {
    /// plotters' backend, writing into a string.
    svg: SVGBackend<'a>,
    /// The points of the polylines drawn so far.
    lines: &'a RefCell<Polylines>,
}

impl<'a> LineSvg<'a> {
    /// A backend of `size` \[px\] writing into `text`, with the polylines' points in `lines`.
    pub(crate) fn new(
        text: &'a mut String,
        size: (u32, u32),
        lines: &'a RefCell<Polylines>,
    ) -> Self {
        LineSvg {
            svg: SVGBackend::with_string(text, size),
            lines,
        }
    }

    /// The SVG file: `text` as plotters wrote it (the backend dropped), with the points of
    /// polyline i of `lines` written into the i-th `<polyline … points=""/>`. `None` when the
    /// text does not have one empty polyline per line (not written by a [`LineSvg`]).
    pub(crate) fn finish(text: &str, lines: &Polylines) -> Option<Vec<u8>> {
        const TAG: &str = "<polyline ";
        const EMPTY: &str = "points=\"\"";
        let mut out = Vec::with_capacity(text.len() + lines.points.len() * 8);
        let mut rest = text;
        for i in 0..lines.ends.len() {
            let tag = rest.find(TAG)?;
            let end = tag + rest[tag..].find("/>")?;
            let at = tag + rest[tag..end].find(EMPTY)? + EMPTY.len() - 1;
            out.extend_from_slice(&rest.as_bytes()[..at]);
            for &(x, y) in lines.line(i) {
                push_int(&mut out, x);
                out.push(b',');
                push_int(&mut out, y);
                out.push(b' ');
            }
            rest = &rest[at..];
        }
        if rest.contains(TAG) {
            return None;
        }
        out.extend_from_slice(rest.as_bytes());
        Some(out)
    }
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

/// The error of plotters' SVG backend.
type SvgError = <SVGBackend<'static> as DrawingBackend>::ErrorType;

impl DrawingBackend for LineSvg<'_> {
    type ErrorType = SvgError;

    fn get_size(&self) -> (u32, u32) {
        self.svg.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<SvgError>> {
        self.svg.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<SvgError>> {
        self.svg.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<SvgError>> {
        self.svg.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<SvgError>> {
        self.svg.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<SvgError>> {
        self.svg.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<SvgError>> {
        // as plotters: a transparent line writes no element
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let mut lines = self.lines.borrow_mut();
        thin_into(&mut lines.points, path);
        let end = lines.points.len();
        lines.ends.push(end);
        self.svg.draw_path(std::iter::empty(), style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<SvgError>> {
        self.svg.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<SvgError>> {
        self.svg.fill_polygon(vert, style)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<SvgError>> {
        self.svg.draw_text(text, style, pos)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<SvgError>> {
        self.svg.estimate_text_size(text, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<SvgError>> {
        self.svg.blit_bitmap(pos, size, src)
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
    /// one plotters writes.
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
        let mut text = String::new();
        let kept = RefCell::new(Polylines::default());
        chart(LineSvg::new(&mut text, (640, 480), &kept), &lines);
        let kept = kept.into_inner();
        // the mesh's, the two series' and their legend marks' polylines
        assert_eq!(kept.ends.len(), plain.matches("<polyline").count());
        assert!((0..kept.ends.len()).any(|i| kept.line(i).len() == 60));
        let ours = LineSvg::finish(&text, &kept).expect("one empty polyline per line");
        assert_eq!(String::from_utf8(ours).unwrap(), plain);
    }

    #[test]
    fn a_foreign_text_is_refused() {
        let lines = Polylines {
            points: vec![(1, 2)],
            ends: vec![1],
        };
        assert!(LineSvg::finish("<svg></svg>", &lines).is_none());
        assert!(LineSvg::finish("<polyline points=\"1,2 \"/>", &lines).is_none());
        assert!(LineSvg::finish("<polyline points=\"\"/>", &Polylines::default()).is_none());
    }
}
