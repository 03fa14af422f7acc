//! Triangle meshes for the `mesh` visual shape: a Wavefront OBJ file read with `tobj`
//! (faces triangulated as fans; normals, texture coordinates and materials ignored), placed in
//! the body's reference coordinates by the shape's origin, axes and scale, and sent to the
//! page as flat vertex and index arrays (the page computes the normals).
//!
//! A vertex v of the file is drawn at `origin + scale_m (v_x x + v_y y + v_z z)`, x along
//! `x_axis`, y the part of `y_axis` across x (Gram–Schmidt), z = x × y.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Where a mesh shape puts its file, in its body's reference coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshSource {
    /// The file as written in the model (relative to the model file's folder, or absolute).
    pub file: String,
    /// Where the file's origin is drawn [m].
    pub origin: [f64; 3],
    /// Direction of the file's x axis [-].
    pub x_axis: [f64; 3],
    /// Direction of the file's y axis [-].
    pub y_axis: [f64; 3],
    /// Metres per unit of the file [m].
    pub scale_m: f64,
}

/// A mesh file that cannot be drawn.
#[derive(Debug, Error)]
#[error(
    "body '{body}', field visual[{index}].file: cannot draw the mesh '{file}' ({path}): {reason}"
)]
pub struct MeshError {
    /// Body name.
    pub body: String,
    /// Index of the shape in the body's `visual` list.
    pub index: usize,
    /// The file as written in the model.
    pub file: String,
    /// The path it resolved to.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// The placed triangles of `src`, its file resolved against `base`: vertices (x, y, z per
/// vertex, body reference coordinates [m]) and triangle indices. `Err(reason)` when the file
/// cannot be read, is not OBJ, or has no triangle; the caller names the body and field.
pub fn load(src: &MeshSource, base: &Path) -> Result<(Vec<f32>, Vec<u32>), (PathBuf, String)> {
    let path = base.join(&src.file);
    let fail = |reason: String| (path.clone(), reason);
    let file = std::fs::File::open(&path).map_err(|e| fail(e.to_string()))?;
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: true,
        ignore_points: true,
        ignore_lines: true,
    };
    // materials are not drawn: a missing .mtl is no error
    let (models, _materials) = tobj::load_obj_buf(&mut BufReader::new(file), &options, |_| {
        Err(tobj::LoadError::OpenFileFailed)
    })
    .map_err(|e| fail(format!("not a readable OBJ file: {e}")))?;
    let frame = axes(src);
    let mut vertices = Vec::new();
    let mut indices = Vec::new();
    for m in &models {
        let first = (vertices.len() / 3) as u32;
        for v in m.mesh.positions.chunks_exact(3) {
            let (a, b, c) = (f64::from(v[0]), f64::from(v[1]), f64::from(v[2]));
            let [x, y, z] = &frame;
            for (k, o) in src.origin.iter().enumerate() {
                let p = o + src.scale_m * (a * x[k] + b * y[k] + c * z[k]);
                vertices.push(p as f32);
            }
        }
        indices.extend(m.mesh.indices.iter().map(|i| first + i));
    }
    if indices.len() < 3 {
        return Err(fail("it has no face".into()));
    }
    if let Some(v) = vertices.iter().find(|v| !v.is_finite()) {
        return Err(fail(format!("a vertex is not finite ({v})")));
    }
    Ok((vertices, indices))
}

/// The orthonormal axes (x, y, z) of `src`: x along `x_axis`, y the part of `y_axis` across x.
fn axes(src: &MeshSource) -> [[f64; 3]; 3] {
    let unit = |a: [f64; 3]| {
        let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
        [a[0] / n, a[1] / n, a[2] / n]
    };
    let x = unit(src.x_axis);
    let d = src.y_axis[0] * x[0] + src.y_axis[1] * x[1] + src.y_axis[2] * x[2];
    let y = unit([
        src.y_axis[0] - d * x[0],
        src.y_axis[1] - d * x[1],
        src.y_axis[2] - d * x[2],
    ]);
    let z = [
        x[1] * y[2] - x[2] * y[1],
        x[2] * y[0] - x[0] * y[2],
        x[0] * y[1] - x[1] * y[0],
    ];
    [x, y, z]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hydraulink-mesh-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
        dir
    }

    fn source(file: &str) -> MeshSource {
        MeshSource {
            file: file.into(),
            origin: [1.0, 2.0, 3.0],
            // the file's x along global y, its y along global −x: a quarter turn about z
            x_axis: [0.0, 2.0, 0.0],
            y_axis: [-1.0, 0.5, 0.0],
            scale_m: 0.001,
        }
    }

    #[test]
    fn a_quad_in_millimetres_is_two_placed_triangles() {
        let dir = write(
            "quad.obj",
            "# a unit square in mm\nmtllib missing.mtl\nv 0 0 0\nv 1000 0 0\nv 1000 1000 0\n\
             v 0 1000 0\nvn 0 0 1\nf 1//1 2//1 3//1 4//1\n",
        );
        let (v, i) = load(&source("quad.obj"), &dir).unwrap();
        assert_eq!(i.len(), 6, "{i:?}");
        assert_eq!(v.len() % 3, 0);
        // every placed vertex is origin + R (scale v): x → global y, y → global −x
        let placed: Vec<[f32; 3]> = v.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
        for want in [
            [1.0, 2.0, 3.0],
            [1.0, 3.0, 3.0],
            [0.0, 3.0, 3.0],
            [0.0, 2.0, 3.0],
        ] {
            assert!(
                placed
                    .iter()
                    .any(|p| (0..3).all(|k| (p[k] - want[k]).abs() < 1e-6)),
                "{want:?} not in {placed:?}"
            );
        }
        assert!(i.iter().all(|&k| (k as usize) < placed.len()));
    }

    #[test]
    fn missing_empty_and_garbled_files_are_errors_with_a_reason() {
        let dir = write("empty.obj", "# nothing\n");
        let (path, why) = load(&source("nope.obj"), &dir).unwrap_err();
        assert!(path.ends_with("nope.obj"), "{path:?}");
        assert!(!why.is_empty());
        let (_, why) = load(&source("empty.obj"), &dir).unwrap_err();
        assert!(why.contains("no face"), "{why}");
        let dir = write("bad.obj", "v 0 0 0\nv 1 0 0\nf 1 2 9\n");
        let (_, why) = load(&source("bad.obj"), &dir).unwrap_err();
        assert!(why.contains("OBJ"), "{why}");
    }
}
