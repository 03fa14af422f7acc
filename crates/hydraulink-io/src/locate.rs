//! From model paths to file lines, and from file offsets back to model paths.
//!
//! A model path names a field of a `ModelSpec` the way `hydraulink::ModelError` does:
//! serde field names joined by `.`, array indices in brackets, map keys as dotted keys (quoted
//! when they are not bare TOML keys): `bodies[2].mass_kg`, `hydraulics.cylinders[0].base.marker`,
//! `inputs[0].signal.times[3]`, `ground.markers.G[1]`, `bodies[0].markers."a.b"`.
//!
//! The text is parsed with the same TOML parser that deserializes the model
//! ([`toml::de::DeTable`]), which keeps the byte span of every key and value, so locations agree
//! with the spans of `toml` deserialization errors and with every TOML version `toml` accepts.
//! Inline tables, arrays of tables, dotted keys and inline arrays are all walked alike.

use std::ops::Range;

use hydraulink::error::InitError;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// One step of a model path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// 1-based line of the field `path` (e.g. `bodies[2].mass_kg`) in the TOML `text`.
///
/// The line is that of the key for a table field, of the `[[…]]` header for an element of an
/// array of tables, and of the value for an element of an inline array. When the field itself
/// is absent (an optional field left out), the line of the nearest enclosing element that is
/// present is returned. `None` if the text is not valid TOML, the path is malformed, or not even
/// its first step is in the text.
pub fn line_of_path(text: &str, path: &str) -> Option<usize> {
    locate_path(text, path).map(|(line, _)| line)
}

/// 1-based line of the `[[cut_joints]]` entry a loop-closure failure names (of the cylinder or
/// volume entry for the errors that name one); `None` for other
/// initialization errors (they concern no single line) or when the entry is not in the text.
pub fn locate_init_error(text: &str, error: &InitError) -> Option<usize> {
    match error {
        InitError::LoopCannotClose { cut_joint, .. } => {
            let doc = DeTable::parse(text).ok()?;
            let index = named_index(
                doc.get_ref(),
                &[Segment::Key("cut_joints".into())],
                cut_joint,
            )?;
            line_of_path(text, &format!("cut_joints[{index}]"))
        }
        InitError::OutOfStroke { cylinder, .. } => {
            let doc = DeTable::parse(text).ok()?;
            let index = named_index(
                doc.get_ref(),
                &[
                    Segment::Key("hydraulics".into()),
                    Segment::Key("cylinders".into()),
                ],
                cylinder,
            )?;
            line_of_path(
                text,
                &format!("hydraulics.cylinders[{index}].retracted_length_m"),
            )
        }
        InitError::UndeterminedPressures { volumes, .. } => {
            let doc = DeTable::parse(text).ok()?;
            let index = named_index(
                doc.get_ref(),
                &[
                    Segment::Key("hydraulics".into()),
                    Segment::Key("volumes".into()),
                ],
                volumes.first()?,
            )?;
            line_of_path(text, &format!("hydraulics.volumes[{index}]"))
        }
        InitError::NegativePressure { volume, .. } => {
            let doc = DeTable::parse(text).ok()?;
            let index = named_index(
                doc.get_ref(),
                &[
                    Segment::Key("hydraulics".into()),
                    Segment::Key("volumes".into()),
                ],
                volume,
            )?;
            line_of_path(text, &format!("hydraulics.volumes[{index}]"))
        }
        _ => None,
    }
}

/// 1-based line and column of the field `path` in `text`, as for [`line_of_path`].
pub(crate) fn locate_path(text: &str, path: &str) -> Option<(usize, usize)> {
    let doc = DeTable::parse(text).ok()?;
    let segments = parse_path(path)?;
    let span = span_of_path(doc.get_ref(), &segments)?;
    Some(line_column(text, span.start))
}

/// 1-based line and column (in characters) of a byte offset; offsets past the end or inside a
/// character are clamped.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = text.get(..offset).unwrap_or_default();
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).unwrap_or_default().chars().count() + 1;
    (line, column)
}

/// Parses `bodies[2].markers."a.b"[1]` into segments; `None` if malformed. `""` is the root.
pub(crate) fn parse_path(path: &str) -> Option<Vec<Segment>> {
    let mut segments = Vec::new();
    let mut chars = path.chars().peekable();
    if chars.peek().is_none() {
        return Some(segments);
    }
    loop {
        // A key: quoted or bare.
        let mut key = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => key.push(chars.next()?),
                    c => key.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' || c == '[' {
                    break;
                }
                key.push(c);
                chars.next();
            }
            if key.is_empty() {
                return None;
            }
        }
        segments.push(Segment::Key(key));
        // Any number of indices.
        while chars.peek() == Some(&'[') {
            chars.next();
            let mut digits = String::new();
            loop {
                match chars.next()? {
                    ']' => break,
                    c => digits.push(c),
                }
            }
            segments.push(Segment::Index(digits.parse().ok()?));
        }
        match chars.next() {
            None => return Some(segments),
            Some('.') => {}
            Some(_) => return None,
        }
    }
}

/// Formats segments as a model path (the inverse of [`parse_path`]).
pub(crate) fn format_path(segments: &[Segment]) -> String {
    let mut path = String::new();
    for segment in segments {
        match segment {
            Segment::Key(key) => {
                if !path.is_empty() {
                    path.push('.');
                }
                let bare = !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if bare {
                    path.push_str(key);
                } else {
                    path.push('"');
                    for c in key.chars() {
                        if c == '"' || c == '\\' {
                            path.push('\\');
                        }
                        path.push(c);
                    }
                    path.push('"');
                }
            }
            Segment::Index(i) => path.push_str(&format!("[{i}]")),
        }
    }
    path
}

/// A position in the parsed document while walking a path.
#[derive(Clone, Copy)]
enum Node<'a, 'i> {
    Root(&'a DeTable<'i>),
    Value(&'a DeValue<'i>),
}

impl<'a, 'i> Node<'a, 'i> {
    fn table(self) -> Option<&'a DeTable<'i>> {
        match self {
            Node::Root(table) | Node::Value(DeValue::Table(table)) => Some(table),
            Node::Value(_) => None,
        }
    }
}

/// Byte span of the deepest step of `segments` present in `doc` (a key's span for a key, the
/// element's span for an index); `None` if not even the first step is present.
pub(crate) fn span_of_path(doc: &DeTable<'_>, segments: &[Segment]) -> Option<Range<usize>> {
    let mut node = Node::Root(doc);
    let mut found = None;
    for segment in segments {
        match segment {
            Segment::Key(key) => {
                let Some((k, v)) = node.table().and_then(|t| t.get_key_value(key.as_str())) else {
                    break;
                };
                found = Some(k.span());
                node = Node::Value(v.get_ref());
            }
            Segment::Index(i) => {
                let Node::Value(DeValue::Array(array)) = node else {
                    break;
                };
                let Some(element) = array.get(*i) else {
                    break;
                };
                found = Some(element.span());
                node = Node::Value(element.get_ref());
            }
        }
    }
    found
}

/// The value at `segments`, if present.
fn value_at<'a, 'i>(doc: &'a DeTable<'i>, segments: &[Segment]) -> Option<Node<'a, 'i>> {
    let mut node = Node::Root(doc);
    for segment in segments {
        node = match segment {
            Segment::Key(key) => Node::Value(node.table()?.get(key.as_str())?.get_ref()),
            Segment::Index(i) => match node {
                Node::Value(DeValue::Array(array)) => Node::Value(array.get(*i)?.get_ref()),
                _ => return None,
            },
        };
    }
    Some(node)
}

/// Index of the element named `name` in the array of tables at `list`.
fn named_index(doc: &DeTable<'_>, list: &[Segment], name: &str) -> Option<usize> {
    let Node::Value(DeValue::Array(array)) = value_at(doc, list)? else {
        return None;
    };
    array.iter().position(|element| {
        element
            .get_ref()
            .as_table()
            .and_then(|t| t.get("name"))
            .and_then(|n| n.get_ref().as_str())
            == Some(name)
    })
}

/// A key or value of the document, flattened.
struct Entry {
    path: Vec<Segment>,
    key: Option<Range<usize>>,
    value: Range<usize>,
    /// A table opened by a `[…]` or `[[…]]` header.
    header: bool,
}

fn collect_table(table: &DeTable<'_>, text: &str, prefix: &mut Vec<Segment>, out: &mut Vec<Entry>) {
    for (key, value) in table.iter() {
        prefix.push(Segment::Key(key.get_ref().to_string()));
        out.push(Entry {
            path: prefix.clone(),
            key: Some(key.span()),
            value: value.span(),
            header: is_header(value.get_ref(), value.span(), text),
        });
        collect_value(value.get_ref(), text, prefix, out);
        prefix.pop();
    }
}

fn collect_value(value: &DeValue<'_>, text: &str, prefix: &mut Vec<Segment>, out: &mut Vec<Entry>) {
    match value {
        DeValue::Table(table) => collect_table(table, text, prefix, out),
        DeValue::Array(array) => {
            for (i, element) in array.iter().enumerate() {
                prefix.push(Segment::Index(i));
                out.push(Entry {
                    path: prefix.clone(),
                    key: None,
                    value: element.span(),
                    header: is_header(element.get_ref(), element.span(), text),
                });
                collect_value(element.get_ref(), text, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn is_header(value: &DeValue<'_>, span: Range<usize>, text: &str) -> bool {
    matches!(value, DeValue::Table(_))
        && text
            .get(span.start..)
            .is_some_and(|rest| rest.starts_with('['))
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end.max(outer.start + 1)
}

/// The model path of the field at byte span `span` (from a TOML error) in `doc`:
/// 1. the smallest key or value whose span contains it;
/// 2. else the last key on the same line before it (a syntax error in a value);
/// 3. else the last `[…]`/`[[…]]` table opened before it, plus the key its line starts with;
/// 4. else the root (empty path), which is also the answer for the root's own span.
pub(crate) fn path_at(doc: &Spanned<DeTable<'_>>, text: &str, span: Range<usize>) -> Vec<Segment> {
    if span == doc.span() {
        return Vec::new();
    }
    let mut entries = Vec::new();
    collect_table(doc.get_ref(), text, &mut Vec::new(), &mut entries);
    let point = span.start..span.end.max(span.start + 1);

    let smallest = entries
        .iter()
        .flat_map(|e| {
            e.key
                .iter()
                .chain(std::iter::once(&e.value))
                .map(move |s| (e, s))
        })
        .filter(|(_, s)| contains(s, &point))
        .min_by_key(|(e, s)| (s.len(), usize::MAX - e.path.len()));
    if let Some((entry, _)) = smallest {
        return entry.path.clone();
    }

    let (line, _) = line_column(text, span.start);
    let same_line = entries
        .iter()
        .filter_map(|e| e.key.as_ref().map(|k| (e, k)))
        .filter(|(_, k)| k.start <= span.start && line_column(text, k.start).0 == line)
        .max_by_key(|(e, k)| (k.start, e.path.len()));
    if let Some((entry, _)) = same_line {
        return entry.path.clone();
    }

    let mut path = entries
        .iter()
        .filter(|e| e.header && e.value.start <= span.start)
        .max_by_key(|e| (e.value.start, e.path.len()))
        .map(|e| e.path.clone())
        .unwrap_or_default();
    path.extend(key_of_line(text, span.start));
    path
}

/// The bare (possibly dotted) key that starts the line holding `offset`, as in `mass_kg = …`;
/// for a line the parser could not take in (a duplicated key, a malformed value).
fn key_of_line(text: &str, offset: usize) -> Vec<Segment> {
    let (line, _) = line_column(text, offset);
    let Some(line) = text.lines().nth(line - 1) else {
        return Vec::new();
    };
    let Some((key, _)) = line.split_once('=') else {
        return Vec::new();
    };
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    let bare = |part: &&str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if parts.iter().all(bare) {
        parts
            .into_iter()
            .map(|part| Segment::Key(part.to_string()))
            .collect()
    } else {
        Vec::new()
    }
}

/// The noun of the `[[elements]]` entry at `segments[1]`, from its `type` as
/// `hydraulink::elements::component::ComponentSpec::noun_of_type` names it; `element` for a missing or unknown type.
fn element_noun(doc: &DeTable<'_>, segments: &[Segment]) -> &'static str {
    let Some(Segment::Index(index)) = segments.get(1) else {
        return "element";
    };
    let kind = value_at(doc, &[Segment::Key("elements".into())])
        .and_then(|node| match node {
            Node::Value(DeValue::Array(array)) => array.get(*index),
            _ => None,
        })
        .and_then(|element| element.get_ref().as_table())
        .and_then(|table| table.get("type"))
        .and_then(|kind| kind.get_ref().as_str());
    kind.and_then(hydraulink::elements::component::ComponentSpec::noun_of_type)
        .unwrap_or("element")
}

/// The element a path belongs to, named as `hydraulink::ModelError` names it: `body 'body2'`,
/// `volume 'V1'`, `solver`, `model`, … An element without a readable name is `unnamed body`.
pub(crate) fn element_of(doc: &DeTable<'_>, segments: &[Segment]) -> String {
    use Segment::{Index, Key};
    let key = |i: usize| match segments.get(i) {
        Some(Key(k)) => Some(k.as_str()),
        _ => None,
    };
    let (noun, list_len) = match (key(0), key(1)) {
        (Some("bodies"), _) => ("body", 1),
        (Some("joints"), _) => ("joint", 1),
        (Some("cut_joints"), _) => ("cut joint", 1),
        (Some("inputs"), _) => ("input", 1),
        (Some("hydraulics"), Some("volumes")) => ("volume", 2),
        (Some("hydraulics"), Some("pumps")) => ("pump", 2),
        (Some("hydraulics"), Some("tanks")) => ("tank", 2),
        (Some("hydraulics"), Some("valves")) => ("valve", 2),
        (Some("hydraulics"), Some("throttles")) => ("throttle", 2),
        (Some("hydraulics"), Some("cylinders")) => ("cylinder", 2),
        // bridge valves are named `valve` in model errors, as the 4/3 valves
        (Some("hydraulics"), Some("bridge_valves")) => ("valve", 2),
        (Some("nonholonomic"), _) => ("nonholonomic constraint", 1),
        // `[[elements]]`: the noun follows the element's `type`
        (Some("elements"), _) => (element_noun(doc, segments), 1),
        (Some("hydraulics"), Some("fluid")) => return "fluid".into(),
        (Some("hydraulics"), _) => return "hydraulics".into(),
        (Some("solver"), _) => return "solver".into(),
        (Some("ground"), _) => return "ground".into(),
        _ => return "model".into(),
    };
    let (Some(list), Some(Index(index))) = (segments.get(..list_len), segments.get(list_len))
    else {
        return "model".into();
    };
    let name = value_at(doc, list)
        .and_then(|node| match node {
            Node::Value(DeValue::Array(array)) => array.get(*index),
            _ => None,
        })
        .and_then(|element| element.get_ref().as_table())
        .and_then(|table| table.get("name"))
        .and_then(|name| name.get_ref().as_str());
    match name {
        Some(name) => format!("{noun} '{name}'"),
        None => format!("unnamed {noun}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"name = "m"

[ground.markers]
G = [0.0, -2.0, 0.0]

[[bodies]]
name = "b1"
mass_kg = 1.0
inertia = [
  1.0, 1.0,
  1.0, 0.0, 0.0, 0.0,
]
markers = { C = [1.0, 0.0, 0.0], "a.b" = [0.0, 0.0, 0.0] }

[[bodies]]
name = "b2"
mass_kg = 2.0

[[hydraulics.cylinders]]
name = "cyl"
base = { body = "ground", marker = "G" }
rod.body = "b1"
rod.marker = "C"

[[inputs]]
name = "U"
signal = { type = "table", times = [0.0,
  1.0, 2.0], values = [0.0, 1.0, 2.0] }

[solver]
step_s = 1e-3

[[hydraulics.bridge_valves]]
name = "BV"

[[elements]]
type = "relief_valve"
name = "R1"
inlet = "P"

[[elements]]
type = "safety_valve"
name = "S1"

[[nonholonomic]]
name = "wheel"
"#;

    #[test]
    fn paths_round_trip() {
        for path in [
            "",
            "a",
            "bodies[2].mass_kg",
            "bodies[0].markers.\"a.b\"[1]",
            "x[1][2].y",
        ] {
            let segments = parse_path(path).unwrap_or_else(|| panic!("{path} did not parse"));
            assert_eq!(format_path(&segments), path);
        }
        for bad in ["a.", ".a", "a[", "a[x]", "a[1]b", "\"a", "a..b"] {
            assert_eq!(parse_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn lines_of_paths() {
        let cases = [
            ("name", Some(1)),
            ("ground.markers.G", Some(4)),
            ("ground.markers.G[1]", Some(4)),
            ("bodies[0]", Some(6)),
            ("bodies[0].mass_kg", Some(8)),
            ("bodies[0].inertia", Some(9)),
            ("bodies[0].inertia[3]", Some(11)),
            ("bodies[0].markers.\"a.b\"", Some(13)),
            ("bodies[1].mass_kg", Some(17)),
            // Absent optional field: the element's header.
            ("bodies[1].com", Some(15)),
            ("bodies[5].mass_kg", Some(6)),
            ("hydraulics.cylinders[0].base.marker", Some(21)),
            ("hydraulics.cylinders[0].rod.marker", Some(23)),
            ("hydraulics.cylinders[0].rod_side", Some(19)),
            ("inputs[0].signal.times", Some(27)),
            ("inputs[0].signal.times[2]", Some(28)),
            ("inputs[0].signal.values", Some(28)),
            ("solver.step_s", Some(31)),
            ("solver.duration_s", Some(30)),
            ("elements[0].inlet", Some(39)),
            ("elements[0].outlet", Some(36)),
            ("elements[1].type", Some(42)),
            ("joints[0].parent", None),
            ("bodies[", None),
        ];
        for (path, line) in cases {
            assert_eq!(line_of_path(TEXT, path), line, "{path}");
        }
    }

    #[test]
    fn paths_at_offsets() {
        let doc = DeTable::parse(TEXT).unwrap_or_else(|e| panic!("{e}"));
        // The path at the first `len` bytes of the `n`-th occurrence of `needle`.
        let at = |needle: &str, n: usize, len: usize| {
            let (start, _) = TEXT
                .match_indices(needle)
                .nth(n)
                .unwrap_or_else(|| panic!("{needle}"));
            format_path(&path_at(&doc, TEXT, start..start + len))
        };
        assert_eq!(at("mass_kg = 2", 0, 7), "bodies[1].mass_kg");
        assert_eq!(at("2.0\n", 0, 3), "bodies[1].mass_kg");
        assert_eq!(at("[[bodies]]", 1, 10), "bodies[1]");
        assert_eq!(at("\"G\" }", 0, 3), "hydraulics.cylinders[0].base.marker");
        assert_eq!(at("{ body", 0, 1), "hydraulics.cylinders[0].base");
        assert_eq!(at("{ type", 0, 1), "inputs[0].signal");
        assert_eq!(at("1.0, 2.0]", 0, 3), "inputs[0].signal.times[1]");
        assert_eq!(at("[solver]", 0, 8), "solver");
        // Nothing there: the last key on the line, else the last table opened before.
        assert_eq!(at("  1.0, 0.0, 0.0, 0.0,", 0, 1), "bodies[0].inertia");
        assert_eq!(at("\n\n[[bodies]]", 1, 1), "bodies[0].markers.\"a.b\"");
        assert_eq!(at("\n[[hydraulics", 0, 1), "bodies[1]");
        // A line the parser did not take in: the table, plus the key the line starts with.
        let text = "[[bodies]]\nname = \"b\"\nmass_kg = 1.0\nmass_kg = 2.0\n";
        let (recovered, errors) = DeTable::parse_recoverable(text);
        let span = errors
            .first()
            .and_then(|e| e.span())
            .unwrap_or_else(|| panic!("no error"));
        assert_eq!(
            format_path(&path_at(&recovered, text, span)),
            "bodies[0].mass_kg"
        );
        assert_eq!(
            key_of_line("a.b-c = 1", 3),
            vec![Segment::Key("a".into()), Segment::Key("b-c".into())]
        );
        assert_eq!(key_of_line("\"q\" = 1", 3), vec![]);
        assert_eq!(key_of_line("[x]", 1), vec![]);
        // The root's own span is the root.
        assert_eq!(format_path(&path_at(&doc, TEXT, doc.span())), "");
    }

    #[test]
    fn elements() {
        let doc = DeTable::parse(TEXT).unwrap_or_else(|e| panic!("{e}"));
        let element = |path: &str| element_of(doc.get_ref(), &parse_path(path).unwrap_or_default());
        assert_eq!(element("bodies[1].mass_kg"), "body 'b2'");
        assert_eq!(element("bodies[7].mass_kg"), "unnamed body");
        assert_eq!(element("bodies"), "model");
        assert_eq!(
            element("hydraulics.cylinders[0].rod.body"),
            "cylinder 'cyl'"
        );
        assert_eq!(element("hydraulics.fluid.density_kg_m3"), "fluid");
        assert_eq!(element("inputs[0].signal.times"), "input 'U'");
        assert_eq!(element("solver.step_s"), "solver");
        assert_eq!(element("ground.markers.G"), "ground");
        assert_eq!(element("gravity[1]"), "model");
        assert_eq!(element("hydraulics.bridge_valves[0].port_p"), "valve 'BV'");
        assert_eq!(element("elements[0].inlet"), "relief valve 'R1'");
        assert_eq!(element("elements[1].type"), "element 'S1'");
        assert_eq!(element("elements[5].type"), "unnamed element");
        assert_eq!(
            element("nonholonomic[0].radius_m"),
            "nonholonomic constraint 'wheel'"
        );
        assert_eq!(element(""), "model");
    }

    #[test]
    fn valve_elements_are_valves() {
        let text = "[[elements]]\ntype = \"valve_4_3\"\nname = \"DCV\"\n\n\
                    [[elements]]\ntype = \"bridge_valve\"\nname = \"BV\"\n";
        let doc = DeTable::parse(text).unwrap_or_else(|e| panic!("{e}"));
        let element = |path: &str| element_of(doc.get_ref(), &parse_path(path).unwrap_or_default());
        assert_eq!(element("elements[0].port_a"), "valve 'DCV'");
        assert_eq!(element("elements[1].trim"), "valve 'BV'");
    }

    #[test]
    fn line_columns() {
        let text = "a\nbé = 1\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 2), (2, 1));
        // `=` is after a two-byte character: column counts characters.
        assert_eq!(line_column(text, 6), (2, 4));
        // Inside a character and past the end are clamped.
        assert_eq!(line_column(text, 4), (2, 2));
        assert_eq!(line_column(text, 999), (3, 1));
    }

    #[test]
    fn init_error_lines() {
        let text = "[[cut_joints]]\nname = \"A\"\n\n[[cut_joints]]\nname = \"E\"\n";
        let error = |name: &str| InitError::LoopCannotClose {
            cut_joint: name.into(),
            violation: 1.0,
            iterations: 3,
        };
        assert_eq!(locate_init_error(text, &error("E")), Some(4));
        assert_eq!(locate_init_error(text, &error("A")), Some(1));
        assert_eq!(locate_init_error(text, &error("Z")), None);
        assert_eq!(
            locate_init_error(text, &InitError::Statics("no".into())),
            None
        );
    }
}
