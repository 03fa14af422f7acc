//! The bad-model corpus: every file in `tests/bad_models/` is a copy of `models/fourbar.toml` (or,
//! for the `[[elements]]` checks, of `models/boom.toml`) with one defect, on the line marked `# <- defect`. Loading must fail without panicking, and the
//! error must name the file, that line, the element and the field.
//!
//! Each file has its own test, named after it; `every_corpus_file_is_registered` fails when a
//! file is added without a test.

use hydraulink::{InitError, Simulation};
use hydraulink_io::{
    check_model, compile_model, locate_init_error, LoadError, LoadErrorKind, DEFAULT_MODEL,
};

/// Marks the defective line of a corpus file.
const DEFECT: &str = "# <- defect";

/// The 1-based line that carries the marker; the file must have exactly one.
fn defect_line(file: &str, text: &str) -> u32 {
    let lines: Vec<u32> = (1..)
        .zip(text.lines())
        .filter(|(_, line)| line.contains(DEFECT))
        .map(|(i, _)| i)
        .collect();
    match lines.as_slice() {
        [line] => *line,
        _ => panic!("{file}: expected exactly one `{DEFECT}` marker, found lines {lines:?}"),
    }
}

/// Checks one corpus file: `check_model` (parse + validate) and `compile_model` both fail with
/// the same error, of `kind`, at the marked line, naming `element` and a path containing
/// `field`.
fn check(name: &str, text: &str, kind: LoadErrorKind, element: &str, field: &str) {
    let file = format!("tests/bad_models/{name}.toml");
    let line = defect_line(&file, text);
    let error: LoadError = match check_model(text, &file) {
        Err(error) => error,
        Ok(_) => panic!("{file}: the model was accepted"),
    };
    let shown = error.to_string();
    assert_eq!(error.kind, kind, "{shown}");
    assert_eq!(error.line, Some(line), "{shown}");
    assert!(error.column.is_some(), "{shown}");
    assert!(shown.starts_with(&format!("{file}:{line}:")), "{shown}");
    assert_eq!(error.element.as_deref(), Some(element), "{shown}");
    assert!(shown.contains(&format!(": {element}: ")), "{shown}");
    let path = error.path.as_deref().unwrap_or_default();
    assert!(
        path.contains(field),
        "path `{path}` lacks `{field}`: {shown}"
    );
    assert!(shown.contains(&format!("field `{path}`")), "{shown}");
    assert!(!error.message.is_empty(), "{shown}");

    // compile validates first, so it reports the same error.
    match compile_model(text, &file) {
        Err(compiled) => assert_eq!(compiled, error, "compile_model and check_model disagree"),
        Ok(_) => panic!("{file}: compile_model accepted the model"),
    }
}

/// As [`check`], for the checks that need the compiled model's names (the `[[elements]]`,
/// compiled through `hydraulink::elements::element::Context`): `compile_model` fails with the located
/// error; `check_model` (spec-only checks) accepts the model or reports the same error.
fn check_compiled(name: &str, text: &str, element: &str, field: &str) {
    let file = format!("tests/bad_models/{name}.toml");
    let line = defect_line(&file, text);
    let error: LoadError = match compile_model(text, &file) {
        Err(error) => error,
        Ok(_) => panic!("{file}: the model was compiled"),
    };
    let shown = error.to_string();
    assert_eq!(error.kind, LoadErrorKind::Model, "{shown}");
    assert_eq!(error.line, Some(line), "{shown}");
    assert!(error.column.is_some(), "{shown}");
    assert!(shown.starts_with(&format!("{file}:{line}:")), "{shown}");
    assert_eq!(error.element.as_deref(), Some(element), "{shown}");
    assert!(shown.contains(&format!(": {element}: ")), "{shown}");
    let path = error.path.as_deref().unwrap_or_default();
    assert_eq!(path, field, "{shown}");
    assert!(shown.contains(&format!("field `{path}`")), "{shown}");
    assert!(!error.message.is_empty(), "{shown}");
    if let Err(checked) = check_model(text, &file) {
        assert_eq!(checked, error, "compile_model and check_model disagree");
    }
}

macro_rules! bad_elements {
    ($($name:ident: $element:literal, $field:literal;)*) => {
        $(
            #[test]
            fn $name() {
                check_compiled(
                    stringify!($name),
                    include_str!(concat!("bad_models/", stringify!($name), ".toml")),
                    $element,
                    $field,
                );
            }
        )*

        /// Every element corpus file with a test.
        const REGISTERED_ELEMENTS: &[&str] = &[$(stringify!($name)),*];
    };
}

macro_rules! bad_models {
    ($($name:ident: $kind:ident, $element:literal, $field:literal;)*) => {
        $(
            #[test]
            fn $name() {
                check(
                    stringify!($name),
                    include_str!(concat!("bad_models/", stringify!($name), ".toml")),
                    LoadErrorKind::$kind,
                    $element,
                    $field,
                );
            }
        )*

        /// Every corpus file with a test.
        const REGISTERED: &[&str] = &[$(stringify!($name)),*];
    };
}

bad_models! {
    // References.
    unknown_parent_body: Model, "joint 'z2'", "joints[1].parent";
    unknown_child_body: Model, "joint 'z3'", "joints[2].child";
    cylinder_missing_marker: Model, "cylinder 'cylinder'", "hydraulics.cylinders[0].rod.marker";
    cylinder_unknown_body: Model, "cylinder 'cylinder'", "hydraulics.cylinders[0].base.body";
    valve_port_unknown: Model, "valve 'DCV'", "hydraulics.valves[0].port_b";
    // The 4/3 valve's input range and open centre (issue 11).
    valve_input_out_of_range: Model, "valve 'DCV'", "hydraulics.valves[0].input";
    valve_open_centre_without_flow_constant: Model, "valve 'DCV'", "hydraulics.valves[0].centre";
    valve_empty_input_range: Model, "valve 'DCV'", "hydraulics.valves[0].input_range_v";
    valve_port_a_is_tank: Model, "valve 'DCV'", "hydraulics.valves[0].port_a";
    // The bridge valve's input range (shared with the 4/3 valve; copies of models/rod_naya.toml).
    bridge_valve_input_out_of_range: Model, "valve 'valve'", "hydraulics.bridge_valves[0].input";
    bridge_valve_empty_input_range: Model, "valve 'valve'", "hydraulics.bridge_valves[0].input_range";
    missing_input: Model, "valve 'DCV'", "hydraulics.valves[0].input";
    cut_joint_marker_missing: Model, "cut joint 'E'", "cut_joints[0].marker1";
    assembled_loop_does_not_close: Model, "cut joint 'E'", "cut_joints[0].marker1";
    // Names and topology.
    duplicate_body_name: Model, "body 'body2'", "bodies[2].name";
    duplicate_volume_name: Model, "volume 'V2'", "hydraulics.volumes[2].name";
    body_not_connected: Model, "body 'body4'", "bodies[3].name";
    volume_not_connected: Model, "volume 'V4'", "hydraulics.volumes[3].name";
    // Values.
    zero_mass: Model, "body 'body2'", "bodies[1].mass_kg";
    negative_mass: Model, "body 'body1'", "bodies[0].mass_kg";
    visual_zero_radius: Model, "body 'body1'", "bodies[0].visual[0].radius_m";
    visual_box_side_along_its_axis: Model, "body 'body1'", "bodies[0].visual[0].side";
    // The game and the variants (issue 12): spec-only checks.
    game_goal_not_positive: Model, "game", "game.goal_kg";
    game_engine_efficiency_above_one: Model, "game", "game.engine_efficiency";
    game_zero_attempts: Model, "game", "game.attempts";
    game_negative_points: Model, "game", "game.points_per_hit";
    game_empty_hopper_column: Model, "game", "game.hopper_column";
    game_reach_marker_unknown: Model, "game", "game.reach_marker";
    game_swing_axis_not_finite: Model, "game", "game.swing_axis_point";
    variant_choice_not_an_option: Model, "variant 'cylinder_size'", "variants.cylinder_size.choice";
    variant_without_options: Model, "variant 'cylinder_size'", "variants.cylinder_size.options";
    hud_sensor_unknown_body: Model, "sensor 'tip_height'", "hud.sensors[0].body";
    hud_gauge_unknown_unit: Model, "gauge 'V1.p'", "hud.gauges[0].unit";
    hud_fuel_efficiency_above_one: Model, "fuel estimate", "hud.fuel.engine_efficiency";
    hud_binding_unknown_input: Model, "binding 'U9'", "hud.bindings[0].input";
    scenario_condition_without_bounds: Model, "task '1'", "scenario.tasks[0].conditions[0]";
    negative_hose_volume: Model, "volume 'V2'", "hydraulics.volumes[1].hose_volume_m3";
    negative_initial_pressure: Model, "volume 'V3'", "hydraulics.volumes[2].p0_pa";
    pressure_beyond_bound: Model, "volume 'V3'", "hydraulics.volumes[2].p0_pa";
    negative_tank_pressure: Model, "tank 'T'", "hydraulics.tanks[0].pressure_pa";
    pump_below_tank: Model, "pump 'P'", "hydraulics.pumps[0].pressure_pa";
    zero_piston_diameter: Model, "cylinder 'cylinder'", "hydraulics.cylinders[0].piston_diameter_m";
    rod_not_thinner_than_piston: Model, "cylinder 'cylinder'", "hydraulics.cylinders[0].rod_diameter_m";
    nan_value: Model, "body 'body3'", "bodies[2].com[1]";
    inf_value: Model, "volume 'V1'", "hydraulics.volumes[0].hose_bulk_modulus_pa";
    nan_in_multiline_array: Model, "body 'body2'", "bodies[1].inertia[4]";
    inertia_triangle_inequality: Model, "body 'body1'", "bodies[0].inertia";
    zero_axis: Model, "joint 'z2'", "joints[1].axis";
    wrong_q0_length: Model, "joint 'z3'", "joints[2].q0";
    efficiency_above_one: Model, "cylinder 'cylinder'", "hydraulics.cylinders[0].friction.efficiency";
    friction_static_below_coulomb: Model, "cylinder 'cylinder'", "hydraulics.cylinders[0].friction.static_n";
    lugre_under_double_step: Model, "cylinder 'cylinder'", "hydraulics.cylinders[0].friction.type";
    joint_friction_efficiency: Model, "joint 'z3'", "joints[2].friction";
    brown_mcphee_zero_stribeck: Model, "cylinder 'cylinder'", "hydraulics.cylinders[0].friction.stribeck_velocity_m_s";
    rolling_disc_zero_radius: Model, "nonholonomic constraint 'wheel'", "nonholonomic[0].radius_m";
    non_increasing_times: Model, "input 'U'", "inputs[0].signal.times[2]";
    negative_time_step: Model, "solver", "solver.step_s";
    output_interval_below_step: Model, "solver", "solver.output_interval_s";
    // Robustness (issue 10): counts that size buffers, overflowing derived constants, and a
    // rolling disc lying flat (its contact direction undefined).
    hydraulic_substeps_too_large: Model, "solver", "solver.hydraulic_substeps";
    max_iterations_too_large: Model, "solver", "solver.max_iterations";
    // Adaptive step-size control (`solver.step_control = "adaptive"`).
    adaptive_zero_rtol: Model, "solver", "solver.rtol";
    adaptive_rtol_not_below_one: Model, "solver", "solver.rtol";
    adaptive_negative_atol: Model, "solver", "solver.atol";
    adaptive_min_step_above_step: Model, "solver", "solver.min_step_s";
    adaptive_max_step_below_step: Model, "solver", "solver.max_step_s";
    adaptive_max_step_above_duration: Model, "solver", "solver.max_step_s";
    adaptive_under_double_step: Model, "solver", "solver.step_control";
    adaptive_with_terrain: Model, "solver", "solver.step_control";
    piston_area_overflows: Model, "cylinder 'cylinder'", "hydraulics.cylinders[0].piston_diameter_m";
    rolling_disc_axis_missing: Model, "nonholonomic constraint 'wheel'", "nonholonomic[0].axis";
    rolling_disc_axis_along_normal: Model, "nonholonomic constraint 'wheel'", "nonholonomic[0].axis";
    // Schema: unknown keys, missing fields, wrong types.
    unknown_key: Schema, "body 'body2'", "bodies[1].masss_kg";
    unknown_key_in_inline_table: Schema, "cylinder 'cylinder'", "hydraulics.cylinders[0].friction";
    missing_required_field: Schema, "body 'body2'", "bodies[1].mass_kg";
    pump_missing_pressure: Schema, "pump 'P'", "hydraulics.pumps[0].pressure_pa";
    wrong_type: Schema, "cylinder 'cylinder'", "hydraulics.cylinders[0].stroke_m";
    wrong_q0_type: Schema, "joint 'z3'", "joints[2].q0";
    unknown_variant: Schema, "cut joint 'E'", "cut_joints[0].type";
    unknown_natural_frames: Schema, "solver", "solver.natural_frames";
    unknown_element_type: Schema, "element 'check'", "elements[1].type";
    // TOML syntax.
    syntax_error: Syntax, "body 'body2'", "bodies[1].mass_kg";
    duplicate_toml_key: Syntax, "body 'body2'", "bodies[1].mass_kg";
}

bad_elements! {
    // Elements (`[[elements]]`, copies of models/boom.toml): references.
    element_unknown_node: "check valve 'check'", "elements[1].outlet";
    element_same_inlet_outlet: "relief valve 'relief'", "elements[2].outlet";
    end_stop_unknown_cylinder: "end stop 'cylinder_stops'", "elements[0].cylinder";
    element_unknown_marker: "spring-damper 'strut'", "elements[4].end2.marker";
    element_unknown_input: "point force 'payload'", "elements[4].input";
    joint_force_on_spherical_joint: "joint force 'swing'", "elements[4].joint";
    accumulator_on_algebraic_volume: "accumulator 'accumulator'", "elements[3].node";
    duplicate_element_name: "relief valve 'check'", "elements[2].name";
    torque_under_global_ali3p: "torque 'wind'", "elements[4].type";
    // Elements: values.
    element_zero_cracking_pressure: "relief valve 'relief'", "elements[2].cracking_pressure_pa";
    element_negative_area: "check valve 'check'", "elements[1].area_m2";
    accumulator_zero_precharge: "accumulator 'accumulator'", "elements[3].precharge_pressure_pa";
    end_stop_penetration_half_stroke: "end stop 'cylinder_stops'", "elements[0].max_penetration_m";
    end_stop_engage_half_stroke: "end stop 'cylinder_stops'", "elements[0].engage_m";
    end_stop_cushion_field_without_length: "end stop 'cylinder_stops'", "elements[0].cushion_throttle_area_m2";
    end_stop_cushion_half_stroke: "end stop 'cylinder_stops'", "elements[0].cushion_length_m";
    end_stop_cushion_diameter_above_bore: "end stop 'cylinder_stops'", "elements[0].cushion_diameter_m";
    end_stop_cushion_throttle_above_annulus: "end stop 'cylinder_stops'", "elements[0].cushion_throttle_area_m2";
    end_stop_cushion_needle_above_throttle: "end stop 'cylinder_stops'", "elements[0].cushion_needle_area_m2";
    end_stop_cushion_discharge_above_one: "end stop 'cylinder_stops'", "elements[0].cushion_discharge_coefficient";
    port_relief_port_is_tank: "port relief 'VA_relief'", "elements[4].port";
    port_relief_same_port_and_tank: "port relief 'VA_relief'", "elements[4].tank";
    port_relief_makeup_discharge_above_one: "port relief 'VA_relief'", "elements[4].makeup_discharge_coefficient";
    throttle_element_same_nodes: "throttle 'bleed'", "elements[4].to";
    element_valve_port_b_is_tank: "valve 'DCV'", "elements[4].port_b";
    // Elements: internal states (a relief valve's poppet lag).
    poppet_lag_under_multirate: "relief valve 'relief'", "elements[2].poppet_time_constant_s";
    poppet_lag_below_half_step: "relief valve 'relief'", "elements[2].poppet_time_constant_s";
    // Pumps and hoses (copies of models/pump_relief.toml).
    fixed_pump_zero_displacement: "fixed pump 'pump'", "elements[1].displacement_m3_per_rev";
    pump_efficiency_above_one: "fixed pump 'pump'", "elements[1].mechanical_efficiency";
    pump_unknown_speed_input: "fixed pump 'pump'", "elements[1].speed_input";
    pump_same_inlet_outlet: "fixed pump 'pump'", "elements[1].outlet";
    pump_leakage_without_rated_speed: "fixed pump 'pump'", "elements[1].rated_speed_rad_s";
    pc_pump_zero_regulation_range: "pressure-compensated pump 'pump'", "elements[1].regulation_range_pa";
    pc_pump_lag_below_half_step: "pressure-compensated pump 'pump'", "elements[1].swash_plate_time_constant_s";
    // The pump's regulators and the load-sensing shuttle (issue 24).
    pc_pump_negative_max_power: "pressure-compensated pump 'pump'", "elements[1].max_power_w";
    pc_pump_unknown_load_sense: "pressure-compensated pump 'pump'", "elements[1].load_sense";
    pc_pump_zero_pressure_cutoff: "pressure-compensated pump 'pump'", "elements[1].pressure_cutoff_pa";
    ls_shuttle_unknown_valve: "load-sensing shuttle 'shuttle'", "elements[3].valve";
    hose_zero_diameter: "hose 'line'", "elements[3].inner_diameter_m";
    hose_negative_length: "hose 'line'", "elements[3].length_m";
    hose_same_ends: "hose 'line'", "elements[3].to";
    // Elements: the hydraulic motor and the counterbalance valve (issue 11).
    motor_efficiency_above_one: "hydraulic motor 'swing'", "elements[4].hydromechanical_efficiency";
    motor_leakage_without_rated_point: "hydraulic motor 'swing'", "elements[4].rated_pressure_pa";
    motor_under_double_step: "hydraulic motor 'swing'", "elements[4].type";
    motor_on_prismatic_joint: "hydraulic motor 'trolley_drive'", "elements[4].joint";
    algebraic_volume_fed_only_by_leak_free_pump: "volume 'VY'", "hydraulics.volumes[3].algebraic";
    counterbalance_load_is_valve_side: "counterbalance valve 'cbv'", "elements[4].valve";
    counterbalance_zero_band: "counterbalance valve 'cbv'", "elements[4].opening_range_pa";
    flow_control_band_not_below_setting: "flow control valve 'fcv'", "elements[4].regulation_band_pa";
    flow_control_laminar_above_setting: "flow control valve 'fcv'", "elements[4].laminar_dp_pa";
    // Elements: contact (issue 12).
    obb_contact_zero_half_extent: "contact 'boom_floor'", "elements[4].half_extents_m[1]";
    obb_contact_zero_plane_normal: "contact 'boom_floor'", "elements[4].obstacle.normal";
    obb_contact_negative_damping: "contact 'boom_floor'", "elements[4].damping_n_s_m";
    // Terrain and digging (issue 12).
    bucket_dig_without_terrain: "bucket 'scoop'", "elements[4].type";
    bucket_dig_empty_edge: "bucket 'scoop'", "elements[4].edge";
    // Digging by the fundamental earth-moving equation (issue 24).
    bucket_dig_cutting_and_cutting_factor: "bucket 'scoop'", "elements[4].cutting";
    bucket_dig_tool_friction_above_soil: "bucket 'scoop'", "elements[4].cutting.tool_friction_deg";
    bucket_dig_face_parallel_to_opening: "bucket 'scoop'", "elements[4].cutting.face";
    bucket_dig_soil_friction_45: "bucket 'scoop'", "elements[4].cutting.soil_friction_deg";
    terrain_zero_cell: "terrain", "terrain.cell_m";
    terrain_friction_angle_above_90: "terrain", "terrain.friction_angle_deg";
    terrain_too_many_sweeps: "terrain", "terrain.sweeps_per_step";
    terrain_too_many_cells: "terrain", "terrain.cells";
    // Elements: obstacles, the hopper and the hit counter (issue 12, the worksite).
    obb_contact_obstacle_and_obstacles: "contact 'boom_floor'", "elements[4].obstacles";
    obb_contact_hopper_wall_too_thick: "contact 'boom_floor'", "elements[4].obstacles[1].wall_m";
    obb_contact_negative_hit_gap: "contact 'boom_floor'", "elements[4].hit_gap_s";
}

#[test]
fn every_corpus_file_is_registered() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_models");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut registered: Vec<String> = REGISTERED
        .iter()
        .chain(REGISTERED_ELEMENTS)
        .map(|name| format!("{name}.toml"))
        .collect();
    registered.sort();
    assert_eq!(files, registered);
}

#[test]
fn element_messages_say_what_is_wrong() {
    let cases = [
        (
            include_str!("bad_models/element_unknown_node.toml"),
            "unknown hydraulic node 'Vq'",
        ),
        (
            include_str!("bad_models/end_stop_unknown_cylinder.toml"),
            "unknown cylinder 'boom_cylinder'",
        ),
        (
            include_str!("bad_models/end_stop_penetration_half_stroke.toml"),
            "less than half the stroke",
        ),
        (
            include_str!("bad_models/joint_force_on_spherical_joint.toml"),
            "'swivel' is not a revolute or prismatic joint",
        ),
        (
            include_str!("bad_models/torque_under_global_ali3p.toml"),
            "cannot carry a torque",
        ),
        (
            include_str!("bad_models/unknown_element_type.toml"),
            "unknown variant `non_return_valve`",
        ),
    ];
    for (text, expected) in cases {
        let Err(error) = compile_model(text, "x.toml") else {
            panic!("accepted: {expected}");
        };
        assert!(error.message.contains(expected), "{error}");
    }
}

#[test]
fn unknown_key_message_lists_the_expected_keys() {
    let text = include_str!("bad_models/unknown_key.toml");
    let Err(error) = check_model(text, "unknown_key.toml") else {
        panic!("accepted");
    };
    assert!(
        error.message.contains("unknown field `masss_kg`"),
        "{error}"
    );
    assert!(error.message.contains("`mass_kg`"), "{error}");
}

#[test]
fn initial_value_type_error_is_explained() {
    let text = include_str!("bad_models/wrong_q0_type.toml");
    let Err(error) = check_model(text, "wrong_q0_type.toml") else {
        panic!("accepted");
    };
    assert!(!error.message.contains("untagged"), "{error}");
    assert!(
        error.message.contains("a number or a list of numbers"),
        "{error}"
    );
}

#[test]
fn syntax_error_column_points_at_the_bad_token() {
    let text = include_str!("bad_models/syntax_error.toml");
    let Err(error) = check_model(text, "syntax_error.toml") else {
        panic!("accepted");
    };
    // `mass_kg = 35.0.0`: the parser stops at the second `.0`.
    assert_eq!(error.column, Some(15), "{error}");
}

#[test]
fn not_toml_at_all() {
    for text in [
        "\u{0}",
        "[[",
        "a = ",
        "= 1",
        "[bodies]\n[[bodies]]",
        "\"unterminated",
    ] {
        let Err(error) = check_model(text, "x.toml") else {
            panic!("{text:?} accepted");
        };
        assert_eq!(error.kind, LoadErrorKind::Syntax, "{text:?}: {error}");
        assert!(error.line.is_some(), "{text:?}: {error}");
    }
}

#[test]
fn loop_that_cannot_close_points_at_the_cut_joint() {
    // Ground point E moved 10 m away: the model is valid, but the loop cannot close.
    let text = DEFAULT_MODEL.replacen(
        "E = [0.0, -1.0, 0.0]   # cut joint (paper point E)",
        "E = [0.0, -11.0, 0.0]",
        1,
    );
    assert_ne!(
        text, DEFAULT_MODEL,
        "the ground marker E line was not found"
    );
    let model = match compile_model(&text, "loop.toml") {
        Ok(model) => model,
        Err(e) => panic!("{e}"),
    };
    let error = match hydraulink::pipeline::initialization::initialize(&model) {
        Err(error) => error,
        Ok(_) => panic!("a loop 10 m open was closed"),
    };
    assert!(
        matches!(&error, InitError::LoopCannotClose { cut_joint, .. } if cut_joint == "E"),
        "{error}"
    );
    let header = (1..)
        .zip(text.lines())
        .find(|(_, line)| line.starts_with("[[cut_joints]]"))
        .map(|(i, _)| i);
    assert_eq!(locate_init_error(&text, &error), header);
}

#[test]
fn free_chamber_pressures_ask_for_p0() {
    // The boom with p0_pa of its rod side VB removed: behind the closed valve the cylinder force
    // fixes only p_A A_A − p_B A_B, so both chamber pressures are free. The minimum-norm solve
    // used to pick a split silently (issue 11); now it is a located error asking for one p0_pa.
    let boom = include_str!("../../../models/boom.toml");
    let text = boom.replacen("p0_pa = 1.0e6\n", "", 1);
    assert_ne!(text, boom, "the VB p0_pa line was not found");
    let model = match compile_model(&text, "boom.toml") {
        Ok(model) => model,
        Err(e) => panic!("{e}"),
    };
    let error = match hydraulink::pipeline::initialization::initialize(&model) {
        Err(error) => error,
        Ok(_) => panic!("free chamber pressures were chosen silently"),
    };
    match &error {
        InitError::UndeterminedPressures { volumes, missing } => {
            assert_eq!(volumes, &["VA".to_string(), "VB".to_string()], "{error}");
            assert_eq!(*missing, 1, "{error}");
        }
        _ => panic!("{error}"),
    }
    assert!(error.to_string().contains("give p0_pa"), "{error}");
    // located at VA's [[hydraulics.volumes]] entry
    let va = (1..)
        .zip(text.lines())
        .find(|(_, line)| line.starts_with("name = \"VA\""))
        .map(|(i, _)| i - 1);
    assert_eq!(locate_init_error(&text, &error), va);
    // the shipped boom (VB given) starts
    let shipped = compile_model(boom, "boom.toml").expect("boom compiles");
    assert!(hydraulink::pipeline::initialization::initialize(&shipped).is_ok());
}

#[test]
fn chamber_solved_below_zero_names_the_cylinder_and_the_other_chamber() {
    // The boom's cylinder pushes at rest (VA 2.52 MPa over VB 1 MPa). Given its loaded piston
    // side at 0.1 MPa instead, the statics put the rod side at (p_A A_A − F)/A_B < 0 absolute:
    // accepted silently before (issue 11, newcomer test), now bad input naming the volume and
    // the cylinder and asking for p0_pa of the rod side instead.
    let boom = include_str!("../../../models/boom.toml");
    let without_vb = boom.replacen("p0_pa = 1.0e6\n", "", 1);
    let text = without_vb.replacen(
        "name = \"VA\"               # piston-side chamber and its hose\n",
        "name = \"VA\"\np0_pa = 1.0e5\n",
        1,
    );
    assert!(
        text != without_vb && without_vb != boom,
        "boom.toml changed"
    );
    // and with a make-up check valve from tank into the rod side, which opened below tank
    // pressure and made the static iteration fail with advice to give five p0_pa
    let makeup = format!(
        "{text}\n[[elements]]\ntype = \"check_valve\"\nname = \"makeup\"\ninlet = \"T\"\n\
         outlet = \"VB\"\ncracking_pressure_pa = 3.0e4\nopening_range_pa = 2.0e5\n\
         discharge_coefficient = 0.7\narea_m2 = 1.0e-4\n"
    );
    for text in [text.as_str(), makeup.as_str()] {
        let model = compile_model(text, "boom.toml").unwrap_or_else(|e| panic!("{e}"));
        let error = match hydraulink::pipeline::initialization::initialize(&model) {
            Err(error) => error,
            Ok(state) => panic!("accepted, VB = {} Pa", state.p[2]),
        };
        match &error {
            InitError::NegativePressure {
                volume,
                pressure_pa,
                element,
                advice,
            } => {
                assert_eq!(volume, "VB", "{error}");
                assert!(*pressure_pa < 0.0, "{error}");
                assert_eq!(element, "cylinder 'cylinder'", "{error}");
                assert!(
                    advice.contains("pushes at rest")
                        && advice.contains("give p0_pa of its rod side 'VB'")
                        && advice.contains("instead of its piston side"),
                    "{error}"
                );
            }
            _ => panic!("{error}"),
        }
        // located at VB's [[hydraulics.volumes]] entry
        let vb = (1..)
            .zip(text.lines())
            .find(|(_, line)| line.starts_with("name = \"VB\""))
            .map(|(i, _)| i - 1);
        assert_eq!(locate_init_error(text, &error), vb);
    }
}

#[test]
fn cylinder_outside_its_stroke_at_start_is_bad_input() {
    // A too-long retracted length (s0 = √2 m < 1.5 m) and a too-short one (0.2 m + 1.1 m
    // stroke = 1.3 m < √2 m) put the piston outside its stroke in the
    // initial pose: an initialization error naming the cylinder and its fields, located at
    // retracted_length_m (issue 11), not a run failure at the first step.
    for (from, to) in [
        ("retracted_length_m = 1.1", "retracted_length_m = 1.5"),
        ("retracted_length_m = 1.1", "retracted_length_m = 0.2"),
    ] {
        let text = DEFAULT_MODEL.replacen(from, to, 1);
        assert_ne!(text, DEFAULT_MODEL, "line `{from}` not found");
        let model = compile_model(&text, "fourbar.toml").expect("compiles");
        let error = match hydraulink::pipeline::initialization::initialize(&model) {
            Err(error) => error,
            Ok(_) => panic!("{to}: a piston outside its stroke was accepted"),
        };
        assert!(
            matches!(&error, InitError::OutOfStroke { cylinder, .. } if cylinder == "cylinder"),
            "{error}"
        );
        let shown = error.to_string();
        assert!(
            shown.contains("retracted_length_m") && shown.contains("q0"),
            "{shown}"
        );
        let line = (1..)
            .zip(text.lines())
            .find(|(_, l)| l.starts_with("retracted_length_m"))
            .map(|(i, _)| i);
        assert_eq!(locate_init_error(&text, &error), line);
    }
}

/// One body on a fixed joint: no coordinates.
const FIXED_BODY: &str = r#"name = "fixed"
[[bodies]]
name = "b"
mass_kg = 1.0
com = [0.0, 0.0, 0.0]
inertia = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
[[joints]]
name = "j"
type = "fixed"
parent = "ground"
child = "b"
location = [0.0, 0.0, 0.0]
"#;

/// A pump, a volume and a tank joined by two equal throttles, with no mechanism.
const CIRCUIT: &str = r#"name = "circuit"
[hydraulics.fluid]
density_kg_m3 = 850.0
bulk_modulus_pa = 1.5e9
[[hydraulics.volumes]]
name = "V1"
hose_volume_m3 = 4.71e-5
hose_bulk_modulus_pa = 5.5e8
p0_pa = 1.0e6
[[hydraulics.pumps]]
name = "P"
pressure_pa = 7.6e6
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
[[hydraulics.throttles]]
name = "in"
from = "P"
to = "V1"
discharge_coefficient = 0.8
area_m2 = 2.83e-6
laminar_dp_pa = 2.0e5
[[hydraulics.throttles]]
name = "out"
from = "V1"
to = "T"
discharge_coefficient = 0.8
area_m2 = 2.83e-6
laminar_dp_pa = 2.0e5
[solver]
duration_s = 0.1
"#;

#[test]
fn a_model_with_nothing_to_simulate_is_rejected() {
    for (text, line, path) in [
        ("name = \"x\"\n", None, "joints"),
        (FIXED_BODY, Some(9), "joints[0].type"),
    ] {
        let Err(error) = check_model(text, "empty.toml") else {
            panic!("{text:?} accepted");
        };
        assert_eq!(error.kind, LoadErrorKind::Model, "{error}");
        assert_eq!(error.path.as_deref(), Some(path), "{error}");
        assert_eq!(error.line, line, "{error}");
        assert!(error.message.contains("nothing to simulate"), "{error}");
    }
}

#[test]
fn a_circuit_without_a_mechanism_runs() {
    let model = compile_model(CIRCUIT, "circuit.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(model).unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..100 {
        sim.step().unwrap_or_else(|e| panic!("{e}"));
    }
    // two equal throttles in series: V1 settles between the pump and the tank
    let p = sim.state().p[0];
    assert!((1.0e5..7.6e6).contains(&p), "p(V1) = {p}");
}

#[test]
fn a_circuit_without_a_mechanism_names_the_formulations_that_run_it() {
    let text = CIRCUIT.replace("[solver]", "[solver]\nformulation = \"multirate\"");
    let Err(error) = check_model(&text, "circuit.toml") else {
        panic!("accepted");
    };
    assert_eq!(error.path.as_deref(), Some("solver.formulation"), "{error}");
    assert!(error.message.contains("'penalty'"), "{error}");
}

#[test]
fn a_huge_coordinate_is_a_named_initialization_error() {
    // issue 10: `run models/sled_knife_edge.toml --set x.q0=1e155` never returned
    let text = include_str!("../../../models/sled_knife_edge.toml").replacen(
        "child = \"carriage_x\"\n",
        "child = \"carriage_x\"\nq0 = 1.0e155\n",
        1,
    );
    let model = compile_model(&text, "sled.toml").unwrap_or_else(|e| panic!("{e}"));
    let Err(error) = Simulation::new(model) else {
        panic!("initialized");
    };
    assert!(
        matches!(&error, InitError::Numerical { element, .. } if element == "joint 'x'"),
        "{error}"
    );
}
