//! The maps of the code name only files that exist (STYLE convention 10: "a test checks the paths
//! in ARCHITECTURE.md").
//!
//! * `ARCHITECTURE.md`: every inline-code span that looks like a path (a file ending in `.rs`,
//!   `.md` or `.toml`, or a directory: contains `/` and ends in `/`) must exist relative to the
//!   repository root, and every source file of the crates must be listed.
//! * `docs/**/*.md`: the same spans, where a span with `/` that starts with a top-level directory
//!   (`crates/`, `models/`, `docs/`, `.ci/`) or a bare `*.md` / `*.toml` name is repo-relative,
//!   and anything else (`mechanics/semirecursive/penalty.rs`, `step.rs`) is relative to
//!   `crates/hydraulink/src/`. A `.rs` span may name items after it
//!   (`mechanics/semirecursive/penalty.rs::form_residual`, `assembly.rs::Evaluator::evaluate`);
//!   each item must be defined in that file.

use std::fs;
use std::path::{Path, PathBuf};

/// The repository root.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The source directory that crate-relative doc references are resolved against.
fn crate_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Top-level directories whose paths are always repo-relative in the docs.
const REPO_PREFIXES: [&str; 4] = ["crates/", "models/", "docs/", ".ci/"];

/// Inline code spans of a Markdown text with their 1-based line numbers. Fenced code blocks are
/// skipped.
fn code_spans(text: &str) -> Vec<(usize, String)> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for (k, part) in line.split('`').enumerate() {
            if k % 2 == 1 && !part.is_empty() {
                spans.push((i + 1, part.to_string()));
            }
        }
    }
    spans
}

/// A path named in a code span: the file or directory, and the items after `::` (may be empty).
#[derive(Debug)]
struct PathRef {
    path: String,
    items: Vec<String>,
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// The path in a code span, if the span is one: only path characters, and either a file with a
/// checked extension (optionally followed by `::item`s) or a directory (with `/`, ending in `/`).
fn parse_path(span: &str) -> Option<PathRef> {
    let (path, items) = match span.split_once("::") {
        Some((p, rest)) => (p, rest.split("::").map(str::to_string).collect::<Vec<_>>()),
        None => (span, Vec::new()),
    };
    let path_chars = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
    if path.is_empty() || !path_chars || path.starts_with('/') {
        return None;
    }
    let is_file = [".rs", ".md", ".toml"].iter().any(|e| path.ends_with(e));
    let is_dir = path.contains('/') && path.ends_with('/');
    if !(is_file || is_dir) || !items.iter().all(|i| is_ident(i)) {
        return None;
    }
    if !items.is_empty() && !path.ends_with(".rs") {
        return None;
    }
    Some(PathRef {
        path: path.to_string(),
        items,
    })
}

/// Whether `src` defines `name`: `fn`/`struct`/`enum`/`trait`/`type`/`const`/`static`/`mod name`,
/// a field `name: T`, or an enum variant (`name,`, `name(`, `name {` first on its line).
fn defines(src: &str, name: &str) -> bool {
    let ident_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for (pos, _) in src.match_indices(name) {
        let before = src[..pos].chars().next_back();
        let after = src[pos + name.len()..].chars().next();
        if before.is_some_and(ident_char) || after.is_some_and(ident_char) {
            continue;
        }
        let head = src[..pos].trim_end();
        let prev_word = head.rsplit(|c: char| !ident_char(c)).next().unwrap_or("");
        let keywords = [
            "fn", "struct", "enum", "trait", "type", "const", "static", "mod",
        ];
        if keywords.contains(&prev_word) {
            return true;
        }
        let line_start = src[..pos].rfind('\n').map_or(0, |i| i + 1);
        let lead = src[line_start..pos].trim();
        let rest = src[pos + name.len()..].trim_start();
        let field = rest.starts_with(':') && !rest.starts_with("::");
        let variant = rest.starts_with(',') || rest.starts_with('(') || rest.starts_with('{');
        if (lead.is_empty() || lead == "pub") && (field || variant) {
            return true;
        }
    }
    false
}

/// Checks one reference; returns a message if it is broken.
fn check_ref(doc: &str, line: usize, span: &str, r: &PathRef, base: &Path) -> Option<String> {
    let full = base.join(&r.path);
    let ok = if r.path.ends_with('/') {
        full.is_dir()
    } else {
        full.is_file()
    };
    if !ok {
        return Some(format!(
            "{doc}:{line}: `{span}`: {} does not exist",
            full.display()
        ));
    }
    if r.items.is_empty() {
        return None;
    }
    let src = fs::read_to_string(&full).expect("an existing file is readable");
    r.items
        .iter()
        .find(|item| !defines(&src, item))
        .map(|item| {
            format!(
                "{doc}:{line}: `{span}`: `{item}` is not defined in {}",
                r.path
            )
        })
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn architecture_md_paths_exist() {
    let root = repo_root();
    let text = read(&root.join("ARCHITECTURE.md"));
    let mut checked = 0;
    let mut broken = Vec::new();
    for (line, span) in code_spans(&text) {
        let Some(r) = parse_path(&span) else { continue };
        checked += 1;
        if let Some(msg) = check_ref("ARCHITECTURE.md", line, &span, &r, &root) {
            broken.push(msg);
        }
    }
    // Guard against a parser that silently finds nothing.
    assert!(
        checked >= 40,
        "only {checked} paths found in ARCHITECTURE.md"
    );
    assert!(
        broken.is_empty(),
        "ARCHITECTURE.md names paths that do not exist (paths are repo-relative):\n{}",
        broken.join("\n")
    );
}

/// Every `.rs` file under `dir`, recursively, as repo-relative paths with `/`.
fn rust_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(root, &p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            let rel = p.strip_prefix(root).expect("under the root");
            let parts: Vec<_> = rel.iter().map(|s| s.to_string_lossy()).collect();
            out.push(parts.join("/"));
        }
    }
}

#[test]
fn architecture_md_lists_every_source_file() {
    let root = repo_root().canonicalize().expect("repo root");
    let text = read(&root.join("ARCHITECTURE.md"));
    let named: Vec<String> = code_spans(&text)
        .into_iter()
        .filter_map(|(_, s)| parse_path(&s))
        .map(|r| r.path)
        .collect();
    let mut sources = Vec::new();
    for krate in [
        "hydraulink",
        "hydraulink-io",
        "hydraulink-cli",
        "hydraulink-rt",
    ] {
        rust_files(
            &root,
            &root.join("crates").join(krate).join("src"),
            &mut sources,
        );
    }
    assert!(!sources.is_empty());
    let missing: Vec<_> = sources.iter().filter(|s| !named.contains(s)).collect();
    assert!(
        missing.is_empty(),
        "source files missing from the module map in ARCHITECTURE.md: {missing:?}"
    );
}

/// Every Markdown file under `docs/`, recursively.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
}

#[test]
fn docs_code_references_exist() {
    let root = repo_root();
    let src = crate_src();
    let mut docs = Vec::new();
    markdown_files(&root.join("docs"), &mut docs);
    assert!(
        docs.iter()
            .any(|d| d.parent().is_some_and(|p| p.ends_with("theory"))),
        "docs/theory/ has no chapters"
    );
    let mut broken = Vec::new();
    for doc in &docs {
        let name = doc.strip_prefix(&root).unwrap_or(doc).display().to_string();
        let mut checked = 0;
        for (line, span) in code_spans(&read(doc)) {
            let Some(r) = parse_path(&span) else { continue };
            checked += 1;
            let repo_relative = REPO_PREFIXES.iter().any(|p| r.path.starts_with(p))
                || (!r.path.contains('/') && !r.path.ends_with(".rs"));
            let base = if repo_relative { &root } else { &src };
            if let Some(msg) = check_ref(&name, line, &span, &r, base) {
                broken.push(msg);
            }
        }
        assert!(checked > 0, "{name} names no code paths");
    }
    assert!(
        broken.is_empty(),
        "docs name code that does not exist (crate-relative paths are under crates/hydraulink/src/):\n{}",
        broken.join("\n")
    );
}

#[test]
fn path_parser_recognises_paths_and_items() {
    let r = parse_path("mechanics/semirecursive/penalty.rs::form_residual").unwrap();
    assert_eq!(r.path, "mechanics/semirecursive/penalty.rs");
    assert_eq!(r.items, ["form_residual"]);
    assert!(parse_path("crates/hydraulink/tests/").is_some());
    assert!(parse_path("Cargo.toml").is_some());
    for not_a_path in [
        "Kinematics::bv/bw",
        "plots/*.svg",
        "results.csv",
        "M′/Q′",
        "hydraulink run",
        "out/<model name>/",
        "Dynamics::mass",
    ] {
        assert!(parse_path(not_a_path).is_none(), "{not_a_path}");
    }
    let src =
        "pub struct A {\n    pub acc0_v: Vec<f64>,\n}\nenum K {\n    Revolute,\n}\nfn go() {}\n";
    for item in ["A", "acc0_v", "Revolute", "go"] {
        assert!(defines(src, item), "{item}");
    }
    assert!(!defines(src, "Vec"));
    assert!(!defines(src, "acc0"));
}
