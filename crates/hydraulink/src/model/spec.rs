//! `ModelSpec`: the plain, unvalidated description of a machine.
//!
//! This is the data a model file deserializes into (the TOML reader lives in `hydraulink-io`;
//! this crate knows no file format). `serde` derives only describe the field names. Every field
//! is SI. Nothing here is checked: [`crate::pipeline::compile`] validates a spec into an immutable
//! [`crate::Model`] and reports errors by *path* (`bodies[2].mass_kg`), which the reader maps to
//! a file line.
//!
//! # Reference configuration
//! By default (`pose = "reference"`), all body geometry (centres of mass, markers, inertia axes)
//! and all joint locations and axes are given in the **reference configuration**: the pose the
//! machine has when every joint coordinate is zero. In it, every body frame coincides with the
//! global frame. The initial configuration then follows from the joints' `q0`. This is the usual
//! convention of relative-coordinate codes; it needs no body frames in the file.
//!
//! # Assembled pose
//! With `pose = "assembled"` the same fields are global coordinates of the machine as it stands
//! at t = 0, as a CAD program exports them, and each joint's `q0` is the value its coordinate
//! has there (0 by default: the coordinates are measured from the assembled pose).
//! [`crate::pipeline::pose::to_reference`] maps such a spec back to the reference configuration
//! before it is compiled, so nothing after the compile sees the difference.

use serde::{Deserialize, Serialize};

pub use crate::elements::friction::compile::FrictionSpec;
pub use crate::elements::hydraulics::bridge_valve::{BridgeValveSpec, TrimSpec};
pub use crate::elements::hydraulics::cylinder::CylinderSpec;
pub use crate::elements::hydraulics::throttle::ThrottleSpec;
pub use crate::elements::hydraulics::valve_4_3::Valve43Spec;
pub use crate::elements::ids::AttachmentSpec;
pub use crate::elements::inputs::SignalSpec;
pub use crate::model::game::{GameSpec, VariantSpec};
use std::collections::BTreeMap;

/// A whole machine: mechanism, hydraulic circuit, input signals and solver settings.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Model name; used for the default output directory.
    pub name: String,
    /// Free text: paper, section, figure.
    #[serde(default)]
    pub description: String,
    /// Gravity vector [m/s²].
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// What the positional fields of bodies, joints, cut joints, nonholonomic constraints and
    /// body-axes loads mean: `reference` (the default; the pose with every joint coordinate
    /// zero) or `assembled` (global coordinates at t = 0, with each joint's `q0` its coordinate
    /// there).
    #[serde(default)]
    pub pose: Pose,
    /// Named points on the ground (reference = global frame).
    #[serde(default)]
    pub ground: GroundSpec,
    /// Rigid bodies.
    #[serde(default)]
    pub bodies: Vec<BodySpec>,
    /// Spanning-tree joints, in relative coordinates.
    #[serde(default)]
    pub joints: Vec<JointSpec>,
    /// Cut joints that close kinematic loops.
    #[serde(default)]
    pub cut_joints: Vec<CutJointSpec>,
    /// Hydraulic circuit graph.
    #[serde(default)]
    pub hydraulics: HydraulicsSpec,
    /// Input signals, referenced by name (e.g. the valve signal `U`).
    #[serde(default)]
    pub inputs: Vec<InputSpec>,
    /// Solver settings.
    #[serde(default)]
    pub solver: SolverSpec,
    /// Nonholonomic (velocity) constraints B(z) ż = 0: knife edges and rolling discs.
    #[serde(default)]
    pub nonholonomic: Vec<NonholonomicSpec>,
    /// Elements of the element model (`[[elements]]` with a `type`): relief and check valves,
    /// accumulators, end stops, spring–dampers, point forces, torques, joint forces.
    #[serde(default)]
    pub elements: Vec<crate::elements::component::ComponentSpec>,
    /// Extra result columns.
    #[serde(default)]
    pub outputs: OutputsSpec,
    /// The excavator game played in `hydraulink serve` (front-ends only; the results do not
    /// depend on it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<GameSpec>,
    /// Named sets of parameter overrides, each with the option in force (`choice`), applied
    /// before the model is compiled: `--set variants.<name>.choice=<option>`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variants: BTreeMap<String, VariantSpec>,
    /// A deformable heightfield ground that `bucket_dig` elements dig (003 Pub. V).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terrain: Option<crate::terrain::data::TerrainSpec>,
    /// A worksite file (a path relative to this file): obstacles and their contact elements
    /// (`[[elements]]`) that the interactive front-ends add to the machine. `hydraulink serve`
    /// and `hydraulink realtime` load it unless `--no-scene`; `hydraulink run` only with
    /// `--scene`, so a batch run of the machine is the same with or without it. The library
    /// ignores this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<String>,
    /// The viewer's heads-up display: gauges, virtual sensors, fuel (front-ends only).
    #[serde(default)]
    pub hud: crate::model::hud::HudSpec,
    /// The viewer's scenario: tasks with instructions and conditions (front-ends only).
    #[serde(default)]
    pub scenario: crate::model::hud::ScenarioSpec,
}

/// The pose in which positions are given (`pose = "reference"` or `"assembled"`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Pose {
    /// The reference configuration: every joint coordinate zero, every body frame on the global
    /// frame; the initial pose follows from the joints' `q0`.
    #[default]
    Reference,
    /// The assembled pose at t = 0, in global coordinates, as a CAD program exports it: centres
    /// of mass, markers, inertia axes, joint locations and axes, cut-joint and nonholonomic axes
    /// and body-axes load vectors; each joint's `q0` (default 0) is its coordinate in this pose.
    /// Multi-axis joints: a universal joint's `axis2` as it stands in this pose (turned by the
    /// first angle); the Cardan angles of spherical and free joints are about the parent's
    /// reference axes (the global axes when the parent is the ground). Cut-joint markers must
    /// meet in this pose to within 10 µm (`pipeline::pose::LOOP_TOLERANCE_M`).
    Assembled,
}

impl Pose {
    /// Whether this is the default, the reference configuration.
    pub fn is_reference(&self) -> bool {
        *self == Pose::Reference
    }
}

/// Extra result columns (`[outputs]`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct OutputsSpec {
    /// Markers whose global position is written at every output row, as `"body.marker"`
    /// (a tool point, the bucket tip): columns `<body>.<marker>.x`, `.y`, `.z` [m].
    #[serde(default)]
    pub markers: Vec<String>,
}

/// Kinds of nonholonomic constraint.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum NonholonomicKind {
    /// Knife edge (non-slip sled, 1 equation): the body point `marker` has no velocity along
    /// `direction` (fixed in the body: the normal of the blade in the plane of motion).
    KnifeEdge,
    /// Rolling disc without slip (2 equations): the material point of the disc at its contact with
    /// the ground plane (normal `ground_normal`) has no tangential velocity. `marker` is the disc
    /// centre, `axis` the disc axis (fixed in the body), `radius_m` its radius.
    RollingDisc,
}

/// A nonholonomic constraint on one body (001 eq. 11, linear in the velocities).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NonholonomicSpec {
    /// Unique name.
    pub name: String,
    /// Kind.
    #[serde(rename = "type")]
    pub kind: NonholonomicKind,
    /// The body.
    pub body: String,
    /// Knife edge: the contact point; rolling disc: the disc centre.
    pub marker: String,
    /// Knife edge: the blocked direction, fixed in the body, in the pose of `pose`.
    #[serde(default = "default_axis")]
    pub direction: [f64; 3],
    /// Rolling disc: the disc axis, fixed in the body, in the pose of `pose`.
    #[serde(default = "default_axis")]
    pub axis: [f64; 3],
    /// Rolling disc: the normal of the ground plane it rolls on (global).
    #[serde(default = "default_axis")]
    pub ground_normal: [f64; 3],
    /// Rolling disc: radius [m], > 0.
    #[serde(default)]
    pub radius_m: f64,
}

fn default_gravity() -> [f64; 3] {
    [0.0, -9.81, 0.0]
}

/// Named points fixed to the ground.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GroundSpec {
    /// Marker name → position [m], global frame.
    #[serde(default)]
    pub markers: std::collections::BTreeMap<String, [f64; 3]>,
}

/// A rigid body.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Unique name.
    pub name: String,
    /// Mass [kg], > 0.
    pub mass_kg: f64,
    /// Centre of mass [m], in the pose of `pose` (the reference configuration by default).
    pub com: [f64; 3],
    /// Inertia tensor about the centre of mass [kg m²], in the axes of the pose of `pose`:
    /// `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]` (products of inertia as tensor entries, i.e. −∫xy dm).
    pub inertia: [f64; 6],
    /// Marker name → position [m], in the pose of `pose`.
    #[serde(default)]
    pub markers: std::collections::BTreeMap<String, [f64; 3]>,
    /// Shapes a viewer draws for this body (plain data: the library draws nothing). Without
    /// any, a viewer draws its own default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub visual: Vec<VisualSpec>,
}

/// A simple shape drawn for a body by a viewer (`hydraulink serve`), fixed to the body. Its
/// points are in the pose of `pose`, like the markers. Every shape runs along the segment
/// `from` → `to`; a box's `width_m` is across it along `side`, its `height_m` across both.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "shape", rename_all = "snake_case", deny_unknown_fields)]
pub enum VisualSpec {
    /// A box along `from` → `to`.
    Box {
        /// One end face centre [m].
        from: [f64; 3],
        /// The other end face centre [m].
        to: [f64; 3],
        /// Edge along `side` [m], > 0.
        width_m: f64,
        /// Edge across the segment and `side` [m], > 0.
        height_m: f64,
        /// Direction of the width [-]; default z, [0, 0, 1]; not along the segment.
        #[serde(default = "default_side")]
        side: [f64; 3],
        /// Colour `#rrggbb`; none: the viewer's body colour.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        color: Option<String>,
    },
    /// A circular cylinder along `from` → `to`.
    Cylinder {
        /// Centre of one end [m].
        from: [f64; 3],
        /// Centre of the other end [m].
        to: [f64; 3],
        /// Radius [m], > 0.
        radius_m: f64,
        /// Colour `#rrggbb`; none: the viewer's body colour.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        color: Option<String>,
    },
    /// A capsule (a cylinder with hemispherical ends) whose axis runs `from` → `to`.
    Capsule {
        /// Centre of one end sphere [m].
        from: [f64; 3],
        /// Centre of the other end sphere [m].
        to: [f64; 3],
        /// Radius [m], > 0.
        radius_m: f64,
        /// Colour `#rrggbb`; none: the viewer's body colour.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        color: Option<String>,
    },
    /// A triangle mesh from a Wavefront OBJ file, read by the viewer (the library reads no
    /// file). A vertex v of the file is drawn at `origin + scale_m (v_x x + v_y y + v_z z)`,
    /// with x along `x_axis`, y the part of `y_axis` across x, and z = x × y.
    Mesh {
        /// The OBJ file: a path relative to the model file's folder, or absolute. Its faces
        /// are drawn; normals, texture coordinates and materials are ignored.
        file: String,
        /// Where the file's origin is drawn [m]; default [0, 0, 0].
        #[serde(default)]
        origin: [f64; 3],
        /// Direction of the file's x axis [-]; default [1, 0, 0].
        #[serde(default = "default_x_axis")]
        x_axis: [f64; 3],
        /// Direction of the file's y axis [-]; default [0, 1, 0]; not along `x_axis`.
        #[serde(default = "default_y_axis")]
        y_axis: [f64; 3],
        /// Metres per unit of the file [m], > 0; default 1 (0.001 for a file in millimetres).
        #[serde(default = "default_mesh_scale")]
        scale_m: f64,
        /// Colour `#rrggbb`; none: the viewer's body colour.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        color: Option<String>,
    },
}

fn default_side() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}

fn default_x_axis() -> [f64; 3] {
    [1.0, 0.0, 0.0]
}

fn default_y_axis() -> [f64; 3] {
    [0.0, 1.0, 0.0]
}

fn default_mesh_scale() -> f64 {
    1.0
}

impl VisualSpec {
    /// The segment the shape runs along, `(from, to)` [m]; a mesh: its `origin` twice.
    pub fn segment(&self) -> ([f64; 3], [f64; 3]) {
        match self {
            VisualSpec::Box { from, to, .. }
            | VisualSpec::Cylinder { from, to, .. }
            | VisualSpec::Capsule { from, to, .. } => (*from, *to),
            VisualSpec::Mesh { origin, .. } => (*origin, *origin),
        }
    }
}

/// Kinds of tree joint.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum JointKind {
    /// 1 coordinate: rotation about `axis` through `location` [rad].
    Revolute,
    /// 1 coordinate: translation along `axis` [m].
    Prismatic,
    /// 2 coordinates: rotation about `axis` then about `axis2` (both through `location`) [rad].
    Universal,
    /// 2 coordinates: rotation about `axis` [rad], then translation along it [m].
    Cylindrical,
    /// 3 coordinates: successive rotations about x, then the once-rotated y′, then the twice-
    /// rotated z″ (carried axes, Cardan angles) through `location`; singular at ±90° of the
    /// second angle [rad].
    Spherical,
    /// 0 coordinates: the child is welded to the parent.
    Fixed,
    /// 6 coordinates: translations along the reference x, y, z axes [m], then Cardan rotations
    /// about x, y, z through `location` [rad] (a free body).
    Free,
}

/// A scalar or a list, for joint initial values (one entry per coordinate).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Values {
    /// One value (1-coordinate joints).
    One(f64),
    /// One value per coordinate.
    Many(Vec<f64>),
}

impl Default for Values {
    fn default() -> Self {
        Values::Many(Vec::new())
    }
}

impl JointSpec {
    /// The initial coordinates [rad or m]: `q0`, or `q0_deg` in radians.
    pub fn q0_si(&self) -> Vec<f64> {
        degrees_or(&self.q0, &self.q0_deg)
    }

    /// The initial rates [rad/s or m/s]: `qd0`, or `qd0_deg_s` in radians per second.
    pub fn qd0_si(&self) -> Vec<f64> {
        degrees_or(&self.qd0, &self.qd0_deg_s)
    }
}

/// `deg` converted to radians when given, else `si`.
fn degrees_or(si: &Values, deg: &Option<Values>) -> Vec<f64> {
    match deg {
        Some(d) => d.as_slice().iter().map(|x| x.to_radians()).collect(),
        None => si.as_slice().to_vec(),
    }
}

impl Values {
    /// The values as a slice.
    pub fn as_slice(&self) -> &[f64] {
        match self {
            Values::One(v) => std::slice::from_ref(v),
            Values::Many(v) => v,
        }
    }
}

/// A tree joint: connects `child` to `parent` (a body or `"ground"`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct JointSpec {
    /// Unique name; also the coordinate name (`z1`, …). Multi-coordinate joints name their
    /// coordinates `<name>.0`, `<name>.1`, ….
    pub name: String,
    /// Joint kind.
    #[serde(rename = "type")]
    pub kind: JointKind,
    /// Parent body name, or `"ground"`.
    pub parent: String,
    /// Child body name.
    pub child: String,
    /// Joint point [m], in the pose of `pose`.
    #[serde(default)]
    pub location: [f64; 3],
    /// First axis (unit vector after normalisation), in the pose of `pose`.
    #[serde(default = "default_axis")]
    pub axis: [f64; 3],
    /// Second axis, universal joints only, in the pose of `pose`.
    #[serde(default)]
    pub axis2: Option<[f64; 3]>,
    /// Initial coordinate(s) [rad or m]; with `pose = "assembled"`, the coordinates of the
    /// assembled pose (0 by default).
    #[serde(default)]
    pub q0: Values,
    /// Initial rate(s) [rad/s or m/s].
    #[serde(default)]
    pub qd0: Values,
    /// Initial angle(s) in degrees [deg], in place of `q0`: for joints whose coordinates are
    /// all angles (revolute, universal, spherical).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q0_deg: Option<Values>,
    /// Initial angular rate(s) in degrees per second [deg/s], in place of `qd0`; the same joints
    /// as `q0_deg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qd0_deg_s: Option<Values>,
    /// Friction in the joint (revolute or prismatic only): a seal-friction law of the joint rate,
    /// F_μ [N m or N] opposing ż, with every force parameter in the joint's unit (N m for a
    /// revolute joint) and velocities in rad/s or m/s. `efficiency` is for cylinders only.
    #[serde(default)]
    pub friction: FrictionSpec,
}

fn default_axis() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}

/// Kinds of cut joint.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CutJointKind {
    /// Point coincidence (3 equations).
    Spherical,
    /// Point coincidence and parallel axes (5 equations).
    Revolute,
    /// Parallel axes, no relative rotation, point on line (5 equations).
    Prismatic,
    /// Planar revolute: point coincidence in the plane normal to `normal` (2 equations).
    PlanarRevolute,
    /// Planar prismatic (translational) joint in the plane normal to `normal`: no relative rotation
    /// about the normal, and marker 1 stays on the line through marker 2 along `axis` (2 equations).
    PlanarPrismatic,
}

/// A cut joint between a marker on `body1` and a marker on `body2` (either may be `"ground"`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CutJointSpec {
    /// Unique name.
    pub name: String,
    /// Kind.
    #[serde(rename = "type")]
    pub kind: CutJointKind,
    /// First body (or `"ground"`).
    pub body1: String,
    /// Marker on the first body.
    pub marker1: String,
    /// Second body (or `"ground"`).
    pub body2: String,
    /// Marker on the second body.
    pub marker2: String,
    /// Joint axis (revolute: rotation axis; prismatic: sliding direction), fixed in body 2,
    /// in the pose of `pose`.
    #[serde(default = "default_axis")]
    pub axis: [f64; 3],
    /// Plane normal for the planar joints, fixed in body 2, in the pose of `pose`.
    #[serde(default = "default_axis")]
    pub normal: [f64; 3],
}

/// The hydraulic circuit: a graph whose nodes are volumes and whose edges are components.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HydraulicsSpec {
    /// Oil properties.
    #[serde(default)]
    pub fluid: FluidSpec,
    /// Lumped control volumes (graph nodes with a pressure state).
    #[serde(default)]
    pub volumes: Vec<VolumeSpec>,
    /// Constant-pressure pumps (boundary nodes).
    #[serde(default)]
    pub pumps: Vec<PressureSourceSpec>,
    /// Tanks (boundary nodes).
    #[serde(default)]
    pub tanks: Vec<PressureSourceSpec>,
    /// 4/3 directional control valves.
    #[serde(default)]
    pub valves: Vec<Valve43Spec>,
    /// Throttle valves (fixed orifices).
    #[serde(default)]
    pub throttles: Vec<ThrottleSpec>,
    /// Double-acting cylinders.
    #[serde(default)]
    pub cylinders: Vec<CylinderSpec>,
    /// Open-centre valves with spool-dependent orifice areas (a four-orifice bridge, 004 eq. 31).
    #[serde(default)]
    pub bridge_valves: Vec<BridgeValveSpec>,
}

/// Oil properties.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FluidSpec {
    /// Density ρ [kg/m³].
    #[serde(default = "default_density")]
    pub density_kg_m3: f64,
    /// Bulk modulus of the oil B_oil [Pa].
    #[serde(default = "default_bulk")]
    pub bulk_modulus_pa: f64,
}

fn default_density() -> f64 {
    850.0
}
fn default_bulk() -> f64 {
    1.5e9
}

impl Default for FluidSpec {
    fn default() -> Self {
        FluidSpec {
            density_kg_m3: default_density(),
            bulk_modulus_pa: default_bulk(),
        }
    }
}

/// A lumped volume: hose (or block) volume plus any cylinder chambers connected to it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct VolumeSpec {
    /// Unique name (`V1`, …).
    pub name: String,
    /// What the volume is, for people (`boom cyl. piston side`): the label of its pressure
    /// gauge in the viewer's HUD. Display only. Omit for a label derived from what the volume
    /// feeds (`<cylinder> piston side` / `rod side`, else `<name> pressure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Hose volume V_h [m³], > 0.
    pub hose_volume_m3: f64,
    /// Bulk modulus of the hose wall B_h [Pa], > 0 (000 eq. 23). Omit for a rigid wall.
    #[serde(default)]
    pub hose_bulk_modulus_pa: Option<f64>,
    /// Initial pressure [Pa]. Omit to have it solved by the static initialization.
    #[serde(default)]
    pub p0_pa: Option<f64>,
    /// Reduced hydraulics by singular perturbation (002 Pub II): no pressure ODE; the pressure
    /// follows from the quasi-steady flow balance Σ Q_in − V̇ = 0 (`circuit::reduced`). The
    /// initial pressure is solved from the same balance (`p0_pa`, if given, is only the guess).
    /// Something on the volume must make that balance depend on its pressure: a valve, throttle,
    /// hose or a cylinder chamber; pumps without leakage (volumetric efficiency 1) alone are
    /// refused, since their delivery is the same at every pressure.
    #[serde(default)]
    pub algebraic: bool,
}

/// A constant-pressure boundary node (pump or tank).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PressureSourceSpec {
    /// Unique name (`P`, `T`).
    pub name: String,
    /// Pressure [Pa].
    pub pressure_pa: f64,
}

/// An input signal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    /// Unique name (`U`).
    pub name: String,
    /// The signal.
    pub signal: SignalSpec,
}

/// Formulation names.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Formulation {
    /// Semi-recursive, index-3 augmented Lagrangian with projections (000 §2.3).
    #[default]
    Penalty,
    /// Semi-recursive with coordinate partitioning (000 §2.2).
    DoubleStep,
    /// Global ALI3-P in natural coordinates with unified hydraulics (004 §2–3).
    GlobalAli3p,
    /// Global index-1 augmented Lagrangian (002, reference note 002a A.1).
    GlobalI1al,
    /// Kinematic guidance: prescribed actuator motion, no hydraulic dynamics (004 §4).
    KinematicGuidance,
    /// Multi-rate co-integration of mechanics and hydraulics (004 §4).
    Multirate,
}

impl Formulation {
    /// Every formulation, in the order above (`hydraulink compare` without `--formulations`
    /// tries each).
    pub const ALL: [Formulation; 6] = [
        Formulation::Penalty,
        Formulation::DoubleStep,
        Formulation::GlobalAli3p,
        Formulation::GlobalI1al,
        Formulation::KinematicGuidance,
        Formulation::Multirate,
    ];

    /// The name used in model files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Formulation::Penalty => "penalty",
            Formulation::DoubleStep => "double-step",
            Formulation::GlobalAli3p => "global-ali3p",
            Formulation::GlobalI1al => "global-i1al",
            Formulation::KinematicGuidance => "kinematic-guidance",
            Formulation::Multirate => "multirate",
        }
    }

    /// Whether this build implements the formulation.
    pub fn is_available(self) -> bool {
        match self {
            Formulation::Penalty => true,
            Formulation::DoubleStep => true,
            Formulation::GlobalAli3p => true,
            Formulation::GlobalI1al => true,
            Formulation::KinematicGuidance => true,
            Formulation::Multirate => true,
        }
    }
}

/// Solver settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SolverSpec {
    /// Formulation.
    #[serde(default)]
    pub formulation: Formulation,
    /// Time step Δt [s].
    #[serde(default = "default_step")]
    pub step_s: f64,
    /// Duration [s].
    #[serde(default = "default_duration")]
    pub duration_s: f64,
    /// Output interval [s]; defaults to the step.
    #[serde(default)]
    pub output_interval_s: Option<f64>,
    /// Penalty factor α (000: 1e11).
    #[serde(default = "default_penalty")]
    pub penalty: f64,
    /// Newton tolerance on joint coordinates [rad or m] (000: 1e-7).
    #[serde(default = "default_tol_q")]
    pub tolerance_position: f64,
    /// Newton tolerance on pressures [Pa] (000: 1e-2).
    #[serde(default = "default_tol_p")]
    pub tolerance_pressure_pa: f64,
    /// Relative Newton tolerance: an unknown has converged when |Δx| ≤ atol + rtol |x|
    /// (000 uses absolute tolerances only: default 0).
    #[serde(default)]
    pub tolerance_relative: f64,
    /// Newton iteration cap.
    #[serde(default = "default_max_iter")]
    pub max_iterations: u32,
    /// Multi-rate formulation: hydraulic substeps per mechanical step (004 §4: 50 with forward
    /// Euler at Δt = 10 ms).
    #[serde(default = "default_substeps")]
    pub hydraulic_substeps: u32,
    /// Multi-rate formulation: integrator of the hydraulic substeps.
    #[serde(default)]
    pub hydraulic_integrator: HydraulicIntegrator,
    /// Kinematic-guidance formulation: the prescribed length of each cylinder (004 §4, eq. 39).
    #[serde(default)]
    pub guidance: Vec<GuidanceSpec>,
    /// Newton tolerance on friction states (bristle deflection [m], film [-]) (003 Pub II: 1e-7).
    #[serde(default = "default_tol_friction")]
    pub tolerance_friction_state: f64,
    /// Global formulations: coordinates of the natural frames (`auto`: planar, a unit vector
    /// per revolute frame with the joint points shared, when every revolute axis is parallel
    /// to one normal and every prismatic axis normal to it, else spatial, 12 per frame;
    /// `spatial`: always 12).
    #[serde(default)]
    pub natural_frames: NaturalFrames,
    /// Integrate the energy accounts of the hydraulic elements (valves, throttles, relief and
    /// check valves, accumulators) at every step and write their `<name>.energy_stored`,
    /// `.energy_dissipated` and `.energy_supplied` columns. Off by default: it evaluates every
    /// hydraulic element once more per step (about 4 % of a four-bar step). Their outputs
    /// (flows, gas volume, …) are written either way, evaluated at the output rows. The
    /// mechanical elements (end stops, springs, loads) keep their accounts always: they are
    /// part of the energy balance.
    #[serde(default)]
    pub hydraulic_element_energy: bool,
    /// Step-size control: `fixed` (every step is `step_s`, the default) or `adaptive` (the step
    /// follows an estimate of the trapezoidal rule's local error, `step_s` is the first step;
    /// penalty formulation only; `crate::pipeline::step_control`).
    #[serde(default)]
    pub step_control: StepControl,
    /// Adaptive steps: relative tolerance of the local error [-] (default 1e-4).
    #[serde(default = "default_rtol")]
    pub rtol: f64,
    /// Adaptive steps: absolute tolerance of the local error, as a multiple of each unknown's
    /// Newton tolerance (`tolerance_position` for z and ż, `tolerance_pressure_pa` for p,
    /// `tolerance_friction_state` for the friction and internal states) [-] (default 10).
    #[serde(default = "default_atol")]
    pub atol: f64,
    /// Adaptive steps: the smallest step [s] (default 1e-9 s); a step that fails below it is
    /// an error.
    #[serde(default)]
    pub min_step_s: Option<f64>,
    /// Adaptive steps: the largest step [s] (default: the larger of `step_s` and the output
    /// interval).
    #[serde(default)]
    pub max_step_s: Option<f64>,
}

/// How the step size is chosen.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum StepControl {
    /// Every step is `step_s`.
    #[default]
    Fixed,
    /// The step follows the local error estimate of the trapezoidal rule (`rtol`, `atol`).
    Adaptive,
}

fn default_rtol() -> f64 {
    1e-4
}
fn default_atol() -> f64 {
    10.0
}

fn default_tol_friction() -> f64 {
    1e-7
}

/// Coordinates of the natural frames of the global formulations.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum NaturalFrames {
    /// Planar frames (one unit vector in the plane per revolute frame, joint points shared) when the
    /// mechanism is planar, spatial frames otherwise.
    #[default]
    Auto,
    /// Spatial frames (a point and three unit vectors, 12 coordinates) always.
    Spatial,
}

/// Integrator of the hydraulic substeps of the multi-rate formulation.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum HydraulicIntegrator {
    /// Trapezoidal rule (implicit; a local Newton solve per substep).
    #[default]
    Trapezoidal,
    /// Forward Euler (explicit; stable only for substeps below the hydraulic time constants).
    ForwardEuler,
}

/// A cylinder whose pin-to-pin length follows an input signal under kinematic guidance:
/// s_c(z) − s_ref(t) = 0 (004 eq. 39).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GuidanceSpec {
    /// Cylinder name.
    pub cylinder: String,
    /// Name of the input signal giving s_ref(t) [m].
    pub input: String,
    /// Name of an input signal giving ṡ_ref(t) [m/s] (e.g. a recorded `<cylinder>.velocity`
    /// column). Omit to differentiate `input` numerically (central differences over ±Δt).
    #[serde(default)]
    pub velocity_input: Option<String>,
}

fn default_substeps() -> u32 {
    10
}

fn default_step() -> f64 {
    1e-3
}
fn default_duration() -> f64 {
    10.0
}
fn default_penalty() -> f64 {
    1e11
}
fn default_tol_q() -> f64 {
    1e-7
}
fn default_tol_p() -> f64 {
    1e-2
}
fn default_max_iter() -> u32 {
    25
}

impl Default for SolverSpec {
    fn default() -> Self {
        SolverSpec {
            formulation: Formulation::default(),
            step_s: default_step(),
            duration_s: default_duration(),
            output_interval_s: None,
            penalty: default_penalty(),
            tolerance_position: default_tol_q(),
            tolerance_pressure_pa: default_tol_p(),
            tolerance_relative: 0.0,
            max_iterations: default_max_iter(),
            hydraulic_substeps: default_substeps(),
            hydraulic_integrator: HydraulicIntegrator::default(),
            guidance: Vec::new(),
            tolerance_friction_state: default_tol_friction(),
            natural_frames: NaturalFrames::default(),
            hydraulic_element_energy: false,
            step_control: StepControl::Fixed,
            rtol: default_rtol(),
            atol: default_atol(),
            min_step_s: None,
            max_step_s: None,
        }
    }
}
