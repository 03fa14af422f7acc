//! The natural-coordinate model of the global formulations (004 §2) as plain data: the layout,
//! the linear expressions of points and directions in the coordinates, the constraints, the
//! constant mass matrix and gravity force. It is compiled into the model (`Model::natural`) when
//! a global formulation is selected; its builder and conversions, which read the `Model`, are
//! `crate::mechanics::global::natural_coordinates`. Plain data beside the `Model` that owns it:
//! it imports nothing of the model and nothing of the mechanics.

use nalgebra::Vector3;

/// A 3-vector [m or -].
type V3 = Vector3<f64>;

/// Coordinates per natural frame in the spatial layout, and the most columns a [`Lin`] has.
pub const NQ_FRAME: usize = 12;

/// The natural-coordinate layout of a model's frames.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Layout {
    /// r, u, v, w: 12 coordinates per frame.
    #[default]
    Spatial,
    /// Plane motion ⊥ `n`: u (and the point of a prismatic frame) in the in-plane basis
    /// (`e1`, `e2` = n × e₁), 2 coordinates each; joint points shared.
    Planar {
        /// Unit normal of the plane of motion (the common revolute axis).
        n: V3,
        /// First in-plane basis vector.
        e1: V3,
        /// Second in-plane basis vector, n × e₁.
        e2: V3,
    },
}

/// A vector that is a constant linear combination of the coordinates plus a constant:
/// `konst + Σ_j cols[j] q[idx[j]]` (the nonzero columns only, at most [`NQ_FRAME`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lin {
    /// The natural frame the vector belongs to, `None` for the ground (then only `konst`
    /// counts).
    pub frame: Option<usize>,
    /// Number of nonzero columns.
    pub n: usize,
    /// Coordinate index of every column.
    pub idx: [usize; NQ_FRAME],
    /// Columns ∂value/∂q_idx [-, m].
    pub cols: [V3; NQ_FRAME],
    /// Constant part [m or -].
    pub konst: V3,
}

/// A − B of two [`Lin`] (B optional).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Diff {
    /// Minuend.
    pub a: Lin,
    /// Subtrahend.
    pub b: Option<Lin>,
}

/// One scalar constraint Φ = A·B − k.
#[derive(Debug, Clone)]
pub struct NatEq {
    /// Label, e.g. `z1.rigid.uu`, `z2.point.x`, `E.x`.
    pub name: String,
    /// A.
    pub a: Diff,
    /// B.
    pub b: Diff,
    /// k.
    pub k: f64,
    /// The coordinates Φ_q can be nonzero in (sorted, unique).
    pub pattern: Vec<usize>,
    /// The constant Hessian H = A_qᵀ B_q + B_qᵀ A_q as (row, column, value), both triangles,
    /// exact zeros left out.
    pub hessian: Vec<(usize, usize, f64)>,
}

/// A cylinder's pins as linear expressions.
#[derive(Debug, Clone, Copy)]
pub struct NatCylinder {
    /// Barrel pin.
    pub base: Lin,
    /// Rod pin.
    pub rod: Lin,
}

/// How one natural frame's pose is expressed in the coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameMap {
    /// r_k, the frame's reference point c̄_k (planar layout: its in-plane part), as a [`Lin`]:
    /// the frame's own coordinates, or the point c̄_k of the parent frame (a revolute joint's
    /// shared point), or a constant (a revolute joint on the ground).
    pub r: Lin,
    /// First coordinate of the orientation, u (planar: 2 coordinates) or [u v w] (spatial: 9);
    /// `None`: the reference orientation (a planar prismatic frame on the ground).
    pub rot: Option<usize>,
    /// First coordinate of r_k when the frame owns it.
    pub own_r: Option<usize>,
    /// Whether the frame owns its orientation coordinates (a planar prismatic frame shares
    /// its parent's).
    pub own_rot: bool,
}

/// The natural-coordinate model derived from a [`Model`] (immutable after construction).
#[derive(Debug, Clone, Default)]
pub struct NaturalModel {
    /// The layout (spatial or planar).
    pub layout: Layout,
    /// Number of natural frames (= number of axes).
    pub n_frames: usize,
    /// Number of natural coordinates.
    pub nq: usize,
    /// Reference point c̄_k of every frame [m].
    pub origin_ref: Vec<V3>,
    /// The coordinates of every frame.
    pub frames: Vec<FrameMap>,
    /// The constant mass matrix M as (row, column, value), both triangles, nonzeros only
    /// [kg, kg m, kg m²].
    pub mass: Vec<(usize, usize, f64)>,
    /// Constant gravity generalized force Q_g (nq) [N, N m].
    pub gravity_force: Vec<f64>,
    /// Constraints: rigid-body, tree joints, then cut joints.
    pub eqs: Vec<NatEq>,
    /// Cylinder pins.
    pub cylinders: Vec<NatCylinder>,
    /// Points of the elements' mechanical ports (`crate::elements::element`): (base, rod) of a line port,
    /// (point, point) of a point force in global axes; `None` for the others (rejected by
    /// the model compile) and for purely hydraulic elements.
    pub element_points: Vec<Option<NatCylinder>>,
    /// Body COMs (for the potential energy).
    pub com: Vec<Lin>,
    /// Labels of the coordinates, `<axis>.r.x`, `<axis>.u.y`, ….
    pub labels: Vec<String>,
}
