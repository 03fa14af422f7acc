//! An n-link hydraulically actuated planar chain, generated as a model file (shared by the
//! scaling benchmark and its tests: `#[path]`-included).
//!
//! ```text
//!   ground ──z1── link1 ──z2── link2 ── … ──zn── link_n          (x–y plane, gravity −z)
//!      \cyl1/       \cyl2/
//! ```
//! Link i: a uniform 1 m, 10 kg bar along x. Joint i (revolute about z) sits at the start of
//! link i, at x = i − 1 in the reference (straight) configuration. Cylinder i pushes from its
//! parent (0.5 m before joint i, 0.3 m to the side) to link i (0.5 m after joint i); each has
//! its own 4/3 valve, two chamber volumes (hoses) and a sine valve input with its own phase,
//! fed by one pump and one tank. Gravity is normal to the plane of motion, so the cylinders
//! carry no static load and every joint moves: n coordinates and 2n pressures.

/// The model file of the n-link chain, with `duration_s` at Δt = 1 ms.
pub fn chain_toml(n: usize, duration_s: f64) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "name = \"chain{n}\"\ndescription = \"n-link hydraulically actuated planar chain\"\n\
         gravity = [0.0, 0.0, -9.81]\n\n[ground.markers]\nB1 = [-0.5, -0.3, 0.0]\n\n"
    ));
    for i in 1..=n {
        let x0 = (i - 1) as f64;
        s.push_str(&format!(
            "[[bodies]]\nname = \"link{i}\"\nmass_kg = 10.0\ncom = [{c}, 0.0, 0.0]\n\
             inertia = [0.01, 0.8383333333333334, 0.8383333333333334, 0.0, 0.0, 0.0]\n\
             markers = {{ R{i} = [{r}, 0.0, 0.0], B{j} = [{b}, -0.3, 0.0] }}\n\n",
            c = x0 + 0.5,
            r = x0 + 0.5,
            j = i + 1,
            b = x0 + 0.5,
        ));
    }
    for i in 1..=n {
        let parent = if i == 1 {
            "ground".to_string()
        } else {
            format!("link{}", i - 1)
        };
        s.push_str(&format!(
            "[[joints]]\nname = \"z{i}\"\ntype = \"revolute\"\nparent = \"{parent}\"\n\
             child = \"link{i}\"\nlocation = [{x}, 0.0, 0.0]\naxis = [0.0, 0.0, 1.0]\nq0 = 0.0\n\n",
            x = (i - 1) as f64
        ));
    }
    s.push_str(
        "[hydraulics.fluid]\ndensity_kg_m3 = 850.0\nbulk_modulus_pa = 1.5e9\n\n\
         [[hydraulics.pumps]]\nname = \"P\"\npressure_pa = 7.6e6\n\n\
         [[hydraulics.tanks]]\nname = \"T\"\npressure_pa = 1.0e5\n\n",
    );
    for i in 1..=n {
        let base_body = if i == 1 {
            "ground".to_string()
        } else {
            format!("link{}", i - 1)
        };
        s.push_str(&format!(
            "[[hydraulics.volumes]]\nname = \"A{i}\"\nhose_volume_m3 = 2.0e-5\n\
             hose_bulk_modulus_pa = 5.5e8\np0_pa = 2.0e6\n\n\
             [[hydraulics.volumes]]\nname = \"B{i}\"\nhose_volume_m3 = 2.0e-5\n\
             hose_bulk_modulus_pa = 5.5e8\n\n\
             [[hydraulics.valves]]\nname = \"valve{i}\"\nport_p = \"P\"\nport_t = \"T\"\n\
             port_a = \"A{i}\"\nport_b = \"B{i}\"\nflow_constant = 2.0e-9\n\
             time_constant_s = 4.547e-3\nlaminar_dp_pa = 2.0e5\ninput = \"U{i}\"\n\n\
             [[hydraulics.cylinders]]\nname = \"cylinder{i}\"\n\
             base = {{ body = \"{base_body}\", marker = \"B{i}\" }}\n\
             rod = {{ body = \"link{i}\", marker = \"R{i}\" }}\n\
             piston_diameter_m = 0.040\nrod_diameter_m = 0.020\nstroke_m = 0.5\n\
             retracted_length_m = 0.8\npiston_side = \"A{i}\"\nrod_side = \"B{i}\"\n\
             friction = {{ type = \"viscous\", coefficient_n_s_m = 2.0e3 }}\n\n\
             [[inputs]]\nname = \"U{i}\"\n\
             signal = {{ type = \"sine\", amplitude = 2.0, frequency_hz = 0.5, phase_rad = {ph} }}\n\n",
            ph = 0.7 * i as f64
        ));
    }
    s.push_str(&format!(
        "[solver]\nformulation = \"penalty\"\nstep_s = 1.0e-3\nduration_s = {duration_s}\n\
         penalty = 1.0e11\ntolerance_position = 1.0e-7\ntolerance_pressure_pa = 1.0e-2\n\
         max_iterations = 25\n"
    ));
    s
}
