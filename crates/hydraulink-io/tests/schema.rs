//! The shipped JSON Schema and model reference are current, every shipped model names the
//! schema, and the schema describes every field the shipped models use.

use hydraulink_io::schema::{
    model_reference_markdown, model_schema, model_schema_json, scene_schema, scene_schema_json,
    SCENE_SCHEMA_DIRECTIVE, SCHEMA_DIRECTIVE,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `.toml` files directly in `dir` (relative to the repository), sorted.
fn toml_files_in(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
        .unwrap_or_else(|e| panic!("{dir}/: {e}"))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

fn shipped_models() -> Vec<PathBuf> {
    toml_files_in("models")
}

fn shipped_scenes() -> Vec<PathBuf> {
    let v = toml_files_in("models/scenes");
    assert!(!v.is_empty(), "at least the worksite is shipped");
    v
}

/// Every file of `files` has `directive` as its first line.
fn assert_first_lines(files: &[PathBuf], directive: &str) {
    for m in files {
        let text = std::fs::read_to_string(m).expect("a readable file");
        assert_eq!(
            text.lines().next(),
            Some(directive),
            "{}: the first line should be `{directive}`",
            m.display()
        );
    }
}

/// The shipped file `path` (relative to the repository) is `generated`.
fn assert_current(path: &str, generated: &str, what: &str) {
    let full = repo().join(path);
    let shipped = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(
        shipped == generated,
        "{} differs from the {what} generated from the types: {REGENERATE}",
        full.display()
    );
}

const REGENERATE: &str = "regenerate with `cargo run --release -- schema --write .` in the \
                          repository root and commit the result";

#[test]
fn the_shipped_schema_is_current() {
    assert_current(
        "models/hydraulink.schema.json",
        &model_schema_json(),
        "schema",
    );
}

#[test]
fn the_shipped_scene_schema_is_current() {
    assert_current(
        "models/scenes/hydraulink.scene.schema.json",
        &scene_schema_json(),
        "scene schema",
    );
}

#[test]
fn every_shipped_scene_names_its_schema() {
    assert_first_lines(&shipped_scenes(), SCENE_SCHEMA_DIRECTIVE);
}

/// The scene schema describes every field of the shipped scenes (elements, terrain and game as
/// in a model file), and the checker finds a field it lacks there too.
#[test]
fn the_scene_schema_describes_every_field_of_the_shipped_scenes() {
    let root = scene_schema();
    assert_eq!(
        root["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "a draft 2020-12 schema"
    );
    let mut errors = Vec::new();
    for m in shipped_scenes() {
        let text = std::fs::read_to_string(&m).expect("a readable scene");
        let v: Value = toml::from_str(&text).expect("a shipped scene parses");
        check(&root, &root, &v, &m.display().to_string(), &mut errors);
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let v: Value = toml::from_str("[terrain]\nbogus_m = 1\n[[elements]]\ntype = \"obb_contact\"\n")
        .expect("valid TOML");
    let mut errors = Vec::new();
    check(&root, &root, &v, "scene", &mut errors);
    // (the optional table is an alternative of table and none: the unknown field makes it fit
    // neither)
    assert!(
        errors.len() == 1 && errors[0].starts_with("scene.terrain:"),
        "{errors:?}"
    );
}

#[test]
fn the_model_reference_is_current() {
    assert_current(
        "docs/model-reference.md",
        &model_reference_markdown(),
        "model reference",
    );
}

#[test]
fn every_shipped_model_names_the_schema() {
    assert_first_lines(&shipped_models(), SCHEMA_DIRECTIVE);
}

/// The schema of `s` with a `$ref` followed (one level of `allOf` too).
fn resolve<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("local references only");
        return resolve(root, &root["$defs"][name]);
    }
    if let Some(a) = s.get("allOf").and_then(Value::as_array) {
        if a.len() == 1 {
            return resolve(root, &a[0]);
        }
    }
    s
}

/// Every key of `v` (a model file's value at `path`) is a property of schema `s`; arrays and
/// tables are walked; an internally tagged enum picks its variant by `type`.
fn check(root: &Value, s: &Value, v: &Value, path: &str, errors: &mut Vec<String>) {
    let s = resolve(root, s);
    let variants = s
        .get("oneOf")
        .or_else(|| s.get("anyOf"))
        .and_then(Value::as_array);
    if let Some(variants) = variants {
        // tagged: the variant whose `type` const matches; untagged: any variant that fits
        if let Some(kind) = v.get("type").and_then(Value::as_str) {
            let chosen = variants.iter().map(|x| resolve(root, x)).find(|x| {
                x.pointer("/properties/type/const").and_then(Value::as_str) == Some(kind)
            });
            match chosen {
                Some(x) => check(root, x, v, path, errors),
                None => errors.push(format!("{path}: type \"{kind}\" is not in the schema")),
            }
            return;
        }
        let fits = variants.iter().any(|x| {
            let mut e = Vec::new();
            check(root, x, v, path, &mut e);
            e.is_empty() && type_fits(resolve(root, x), v)
        });
        if !fits {
            errors.push(format!("{path}: {v} fits no alternative of the schema"));
        }
        return;
    }
    match v {
        Value::Object(o) => {
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, x) in o {
                    match props.get(k) {
                        Some(ps) => check(root, ps, x, &format!("{path}.{k}"), errors),
                        None => errors.push(format!("{path}: field `{k}` is not in the schema")),
                    }
                }
            } else if let Some(ap) = s.get("additionalProperties").filter(|a| a.is_object()) {
                for (k, x) in o {
                    check(root, ap, x, &format!("{path}.{k}"), errors);
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.get("items") {
                for (i, x) in a.iter().enumerate() {
                    check(root, items, x, &format!("{path}[{i}]"), errors);
                }
            }
        }
        _ => {}
    }
}

/// Whether the JSON type of `v` is one the schema `s` allows (when it names one).
fn type_fits(s: &Value, v: &Value) -> bool {
    let t = match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let allows = |x: &str| x == t || (x == "number" && t == "integer");
    match s.get("type") {
        Some(Value::String(x)) => allows(x),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).any(allows),
        _ => match (s.get("const"), s.get("enum")) {
            (Some(c), _) => c == v,
            (_, Some(Value::Array(e))) => e.contains(v),
            _ => true,
        },
    }
}

#[test]
fn the_schema_describes_every_field_of_the_shipped_models() {
    let root = model_schema();
    assert_eq!(
        root["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "a draft 2020-12 schema"
    );
    let mut errors = Vec::new();
    for m in shipped_models() {
        let text = std::fs::read_to_string(&m).expect("a readable model");
        let v: Value = toml::from_str(&text).expect("a shipped model parses");
        check(&root, &root, &v, &m.display().to_string(), &mut errors);
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The checker itself finds a field the schema lacks and a type it lacks (so the test above
/// cannot pass by checking nothing).
#[test]
fn the_field_check_finds_unknown_fields() {
    let root = model_schema();
    let v: Value = toml::from_str(
        "name = \"x\"\nbogus = 1\n[[elements]]\ntype = \"relief_valve\"\nname = \"r\"\nwrong = 2\n\
         [[elements]]\ntype = \"no_such_type\"\n",
    )
    .expect("valid TOML");
    let mut errors = Vec::new();
    check(&root, &root, &v, "m", &mut errors);
    let text = errors.join("\n");
    assert!(text.contains("field `bogus`"), "{text}");
    assert!(text.contains("field `wrong`"), "{text}");
    assert!(text.contains("no_such_type"), "{text}");
}
