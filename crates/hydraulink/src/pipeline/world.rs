//! The terrain in the simulation: the model file's `[terrain]` ([`TerrainSpec`]), compiled into
//! [`Terrain`] (`Model::terrain`), its mutable state [`WorldState`] (`State::world`) and the
//! stage `world` of the step pipeline ([`advance`]), which runs at the step boundary after the
//! stage `elements`:
//!
//! 1. **cut**: every `bucket_dig` element's cutting edge (the polyline through its force points,
//!    sampled at half a cell) cuts the heightfield ([`Heightfield::cut`]); the volume removed
//!    becomes payload, up to the bucket's capacity (the excess goes back where it was cut); with
//!    the earth-moving equation (`cutting`) also up to what the cut lets in over the step,
//!    Σ_k w δ_k⁺ u_k⁺ Δt (u_k the point's speed along the opening): every sample then gives
//!    back the same share of what it removed;
//! 2. **dump**: a bucket whose opening points more than its dump angle from up empties at its
//!    dump rate, into the hopper (counted, removed from the world) when its payload point is
//!    over the hopper's footprint and not below its floor, otherwise onto the column under the
//!    payload point;
//! 3. **avalanche**: `sweeps_per_step` sweeps of the cellular automaton (Pub. V eq. 15); with
//!    `eta` > 0 the buckets' normal forces on the soil, spread through the columns by the
//!    pressure propagation (Pub. V eqs. 12–14, [`crate::terrain::pressure`]), displace material
//!    (eq. 16) through the bounded sweep [`crate::terrain::cellular::sweep_nonnegative`];
//! 4. **freeze**: the record each bucket reads inside the next step's Newton iterations
//!    ([`crate::elements::element::Frozen`], slots in [`crate::elements::bucket_dig::slot`]): the surface plane at each
//!    force point, the payload mass, the payload point's velocity and trapezoidal acceleration;
//! 5. **energy**: the change of each bucket's stored energy at the same mechanical state (payload
//!    picked up or dumped, surface moved under a point) is booked as supplied energy, so the
//!    mechanical energy balance closes across the boundary.
//!
//! Volume: terrain + Σ payload + hopper is constant to round-off (every step moves material, it
//! never creates or destroys it; `crates/hydraulink/tests/terrain/dig.rs`). Heights stay ≥ 0:
//! the cut stops at y = 0 (the bedrock) and the sweeps never take more from a column than it
//! holds. Allocates nothing: the buffers are in [`WorldScratch`], sized by `Workspace::new`.

use nalgebra::Vector3;

use crate::elements::bucket_dig::{slot, BucketDig, MAX_DIG_POINTS};
use crate::elements::component::Component;
use crate::elements::element::BodyPose;
use crate::elements::element::{Element, Frozen, MAX_FROZEN};
use crate::mechanics::kinematics::Kinematics;
use crate::mechanics::ports::body_pose;
use crate::model::Model;
use crate::state::State;
use crate::terrain::cellular;
use crate::terrain::data::{samples_cap, DigState, Terrain, WorldScratch, WorldState};
use crate::terrain::heightfield::Heightfield;
use crate::terrain::pressure;

/// The world at t = 0 (`None` without a terrain).
pub fn initial_state(model: &Model) -> Option<WorldState> {
    let t = model.terrain.as_ref()?;
    Some(WorldState {
        field: t.field0.clone(),
        diggers: t
            .diggers
            .iter()
            .map(|&i| DigState {
                element: i,
                payload_m3: 0.0,
                hopper_m3: 0.0,
                dug_m3: 0.0,
                velocity: Vector3::zeros(),
                acceleration: Vector3::zeros(),
                frozen: [0.0; MAX_FROZEN],
                frozen_used: [0.0; MAX_FROZEN],
            })
            .collect(),
    })
}

/// The frozen record of element `i` in `st` ([`DigState::frozen`], or with `used` the record of
/// the step that produced the state); `None` for an element that reads none.
pub fn frozen_of(st: &State, i: usize, used: bool) -> Option<&Frozen> {
    let w = st.world.as_ref()?;
    let d = w.diggers.iter().find(|d| d.element == i)?;
    Some(if used { &d.frozen_used } else { &d.frozen })
}

/// The volume the cut of bucket `e` lets into it over a step of `dt` [m³]: Σ_k w δ_k⁺ u_k⁺ Δt,
/// with δ_k the depth of force point k below the surface plane of the record `f` the step read
/// and u_k = ṙ_k·o its speed along the bucket's opening o (the cut cross-section times the
/// speed it is cut at).
fn cut_allowance(e: &BucketDig, pose: &BodyPose<f64>, f: &Frozen, dt: f64) -> f64 {
    let o = pose.rot * e.opening;
    let mut v_cut = 0.0;
    for (n, p) in e.points.iter().enumerate() {
        let s0 = slot::SURFACE + 3 * n;
        let r = pose.point(p);
        let depth = f[s0] + f[s0 + 1] * r.x + f[s0 + 2] * r.z - r.y;
        let u = pose.velocity(&r).dot(&o);
        if depth > 0.0 && u > 0.0 {
            v_cut += e.width_m * depth * u * dt;
        }
    }
    v_cut
}

fn bucket(model: &Model, i: usize) -> &BucketDig {
    match &model.elements()[i] {
        Component::BucketDig(b) => b,
        _ => unreachable!("Terrain::diggers lists bucket_dig elements only (model compile)"),
    }
}

/// Writes the frozen record of bucket `e` (state `d`) at the kinematics `kin` (positions).
fn freeze(
    model: &Model,
    t: &Terrain,
    field: &Heightfield,
    e: &BucketDig,
    d: &mut DigState,
    kin: &Kinematics<f64>,
) {
    let pose = body_pose(kin, e.frame);
    let rho = t.automaton.density_kg_m3;
    let f = &mut d.frozen;
    f.iter_mut().for_each(|x| *x = 0.0);
    f[slot::ACTIVE] = 1.0;
    f[slot::MASS] = d.payload_m3 * rho;
    for a in 0..3 {
        f[slot::VEL + a] = d.velocity[a];
        f[slot::ACC + a] = d.acceleration[a];
        f[slot::GRAVITY + a] = model.gravity[a];
    }
    f[slot::STIFFNESS] = t.stiffness_n_m;
    f[slot::DAMPING] = t.damping_n_s_m;
    f[slot::DENSITY] = rho;
    f[slot::HOPPER] = d.hopper_m3 * rho;
    f[slot::DUG] = d.dug_m3;
    for (n, p) in e.points.iter().enumerate() {
        let r = pose.point(p);
        let s0 = slot::SURFACE + 3 * n;
        // the plane through the bilinear surface and its slope at the point; far below when
        // the point is off the grid (no contact)
        // its slope bounded by the friction angle: no sand stands steeper for long, and the
        // walls of a freshly cut trench (a cut column beside an uncut one, slopes of 10 and
        // more between cell centres) would turn the ground force sideways
        let (a, gx, gz) = match field.surface(r.x, r.z) {
            Some((h, gx, gz)) => {
                let (g, max) = (
                    (gx * gx + gz * gz).sqrt(),
                    t.automaton.friction_angle_rad.tan(),
                );
                let s = if g > max { max / g } else { 1.0 };
                let (gx, gz) = (gx * s, gz * s);
                (h - gx * r.x - gz * r.z, gx, gz)
            }
            None => (-1.0e6, 0.0, 0.0),
        };
        f[s0] = a;
        f[s0 + 1] = gx;
        f[s0 + 2] = gz;
        // with the earth-moving equation, a point cutting (moving along the opening o) bears on
        // the floor of its cut, not on the surface: the penalty starts at its depth now, blended
        // in over the speeds 0 to v_ε along o (docs/theory/13_terrain.md §13.5)
        if e.cutting.is_some() {
            let depth = a + gx * r.x + gz * r.z - r.y;
            let u = pose.velocity(&r).dot(&(pose.rot * e.opening));
            let blend = (u / e.smoothing_speed_m_s).clamp(0.0, 1.0);
            f[slot::FLOOR + n] = depth.max(0.0) * blend;
        }
    }
}

/// The stored energy of bucket `i` at the kinematics `kin` with the record `f` [J].
fn stored(model: &Model, i: usize, kin: &Kinematics<f64>, f: &Frozen) -> f64 {
    let e = bucket(model, i);
    e.evaluate_body_in(&body_pose(kin, e.frame), 1.0, f)
        .power
        .stored_j
}

/// Stage `world` at t = 0: the frozen records at the initial state (`kin`: positions and
/// velocities there); the payload point's acceleration starts at 0 (a state at rest).
pub fn start(model: &Model, st: &mut State, kin: &mut Kinematics<f64>) {
    let Some(t) = model.terrain.as_ref() else {
        return;
    };
    kin.positions(model, &st.z);
    kin.velocities(model, &st.zd);
    let Some(w) = st.world.as_mut() else {
        return;
    };
    for d in w.diggers.iter_mut() {
        let e = bucket(model, d.element);
        let pose = body_pose(kin, e.frame);
        d.velocity = pose.velocity(&pose.point(&e.payload));
        d.acceleration = Vector3::zeros();
        freeze(model, t, &w.field, e, d, kin);
        d.frozen_used = d.frozen;
    }
}

/// Stage `world` (after the stage `elements`, whose kinematics `kin` it reads: positions and
/// velocities at the committed state): cut, dump, avalanche, freeze, energy (module doc).
pub fn advance(model: &Model, st: &mut State, kin: &Kinematics<f64>, s: &mut WorldScratch) {
    let Some(t) = model.terrain.as_ref() else {
        return;
    };
    let Some(w) = st.world.as_mut() else {
        return;
    };
    let dt = model.solver.step_s;
    let gravity = model.gravity;
    let d_cell = w.field.cell_m;
    s.force.iter_mut().for_each(|f| *f = 0.0);
    for d in w.diggers.iter_mut() {
        let e = bucket(model, d.element);
        let pose = body_pose(kin, e.frame);
        // 1. cut along the edge polyline, sampled at half a cell, up to the capacity
        let mut left = e.capacity_m3 - d.payload_m3;
        // with the earth-moving equation, also no more than the cut lets in this step: every
        // sample is cut to the edge, then each gives back the same share of what it lost
        let allowance = e
            .cutting
            .map(|_| cut_allowance(e, &pose, &d.frozen, dt).min(left.max(0.0)));
        s.cuts.clear();
        let mut pts = [Vector3::<f64>::zeros(); MAX_DIG_POINTS];
        for (k, p) in e.points.iter().enumerate() {
            pts[k] = pose.point(p);
        }
        let np = e.points.len();
        let segments = np.saturating_sub(1).max(1);
        for sg in 0..segments {
            let (a, b) = (pts[sg], pts[(sg + 1).min(np - 1)]);
            // only the part over the grid cuts
            let Some((t0, t1)) = w.field.clip_xz(&[a.x, a.y, a.z], &[b.x, b.y, b.z]) else {
                continue;
            };
            let (a, b) = (a + (b - a) * t0, a + (b - a) * t1);
            // at most one sample per half cell along the grid's diagonal (whatever round-off
            // left of a clipped edge with far-away ends)
            let n_cap = samples_cap(w.field.nx, w.field.nz);
            let n = (((b - a).norm() / (0.5 * d_cell)).ceil() as usize).min(n_cap);
            for q in 0..=n {
                if left <= 0.0 || allowance.is_some_and(|v| v <= 0.0) {
                    break;
                }
                let r = if n == 0 {
                    a
                } else {
                    a + (b - a) * (q as f64 / n as f64)
                };
                let removed = w.field.cut(&[[r.x, r.y, r.z]]);
                if allowance.is_some() {
                    if removed > 0.0 {
                        s.cuts.push([r.x, r.z, removed]);
                    }
                    continue;
                }
                let taken = removed.min(left);
                if removed > taken {
                    // the bucket is full: what does not fit stays where it was
                    w.field
                        .deposit(r.x, r.z, removed - taken)
                        .expect("the cut point is on the grid (cut removed material there)");
                }
                left -= taken;
                d.payload_m3 += taken;
                d.dug_m3 += taken;
            }
        }
        if let Some(allow) = allowance {
            let removed: f64 = s.cuts.iter().map(|c| c[2]).sum();
            // the share each sample keeps out of the ground: the allowance over what the edge
            // cut, at most all of it
            let share = if removed > allow {
                allow / removed
            } else {
                1.0
            };
            let mut back = 0.0;
            if share < 1.0 {
                for c in s.cuts.iter() {
                    let v = c[2] * (1.0 - share);
                    w.field
                        .deposit(c[0], c[1], v)
                        .expect("the cut point is on the grid (cut removed material there)");
                    back += v;
                }
            }
            let taken = removed - back;
            d.payload_m3 += taken;
            d.dug_m3 += taken;
        }
        // 2. dump when tilted past the dump angle
        let pc = pose.point(&e.payload);
        if d.payload_m3 > 0.0 && e.is_dumping(&pose.rot, &gravity) {
            let out = d.payload_m3.min(e.dump_rate_m3_s * dt);
            d.payload_m3 -= out;
            let in_hopper = t.hopper.is_some_and(|(lo, hi)| {
                pc.x >= lo.x && pc.x <= hi.x && pc.z >= lo.z && pc.z <= hi.z && pc.y >= lo.y
            });
            if in_hopper {
                d.hopper_m3 += out;
            } else {
                let f = &w.field;
                let eps = 1e-9 * f.cell_m;
                let x = pc.x.clamp(
                    f.origin_m[0] + eps,
                    f.origin_m[0] + f.nx as f64 * f.cell_m - eps,
                );
                let z = pc.z.clamp(
                    f.origin_m[1] + eps,
                    f.origin_m[1] + f.nz as f64 * f.cell_m - eps,
                );
                w.field
                    .deposit(x, z, out)
                    .expect("the dump point is clamped into the grid and the volume is ≥ 0");
            }
        }
        // the soil's reaction to the buckets' normal forces, per cell (for eq. 16)
        if t.automaton.eta > 0.0 {
            for (n, p) in e.points.iter().enumerate() {
                let r = pose.point(p);
                if let Some((i, j)) = w.field.cell_at(r.x, r.z) {
                    let y_s = w.field.surface(r.x, r.z).map_or(0.0, |v| v.0);
                    // below the floor of the cut with the earth-moving equation (0 without)
                    let depth = y_s - r.y - d.frozen[slot::FLOOR + n];
                    if depth > 0.0 {
                        let k = w.field.index(i, j);
                        s.force[k] += t.stiffness_n_m * depth;
                    }
                }
            }
        }
        // 3. the payload point's velocity and trapezoidal acceleration at the committed state
        let vc = pose.velocity(&pc);
        d.acceleration = (vc - d.velocity) * (2.0 / dt) - d.acceleration;
        d.velocity = vc;
    }
    // 4. avalanching, with the buckets' forces spread down the columns (Pub. V eqs. 12–16)
    if t.sweeps_per_step > 0 {
        let forced = t.automaton.eta > 0.0 && s.force.iter().any(|f| *f != 0.0);
        if forced {
            pressure::base_excess(
                &w.field,
                t.block_m,
                &s.force,
                &t.kernel,
                &mut s.pressure,
                &mut s.base,
            );
        }
        let force: &[f64] = if forced { &s.base } else { &[] };
        for _ in 0..t.sweeps_per_step {
            cellular::sweep_nonnegative(&mut w.field, force, &t.automaton, &mut s.automaton);
        }
    }
    // 5. freeze for the next step, and book the stored-energy change of the new record
    for d in w.diggers.iter_mut() {
        let e = bucket(model, d.element);
        d.frozen_used = d.frozen;
        freeze(model, t, &w.field, e, d, kin);
    }
    let w = st.world.as_ref().expect("checked above");
    for k in 0..w.diggers.len() {
        let (i, f) = (w.diggers[k].element, w.diggers[k].frozen);
        let e_new = stored(model, i, kin, &f);
        let acc = &mut st.elements;
        acc.supplied_j[i] += e_new - acc.stored_j[i];
        acc.stored_j[i] = e_new;
    }
}
