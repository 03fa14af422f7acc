//! Working range of a point of the mechanism, dead centres of its cylinders and the chambers
//! without overload protection: the closed-loop position kinematics swept over the cylinder
//! strokes (issue 24).
//!
//! # Poses at given cylinder lengths
//! With the lengths s*_c of every cylinder prescribed, the pose solves
//!
//! ```text
//!   Φ(z) = 0,   s_c(z) − s*_c = 0   (every cylinder c)
//!   ∂s_c/∂z_i = n_c · (∂r_rod/∂z_i − ∂r_base/∂z_i),  ∂r/∂z_i = b_i^v + b_i^ω × r   (000 eq. 45, A.1)
//! ```
//!
//! by the Newton of the initialization (`loop_closure::close_loops_with`, minimum-norm steps)
//! over the *moving* coordinates: those whose column of [Φ_z; s_z] is not zero at the initial
//! pose. Every other coordinate (the swing joint of an excavator: turning it turns both ends of
//! every cylinder and both sides of every cut joint together) is held at its initial value.
//!
//! # The sweep
//! Every cylinder's length runs over a grid of `grid` points on [retracted, retracted + stroke].
//! The grid is walked breadth-first from the grid point nearest the initial lengths, each pose
//! solved from an already solved neighbour (continuation): the sweep stays on the assembly
//! branch of the initial pose. A grid point where the loops cannot close (a length beyond a dead
//! centre) is unreachable and left out.
//!
//! # The plane of the front
//! Heights y are measured along −g (the vertical), from the global origin. The swing axis is the
//! first held revolute axis parallel to the vertical (through the global origin when there is
//! none); x is the horizontal distance from it towards the point at the initial pose (signed:
//! negative behind the axis).
//!
//! # Figures (as spec sheets give them, ISO 6746-2 style)
//! With the ground at height y_g:
//! - **reach at ground**: the largest x at which the reachable set meets y = y_g (the crossings
//!   of y_g along the grid's edges, interpolated linearly between neighbouring poses);
//! - **maximum reach**: the largest x;
//! - **digging depth**: y_g − the lowest y;
//! - **cutting height**: the highest y − y_g;
//! - **dump (loading) height**: the height y − y_g of the point with the bucket fully dumped
//!   and its teeth hanging straight below its pin, as spec sheets give the maximum loading
//!   height: the highest position of the tool's pin (the joint of the point's body: the bucket
//!   pin) over every reachable pose, less the pin-to-point distance in the plane. The point must
//!   sit on a body that turns on its own joint; on a body of the ground the dump height is the
//!   highest pose of the point ([`Figures::dump_teeth_below_pin`] is `false` then).
//!
//! # Forces by virtual work
//! One cylinder c at pressure p on its piston side (rod side at tank), all others held: the
//! mechanism has one degree of freedom, driven by s_c. From F_c ds = F_tip |dr|,
//!
//! ```text
//!   F_tip = p A_A / |dr/ds_c|,    [Φ_z; s_z] dz/ds_c = e_c,   dr/ds_c = Σ_i (∂r/∂z_i) dz_i/ds_c
//! ```
//!
//! the force at the point along its direction of motion (tangential to the bucket's rotation
//! about its pin for the bucket cylinder: the bucket digging force; to the arm's rotation about
//! its pin for the arm cylinder with the bucket held: the arm crowd force).
//!
//! # Dead centres
//! Each cylinder alone, the others held at their initial lengths: the one-degree-of-freedom
//! motion is traced by continuation along the unit tangent t of the solution curve (predictor
//! z + h t, then the minimum-norm Newton back onto the curve) both ways from the initial pose,
//! until the length leaves the stroke. Along it the cylinder's rate ds/dt and the output joint's
//! rate dθ/dt are watched:
//! - ds/dt = 0 inside the stroke: the lever arm of the cylinder about the joint it drives is zero
//!   (the cylinder's line passes through the pivot), dθ/ds is infinite and changes sign: the
//!   cylinder tops or bottoms out there, before its stroke end;
//! - dθ/dt = 0 inside the stroke (ds/dt ≠ 0): the output joint reverses while the cylinder runs
//!   on (a four-bar's toggle);
//! - the loop cannot close: the linkage locks.
//!
//! The output joint is the moving coordinate (moved by this cylinder alone) whose body is the
//! heaviest: the arm for the arm cylinder, the bucket, not its links, for the bucket cylinder.

use nalgebra::{DMatrix, DVector, Vector3};

use crate::elements::component::Component;
use crate::mechanics::assembly::Evaluator;
use crate::mechanics::kinematics::for_each_on_path;
use crate::mechanics::loop_closure::{close_loops, close_loops_with};
use crate::mechanics::ports::Line;
use crate::model::{AxisKind, CylinderId, Frame, FramePoint, Model, Node, VolumeId};
use crate::solver::linalg::pinv_solve;

/// Tolerance of ‖(Φ, s − s*)‖ for a pose [m]: the initialization's loop-closure tolerance.
const POSE_TOL: f64 = 1e-12;

/// A pose solved from a neighbour whose coordinates moved more than this [rad or m] jumped to
/// another assembly branch and is refused: one grid step moves a joint by a few degrees.
const BRANCH_JUMP: f64 = 0.35;

/// Continuation step along the unit tangent of the one-degree-of-freedom motion [rad or m].
const TRACE_STEP: f64 = 0.005;

/// At most this many continuation steps each way (3.0 rad of travel at `TRACE_STEP`).
const TRACE_MAX_STEPS: usize = 600;

/// Options of [`working_range`].
#[derive(Debug, Clone)]
pub struct RangeOptions {
    /// Grid points per cylinder stroke (≥ 2).
    pub grid: usize,
    /// Height of the ground plane y_g [m], along −g.
    pub ground_y_m: f64,
    /// Piston-side pressure for the forces [Pa] (rod side at tank), if any.
    pub pressure_pa: Option<f64>,
}

impl Default for RangeOptions {
    fn default() -> Self {
        RangeOptions {
            grid: 41,
            ground_y_m: 0.0,
            pressure_pa: None,
        }
    }
}

/// Why [`working_range`] cannot sweep a model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RangeError {
    /// No cylinder: nothing drives the mechanism.
    #[error(
        "the model has no cylinders: the working range sweeps cylinder strokes (a model without \
         cylinders has no stroke to sweep)"
    )]
    NoCylinders,
    /// Too many grid points.
    #[error("{grid}^{cylinders} = {points} poses is too many (at most {max}): lower --grid")]
    TooManyPoints {
        /// Points per stroke.
        grid: usize,
        /// Cylinders.
        cylinders: usize,
        /// grid^cylinders (saturated).
        points: usize,
        /// The cap.
        max: usize,
    },
    /// Fewer than 2 grid points.
    #[error("--grid must be at least 2 (got {0})")]
    GridTooSmall(usize),
    /// The loops do not close at the initial coordinates.
    #[error("the loops do not close at the initial coordinates (‖Φ‖ = {0:.3e} m)")]
    NoInitialPose(f64),
    /// No grid pose could be assembled.
    #[error("no pose of the stroke grid can be assembled")]
    NothingReachable,
}

/// The plane of the front: heights along −g, horizontal distances from the swing axis.
#[derive(Debug, Clone, Copy)]
pub struct Plane {
    /// A point of the swing axis [m].
    pub axis_point: Vector3<f64>,
    /// Unit vertical (−g).
    pub vertical: Vector3<f64>,
    /// Unit horizontal direction of the front.
    pub horizontal: Vector3<f64>,
    /// The held swing axis, if the model has one.
    pub swing_axis: Option<usize>,
}

impl Plane {
    /// (x, y) of a global point: horizontal distance from the swing axis, height.
    pub fn coords(&self, r: &Vector3<f64>) -> [f64; 2] {
        [
            (r - self.axis_point).dot(&self.horizontal),
            r.dot(&self.vertical),
        ]
    }
}

/// The sweep's set-up: moving coordinates, the initial pose and its plane.
#[derive(Debug, Clone)]
pub struct Front {
    /// The moving coordinates (the others are held).
    pub free: Vec<usize>,
    /// The initial coordinates, loops closed.
    pub z0: Vec<f64>,
    /// The initial cylinder lengths [m].
    pub s0: Vec<f64>,
    /// The plane of the front.
    pub plane: Plane,
}

/// One reachable pose of the sweep.
#[derive(Debug, Clone)]
pub struct RangePoint {
    /// Grid index per cylinder.
    pub index: Vec<usize>,
    /// Cylinder lengths [m].
    pub lengths: Vec<f64>,
    /// Horizontal distance from the swing axis x [m] and height y [m].
    pub xy: [f64; 2],
}

/// The spec-sheet figures of a working range (see the module doc for their definitions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    /// Ground height y_g [m].
    pub ground_y_m: f64,
    /// Reach at ground [m]; `None` when the point never reaches the ground.
    pub reach_at_ground_m: Option<f64>,
    /// Maximum reach [m].
    pub max_reach_m: f64,
    /// Digging depth below the ground [m].
    pub digging_depth_m: f64,
    /// Cutting height above the ground [m].
    pub cutting_height_m: f64,
    /// Dump height above the ground [m].
    pub dump_height_m: f64,
    /// Horizontal distance of the dump height's pose [m].
    pub dump_x_m: f64,
    /// The dump height is the tool pin's highest position less its pin-to-point distance
    /// (`false`: the point's body has no joint of its own, and the dump height is the point's
    /// highest pose).
    pub dump_teeth_below_pin: bool,
}

/// The force one cylinder produces at the point, by virtual work.
#[derive(Debug, Clone, PartialEq)]
pub struct CylinderForce {
    /// The cylinder.
    pub cylinder: CylinderId,
    /// Piston-side pressure [Pa].
    pub pressure_pa: f64,
    /// At the initial pose [N].
    pub initial_n: f64,
    /// The largest over the stroke, the others held at their initial lengths [N].
    pub max_n: f64,
    /// The length where the largest acts [m].
    pub max_at_length_m: f64,
}

/// A swept working range.
#[derive(Debug, Clone)]
pub struct WorkingRange {
    /// The set-up.
    pub front: Front,
    /// Grid points per stroke.
    pub grid: usize,
    /// Reachable poses.
    pub points: Vec<RangePoint>,
    /// Grid poses that cannot be assembled on the initial pose's branch.
    pub unreachable: usize,
    /// The envelope as spec sheets draw it: per column of x, the highest and the lowest point;
    /// a closed polygon (x, y) [m].
    pub envelope: Vec<[f64; 2]>,
    /// The figures.
    pub figures: Figures,
    /// Per cylinder, with a pressure: the force at the point.
    pub forces: Vec<CylinderForce>,
}

/// Poses of a model at prescribed cylinder lengths (module doc, "Poses at given cylinder
/// lengths").
pub struct PoseSolver<'m> {
    model: &'m Model,
    ev: Evaluator<f64>,
    /// The moving coordinates.
    pub free: Vec<usize>,
}

/// s_c at the positions of `ev`, and its gradient ∂s_c/∂z (n entries) added into `row`.
fn length_and_gradient(model: &Model, ev: &Evaluator<f64>, c: usize, row: &mut [f64]) -> f64 {
    let cyl = model.cylinder(c);
    let line = Line::at(&ev.kin, &cyl.base, &cyl.rod);
    for_each_on_path(model, cyl.rod.frame, |i| {
        row[i] += line.n.dot(&ev.kin.point_jacobian_col(i, &line.rr))
    });
    for_each_on_path(model, cyl.base.frame, |i| {
        row[i] -= line.n.dot(&ev.kin.point_jacobian_col(i, &line.rb))
    });
    line.s
}

/// Appends s_c − target_c for every cylinder c with a target, and their gradients.
fn append_lengths(
    model: &Model,
    ev: &Evaluator<f64>,
    targets: &[Option<f64>],
    g: &mut Vec<f64>,
    g_z: &mut Vec<f64>,
) {
    let n = model.n_coords();
    for (c, t) in targets.iter().enumerate() {
        if let Some(t) = t {
            let start = g_z.len();
            g_z.resize(start + n, 0.0);
            let s = length_and_gradient(model, ev, c, &mut g_z[start..]);
            g.push(s - t);
        }
    }
}

impl<'m> PoseSolver<'m> {
    /// The solver of `model`, with its moving coordinates found at `z0`.
    pub fn new(model: &'m Model, z0: &[f64]) -> Self {
        let (n, m, nc) = (model.n_coords(), model.n_constraints(), model.n_cylinders());
        let mut ev = Evaluator::<f64>::new(model);
        ev.positions(model, z0);
        let mut g_z = ev.constraints.jac.clone();
        g_z.resize((m + nc) * n, 0.0);
        for c in 0..nc {
            length_and_gradient(model, &ev, c, &mut g_z[(m + c) * n..(m + c + 1) * n]);
        }
        let big = g_z.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        let free = (0..n)
            .filter(|&i| (0..m + nc).any(|r| g_z[r * n + i].abs() > 1e-9 * big))
            .collect();
        PoseSolver { model, ev, free }
    }

    /// Solves the pose with the cylinder lengths `targets` (`None` = free) from `z`, in place.
    /// Err(‖residual‖) when the loops cannot close at those lengths.
    pub fn solve(&mut self, z: &mut [f64], targets: &[Option<f64>]) -> Result<(), f64> {
        let model = self.model;
        close_loops_with(
            model,
            &mut self.ev,
            z,
            &self.free,
            POSE_TOL,
            &mut |ev, g, g_z| append_lengths(model, ev, targets, g, g_z),
        )
        .map_err(|(norm, _)| norm)
    }

    /// Global position of `p` at `z`.
    pub fn point(&mut self, z: &[f64], p: &FramePoint) -> Vector3<f64> {
        self.ev.positions(self.model, z);
        self.ev.kin.point(p)
    }

    /// Cylinder lengths at `z` [m].
    pub fn lengths(&mut self, z: &[f64]) -> Vec<f64> {
        self.ev.positions(self.model, z);
        let kin = &self.ev.kin;
        self.model
            .cylinders()
            .map(|c| Line::at(kin, &c.base, &c.rod).s)
            .collect()
    }

    /// The stacked Jacobian [Φ_z; s_z of the cylinders `rows`] at `z`, over the moving
    /// coordinates.
    fn jacobian(&mut self, z: &[f64], rows: &[usize]) -> DMatrix<f64> {
        let model = self.model;
        let n = model.n_coords();
        self.ev.positions(model, z);
        let mut g_z = self.ev.constraints.jac.clone();
        let targets: Vec<Option<f64>> = (0..model.n_cylinders())
            .map(|c| rows.contains(&c).then_some(0.0))
            .collect();
        append_lengths(model, &self.ev, &targets, &mut Vec::new(), &mut g_z);
        DMatrix::from_row_slice(g_z.len() / n.max(1), n, &g_z).select_columns(self.free.iter())
    }

    /// dz/ds_c over the moving coordinates at `z`, all other cylinders held:
    /// [Φ_z; s_z] dz = e_c (module doc, "Forces by virtual work").
    pub fn rate_per_stroke(&mut self, z: &[f64], c: usize) -> DVector<f64> {
        let nc = self.model.n_cylinders();
        let all: Vec<usize> = (0..nc).collect();
        let j = self.jacobian(z, &all);
        let mut e = DVector::zeros(j.nrows());
        e[self.model.n_constraints() + c] = 1.0;
        pinv_solve(&j, &e)
    }

    /// dr/ds_c of the point `p` at `z` (the other cylinders held) [m/m].
    pub fn point_rate(&mut self, z: &[f64], c: usize, p: &FramePoint) -> Vector3<f64> {
        let dz = self.rate_per_stroke(z, c);
        self.ev.positions(self.model, z);
        let r = self.ev.kin.point(p);
        let mut v = Vector3::zeros();
        for (i, &k) in self.free.iter().enumerate() {
            let mut on_path = false;
            for_each_on_path(self.model, p.frame, |a| on_path |= a == k);
            if on_path {
                v += self.ev.kin.point_jacobian_col(k, &r) * dz[i];
            }
        }
        v
    }

    /// The unit tangent of the motion with every cylinder but `c` held, the projection of
    /// `guide` onto the null space of [Φ_z; s_z of the others]: t = e − J⁺ J e.
    fn tangent(&mut self, z: &[f64], c: usize, guide: &DVector<f64>) -> DVector<f64> {
        let others: Vec<usize> = (0..self.model.n_cylinders()).filter(|&o| o != c).collect();
        let j = self.jacobian(z, &others);
        let y = pinv_solve(&(&j * j.transpose()), &(&j * guide));
        let t = guide - j.transpose() * y;
        let norm = t.norm();
        t / norm
    }

    /// ∂s_c/∂z over the moving coordinates at `z`.
    fn length_gradient(&mut self, z: &[f64], c: usize) -> DVector<f64> {
        let j = self.jacobian(z, &[c]);
        DVector::from_iterator(j.ncols(), j.row(j.nrows() - 1).iter().copied())
    }
}

/// The initial pose: the loops closed from q0 (initialization stage 1).
fn initial_pose(model: &Model) -> Result<Vec<f64>, RangeError> {
    let mut z: Vec<f64> = model.axes.iter().map(|a| a.q0).collect();
    let mut ev = Evaluator::<f64>::new(model);
    let all: Vec<usize> = (0..model.n_coords()).collect();
    close_loops(model, &mut ev, &mut z, &all, POSE_TOL)
        .map_err(|(norm, _)| RangeError::NoInitialPose(norm))?;
    Ok(z)
}

/// The plane of the front for the point `p` (module doc).
fn plane(model: &Model, solver: &mut PoseSolver, z0: &[f64], p: &FramePoint) -> Plane {
    let g = Vector3::new(model.gravity[0], model.gravity[1], model.gravity[2]);
    let vertical = if g.norm() > 0.0 {
        -g / g.norm()
    } else {
        Vector3::y()
    };
    solver.ev.positions(model, z0);
    let kin = &solver.ev.kin;
    let swing = (0..model.n_coords()).find(|&k| {
        model.axes[k].kind == AxisKind::Revolute
            && !solver.free.contains(&k)
            && kin.bw[k].dot(&vertical).abs() > 1.0 - 1e-9
    });
    let axis_point = match swing {
        // a point of the axis: x_k + A_k c̄ (000 §2.1)
        Some(k) => {
            let c = Vector3::new(
                model.axes[k].point_ref[0],
                model.axes[k].point_ref[1],
                model.axes[k].point_ref[2],
            );
            kin.pos[k] + kin.rot[k] * c
        }
        None => Vector3::zeros(),
    };
    let r = kin.point(p) - axis_point;
    let mut horizontal = r - vertical * r.dot(&vertical);
    if horizontal.norm() < 1e-9 {
        let any = if vertical.x.abs() < 0.9 {
            Vector3::x()
        } else {
            Vector3::z()
        };
        horizontal = any - vertical * any.dot(&vertical);
    }
    Plane {
        axis_point,
        vertical,
        horizontal: horizontal.normalize(),
        swing_axis: swing,
    }
}

/// The set-up of a sweep of the point `p`: initial pose, moving coordinates, plane.
pub fn front(model: &Model, p: &FramePoint) -> Result<Front, RangeError> {
    let z0 = initial_pose(model)?;
    let mut solver = PoseSolver::new(model, &z0);
    let s0 = solver.lengths(&z0);
    let plane = plane(model, &mut solver, &z0, p);
    Ok(Front {
        free: solver.free,
        z0,
        s0,
        plane,
    })
}

/// Grid length of cylinder `c` at index `i`.
fn grid_length(model: &Model, c: usize, i: usize, grid: usize) -> f64 {
    let cyl = model.cylinder(c);
    cyl.retracted_length_m + cyl.stroke_m * i as f64 / (grid - 1) as f64
}

/// Sweeps the point `p` of `model` over the cylinder strokes (module doc).
pub fn working_range(
    model: &Model,
    p: &FramePoint,
    opts: &RangeOptions,
) -> Result<WorkingRange, RangeError> {
    let nc = model.n_cylinders();
    if nc == 0 {
        return Err(RangeError::NoCylinders);
    }
    let grid = opts.grid;
    if grid < 2 {
        return Err(RangeError::GridTooSmall(grid));
    }
    const MAX_POINTS: usize = 2_000_000;
    let total = (0..nc).try_fold(1usize, |a, _| a.checked_mul(grid));
    let total = match total {
        Some(t) if t <= MAX_POINTS => t,
        _ => {
            return Err(RangeError::TooManyPoints {
                grid,
                cylinders: nc,
                points: total.unwrap_or(usize::MAX),
                max: MAX_POINTS,
            })
        }
    };
    let front = front(model, p)?;
    let mut solver = PoseSolver::new(model, &front.z0);
    // flat index ↔ grid index (cylinder 0 fastest)
    let unflatten = |mut f: usize| -> Vec<usize> {
        (0..nc)
            .map(|_| {
                let i = f % grid;
                f /= grid;
                i
            })
            .collect()
    };
    let flatten = |idx: &[usize]| idx.iter().rev().fold(0, |a, &i| a * grid + i);
    let nearest: Vec<usize> = (0..nc)
        .map(|c| {
            let cyl = model.cylinder(c);
            let f = (front.s0[c] - cyl.retracted_length_m) / cyl.stroke_m;
            ((f * (grid - 1) as f64).round().max(0.0) as usize).min(grid - 1)
        })
        .collect();
    // solved poses (z per grid point), failures per grid point
    let mut z_at: Vec<Option<Vec<f64>>> = vec![None; total];
    let mut tries = vec![0u8; total];
    let mut queue = std::collections::VecDeque::new();
    let start = flatten(&nearest);
    queue.push_back((start, front.z0.clone()));
    while let Some((f, z_from)) = queue.pop_front() {
        if z_at[f].is_some() || tries[f] >= 2 {
            continue;
        }
        let idx = unflatten(f);
        let targets: Vec<Option<f64>> = (0..nc)
            .map(|c| Some(grid_length(model, c, idx[c], grid)))
            .collect();
        let mut z = z_from.clone();
        let ok = solver.solve(&mut z, &targets).is_ok()
            && (f == start
                || z.iter()
                    .zip(&z_from)
                    .all(|(a, b)| (a - b).abs() < BRANCH_JUMP));
        if !ok {
            tries[f] += 1;
            continue;
        }
        for c in 0..nc {
            for d in [-1i64, 1] {
                let j = idx[c] as i64 + d;
                if (0..grid as i64).contains(&j) {
                    let mut nb = idx.clone();
                    nb[c] = j as usize;
                    let g = flatten(&nb);
                    if z_at[g].is_none() {
                        queue.push_back((g, z.clone()));
                    }
                }
            }
        }
        z_at[f] = Some(z);
    }
    let mut points = Vec::new();
    let mut xy_at: Vec<Option<[f64; 2]>> = vec![None; total];
    for (f, z) in z_at.iter().enumerate() {
        if let Some(z) = z {
            let idx = unflatten(f);
            let xy = front.plane.coords(&solver.point(z, p));
            xy_at[f] = Some(xy);
            points.push(RangePoint {
                lengths: (0..nc)
                    .map(|c| grid_length(model, c, idx[c], grid))
                    .collect(),
                index: idx,
                xy,
            });
        }
    }
    if points.is_empty() {
        return Err(RangeError::NothingReachable);
    }
    let unreachable = total - points.len();
    let yg = opts.ground_y_m;
    // reach at ground: crossings of y_g along the grid's edges
    let mut reach_at_ground: Option<f64> = None;
    for (f, a) in xy_at.iter().enumerate() {
        let Some(a) = a else { continue };
        let idx = unflatten(f);
        for c in 0..nc {
            if idx[c] + 1 >= grid {
                continue;
            }
            let mut nb = idx.clone();
            nb[c] += 1;
            let Some(b) = xy_at[flatten(&nb)] else {
                continue;
            };
            let (da, db) = (a[1] - yg, b[1] - yg);
            if da * db <= 0.0 && da != db {
                let x = a[0] + (b[0] - a[0]) * da / (da - db);
                reach_at_ground = Some(reach_at_ground.map_or(x, |r: f64| r.max(x)));
            } else if da == 0.0 && db == 0.0 {
                let x = a[0].max(b[0]);
                reach_at_ground = Some(reach_at_ground.map_or(x, |r: f64| r.max(x)));
            }
        }
    }
    let max_x = points.iter().map(|q| q.xy[0]).fold(f64::MIN, f64::max);
    let min_y = points.iter().map(|q| q.xy[1]).fold(f64::MAX, f64::min);
    let max_y = points.iter().map(|q| q.xy[1]).fold(f64::MIN, f64::max);
    // the tool's pin (the joint of the point's body): its highest position over every reachable
    // pose, less the pin-to-point distance (the teeth hang straight below it)
    let tool_joint = match p.frame {
        Frame::Link(kb) => Some(kb.0),
        Frame::Ground => None,
    };
    let mut pin_xy = |z: &[f64]| -> Option<([f64; 2], [f64; 2])> {
        let kb = tool_joint?;
        solver.ev.positions(model, z);
        let kin = &solver.ev.kin;
        let pin = kin.pos[kb] + kin.rot[kb] * model.axes[kb].point_ref;
        let pin = front.plane.coords(&pin);
        Some((pin, front.plane.coords(&solver.point(z, p))))
    };
    let radius = pin_xy(&front.z0).map(|(pin, pt)| (pt[0] - pin[0]).hypot(pt[1] - pin[1]));
    let mut highest_pin: Option<[f64; 2]> = None;
    for z in z_at.iter().flatten() {
        if let Some((pin, _)) = pin_xy(z) {
            if highest_pin.is_none_or(|h| pin[1] > h[1]) {
                highest_pin = Some(pin);
            }
        }
    }
    let dump_teeth_below_pin = highest_pin.is_some() && radius.is_some();
    let dump_xy = match (highest_pin, radius) {
        (Some(pin), Some(r)) => [pin[0], pin[1] - r],
        _ => points.iter().fold(
            [f64::NAN, f64::MIN],
            |a, q| if q.xy[1] > a[1] { q.xy } else { a },
        ),
    };
    let figures = Figures {
        ground_y_m: yg,
        reach_at_ground_m: reach_at_ground,
        max_reach_m: max_x,
        digging_depth_m: yg - min_y,
        cutting_height_m: max_y - yg,
        dump_height_m: dump_xy[1] - yg,
        dump_x_m: dump_xy[0],
        dump_teeth_below_pin,
    };
    let envelope = envelope(&points);
    let forces = match opts.pressure_pa {
        Some(pr) => (0..nc)
            .map(|c| cylinder_force(model, &front, &mut solver, p, c, pr))
            .collect(),
        None => Vec::new(),
    };
    Ok(WorkingRange {
        front,
        grid,
        points,
        unreachable,
        envelope,
        figures,
        forces,
    })
}

/// The envelope as spec sheets draw it: the points binned in 200 columns of x; the highest
/// points left to right, then the lowest right to left (a closed polygon).
fn envelope(points: &[RangePoint]) -> Vec<[f64; 2]> {
    let (lo, hi) = points.iter().fold((f64::MAX, f64::MIN), |(a, b), q| {
        (a.min(q.xy[0]), b.max(q.xy[0]))
    });
    // columns about 0.1–0.2 m wide on a machine of 10 m: each holds enough poses of a 41-point
    // grid that its highest and lowest are near the true boundary (200 columns drew a saw-tooth)
    const COLUMNS: usize = 80;
    let width = ((hi - lo) / COLUMNS as f64).max(1e-9);
    let mut top: Vec<Option<[f64; 2]>> = vec![None; COLUMNS + 1];
    let mut bottom: Vec<Option<[f64; 2]>> = vec![None; COLUMNS + 1];
    for q in points {
        let i = (((q.xy[0] - lo) / width) as usize).min(COLUMNS);
        if top[i].is_none_or(|t| q.xy[1] > t[1]) {
            top[i] = Some(q.xy);
        }
        if bottom[i].is_none_or(|b| q.xy[1] < b[1]) {
            bottom[i] = Some(q.xy);
        }
    }
    let mut poly: Vec<[f64; 2]> = top.iter().flatten().copied().collect();
    poly.extend(bottom.iter().rev().flatten().copied());
    if let Some(&first) = poly.first() {
        poly.push(first);
    }
    poly
}

/// The force of cylinder `c` at the point at pressure `pressure_pa`: at the initial pose and the
/// largest along its stroke (module doc, "Forces by virtual work").
fn cylinder_force(
    model: &Model,
    front: &Front,
    solver: &mut PoseSolver,
    p: &FramePoint,
    c: usize,
    pressure_pa: f64,
) -> CylinderForce {
    let f_cyl = pressure_pa * model.cylinder(c).area_a_m2;
    let mut at = |z: &[f64]| f_cyl / solver.point_rate(z, c, p).norm();
    let initial_n = at(&front.z0);
    let mut max_n = initial_n;
    let mut max_at = front.s0[c];
    // the stretch of the traced motion around the initial pose between its dead centres (beyond
    // one the linkage is on another assembly branch) and inside the stroke
    let tr = trace(model, front, c);
    if tr.samples.is_empty() {
        return CylinderForce {
            cylinder: CylinderId(c),
            pressure_pa,
            initial_n,
            max_n,
            max_at_length_m: max_at,
        };
    }
    let k0 = tr.initial;
    let same = |k: usize| tr.samples[k].inside && tr.samples[k].ds * tr.samples[k0].ds > 0.0;
    let mut lo = k0;
    while lo > 0 && same(lo - 1) {
        lo -= 1;
    }
    let mut hi = k0;
    while hi + 1 < tr.samples.len() && same(hi + 1) {
        hi += 1;
    }
    for step in &tr.samples[lo..=hi] {
        let f = at(&step.z);
        if f.is_finite() && f > max_n {
            max_n = f;
            max_at = step.s;
        }
    }
    CylinderForce {
        cylinder: CylinderId(c),
        pressure_pa,
        initial_n,
        max_n,
        max_at_length_m: max_at,
    }
}

/// One pose of a traced one-degree-of-freedom motion.
#[derive(Debug, Clone)]
struct TraceSample {
    z: Vec<f64>,
    /// s_c [m].
    s: f64,
    /// ds_c/dt along the unit tangent.
    ds: f64,
    /// dθ/dt of the output coordinate.
    dtheta: f64,
    /// s inside the stroke.
    inside: bool,
}

/// A traced motion of one cylinder: the samples both ways from the initial pose (backward ones
/// first, reversed, so that the list runs along the curve), and where the loop could not close.
struct Trace {
    samples: Vec<TraceSample>,
    /// The index of the initial pose in `samples`.
    initial: usize,
    /// The output coordinate.
    output: Option<usize>,
    /// Lengths where the continuation could not close the loop inside the stroke [m].
    locked_at: Vec<f64>,
}

/// The moving coordinate moved by cylinder `c` alone whose body is the heaviest.
fn output_coordinate(model: &Model, free: &[usize], t: &DVector<f64>) -> Option<usize> {
    let big = t.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
    free.iter()
        .enumerate()
        .filter(|(i, _)| t[*i].abs() > 1e-6 * big)
        .map(|(_, &k)| {
            let mass: f64 = model
                .bodies
                .iter()
                .filter(|b| b.frame == Frame::Link(crate::model::AxisId(k)))
                .map(|b| b.mass_kg)
                .sum();
            (k, mass)
        })
        .fold(None, |best: Option<(usize, f64)>, (k, m)| match best {
            Some((_, bm)) if bm >= m => best,
            _ => Some((k, m)),
        })
        .map(|(k, _)| k)
}

/// Traces the motion of cylinder `c`, the others held (module doc, "Dead centres").
fn trace(model: &Model, front: &Front, c: usize) -> Trace {
    let mut solver = PoseSolver::new(model, &front.z0);
    let cyl = model.cylinder(c);
    let (lo, hi) = (
        cyl.retracted_length_m,
        cyl.retracted_length_m + cyl.stroke_m,
    );
    let nc = model.n_cylinders();
    let held: Vec<Option<f64>> = (0..nc).map(|o| (o != c).then_some(front.s0[o])).collect();
    let grad0 = solver.length_gradient(&front.z0, c);
    let t0 = solver.tangent(&front.z0, c, &grad0);
    let mut trace = Trace {
        samples: Vec::new(),
        initial: 0,
        output: None,
        locked_at: Vec::new(),
    };
    if !t0.iter().all(|x| x.is_finite()) {
        return trace;
    }
    let output = output_coordinate(model, &solver.free, &t0);
    trace.output = output;
    let out_i = output.and_then(|k| solver.free.iter().position(|&f| f == k));
    let free = solver.free.clone();
    let sample = |solver: &mut PoseSolver, z: &[f64], t: &DVector<f64>| {
        let s = solver.lengths(z)[c];
        let ds = solver.length_gradient(z, c).dot(t);
        TraceSample {
            z: z.to_vec(),
            s,
            ds,
            dtheta: out_i.map_or(0.0, |i| t[i]),
            inside: (lo..=hi).contains(&s),
        }
    };
    let first = sample(&mut solver, &front.z0, &t0);
    let mut both = [Vec::new(), Vec::new()];
    for (way, sign) in [1.0, -1.0].into_iter().enumerate() {
        let mut z = front.z0.clone();
        let mut t = &t0 * sign;
        for _ in 0..TRACE_MAX_STEPS {
            let mut zn = z.clone();
            for (i, &k) in free.iter().enumerate() {
                zn[k] += TRACE_STEP * t[i];
            }
            if solver.solve(&mut zn, &held).is_err() {
                let s = solver.lengths(&z)[c];
                if (lo..=hi).contains(&s) {
                    trace.locked_at.push(s);
                }
                break;
            }
            let tn = solver.tangent(&zn, c, &t);
            if !tn.iter().all(|x| x.is_finite()) {
                break;
            }
            let mut smp = sample(&mut solver, &zn, &tn);
            // the tangent's orientation is kept by projecting the previous one; the rates are
            // stored in the forward sense, so that the joined list runs along one parametrization
            smp.ds *= sign;
            smp.dtheta *= sign;
            let inside = smp.inside;
            both[way].push(smp);
            z = zn;
            t = tn;
            if !inside {
                break;
            }
        }
    }
    let [fwd, bwd] = both;
    trace.initial = bwd.len();
    trace.samples = bwd
        .into_iter()
        .rev()
        .chain(std::iter::once(first))
        .chain(fwd)
        .collect();
    trace
}

/// What happens at a dead centre.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadCentreKind {
    /// The cylinder's lever arm about the joint it drives is zero: ds/dθ = 0, the cylinder tops
    /// out (`tops_out`: its longest reachable length) or bottoms out before its stroke end.
    LeverArmZero {
        /// The length is a maximum (else a minimum).
        tops_out: bool,
    },
    /// The output joint reverses while the cylinder runs on (dθ/ds = 0, a four-bar's toggle).
    OutputReverses,
    /// The loop cannot close: the linkage locks.
    Locks,
}

/// A dead centre inside a cylinder's stroke.
#[derive(Debug, Clone, PartialEq)]
pub struct DeadCentre {
    /// The cylinder.
    pub cylinder: CylinderId,
    /// Its length there [m].
    pub length_m: f64,
    /// The output joint's coordinate there, if there is one [rad or m].
    pub joint_value: Option<f64>,
    /// The output coordinate.
    pub joint_axis: Option<usize>,
    /// What happens.
    pub kind: DeadCentreKind,
}

/// Every dead centre inside the strokes of `model`'s cylinders (module doc, "Dead centres").
pub fn dead_centres(model: &Model) -> Result<Vec<DeadCentre>, RangeError> {
    let nc = model.n_cylinders();
    if nc == 0 {
        return Ok(Vec::new());
    }
    let z0 = initial_pose(model)?;
    let mut solver = PoseSolver::new(model, &z0);
    let s0 = solver.lengths(&z0);
    let front = Front {
        free: solver.free.clone(),
        z0,
        s0,
        plane: Plane {
            axis_point: Vector3::zeros(),
            vertical: Vector3::y(),
            horizontal: Vector3::x(),
            swing_axis: None,
        },
    };
    let mut out = Vec::new();
    for c in 0..nc {
        let cyl = model.cylinder(c);
        let (lo, hi) = (
            cyl.retracted_length_m,
            cyl.retracted_length_m + cyl.stroke_m,
        );
        let tr = trace(model, &front, c);
        let mut found: Vec<DeadCentre> = Vec::new();
        for w in tr.samples.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            let at = |fa: f64, fb: f64| -> (f64, Option<f64>) {
                // linear interpolation of the zero of the rate between the two samples
                let f = fa / (fa - fb);
                let s = a.s + (b.s - a.s) * f;
                let th = tr.output.map(|k| a.z[k] + (b.z[k] - a.z[k]) * f);
                (s, th)
            };
            let mut push = |s: f64, th: Option<f64>, kind| {
                if s > lo && s < hi && !found.iter().any(|d| (d.length_m - s).abs() < 1e-3) {
                    found.push(DeadCentre {
                        cylinder: CylinderId(c),
                        length_m: s,
                        joint_value: th,
                        joint_axis: tr.output,
                        kind,
                    });
                }
            };
            if a.ds * b.ds < 0.0 {
                let (s, th) = at(a.ds, b.ds);
                // s rises to the zero of ds/dt along the forward parametrization: a maximum
                push(
                    s,
                    th,
                    DeadCentreKind::LeverArmZero {
                        tops_out: a.ds > 0.0,
                    },
                );
            } else if tr.output.is_some() && a.dtheta * b.dtheta < 0.0 {
                let (s, th) = at(a.dtheta, b.dtheta);
                push(s, th, DeadCentreKind::OutputReverses);
            }
        }
        for &s in &tr.locked_at {
            if !found.iter().any(|d| (d.length_m - s).abs() < 1e-3) {
                found.push(DeadCentre {
                    cylinder: CylinderId(c),
                    length_m: s,
                    joint_value: None,
                    joint_axis: tr.output,
                    kind: DeadCentreKind::Locks,
                });
            }
        }
        found.sort_by(|a, b| a.length_m.total_cmp(&b.length_m));
        out.extend(found);
    }
    Ok(out)
}

/// A chamber or motor port without a relief whose inlet is it.
#[derive(Debug, Clone, PartialEq)]
pub struct Unprotected {
    /// The volume.
    pub volume: VolumeId,
    /// What it holds: "arm_cyl piston side", "motor 'swing_motor' port A".
    pub holds: String,
}

/// Overload protection of the actuators' volumes: every cylinder chamber and motor port volume
/// without a relief-type element whose inlet is that volume, and the highest relief setting of
/// the model (the pressure an external load can exceed there) [Pa], if it has a relief.
pub fn overload_protection(model: &Model) -> (Vec<Unprotected>, Option<f64>) {
    // the relief-type elements: (inlet, setting) — the one place that knows them
    let reliefs: Vec<(Node, f64)> = model
        .elements()
        .iter()
        .filter_map(|e| match e {
            Component::ReliefValve(r) => Some((r.inlet, r.cracking_pressure_pa)),
            Component::PortRelief(r) => Some((r.relief.inlet, r.relief.cracking_pressure_pa)),
            _ => None,
        })
        .collect();
    let highest = reliefs
        .iter()
        .map(|r| r.1)
        .fold(None, |a: Option<f64>, p| Some(a.map_or(p, |a| a.max(p))));
    let protected = |v: usize| reliefs.iter().any(|r| r.0 == Node::Volume(VolumeId(v)));
    let mut out = Vec::new();
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        let mut holds: Vec<String> = vol
            .chambers
            .iter()
            .map(|(c, side)| {
                let side = match side {
                    crate::elements::hydraulics::cylinder::Side::A => "piston side",
                    crate::elements::hydraulics::cylinder::Side::B => "rod side",
                };
                format!("{} {side}", model.cylinder(c.0).name)
            })
            .collect();
        for e in model.elements() {
            if let Component::HydraulicMotor(m) = e {
                for (node, port) in [(m.a, "A"), (m.b, "B")] {
                    if node == Node::Volume(VolumeId(v)) {
                        holds.push(format!("motor '{}' port {port}", m.name));
                    }
                }
            }
        }
        if !holds.is_empty() && !protected(v) {
            out.push(Unprotected {
                volume: VolumeId(v),
                holds: holds.join(", "),
            });
        }
    }
    (out, highest)
}

/// The machine at `z` as lines in the plane of the front, for a drawing: each tree joint's pin to
/// its parent's pin, each cylinder from base to rod, and the point `p` to its body's pin [(x, y)
/// of both ends, m].
pub fn machine_lines(
    model: &Model,
    plane: &Plane,
    z: &[f64],
    p: &FramePoint,
) -> Vec<[[f64; 2]; 2]> {
    let mut ev = Evaluator::<f64>::new(model);
    ev.positions(model, z);
    let kin = &ev.kin;
    let pin = |k: usize| plane.coords(&(kin.pos[k] + kin.rot[k] * model.axes[k].point_ref));
    let mut lines = Vec::new();
    for (k, axis) in model.axes.iter().enumerate() {
        if let Frame::Link(j) = axis.parent {
            if j.0 != k {
                lines.push([pin(j.0), pin(k)]);
            }
        }
    }
    for c in model.cylinders() {
        let line = Line::at(kin, &c.base, &c.rod);
        lines.push([plane.coords(&line.rb), plane.coords(&line.rr)]);
    }
    if let Frame::Link(k) = p.frame {
        lines.push([pin(k.0), plane.coords(&kin.point(p))]);
    }
    lines
}
