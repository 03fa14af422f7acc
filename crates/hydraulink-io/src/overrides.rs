//! Parameter overrides `PATH=VALUE` on a `ModelSpec` (`hydraulink run --set`), for every field of
//! a model.
//!
//! The spec is serialized to a TOML value tree, the value is set at the path, and the tree is
//! deserialized again, so the schema checks of model files (unknown fields, types, variants)
//! apply to overrides too; the model checks follow at compilation.
//!
//! Paths are dotted keys with `[i]` indices, as in model errors (`hydraulics.cylinders[0].
//! friction.type`, `solver.step_s`). The first segment may also be the name of any named element
//! (body, joint, cut joint, volume, valve, throttle, cylinder, input, …): `cylinder.friction.
//! static_n` is the `friction.static_n` of the element named `cylinder`. Values are TOML (`900`,
//! `[0.0, 1.0]`, `"V1"`); a bare word that is not TOML is taken as a string (`lugre`). Setting
//! the `type` of a tagged table (friction law, signal, joint kind) to another value drops the
//! table's other keys, which belong to the old variant: `--set cylinder.friction.type=lugre
//! --set cylinder.friction.static_n=900` gives a LuGre seal with Table 2 defaults except F_s.

use hydraulink::model::spec::ModelSpec;
use serde::Deserialize;
use toml::{Table, Value};

/// An override that cannot be applied: the `--set` text and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--set {text}: {message}")]
pub struct OverrideError {
    /// The override as given.
    pub text: String,
    /// What is wrong, with the valid names nearby.
    pub message: String,
}

/// One parsed path segment.
#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

fn parse_path(path: &str) -> Result<Vec<Seg>, String> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() && out.is_empty() {
            return Err(format!("empty key in path '{path}'"));
        }
        if !key.is_empty() {
            out.push(Seg::Key(key.to_string()));
        }
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .ok_or_else(|| format!("unclosed '[' in path '{path}'"))?;
            let idx: usize = rest[1..close]
                .parse()
                .map_err(|_| format!("bad index '{}' in path '{path}'", &rest[1..close]))?;
            out.push(Seg::Index(idx));
            rest = &rest[close + 1..];
        }
    }
    if out.is_empty() {
        return Err("empty path".into());
    }
    Ok(out)
}

/// Every named element in the tree: (name, path segments to it).
fn named_elements(v: &Value, prefix: &mut Vec<Seg>, out: &mut Vec<(String, Vec<Seg>)>) {
    match v {
        Value::Table(t) => {
            for (k, child) in t {
                prefix.push(Seg::Key(k.clone()));
                named_elements(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                if let Some(Value::String(name)) = child.as_table().and_then(|t| t.get("name")) {
                    let mut p = prefix.clone();
                    p.push(Seg::Index(i));
                    out.push((name.clone(), p));
                }
                prefix.push(Seg::Index(i));
                named_elements(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn show(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// A TOML value from the text after `=`; a bare word that is not TOML is a string.
fn parse_value(text: &str) -> Value {
    match format!("v = {text}").parse::<Table>() {
        Ok(mut t) => t.remove("v").unwrap_or(Value::String(text.to_string())),
        Err(_) => Value::String(text.to_string()),
    }
}

fn set_at(root: &mut Value, path: &[Seg], value: Value) -> Result<(), String> {
    let mut cur = root;
    for (depth, seg) in path.iter().enumerate() {
        let last = depth + 1 == path.len();
        let here = show(&path[..depth]);
        let here = if here.is_empty() {
            "the model".to_string()
        } else {
            format!("'{here}'")
        };
        match seg {
            Seg::Key(k) => {
                let t = cur
                    .as_table_mut()
                    .ok_or_else(|| format!("{here} is not a table, it has no key '{k}'"))?;
                if last {
                    // a new variant of a tagged table keeps every key for now; the caller
                    // drops those the new variant does not know (`prune_unknown`)
                    t.insert(k.clone(), value);
                    return Ok(());
                }
                if !t.contains_key(k) {
                    let keys: Vec<&str> = t.keys().map(String::as_str).collect();
                    // absent tables of optional fields are created; serde judges the key
                    if matches!(path[depth + 1], Seg::Index(_)) {
                        return Err(format!(
                            "{here} has no list '{k}'; present keys: {}",
                            keys.join(", ")
                        ));
                    }
                    t.insert(k.clone(), Value::Table(Table::new()));
                }
                cur = t.get_mut(k).expect("inserted above");
            }
            Seg::Index(i) => {
                let a = cur
                    .as_array_mut()
                    .ok_or_else(|| format!("{here} is not a list, it has no index [{i}]"))?;
                let len = a.len();
                let item = a
                    .get_mut(*i)
                    .ok_or_else(|| format!("{here} has {len} entries, no index [{i}]"))?;
                if last {
                    *item = value;
                    return Ok(());
                }
                cur = item;
            }
        }
    }
    Ok(())
}

/// The table at `path` (keys and indices), if there is one.
fn table_at<'a>(root: &'a mut Value, path: &[Seg]) -> Option<&'a mut Table> {
    let mut cur = root;
    for seg in path {
        cur = match seg {
            Seg::Key(k) => cur.as_table_mut()?.get_mut(k)?,
            Seg::Index(i) => cur.as_array_mut()?.get_mut(*i)?,
        };
    }
    cur.as_table_mut()
}

/// The field named by a serde "unknown field `x`" message.
fn unknown_field(message: &str) -> Option<&str> {
    let rest = message.split("unknown field `").nth(1)?;
    rest.split('`').next()
}

/// After the `type` of the table at `table` changed: drops, one at a time, the keys of that
/// table that the new variant rejects as unknown (the old variant's own fields), and keeps the
/// fields both variants have (a joint's `parent` and `child`, a valve's ports, a friction law's
/// `static_n`).
fn prune_unknown(root: &mut Value, table: &[Seg]) {
    let n_keys = table_at(root, table).map_or(0, |t| t.len());
    for _ in 0..n_keys {
        let message = match ModelSpec::deserialize(root.clone()) {
            Ok(_) => return,
            Err(e) => e.to_string(),
        };
        let Some(field) = unknown_field(&message) else {
            return;
        };
        let Some(t) = table_at(root, table) else {
            return;
        };
        if field == "type" || field == "name" || t.remove(field).is_none() {
            return;
        }
    }
}

/// One applied override: the `PATH=VALUE` text as given and the model path it resolved to
/// (e.g. `V1.hose_volume_m3=-1` → `hydraulics.volumes[0].hose_volume_m3`).
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The text of the `--set` option.
    pub text: String,
    /// The full model path it set.
    pub path: String,
}

/// Applies `PATH=VALUE` overrides in order and returns the new spec.
pub fn apply_overrides(spec: &ModelSpec, sets: &[String]) -> Result<ModelSpec, OverrideError> {
    apply_overrides_traced(spec, sets).map(|(spec, _)| spec)
}

/// [`apply_overrides`], also returning what each override set, so that a later model error in an
/// overridden field can name the option instead of a line of the file
/// ([`crate::locate_model_error_with_overrides`]).
///
/// The options chosen in the model's `[variants]` (after these overrides, so
/// `--set variants.<name>.choice=<option>` chooses) are applied first, in the variants' name
/// order, then `sets` again, so that an explicit `--set` wins over a variant. A model without
/// variants is overridden by `sets` alone.
pub fn apply_overrides_traced(
    spec: &ModelSpec,
    sets: &[String],
) -> Result<(ModelSpec, Vec<Applied>), OverrideError> {
    if spec.variants.is_empty() && !sets.iter().any(|s| s.trim_start().starts_with("variants")) {
        return apply_sets(spec, sets);
    }
    let chosen = apply_sets(spec, sets)?.0;
    let variant_sets = variant_overrides(&chosen);
    if variant_sets.is_empty() {
        return Ok((chosen, apply_sets(spec, sets)?.1));
    }
    let all: Vec<String> = variant_sets
        .iter()
        .map(|(_, t)| t.clone())
        .chain(sets.iter().cloned())
        .collect();
    apply_sets(spec, &all).map_err(|e| {
        // an override of a variant names the variant's field
        match variant_sets.iter().find(|(_, t)| *t == e.text) {
            Some((field, _)) => OverrideError {
                text: format!("{} (from {field})", e.text),
                message: e.message,
            },
            None => e,
        }
    })
}

/// The overrides of the chosen option of every variant, with the field each comes from
/// (`variants.bucket.options.large[0]`); a choice that is not an option gives none (the model
/// check names it).
pub fn variant_overrides(spec: &ModelSpec) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, v) in &spec.variants {
        if let Some(sets) = v.options.get(&v.choice) {
            for (k, text) in sets.iter().enumerate() {
                out.push((
                    format!("variants.{name}.options.{}[{k}]", v.choice),
                    text.clone(),
                ));
            }
        }
    }
    out
}

/// The variants in force as text, `name=choice` joined by `, ` (empty without variants).
pub fn variant_choices(spec: &ModelSpec) -> String {
    spec.variants
        .iter()
        .map(|(n, v)| format!("{n}={}", v.choice))
        .collect::<Vec<_>>()
        .join(", ")
}

fn apply_sets(
    spec: &ModelSpec,
    sets: &[String],
) -> Result<(ModelSpec, Vec<Applied>), OverrideError> {
    let mut applied = Vec::new();
    if sets.is_empty() {
        return Ok((spec.clone(), applied));
    }
    let err = |text: &str, message: String| OverrideError {
        text: text.to_string(),
        message,
    };
    // the first override whose check failed only for a missing field, and its path
    let mut pending: Option<(String, String)> = None;
    let mut root = Value::try_from(spec)
        .map_err(|e| err("", format!("the model cannot be written as TOML: {e}")))?;
    for text in sets {
        let (path, value) = text
            .split_once('=')
            .ok_or_else(|| err(text, "expected PATH=VALUE".into()))?;
        let (path, value) = (path.trim(), value.trim());
        let mut segs = parse_path(path).map_err(|m| err(text, m))?;
        // a first segment that is not a top-level key: the name of an element
        if let Seg::Key(first) = &segs[0] {
            let top = root.as_table().expect("a spec is a table");
            if !top.contains_key(first) {
                let mut named = Vec::new();
                named_elements(&root, &mut Vec::new(), &mut named);
                let hits: Vec<&(String, Vec<Seg>)> =
                    named.iter().filter(|(n, _)| n == first).collect();
                match hits.len() {
                    1 => {
                        let mut full = hits[0].1.clone();
                        full.extend(segs.drain(1..));
                        segs = full;
                    }
                    0 => {
                        let mut valid: Vec<String> = top.keys().cloned().collect();
                        valid.extend(named.iter().map(|(n, p)| format!("{n} ({})", show(p))));
                        return Err(err(
                            text,
                            format!(
                                "unknown path '{path}': '{first}' is neither a top-level key nor \
                                 the name of an element; valid: {}",
                                valid.join(", ")
                            ),
                        ));
                    }
                    _ => {
                        let list: Vec<String> = hits.iter().map(|(_, p)| show(p)).collect();
                        return Err(err(
                            text,
                            format!(
                                "'{first}' names several elements ({}); use the full path",
                                list.join(", ")
                            ),
                        ));
                    }
                }
            }
        }
        let full = show(&segs);
        set_at(&mut root, &segs, parse_value(value))
            .map_err(|m| err(text, format!("unknown path '{full}': {m}")))?;
        if matches!(segs.last(), Some(Seg::Key(k)) if k == "type") {
            prune_unknown(&mut root, &segs[..segs.len() - 1]);
        }
        applied.push(Applied {
            text: text.clone(),
            path: full.clone(),
        });
        // check after each override, so the error names this one; a field that a new `type`
        // lacks may come in a later override, so that error waits for the end
        match ModelSpec::deserialize(root.clone()) {
            Ok(_) => pending = None,
            Err(e) => {
                let message = format!("'{full}': {}", e.to_string().trim_end().replace('\n', " "));
                if message.contains("missing field") {
                    if pending.is_none() {
                        pending = Some((text.clone(), full.clone()));
                    }
                } else {
                    return Err(err(text, message));
                }
            }
        }
    }
    let spec = ModelSpec::deserialize(root).map_err(|e| match &pending {
        Some((text, full)) => err(
            text,
            format!(
                "'{full}': {} (a new `type` keeps the fields it shares with the old one; give the others with more --set options)",
                e.to_string().trim_end().replace('\n', " ")
            ),
        ),
        None => err("", e.to_string()),
    })?;
    Ok((spec, applied))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ModelSpec {
        crate::parse_model(
            include_str!("../../../models/fourbar_friction.toml"),
            "fourbar_friction.toml",
        )
        .unwrap()
    }

    /// A variant's chosen option is applied, `--set variants.<name>.choice` chooses, an
    /// explicit `--set` wins over the variant, and a bad option names its field.
    #[test]
    fn variants_choose_sets_of_overrides() {
        let text = format!(
            "{}\n[variants.crank]\nchoice = \"light\"\noptions = {{ light = [\"crank.mass_kg=10\"], heavy = [\"crank.mass_kg=40\", \"crank.com=[1.1, 0.0, 0.0]\"], bad = [\"crank.mass_kg=x=y\"] }}\n",
            include_str!("../../../models/fourbar_friction.toml")
        );
        let spec = crate::parse_model(&text, "v.toml").unwrap();
        let mass = |s: &ModelSpec| s.bodies.iter().find(|b| b.name == "crank").unwrap().mass_kg;
        let (s, applied) = apply_overrides_traced(&spec, &[]).unwrap();
        assert_eq!(mass(&s), 10.0);
        assert_eq!(applied.len(), 1);
        let s = apply_overrides(&spec, &["variants.crank.choice=heavy".into()]).unwrap();
        assert_eq!(mass(&s), 40.0);
        assert_eq!(
            s.bodies.iter().find(|b| b.name == "crank").unwrap().com,
            [1.1, 0.0, 0.0]
        );
        assert_eq!(variant_choices(&s), "crank=heavy");
        let s = apply_overrides(
            &spec,
            &[
                "variants.crank.choice=heavy".into(),
                "crank.mass_kg=25".into(),
            ],
        )
        .unwrap();
        assert_eq!(mass(&s), 25.0);
        let e = apply_overrides(&spec, &["variants.crank.choice=bad".into()]).unwrap_err();
        assert!(
            e.to_string()
                .contains("(from variants.crank.options.bad[0])"),
            "{e}"
        );
        // no variants: the overrides alone, as before
        let plain = self::spec();
        assert_eq!(apply_overrides(&plain, &[]).unwrap(), plain);
    }

    /// The excavator's variants are the overrides models/README.md lists for Tables I and II.
    #[test]
    fn excavator_variants_are_the_documented_overrides() {
        let spec = crate::parse_model(
            include_str!("../../../models/excavator.toml"),
            "excavator.toml",
        )
        .unwrap();
        assert_eq!(
            apply_overrides(&spec, &[]).unwrap(),
            spec,
            "medium: as written"
        );
        let by_variant = apply_overrides(
            &spec,
            &[
                "variants.bucket.choice=large".into(),
                "variants.arm_cylinder.choice=small".into(),
            ],
        )
        .unwrap();
        let by_hand = apply_overrides(
            &spec,
            &[
                "variants.bucket.choice=large".into(),
                "variants.arm_cylinder.choice=small".into(),
                // models/README.md, excavator, "Variants": the large bucket and the small
                // arm cylinder (Table II's bore at this linkage's 1.504 m stroke)
                "bucket.mass_kg=980".into(),
                "bucket.inertia=[273.0, 199.9, 275.2, -13.3, 0.0, 0.0]".into(),
                "arm_cyl.piston_diameter_m=0.12".into(),
                "arm_cyl.rod_diameter_m=0.085".into(),
            ],
        )
        .unwrap();
        assert_eq!(by_variant, by_hand);
        assert_ne!(by_variant.bodies, spec.bodies);
    }

    /// `pose` is a top-level key like any other (serialized with its default).
    #[test]
    fn the_pose_can_be_set() {
        let s = apply_overrides(&spec(), &["pose=assembled".into()]).unwrap();
        assert_eq!(s.pose, hydraulink::model::spec::Pose::Assembled);
        assert!(apply_overrides(&spec(), &["pose=cad".into()]).is_err());
    }

    #[test]
    fn element_names_and_full_paths() {
        let s = apply_overrides(
            &spec(),
            &[
                "cylinder.friction.type=brown_mcphee".into(),
                "cylinder.friction.static_n=900".into(),
                "solver.step_s=2e-3".into(),
                "hydraulics.volumes[2].p0_pa=3.0e6".into(),
                "crank.mass_kg=20".into(),
            ],
        )
        .unwrap();
        assert_eq!(s.solver.step_s, 2e-3);
        assert_eq!(s.hydraulics.volumes[2].p0_pa, Some(3.0e6));
        assert_eq!(s.bodies[0].mass_kg, 20.0);
        match s.hydraulics.cylinders[0].friction {
            hydraulink::model::spec::FrictionSpec::BrownMcPhee {
                static_n,
                coulomb_n,
                ..
            } => {
                assert_eq!((static_n, coulomb_n), (900.0, 210.0));
            }
            ref f => panic!("{f:?}"),
        }
    }

    #[test]
    fn element_names_reach_the_elements() {
        // `[[elements]]` entries are named elements like the others (models/boom.toml)
        let boom =
            crate::parse_model(include_str!("../../../models/boom.toml"), "boom.toml").unwrap();
        let (s, applied) = apply_overrides_traced(
            &boom,
            &[
                "relief.cracking_pressure_pa=1.2e7".into(),
                "cylinder_stops.max_penetration_m=0.01".into(),
                "accumulator.polytropic_exponent=1.0".into(),
            ],
        )
        .unwrap();
        assert_eq!(applied[0].path, "elements[2].cracking_pressure_pa");
        assert_eq!(applied[1].path, "elements[0].max_penetration_m");
        use hydraulink::elements::component::ComponentSpec as C;
        match (&s.elements[0], &s.elements[2], &s.elements[3]) {
            (C::EndStop(e), C::ReliefValve(r), C::Accumulator(a)) => {
                assert_eq!(e.max_penetration_m, Some(0.01));
                assert_eq!(r.cracking_pressure_pa, 1.2e7);
                assert_eq!(a.polytropic_exponent, Some(1.0));
            }
            other => panic!("{other:?}"),
        }
        // another type keeps the name and the fields both types have (inlet, outlet, cracking
        // pressure) and drops the others: serde then names the first field the new type lacks,
        // at the end, against the override that switched the type
        let e = apply_overrides(&boom, &["check.type=relief_valve".into()]).unwrap_err();
        assert!(e.message.contains("elements[1].type"), "{e}");
        assert!(e.message.contains("missing field"), "{e}");
        assert!(!e.message.contains("`inlet`"), "{e}");
        assert_eq!(e.text, "check.type=relief_valve");
        // an unknown field of an element names the element's fields
        let e = apply_overrides(&boom, &["relief.cracking_pa=1".into()]).unwrap_err();
        assert!(e.message.contains("cracking_pressure_pa"), "{e}");
    }

    #[test]
    fn type_switches_keep_shared_fields_and_wait_for_missing_ones() {
        // issue 11: both of these failed with "missing field"
        let fourbar = crate::parse_model(crate::DEFAULT_MODEL, "fourbar.toml").unwrap();
        let s = apply_overrides(&fourbar, &["z1.type=prismatic".into()]).unwrap();
        assert_eq!(
            s.joints[0].kind,
            hydraulink::model::spec::JointKind::Prismatic
        );
        assert_eq!(
            (s.joints[0].parent.as_str(), s.joints[0].child.as_str()),
            ("ground", "body1")
        );
        let s = apply_overrides(
            &fourbar,
            &[
                "U.signal.type=sine".into(),
                "U.signal.amplitude=1".into(),
                "U.signal.frequency_hz=2".into(),
            ],
        )
        .unwrap();
        match &s.inputs[0].signal {
            hydraulink::elements::inputs::SignalSpec::Sine {
                amplitude,
                frequency_hz,
                phase_rad,
                offset,
            } => assert_eq!(
                (*amplitude, *frequency_hz, *phase_rad, *offset),
                (1.0, 2.0, 0.0, 0.0)
            ),
            other => panic!("{other:?}"),
        }
        // a required field never given: named at the end, against the type switch
        let e = apply_overrides(
            &fourbar,
            &["U.signal.type=sine".into(), "U.signal.amplitude=1".into()],
        )
        .unwrap_err();
        assert_eq!(e.text, "U.signal.type=sine", "{e}");
        assert!(e.message.contains("missing field `frequency_hz`"), "{e}");
        // a later override's own error is still its own
        let e = apply_overrides(
            &fourbar,
            &["U.signal.type=sine".into(), "U.signal.amplitud=1".into()],
        )
        .unwrap_err();
        assert_eq!(e.text, "U.signal.amplitud=1", "{e}");
    }

    #[test]
    fn unknown_paths_name_the_valid_ones() {
        let e = apply_overrides(&spec(), &["cylinder.friction.fs=900".into()]).unwrap_err();
        assert!(
            e.message.contains("fs") && e.message.contains("static_n"),
            "{e}"
        );
        let e = apply_overrides(&spec(), &["cylindr.friction.static_n=900".into()]).unwrap_err();
        assert!(
            e.message.contains("cylinder (hydraulics.cylinders[0])"),
            "{e}"
        );
        let e = apply_overrides(&spec(), &["solver.step_s".into()]).unwrap_err();
        assert!(e.message.contains("PATH=VALUE"), "{e}");
        let e = apply_overrides(&spec(), &["bodies[7].mass_kg=1".into()]).unwrap_err();
        assert!(e.message.contains("3 entries"), "{e}");
    }
}
