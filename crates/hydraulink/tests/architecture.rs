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

// ---- the import graph of the core crate (issue 25: "no import circle", "formulations never
// import each other")

/// The module path of a source file relative to `src/` (`model/spec.rs` → `[model, spec]`,
/// `model/mod.rs` → `[model]`, `lib.rs` → `[]`).
fn module_path(file: &str) -> Vec<String> {
    let stem = file.strip_suffix(".rs").expect("a .rs file");
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The file that defines the longest prefix of the module path `segs` (`lib.rs` if none).
fn resolve(files: &[String], segs: &[String]) -> String {
    for k in (1..=segs.len()).rev() {
        let base = segs[..k].join("/");
        for candidate in [format!("{base}.rs"), format!("{base}/mod.rs")] {
            if files.contains(&candidate) {
                return candidate;
            }
        }
    }
    "lib.rs".to_string()
}

/// The paths of a `use` tree (`a::{b, c::{d, e as f}}` → `[a, b]`, `[a, c, d]`, `[a, c, e]`).
fn expand_use_tree(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let split_path = |s: &str| -> Vec<String> {
        s.split("::")
            .map(|x| x.split(" as ").next().unwrap_or("").trim().to_string())
            .filter(|x| !x.is_empty())
            .collect()
    };
    let Some(open) = tree.find('{') else {
        return vec![split_path(tree)];
    };
    let close = tree.rfind('}').expect("balanced braces in a use tree");
    let prefix = split_path(&tree[..open]);
    let (mut depth, mut part, mut out) = (0, String::new(), Vec::new());
    let mut parts = Vec::new();
    for ch in tree[open + 1..close].chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut part));
                continue;
            }
            _ => {}
        }
        part.push(ch);
    }
    parts.push(part);
    for p in parts.iter().filter(|p| !p.trim().is_empty()) {
        for tail in expand_use_tree(p) {
            out.push(prefix.iter().cloned().chain(tail).collect());
        }
    }
    out
}

/// The crate-internal imports of a source text: every `crate::`/`super::`/`self::` path of its
/// `use` items and every `crate::`/`super::` path in its code, outside comments and outside a
/// trailing `#[cfg(test)] mod`.
fn import_paths(text: &str) -> Vec<Vec<String>> {
    let mut code: String = text
        .lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n");
    if let Some(i) = code.find("#[cfg(test)]") {
        if code[i + 12..].trim_start().starts_with("mod ") {
            code.truncate(i);
        }
    }
    let mut paths = Vec::new();
    let mut rest = String::new();
    let mut s = code.as_str();
    // `use` items (also `pub use`, `pub(crate) use`): up to their `;`
    while let Some(i) = s.find("use ") {
        let word_start = i == 0 || !s[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        rest.push_str(&s[..i]);
        let after = &s[i + 4..];
        let Some(end) = after.find(';') else {
            rest.push_str(&s[i..]);
            s = "";
            break;
        };
        let tree = after[..end].trim();
        if word_start
            && ["crate::", "super::", "self::"]
                .iter()
                .any(|p| tree.starts_with(p))
        {
            paths.extend(expand_use_tree(tree));
            s = &after[end + 1..];
        } else {
            rest.push_str(&s[i..i + 4]);
            s = after;
        }
    }
    rest.push_str(s);
    // paths in the code
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for root in ["crate::", "super::"] {
        for (i, _) in rest.match_indices(root) {
            if rest[..i].ends_with(ident) {
                continue;
            }
            let tail: String = rest[i..]
                .chars()
                .take_while(|&c| ident(c) || c == ':')
                .collect();
            paths.push(
                tail.split("::")
                    .filter(|x| !x.is_empty())
                    .map(str::to_string)
                    .collect(),
            );
        }
    }
    paths
}

/// The core crate's import graph: (file, imported file) over the files under `src/`, paths
/// relative to `src/`.
fn import_graph() -> (Vec<String>, Vec<(String, String)>) {
    let src = crate_src().canonicalize().expect("src");
    let mut files = Vec::new();
    rust_files(&src, &src, &mut files);
    // crate-root re-exports (`pub use pipeline::compile;` in lib.rs): name → its real path
    let mut root_exports: Vec<(String, Vec<String>)> = Vec::new();
    for path in import_paths(&read(&src.join("lib.rs")).replace("pub use ", "use crate::")) {
        if let Some(name) = path.last() {
            root_exports.push((name.clone(), path[1..].to_vec()));
        }
    }
    let mut edges = Vec::new();
    for f in &files {
        let me = module_path(f);
        for path in import_paths(&read(&src.join(f))) {
            let mut abs = if path[0] == "crate" {
                Vec::new()
            } else {
                me.clone()
            };
            let mut segs = if path[0] == "crate" {
                &path[1..]
            } else {
                &path[..]
            };
            while let Some(first) = segs.first() {
                match first.as_str() {
                    "super" => {
                        abs.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                segs = &segs[1..];
            }
            abs.extend(segs.iter().cloned());
            if let Some((_, real)) = root_exports
                .iter()
                .find(|(name, _)| abs.len() == 1 && abs.first() == Some(name))
            {
                abs = real.clone();
            }
            let target = resolve(&files, &abs);
            if &target != f && !edges.contains(&(f.clone(), target.clone())) {
                edges.push((f.clone(), target));
            }
        }
    }
    (files, edges)
}

/// The strongly connected components with more than one node (Tarjan).
fn circles(nodes: &[String], edges: &[(String, String)]) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        adj: Vec<Vec<usize>>,
        names: &'a [String],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on: Vec<bool>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on[v] = true;
            for k in 0..self.adj[v].len() {
                let w = self.adj[v][k];
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = self.stack.pop().expect("on the stack");
                    self.on[w] = false;
                    comp.push(self.names[w].clone());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let at = |n: &String| nodes.iter().position(|x| x == n);
    let mut adj = vec![Vec::new(); nodes.len()];
    for (a, b) in edges {
        if let (Some(i), Some(j)) = (at(a), at(b)) {
            adj[i].push(j);
        }
    }
    let n = nodes.len();
    let mut t = Tarjan {
        adj,
        names: nodes,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on: vec![false; n],
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.out
}

#[test]
fn no_import_circle_between_files_of_the_core_crate() {
    let (files, edges) = import_graph();
    // guard against a parser that silently finds nothing
    assert!(edges.len() > 300, "only {} imports found", edges.len());
    assert!(edges.contains(&(
        "pipeline/compile.rs".to_string(),
        "pipeline/pose.rs".to_string()
    )));
    let found = circles(&files, &edges);
    let show: Vec<String> = found
        .iter()
        .map(|c| {
            let inside: Vec<String> = edges
                .iter()
                .filter(|(a, b)| c.contains(a) && c.contains(b))
                .map(|(a, b)| format!("  {a} -> {b}"))
                .collect();
            format!("{c:?}\n{}", inside.join("\n"))
        })
        .collect();
    assert!(
        found.is_empty(),
        "import circles between files of crates/hydraulink/src:\n{}",
        show.join("\n")
    );
}

/// The formulation a file of `formulations/` belongs to: its file (`penalty.rs`) or its folder
/// (`z_only/`, whose kinematic-guidance and multi-rate variants are the z-only step with their
/// own forces and rows, `z_only::ZOnlyStep<F: ZOnly>`); `None` for `formulations/mod.rs`, the
/// `Stepper` trait every formulation implements.
fn formulation_of(file: &str) -> Option<&str> {
    let rest = file.strip_prefix("formulations/")?;
    if rest == "mod.rs" {
        return None;
    }
    Some(
        rest.split('/')
            .next()
            .unwrap_or(rest)
            .trim_end_matches(".rs"),
    )
}

#[test]
fn formulations_do_not_import_each_other() {
    let (_, edges) = import_graph();
    let bad: Vec<String> = edges
        .iter()
        .filter(|(a, b)| match (formulation_of(a), formulation_of(b)) {
            (Some(fa), Some(fb)) => fa != fb,
            _ => false,
        })
        .map(|(a, b)| format!("{a} -> {b}"))
        .collect();
    assert!(
        bad.is_empty(),
        "a formulation imports another (move the shared equations to mechanics/):\n{}",
        bad.join("\n")
    );
}

/// The top-level modules of the core crate (`model`, `elements`, … and `state`, `error`).
fn top_module(file: &str) -> String {
    file.split('/')
        .next()
        .expect("a path")
        .trim_end_matches(".rs")
        .to_string()
}

/// Issue 25's "no import circle between them" at the level of the top-level modules: the
/// module graph is a DAG in layers (ARCHITECTURE.md, "Layers"): error, solver → contact →
/// elements → terrain → model → state → circuit → mechanics → formulations → pipeline →
/// linearize. An import through a crate-root re-export (`crate::StepReport`) counts as an
/// import of the file that defines the item.
#[test]
fn no_import_circle_between_top_level_modules() {
    let (files, edges) = import_graph();
    let mut modules: Vec<String> = files.iter().map(|f| top_module(f)).collect();
    modules.sort();
    modules.dedup();
    modules.retain(|m| m != "lib");
    let mut medges: Vec<(String, String)> = Vec::new();
    for (a, b) in &edges {
        let (ma, mb) = (top_module(a), top_module(b));
        if ma != mb && mb != "lib" && !medges.contains(&(ma.clone(), mb.clone())) {
            medges.push((ma, mb));
        }
    }
    let found = circles(&modules, &medges);
    let mut show = Vec::new();
    for c in &found {
        show.push(format!("{c:?}"));
        for (ma, mb) in medges
            .iter()
            .filter(|(a, b)| c.contains(a) && c.contains(b))
        {
            let n = edges
                .iter()
                .filter(|(a, b)| &top_module(a) == ma && &top_module(b) == mb)
                .count();
            show.push(format!("  {ma} -> {mb}: {n} file imports"));
        }
    }
    assert!(
        found.is_empty(),
        "import circles between the top-level modules of crates/hydraulink/src:\n{}",
        show.join("\n")
    );
}
