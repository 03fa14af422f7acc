//! External loads driven by input signals: a point force on a body marker, a torque on a body,
//! or a generalized force on a single-axis joint. The load is the input's value times a fixed
//! vector (or scalar), so one signal shapes it in time, e.g. the torque of 001 eq. 92.
//!
//! ```text
//!   point force:  F⃗ = u(t) f⃗    at a marker, f⃗ in global or body axes          [N]
//!   torque:       T⃗ = u(t) τ⃗    on a body,  τ⃗ in global or body axes          [N m]
//!   joint force:  Q_j = u(t) g  on the coordinate of a revolute/prismatic joint [N m or N]
//! ```
//! Without an input, u = 1 (a constant load). The supplied power (F⃗·ṙ, T⃗·ω, Q_j q̇) enters the
//! mechanical balance as external work; the energy stage evaluates it at the committed state.

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

use crate::elements::element::{
    Context, Element, ElementSpec, EnergyDomain, MechPort, PortEffort, PortState, Ports, Power,
    Variable, MAX_NODES, MAX_OUTPUTS,
};
use crate::error::ModelError;
use crate::solver::real::Real;

/// Axes a load vector is given in.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LoadAxes {
    /// Global axes (the default).
    #[default]
    Global,
    /// The axes of the body the load acts on (follows its rotation).
    Body,
}

/// `[[elements]] type = "point_force"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PointForceSpec {
    /// Name.
    pub name: String,
    /// Body it acts on.
    pub body: String,
    /// Marker of that body where it acts.
    pub marker: String,
    /// Force per unit of the input f⃗ [N].
    pub force_n: [f64; 3],
    /// Axes of `force_n`.
    #[serde(default)]
    pub axes: LoadAxes,
    /// Input u(t) that scales it; none: u = 1.
    #[serde(default)]
    pub input: Option<String>,
}

/// `[[elements]] type = "torque"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TorqueSpec {
    /// Name.
    pub name: String,
    /// Body it acts on.
    pub body: String,
    /// Torque per unit of the input τ⃗ [N m].
    pub torque_n_m: [f64; 3],
    /// Axes of `torque_n_m`.
    #[serde(default)]
    pub axes: LoadAxes,
    /// Input u(t) that scales it; none: u = 1.
    #[serde(default)]
    pub input: Option<String>,
}

/// `[[elements]] type = "joint_force"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct JointForceSpec {
    /// Name.
    pub name: String,
    /// A revolute or prismatic joint.
    pub joint: String,
    /// Generalized force per unit of the input g [N m or N].
    pub value: f64,
    /// Input u(t) that scales it; none: u = 1.
    #[serde(default)]
    pub input: Option<String>,
}

/// A compiled external load.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalLoad {
    /// Name.
    pub name: String,
    /// Where it acts (point, torque or joint port).
    pub port: MechPort,
    /// f⃗ [N] or τ⃗ [N m], or (g, 0, 0) for a joint.
    pub vector: Vector3<f64>,
    /// Driving input.
    pub input: Option<usize>,
}

fn vector(cx: &Context, field: &str, v: [f64; 3]) -> Result<Vector3<f64>, ModelError> {
    for (i, x) in v.iter().enumerate() {
        cx.finite(&format!("{field}[{i}]"), *x)?;
    }
    Ok(Vector3::new(v[0], v[1], v[2]))
}

impl ElementSpec for PointForceSpec {
    type Law = ExternalLoad;
    const NOUN: &'static str = "point force";
    fn name(&self) -> &str {
        &self.name
    }
    fn compile(&self, cx: &Context) -> Result<ExternalLoad, ModelError> {
        PointForceSpec::compile(self, cx)
    }
}

impl PointForceSpec {
    /// Checks the fields and resolves the marker and input.
    pub fn compile(&self, cx: &Context) -> Result<ExternalLoad, ModelError> {
        let at = cx.marker("marker", &self.body, &self.marker)?;
        Ok(ExternalLoad {
            name: self.name.clone(),
            port: MechPort::Point {
                at,
                body_axes: self.axes == LoadAxes::Body,
            },
            vector: vector(cx, "force_n", self.force_n)?,
            input: cx.input("input", &self.input)?,
        })
    }
}

impl ElementSpec for TorqueSpec {
    type Law = ExternalLoad;
    const NOUN: &'static str = "torque";
    fn name(&self) -> &str {
        &self.name
    }
    fn compile(&self, cx: &Context) -> Result<ExternalLoad, ModelError> {
        TorqueSpec::compile(self, cx)
    }
}

impl TorqueSpec {
    /// Checks the fields and resolves the body and input.
    pub fn compile(&self, cx: &Context) -> Result<ExternalLoad, ModelError> {
        let frame = (cx.body)(&self.body)
            .ok_or_else(|| cx.error("body", format!("unknown body '{}'", self.body)))?;
        Ok(ExternalLoad {
            name: self.name.clone(),
            port: MechPort::Torque {
                frame,
                body_axes: self.axes == LoadAxes::Body,
            },
            vector: vector(cx, "torque_n_m", self.torque_n_m)?,
            input: cx.input("input", &self.input)?,
        })
    }
}

impl ElementSpec for JointForceSpec {
    type Law = ExternalLoad;
    const NOUN: &'static str = "joint force";
    fn name(&self) -> &str {
        &self.name
    }
    fn compile(&self, cx: &Context) -> Result<ExternalLoad, ModelError> {
        JointForceSpec::compile(self, cx)
    }
}

impl JointForceSpec {
    /// Checks the fields and resolves the joint and input.
    pub fn compile(&self, cx: &Context) -> Result<ExternalLoad, ModelError> {
        let axis = (cx.joint_axis)(&self.joint).ok_or_else(|| {
            cx.error(
                "joint",
                format!(
                    "'{}' is not a revolute or prismatic joint of the model",
                    self.joint
                ),
            )
        })?;
        Ok(ExternalLoad {
            name: self.name.clone(),
            port: MechPort::Joint(axis),
            vector: Vector3::new(cx.finite("value", self.value)?, 0.0, 0.0),
            input: cx.input("input", &self.input)?,
        })
    }
}

impl Element for ExternalLoad {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        Ports {
            nodes: [None; MAX_NODES],
            mech: self.port,
            input: self.input,
        }
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        let unit = match self.port {
            MechPort::Point { .. } => "N",
            MechPort::Torque { .. } => "N m",
            _ => "N m or N",
        };
        out.push(Variable {
            name: format!("{}.load", self.name),
            unit,
        });
    }
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let mut e = PortEffort::zero();
        let v = self.vector * at.u;
        e.vector = Vector3::new(S::from(v.x), S::from(v.y), S::from(v.z));
        e.force = S::from(v.x);
        e
    }
    fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        // the port mapping gives the rate conjugate to the load in `sd`: q̇ for a joint, the
        // velocity (angular velocity) along the unit load direction for a point (torque)
        let magnitude = match self.port {
            MechPort::Joint(_) => e.force,
            _ => e.vector.norm(),
        };
        Power {
            supplied_w: magnitude * at.sd,
            ..Default::default()
        }
    }
    fn domain(&self) -> EnergyDomain {
        EnergyDomain::Mechanical
    }
    fn outputs(
        &self,
        at: &PortState<f64>,
        _e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        out[0] = at.u * self.vector.norm();
        1
    }
}
