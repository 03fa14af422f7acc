//! [`Layout`]: where every Newton unknown lives, what it is called, its unit and its absolute
//! tolerance. Built once by [`crate::pipeline::compile`] (`compile::layout`) and stored in the
//! [`crate::Model`]; everything that
//! used to re-derive the structure of x (offset walks over the friction states, tolerance
//! functions, label lists, NaN-check names, output columns) reads it from here.
//!
//! The unknowns of the monolithic step are, in order (000 §4, 003 Pub II Appendix A):
//!
//! ```text
//!   x = [ z | p | w | e ]
//!         │   │   │   └─ internal states of the elements (`Element::n_internal`), element by element
//!         │   │   └───── friction states: the cylinder seals' (CylinderId order), then the
//!         │   │          friction joints' (`Model::joint_friction` order)
//!         │   └───────── volume pressures [Pa] (VolumeId order)
//!         └───────────── relative coordinates [rad or m] (AxisId order)
//! ```
//!
//! The names are the labels used in CSV headers, error texts and linearization names: `z1`,
//! `V1.p`, `cyl1.bristle_m`. The global formulations solve for natural coordinates q (or q̈)
//! in place of z; [`Layout::tolerances_with`] builds their tolerances with that mechanical block.

use std::ops::Range;

use crate::elements::ids::{AxisId, CylinderId};
use crate::solver::tolerances::Tolerances;

/// Which friction element a block of friction states belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrictionOwner {
    /// The seal of a cylinder (velocity ṡ).
    Cylinder(CylinderId),
    /// A joint-friction element on one coordinate (velocity ż_axis).
    Joint {
        /// Index into `Model::joint_friction`.
        index: usize,
        /// The coordinate it acts on.
        axis: AxisId,
    },
}

/// The friction states of one friction element. Every cylinder and every friction joint has
/// one, possibly empty, so the block index is the friction-element index used by
/// `State::friction_velocity_m_s` and `State::friction_power_w` (cylinders, then joints).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrictionBlock {
    /// Cylinder or joint name: the prefix of its state names.
    pub name: String,
    /// The element.
    pub owner: FrictionOwner,
    /// Its states in w (`State::friction`); add [`Layout::w`]`.start` for their place in x.
    pub states: Range<usize>,
}

/// The unknowns of the Newton step x = [z; p; w; e] with their names, units and tolerances, and
/// the names of the other state entries the NaN check covers.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Name of every unknown of x, in order (`z1`, `V1.p`, `cyl1.bristle_m`).
    pub names: Vec<String>,
    /// SI unit of every unknown of x (`rad`, `m`, `Pa`, `-`).
    pub units: Vec<&'static str>,
    /// Coordinates z in x.
    pub z: Range<usize>,
    /// Pressures p in x.
    pub p: Range<usize>,
    /// Friction states w in x.
    pub w: Range<usize>,
    /// Internal states e of the elements in x (`Element::n_internal`, element by element; a
    /// relief valve with a poppet lag has one, `<name>.poppet`).
    pub internal: Range<usize>,
    /// The friction elements: cylinders, then friction joints.
    pub friction: Vec<FrictionBlock>,
    /// Internal states of each element of `Model::elements`, as a range of x.
    pub element_states: Vec<Range<usize>>,
    /// Names of the valve positions `State::spool` (`Element::describe_position`, element by
    /// element: `<valve>.spool`, `<bridge valve>.opening`): the NaN-check names and the output
    /// columns.
    pub spools: Vec<String>,
    /// Slot of each element's valve position in `State::spool` (`None` without one).
    pub element_position: Vec<Option<usize>>,
    /// Slot of the valve position each element reads as `PortState::position`: its own
    /// (`element_position`), or the slot of the element it follows
    /// (`Element::reads_position_of`: a load-sensing shuttle reads its valve's spool).
    pub element_reads: Vec<Option<usize>>,
    /// The elements with hydraulic node ports, in element order, with what the flow sum needs
    /// of each (`circuit::component_flows_with`, `element_energy::commit`): found once here
    /// instead of asking every element for its ports at every evaluation.
    pub node_ports: Vec<NodePorts>,
    /// NaN-check names of the multipliers `State::lambda`: `<row>.lambda` for the loop-closure
    /// rows, then the nonholonomic rows.
    pub multipliers: Vec<String>,
    /// Tolerances of x: per block, from the solver options (`tolerance_position` [rad or m],
    /// `tolerance_pressure_pa` [Pa], `tolerance_friction_state` [m or -] for w and e), and the
    /// relative `tolerance_relative` [-].
    pub tolerances: Tolerances,
    /// Absolute tolerances of the blocks z [rad or m], p [Pa], w and e [m or -].
    pub(crate) block_atol: [f64; 4],
    /// Number of cylinders: the friction blocks of the joints follow theirs.
    pub(crate) n_cylinders: usize,
}

/// An element with hydraulic node ports, as the flow sum visits it ([`Layout::node_ports`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NodePorts {
    /// Index in `Model::elements`.
    pub element: usize,
    /// Its node ports (`Element::ports`).
    pub nodes: [Option<crate::elements::ids::Node>; crate::elements::element::MAX_NODES],
    /// Slot of its valve position in `State::spool`, if it has one (advanced by its own law).
    pub position: Option<usize>,
    /// Slot of the valve position it reads as `PortState::position`: its own, or, for an
    /// element that reads another's (`Element::reads_position_of`, a load-sensing shuttle),
    /// that element's ([`Layout::element_reads`]).
    pub reads: Option<usize>,
    /// Its internal states as a range of the block e (0-based in e), empty without.
    pub internal: Range<usize>,
}

/// Unit of a friction state from its name: the unit suffix of STYLE convention 2 (`bristle_m`
/// is in m), dimensionless without one (`film`).
pub(crate) fn friction_state_unit(name: &str) -> &'static str {
    if name.ends_with("_m") {
        "m"
    } else {
        "-"
    }
}

impl Default for Layout {
    /// The layout of a model with no unknowns (a placeholder until model compile builds it).
    fn default() -> Self {
        Layout {
            names: Vec::new(),
            units: Vec::new(),
            z: 0..0,
            p: 0..0,
            w: 0..0,
            internal: 0..0,
            friction: Vec::new(),
            element_states: Vec::new(),
            spools: Vec::new(),
            element_position: Vec::new(),
            element_reads: Vec::new(),
            node_ports: Vec::new(),
            multipliers: Vec::new(),
            tolerances: Tolerances::new(&[(0, 0.0)], 0.0),
            block_atol: [0.0; 4],
            n_cylinders: 0,
        }
    }
}

impl Layout {
    /// Number of unknowns of x.
    pub fn n_unknowns(&self) -> usize {
        self.names.len()
    }

    /// Absolute tolerance of unknown `i` of x [rad, m, Pa or -].
    pub fn atol(&self, i: usize) -> f64 {
        self.tolerances.atol(i)
    }

    /// Tolerances of x with a different mechanical block: `n_mechanical` unknowns at
    /// `atol_mechanical` (natural coordinates q of the global formulations, their accelerations
    /// q̈, the independent coordinates of the double-step one), then p, w and e as in x, and the
    /// relative tolerance `rtol` [-].
    pub fn tolerances_with(
        &self,
        n_mechanical: usize,
        atol_mechanical: f64,
        rtol: f64,
    ) -> Tolerances {
        let [_, atol_p, atol_w, atol_e] = self.block_atol;
        Tolerances::new(
            &[
                (n_mechanical, atol_mechanical),
                (self.p.len(), atol_p),
                (self.w.len(), atol_w),
                (self.internal.len(), atol_e),
            ],
            rtol,
        )
    }

    /// Tolerances of the coordinates z alone (kinematic guidance solves for z only).
    pub fn coordinate_tolerances(&self) -> Tolerances {
        Tolerances::new(&[(self.z.len(), self.block_atol[0])], self.tolerances.rtol)
    }

    /// Names of the friction states w (`cyl1.bristle_m`, `hinge.film`).
    pub fn friction_state_names(&self) -> &[String] {
        &self.names[self.w.clone()]
    }

    /// The friction states of cylinder `c` in w.
    pub fn cylinder_friction(&self, c: CylinderId) -> Range<usize> {
        self.friction[c.0].states.clone()
    }

    /// The friction states of joint-friction element `j` (`Model::joint_friction[j]`) in w.
    pub fn joint_friction(&self, j: usize) -> Range<usize> {
        self.friction[self.n_cylinders + j].states.clone()
    }
}
