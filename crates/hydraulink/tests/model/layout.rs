//! `src/model/layout.rs`: the layout of the Newton unknowns agrees with the state it describes,
//! for every shipped model and for friction states on cylinders and joints.

use std::collections::HashSet;

use hydraulink::model::layout::FrictionOwner;
use hydraulink::{Model, Simulation, StepError};

use crate::common::{model_of, spec_from};

/// The names of every shipped model (`models/*.toml`), sorted.
fn shipped_models() -> Vec<String> {
    let dir = format!("{}/../../models", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("models/ exists")
        .filter_map(|e| {
            let path = e.expect("readable entry").path();
            (path.extension()? == "toml").then(|| path.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    names.sort();
    assert!(names.len() >= 10, "shipped models found: {names:?}");
    names
}

/// The 003 four-bar with modified-LuGre seal friction (bristle and film states) and LuGre
/// friction on joint z2 (one bristle state): friction blocks of both kinds.
fn fourbar_with_friction_states() -> Model {
    let path = format!(
        "{}/../../models/fourbar_friction.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path)
        .expect("shipped model")
        .replace(
            "friction = { type = \"lugre\" }",
            "friction = { type = \"modified_lugre\" }",
        )
        .replace(
            "q0 = -0.6615565809929387     # -37.9044 deg",
            "q0 = -0.6615565809929387\nfriction = { type = \"lugre\" }",
        );
    hydraulink::compile(&spec_from(&text)).expect("compiles")
}

/// Every invariant of the layout against `model`'s initial state.
fn check(name: &str, model: Model) {
    let sim = Simulation::new(model).unwrap_or_else(|e| panic!("{name}: initializes: {e}"));
    let (m, st) = (sim.model(), sim.state());
    let l = &m.layout;
    // the blocks tile x = [z; p; w; e] in order and size the state's vectors
    assert_eq!(l.z, 0..st.z.len(), "{name}: z");
    assert_eq!(l.p, l.z.end..l.z.end + st.p.len(), "{name}: p");
    assert_eq!(l.w, l.p.end..l.p.end + st.friction.len(), "{name}: w");
    assert_eq!(l.internal.start, l.w.end, "{name}: e");
    assert_eq!(l.n_unknowns(), l.internal.end, "{name}: n");
    assert_eq!(l.names.len(), l.n_unknowns(), "{name}: names");
    assert_eq!(l.units.len(), l.n_unknowns(), "{name}: units");
    assert_eq!(
        sim.workspace().x.len(),
        l.internal.start,
        "{name}: Newton x"
    );
    assert_eq!(l.spools.len(), st.spool.len(), "{name}: spools");
    assert_eq!(l.multipliers.len(), st.lambda.len(), "{name}: multipliers");
    assert_eq!(
        l.element_states.len(),
        m.elements().len(),
        "{name}: elements"
    );
    // one friction block per cylinder and friction joint, tiling w in that order
    let nc = m.n_cylinders();
    assert_eq!(l.friction.len(), nc + m.joint_friction.len(), "{name}");
    assert_eq!(st.friction_velocity_m_s.len(), l.friction.len(), "{name}");
    let mut end = 0;
    for (e, b) in l.friction.iter().enumerate() {
        assert_eq!(
            b.states.start, end,
            "{name}: {} starts where the last ended",
            b.name
        );
        end = b.states.end;
        let n = hydraulink::elements::friction::n_states(b.owner.law(m));
        assert_eq!(b.states.len(), n, "{name}: {}", b.name);
        match b.owner {
            FrictionOwner::Cylinder(c) => {
                assert_eq!(c.0, e);
                assert_eq!(b.name, m.cylinder(c.0).name);
                assert_eq!(l.cylinder_friction(c), b.states);
            }
            FrictionOwner::Joint { index, axis } => {
                assert_eq!(index, e - nc);
                assert_eq!(b.name, m.joint_friction[index].joint);
                assert_eq!(axis, m.joint_friction[index].axis);
                assert_eq!(l.joint_friction(index), b.states);
            }
        }
        for (o, s) in b
            .states
            .clone()
            .zip(hydraulink::elements::friction::state_names(b.owner.law(m)))
        {
            assert_eq!(l.names[l.w.start + o], format!("{}.{s}", b.name), "{name}");
        }
    }
    assert_eq!(end, l.w.len(), "{name}: friction blocks cover w");
    // the labels used before the layout existed: coordinates, `<volume>.p`
    for (i, a) in m.axes.iter().enumerate() {
        assert_eq!(l.names[l.z.start + i], a.name, "{name}");
    }
    for (v, vol) in m.hydraulics.volumes.iter().enumerate() {
        assert_eq!(l.names[l.p.start + v], format!("{}.p", vol.name), "{name}");
        assert_eq!(l.units[l.p.start + v], "Pa", "{name}");
    }
    // names unique, among the unknowns and among every name the NaN check reports
    let mut seen = HashSet::new();
    for s in l.names.iter().chain(&l.spools).chain(&l.multipliers) {
        assert!(seen.insert(s.as_str()), "{name}: name '{s}' twice");
    }
    // every unknown has a positive, finite absolute tolerance; x's tolerances are the layout's
    let t = l.tolerances;
    for i in 0..l.n_unknowns() {
        let atol = l.atol(i);
        assert!(
            atol > 0.0 && atol.is_finite(),
            "{name}: atol of {} = {atol}",
            l.names[i]
        );
        assert_eq!(t.atol(i), atol);
        let expected = match i {
            i if l.z.contains(&i) => m.solver.tol_position,
            i if l.p.contains(&i) => m.solver.tol_pressure_pa,
            _ => m.solver.tol_friction_state,
        };
        assert_eq!(atol, expected, "{name}: atol of {}", l.names[i]);
    }
    assert!(t.rtol >= 0.0, "{name}: rtol");
    // a different mechanical block (natural coordinates): its own size and tolerance, then p, w
    let nq = l.z.len() + 3;
    let g = l.tolerances_with(nq, 0.5, t.rtol);
    for i in 0..nq {
        assert_eq!(g.atol(i), 0.5, "{name}");
    }
    for i in 0..l.n_unknowns() - l.z.len() {
        assert_eq!(g.atol(nq + i), l.atol(l.z.len() + i), "{name}");
    }
    // the output columns: unique labels, the layout's pressure and friction-state names among
    // them, and a row as long as the labels
    let labels = sim.output_labels();
    assert_eq!(labels.len(), sim.n_outputs(), "{name}");
    let set: HashSet<&str> = labels.iter().map(String::as_str).collect();
    assert_eq!(set.len(), labels.len(), "{name}: output labels unique");
    for s in l.names[l.p.start..l.w.end].iter().chain(&l.spools) {
        assert!(set.contains(s.as_str()), "{name}: no column {s}");
    }
    for z in &l.names[l.z.clone()] {
        assert!(
            set.contains(format!("{z}.q").as_str()),
            "{name}: no column {z}.q"
        );
    }
    let mut row = vec![f64::NAN; labels.len()];
    sim.output_row(&mut row);
    assert!(
        row.iter().all(|x| x.is_finite()),
        "{name}: initial row {row:?}"
    );
}

#[test]
fn layout_agrees_with_the_state_of_every_shipped_model() {
    for name in shipped_models() {
        check(&name, model_of(&name));
    }
}

/// The cylinder is an element of the one list (issue 25): every shipped model's
/// `Model::components` holds its `[[hydraulics.cylinders]]` as `Component::Cylinder` arms, in
/// file order, after every other element; `Model::elements()` (what the element loops visit)
/// holds no cylinder; and the arm answers through `Component`'s dispatch what the cylinder
/// answers itself (ports, outputs, the port efforts at a moving state).
#[test]
fn cylinders_are_component_arms_after_the_other_elements() {
    use hydraulink::elements::component::Component;
    use hydraulink::elements::element::{Element, PortState};
    for name in shipped_models() {
        let spec = crate::common::spec_of(&name);
        let m = model_of(&name);
        assert_eq!(m.components.len(), m.n_elements + m.n_cylinders(), "{name}");
        assert!(
            !m.elements()
                .iter()
                .any(|e| matches!(e, Component::Cylinder(_))),
            "{name}: no cylinder among the elements the element loops visit"
        );
        let names: Vec<&str> = m.cylinders().map(|c| c.name.as_str()).collect();
        let in_file: Vec<&str> = spec
            .hydraulics
            .cylinders
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, in_file, "{name}: cylinders in file order");
        for (c, arm) in m.components[m.n_elements..].iter().enumerate() {
            let Component::Cylinder(cyl) = arm else {
                panic!("{name}: component {} is not a cylinder", m.n_elements + c);
            };
            assert!(
                std::ptr::eq(cyl, m.cylinder(c)),
                "{name}: Model::cylinder({c})"
            );
            assert_eq!(Element::name(arm), cyl.name.as_str());
            assert_eq!(arm.ports(), cyl.ports(), "{name}: {}", cyl.name);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            arm.describe(&mut a);
            cyl.describe(&mut b);
            assert_eq!(a, b, "{name}: {} describes itself", cyl.name);
            let mut at = PortState::<f64>::zero();
            at.p[0] = 12e6;
            at.p[1] = 3e6;
            at.s = cyl.retracted_length_m + 0.5 * cyl.stroke_m;
            at.sd = 0.05;
            let (ea, eb) = (arm.evaluate(&at), cyl.evaluate(&at));
            assert_eq!(ea.force, eb.force, "{name}: {} force", cyl.name);
            assert_eq!(ea.flow, eb.flow, "{name}: {} flows", cyl.name);
        }
    }
}

#[test]
fn layout_of_friction_states_on_cylinders_and_joints() {
    let model = fourbar_with_friction_states();
    let l = &model.layout;
    assert_eq!(
        l.friction_state_names(),
        ["cylinder.bristle_m", "cylinder.film", "z2.bristle_m"]
    );
    assert_eq!(&l.units[l.w.clone()], ["m", "-", "m"]);
    assert_eq!(l.w.len(), 3);
    check("fourbar_friction (modified LuGre seal, LuGre joint)", model);
}

/// A NaN in the state is reported under the entry's layout name: the texts of the errors stay
/// those built by hand before (`<axis>`, `<volume>.p`, `<valve>.spool`, `<element>.<state>`,
/// `<row>.lambda`, the rows of cut joint E being `E.1`, `E.2`).
#[test]
fn check_state_names_the_entry_by_its_layout_name() {
    let model = fourbar_with_friction_states();
    let sim = Simulation::new(model).expect("initializes");
    let base = sim.state().clone();
    type Poison = fn(&mut hydraulink::State);
    let cases: [(Poison, &str); 6] = [
        (|s| s.zd[1] = f64::NAN, "z2"),
        (|s| s.pdd[2] = f64::INFINITY, "V3.p"),
        (|s| s.spool[0] = f64::NAN, "DCV.spool"),
        (|s| s.friction_rate[1] = f64::NAN, "cylinder.film"),
        (|s| s.friction[2] = f64::NAN, "z2.bristle_m"),
        (|s| s.lambda[0] = f64::NAN, "E.1.lambda"),
    ];
    for (poison, expected) in cases {
        let mut st = base.clone();
        poison(&mut st);
        match hydraulink::pipeline::step::check_state(sim.model(), &st) {
            Err(StepError::NonFinite { equation, .. }) => assert_eq!(equation, expected),
            other => panic!("{expected}: {other:?}"),
        }
    }
    hydraulink::pipeline::step::check_state(sim.model(), &base)
        .expect("the initial state is finite");
}
