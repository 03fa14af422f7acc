//! Linear spring–damper between two body markers, on a line port.
//!
//! ```text
//!   marker1 ●──/\/\/\──[=|==]──● marker2      s = |r₂ − r₁|,  ṡ = n·(ṙ₂ − ṙ₁)
//!                                             F = −k (s − s₀) − c ṡ   (positive pushes apart)
//! ```
//! Stored energy ½ k (s − s₀)², dissipated power c ṡ² (both in the mechanical balance).

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    Context, Element, ElementSpec, EnergyDomain, MechPort, PortEffort, PortState, Ports, Power,
    Variable, MAX_NODES, MAX_OUTPUTS,
};
use crate::elements::ids::{AttachmentSpec, FramePoint};
use crate::error::ModelError;
use crate::solver::real::Real;

/// `[[elements]] type = "spring_damper"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SpringDamperSpec {
    /// Name.
    pub name: String,
    /// First end `{ body, marker }`.
    pub end1: AttachmentSpec,
    /// Second end `{ body, marker }`.
    pub end2: AttachmentSpec,
    /// Stiffness k [N/m].
    pub stiffness_n_m: f64,
    /// Damping c [N s/m]; default 0.
    #[serde(default)]
    pub damping_n_s_m: f64,
    /// Free length s₀ [m].
    pub free_length_m: f64,
}

/// A compiled spring–damper.
#[derive(Debug, Clone, PartialEq)]
pub struct SpringDamper {
    /// Name.
    pub name: String,
    /// End 1.
    pub end1: FramePoint,
    /// End 2.
    pub end2: FramePoint,
    /// k [N/m].
    pub stiffness_n_m: f64,
    /// c [N s/m].
    pub damping_n_s_m: f64,
    /// s₀ [m].
    pub free_length_m: f64,
}

impl ElementSpec for SpringDamperSpec {
    type Law = SpringDamper;
    const NOUN: &'static str = "spring-damper";
    fn name(&self) -> &str {
        &self.name
    }
    fn compile(&self, cx: &Context) -> Result<SpringDamper, ModelError> {
        SpringDamperSpec::compile(self, cx)
    }
}

impl SpringDamperSpec {
    /// Checks the fields and resolves the markers.
    pub fn compile(&self, cx: &Context) -> Result<SpringDamper, ModelError> {
        let end1 = cx.marker("end1.marker", &self.end1.body, &self.end1.marker)?;
        let end2 = cx.marker("end2.marker", &self.end2.body, &self.end2.marker)?;
        if end1 == end2 {
            return Err(cx.error("end2", "is the same point as `end1`"));
        }
        Ok(SpringDamper {
            name: self.name.clone(),
            end1,
            end2,
            stiffness_n_m: cx.non_negative("stiffness_n_m", self.stiffness_n_m)?,
            damping_n_s_m: cx.non_negative("damping_n_s_m", self.damping_n_s_m)?,
            free_length_m: cx.non_negative("free_length_m", self.free_length_m)?,
        })
    }
}

impl Element for SpringDamper {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        Ports {
            nodes: [None; MAX_NODES],
            mech: MechPort::Line {
                base: self.end1,
                rod: self.end2,
            },
            input: None,
        }
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        for (q, unit) in [("length", "m"), ("force", "N")] {
            out.push(Variable {
                name: format!("{}.{q}", self.name),
                unit,
            });
        }
    }
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let mut e = PortEffort::zero();
        e.force = -((at.s - S::from(self.free_length_m)) * self.stiffness_n_m
            + at.sd * self.damping_n_s_m);
        e
    }
    fn power(&self, at: &PortState<f64>, _e: &PortEffort<f64>) -> Power {
        let d = at.s - self.free_length_m;
        Power {
            stored_j: 0.5 * self.stiffness_n_m * d * d,
            dissipated_w: self.damping_n_s_m * at.sd * at.sd,
            supplied_w: 0.0,
        }
    }
    fn domain(&self) -> EnergyDomain {
        EnergyDomain::Mechanical
    }
    fn outputs(
        &self,
        at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        out[0] = at.s;
        out[1] = e.force;
        2
    }
}
