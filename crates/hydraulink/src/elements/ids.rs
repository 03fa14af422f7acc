//! Typed ids and the small compiled types that elements need (frames, body points, hydraulic
//! nodes): what an element's ports refer to, below the element laws and the module that holds
//! [`crate::Model`] (which holds the elements). Re-exported from `crate::model`, so
//! `crate::model::Node` stays valid above the elements.

use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

/// 3-vector of f64.
pub type V3 = Vector3<f64>;
/// 3×3 matrix of f64.
pub type M3 = Matrix3<f64>;

/// Index of a relative coordinate (an elementary joint axis) in `z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AxisId(pub usize);
/// Index of a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BodyId(pub usize);
/// Index of a hydraulic volume (a pressure state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VolumeId(pub usize);
/// Index of a cylinder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CylinderId(pub usize);

/// A moving frame: the link frame after axis `AxisId`, or the ground.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// The inertial frame.
    Ground,
    /// The link frame after this axis.
    Link(AxisId),
}

/// An elementary 1-coordinate joint axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisKind {
    /// Rotation about a line [rad].
    Revolute,
    /// Translation along a direction [m].
    Prismatic,
}

/// A point fixed in a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FramePoint {
    /// The frame.
    pub frame: Frame,
    /// Position [m], reference configuration.
    pub point_ref: V3,
}

/// A direction fixed in a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameDir {
    /// The frame.
    pub frame: Frame,
    /// Unit direction, reference configuration.
    pub dir_ref: V3,
}

/// A node of the hydraulic graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Node {
    /// A lumped volume with a pressure state.
    Volume(VolumeId),
    /// A constant-pressure source (pump or tank), index into `Hydraulics::sources`.
    Source(usize),
}

/// Where an end of a cylinder or spring–damper is attached, as named in a model file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AttachmentSpec {
    /// Body name or `"ground"`.
    pub body: String,
    /// Marker on that body.
    pub marker: String,
}
