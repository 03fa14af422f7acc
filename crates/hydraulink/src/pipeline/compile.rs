//! Validation and compilation of a [`ModelSpec`] into an immutable [`Model`].
//!
//! All checks that need only the spec live in [`super::validate`]; this file resolves names into
//! typed ids, orders the relative coordinates parents-first, expands joints into elementary axes
//! and cut joints into scalar loop-closure equations, and derives constants (areas, C_vt).

use std::collections::BTreeMap;

use crate::elements::component::Component;
use crate::elements::inputs::Signal;
use crate::mechanics::kinematics::Kinematics;
use crate::model::spec::{
    CutJointKind, FrictionSpec, JointKind, ModelSpec, NonholonomicKind, Pose,
};
use crate::model::*;
use crate::model::{DiscContact, NonholonomicRow};
use crate::pipeline::pose::elementary_axes;
use crate::ModelError;

fn v(a: &[f64; 3]) -> V3 {
    V3::new(a[0], a[1], a[2])
}

fn unit(a: &[f64; 3], path: &str, element: &str) -> Result<V3, ModelError> {
    // scale first so that huge or tiny (but valid) entries do not overflow or underflow the norm
    let x = v(a);
    let s = x.amax();
    if s.is_nan() || s <= 0.0 || !s.is_finite() {
        return Err(ModelError::new(
            path,
            element,
            "must be a finite non-zero vector",
        ));
    }
    let y = x / s;
    Ok(y / y.norm())
}

/// Two unit vectors completing `a` to a right-handed orthonormal basis (t1, t2, a).
pub fn perpendiculars(a: &V3) -> (V3, V3) {
    let helper = if a.x.abs() < 0.9 { V3::x() } else { V3::y() };
    let t1 = a.cross(&helper).normalize();
    let t2 = a.cross(&t1);
    (t1, t2)
}

/// Validates and compiles a spec. A spec in the assembled pose is mapped to the reference
/// configuration first ([`super::pose::to_reference`]), so what follows reads reference
/// positions only.
pub fn compile(spec: &ModelSpec) -> Result<Model, ModelError> {
    super::validate::validate(spec)?;
    let mapped;
    let spec = match spec.pose {
        Pose::Reference => spec,
        Pose::Assembled => {
            mapped = super::pose::to_reference(spec);
            &mapped
        }
    };
    if !spec.solver.formulation.is_available() {
        return Err(ModelError::new(
            "solver.formulation",
            "solver",
            format!(
                "formulation '{}' is not implemented yet",
                spec.solver.formulation.name()
            ),
        ));
    }

    let mut body_index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, b) in spec.bodies.iter().enumerate() {
        body_index.insert(b.name.as_str(), i);
    }
    let (axes, joints, frame_of_body) = compile_tree(spec, &body_index)?;
    let bodies = compile_bodies(spec, &frame_of_body)?;
    let names = Names {
        spec,
        body_frames: bodies.iter().map(|b| b.frame).collect(),
        body_index,
    };
    let (hydraulics, cylinders, node_index) = compile_hydraulics(spec, &names)?;
    let mut model = Model {
        name: spec.name.clone(),
        description: spec.description.clone(),
        gravity: v(&spec.gravity),
        axes,
        bodies,
        joints,
        cut_joints: spec.cut_joints.iter().map(|c| c.name.clone()).collect(),
        constraints: Vec::new(),
        hydraulics,
        inputs: spec
            .inputs
            .iter()
            .map(|i| Signal::from_spec(&i.signal))
            .collect(),
        input_names: spec.inputs.iter().map(|i| i.name.clone()).collect(),
        solver: solver_options(spec),
        volume_names: spec
            .hydraulics
            .volumes
            .iter()
            .map(|v| v.name.clone())
            .collect(),
        joint_friction: Vec::new(),
        nonholonomic: Vec::new(),
        // the cylinders alone until `finish_elements` puts the elements before them
        components: cylinders.into_iter().map(Component::Cylinder).collect(),
        n_elements: 0,
        has_node_compliance: false,
        has_mechanical_elements: false,
        element_every_step: Vec::new(),
        element_input: Vec::new(),
        cylinder_end_stop: Vec::new(),
        output_markers: Vec::new(),
        layout: Default::default(),
        natural: None,
        terrain: None,
    };
    link_chambers(&mut model);
    compile_joint_friction(spec, &mut model);

    // ---- elements (`crate::elements::element`): each checks and compiles itself against the names
    compile_elements(spec, &mut model, &node_index, &|b: &str, m: &str| {
        names.marker(b, m, "", "").ok()
    })?;
    model.constraints = compile_cut_joints(spec, &model, &names)?;
    model.nonholonomic = compile_nonholonomic(spec, &names)?;
    model.output_markers = compile_output_markers(spec, &names)?;
    // the global formulations' natural-coordinate model (004 §2), from the complete model
    if matches!(
        spec.solver.formulation,
        crate::model::spec::Formulation::GlobalAli3p | crate::model::spec::Formulation::GlobalI1al
    ) {
        model.natural =
            Some(crate::mechanics::global::natural_coordinates::NaturalModel::new(&model));
    }
    // the layout of the unknowns, once everything it reads is final
    model.layout = layout(&model);
    Ok(model)
}

/// The spec's bodies by name and the frame each is fixed to: what markers are resolved against.
struct Names<'s> {
    spec: &'s ModelSpec,
    body_index: BTreeMap<&'s str, usize>,
    body_frames: Vec<Frame>,
}

/// The body named `name` (`None` for the ground), or an error at `path` naming `element`.
fn body_ref(
    body_index: &BTreeMap<&str, usize>,
    name: &str,
    path: &str,
    element: &str,
) -> Result<Option<usize>, ModelError> {
    if name == "ground" {
        return Ok(None);
    }
    body_index
        .get(name)
        .map(|&i| Some(i))
        .ok_or_else(|| ModelError::new(path, element, format!("unknown body '{name}'")))
}

impl Names<'_> {
    /// Marker lookup: (frame, point) of marker `name` on `body` (or the ground).
    fn marker(
        &self,
        body: &str,
        name: &str,
        path: &str,
        element: &str,
    ) -> Result<FramePoint, ModelError> {
        let spec = self.spec;
        if body == "ground" {
            return spec
                .ground
                .markers
                .get(name)
                .map(|p| FramePoint {
                    frame: Frame::Ground,
                    point_ref: v(p),
                })
                .ok_or_else(|| {
                    ModelError::new(path, element, format!("ground has no marker '{name}'"))
                });
        }
        let bi = body_ref(&self.body_index, body, path, element)?.expect("non-ground body");
        spec.bodies[bi]
            .markers
            .get(name)
            .map(|p| FramePoint {
                frame: self.body_frames[bi],
                point_ref: v(p),
            })
            .ok_or_else(|| {
                ModelError::new(
                    path,
                    element,
                    format!("body '{body}' has no marker '{name}'"),
                )
            })
    }
}

/// The tree joints, parents first (breadth-first from the ground), expanded into elementary
/// axes; returns the axes, the joints and the frame each body is fixed to.
#[allow(clippy::type_complexity)]
fn compile_tree(
    spec: &ModelSpec,
    body_index: &BTreeMap<&str, usize>,
) -> Result<(Vec<Axis>, Vec<Joint>, Vec<Option<Frame>>), ModelError> {
    let mut frame_of_body: Vec<Option<Frame>> = vec![None; spec.bodies.len()];
    let mut axes: Vec<Axis> = Vec::new();
    let mut joints: Vec<Joint> = Vec::new();
    let mut done = vec![false; spec.joints.len()];
    loop {
        let mut progressed = false;
        for (ji, j) in spec.joints.iter().enumerate() {
            if done[ji] {
                continue;
            }
            let el = format!("joint '{}'", j.name);
            let parent_frame =
                match body_ref(body_index, &j.parent, &format!("joints[{ji}].parent"), &el)? {
                    None => Frame::Ground,
                    Some(pb) => match frame_of_body[pb] {
                        Some(f) => f,
                        None => continue, // parent not placed yet
                    },
                };
            let child = body_ref(body_index, &j.child, &format!("joints[{ji}].child"), &el)?
                .ok_or_else(|| {
                    ModelError::new(
                        format!("joints[{ji}].child"),
                        &el,
                        "the ground cannot be a child",
                    )
                })?;
            let loc = v(&j.location);
            let u = unit(&j.axis, &format!("joints[{ji}].axis"), &el)?;
            let u2 = if j.kind == JointKind::Universal {
                unit(
                    j.axis2.as_ref().unwrap_or(&[0.0; 3]),
                    &format!("joints[{ji}].axis2"),
                    &el,
                )?
            } else {
                V3::zeros()
            };
            let elementary = elementary_axes(j.kind, u, u2);
            let nq = elementary.len();
            let (q0, qd0) = (j.q0_si(), j.qd0_si());
            let (q0, qd0) = (q0.as_slice(), qd0.as_slice());
            for (name, vals) in [("q0", q0), ("qd0", qd0)] {
                if !vals.is_empty() && vals.len() != nq {
                    return Err(ModelError::new(
                        format!("joints[{ji}].{name}"),
                        &el,
                        format!(
                            "needs {nq} value(s) for a {:?} joint, found {}",
                            j.kind,
                            vals.len()
                        ),
                    ));
                }
            }
            let first = axes.len();
            let mut parent = parent_frame;
            for (a, (kind, dir)) in elementary.into_iter().enumerate() {
                let name = if nq == 1 {
                    j.name.clone()
                } else {
                    format!("{}.{a}", j.name)
                };
                axes.push(Axis {
                    name,
                    kind,
                    parent,
                    point_ref: loc,
                    dir_ref: dir,
                    q0: q0.get(a).copied().unwrap_or(0.0),
                    qd0: qd0.get(a).copied().unwrap_or(0.0),
                    joint: joints.len(),
                });
                parent = Frame::Link(AxisId(axes.len() - 1));
            }
            frame_of_body[child] = Some(parent);
            joints.push(Joint {
                name: j.name.clone(),
                first_axis: first,
                n_axes: nq,
            });
            done[ji] = true;
            progressed = true;
        }
        if !progressed {
            break;
        }
    }
    if let Some(ji) = done.iter().position(|d| !d) {
        return Err(ModelError::new(
            format!("joints[{ji}].parent"),
            format!("joint '{}'", spec.joints[ji].name),
            "the joint is not connected to the ground through the tree (a cycle must be closed with a cut joint)",
        ));
    }

    Ok((axes, joints, frame_of_body))
}

/// The bodies with their inertia in the reference configuration and their frames.
fn compile_bodies(
    spec: &ModelSpec,
    frame_of_body: &[Option<Frame>],
) -> Result<Vec<Body>, ModelError> {
    let mut bodies = Vec::new();
    for (i, b) in spec.bodies.iter().enumerate() {
        let frame = frame_of_body[i].ok_or_else(|| {
            ModelError::new(
                format!("bodies[{i}].name"),
                format!("body '{}'", b.name),
                "body is not connected to the tree (no joint has it as child)",
            )
        })?;
        let [ixx, iyy, izz, ixy, ixz, iyz] = b.inertia;
        bodies.push(Body {
            name: b.name.clone(),
            mass_kg: b.mass_kg,
            com_ref: v(&b.com),
            inertia_ref: M3::new(ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz),
            frame,
        });
    }

    Ok(bodies)
}

/// What [`compile_hydraulics`] returns: the circuit, the cylinders, and the node of each name.
type CompiledCircuit<'s> = (
    Hydraulics,
    Vec<crate::elements::hydraulics::cylinder::Cylinder>,
    BTreeMap<&'s str, Node>,
);

/// The hydraulic circuit: nodes (volumes, then pumps and tanks), cylinders and volumes; returns
/// it with the cylinders (compiled by their element, `elements/hydraulics/cylinder.rs`) and the
/// node of each name.
fn compile_hydraulics<'s>(
    spec: &'s ModelSpec,
    names: &Names<'s>,
) -> Result<CompiledCircuit<'s>, ModelError> {
    let h = &spec.hydraulics;
    let mut node_index: BTreeMap<&str, Node> = BTreeMap::new();
    for (i, vs) in h.volumes.iter().enumerate() {
        node_index.insert(vs.name.as_str(), Node::Volume(VolumeId(i)));
    }
    let mut sources = Vec::new();
    for s in h.pumps.iter().chain(h.tanks.iter()) {
        node_index.insert(s.name.as_str(), Node::Source(sources.len()));
        sources.push(Source {
            name: s.name.clone(),
            pressure_pa: s.pressure_pa,
        });
    }
    let node = |name: &str, path: &str, element: &str| -> Result<Node, ModelError> {
        node_index.get(name).copied().ok_or_else(|| {
            ModelError::new(path, element, format!("unknown hydraulic node '{name}'"))
        })
    };
    let volume = |name: &str, path: &str, element: &str| -> Result<VolumeId, ModelError> {
        match node(name, path, element)? {
            Node::Volume(v) => Ok(v),
            Node::Source(_) => Err(ModelError::new(
                path,
                element,
                format!("'{name}' must be a volume, not a pump or tank"),
            )),
        }
    };
    let rho = h.fluid.density_kg_m3;
    let mut cylinders = Vec::new();
    for (i, cs) in h.cylinders.iter().enumerate() {
        let el = format!("cylinder '{}'", cs.name);
        let p = |f: &str| format!("hydraulics.cylinders[{i}].{f}");
        cylinders.push(crate::elements::hydraulics::cylinder::compile(
            cs,
            &|field, end| names.marker(&end.body, &end.marker, &p(field), &el),
            &|field, name| volume(name, &p(field), &el),
        )?);
    }
    let volumes: Vec<Volume> = h
        .volumes
        .iter()
        .map(|vs| Volume {
            name: vs.name.clone(),
            hose_m3: vs.hose_volume_m3,
            hose_bulk_pa: vs.hose_bulk_modulus_pa,
            p0_pa: vs.p0_pa,
            algebraic: vs.algebraic,
            chambers: Vec::new(),
        })
        .collect();

    let hydraulics = Hydraulics {
        density_kg_m3: rho,
        oil_bulk_pa: h.fluid.bulk_modulus_pa,
        volumes,
        sources,
    };
    Ok((hydraulics, cylinders, node_index))
}

/// The solver options of `spec.solver` (names resolved to indices: validated before).
fn solver_options(spec: &ModelSpec) -> SolverOptions {
    let s = &spec.solver;
    let h = &spec.hydraulics;
    SolverOptions {
        formulation: s.formulation,
        step_s: s.step_s,
        duration_s: s.duration_s,
        output_interval_s: s.output_interval_s.unwrap_or(s.step_s),
        penalty: s.penalty,
        tol_position: s.tolerance_position,
        tol_pressure_pa: s.tolerance_pressure_pa,
        tol_relative: s.tolerance_relative,
        max_iterations: s.max_iterations,
        hydraulic_substeps: s.hydraulic_substeps,
        hydraulic_integrator: s.hydraulic_integrator,
        tol_friction_state: s.tolerance_friction_state,
        natural_frames: s.natural_frames,
        hydraulic_element_energy: s.hydraulic_element_energy,
        adaptive: (s.step_control == spec::StepControl::Adaptive).then(|| AdaptiveOptions {
            rtol: s.rtol,
            atol_scale: s.atol,
            min_step_s: s.min_step_s.unwrap_or(DEFAULT_MIN_STEP_S),
            max_step_s: largest_step_s(s),
        }),
        guidance: s
            .guidance
            .iter()
            .map(|g| Guidance {
                cylinder: CylinderId(
                    h.cylinders
                        .iter()
                        .position(|c| c.name == g.cylinder)
                        .expect("validated: guided cylinder exists"),
                ),
                input: spec
                    .inputs
                    .iter()
                    .position(|i| i.name == g.input)
                    .expect("validated: guidance input exists"),
                velocity_input: g.velocity_input.as_ref().map(|name| {
                    spec.inputs
                        .iter()
                        .position(|i| &i.name == name)
                        .expect("validated: guidance velocity input exists")
                }),
            })
            .collect(),
    }
}

/// Chambers per volume, so that a volume's geometry costs O(its chambers), not O(cylinders).
fn link_chambers(model: &mut Model) {
    for c in 0..model.n_cylinders() {
        let (a, b) = {
            let cyl = model.cylinder(c);
            (cyl.vol_a, cyl.vol_b)
        };
        model.hydraulics.volumes[a.0].chambers.push((
            CylinderId(c),
            crate::elements::hydraulics::cylinder::Side::A,
        ));
        model.hydraulics.volumes[b.0].chambers.push((
            CylinderId(c),
            crate::elements::hydraulics::cylinder::Side::B,
        ));
    }
}

/// Joint friction (003 Pub II laws on revolute and prismatic joints).
fn compile_joint_friction(spec: &ModelSpec, model: &mut Model) {
    for js in &spec.joints {
        if js.friction == FrictionSpec::None {
            continue;
        }
        let axis = model
            .axes
            .iter()
            .position(|a| a.name == js.name)
            .expect("validated: a 1-coordinate joint has an axis of its name");
        model.joint_friction.push(JointFriction {
            joint: js.name.clone(),
            axis: AxisId(axis),
            friction: crate::elements::friction::compile::seal_friction(&js.friction),
        });
    }
}

/// Cut joints → scalar equations. Body-1 directions are the body-1-fixed vectors that
/// coincide with body 2's axis in the initial configuration q0.
fn compile_cut_joints(
    spec: &ModelSpec,
    model: &Model,
    names: &Names,
) -> Result<Vec<Constraint>, ModelError> {
    let mut kin = Kinematics::<f64>::new(model.axes.len());
    let q0: Vec<f64> = model.axes.iter().map(|a| a.q0).collect();
    kin.positions(model, &q0);
    let mut constraints = Vec::new();
    for (ci, cj) in spec.cut_joints.iter().enumerate() {
        let el = format!("cut joint '{}'", cj.name);
        let p1 = names.marker(
            &cj.body1,
            &cj.marker1,
            &format!("cut_joints[{ci}].marker1"),
            &el,
        )?;
        let p2 = names.marker(
            &cj.body2,
            &cj.marker2,
            &format!("cut_joints[{ci}].marker2"),
            &el,
        )?;
        if p1.frame == p2.frame {
            return Err(ModelError::new(
                format!("cut_joints[{ci}].body2"),
                &el,
                "both sides are on the same body",
            ));
        }
        let eqs = cut_joint_equations(cj, ci, &el, &kin, p1, p2)?;
        for (lbl, eq) in eqs {
            constraints.push(Constraint {
                name: format!("{}.{lbl}", cj.name),
                cut_joint: ci,
                eq,
            });
        }
    }
    Ok(constraints)
}

/// The scalar equations of cut joint `cj` (index `ci`, named `el` in errors) between the
/// markers `p1` and `p2`, with the kinematics `kin` at q0.
fn cut_joint_equations(
    cj: &spec::CutJointSpec,
    ci: usize,
    el: &str,
    kin: &Kinematics<f64>,
    p1: FramePoint,
    p2: FramePoint,
) -> Result<Vec<(String, ConstraintEq)>, ModelError> {
    let (f1, f2) = (p1.frame, p2.frame);
    let axis = unit(&cj.axis, &format!("cut_joints[{ci}].axis"), el)?;
    let normal = unit(&cj.normal, &format!("cut_joints[{ci}].normal"), el)?;
    // a body-2 reference direction → the body-1 reference direction equal to it at q0
    let to_body1 = |d2: &V3| -> V3 {
        let g = kin.frame_rot(f2) * d2;
        kin.frame_rot(f1).transpose() * g
    };
    let d2 = |d: V3| FrameDir {
        frame: f2,
        dir_ref: d,
    };
    let d1 = |d: V3| FrameDir {
        frame: f1,
        dir_ref: d,
    };
    let mut eqs: Vec<(String, ConstraintEq)> = Vec::new();
    let pd = |e: FrameDir| ConstraintEq::PointDot { e, p1, p2 };
    match cj.kind {
        CutJointKind::Spherical => {
            for (lbl, e) in [("x", V3::x()), ("y", V3::y()), ("z", V3::z())] {
                eqs.push((
                    lbl.into(),
                    pd(FrameDir {
                        frame: Frame::Ground,
                        dir_ref: e,
                    }),
                ));
            }
        }
        CutJointKind::Revolute => {
            for (lbl, e) in [("x", V3::x()), ("y", V3::y()), ("z", V3::z())] {
                eqs.push((
                    lbl.into(),
                    pd(FrameDir {
                        frame: Frame::Ground,
                        dir_ref: e,
                    }),
                ));
            }
            let (t1, t2) = perpendiculars(&axis);
            let a1 = to_body1(&axis);
            eqs.push((
                "axis.1".into(),
                ConstraintEq::DirDot {
                    e1: d1(a1),
                    e2: d2(t1),
                },
            ));
            eqs.push((
                "axis.2".into(),
                ConstraintEq::DirDot {
                    e1: d1(a1),
                    e2: d2(t2),
                },
            ));
        }
        CutJointKind::Prismatic => {
            let (t1, t2) = perpendiculars(&axis);
            let a1 = to_body1(&axis);
            let u1 = to_body1(&t1);
            eqs.push((
                "axis.1".into(),
                ConstraintEq::DirDot {
                    e1: d1(a1),
                    e2: d2(t1),
                },
            ));
            eqs.push((
                "axis.2".into(),
                ConstraintEq::DirDot {
                    e1: d1(a1),
                    e2: d2(t2),
                },
            ));
            eqs.push((
                "twist".into(),
                ConstraintEq::DirDot {
                    e1: d1(u1),
                    e2: d2(t2),
                },
            ));
            eqs.push(("line.1".into(), pd(d2(t1))));
            eqs.push(("line.2".into(), pd(d2(t2))));
        }
        CutJointKind::PlanarRevolute => {
            let (t1, t2) = perpendiculars(&normal);
            eqs.push(("1".into(), pd(d2(t1))));
            eqs.push(("2".into(), pd(d2(t2))));
        }
        CutJointKind::PlanarPrismatic => {
            if normal.dot(&axis).abs() > 1e-9 {
                return Err(ModelError::new(
                    format!("cut_joints[{ci}].axis"),
                    el,
                    "the sliding axis must be perpendicular to the plane normal",
                ));
            }
            let m = normal.cross(&axis);
            eqs.push((
                "rotation".into(),
                ConstraintEq::DirDot {
                    e1: d1(to_body1(&axis)),
                    e2: d2(m),
                },
            ));
            eqs.push(("line".into(), pd(d2(m))));
        }
    }
    Ok(eqs)
}

/// Nonholonomic constraints → scalar rows Ψ = e · v_Q (001 eq. 11).
fn compile_nonholonomic(
    spec: &ModelSpec,
    names: &Names,
) -> Result<Vec<NonholonomicRow>, ModelError> {
    let mut rows = Vec::new();
    for (i, nh) in spec.nonholonomic.iter().enumerate() {
        let el = format!("nonholonomic constraint '{}'", nh.name);
        let point = names.marker(
            &nh.body,
            &nh.marker,
            &format!("nonholonomic[{i}].marker"),
            &el,
        )?;
        match nh.kind {
            NonholonomicKind::KnifeEdge => rows.push(NonholonomicRow {
                name: nh.name.clone(),
                e: FrameDir {
                    frame: point.frame,
                    dir_ref: unit(&nh.direction, &format!("nonholonomic[{i}].direction"), &el)?,
                },
                point,
                disc: None,
            }),
            NonholonomicKind::RollingDisc => {
                let n = unit(
                    &nh.ground_normal,
                    &format!("nonholonomic[{i}].ground_normal"),
                    &el,
                )?;
                let axis = FrameDir {
                    frame: point.frame,
                    dir_ref: unit(&nh.axis, &format!("nonholonomic[{i}].axis"), &el)?,
                };
                let (t1, t2) = perpendiculars(&n);
                for (k, t) in [t1, t2].into_iter().enumerate() {
                    rows.push(NonholonomicRow {
                        name: format!("{}.t{}", nh.name, k + 1),
                        e: FrameDir {
                            frame: Frame::Ground,
                            dir_ref: t,
                        },
                        point,
                        disc: Some(DiscContact {
                            axis,
                            normal: n,
                            radius_m: nh.radius_m,
                        }),
                    });
                }
            }
        }
    }
    Ok(rows)
}

/// `[outputs] markers`: "body.marker" → its point, for the result columns.
fn compile_output_markers(
    spec: &ModelSpec,
    names: &Names,
) -> Result<Vec<(String, FramePoint)>, ModelError> {
    let mut markers = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, name) in spec.outputs.markers.iter().enumerate() {
        let path = format!("outputs.markers[{i}]");
        let el = format!("output marker '{name}'");
        let Some((body, m)) = name.split_once('.') else {
            return Err(ModelError::new(
                path,
                &el,
                "must be written \"body.marker\" (a body's name, a dot, one of its markers)",
            ));
        };
        if !seen.insert(name.as_str()) {
            return Err(ModelError::new(path, &el, "is listed twice"));
        }
        let point = names.marker(body, m, &path, &el)?;
        markers.push((name.clone(), point));
    }
    Ok(markers)
}

/// Compiles `spec.elements` into `model.elements()`: names unique among the hydraulic components
/// and the elements, then each element's own checks (`ComponentSpec::compile`).
fn compile_elements(
    spec: &ModelSpec,
    model: &mut Model,
    node_index: &BTreeMap<&str, Node>,
    marker: &dyn Fn(&str, &str) -> Option<FramePoint>,
) -> Result<(), ModelError> {
    use crate::elements::element::{Context, CylinderPort};
    let h = &spec.hydraulics;
    let mut taken: Vec<&str> = h
        .valves
        .iter()
        .map(|v| v.name.as_str())
        .chain(h.throttles.iter().map(|t| t.name.as_str()))
        .chain(h.cylinders.iter().map(|c| c.name.as_str()))
        .chain(h.bridge_valves.iter().map(|b| b.name.as_str()))
        .collect();
    let node = |n: &str| node_index.get(n).copied();
    let body = |b: &str| -> Option<Frame> {
        if b == "ground" {
            return Some(Frame::Ground);
        }
        let i = spec.bodies.iter().position(|x| x.name == b)?;
        model.bodies.get(i).map(|x| x.frame)
    };
    let input = |n: &str| spec.inputs.iter().position(|i| i.name == n);
    let joint_axis = |n: &str| -> Option<AxisId> {
        let j = model.joints.iter().find(|j| j.name == n)?;
        (j.n_axes == 1).then_some(AxisId(j.first_axis))
    };
    let joint_type = |n: &str| -> Option<&'static str> {
        let j = spec.joints.iter().find(|j| j.name == n)?;
        Some(crate::pipeline::validate::joint_kind_name(j.kind))
    };
    let cylinder = |n: &str| -> Option<CylinderPort> {
        let (index, c) = model.cylinders().enumerate().find(|(_, c)| c.name == n)?;
        Some(CylinderPort {
            index,
            base: c.base,
            rod: c.rod,
            retracted_length_m: c.retracted_length_m,
            stroke_m: c.stroke_m,
            piston_area_m2: c.area_a_m2,
        })
    };
    let n_sections = h.valves.len() + h.bridge_valves.len() + h.throttles.len();
    let mut elements = Vec::with_capacity(n_sections + spec.elements.len());
    let context = |prefix: String, element: String| Context {
        prefix,
        element,
        node: &node,
        marker,
        body: &body,
        input: &input,
        joint_axis: &joint_axis,
        joint_type: &joint_type,
        cylinder: &cylinder,
        oil_bulk_pa: model.hydraulics.oil_bulk_pa,
        density_kg_m3: model.hydraulics.density_kg_m3,
        // an element that needs Δt small enough (a relief valve's lag τ ≥ Δt/2) is checked
        // against the largest step the run can take
        step_s: largest_step_s(&spec.solver),
    };
    // the hydraulics sections first (valves, bridge valves, throttles), so the flow sums keep
    // their order; `pipeline::validate` has checked their names
    for (i, vs) in h.valves.iter().enumerate() {
        let cx = context(
            format!("hydraulics.valves[{i}]"),
            format!("valve '{}'", vs.name),
        );
        elements.push(Component::Valve43(vs.compile(&cx)?));
    }
    for (i, bs) in h.bridge_valves.iter().enumerate() {
        let cx = context(
            format!("hydraulics.bridge_valves[{i}]"),
            format!("valve '{}'", bs.name),
        );
        elements.push(Component::BridgeValve(bs.compile(&cx)?));
    }
    for (i, ts) in h.throttles.iter().enumerate() {
        let cx = context(
            format!("hydraulics.throttles[{i}]"),
            format!("throttle '{}'", ts.name),
        );
        elements.push(Component::Throttle(ts.compile(&cx)?));
    }
    for (i, es) in spec.elements.iter().enumerate() {
        let cx = context(
            format!("elements[{i}]"),
            format!("{} '{}'", es.noun(), es.name()),
        );
        if es.name().is_empty() {
            return Err(cx.error("name", "must not be empty"));
        }
        if taken.contains(&es.name()) {
            return Err(cx.error(
                "name",
                format!(
                    "'{}' is already the name of another component (valves, throttles, \
                     cylinders and elements share one namespace)",
                    es.name()
                ),
            ));
        }
        taken.push(es.name());
        let e = match es {
            // a load-sensing shuttle follows a valve compiled before it
            crate::elements::component::ComponentSpec::LsShuttle(s) => {
                let valves = elements.iter().enumerate().filter_map(|(i, e)| match e {
                    Component::Valve43(v) => Some((i, v)),
                    _ => None,
                });
                Component::LsShuttle(s.compile(&cx, valves)?)
            }
            _ => es.compile(&cx)?,
        };
        check_element_fits(spec, model, es, &e, &cx)?;
        elements.push(e);
    }
    finish_elements(spec, model, elements)
}

/// What the formulation and the circuit ask of a compiled element `e` (spec `es`, context
/// `cx`): a coupled element only under penalty, a natural-coordinate port under the global
/// formulations, volumes with a pressure state where its law needs them.
fn check_element_fits(
    spec: &ModelSpec,
    model: &Model,
    es: &crate::elements::component::ComponentSpec,
    e: &Component,
    cx: &crate::elements::element::Context,
) -> Result<(), ModelError> {
    let natural = matches!(
        spec.solver.formulation,
        crate::model::spec::Formulation::GlobalAli3p | crate::model::spec::Formulation::GlobalI1al
    );
    // an element coupling node ports to a joint (a hydraulic motor): its flow needs the
    // joint rate and its torque the pressures, which the penalty step's evaluator passes
    // between the two sides (`circuit::component_flows_coupled`) and multi-rate through its
    // shaft port (`circuit::Shaft`)
    let coupled = e.ports().nodes[0].is_some() && e.is_mechanical();
    if coupled
        && !matches!(
            spec.solver.formulation,
            crate::model::spec::Formulation::Penalty | crate::model::spec::Formulation::Multirate
        )
    {
        return Err(cx.error(
            "type",
            format!(
                "a {} couples hydraulic nodes to a joint, which only the 'penalty' and \
                 'multirate' formulations carry; not supported by formulation '{}'",
                es.noun(),
                spec.solver.formulation.name()
            ),
        ));
    }
    if natural && !e.natural_coordinate_port() {
        return Err(cx.error(
            "type",
            format!(
                "the formulation '{}' (natural coordinates) cannot carry a {}: use \
                 penalty, double-step, multirate or kinematic-guidance",
                spec.solver.formulation.name(),
                es.noun()
            ),
        ));
    }
    for n in e.ports().nodes.iter().flatten() {
        if let Node::Volume(v) = n {
            if model.hydraulics.volumes[v.0].algebraic && coupled {
                return Err(cx.error(
                    "type",
                    format!(
                        "a {} needs volumes with a pressure state, not the algebraic \
                         volume '{}' (its flow depends on the joint rate)",
                        es.noun(),
                        model.hydraulics.volumes[v.0].name
                    ),
                ));
            }
            if model.hydraulics.volumes[v.0].algebraic
                && matches!(e, crate::elements::component::Component::Accumulator(_))
            {
                return Err(cx.error(
                    "node",
                    "an accumulator needs a volume with a pressure state, not an \
                     algebraic one (its compliance would be neglected)",
                ));
            }
        }
    }
    Ok(())
}

/// The per-element lists of `model` read every step (mechanical, evaluated every step, input,
/// the end stop of each cylinder), the algebraic volumes' check, and the terrain with its
/// `bucket_dig` elements; then `elements` go before the cylinders in `model.components`
/// (`Model::elements`).
fn finish_elements(
    spec: &ModelSpec,
    model: &mut Model,
    elements: Vec<Component>,
) -> Result<(), ModelError> {
    model.has_mechanical_elements = elements.iter().any(|e| e.is_mechanical());
    // evaluated at every step: the mechanical elements (their energy is in the balance), and
    // every element when the hydraulic accounts are asked for
    model.element_every_step = elements
        .iter()
        .map(|e| e.is_mechanical() || model.solver.hydraulic_element_energy)
        .collect();
    model.element_input = elements.iter().map(|e| e.ports().input).collect();
    model.has_node_compliance = elements
        .iter()
        .any(|e| matches!(e, crate::elements::component::Component::Accumulator(_)));
    // the end-stop element of each cylinder, if any (read by `advance::check_stroke` every step)
    model.cylinder_end_stop = (0..model.n_cylinders())
        .map(|c| {
            elements.iter().position(
                |e| matches!(e, crate::elements::component::Component::EndStop(s) if s.cylinder.index == c),
            )
        })
        .collect();
    algebraic_volume_pressure_set(model, &elements)?;
    // the terrain, and the bucket_dig elements that need it
    let diggers: Vec<usize> = (0..elements.len())
        .filter(|&i| {
            matches!(
                elements[i],
                crate::elements::component::Component::BucketDig(_)
            )
        })
        .collect();
    match &spec.terrain {
        Some(t) => model.terrain = Some(t.compile(diggers, model.gravity.norm())?),
        None => {
            if let Some(&i) = diggers.first() {
                let k = i - (elements.len() - spec.elements.len());
                return Err(ModelError::new(
                    format!("elements[{k}].type"),
                    format!("bucket '{}'", elements[i].name()),
                    "a bucket_dig element needs a [terrain] table",
                ));
            }
        }
    }
    let cylinders = std::mem::take(&mut model.components);
    model.n_elements = elements.len();
    model.components = elements;
    model.components.extend(cylinders);
    Ok(())
}

/// An algebraic volume takes its pressure from its flow balance Σ Q_in(p) − V̇ = 0
/// (`circuit::reduced`), so some flow into it must depend on its pressure, or a cylinder
/// chamber must make it the force that holds the piston (then it is the multiplier of the
/// chamber's volume constraint). A volume fed only by pumps without leakage (η_v = 1, the
/// delivery D ω/2π whatever the pressure) has neither: its row of the Newton tangent is zero
/// and the pressure undetermined. Refused here, naming the volume and what to add; a pump with
/// η_v < 1 (laminar leakage C_L Δp) or any valve, throttle, hose or valve element sets it.
fn algebraic_volume_pressure_set(
    model: &Model,
    elements: &[crate::elements::component::Component],
) -> Result<(), ModelError> {
    use crate::elements::component::Component;
    for (v, volume) in model.hydraulics.volumes.iter().enumerate() {
        if !volume.algebraic || !volume.chambers.is_empty() {
            continue;
        }
        let at_v = |e: &&Component| e.ports().nodes.contains(&Some(Node::Volume(VolumeId(v))));
        let mut leak_free_pumps = Vec::new();
        let mut sets_pressure = false;
        for e in elements.iter().filter(at_v) {
            match e {
                Component::FixedPump(p) if p.shaft.leakage_m3_s_pa == 0.0 => {
                    leak_free_pumps.push(p.name.as_str())
                }
                Component::PcPump(p) if p.shaft.leakage_m3_s_pa == 0.0 => {
                    leak_free_pumps.push(p.name.as_str())
                }
                _ => sets_pressure = true,
            }
        }
        if !sets_pressure && !leak_free_pumps.is_empty() {
            return Err(ModelError::new(
                format!("hydraulics.volumes[{v}].algebraic"),
                format!("volume '{}'", volume.name),
                format!(
                    "this algebraic volume is fed only by pumps without leakage ({}): their \
                     delivery does not depend on its pressure, so its flow balance cannot set \
                     the pressure (a singular Newton system); add a path whose flow depends on \
                     it (a relief valve, throttle or valve to the tank), give the pump a \
                     volumetric_efficiency below 1, or make it a volume with a pressure state \
                     (algebraic = false)",
                    leak_free_pumps
                        .iter()
                        .map(|n| format!("'{n}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The layout of `model`'s unknowns (`model/layout.rs`). Reads the axes, volumes, cylinders, joint friction,
/// elements, valves, constraint and nonholonomic rows, and the solver tolerances; call it
/// once these are final.
pub(crate) fn layout(model: &Model) -> crate::model::layout::Layout {
    use crate::solver::tolerances::Tolerances;
    let s = &model.solver;
    let mut names: Vec<String> = Vec::new();
    let mut units: Vec<&'static str> = Vec::new();
    for a in &model.axes {
        names.push(a.name.clone());
        units.push(match a.kind {
            AxisKind::Revolute => "rad",
            AxisKind::Prismatic => "m",
        });
    }
    let z = 0..names.len();
    for v in &model.hydraulics.volumes {
        names.push(format!("{}.p", v.name));
        units.push("Pa");
    }
    let p = z.end..names.len();
    let friction = friction_blocks(model, &mut names, &mut units, p.end);
    let w = p.end..names.len();
    let element_states = element_states(model, &mut names, &mut units);
    let internal = w.end..names.len();
    let (spools, element_position, element_reads) = positions(model);
    let node_ports = node_ports(
        model,
        &element_states,
        &element_position,
        &element_reads,
        internal.start,
    );
    let multipliers = model
        .constraints
        .iter()
        .map(|c| format!("{}.lambda", c.name))
        .chain(
            model
                .nonholonomic
                .iter()
                .map(|r| format!("{}.lambda", r.name)),
        )
        .collect();
    let block_atol = [
        s.tol_position,
        s.tol_pressure_pa,
        s.tol_friction_state,
        s.tol_friction_state,
    ];
    let mut layout = crate::model::layout::Layout {
        names,
        units,
        z,
        p,
        w,
        internal,
        friction,
        element_states,
        spools,
        element_position,
        element_reads,
        node_ports,
        multipliers,
        tolerances: Tolerances::new(&[(0, 0.0)], 0.0),
        block_atol,
        n_cylinders: model.n_cylinders(),
    };
    layout.tolerances = layout.tolerances_with(layout.z.len(), s.tol_position, s.tol_relative);
    layout
}

/// The friction blocks of the layout's block w (cylinders, then friction joints): each
/// owner's states named `<owner>.<state>` and given units, appended to `names` and `units`;
/// `p_end` is where w starts.
fn friction_blocks(
    model: &Model,
    names: &mut Vec<String>,
    units: &mut Vec<&'static str>,
    p_end: usize,
) -> Vec<crate::model::layout::FrictionBlock> {
    use crate::model::layout::{FrictionBlock, FrictionOwner};
    let owners = model
        .cylinders()
        .enumerate()
        .map(|(c, cyl)| (cyl.name.as_str(), FrictionOwner::Cylinder(CylinderId(c))))
        .chain(model.joint_friction.iter().enumerate().map(|(j, jf)| {
            (
                jf.joint.as_str(),
                FrictionOwner::Joint {
                    index: j,
                    axis: jf.axis,
                },
            )
        }));
    let mut friction = Vec::new();
    for (name, owner) in owners {
        let start = names.len() - p_end;
        for state in crate::elements::friction::state_names(owner.law(model)) {
            names.push(format!("{name}.{state}"));
            units.push(crate::model::layout::friction_state_unit(state));
        }
        friction.push(FrictionBlock {
            name: name.to_string(),
            owner,
            states: start..names.len() - p_end,
        });
    }
    friction
}

/// The internal states of each element (block e of the layout), named and given units by the
/// element (`Element::describe_internal`), appended to `names` and `units`; their ranges.
fn element_states(
    model: &Model,
    names: &mut Vec<String>,
    units: &mut Vec<&'static str>,
) -> Vec<std::ops::Range<usize>> {
    use crate::elements::element::Element;
    let mut element_states = Vec::with_capacity(model.elements().len());
    let mut vars = Vec::new();
    for e in model.elements() {
        let start = names.len();
        // the element names its internal states (`relief1.poppet`) and gives their units
        vars.clear();
        e.describe_internal(&mut vars);
        debug_assert_eq!(
            vars.len(),
            e.n_internal(),
            "describe_internal names every internal state (internal invariant)"
        );
        for v in vars.drain(..) {
            names.push(v.name);
            units.push(v.unit);
        }
        element_states.push(start..names.len());
    }
    element_states
}

/// The valve positions (`Element::n_position`), element by element: their names, each
/// element's slot, and the slot each element reads (its own, or the one of the element it
/// follows).
fn positions(model: &Model) -> (Vec<String>, Vec<Option<usize>>, Vec<Option<usize>>) {
    use crate::elements::element::Element;
    let mut vars = Vec::new();
    // the valve positions (`Element::n_position`), element by element
    let mut spools = Vec::new();
    let mut element_position = Vec::with_capacity(model.elements().len());
    for e in model.elements() {
        vars.clear();
        e.describe_position(&mut vars);
        debug_assert_eq!(
            vars.len(),
            e.n_position(),
            "describe_position names every position (internal invariant)"
        );
        element_position.push((!vars.is_empty()).then_some(spools.len()));
        spools.extend(vars.drain(..).map(|v| v.name));
    }
    // the position each element reads: its own, or the one of the element it follows
    let element_reads: Vec<Option<usize>> = model
        .elements()
        .iter()
        .enumerate()
        .map(|(i, e)| match e.reads_position_of() {
            Some(j) => element_position[j],
            None => element_position[i],
        })
        .collect();
    (spools, element_position, element_reads)
}

/// The elements with node ports, for the flow sum (`Layout::node_ports`); `internal_start`
/// is where the block e starts.
fn node_ports(
    model: &Model,
    element_states: &[std::ops::Range<usize>],
    element_position: &[Option<usize>],
    element_reads: &[Option<usize>],
    internal_start: usize,
) -> Vec<crate::model::layout::NodePorts> {
    // the elements with node ports, for the flow sum
    model
        .elements()
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let nodes = e.ports().nodes;
            // `circuit::advance_positions` finds the positions through this list
            debug_assert!(
                element_position[i].is_none() || nodes[0].is_some(),
                "an element with a valve position has node ports (internal invariant)"
            );
            nodes[0].map(|_| crate::model::layout::NodePorts {
                element: i,
                nodes,
                position: element_position[i],
                reads: element_reads[i],
                internal: element_states[i].start - internal_start
                    ..element_states[i].end - internal_start,
            })
        })
        .collect()
}

/// Default smallest adaptive step [s] (`solver.min_step_s`).
pub const DEFAULT_MIN_STEP_S: f64 = 1e-9;

/// The largest step a run takes [s]: `step_s` at fixed steps; with adaptive steps
/// `max_step_s`, by default the larger of `step_s` and the output interval.
pub fn largest_step_s(s: &spec::SolverSpec) -> f64 {
    match s.step_control {
        spec::StepControl::Fixed => s.step_s,
        spec::StepControl::Adaptive => s
            .max_step_s
            .unwrap_or_else(|| s.step_s.max(s.output_interval_s.unwrap_or(s.step_s))),
    }
}
