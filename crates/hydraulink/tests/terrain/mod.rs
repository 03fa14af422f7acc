//! The heightfield terrain and its cellular automaton (003 Pub. V eqs. 15–16): volume kept
//! under avalanching, cutting and depositing; a pile relaxing to the friction angle; a force
//! pushing material aside; determinism; parameter errors.

use hydraulink::terrain::cellular::{relax, sweep, Automaton, Scratch};
use hydraulink::terrain::heightfield::Heightfield;
use hydraulink::terrain::TerrainError;

const RHO: f64 = 1600.0;

/// A 40 × 40 field of 0.1 m cells with 0.2 m of sand and a steep cone of 1.5 m in the middle.
fn pile() -> Heightfield {
    let mut f = Heightfield::flat(40, 40, 0.1, [0.0, 0.0], 0.2).unwrap();
    for j in 0..40 {
        for i in 0..40 {
            let r = ((i as f64 - 19.5).powi(2) + (j as f64 - 19.5).powi(2)).sqrt() * 0.1;
            let k = f.index(i, j);
            f.h[k] += (1.5 - 3.0 * r).max(0.0);
        }
    }
    f
}

/// The steepest slope |∇h| over the cells (forward differences, closed border) [-].
fn steepest(f: &Heightfield) -> f64 {
    let mut m: f64 = 0.0;
    for j in 0..f.nz {
        for i in 0..f.nx {
            let k = f.index(i, j);
            let hx = if i + 1 < f.nx {
                f.h[k] - f.h[k + 1]
            } else {
                0.0
            };
            let hy = if j + 1 < f.nz {
                f.h[k] - f.h[k + f.nx]
            } else {
                0.0
            };
            m = m.max((hx * hx + hy * hy).sqrt() / f.cell_m);
        }
    }
    m
}

#[test]
fn a_pile_relaxes_to_the_friction_angle_and_keeps_its_volume() {
    let mut f = pile();
    let a = Automaton::paper(RHO);
    a.check().unwrap();
    let v0 = f.volume_m3();
    assert!(steepest(&f) > 2.0, "the pile starts steeper than 35°");
    let mut s = Scratch::new(&f);
    let n = relax(&mut f, &[], &a, &mut s, 100_000);
    let (v1, slope) = (f.volume_m3(), steepest(&f));
    eprintln!(
        "pile: at rest after {n} sweeps, steepest slope {slope:.4} (tan 35° = {:.4}), volume error {:.2e}",
        a.friction_angle_rad.tan(),
        (v1 - v0).abs() / v0
    );
    assert!(n < 100_000, "not at rest after 100 000 sweeps");
    // at rest every cell's slope is at most tan α (the automaton's own stopping test; the
    // tolerance is round-off of one cell's difference)
    assert!(slope <= a.friction_angle_rad.tan() + 1e-12, "slope {slope}");
    // volume: only transfers between columns, so round-off only
    assert!((v1 - v0).abs() <= 1e-12 * v0, "volume {v0} → {v1}");
    // the pile has spread: its top came down
    assert!(f.h.iter().cloned().fold(0.0, f64::max) < 1.6);
}

#[test]
fn cut_and_deposit_move_exact_volumes() {
    let mut f = pile();
    let v0 = f.volume_m3();
    // a bucket edge through the pile at 0.6 m, 1 cm apart across the grid
    let edge: Vec<[f64; 3]> = (0..400)
        .map(|k| [1.0 + 0.005 * k as f64, 0.6, 2.0])
        .collect();
    let removed = f.cut(&edge);
    assert!(removed > 0.0);
    let v1 = f.volume_m3();
    assert!(
        (v0 - v1 - removed).abs() <= 1e-12 * v0,
        "{v0} − {v1} ≠ {removed}"
    );
    // cutting again at the same height removes nothing
    assert_eq!(f.cut(&edge), 0.0);
    // dump it elsewhere, let it slide
    f.deposit(0.55, 0.55, removed).unwrap();
    assert!((f.volume_m3() - v0).abs() <= 1e-12 * v0);
    let a = Automaton::paper(RHO);
    let mut s = Scratch::new(&f);
    relax(&mut f, &[], &a, &mut s, 100_000);
    assert!((f.volume_m3() - v0).abs() <= 1e-12 * v0);
    assert!(steepest(&f) <= a.friction_angle_rad.tan() + 1e-12);
    // outside the grid: an error naming the point, nothing moved
    assert!(matches!(
        f.deposit(-1.0, 0.5, 1.0),
        Err(TerrainError::Outside { .. })
    ));
}

#[test]
fn a_force_pushes_material_aside_and_eta_zero_does_not() {
    let mut f = Heightfield::flat(21, 21, 0.1, [0.0, 0.0], 0.5).unwrap();
    let v0 = f.volume_m3();
    let centre = f.index(10, 10);
    let mut force = vec![0.0; f.h.len()];
    // a wheel's 20 kN on one cell: h_f = 4 · 2e4 / (0.01 · 1600 · 9.81) ≈ 510 m of effective
    // height, far beyond the friction angle
    force[centre] = 2.0e4;
    let mut s = Scratch::new(&f);
    let mut still = Automaton::paper(RHO);
    still.eta = 0.0;
    assert_eq!(
        sweep(&mut f, &force, &still, &mut s),
        0,
        "η = 0 moves nothing"
    );
    let a = Automaton::paper(RHO);
    assert!((a.force_height(2.0e4, 0.1) - 4.0 * 2.0e4 / (0.01 * RHO * 9.81)).abs() < 1e-12);
    let before = f.h[centre];
    for _ in 0..3 {
        sweep(&mut f, &force, &a, &mut s);
    }
    assert!(f.h[centre] < before, "the pressed cell sank");
    assert!(f.h[f.index(11, 10)] > before, "its neighbour rose");
    assert!((f.volume_m3() - v0).abs() <= 1e-12 * v0);
}

#[test]
fn terrain_runs_are_bit_identical() {
    let run = || {
        let mut f = pile();
        let mut s = Scratch::new(&f);
        let a = Automaton::paper(RHO);
        relax(&mut f, &[], &a, &mut s, 500);
        f.cut(&[[2.0, 0.3, 2.0], [2.05, 0.3, 2.0]]);
        relax(&mut f, &[], &a, &mut s, 500);
        f.h
    };
    let (x, y) = (run(), run());
    assert!(x.iter().zip(&y).all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn bad_parameters_name_their_field() {
    let field = |e: TerrainError| match e {
        TerrainError::Parameter { field, .. } => field,
        other => panic!("{other}"),
    };
    assert_eq!(
        field(Heightfield::flat(1, 5, 0.1, [0.0; 2], 0.0).unwrap_err()),
        "cells"
    );
    assert_eq!(
        field(Heightfield::flat(5, 5, 0.0, [0.0; 2], 0.0).unwrap_err()),
        "cell_m"
    );
    assert_eq!(
        field(Heightfield::flat(5, 5, 0.1, [0.0; 2], -1.0).unwrap_err()),
        "height_m"
    );
    let mut a = Automaton::paper(RHO);
    a.flow_rate = 0.3;
    assert_eq!(field(a.check().unwrap_err()), "flow_rate");
    let mut a = Automaton::paper(RHO);
    a.friction_angle_rad = 2.0;
    assert_eq!(field(a.check().unwrap_err()), "friction_angle_rad");
    let mut a = Automaton::paper(0.0);
    a.eta = 4.0;
    assert_eq!(field(a.check().unwrap_err()), "density_kg_m3");
}
mod dig;
