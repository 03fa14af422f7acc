//! The terrain's data: the model file's `[terrain]` ([`TerrainSpec`]), its checks and its
//! compilation into [`Terrain`] (`Model::terrain`), and the mutable world [`WorldState`]
//! (`State::world`). The stage `world` that advances it is `crate::pipeline::world`.

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

use super::cellular::{self, Automaton};
use super::heightfield::Heightfield;
use super::pressure::{self, Kernel};
use crate::elements::bucket_dig::MAX_DIG_POINTS;
use crate::elements::element::Frozen;
use crate::elements::field_check::At;
use crate::error::ModelError;

/// A cone of material on the initial field (a pile).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MoundSpec {
    /// Centre (x, z) [m].
    pub center_m: [f64; 2],
    /// Radius at its foot [m], > 0.
    pub radius_m: f64,
    /// Height above the base height [m], > 0.
    pub height_m: f64,
}

/// The hopper: an axis-aligned box (global) whose footprint receives dumped material.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HopperSpec {
    /// Lower corner (x, y, z) [m].
    pub min_m: [f64; 3],
    /// Upper corner (x, y, z) [m], each > the lower corner's.
    pub max_m: [f64; 3],
}

/// `[terrain]`: a deformable heightfield ground (003 Pub. V §II-E).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TerrainSpec {
    /// Corner (x₀, z₀) of the grid [m]; heights are along global y, above y = 0 (the bedrock).
    pub origin_m: [f64; 2],
    /// Cells along x and z, each in [2, 4096], at most 4 194 304 (2²²) in all.
    pub cells: [usize; 2],
    /// Cell side d [m], > 0.
    pub cell_m: f64,
    /// Initial height of every column above y = 0 [m], ≥ 0 (default 0).
    #[serde(default)]
    pub height_m: f64,
    /// Piles added to the initial field: cones of `height_m` over `radius_m`.
    #[serde(default)]
    pub mounds: Vec<MoundSpec>,
    /// Material density ρ [kg/m³], > 0.
    pub density_kg_m3: f64,
    /// Friction (piling) angle α [deg], in (0, 90) (default 35, Pub. V).
    #[serde(default = "default_angle")]
    pub friction_angle_deg: f64,
    /// η of Pub. V eq. 16, how easily a force displaces material [-], ≥ 0 (default 4, Pub. V).
    #[serde(default = "default_eta")]
    pub eta: f64,
    /// Flow rate z⁺ of Pub. V eq. 15 per sweep [-], in (0, 1/4] (default 1/4).
    #[serde(default = "default_flow")]
    pub flow_rate: f64,
    /// Automaton sweeps per step, in [0, 64] (default 1; 0: the terrain never avalanches).
    #[serde(default = "default_sweeps")]
    pub sweeps_per_step: usize,
    /// φ(±1) of the pressure propagation kernel [-], in [0, 1/2] (default 0.25).
    #[serde(default = "default_kernel")]
    pub kernel_side: f64,
    /// Block height of the pressure propagation [m], > 0 (default: the cell side).
    #[serde(default)]
    pub block_m: Option<f64>,
    /// Ground contact stiffness K of the force points [N/m], > 0.
    pub stiffness_n_m: f64,
    /// Ground contact damping C of the force points [N s/m], ≥ 0.
    pub damping_n_s_m: f64,
    /// The hopper that receives dumped material, if any.
    #[serde(default)]
    pub hopper: Option<HopperSpec>,
}

fn default_angle() -> f64 {
    35.0
}
fn default_eta() -> f64 {
    4.0
}
fn default_flow() -> f64 {
    0.25
}
fn default_sweeps() -> usize {
    1
}
fn default_kernel() -> f64 {
    0.25
}

/// The compiled terrain (`Model::terrain`).
#[derive(Debug, Clone, PartialEq)]
pub struct Terrain {
    /// The initial field.
    pub field0: Heightfield,
    /// Automaton parameters.
    pub automaton: Automaton,
    /// Sweeps per step.
    pub sweeps_per_step: usize,
    /// The pressure kernel.
    pub kernel: Kernel,
    /// Block height [m].
    pub block_m: f64,
    /// K [N/m].
    pub stiffness_n_m: f64,
    /// C [N s/m].
    pub damping_n_s_m: f64,
    /// Hopper lower and upper corners [m].
    pub hopper: Option<(Vector3<f64>, Vector3<f64>)>,
    /// Indices in `Model::elements` of the `bucket_dig` elements.
    pub diggers: Vec<usize>,
}

/// Where the errors of `[terrain]` point: `terrain.<field>`, element `terrain`.
fn at() -> At {
    At::new("terrain", "terrain")
}

fn err(field: &str, message: impl Into<String>) -> ModelError {
    at().error(field, message)
}

fn positive(field: &str, x: f64) -> Result<f64, ModelError> {
    at().positive(field, x)
}

fn non_negative(field: &str, x: f64) -> Result<f64, ModelError> {
    at().non_negative(field, x)
}

/// Most cells of a terrain grid (2²², e.g. 2048 × 2048: 200 m square at 0.1 m).
pub const MAX_CELLS: usize = 1 << 22;
/// Most automaton sweeps per step (Pub. V runs one per step; more only speeds up avalanching).
pub const MAX_SWEEPS: usize = 64;

impl TerrainSpec {
    /// Checks every field (errors name `terrain.<field>`) and builds the initial field;
    /// `diggers` are the indices of the `bucket_dig` elements, `gravity` [m/s²] the model's.
    pub fn compile(&self, diggers: Vec<usize>, gravity: f64) -> Result<Terrain, ModelError> {
        for (i, x) in self.origin_m.iter().enumerate() {
            if !x.is_finite() {
                return Err(err(&format!("origin_m[{i}]"), "must be finite"));
            }
        }
        let [nx, nz] = self.cells;
        for (i, n) in self.cells.iter().enumerate() {
            if *n < 2 || *n > 4096 {
                return Err(err(
                    &format!("cells[{i}]"),
                    format!("must be in [2, 4096], got {n}"),
                ));
            }
        }
        // Every step touches every cell in each sweep: a bound on the work of one step (a typo
        // such as `sweeps_per_step = 4000000000` would otherwise never finish a step).
        if nx * nz > MAX_CELLS {
            return Err(err(
                "cells",
                format!("{nx} × {nz} = {} cells; at most {MAX_CELLS}", nx * nz),
            ));
        }
        if self.sweeps_per_step > MAX_SWEEPS {
            return Err(err(
                "sweeps_per_step",
                format!("must be in [0, {MAX_SWEEPS}], got {}", self.sweeps_per_step),
            ));
        }
        let d = positive("cell_m", self.cell_m)?;
        let h0 = non_negative("height_m", self.height_m)?;
        let rho = positive("density_kg_m3", self.density_kg_m3)?;
        let alpha = self.friction_angle_deg;
        if !(alpha.is_finite() && alpha > 0.0 && alpha < 90.0) {
            return Err(err(
                "friction_angle_deg",
                format!("must be in (0, 90), got {alpha}"),
            ));
        }
        let eta = non_negative("eta", self.eta)?;
        let z = self.flow_rate;
        if !(z.is_finite() && z > 0.0 && z <= 0.25) {
            return Err(err("flow_rate", format!("must be in (0, 1/4], got {z}")));
        }
        let kernel = Kernel {
            side: self.kernel_side,
        };
        kernel.check().map_err(|_| {
            err(
                "kernel_side",
                format!("must be in [0, 1/2], got {}", kernel.side),
            )
        })?;
        let block_m = match self.block_m {
            Some(b) => positive("block_m", b)?,
            None => d,
        };
        let stiffness = positive("stiffness_n_m", self.stiffness_n_m)?;
        let damping = non_negative("damping_n_s_m", self.damping_n_s_m)?;
        if !(gravity.is_finite() && gravity > 0.0) {
            return Err(err("density_kg_m3", "a terrain needs gravity (got none)"));
        }
        let mut field = Heightfield::flat(nx, nz, d, self.origin_m, h0)
            .map_err(|e| err("cells", e.to_string()))?;
        for (m, mound) in self.mounds.iter().enumerate() {
            let f = |q: &str| format!("mounds[{m}].{q}");
            for (i, x) in mound.center_m.iter().enumerate() {
                if !x.is_finite() {
                    return Err(err(&f(&format!("center_m[{i}]")), "must be finite"));
                }
            }
            let r = positive(&f("radius_m"), mound.radius_m)?;
            let h = positive(&f("height_m"), mound.height_m)?;
            for j in 0..nz {
                for i in 0..nx {
                    let x = self.origin_m[0] + (i as f64 + 0.5) * d;
                    let zc = self.origin_m[1] + (j as f64 + 0.5) * d;
                    let dist =
                        ((x - mound.center_m[0]).powi(2) + (zc - mound.center_m[1]).powi(2)).sqrt();
                    let k = field.index(i, j);
                    field.h[k] += (h * (1.0 - dist / r)).max(0.0);
                }
            }
        }
        let hopper = match &self.hopper {
            None => None,
            Some(hs) => {
                let mut lo = Vector3::zeros();
                let mut hi = Vector3::zeros();
                for i in 0..3 {
                    if !(hs.min_m[i].is_finite() && hs.max_m[i].is_finite()) {
                        return Err(err(&format!("hopper.min_m[{i}]"), "must be finite"));
                    }
                    if hs.max_m[i] <= hs.min_m[i] {
                        return Err(err(
                            &format!("hopper.max_m[{i}]"),
                            format!("must be > min_m[{i}] = {}", hs.min_m[i]),
                        ));
                    }
                    lo[i] = hs.min_m[i];
                    hi[i] = hs.max_m[i];
                }
                Some((lo, hi))
            }
        };
        let automaton = Automaton {
            friction_angle_rad: alpha.to_radians(),
            eta,
            flow_rate: z,
            density_kg_m3: rho,
            gravity_m_s2: gravity,
        };
        Ok(Terrain {
            field0: field,
            automaton,
            sweeps_per_step: self.sweeps_per_step,
            kernel,
            block_m,
            stiffness_n_m: stiffness,
            damping_n_s_m: damping,
            hopper,
            diggers,
        })
    }
}

/// The world state of one `bucket_dig` element.
#[derive(Debug, Clone, PartialEq)]
pub struct DigState {
    /// Its index in `Model::elements`.
    pub element: usize,
    /// Volume in the bucket [m³].
    pub payload_m3: f64,
    /// Volume this bucket dumped into the hopper [m³].
    pub hopper_m3: f64,
    /// Volume this bucket has cut so far [m³].
    pub dug_m3: f64,
    /// Velocity of the payload point at the state's time, global [m/s].
    pub velocity: Vector3<f64>,
    /// Its trapezoidal acceleration at the state's time, global [m/s²].
    pub acceleration: Vector3<f64>,
    /// The record the next step reads ([`crate::elements::element::Frozen`]).
    pub frozen: Frozen,
    /// The record the step that produced this state read (the output row of a restored state).
    pub frozen_used: Frozen,
}

/// The mutable world (`State::world`): the terrain's heights and the buckets' payloads.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldState {
    /// The heightfield now.
    pub field: Heightfield,
    /// One per `bucket_dig` element, in model order.
    pub diggers: Vec<DigState>,
}

impl WorldState {
    /// Volume in the hopper [m³].
    pub fn hopper_m3(&self) -> f64 {
        self.diggers.iter().map(|d| d.hopper_m3).sum()
    }
    /// Volume in the buckets [m³].
    pub fn payload_m3(&self) -> f64 {
        self.diggers.iter().map(|d| d.payload_m3).sum()
    }
    /// Terrain + payloads + hopper [m³]: constant to round-off.
    pub fn total_m3(&self) -> f64 {
        self.field.volume_m3() + self.payload_m3() + self.hopper_m3()
    }
}

/// Scratch of the stage `world` (`crate::pipeline::world`), sized once (`Buffers::world`).
#[derive(Debug, Clone)]
pub struct WorldScratch {
    pub(crate) automaton: cellular::Scratch,
    pub(crate) pressure: pressure::Scratch,
    /// Vertical force of the buckets on each cell [N].
    pub(crate) force: Vec<f64>,
    /// Its share at the base of each column [N].
    pub(crate) base: Vec<f64>,
    /// The edge samples of one bucket's cut: (x, z, volume removed) [m, m, m³].
    pub(crate) cuts: Vec<[f64; 3]>,
}

impl WorldScratch {
    /// Buffers for the model's terrain `terrain` (`Model::terrain`; `None` without one).
    pub fn new(terrain: Option<&Terrain>) -> Option<Self> {
        let t = terrain?;
        let n = t.field0.h.len();
        Some(WorldScratch {
            automaton: cellular::Scratch::new(&t.field0),
            pressure: pressure::Scratch::new(&t.field0),
            force: vec![0.0; n],
            base: vec![0.0; n],
            cuts: Vec::with_capacity(
                (MAX_DIG_POINTS - 1) * (samples_cap(t.field0.nx, t.field0.nz) + 1),
            ),
        })
    }
}

/// Most samples of one edge segment: one per half cell along the grid's diagonal.
pub(crate) fn samples_cap(nx: usize, nz: usize) -> usize {
    2 * (nx + nz) + 2
}
