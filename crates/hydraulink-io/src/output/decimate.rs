//! The plot copy of a run: the minimum and maximum of every column in each of a fixed number of
//! time buckets (one or more pixel columns of a figure), kept while the rows stream past.
//!
//! Its size is fixed when the run starts (buckets × columns × 4 numbers), whatever the number
//! of rows, and a figure drawn from it keeps every peak of the full series: each bucket
//! contributes its minimum and its maximum, in time order.

/// Number of time buckets of a run's plot copy (about one per pixel column of a figure).
pub const PLOT_BUCKETS: usize = 800;

/// One column in one bucket: its extreme points, `NaN` times while empty.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cell {
    /// Time of the minimum \[s\].
    t_min: f64,
    /// Minimum.
    v_min: f64,
    /// Time of the maximum \[s\].
    t_max: f64,
    /// Maximum.
    v_max: f64,
}

impl Cell {
    const EMPTY: Cell = Cell {
        t_min: f64::NAN,
        v_min: f64::INFINITY,
        t_max: f64::NAN,
        v_max: f64::NEG_INFINITY,
    };

    fn is_empty(&self) -> bool {
        self.t_min.is_nan()
    }

    fn observe(&mut self, t: f64, v: f64) {
        if v < self.v_min {
            self.v_min = v;
            self.t_min = t;
        }
        if v > self.v_max {
            self.v_max = v;
            self.t_max = t;
        }
    }

    fn merge(&mut self, other: &Cell) {
        if !other.is_empty() {
            self.observe(other.t_min, other.v_min);
            self.observe(other.t_max, other.v_max);
        }
    }
}

/// Min/max per time bucket of every column of a table whose first column is time.
#[derive(Debug, Clone, PartialEq)]
pub struct Decimated {
    /// Time span covered by the buckets, \[0, `t_end_s`\] \[s\].
    t_end_s: f64,
    /// Columns per row (time included).
    n_columns: usize,
    /// Buckets.
    n_buckets: usize,
    /// Bucket-major cells, `n_columns` per bucket.
    cells: Vec<Cell>,
}

impl Decimated {
    /// An empty copy of rows with `n_columns` values (time first) over \[0, `t_end_s`\] \[s\]
    /// in `n_buckets` buckets. A non-finite or non-positive span is taken as 1 s; later times
    /// fall into the last bucket.
    pub fn new(n_columns: usize, t_end_s: f64, n_buckets: usize) -> Self {
        let t_end_s = if t_end_s.is_finite() && t_end_s > 0.0 {
            t_end_s
        } else {
            1.0
        };
        let n_buckets = n_buckets.max(1);
        Decimated {
            t_end_s,
            n_columns,
            n_buckets,
            cells: vec![Cell::EMPTY; n_columns * n_buckets],
        }
    }

    /// Adds one row (time first). Non-finite values and rows with a non-finite time are left
    /// out.
    pub fn push(&mut self, row: &[f64]) {
        let Some(&t) = row.first() else { return };
        if !t.is_finite() {
            return;
        }
        let b = ((t / self.t_end_s) * self.n_buckets as f64).floor();
        let b = if b > 0.0 {
            (b as usize).min(self.n_buckets - 1)
        } else {
            0
        };
        let cells = &mut self.cells[b * self.n_columns..(b + 1) * self.n_columns];
        for (cell, &v) in cells.iter_mut().zip(row) {
            if v.is_finite() {
                cell.observe(t, v);
            }
        }
    }

    /// Bytes held, fixed at creation.
    pub fn retained_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.cells.capacity() * std::mem::size_of::<Cell>()
    }

    /// The points of column `column` (time \[s\], value), at most `max_points`: neighbouring
    /// buckets are merged until they fit, and each bucket gives its minimum and maximum in
    /// time order.
    pub fn series(&self, column: usize, max_points: usize) -> Vec<(f64, f64)> {
        if column >= self.n_columns {
            return Vec::new();
        }
        let group = self.n_buckets.div_ceil((max_points / 2).max(1)).max(1);
        let mut points = Vec::new();
        for first in (0..self.n_buckets).step_by(group) {
            let mut cell = Cell::EMPTY;
            for b in first..(first + group).min(self.n_buckets) {
                cell.merge(&self.cells[b * self.n_columns + column]);
            }
            if cell.is_empty() {
                continue;
            }
            let (a, b) = ((cell.t_min, cell.v_min), (cell.t_max, cell.v_max));
            if a == b {
                points.push(a);
            } else if a.0 <= b.0 {
                points.extend([a, b]);
            } else {
                points.extend([b, a]);
            }
        }
        points
    }
}

/// Points `(t, v)` in time order reduced to at most about `max_points`: the minimum and maximum
/// of each of `max_points / 2` equal time buckets (for figures drawn from series held whole).
pub fn decimate_points(points: &[(f64, f64)], max_points: usize) -> Vec<(f64, f64)> {
    if points.len() <= max_points {
        return points.to_vec();
    }
    let t_end = points
        .iter()
        .map(|p| p.0)
        .filter(|t| t.is_finite())
        .fold(0.0_f64, f64::max);
    let mut d = Decimated::new(2, t_end, (max_points / 2).max(1));
    for &(t, v) in points {
        d.push(&[t, v]);
    }
    d.series(1, max_points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_peaks_in_time_order_and_a_fixed_size() {
        let mut d = Decimated::new(2, 10.0, 10);
        let size = d.retained_bytes();
        for n in 0..=10_000 {
            let t = n as f64 * 1e-3;
            let v = if n == 4_321 { 50.0 } else { (t * 7.0).sin() };
            d.push(&[t, v]);
        }
        assert_eq!(d.retained_bytes(), size, "the size does not grow with rows");
        let points = d.series(1, 1000);
        assert!(points.len() <= 20);
        assert!(points.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(points.contains(&(4.321, 50.0)));
        // merged to 4 points: still the spike
        let coarse = d.series(1, 4);
        assert!(coarse.len() <= 4 && coarse.contains(&(4.321, 50.0)));
    }

    #[test]
    fn skips_non_finite_values_and_empty_buckets() {
        let mut d = Decimated::new(2, 1.0, 4);
        d.push(&[0.1, f64::NAN]);
        d.push(&[f64::NAN, 1.0]);
        d.push(&[0.9, 2.0]);
        d.push(&[5.0, 3.0]); // past the end: last bucket
        assert_eq!(d.series(1, 100), [(0.9, 2.0), (5.0, 3.0)]);
        assert_eq!(d.series(7, 100), []);
    }

    #[test]
    fn decimated_points_fit_the_budget() {
        let points: Vec<(f64, f64)> = (0..100_000).map(|n| (n as f64, (n % 7) as f64)).collect();
        let d = decimate_points(&points, 500);
        assert!(d.len() <= 500, "{}", d.len());
        assert_eq!(decimate_points(&points[..10], 500), &points[..10]);
    }
}
