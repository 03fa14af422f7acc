//! Validation of a [`ModelSpec`]: every check that needs nothing but the spec itself.
//!
//! [`validate`] runs before [`crate::pipeline::compile()`] builds anything, so compile may rely on
//! what is checked here: every number is finite, every name is unique in its namespace, every
//! reference resolves, the joints form a tree rooted at the ground, the hydraulic circuit is a
//! connected graph of volumes and components, signals are well formed and the solver settings
//! are usable. Checks that need the compiled model (loop closure, statics) belong to the
//! initialization and report an [`crate::error::InitError`].
//!
//! # Errors
//! The first error is returned as a [`ModelError`] whose `path` is the field in the spec, with
//! the serde field names and array indices (`bodies[2].mass_kg`,
//! `hydraulics.cylinders[0].base.marker`, `inputs[0].signal.times[3]`, map keys as dotted keys:
//! `bodies[0].markers.C[1]`; a key that is not a bare TOML key is quoted). `hydraulink-io` maps
//! the path to a line of the model file.
//!
//! # Order
//! Sections are checked in the order of the fields of [`ModelSpec`] (gravity, ground, bodies,
//! joints, cut joints, hydraulics, inputs, solver); within a section element by element, and
//! within an element field by field, in declaration order. A check that needs a later section
//! runs right after that section: "body is not connected to the tree" and "joint cycle" after
//! the joints, "volume is not connected" after the cylinders. References to later sections
//! (a valve's `input`) are checked where they appear.
//!
//! # Namespaces
//! Names must be non-empty and unique within their namespace:
//! bodies (plus the reserved `"ground"`), joints, cut joints, hydraulic nodes (volumes, pumps
//! and tanks together), hydraulic components (valves, throttles and cylinders together), inputs.

use std::collections::BTreeMap;

use nalgebra::{Matrix3, SymmetricEigen, Vector3};

use crate::elements::component::ComponentSpec;
use crate::elements::field_check::{input_ref, one_of, volume_ref, At, NodeKind};
use crate::error::ModelError;
use crate::model::hud::{unit_scale, BindingSourceSpec, SensorSpec, FUEL_SENSORS};
use crate::model::spec::Formulation;
use crate::model::spec::{
    AttachmentSpec, BodySpec, CutJointKind, CutJointSpec, FrictionSpec, GroundSpec, HydraulicsSpec,
    InputSpec, JointKind, JointSpec, ModelSpec, SignalSpec, SolverSpec, Values, VisualSpec,
};

/// The reserved name of the fixed frame; joint parents, cut-joint bodies and cylinder ends may
/// name it. Its markers are `ground.markers`.
pub const GROUND: &str = "ground";

/// Smallest accepted sine of the angle between the two axes of a universal joint [-].
const MIN_AXIS_SINE: f64 = 1e-6;

/// Largest accepted cosine between the sliding axis and the plane normal of a planar prismatic
/// cut joint [-] (the same tolerance as compile).
const MAX_PERPENDICULAR_COSINE: f64 = 1e-9;

/// Relative tolerance on principal moments for the semi-definiteness and triangle tests [-].
const INERTIA_REL_TOL: f64 = 1e-9;

/// Checks a spec; returns the first error in the order described in the module doc.
pub fn validate(spec: &ModelSpec) -> Result<(), ModelError> {
    let model = At::new("", "model");
    model.finite_all("gravity", &spec.gravity)?;
    check_ground(&spec.ground)?;
    let bodies = check_bodies(&spec.bodies)?;
    check_joints(&spec.joints, &spec.bodies, &bodies)?;
    check_cut_joints(spec, &bodies)?;
    super::pose::check_loops(spec)?;
    check_hydraulics(spec, &bodies)?;
    check_algebraic_volumes(spec)?;
    check_inputs(&spec.inputs)?;
    check_solver(&spec.solver)?;
    crate::pipeline::step_control::check_spec(spec)?;
    // needs the solver's duration (a later section: checked right after it)
    check_valve_input_ranges(spec)?;
    check_internal_states(spec)?;
    check_guidance(spec)?;
    check_joint_friction(spec)?;
    check_friction_formulation(spec)?;
    check_nonholonomic(spec, &bodies)?;
    check_hud(spec)?;
    if let Some(game) = &spec.game {
        let markers = |body: &str, marker: &str| {
            spec.bodies
                .iter()
                .find(|b| b.name == body)
                .map(|b| b.markers.contains_key(marker))
        };
        crate::model::game::check_game(game, &markers)?;
    }
    crate::model::game::check_variants(&spec.variants)?;
    check_something_to_simulate(spec)
}

/// The model signal of every 4/3 valve's and bridge valve's input stays in the valve's input
/// range over the run, unless the valve saturates (`Valve43Spec::check_signal_range`,
/// `BridgeValveSpec::check_signal_range`); after `check_inputs`, so the signals are valid.
fn check_valve_input_ranges(spec: &ModelSpec) -> Result<(), ModelError> {
    let valves = spec
        .hydraulics
        .valves
        .iter()
        .enumerate()
        .map(|(i, v)| (At::element("hydraulics.valves", i, "valve", &v.name), v))
        .chain(
            spec.elements
                .iter()
                .enumerate()
                .filter_map(|(i, e)| match e {
                    ComponentSpec::Valve43(v) => {
                        Some((At::element("elements", i, "valve", &v.name), v))
                    }
                    _ => None,
                }),
        );
    let signal = |name: &str| {
        spec.inputs
            .iter()
            .find(|u| u.name == name)
            .map(|input| crate::elements::inputs::Signal::from_spec(&input.signal))
    };
    for (at, v) in valves {
        if let Some(signal) = signal(&v.input) {
            v.check_signal_range(&at, &signal, spec.solver.duration_s)?;
        }
    }
    let bridges = spec
        .hydraulics
        .bridge_valves
        .iter()
        .enumerate()
        .map(|(i, v)| {
            (
                At::element("hydraulics.bridge_valves", i, "valve", &v.name),
                v,
            )
        })
        .chain(
            spec.elements
                .iter()
                .enumerate()
                .filter_map(|(i, e)| match e {
                    ComponentSpec::BridgeValve(v) => {
                        Some((At::element("elements", i, "valve", &v.name), v))
                    }
                    _ => None,
                }),
        );
    for (at, v) in bridges {
        if let Some(signal) = signal(&v.input) {
            v.check_signal_range(&at, &signal, spec.solver.duration_s)?;
        }
    }
    Ok(())
}

/// Elements with internal states (`ComponentSpec::internal_state_field`: a relief valve's
/// poppet lag) are Newton unknowns of the penalty formulation only; every other formulation
/// would leave them frozen, so it is rejected here, naming the element and its field. The
/// algebraic-volume elimination would see them at their steady state, so a model with algebraic
/// volumes is rejected too.
fn check_internal_states(spec: &ModelSpec) -> Result<(), ModelError> {
    for (i, e) in spec.elements.iter().enumerate() {
        let Some(field) = e.internal_state_field() else {
            continue;
        };
        let at = || {
            (
                format!("elements[{i}].{field}"),
                format!("{} '{}'", e.noun(), e.name()),
            )
        };
        let formulation = spec.solver.formulation;
        if formulation != Formulation::Penalty {
            let (path, element) = at();
            return Err(ModelError::new(
                path,
                element,
                format!(
                    "gives the element an internal state, which only the 'penalty' formulation \
                     integrates; not supported by formulation '{}'",
                    formulation.name()
                ),
            ));
        }
        if let Some(v) = spec.hydraulics.volumes.iter().find(|v| v.algebraic) {
            let (path, element) = at();
            return Err(ModelError::new(
                path,
                element,
                format!(
                    "gives the element an internal state, which the algebraic volume '{}' \
                     cannot carry (remove the lag or make the volume a state)",
                    v.name
                ),
            ));
        }
    }
    Ok(())
}

/// A model needs at least one unknown: a joint coordinate or a hydraulic volume.
fn check_something_to_simulate(spec: &ModelSpec) -> Result<(), ModelError> {
    let n_coords: usize = spec.joints.iter().map(|j| n_coordinates(j.kind)).sum();
    if n_coords == 0 && spec.hydraulics.volumes.is_empty() {
        let path = if spec.joints.is_empty() {
            "joints"
        } else {
            "joints[0].type"
        };
        return Err(ModelError::new(
            path,
            format!("model '{}'", spec.name),
            "nothing to simulate: the model has no joint coordinates (no joints, or only fixed \
             ones) and no hydraulic volumes",
        ));
    }
    // a circuit without a mechanism runs under the formulations that take n = 0 coordinates
    use crate::model::spec::Formulation;
    let f = spec.solver.formulation;
    if n_coords == 0 && !matches!(f, Formulation::Penalty | Formulation::GlobalI1al) {
        return Err(ModelError::new(
            "solver.formulation",
            "solver",
            format!(
                "'{}' needs a mechanism (at least one joint coordinate); a circuit alone runs \
                 under 'penalty' or 'global-i1al'",
                f.name()
            ),
        ));
    }
    Ok(())
}

/// Nonholonomic constraints: names, body and marker, non-zero vectors, a positive disc radius,
/// and a formulation that enforces them (the penalty formulation).
fn check_nonholonomic(
    spec: &ModelSpec,
    body_index: &BTreeMap<&str, usize>,
) -> Result<(), ModelError> {
    use crate::model::spec::{Formulation, NonholonomicKind};
    let mut names = Names::new();
    for (i, nh) in spec.nonholonomic.iter().enumerate() {
        let at = At::element("nonholonomic", i, "nonholonomic constraint", &nh.name);
        names.add(&at, &nh.name)?;
        body_ref(&at, "body", &nh.body, body_index, false)?;
        marker_ref(spec, &at, "marker", &nh.body, &nh.marker)?;
        match nh.kind {
            NonholonomicKind::KnifeEdge => {
                at.nonzero_vector("direction", &nh.direction)?;
            }
            NonholonomicKind::RollingDisc => {
                at.nonzero_vector("axis", &nh.axis)?;
                at.nonzero_vector("ground_normal", &nh.ground_normal)?;
                at.positive("radius_m", nh.radius_m)?;
                // the contact direction ĝ ∝ n − (n·a) a is undefined for a disc lying flat
                let unit = |v: &[f64; 3]| {
                    let w = Vector3::from(*v);
                    (w / w.amax()).normalize()
                };
                let cross = unit(&nh.axis).cross(&unit(&nh.ground_normal));
                if cross.norm() < 1e-6 {
                    return Err(at.error(
                        "axis",
                        "is parallel to ground_normal in the reference configuration: the disc \
                         lies flat and has no contact point",
                    ));
                }
            }
        }
        if spec.solver.formulation != Formulation::Penalty {
            return Err(at.error(
                "type",
                format!(
                    "nonholonomic constraints are simulated by the penalty formulation only, not \
                     by '{}'",
                    spec.solver.formulation.name()
                ),
            ));
        }
    }
    Ok(())
}

/// Number of coordinates of a tree joint.
fn n_coordinates(kind: JointKind) -> usize {
    match kind {
        JointKind::Fixed => 0,
        JointKind::Revolute | JointKind::Prismatic => 1,
        JointKind::Universal | JointKind::Cylindrical => 2,
        JointKind::Spherical => 3,
        JointKind::Free => 6,
    }
}

/// The model-file name of a joint kind (`type = "…"`).
pub(crate) fn joint_kind_name(kind: JointKind) -> &'static str {
    match kind {
        JointKind::Revolute => "revolute",
        JointKind::Prismatic => "prismatic",
        JointKind::Universal => "universal",
        JointKind::Cylindrical => "cylindrical",
        JointKind::Spherical => "spherical",
        JointKind::Fixed => "fixed",
        JointKind::Free => "free",
    }
}

// ---------------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------------

fn check_ground(ground: &GroundSpec) -> Result<(), ModelError> {
    check_markers(&At::new("ground", "ground"), &ground.markers)
}

/// Checks the bodies; returns the body namespace (name → index).
fn check_bodies(bodies: &[BodySpec]) -> Result<BTreeMap<&str, usize>, ModelError> {
    let mut names = Names::new();
    let mut index = BTreeMap::new();
    for (i, body) in bodies.iter().enumerate() {
        let at = At::element("bodies", i, "body", &body.name);
        if body.name == GROUND {
            return Err(at.error(
                "name",
                "'ground' is reserved for the fixed frame; choose another body name",
            ));
        }
        names.add(&at, &body.name)?;
        index.insert(body.name.as_str(), i);
        at.positive("mass_kg", body.mass_kg)?;
        at.finite_all("com", &body.com)?;
        check_inertia(&at, &body.inertia)?;
        check_markers(&at, &body.markers)?;
        check_visuals(&at, &body.visual)?;
    }
    Ok(index)
}

/// A body's `visual` shapes: finite points, positive sizes, a box's side across its segment,
/// colours as `#rrggbb`. A capsule may be a sphere (`from` = `to`); a box or cylinder needs a
/// length.
fn check_visuals(at: &At, visuals: &[VisualSpec]) -> Result<(), ModelError> {
    for (k, v) in visuals.iter().enumerate() {
        let f = |name: &str| format!("visual[{k}].{name}");
        if let VisualSpec::Mesh {
            file,
            origin,
            x_axis,
            y_axis,
            scale_m,
            color,
        } = v
        {
            if file.trim().is_empty() {
                return Err(at.error(&f("file"), "must name an OBJ file, got an empty path"));
            }
            at.finite_all(&f("origin"), origin)?;
            at.nonzero_vector(&f("x_axis"), x_axis)?;
            at.nonzero_vector(&f("y_axis"), y_axis)?;
            let (x, y) = (x_axis, y_axis);
            if sine_between(x, y).partial_cmp(&1e-6) != Some(std::cmp::Ordering::Greater) {
                return Err(at.error(
                    &f("y_axis"),
                    format!("must not lie along x_axis {x:?}, got {y:?}"),
                ));
            }
            at.positive(&f("scale_m"), *scale_m)?;
            check_color(at, &f("color"), color)?;
            continue;
        }
        let (from, to) = v.segment();
        at.finite_all(&f("from"), &from)?;
        at.finite_all(&f("to"), &to)?;
        let d = [to[0] - from[0], to[1] - from[1], to[2] - from[2]];
        let length = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let color = match v {
            VisualSpec::Box {
                width_m,
                height_m,
                side,
                color,
                ..
            } => {
                at.positive(&f("width_m"), *width_m)?;
                at.positive(&f("height_m"), *height_m)?;
                at.nonzero_vector(&f("side"), side)?;
                let sine = sine_between(&d, side);
                // a NaN sine (a side of NaN length) fails too
                if length > 0.0 && sine.partial_cmp(&1e-6) != Some(std::cmp::Ordering::Greater) {
                    return Err(at.error(
                        &f("side"),
                        format!(
                            "must not lie along the box (from {from:?} to {to:?}), got {side:?}"
                        ),
                    ));
                }
                color
            }
            VisualSpec::Cylinder {
                radius_m, color, ..
            } => {
                at.positive(&f("radius_m"), *radius_m)?;
                color
            }
            VisualSpec::Capsule {
                radius_m, color, ..
            } => {
                at.positive(&f("radius_m"), *radius_m)?;
                color
            }
            // checked above, with its own fields
            VisualSpec::Mesh { color, .. } => color,
        };
        let sphere = matches!(v, VisualSpec::Capsule { .. });
        if length == 0.0 && !sphere {
            return Err(at.error(
                &f("to"),
                format!("must differ from `from` (the shape has no length), got {to:?}"),
            ));
        }
        check_color(at, &f("color"), color)?;
    }
    Ok(())
}

/// |sin| of the angle between `a` and `b` [-]: |a × b| / (|a| |b|); NaN for a zero vector.
fn sine_between(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    let c = [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ];
    let norm = |v: &[f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    norm(&c) / (norm(a) * norm(b))
}

/// A colour `#rrggbb` (or none).
fn check_color(at: &At, field: &str, color: &Option<String>) -> Result<(), ModelError> {
    match color {
        Some(c)
            if !(c.len() == 7
                && c.starts_with('#')
                && c[1..].chars().all(|ch| ch.is_ascii_hexdigit())) =>
        {
            Err(at.error(field, format!("must be a colour '#rrggbb', got {c:?}")))
        }
        _ => Ok(()),
    }
}

fn check_joints(
    joints: &[JointSpec],
    bodies: &[BodySpec],
    body_index: &BTreeMap<&str, usize>,
) -> Result<(), ModelError> {
    let mut names = Names::new();
    // child body → index of the joint that has it as child
    let mut parent_joint: BTreeMap<&str, usize> = BTreeMap::new();
    for (j, joint) in joints.iter().enumerate() {
        let at = At::element("joints", j, "joint", &joint.name);
        names.add(&at, &joint.name)?;
        body_ref(&at, "parent", &joint.parent, body_index, true)?;
        if joint.child == GROUND {
            return Err(at.error(
                "child",
                "the ground cannot be a joint's child; the ground is the root of the tree \
                 (swap parent and child)",
            ));
        }
        body_ref(&at, "child", &joint.child, body_index, false)?;
        if joint.child == joint.parent {
            return Err(at.error(
                "child",
                format!("body '{}' cannot be its own parent", joint.child),
            ));
        }
        if let Some(&other) = parent_joint.get(joint.child.as_str()) {
            let other_name = joints.get(other).map_or("", |o| o.name.as_str());
            return Err(at.error(
                "child",
                format!(
                    "body '{}' is already the child of joint '{}' (joints[{}]); each body has \
                     exactly one parent joint: close kinematic loops with [[cut_joints]]",
                    joint.child, other_name, other
                ),
            ));
        }
        parent_joint.insert(joint.child.as_str(), j);
        at.finite_all("location", &joint.location)?;
        at.nonzero_vector("axis", &joint.axis)?;
        match (joint.kind, &joint.axis2) {
            (JointKind::Universal, None) => {
                return Err(at.error(
                    "axis2",
                    "is missing; a universal joint needs a second axis, not parallel to `axis`",
                ));
            }
            (JointKind::Universal, Some(axis2)) => {
                at.nonzero_vector("axis2", axis2)?;
                let a = Vector3::from(joint.axis).normalize();
                let b = Vector3::from(*axis2).normalize();
                if a.cross(&b).norm() <= MIN_AXIS_SINE {
                    return Err(at.error(
                        "axis2",
                        format!(
                            "{axis2:?} is parallel to axis {:?}; the two axes of a universal \
                             joint must not be parallel",
                            joint.axis
                        ),
                    ));
                }
            }
            (kind, Some(_)) => {
                return Err(at.error(
                    "axis2",
                    format!(
                        "is only used by universal joints, and this joint is {}; remove it",
                        joint_kind_name(kind)
                    ),
                ));
            }
            (_, None) => {}
        }
        check_joint_values(&at, "q0", joint.kind, &joint.q0)?;
        check_joint_values(&at, "qd0", joint.kind, &joint.qd0)?;
        for (field, si, deg) in [
            ("q0_deg", ("q0", &joint.q0), &joint.q0_deg),
            ("qd0_deg_s", ("qd0", &joint.qd0), &joint.qd0_deg_s),
        ] {
            let Some(deg) = deg else { continue };
            if !matches!(
                joint.kind,
                JointKind::Revolute | JointKind::Universal | JointKind::Spherical
            ) {
                return Err(at.error(
                    field,
                    format!(
                        "is for joints whose coordinates are all angles (revolute, universal, \
                         spherical); a {} joint has lengths in metres: give {} instead",
                        joint_kind_name(joint.kind),
                        si.0
                    ),
                ));
            }
            if !si.1.as_slice().is_empty() {
                return Err(at.error(
                    field,
                    format!("and `{}` are both given: keep one of them", si.0),
                ));
            }
            check_joint_values(&at, field, joint.kind, deg)?;
        }
    }

    for (i, body) in bodies.iter().enumerate() {
        if !parent_joint.contains_key(body.name.as_str()) {
            let at = At::element("bodies", i, "body", &body.name);
            return Err(at.error(
                "name",
                format!(
                    "body is not connected to the tree: no joint has it as child (add a \
                     [[joints]] entry with child = \"{}\")",
                    body.name
                ),
            ));
        }
    }

    // Every body now has exactly one parent joint. Walking parents from any body either reaches
    // the ground or enters a cycle within `bodies.len()` steps.
    for (j, joint) in joints.iter().enumerate() {
        let mut chain: Vec<&str> = vec![joint.child.as_str()];
        let mut current = joint.parent.as_str();
        while current != GROUND {
            if let Some(start) = chain.iter().position(|b| *b == current) {
                let mut cycle: Vec<&str> = chain.get(start..).unwrap_or_default().to_vec();
                cycle.push(current);
                let at = At::element("joints", j, "joint", &joint.name);
                return Err(at.error(
                    "parent",
                    format!(
                        "the joints form a cycle ({}) that never reaches 'ground'; the joints \
                         must form a tree: close kinematic loops with [[cut_joints]]",
                        cycle.join(" <- ")
                    ),
                ));
            }
            chain.push(current);
            match parent_joint.get(current).and_then(|&p| joints.get(p)) {
                Some(parent) => current = parent.parent.as_str(),
                // Unreachable after the checks above (every body has a parent joint); stop.
                None => break,
            }
        }
    }
    Ok(())
}

fn check_joint_values(
    at: &At,
    field: &str,
    kind: JointKind,
    values: &Values,
) -> Result<(), ModelError> {
    let values = values.as_slice();
    at.finite_all(field, values)?;
    let n = n_coordinates(kind);
    if !values.is_empty() && values.len() != n {
        return Err(at.error(
            field,
            format!(
                "has {}, but a {} joint has {}: give {} (or none, for all zeros)",
                count(values.len(), "value"),
                joint_kind_name(kind),
                count(n, "coordinate"),
                count(n, "value"),
            ),
        ));
    }
    Ok(())
}

fn check_cut_joints(
    spec: &ModelSpec,
    body_index: &BTreeMap<&str, usize>,
) -> Result<(), ModelError> {
    let mut names = Names::new();
    for (c, cut) in spec.cut_joints.iter().enumerate() {
        let at = At::element("cut_joints", c, "cut joint", &cut.name);
        check_cut_joint(spec, &at, cut, body_index, &mut names)?;
    }
    Ok(())
}

fn check_cut_joint<'a>(
    spec: &ModelSpec,
    at: &At,
    cut: &'a CutJointSpec,
    body_index: &BTreeMap<&str, usize>,
    names: &mut Names<'a>,
) -> Result<(), ModelError> {
    names.add(at, &cut.name)?;
    body_ref(at, "body1", &cut.body1, body_index, true)?;
    marker_ref(spec, at, "marker1", &cut.body1, &cut.marker1)?;
    body_ref(at, "body2", &cut.body2, body_index, true)?;
    if cut.body2 == cut.body1 {
        return Err(at.error(
            "body2",
            format!(
                "is the same body as body1 ('{}'); a cut joint connects two bodies",
                cut.body1
            ),
        ));
    }
    marker_ref(spec, at, "marker2", &cut.body2, &cut.marker2)?;
    at.nonzero_vector("axis", &cut.axis)?;
    at.nonzero_vector("normal", &cut.normal)?;
    if cut.kind == CutJointKind::PlanarPrismatic {
        let axis = Vector3::from(cut.axis).normalize();
        let normal = Vector3::from(cut.normal).normalize();
        if axis.dot(&normal).abs() > MAX_PERPENDICULAR_COSINE {
            return Err(at.error(
                "axis",
                format!(
                    "{:?} is not perpendicular to the plane normal {:?}; the sliding axis of a \
                     planar prismatic joint lies in the plane",
                    cut.axis, cut.normal
                ),
            ));
        }
    }
    Ok(())
}

fn check_hydraulics(
    spec: &ModelSpec,
    body_index: &BTreeMap<&str, usize>,
) -> Result<(), ModelError> {
    let hydraulics: &HydraulicsSpec = &spec.hydraulics;
    let fluid = At::new("hydraulics.fluid", "fluid");
    fluid.positive("density_kg_m3", hydraulics.fluid.density_kg_m3)?;
    // what the elements' own spec checks read of the model (`elements::field_check`)
    let input_names: Vec<&str> = spec.inputs.iter().map(|i| i.name.as_str()).collect();
    let density_kg_m3 = hydraulics.fluid.density_kg_m3;
    fluid.positive("bulk_modulus_pa", hydraulics.fluid.bulk_modulus_pa)?;

    let mut node_names = Names::new();
    let mut nodes: BTreeMap<&str, NodeKind> = BTreeMap::new();
    for (i, volume) in hydraulics.volumes.iter().enumerate() {
        let at = At::element("hydraulics.volumes", i, "volume", &volume.name);
        node_names.add(&at, &volume.name)?;
        nodes.insert(volume.name.as_str(), NodeKind::Volume);
        at.positive("hose_volume_m3", volume.hose_volume_m3)?;
        if let Some(bulk) = volume.hose_bulk_modulus_pa {
            at.positive("hose_bulk_modulus_pa", bulk)?;
        }
        if let Some(p0) = volume.p0_pa {
            at.finite("p0_pa", p0)?;
            // lumped-fluid pressures are absolute: a negative start is a sign or gauge mistake
            // (it would also never raise the cavitation warning, which counts crossings of 0)
            if p0 < 0.0 {
                return Err(at.error(
                    "p0_pa",
                    format!("must be >= 0 (absolute pressure in Pa), got {p0}; a gauge pressure needs the ambient 1.013e5 Pa added"),
                ));
            }
        }
    }
    for (prefix, kind, list, noun) in [
        (
            "hydraulics.pumps",
            NodeKind::Pump,
            &hydraulics.pumps,
            "pump",
        ),
        (
            "hydraulics.tanks",
            NodeKind::Tank,
            &hydraulics.tanks,
            "tank",
        ),
    ] {
        for (i, source) in list.iter().enumerate() {
            let at = At::element(prefix, i, noun, &source.name);
            node_names.add(&at, &source.name)?;
            nodes.insert(source.name.as_str(), kind);
            at.finite("pressure_pa", source.pressure_pa)?;
            at.non_negative("pressure_pa", source.pressure_pa)?;
        }
    }
    // a pump must push oil towards every tank
    let highest_tank = hydraulics
        .tanks
        .iter()
        .map(|t| (t.pressure_pa, t.name.as_str()))
        .fold(None, |m: Option<(f64, &str)>, x| match m {
            Some(y) if y.0 >= x.0 => Some(y),
            _ => Some(x),
        });
    if let Some((p_tank, tank)) = highest_tank {
        for (i, pump) in hydraulics.pumps.iter().enumerate() {
            if pump.pressure_pa <= p_tank {
                let at = At::element("hydraulics.pumps", i, "pump", &pump.name);
                return Err(at.error(
                    "pressure_pa",
                    format!(
                        "{} Pa is not above the pressure of tank '{tank}' ({p_tank} Pa): a pump must supply a higher pressure than every tank",
                        pump.pressure_pa
                    ),
                ));
            }
        }
    }

    let mut components = Names::new();
    for (i, valve) in hydraulics.valves.iter().enumerate() {
        let at = At::element("hydraulics.valves", i, "valve", &valve.name);
        components.add(&at, &valve.name)?;
        valve.validate(&at, &nodes, &input_names, density_kg_m3)?;
    }
    for (i, throttle) in hydraulics.throttles.iter().enumerate() {
        let at = At::element("hydraulics.throttles", i, "throttle", &throttle.name);
        components.add(&at, &throttle.name)?;
        throttle.validate(&at, &nodes, &input_names, density_kg_m3)?;
    }
    for (i, cylinder) in hydraulics.cylinders.iter().enumerate() {
        let at = At::element("hydraulics.cylinders", i, "cylinder", &cylinder.name);
        components.add(&at, &cylinder.name)?;
        let checks = CylinderChecks {
            spec,
            at: &at,
            body_index,
            nodes: &nodes,
        };
        crate::elements::hydraulics::cylinder::check(cylinder, &checks)?;
    }

    for (i, valve) in hydraulics.bridge_valves.iter().enumerate() {
        let at = At::element("hydraulics.bridge_valves", i, "valve", &valve.name);
        components.add(&at, &valve.name)?;
        valve.validate(&at, &nodes, &input_names, density_kg_m3)?;
    }
    // the same elements as `[[elements]]` entries (their names: `pipeline::compile`)
    for (i, e) in spec.elements.iter().enumerate() {
        let at = At::element("elements", i, e.noun(), e.name());
        match e {
            ComponentSpec::Valve43(v) => v.validate(&at, &nodes, &input_names, density_kg_m3)?,
            ComponentSpec::BridgeValve(v) => {
                v.validate(&at, &nodes, &input_names, density_kg_m3)?
            }
            ComponentSpec::Throttle(t) => t.validate(&at, &nodes, &input_names, density_kg_m3)?,
            _ => {}
        }
    }
    for (i, volume) in hydraulics.volumes.iter().enumerate() {
        let name = volume.name.as_str();
        let by_valve_or_throttle = hydraulics
            .valves
            .iter()
            .any(|v| v.node_names().contains(&name))
            || hydraulics
                .bridge_valves
                .iter()
                .any(|v| v.node_names().contains(&name))
            || hydraulics
                .throttles
                .iter()
                .any(|t| t.node_names().contains(&name))
            || spec
                .elements
                .iter()
                .any(|e| e.valve_or_throttle_nodes().contains(&name));
        let by_cylinder = hydraulics
            .cylinders
            .iter()
            .any(|c| c.piston_side == name || c.rod_side == name);
        if !(by_valve_or_throttle || by_cylinder) {
            let at = At::element("hydraulics.volumes", i, "volume", name);
            return Err(at.error(
                "name",
                "volume is not connected to any component (valve port, throttle end or cylinder \
                 chamber), so nothing determines its pressure; connect it or remove it",
            ));
        }
    }
    Ok(())
}

/// The model side of a cylinder's spec check (`hydraulics::cylinder::check`, where the
/// checks live): field errors in this file's messages, bodies, markers and volumes.
struct CylinderChecks<'a> {
    spec: &'a ModelSpec,
    at: &'a At,
    body_index: &'a BTreeMap<&'a str, usize>,
    nodes: &'a BTreeMap<&'a str, NodeKind>,
}

impl crate::elements::hydraulics::cylinder::SpecChecks for CylinderChecks<'_> {
    fn path(&self, field: &str) -> String {
        self.at.path(field)
    }
    fn element(&self) -> &str {
        &self.at.element
    }
    fn error(&self, field: &str, message: String) -> ModelError {
        self.at.error(field, message)
    }
    fn finite(&self, field: &str, x: f64) -> Result<f64, ModelError> {
        self.at.finite(field, x)
    }
    fn positive(&self, field: &str, x: f64) -> Result<f64, ModelError> {
        self.at.positive(field, x)
    }
    fn non_negative(&self, field: &str, x: f64) -> Result<f64, ModelError> {
        self.at.non_negative(field, x)
    }
    fn attachment(&self, field: &str, end: &AttachmentSpec) -> Result<(), ModelError> {
        check_attachment(self.spec, self.at, field, end, self.body_index)
    }
    fn volume(&self, field: &str, name: &str) -> Result<(), ModelError> {
        volume_ref(self.at, field, name, self.nodes)
    }
}

fn check_attachment(
    spec: &ModelSpec,
    at: &At,
    field: &str,
    end: &AttachmentSpec,
    body_index: &BTreeMap<&str, usize>,
) -> Result<(), ModelError> {
    body_ref(at, &format!("{field}.body"), &end.body, body_index, true)?;
    marker_ref(spec, at, &format!("{field}.marker"), &end.body, &end.marker)
}

fn check_inputs(inputs: &[InputSpec]) -> Result<(), ModelError> {
    let mut names = Names::new();
    for (i, input) in inputs.iter().enumerate() {
        let at = At::element("inputs", i, "input", &input.name);
        names.add(&at, &input.name)?;
        match &input.signal {
            SignalSpec::Constant { value } => {
                at.finite("signal.value", *value)?;
            }
            SignalSpec::PiecewiseConstant { times, values }
            | SignalSpec::Table { times, values } => {
                check_samples(&at, times, values)?;
            }
            SignalSpec::Step {
                time_s,
                before,
                after,
            } => {
                at.finite("signal.time_s", *time_s)?;
                at.finite("signal.before", *before)?;
                at.finite("signal.after", *after)?;
            }
            SignalSpec::Sine {
                amplitude,
                frequency_hz,
                phase_rad,
                offset,
            } => {
                at.finite("signal.amplitude", *amplitude)?;
                at.non_negative("signal.frequency_hz", *frequency_hz)?;
                at.finite("signal.phase_rad", *phase_rad)?;
                at.finite("signal.offset", *offset)?;
            }
        }
    }
    Ok(())
}

/// Checks the `times`/`values` table of a piecewise-constant or tabulated signal.
fn check_samples(at: &At, times: &[f64], values: &[f64]) -> Result<(), ModelError> {
    at.finite_all("signal.times", times)?;
    at.finite_all("signal.values", values)?;
    if times.is_empty() {
        return Err(at.error("signal.times", "is empty; give at least one time [s]"));
    }
    if values.len() != times.len() {
        return Err(at.error(
            "signal.values",
            format!(
                "has {} entries but `times` has {}; give one value per time",
                values.len(),
                times.len()
            ),
        ));
    }
    for (k, pair) in times.windows(2).enumerate() {
        if let [earlier, later] = pair {
            if later <= earlier {
                return Err(at.error(
                    &format!("signal.times[{}]", k + 1),
                    format!(
                        "times must be strictly increasing, but times[{}] = {later:?} s follows \
                         times[{k}] = {earlier:?} s",
                        k + 1
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn check_solver(solver: &SolverSpec) -> Result<(), ModelError> {
    let at = At::new("solver", "solver");
    let step = at.positive("step_s", solver.step_s)?;
    let duration = at.positive("duration_s", solver.duration_s)?;
    if step > duration {
        return Err(at.error(
            "step_s",
            format!("{step:?} s is longer than the duration {duration:?} s (duration_s)"),
        ));
    }
    if let Some(interval) = solver.output_interval_s {
        let interval = at.positive("output_interval_s", interval)?;
        if interval < step {
            return Err(at.error(
                "output_interval_s",
                format!("{interval:?} s is shorter than the time step {step:?} s (step_s)"),
            ));
        }
    }
    at.positive("penalty", solver.penalty)?;
    at.positive("tolerance_position", solver.tolerance_position)?;
    at.positive("tolerance_pressure_pa", solver.tolerance_pressure_pa)?;
    at.non_negative("tolerance_relative", solver.tolerance_relative)?;
    at.positive("tolerance_friction_state", solver.tolerance_friction_state)?;
    for (field, value, max) in [
        ("max_iterations", solver.max_iterations, MAX_ITERATIONS),
        (
            "hydraulic_substeps",
            solver.hydraulic_substeps,
            MAX_HYDRAULIC_SUBSTEPS,
        ),
    ] {
        if value < 1 {
            return Err(at.error(field, "must be at least 1, got 0"));
        }
        if value > max {
            return Err(at.error(
                field,
                format!("must be at most {max}, got {value} (it sizes buffers and bounds the work of a step)"),
            ));
        }
    }
    Ok(())
}

/// Upper bound of `solver.max_iterations` (a step does at most this many Newton solves).
pub const MAX_ITERATIONS: u32 = 1000;

/// Upper bound of `solver.hydraulic_substeps` (the multi-rate spool table holds one row per
/// substep, and every residual integrates over all of them).
pub const MAX_HYDRAULIC_SUBSTEPS: u32 = 10_000;

/// An algebraic volume (002 Pub II) takes its pressure from its flow balance, so a valve or
/// throttle must connect it: otherwise the balance does not depend on its pressure.
fn check_algebraic_volumes(spec: &ModelSpec) -> Result<(), ModelError> {
    let h = &spec.hydraulics;
    for (i, volume) in h.volumes.iter().enumerate() {
        if !volume.algebraic {
            continue;
        }
        let name = volume.name.as_str();
        let valve = h.valves.iter().any(|v| v.node_names().contains(&name));
        let bridge = h
            .bridge_valves
            .iter()
            .any(|v| v.node_names().contains(&name));
        let throttle = h.throttles.iter().any(|t| t.node_names().contains(&name))
            || spec
                .elements
                .iter()
                .any(|e| e.valve_or_throttle_nodes().contains(&name));
        if !(valve || bridge || throttle) {
            let at = At::element("hydraulics.volumes", i, "volume", name);
            return Err(at.error(
                "algebraic",
                "an algebraic volume needs a valve or throttle port: its pressure comes from the flow balance through them",
            ));
        }
    }
    Ok(())
}

/// Kinematic guidance (004 eq. 39): every entry names an existing cylinder (once) and input;
/// under `kinematic-guidance` every cylinder is guided.
fn check_guidance(spec: &ModelSpec) -> Result<(), ModelError> {
    let cylinders = &spec.hydraulics.cylinders;
    let input_names: Vec<&str> = spec.inputs.iter().map(|i| i.name.as_str()).collect();
    for (i, g) in spec.solver.guidance.iter().enumerate() {
        let at = At::element("solver.guidance", i, "guidance", &g.cylinder);
        if !cylinders.iter().any(|c| c.name == g.cylinder) {
            return Err(at.error(
                "cylinder",
                format!(
                    "unknown cylinder '{}'; expected one of {}",
                    g.cylinder,
                    one_of(cylinders.iter().map(|c| c.name.as_str()))
                ),
            ));
        }
        if spec.solver.guidance[..i]
            .iter()
            .any(|o| o.cylinder == g.cylinder)
        {
            return Err(at.error("cylinder", "cylinder guided twice"));
        }
        input_ref(&at, "input", &g.input, &input_names)?;
        if let Some(v) = &g.velocity_input {
            input_ref(&at, "velocity_input", v, &input_names)?;
        }
    }
    if spec.solver.formulation == Formulation::KinematicGuidance {
        for c in cylinders {
            if !spec.solver.guidance.iter().any(|g| g.cylinder == c.name) {
                return Err(At::new("solver", "solver").error(
                    "guidance",
                    format!(
                        "kinematic guidance needs an entry for cylinder '{}' (cylinder = …, input = …)",
                        c.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Element checks shared by several sections
// ---------------------------------------------------------------------------------------------

/// Checks that the inertia tensor `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]` is finite, not zero,
/// positive semi-definite, and that its principal moments satisfy the triangle inequality.
fn check_inertia(at: &At, inertia: &[f64; 6]) -> Result<(), ModelError> {
    at.finite_all("inertia", inertia)?;
    // Scale to entries in [-1, 1] so that the eigen-solver cannot overflow.
    let scale = inertia.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if scale == 0.0 {
        return Err(at.error(
            "inertia",
            "is all zero; a rigid body needs a non-zero inertia tensor \
             [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] [kg m²]",
        ));
    }
    let [ixx, iyy, izz, ixy, ixz, iyz] = inertia.map(|x| x / scale);
    let tensor = Matrix3::new(ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz);
    let Some(eigen) = SymmetricEigen::try_new(tensor, f64::EPSILON, 1000) else {
        return Err(at.error(
            "inertia",
            "the principal moments of inertia could not be computed",
        ));
    };
    let mut moments = [
        eigen.eigenvalues[0],
        eigen.eigenvalues[1],
        eigen.eigenvalues[2],
    ];
    moments.sort_by(f64::total_cmp);
    let [i1, i2, i3] = moments;
    let tol = INERTIA_REL_TOL * i1.abs().max(i3.abs());
    let shown = format!("{:?}, {:?}, {:?}", i1 * scale, i2 * scale, i3 * scale);
    if i1 < -tol {
        return Err(at.error(
            "inertia",
            format!(
                "is not positive semi-definite: principal moments {shown} kg m²; all must be >= 0"
            ),
        ));
    }
    if i1 + i2 < i3 - tol {
        return Err(at.error(
            "inertia",
            format!(
                "principal moments {shown} kg m² violate the triangle inequality I1 + I2 >= I3 \
                 that every rigid body satisfies"
            ),
        ));
    }
    Ok(())
}

/// Checks marker names (non-empty) and positions (finite).
fn check_markers(at: &At, markers: &BTreeMap<String, [f64; 3]>) -> Result<(), ModelError> {
    for (name, position) in markers {
        let field = format!("markers.{}", key_segment(name));
        if name.trim().is_empty() {
            return Err(at.error(&field, "marker name is empty"));
        }
        at.finite_all(&field, position)?;
    }
    Ok(())
}

/// Checks that `name` is `"ground"` (when allowed) or a body.
fn body_ref(
    at: &At,
    field: &str,
    name: &str,
    body_index: &BTreeMap<&str, usize>,
    ground_allowed: bool,
) -> Result<(), ModelError> {
    if (ground_allowed && name == GROUND) || body_index.contains_key(name) {
        return Ok(());
    }
    let bodies = one_of(body_index.keys().copied());
    let expected = match (ground_allowed, body_index.is_empty()) {
        (true, true) => "expected 'ground' (the model has no bodies)".to_string(),
        (true, false) => format!("expected 'ground' or one of {bodies}"),
        (false, true) => "expected a body, but the model has no bodies".to_string(),
        (false, false) => format!("expected one of {bodies}"),
    };
    if name.is_empty() {
        Err(at.error(field, format!("is empty; {expected}")))
    } else {
        Err(at.error(field, format!("unknown body '{name}'; {expected}")))
    }
}

/// Checks that `marker` exists on `body` (which has been checked to exist).
fn marker_ref(
    spec: &ModelSpec,
    at: &At,
    field: &str,
    body: &str,
    marker: &str,
) -> Result<(), ModelError> {
    let markers = if body == GROUND {
        Some(&spec.ground.markers)
    } else {
        spec.bodies
            .iter()
            .find(|b| b.name == body)
            .map(|b| &b.markers)
    };
    let Some(markers) = markers else {
        return Err(at.error(field, format!("body '{body}' does not exist")));
    };
    if markers.contains_key(marker) {
        return Ok(());
    }
    let owner = if body == GROUND {
        "the ground (`ground.markers`)".to_string()
    } else {
        format!("body '{body}'")
    };
    let available = if markers.is_empty() {
        format!("{owner} has no markers")
    } else {
        format!(
            "markers of {owner}: {}",
            one_of(markers.keys().map(String::as_str))
        )
    };
    Err(at.error(
        field,
        format!("unknown marker '{marker}' on {owner}; {available}"),
    ))
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A namespace: name → (path, element) of its first use.
struct Names<'a> {
    first: BTreeMap<&'a str, (String, String)>,
}

impl<'a> Names<'a> {
    fn new() -> Self {
        Names {
            first: BTreeMap::new(),
        }
    }

    /// Adds a name; errors if it is empty or already taken.
    fn add(&mut self, at: &At, name: &'a str) -> Result<(), ModelError> {
        if name.trim().is_empty() {
            return Err(at.error("name", "is empty; every element needs a unique name"));
        }
        if let Some((path, element)) = self.first.get(name) {
            return Err(at.error(
                "name",
                format!("duplicate name '{name}': already used by {element} ({path})"),
            ));
        }
        self.first
            .insert(name, (at.prefix.clone(), at.element.clone()));
        Ok(())
    }
}

/// `1 value`, `2 values`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A map key as a path segment: bare if it is a bare TOML key, else quoted.
fn key_segment(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_string()
    } else {
        let mut quoted = String::with_capacity(key.len() + 2);
        quoted.push('"');
        for c in key.chars() {
            match c {
                '"' => quoted.push_str("\\\""),
                '\\' => quoted.push_str("\\\\"),
                c => quoted.push(c),
            }
        }
        quoted.push('"');
        quoted
    }
}

/// Joint friction: revolute and prismatic joints only, no efficiency law (it needs a hydraulic
/// force), and the law's fields as for cylinders.
fn check_joint_friction(spec: &ModelSpec) -> Result<(), ModelError> {
    for (i, j) in spec.joints.iter().enumerate() {
        if j.friction == FrictionSpec::None {
            continue;
        }
        let path = format!("joints[{i}].friction");
        let element = format!("joint '{}'", j.name);
        if !matches!(j.kind, JointKind::Revolute | JointKind::Prismatic) {
            return Err(ModelError::new(
                path,
                element,
                "friction is supported on revolute and prismatic joints only (one coordinate)",
            ));
        }
        match j.friction {
            FrictionSpec::Efficiency { .. } => {
                return Err(ModelError::new(
                    format!("{path}.type"),
                    element,
                    "the efficiency law scales a hydraulic force; a joint has none (use \
                     viscous, bengisu_akay, brown_mcphee, lugre or modified_lugre)",
                ))
            }
            FrictionSpec::Viscous { coefficient_n_s_m } => {
                if !(coefficient_n_s_m.is_finite() && coefficient_n_s_m >= 0.0) {
                    return Err(ModelError::new(
                        format!("{path}.coefficient_n_s_m"),
                        element,
                        format!("must be a non-negative finite number, got {coefficient_n_s_m:?}"),
                    ));
                }
            }
            ref seal => crate::elements::friction::compile::validate(&path, &element, seal)?,
        }
    }
    Ok(())
}

/// Friction states (LuGre bristles, films) are Newton unknowns of the penalty formulation only;
/// any other formulation would leave them frozen, so it is rejected here with the cylinder named.
/// Joint friction is evaluated by the semi-recursive evaluator only (penalty and double-step).
fn check_friction_formulation(spec: &ModelSpec) -> Result<(), ModelError> {
    if spec.solver.formulation == Formulation::Penalty {
        return Ok(());
    }
    for (i, j) in spec.joints.iter().enumerate() {
        let states = matches!(
            j.friction,
            FrictionSpec::Lugre { .. } | FrictionSpec::ModifiedLugre { .. }
        );
        let semirecursive = spec.solver.formulation == Formulation::DoubleStep;
        if j.friction != FrictionSpec::None && (states || !semirecursive) {
            return Err(ModelError::new(
                format!("joints[{i}].friction.type"),
                format!("joint '{}'", j.name),
                format!(
                    "formulation '{}' does not support this joint friction (static joint \
                     friction: penalty and double-step; LuGre states: penalty only)",
                    spec.solver.formulation.name()
                ),
            ));
        }
    }
    for (i, c) in spec.hydraulics.cylinders.iter().enumerate() {
        let law = match c.friction {
            FrictionSpec::Lugre { .. } => "lugre",
            FrictionSpec::ModifiedLugre { .. } => "modified_lugre",
            _ => continue,
        };
        return Err(ModelError::new(
            format!("hydraulics.cylinders[{i}].friction.type"),
            format!("cylinder '{}'", c.name),
            format!(
                "friction law '{law}' has internal states, which only the 'penalty' formulation \
                 integrates (003 Pub II Appendix A); formulation '{}' does not support them \
                 (use a static law: bengisu_akay, brown_mcphee, viscous, efficiency)",
                spec.solver.formulation.name()
            ),
        ));
    }
    Ok(())
}

fn check_unit(at: &At, field: &str, unit: &Option<String>) -> Result<(), ModelError> {
    match unit {
        Some(u) if unit_scale(u).is_none() => Err(at.error(
            field,
            format!(
                "unknown unit '{u}'; known: Pa, kPa, MPa, bar, N, kN, W, kW, J, kJ, m, cm, mm, \
                 m/s, mm/s, rad, deg, rad/s, deg/s, rpm, kg, g, t, m3, L, m3/s, L/min, s, V, -, %"
            ),
        )),
        _ => Ok(()),
    }
}

fn check_bounds(
    at: &At,
    field: &str,
    lo: Option<f64>,
    hi: Option<f64>,
    lo_name: &str,
) -> Result<(), ModelError> {
    if let Some(l) = lo {
        at.finite(lo_name, l)?;
    }
    if let Some(h) = hi {
        at.finite(field, h)?;
    }
    if let (Some(l), Some(h)) = (lo, hi) {
        if l >= h {
            return Err(at.error(
                field,
                format!("must be greater than {lo_name} = {l}, got {h}"),
            ));
        }
    }
    Ok(())
}

/// Checks `[hud]` and `[scenario]`: names non-empty and sensors unique, bodies known, axes not
/// zero, units known, bounds finite and ordered, the fuel constants in range. Whether a gauge's
/// or condition's `sensor` names a column of the run is checked by the front-end, which knows
/// the columns.
fn check_hud(spec: &ModelSpec) -> Result<(), ModelError> {
    let hud = &spec.hud;
    for (i, s) in hud.sensors.iter().enumerate() {
        let at = At::element("hud.sensors", i, "sensor", s.name());
        if s.name().is_empty() {
            return Err(at.error("name", "is empty; a sensor needs a name for its gauges"));
        }
        if hud.sensors[..i].iter().any(|o| o.name() == s.name()) || FUEL_SENSORS.contains(&s.name())
        {
            return Err(at.error(
                "name",
                format!(
                    "'{}' is taken (by an earlier sensor or the fuel estimate)",
                    s.name()
                ),
            ));
        }
        if !spec.bodies.iter().any(|b| b.name == s.body()) {
            return Err(at.error(
                "body",
                format!(
                    "unknown body '{}'; one of {}",
                    s.body(),
                    crate::elements::field_check::one_of(
                        spec.bodies.iter().map(|b| b.name.as_str())
                    )
                ),
            ));
        }
        match s {
            SensorSpec::PointHeight {
                point,
                ground_level_m,
                ..
            } => {
                at.finite_all("point", point)?;
                at.finite("ground_level_m", *ground_level_m)?;
            }
            SensorSpec::AxisAngle { axis, .. } => at.nonzero_vector("axis", axis)?,
        }
    }
    if let Some(f) = &hud.fuel {
        let at = At::new("hud.fuel", "fuel estimate");
        if f.power.is_empty() || f.power.iter().any(String::is_empty) {
            return Err(at.error("power", "needs at least one output column of power [W]"));
        }
        let eta = at.positive("engine_efficiency", f.engine_efficiency)?;
        if eta > 1.0 {
            return Err(at.error("engine_efficiency", format!("must be at most 1, got {eta}")));
        }
        at.positive("energy_density_j_kg", f.energy_density_j_kg)?;
    }
    for (i, g) in hud.gauges.iter().enumerate() {
        let at = At::element("hud.gauges", i, "gauge", &g.sensor);
        if g.sensor.is_empty() {
            return Err(at.error("sensor", "is empty; name a sensor or an output column"));
        }
        check_unit(&at, "unit", &g.unit)?;
        if let Some([lo, hi]) = g.range {
            at.finite("range[0]", lo)?;
            check_bounds(&at, "range[1]", Some(lo), Some(hi), "range[0]")?;
        }
        if let Some(c) = g.critical {
            at.positive("critical", c)?;
        }
    }
    for (i, b) in hud.bindings.iter().enumerate() {
        let at = At::element("hud.bindings", i, "binding", &b.input);
        if !spec.inputs.iter().any(|u| u.name == b.input) {
            return Err(at.error(
                "input",
                format!(
                    "unknown input '{}'; one of {}",
                    b.input,
                    crate::elements::field_check::one_of(
                        spec.inputs.iter().map(|u| u.name.as_str())
                    )
                ),
            ));
        }
        let empty = match &b.source {
            BindingSourceSpec::Axis(a) => a.is_empty().then_some("source.axis"),
            BindingSourceSpec::Keys { positive, negative } => {
                if positive.is_empty() {
                    Some("source.keys.positive")
                } else {
                    negative.is_empty().then_some("source.keys.negative")
                }
            }
        };
        if let Some(f) = empty {
            return Err(at.error(f, "is empty"));
        }
        if let Some([lo, hi]) = b.range {
            at.finite("range[0]", lo)?;
            check_bounds(&at, "range[1]", Some(lo), Some(hi), "range[0]")?;
        }
        if !(0.0..1.0).contains(&b.deadband) {
            return Err(at.error("deadband", format!("must be in [0, 1), got {}", b.deadband)));
        }
        if let Some(r) = b.rate_limit_per_s {
            at.positive("rate_limit_per_s", r)?;
        }
    }
    for (i, t) in spec.scenario.tasks.iter().enumerate() {
        let at = At::element("scenario.tasks", i, "task", &format!("{}", i + 1));
        if t.instruction.trim().is_empty() {
            return Err(at.error("instruction", "is empty; tell the operator what to do"));
        }
        if t.conditions.is_empty() {
            return Err(at.error("conditions", "is empty; a task needs a condition"));
        }
        at.non_negative("hold_s", t.hold_s)?;
        for (k, c) in t.conditions.iter().enumerate() {
            let field = |f: &str| format!("conditions[{k}].{f}");
            if c.sensor.is_empty() {
                return Err(at.error(&field("sensor"), "is empty"));
            }
            check_unit(&at, &field("unit"), &c.unit)?;
            if c.min.is_none() && c.max.is_none() {
                return Err(at.error(&field("min"), "a condition needs min, max or both"));
            }
            check_bounds(&at, &field("max"), c.min, c.max, &field("min"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spec::{
        CylinderSpec, FluidSpec, FrictionSpec, PressureSourceSpec, ThrottleSpec, Valve43Spec,
        VolumeSpec,
    };

    fn body(name: &str, mass_kg: f64, markers: &[(&str, [f64; 3])]) -> BodySpec {
        BodySpec {
            name: name.into(),
            mass_kg,
            com: [1.0, 0.0, 0.0],
            inertia: [0.1, 2.0, 2.0, 0.0, 0.0, 0.0],
            markers: markers.iter().map(|(n, p)| (n.to_string(), *p)).collect(),
            visual: Vec::new(),
        }
    }

    fn revolute(name: &str, parent: &str, child: &str) -> JointSpec {
        JointSpec {
            q0_deg: None,
            qd0_deg_s: None,
            name: name.into(),
            kind: JointKind::Revolute,
            parent: parent.into(),
            child: child.into(),
            location: [0.0; 3],
            axis: [0.0, 0.0, 1.0],
            axis2: None,
            q0: Values::One(0.0),
            qd0: Values::default(),
            friction: FrictionSpec::None,
        }
    }

    fn volume(name: &str) -> VolumeSpec {
        VolumeSpec {
            name: name.into(),
            label: None,
            hose_volume_m3: 1e-5,
            hose_bulk_modulus_pa: Some(5.5e8),
            p0_pa: None,
            algebraic: false,
        }
    }

    /// The four-bar of `models/fourbar.toml`, built in code (geometry simplified).
    fn fourbar() -> ModelSpec {
        ModelSpec {
            name: "fourbar".into(),
            ground: GroundSpec {
                markers: [("E", [0.0, -1.0, 0.0]), ("G", [0.0, -2.0, 0.0])]
                    .iter()
                    .map(|(n, p)| (n.to_string(), *p))
                    .collect(),
            },
            bodies: vec![
                body("body1", 225.0, &[("C", [3.0, 0.0, 0.0])]),
                body("body2", 35.0, &[("D", [4.4, 0.0, 0.0])]),
                body(
                    "body3",
                    50.0,
                    &[("F", [5.4, 0.0, 0.0]), ("E", [6.4, 0.0, 0.0])],
                ),
            ],
            joints: vec![
                revolute("z1", "ground", "body1"),
                revolute("z2", "body1", "body2"),
                revolute("z3", "body2", "body3"),
            ],
            cut_joints: vec![CutJointSpec {
                name: "E".into(),
                kind: CutJointKind::PlanarRevolute,
                body1: "body3".into(),
                marker1: "E".into(),
                body2: GROUND.into(),
                marker2: "E".into(),
                axis: [0.0, 0.0, 1.0],
                normal: [0.0, 0.0, 1.0],
            }],
            hydraulics: HydraulicsSpec {
                bridge_valves: Vec::new(),
                fluid: FluidSpec::default(),
                volumes: vec![volume("V1"), volume("V2"), volume("V3")],
                pumps: vec![PressureSourceSpec {
                    name: "P".into(),
                    pressure_pa: 7.6e6,
                }],
                tanks: vec![PressureSourceSpec {
                    name: "T".into(),
                    pressure_pa: 1e5,
                }],
                valves: vec![Valve43Spec {
                    name: "DCV".into(),
                    port_p: "P".into(),
                    port_t: "T".into(),
                    port_a: "V1".into(),
                    port_b: "V3".into(),
                    flow_constant: 2.138e-8,
                    time_constant_s: 4.547e-3,
                    laminar_dp_pa: 2e5,
                    input: "U".into(),
                    spool0: 0.0,
                    input_range_v: None,
                    saturate: false,
                    centre: Default::default(),
                    open_centre_flow_constant: None,
                    open_centre_closing_v: None,
                }],
                throttles: vec![ThrottleSpec {
                    name: "throttle".into(),
                    from: "V1".into(),
                    to: "V2".into(),
                    discharge_coefficient: 0.8,
                    area_m2: 2.83e-5,
                    laminar_dp_pa: 2e5,
                }],
                cylinders: vec![CylinderSpec {
                    name: "cylinder".into(),
                    base: AttachmentSpec {
                        body: GROUND.into(),
                        marker: "G".into(),
                    },
                    rod: AttachmentSpec {
                        body: "body3".into(),
                        marker: "F".into(),
                    },
                    piston_diameter_m: 0.08,
                    rod_diameter_m: 0.035,
                    stroke_m: 1.1,
                    retracted_length_m: 1.1,
                    piston_side: "V2".into(),
                    rod_side: "V3".into(),
                    wall_bulk_modulus_pa: Some(3.15e10),
                    friction: FrictionSpec::Efficiency {
                        efficiency: 0.88,
                        velocity_scale_m_s: 1e-3,
                    },
                }],
            },
            inputs: vec![InputSpec {
                name: "U".into(),
                signal: SignalSpec::PiecewiseConstant {
                    times: vec![0.0, 1.0, 2.5, 5.0, 8.0],
                    values: vec![0.0, 10.0, 0.0, -10.0, 0.0],
                },
            }],
            ..ModelSpec::default()
        }
    }

    /// Applies `edit` to the four-bar and returns the validation error.
    fn error_after(edit: impl FnOnce(&mut ModelSpec)) -> ModelError {
        let mut spec = fourbar();
        edit(&mut spec);
        match validate(&spec) {
            Err(e) => e,
            Ok(()) => panic!("expected a validation error"),
        }
    }

    /// Asserts path and element, and that the message mentions `needle`.
    fn assert_error(e: &ModelError, path: &str, element: &str, needle: &str) {
        assert_eq!(e.path, path, "{e}");
        assert_eq!(e.element, element, "{e}");
        assert!(
            e.message.contains(needle),
            "message {:?} lacks {needle:?}",
            e.message
        );
    }

    #[test]
    fn fourbar_is_valid() {
        assert_eq!(validate(&fourbar()), Ok(()));
    }

    #[test]
    fn empty_spec_has_nothing_to_simulate() {
        // issue 10: it used to pass validation and panic in the initialization's SVD
        let e = validate(&ModelSpec::default()).unwrap_err();
        assert_eq!(e.path, "joints", "{e}");
        assert!(e.message.contains("nothing to simulate"), "{e}");
    }

    #[test]
    fn non_finite_gravity() {
        let e = error_after(|s| s.gravity[1] = f64::NAN);
        assert_error(&e, "gravity[1]", "model", "finite");
    }

    #[test]
    fn non_finite_ground_marker() {
        let e = error_after(|s| {
            s.ground
                .markers
                .insert("G".into(), [0.0, f64::INFINITY, 0.0]);
        });
        assert_error(&e, "ground.markers.G[1]", "ground", "inf");
    }

    #[test]
    fn non_bare_marker_key_is_quoted() {
        let e = error_after(|s| {
            s.ground.markers.insert("a.b".into(), [f64::NAN, 0.0, 0.0]);
        });
        assert_error(&e, "ground.markers.\"a.b\"[0]", "ground", "NaN");
    }

    #[test]
    fn body_visuals_sizes_length_side_colour() {
        let capsule =
            |from: [f64; 3], to: [f64; 3], r: f64, color: Option<&str>| VisualSpec::Capsule {
                from,
                to,
                radius_m: r,
                color: color.map(String::from),
            };
        // a capsule of no length is a sphere: accepted
        let mut spec = fourbar();
        spec.bodies[0].visual = vec![capsule([1.0; 3], [1.0; 3], 0.1, Some("#a0B1c2"))];
        assert_eq!(validate(&spec), Ok(()));
        let e = error_after(|s| s.bodies[0].visual = vec![capsule([0.0; 3], [1.0; 3], -0.1, None)]);
        assert_error(
            &e,
            "bodies[0].visual[0].radius_m",
            "body 'body1'",
            "greater than 0",
        );
        let e = error_after(|s| {
            s.bodies[1].visual = vec![
                capsule([0.0; 3], [1.0; 3], 0.1, None),
                capsule([0.0; 3], [1.0; 3], 0.1, Some("red")),
            ]
        });
        assert_error(&e, "bodies[1].visual[1].color", "body 'body2'", "#rrggbb");
        let e = error_after(|s| {
            s.bodies[0].visual = vec![VisualSpec::Cylinder {
                from: [2.0; 3],
                to: [2.0; 3],
                radius_m: 0.1,
                color: None,
            }]
        });
        assert_error(&e, "bodies[0].visual[0].to", "body 'body1'", "no length");
        let e = error_after(|s| {
            s.bodies[0].visual = vec![VisualSpec::Box {
                from: [0.0; 3],
                to: [0.0, 0.0, 2.0],
                width_m: 0.1,
                height_m: 0.1,
                side: [0.0, 0.0, -1.0],
                color: None,
            }]
        });
        assert_error(
            &e,
            "bodies[0].visual[0].side",
            "body 'body1'",
            "along the box",
        );
        let e =
            error_after(|s| s.bodies[0].visual = vec![capsule([f64::NAN; 3], [1.0; 3], 0.1, None)]);
        assert_error(&e, "bodies[0].visual[0].from[0]", "body 'body1'", "NaN");
    }

    #[test]
    fn body_visual_mesh_file_axes_scale() {
        let mesh = |file: &str, x: [f64; 3], y: [f64; 3], scale: f64| VisualSpec::Mesh {
            file: file.into(),
            origin: [0.5, 0.0, 0.0],
            x_axis: x,
            y_axis: y,
            scale_m: scale,
            color: None,
        };
        let (ex, ey) = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        let mut spec = fourbar();
        spec.bodies[0].visual = vec![mesh("cab.obj", ex, [1.0, 1.0, 0.0], 0.001)];
        assert_eq!(validate(&spec), Ok(()));
        let e = error_after(|s| s.bodies[0].visual = vec![mesh(" ", ex, ey, 1.0)]);
        assert_error(&e, "bodies[0].visual[0].file", "body 'body1'", "empty path");
        let e =
            error_after(|s| s.bodies[1].visual = vec![mesh("a.obj", ex, [-2.0, 0.0, 0.0], 1.0)]);
        assert_error(
            &e,
            "bodies[1].visual[0].y_axis",
            "body 'body2'",
            "along x_axis",
        );
        let e = error_after(|s| s.bodies[0].visual = vec![mesh("a.obj", [0.0; 3], ey, 1.0)]);
        assert_error(&e, "bodies[0].visual[0].x_axis", "body 'body1'", "");
        let e = error_after(|s| s.bodies[0].visual = vec![mesh("a.obj", ex, ey, 0.0)]);
        assert_error(
            &e,
            "bodies[0].visual[0].scale_m",
            "body 'body1'",
            "greater than 0",
        );
    }

    #[test]
    fn body_mass_zero_negative_nan() {
        let e = error_after(|s| s.bodies[2].mass_kg = 0.0);
        assert_error(&e, "bodies[2].mass_kg", "body 'body3'", "greater than 0");
        let e = error_after(|s| s.bodies[1].mass_kg = -3.0);
        assert_error(&e, "bodies[1].mass_kg", "body 'body2'", "-3.0");
        let e = error_after(|s| s.bodies[0].mass_kg = f64::NAN);
        assert_error(&e, "bodies[0].mass_kg", "body 'body1'", "NaN");
    }

    #[test]
    fn body_names() {
        let e = error_after(|s| s.bodies[1].name = "body1".into());
        assert_error(
            &e,
            "bodies[1].name",
            "body 'body1'",
            "already used by body 'body1' (bodies[0])",
        );
        let e = error_after(|s| s.bodies[0].name = String::new());
        assert_error(&e, "bodies[0].name", "body ''", "empty");
        let e = error_after(|s| s.bodies[0].name = GROUND.into());
        assert_error(&e, "bodies[0].name", "body 'ground'", "reserved");
    }

    #[test]
    fn inertia_checks() {
        let e = error_after(|s| s.bodies[0].inertia = [0.0; 6]);
        assert_error(&e, "bodies[0].inertia", "body 'body1'", "all zero");
        let e = error_after(|s| s.bodies[0].inertia = [1.0, -1.0, 1.0, 0.0, 0.0, 0.0]);
        assert_error(
            &e,
            "bodies[0].inertia",
            "body 'body1'",
            "positive semi-definite",
        );
        let e = error_after(|s| s.bodies[0].inertia = [1.0, 1.0, 3.0, 0.0, 0.0, 0.0]);
        assert_error(&e, "bodies[0].inertia", "body 'body1'", "triangle");
        // Diagonal fine but a product of inertia makes it indefinite.
        let e = error_after(|s| s.bodies[0].inertia = [1.0, 1.0, 1.0, 2.0, 0.0, 0.0]);
        assert_error(
            &e,
            "bodies[0].inertia",
            "body 'body1'",
            "positive semi-definite",
        );
        let e = error_after(|s| s.bodies[0].inertia[4] = f64::NEG_INFINITY);
        assert_error(&e, "bodies[0].inertia[4]", "body 'body1'", "finite");
    }

    #[test]
    fn inertia_edge_cases_accepted() {
        let mut spec = fourbar();
        // Thin rod: I1 = 0, I2 = I3 (triangle equality).
        spec.bodies[0].inertia = [0.0, 5.0, 5.0, 0.0, 0.0, 0.0];
        // Rotated thin plate with products of inertia: moments 1, 2, 3.
        spec.bodies[1].inertia = [1.5, 1.5, 3.0, -0.5, 0.0, 0.0];
        // Huge and tiny scales do not overflow or underflow.
        spec.bodies[2].inertia = [1e300, 1e300, 1e300, 0.0, 0.0, 0.0];
        assert_eq!(validate(&spec), Ok(()));
        spec.bodies[2].inertia = [1e-300, 1e-300, 1e-300, 1e-301, 0.0, 0.0];
        assert_eq!(validate(&spec), Ok(()));
    }

    #[test]
    fn joint_references() {
        let e = error_after(|s| s.joints[1].parent = "bodyX".into());
        assert_error(&e, "joints[1].parent", "joint 'z2'", "unknown body 'bodyX'");
        let e = error_after(|s| s.joints[2].child = "bodyX".into());
        assert_error(&e, "joints[2].child", "joint 'z3'", "unknown body 'bodyX'");
        let e = error_after(|s| s.joints[0].child = GROUND.into());
        assert_error(&e, "joints[0].child", "joint 'z1'", "ground cannot be");
        let e = error_after(|s| s.joints[1].child = "body1".into());
        assert_error(&e, "joints[1].child", "joint 'z2'", "own parent");
        let e = error_after(|s| s.joints[2].name = "z1".into());
        assert_error(&e, "joints[2].name", "joint 'z1'", "duplicate");
    }

    #[test]
    fn body_with_two_parents() {
        let e = error_after(|s| s.joints[2].child = "body1".into());
        assert_error(
            &e,
            "joints[2].child",
            "joint 'z3'",
            "already the child of joint 'z1'",
        );
    }

    #[test]
    fn body_not_connected() {
        let e = error_after(|s| {
            s.joints.pop();
        });
        assert_error(
            &e,
            "bodies[2].name",
            "body 'body3'",
            "not connected to the tree",
        );
    }

    #[test]
    fn joint_cycle() {
        let e = error_after(|s| {
            s.joints[0].child = "body3".into();
            s.joints[1].parent = "body3".into();
            s.joints[1].child = "body1".into();
            s.joints[2].parent = "body1".into();
            s.joints[2].child = "body2".into();
            s.joints[0].parent = "body2".into();
        });
        assert_error(&e, "joints[0].parent", "joint 'z1'", "cycle");
    }

    #[test]
    fn joint_axes() {
        let e = error_after(|s| s.joints[0].axis = [0.0; 3]);
        assert_error(&e, "joints[0].axis", "joint 'z1'", "zero");
        let e = error_after(|s| s.joints[0].axis = [1e-200, 0.0, 0.0]);
        assert_error(&e, "joints[0].axis", "joint 'z1'", "zero");
        let e = error_after(|s| s.joints[0].axis2 = Some([1.0, 0.0, 0.0]));
        assert_error(
            &e,
            "joints[0].axis2",
            "joint 'z1'",
            "only used by universal",
        );
        let e = error_after(|s| {
            s.joints[0].kind = JointKind::Universal;
            s.joints[0].q0 = Values::default();
        });
        assert_error(&e, "joints[0].axis2", "joint 'z1'", "missing");
        let e = error_after(|s| {
            s.joints[0].kind = JointKind::Universal;
            s.joints[0].axis2 = Some([0.0, 0.0, -2.0]);
        });
        assert_error(&e, "joints[0].axis2", "joint 'z1'", "parallel");
        let mut spec = fourbar();
        spec.joints[0].kind = JointKind::Universal;
        spec.joints[0].axis2 = Some([1.0, 0.0, 0.0]);
        spec.joints[0].q0 = Values::Many(vec![0.1, 0.2]);
        assert_eq!(validate(&spec), Ok(()));
    }

    #[test]
    fn joint_initial_values() {
        let e = error_after(|s| s.joints[1].q0 = Values::Many(vec![0.0, 1.0]));
        assert_error(
            &e,
            "joints[1].q0",
            "joint 'z2'",
            "revolute joint has 1 coordinate",
        );
        let e = error_after(|s| {
            s.joints[1].kind = JointKind::Spherical;
            s.joints[1].q0 = Values::One(0.3);
        });
        assert_error(
            &e,
            "joints[1].q0",
            "joint 'z2'",
            "spherical joint has 3 coordinates",
        );
        let e = error_after(|s| {
            s.joints[1].kind = JointKind::Fixed;
            s.joints[1].q0 = Values::default();
            s.joints[1].qd0 = Values::One(0.0);
        });
        assert_error(
            &e,
            "joints[1].qd0",
            "joint 'z2'",
            "fixed joint has 0 coordinates",
        );
        let e = error_after(|s| s.joints[1].qd0 = Values::Many(vec![f64::NAN]));
        assert_error(&e, "joints[1].qd0[0]", "joint 'z2'", "NaN");
        let e = error_after(|s| {
            s.joints[0].kind = JointKind::Free;
            s.joints[0].q0 = Values::Many(vec![0.0; 3]);
        });
        assert_error(
            &e,
            "joints[0].q0",
            "joint 'z1'",
            "free joint has 6 coordinates",
        );
        let mut spec = fourbar();
        spec.joints[0].kind = JointKind::Free;
        spec.joints[0].q0 = Values::Many(vec![0.0, 0.1, 0.0, 0.0, 0.0, 0.2]);
        assert_eq!(validate(&spec), Ok(()));
        spec.joints[1].kind = JointKind::Spherical;
        spec.joints[1].q0 = Values::default();
        spec.joints[1].qd0 = Values::Many(vec![0.0, 0.1, 0.2]);
        assert_eq!(validate(&spec), Ok(()));
    }

    #[test]
    fn cut_joint_checks() {
        let e = error_after(|s| s.cut_joints[0].marker1 = "Q".into());
        assert_error(
            &e,
            "cut_joints[0].marker1",
            "cut joint 'E'",
            "unknown marker 'Q' on body 'body3'",
        );
        let e = error_after(|s| s.cut_joints[0].marker2 = "Q".into());
        assert_error(
            &e,
            "cut_joints[0].marker2",
            "cut joint 'E'",
            "ground.markers",
        );
        let e = error_after(|s| s.cut_joints[0].body2 = "nobody".into());
        assert_error(
            &e,
            "cut_joints[0].body2",
            "cut joint 'E'",
            "unknown body 'nobody'",
        );
        let e = error_after(|s| s.cut_joints[0].body2 = "body3".into());
        assert_error(&e, "cut_joints[0].body2", "cut joint 'E'", "same body");
        let e = error_after(|s| s.cut_joints[0].normal = [0.0; 3]);
        assert_error(&e, "cut_joints[0].normal", "cut joint 'E'", "zero");
        let e = error_after(|s| {
            s.cut_joints[0].kind = CutJointKind::PlanarPrismatic;
            s.cut_joints[0].axis = [1.0, 0.0, 0.1];
        });
        assert_error(
            &e,
            "cut_joints[0].axis",
            "cut joint 'E'",
            "not perpendicular",
        );
        let mut spec = fourbar();
        spec.cut_joints[0].kind = CutJointKind::PlanarPrismatic;
        spec.cut_joints[0].axis = [2.0, 0.0, 0.0];
        assert_eq!(validate(&spec), Ok(()));
        let e = error_after(|s| {
            let mut second = s.cut_joints[0].clone();
            second.marker1 = "F".into();
            s.cut_joints.push(second);
        });
        assert_error(&e, "cut_joints[1].name", "cut joint 'E'", "duplicate");
    }

    #[test]
    fn fluid_and_volumes() {
        let e = error_after(|s| s.hydraulics.fluid.bulk_modulus_pa = 0.0);
        assert_error(
            &e,
            "hydraulics.fluid.bulk_modulus_pa",
            "fluid",
            "greater than 0",
        );
        let e = error_after(|s| s.hydraulics.fluid.density_kg_m3 = f64::NAN);
        assert_error(&e, "hydraulics.fluid.density_kg_m3", "fluid", "finite");
        let e = error_after(|s| s.hydraulics.volumes[1].hose_volume_m3 = -1e-5);
        assert_error(
            &e,
            "hydraulics.volumes[1].hose_volume_m3",
            "volume 'V2'",
            "greater than 0",
        );
        let e = error_after(|s| s.hydraulics.volumes[0].hose_bulk_modulus_pa = Some(0.0));
        assert_error(
            &e,
            "hydraulics.volumes[0].hose_bulk_modulus_pa",
            "volume 'V1'",
            "greater than 0",
        );
        let e = error_after(|s| s.hydraulics.volumes[2].p0_pa = Some(f64::INFINITY));
        assert_error(&e, "hydraulics.volumes[2].p0_pa", "volume 'V3'", "finite");
        let e = error_after(|s| s.hydraulics.volumes[2].name = "V1".into());
        assert_error(&e, "hydraulics.volumes[2].name", "volume 'V1'", "duplicate");
        // Nodes share one namespace.
        let e = error_after(|s| s.hydraulics.tanks[0].name = "P".into());
        assert_error(
            &e,
            "hydraulics.tanks[0].name",
            "tank 'P'",
            "already used by pump 'P'",
        );
        let e = error_after(|s| s.hydraulics.pumps[0].pressure_pa = f64::NAN);
        assert_error(&e, "hydraulics.pumps[0].pressure_pa", "pump 'P'", "finite");
        // Pressures are absolute (the cavitation warning is at 0 Pa): a negative source pressure
        // is a gauge or sign mistake (issue 11), and so is a pump not above every tank.
        let e = error_after(|s| s.hydraulics.tanks[0].pressure_pa = -1e5);
        assert_error(
            &e,
            "hydraulics.tanks[0].pressure_pa",
            "tank 'T'",
            "0 or greater",
        );
        let e = error_after(|s| s.hydraulics.pumps[0].pressure_pa = 1e5);
        assert_error(
            &e,
            "hydraulics.pumps[0].pressure_pa",
            "pump 'P'",
            "not above",
        );
        let e = error_after(|s| s.hydraulics.volumes[2].p0_pa = Some(-1.0));
        assert_error(&e, "hydraulics.volumes[2].p0_pa", "volume 'V3'", "absolute");
    }

    #[test]
    fn volume_not_connected() {
        let e = error_after(|s| s.hydraulics.volumes.push(volume("V4")));
        assert_error(
            &e,
            "hydraulics.volumes[3].name",
            "volume 'V4'",
            "not connected",
        );
    }

    #[test]
    fn valve_checks() {
        let e = error_after(|s| s.hydraulics.valves[0].port_b = "V9".into());
        assert_error(
            &e,
            "hydraulics.valves[0].port_b",
            "valve 'DCV'",
            "unknown volume 'V9'",
        );
        let e = error_after(|s| s.hydraulics.valves[0].port_a = "P".into());
        assert_error(
            &e,
            "hydraulics.valves[0].port_a",
            "valve 'DCV'",
            "'P' is a pump",
        );
        let e = error_after(|s| s.hydraulics.valves[0].port_p = String::new());
        assert_error(&e, "hydraulics.valves[0].port_p", "valve 'DCV'", "empty");
        let e = error_after(|s| s.hydraulics.valves[0].port_t = "X".into());
        assert_error(
            &e,
            "hydraulics.valves[0].port_t",
            "valve 'DCV'",
            "unknown node 'X'",
        );
        let e = error_after(|s| s.hydraulics.valves[0].port_b = "V1".into());
        assert_error(
            &e,
            "hydraulics.valves[0].port_b",
            "valve 'DCV'",
            "must differ",
        );
        let e = error_after(|s| s.hydraulics.valves[0].flow_constant = 0.0);
        assert_error(
            &e,
            "hydraulics.valves[0].flow_constant",
            "valve 'DCV'",
            "greater than 0",
        );
        let e = error_after(|s| s.hydraulics.valves[0].time_constant_s = -1.0);
        assert_error(
            &e,
            "hydraulics.valves[0].time_constant_s",
            "valve 'DCV'",
            "greater than 0",
        );
        let e = error_after(|s| s.hydraulics.valves[0].laminar_dp_pa = 0.0);
        assert_error(
            &e,
            "hydraulics.valves[0].laminar_dp_pa",
            "valve 'DCV'",
            "greater than 0",
        );
        let e = error_after(|s| s.hydraulics.valves[0].input = "V".into());
        assert_error(
            &e,
            "hydraulics.valves[0].input",
            "valve 'DCV'",
            "unknown input 'V'",
        );
        let e = error_after(|s| s.hydraulics.valves[0].name = "throttle".into());
        assert_error(
            &e,
            "hydraulics.throttles[0].name",
            "throttle 'throttle'",
            "already used by valve",
        );
    }

    #[test]
    fn throttle_checks() {
        let e = error_after(|s| s.hydraulics.throttles[0].to = "V1".into());
        assert_error(
            &e,
            "hydraulics.throttles[0].to",
            "throttle 'throttle'",
            "same node",
        );
        let e = error_after(|s| s.hydraulics.throttles[0].from = "Vx".into());
        assert_error(
            &e,
            "hydraulics.throttles[0].from",
            "throttle 'throttle'",
            "unknown node 'Vx'",
        );
        let e = error_after(|s| s.hydraulics.throttles[0].discharge_coefficient = 0.0);
        assert_error(
            &e,
            "hydraulics.throttles[0].discharge_coefficient",
            "throttle 'throttle'",
            "greater than 0",
        );
        let e = error_after(|s| s.hydraulics.throttles[0].area_m2 = -1.0);
        assert_error(
            &e,
            "hydraulics.throttles[0].area_m2",
            "throttle 'throttle'",
            "greater than 0",
        );
    }

    #[test]
    fn cylinder_attachments() {
        let e = error_after(|s| s.hydraulics.cylinders[0].base.marker = "Z".into());
        assert_error(
            &e,
            "hydraulics.cylinders[0].base.marker",
            "cylinder 'cylinder'",
            "unknown marker 'Z'",
        );
        let e = error_after(|s| s.hydraulics.cylinders[0].rod.body = "body9".into());
        assert_error(
            &e,
            "hydraulics.cylinders[0].rod.body",
            "cylinder 'cylinder'",
            "unknown body 'body9'",
        );
        let e = error_after(|s| s.hydraulics.cylinders[0].rod.marker = "C".into());
        assert_error(
            &e,
            "hydraulics.cylinders[0].rod.marker",
            "cylinder 'cylinder'",
            "markers of body 'body3'",
        );
        let e = error_after(|s| {
            s.hydraulics.cylinders[0].base = AttachmentSpec {
                body: "body3".into(),
                marker: "E".into(),
            };
        });
        assert_error(
            &e,
            "hydraulics.cylinders[0].rod.body",
            "cylinder 'cylinder'",
            "same body",
        );
    }

    #[test]
    fn cylinder_dimensions() {
        let e = error_after(|s| s.hydraulics.cylinders[0].piston_diameter_m = 0.0);
        assert_error(
            &e,
            "hydraulics.cylinders[0].piston_diameter_m",
            "cylinder 'cylinder'",
            "greater than 0",
        );
        let e = error_after(|s| s.hydraulics.cylinders[0].rod_diameter_m = 0.08);
        assert_error(
            &e,
            "hydraulics.cylinders[0].rod_diameter_m",
            "cylinder 'cylinder'",
            "not smaller",
        );
        let e = error_after(|s| s.hydraulics.cylinders[0].rod_diameter_m = -0.01);
        assert_error(
            &e,
            "hydraulics.cylinders[0].rod_diameter_m",
            "cylinder 'cylinder'",
            "0 or greater",
        );
        let e = error_after(|s| s.hydraulics.cylinders[0].stroke_m = 0.0);
        assert_error(
            &e,
            "hydraulics.cylinders[0].stroke_m",
            "cylinder 'cylinder'",
            "greater than 0",
        );
        let e = error_after(|s| s.hydraulics.cylinders[0].retracted_length_m = f64::NAN);
        assert_error(
            &e,
            "hydraulics.cylinders[0].retracted_length_m",
            "cylinder 'cylinder'",
            "finite",
        );
        let e = error_after(|s| s.hydraulics.cylinders[0].wall_bulk_modulus_pa = Some(-1.0));
        assert_error(
            &e,
            "hydraulics.cylinders[0].wall_bulk_modulus_pa",
            "cylinder 'cylinder'",
            "greater than 0",
        );
        // A plunger (no rod) is allowed.
        let mut spec = fourbar();
        spec.hydraulics.cylinders[0].rod_diameter_m = 0.0;
        assert_eq!(validate(&spec), Ok(()));
    }

    #[test]
    fn cylinder_chambers() {
        let e = error_after(|s| s.hydraulics.cylinders[0].rod_side = "V2".into());
        assert_error(
            &e,
            "hydraulics.cylinders[0].rod_side",
            "cylinder 'cylinder'",
            "same volume",
        );
        let e = error_after(|s| s.hydraulics.cylinders[0].piston_side = "T".into());
        assert_error(
            &e,
            "hydraulics.cylinders[0].piston_side",
            "cylinder 'cylinder'",
            "'T' is a tank",
        );
    }

    #[test]
    fn friction_checks() {
        let e = error_after(|s| {
            s.hydraulics.cylinders[0].friction = FrictionSpec::Efficiency {
                efficiency: 0.0,
                velocity_scale_m_s: 1e-3,
            };
        });
        assert_error(
            &e,
            "hydraulics.cylinders[0].friction.efficiency",
            "cylinder 'cylinder'",
            "(0, 1]",
        );
        let e = error_after(|s| {
            s.hydraulics.cylinders[0].friction = FrictionSpec::Efficiency {
                efficiency: 1.2,
                velocity_scale_m_s: 1e-3,
            };
        });
        assert_error(
            &e,
            "hydraulics.cylinders[0].friction.efficiency",
            "cylinder 'cylinder'",
            "(0, 1]",
        );
        let e = error_after(|s| {
            s.hydraulics.cylinders[0].friction = FrictionSpec::Efficiency {
                efficiency: 1.0,
                velocity_scale_m_s: 0.0,
            };
        });
        assert_error(
            &e,
            "hydraulics.cylinders[0].friction.velocity_scale_m_s",
            "cylinder 'cylinder'",
            "greater than 0",
        );
        let e = error_after(|s| {
            s.hydraulics.cylinders[0].friction = FrictionSpec::Viscous {
                coefficient_n_s_m: -1.0,
            };
        });
        assert_error(
            &e,
            "hydraulics.cylinders[0].friction.coefficient_n_s_m",
            "cylinder 'cylinder'",
            "0 or greater",
        );
    }

    #[test]
    fn signal_checks() {
        let table = |times: Vec<f64>, values: Vec<f64>| SignalSpec::Table { times, values };
        let e = error_after(|s| s.inputs[0].signal = table(vec![0.0, 1.0, 1.0], vec![0.0; 3]));
        assert_error(
            &e,
            "inputs[0].signal.times[2]",
            "input 'U'",
            "strictly increasing",
        );
        let e = error_after(|s| s.inputs[0].signal = table(vec![], vec![]));
        assert_error(&e, "inputs[0].signal.times", "input 'U'", "empty");
        let e = error_after(|s| s.inputs[0].signal = table(vec![0.0, 1.0], vec![0.0]));
        assert_error(
            &e,
            "inputs[0].signal.values",
            "input 'U'",
            "one value per time",
        );
        let e = error_after(|s| s.inputs[0].signal = table(vec![0.0, f64::NAN], vec![0.0; 2]));
        assert_error(&e, "inputs[0].signal.times[1]", "input 'U'", "finite");
        let e = error_after(|s| {
            s.inputs[0].signal = SignalSpec::Sine {
                amplitude: 1.0,
                frequency_hz: -1.0,
                phase_rad: 0.0,
                offset: 0.0,
            };
        });
        assert_error(
            &e,
            "inputs[0].signal.frequency_hz",
            "input 'U'",
            "0 or greater",
        );
        let e = error_after(|s| {
            s.inputs[0].signal = SignalSpec::Step {
                time_s: 1.0,
                before: 0.0,
                after: f64::INFINITY,
            };
        });
        assert_error(&e, "inputs[0].signal.after", "input 'U'", "finite");
        let e = error_after(|s| s.inputs[0].signal = SignalSpec::Constant { value: f64::NAN });
        assert_error(&e, "inputs[0].signal.value", "input 'U'", "finite");
        let e = error_after(|s| {
            let mut second = s.inputs[0].clone();
            second.signal = SignalSpec::Constant { value: 1.0 };
            s.inputs.push(second);
        });
        assert_error(&e, "inputs[1].name", "input 'U'", "duplicate");
    }

    #[test]
    fn solver_checks() {
        let e = error_after(|s| s.solver.step_s = -1e-3);
        assert_error(&e, "solver.step_s", "solver", "greater than 0");
        let e = error_after(|s| s.solver.duration_s = 0.0);
        assert_error(&e, "solver.duration_s", "solver", "greater than 0");
        let e = error_after(|s| s.solver.step_s = 20.0);
        assert_error(&e, "solver.step_s", "solver", "longer than the duration");
        let e = error_after(|s| s.solver.output_interval_s = Some(1e-4));
        assert_error(
            &e,
            "solver.output_interval_s",
            "solver",
            "shorter than the time step",
        );
        let e = error_after(|s| s.solver.penalty = 0.0);
        assert_error(&e, "solver.penalty", "solver", "greater than 0");
        let e = error_after(|s| s.solver.tolerance_position = f64::NAN);
        assert_error(&e, "solver.tolerance_position", "solver", "finite");
        let e = error_after(|s| s.solver.tolerance_pressure_pa = -1.0);
        assert_error(
            &e,
            "solver.tolerance_pressure_pa",
            "solver",
            "greater than 0",
        );
        let e = error_after(|s| s.solver.max_iterations = 0);
        assert_error(&e, "solver.max_iterations", "solver", "at least 1");
        let e = error_after(|s| s.solver.max_iterations = MAX_ITERATIONS + 1);
        assert_error(&e, "solver.max_iterations", "solver", "at most");
        let e = error_after(|s| s.solver.hydraulic_substeps = 4_000_000_000);
        assert_error(&e, "solver.hydraulic_substeps", "solver", "at most");
    }

    #[test]
    fn first_error_in_document_order() {
        // Two defects: the body's comes first, then the solver's.
        let e = error_after(|s| {
            s.solver.step_s = 0.0;
            s.bodies[1].mass_kg = 0.0;
        });
        assert_eq!(e.path, "bodies[1].mass_kg");
        // A bad joint child is reported before the body it leaves unconnected.
        let e = error_after(|s| s.joints[2].child = "bdy3".into());
        assert_eq!(e.path, "joints[2].child");
    }
}
