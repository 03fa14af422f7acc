//! Properties:
//! - mutating the default model (a number replaced by any f64, NaN, ±inf, huge, tiny or a junk
//!   token; a line deleted) never makes loading panic, and every error it reports is well formed:
//!   a line inside the text, a non-empty message, a path that maps back to a line;
//! - mutating any shipped model (numbers scaled by large factors, negated, replaced; fields
//!   dropped; values of another type; another formulation) and running a few steps never panics
//!   or hangs: the outcomes are a result, a located error (`LoadError`, `InitError`) or a
//!   divergence diagnosis (`StepError`).

use hydraulink::Simulation;
use hydraulink_io::{check_model, compile_model, line_of_path, DEFAULT_MODEL};
use proptest::prelude::*;
use proptest::sample::Index;

/// Byte ranges of the numeric literals of `text`, outside comments.
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let code = line.split('#').next().unwrap_or_default();
        let bytes = code.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let starts_number = bytes[i].is_ascii_digit()
                || ((bytes[i] == b'-' || bytes[i] == b'+')
                    && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
            let in_word = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
            if starts_number && !in_word {
                let start = i;
                i += 1;
                while i < bytes.len()
                    && (bytes[i].is_ascii_digit() || b".eE_+-".contains(&bytes[i]))
                {
                    i += 1;
                }
                spans.push((line_start + start, line_start + i));
            } else {
                i += 1;
            }
        }
        line_start += line.len();
    }
    spans
}

/// A TOML literal for `x`: `nan`, `inf`, `-inf`, or Rust's shortest round-trip form.
fn toml_float(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{x:?}")
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    /// Replace the number at this index by this token.
    Number(Index, String),
    /// Delete the line at this index.
    DeleteLine(Index),
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<f64>().prop_map(toml_float),
        Just("nan".to_string()),
        Just("-inf".to_string()),
        Just("0.0".to_string()),
        Just("-0.0".to_string()),
        Just("-1.0".to_string()),
        (-1e300..1e300f64).prop_map(toml_float),
        (-1e-300..1e-300f64).prop_map(toml_float),
        (-10i64..10).prop_map(|n| n.to_string()),
        "[-0-9a-z.\"\\[\\]{}=, ]{0,6}",
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<Index>(), token()).prop_map(|(i, t)| Mutation::Number(i, t)),
        1 => any::<Index>().prop_map(Mutation::DeleteLine),
    ]
}

fn apply(text: &str, mutation: &Mutation) -> String {
    match mutation {
        Mutation::Number(index, token) => {
            let spans = number_spans(text);
            if spans.is_empty() {
                return text.to_string();
            }
            let (start, end) = spans[index.index(spans.len())];
            format!("{}{token}{}", &text[..start], &text[end..])
        }
        Mutation::DeleteLine(index) => {
            let lines: Vec<&str> = text.split_inclusive('\n').collect();
            if lines.is_empty() {
                return text.to_string();
            }
            let skip = index.index(lines.len());
            lines
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, line)| *line)
                .collect()
        }
    }
}

/// Every model file of the repository (`models/`, the tutorial, `docs/`, `examples/`, any
/// other folder), found by walking the tree: a `.toml` whose first line names
/// `hydraulink.schema.json`. Sorted by path, relative to the root; with their text.
fn every_model() -> Vec<(String, String)> {
    fn walk(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let (path, name) = (entry.path(), entry.file_name());
            let name = name.to_string_lossy();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                    walk(root, &path, out);
                }
            } else if name.ends_with(".toml") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let first = text.lines().next().unwrap_or_default();
                if first.starts_with("#:schema") && first.ends_with("/hydraulink.schema.json") {
                    let relative = path.strip_prefix(root).unwrap_or(&path);
                    out.push((relative.display().to_string(), text));
                }
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out
}

/// Longest a single mutant may take before the test process stops [s]. A case takes about 1 ms
/// in release (an excavator_dig mutant about 2 s on a 4-Mcell grid); a case that
/// passes this is a hang, and a hang must fail the test with its input, not time out CI.
const CASE_LIMIT_S: u64 = 20;

/// The case being run (its description and start), watched by one thread per test process.
static CURRENT: std::sync::Mutex<Option<(std::time::Instant, String)>> =
    std::sync::Mutex::new(None);

/// Registers a case with the watchdog for as long as it lives.
struct Watchdog;

impl Watchdog {
    fn start(case: String) -> Self {
        static THREAD: std::sync::Once = std::sync::Once::new();
        THREAD.call_once(|| {
            std::thread::spawn(|| loop {
                std::thread::sleep(std::time::Duration::from_secs(1));
                let current = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
                if let Some((start, case)) = current.as_ref() {
                    if start.elapsed().as_secs() > CASE_LIMIT_S {
                        // Past the test harness's capture (which `eprintln!` in a thread
                        // spawned by a test goes to, and which is lost on exit).
                        use std::io::Write;
                        let _ = writeln!(
                            std::io::stderr(),
                            "a mutant ran for more than {CASE_LIMIT_S} s (a hang): {case}"
                        );
                        std::process::exit(101);
                    }
                }
            });
        });
        *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((std::time::Instant::now(), case));
        Watchdog
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Steps a mutated model runs at most: the property is about panics and hangs, not accuracy.
const MAX_STEPS: u64 = 20;

#[derive(Debug, Clone)]
enum ModelMutation {
    /// Multiply the number at this index by 10^k.
    Scale(Index, i32),
    /// Negate the number at this index.
    Negate(Index),
    /// Replace the number at this index by this token (any f64, huge, tiny, another type, junk).
    Number(Index, String),
    /// Delete the line at this index (drops a field, or a whole element's header).
    DeleteLine(Index),
    /// Select this formulation.
    Formulation(&'static str),
}

fn model_mutation() -> impl Strategy<Value = ModelMutation> {
    prop_oneof![
        3 => (any::<Index>(), -300i32..300).prop_map(|(i, k)| ModelMutation::Scale(i, k)),
        2 => any::<Index>().prop_map(ModelMutation::Negate),
        3 => (
            any::<Index>(),
            prop_oneof![
                token(),
                Just("\"x\"".to_string()),
                Just("true".to_string()),
                Just("[1.0, 2.0]".to_string()),
                Just("{ a = 1 }".to_string()),
                Just("4000000000".to_string()),
                Just("1e155".to_string()),
            ]
        )
            .prop_map(|(i, t)| ModelMutation::Number(i, t)),
        2 => any::<Index>().prop_map(ModelMutation::DeleteLine),
        1 => prop::sample::select(vec![
            "penalty",
            "double-step",
            "global-ali3p",
            "global-i1al",
            "kinematic-guidance",
            "multirate",
        ])
        .prop_map(ModelMutation::Formulation),
    ]
}

/// The literal `n` negated (a leading minus removed or added).
fn negated(n: &str) -> String {
    match n.strip_prefix('-') {
        Some(rest) => rest.to_string(),
        None => format!("-{n}"),
    }
}

/// The number span at `index` of `text`, if it has numbers.
fn number_at(text: &str, index: &Index) -> Option<(usize, usize)> {
    let spans = number_spans(text);
    (!spans.is_empty()).then(|| spans[index.index(spans.len())])
}

fn apply_model_mutation(text: &str, mutation: &ModelMutation) -> String {
    let replace = |index: &Index, f: &dyn Fn(&str) -> String| match number_at(text, index) {
        Some((start, end)) => format!("{}{}{}", &text[..start], f(&text[start..end]), &text[end..]),
        None => text.to_string(),
    };
    match mutation {
        ModelMutation::Scale(index, k) => replace(index, &|n| match n.parse::<f64>() {
            Ok(x) => toml_float(x * 10f64.powi(*k)),
            Err(_) => n.to_string(),
        }),
        ModelMutation::Negate(index) => replace(index, &negated),
        ModelMutation::Number(index, token) => replace(index, &|_| token.clone()),
        ModelMutation::DeleteLine(index) => apply(text, &Mutation::DeleteLine(*index)),
        ModelMutation::Formulation(name) => text
            .lines()
            .map(|line| {
                if line.trim_start().starts_with("formulation") {
                    format!("formulation = \"{name}\"")
                } else {
                    line.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// How a mutant ended.
#[derive(Debug, Clone, Copy)]
enum Outcome {
    /// Refused with a located load error.
    Refused,
    /// Refused by initialization.
    NotInitialized,
    /// A step failed with a diagnosis.
    StepFailed,
    /// Ran its steps with finite outputs.
    Ran,
}

/// The count of each outcome of a round.
#[derive(Debug, Default)]
struct Outcomes {
    refused: u64,
    not_initialized: u64,
    step_failed: u64,
    ran: u64,
}

impl Outcomes {
    fn count(&mut self, outcome: Outcome) {
        *match outcome {
            Outcome::Refused => &mut self.refused,
            Outcome::NotInitialized => &mut self.not_initialized,
            Outcome::StepFailed => &mut self.step_failed,
            Outcome::Ran => &mut self.ran,
        } += 1;
    }
}

/// Loads, initializes and runs `text` for at most [`MAX_STEPS`] steps (and at most its
/// duration), with the iteration counts that bound a step's work capped, computing each step's
/// output row and body poses as `hydraulink run` does; every failure must be one of the
/// diagnosed kinds, a load error must be well formed, and a step that succeeds has finite
/// outputs (else it is a silent NaN).
fn run_briefly(text: &str, file: &str) -> Result<Outcome, TestCaseError> {
    let mut model = match compile_model(text, file) {
        Ok(model) => model,
        Err(error) => {
            let shown = error.to_string();
            prop_assert!(shown.starts_with(file), "{}", shown);
            prop_assert!(!error.message.is_empty(), "{}", shown);
            return Ok(Outcome::Refused);
        }
    };
    // A valid model may ask for up to 1000 iterations of up to 10,000 substeps: cap the work
    // per step so that the budget of the test holds (the bounds themselves are tested in
    // `pipeline/validate.rs`).
    model.solver.max_iterations = model.solver.max_iterations.min(30);
    model.solver.hydraulic_substeps = model.solver.hydraulic_substeps.min(50);
    let n_steps = model.n_steps();
    let mut sim = match Simulation::new(model) {
        Ok(sim) => sim,
        Err(error) => {
            prop_assert!(!error.to_string().is_empty());
            return Ok(Outcome::NotInitialized);
        }
    };
    let mut row = vec![0.0; sim.n_outputs()];
    let mut poses =
        vec![hydraulink::pipeline::simulation::BodyPose::default(); sim.model().bodies.len()];
    let labels = sim.output_labels();
    // as `hydraulink run` does: a non-finite output ends the run as a failed step
    // (`Simulation::check_outputs`); `Ok(false)` then
    let mut check_outputs = |sim: &mut Simulation| -> Result<bool, TestCaseError> {
        sim.output_row(&mut row);
        sim.body_poses(&mut poses);
        if let Err(error) = sim.check_outputs(&row) {
            let shown = error.to_string();
            prop_assert!(shown.contains("non-finite value at t = "), "{}", shown);
            return Ok(false);
        }
        if let Some(k) = row.iter().position(|x| !x.is_finite()) {
            return Err(TestCaseError::fail(format!(
                "silent NaN: output `{}` is {} at step {} (t = {} s), which reported success",
                labels[k],
                row[k],
                sim.step_index(),
                sim.time_s()
            )));
        }
        let pose_ok = poses.iter().all(|p| {
            p.position_m
                .iter()
                .chain(p.rotation.iter().flatten())
                .all(|x| x.is_finite())
        });
        prop_assert!(
            pose_ok,
            "a non-finite body pose at step {}",
            sim.step_index()
        );
        Ok(true)
    };
    if !check_outputs(&mut sim)? {
        return Ok(Outcome::NotInitialized);
    }
    while sim.step_index() < MAX_STEPS.min(n_steps) {
        if let Err(error) = sim.step() {
            prop_assert!(!error.to_string().is_empty());
            return Ok(Outcome::StepFailed);
        }
        if !check_outputs(&mut sim)? {
            return Ok(Outcome::StepFailed);
        }
    }
    Ok(Outcome::Ran)
}

/// The walk finds the shipped models, the tutorial's steps (one without hydraulics, one
/// without elements) and nothing that is not a model.
#[test]
fn every_model_of_the_repository_is_fuzzed() {
    let models = every_model();
    let names: Vec<&str> = models.iter().map(|(f, _)| f.as_str()).collect();
    for expected in [
        "models/fourbar.toml",
        "models/excavator.toml",
        "models/rolling_disc.toml",
        "docs/tutorial/step1_pendulum.toml",
        "docs/tutorial/step2_cylinder.toml",
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    assert!(names
        .iter()
        .all(|n| !n.contains("bad_models") && !n.ends_with("Cargo.toml")));
    let step1 = &models[names
        .iter()
        .position(|n| n.ends_with("step1_pendulum.toml"))
        .unwrap()];
    let spec = check_model(&step1.1, &step1.0).unwrap();
    assert!(spec.hydraulics.volumes.is_empty() && spec.elements.is_empty());
}

#[test]
fn the_number_scanner_finds_the_model_numbers() {
    let spans = number_spans(DEFAULT_MODEL);
    let numbers: Vec<&str> = spans.iter().map(|&(s, e)| &DEFAULT_MODEL[s..e]).collect();
    assert!(numbers.contains(&"225.0"), "{numbers:?}");
    assert!(numbers.contains(&"-9.81"), "{numbers:?}");
    assert!(numbers.contains(&"1.0e11"), "{numbers:?}");
    // Digits inside names (`body1`, `z3`, `V2`) and comments are not numbers.
    assert!(
        numbers.iter().all(|n| n.parse::<f64>().is_ok()),
        "{numbers:?}"
    );
    assert!(numbers.len() > 80, "{}", numbers.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn mutated_models_never_panic(mutations in prop::collection::vec(mutation(), 1..4)) {
        let mut text = DEFAULT_MODEL.to_string();
        for m in &mutations {
            text = apply(&text, m);
        }
        if let Err(error) = check_model(&text, "fuzz.toml") {
            let shown = error.to_string();
            prop_assert!(shown.starts_with("fuzz.toml"), "{}", shown);
            prop_assert!(!error.message.is_empty(), "{}", shown);
            let n_lines = u32::try_from(text.lines().count().max(1)).unwrap_or(u32::MAX);
            if let Some(line) = error.line {
                prop_assert!((1..=n_lines + 1).contains(&line), "line {} of {}: {}", line, n_lines, shown);
            }
            if let Some(path) = &error.path {
                // Every reported path maps back into the text, possibly to an enclosing element;
                // only a missing top-level key (`name`) has no enclosing element with a line.
                let top_level = !path.contains(['.', '[']);
                if error.kind != hydraulink_io::LoadErrorKind::Syntax && !top_level {
                    prop_assert!(line_of_path(&text, path).is_some(), "{}", shown);
                }
            }
        }
    }

    #[test]
    fn arbitrary_paths_never_panic(path in "[a-z_\\[\\]0-9.\"]{0,24}") {
        let _ = line_of_path(DEFAULT_MODEL, &path);
    }
}

/// Mutants of the random round in CI; `HYDRAULINK_FUZZ_CASES` sets another count (the
/// issue-23 round ran 10 000).
const CI_CASES: u64 = 500;

/// The seed of the random round: `HYDRAULINK_FUZZ_SEED` (decimal or 0x-hex), else one from the
/// clock, printed so that any round can be run again.
fn fuzz_seed() -> u64 {
    match std::env::var("HYDRAULINK_FUZZ_SEED") {
        Ok(text) => {
            let text = text.trim();
            match text.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => text.parse(),
            }
            .unwrap_or_else(|e| panic!("HYDRAULINK_FUZZ_SEED={text}: {e}"))
        }
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    }
}

/// Mutants of every model of the repository (numbers scaled, negated or replaced, lines
/// deleted, another formulation), each loaded, initialized and run for a few steps with every
/// output row and body pose computed: never a panic, a hang (the watchdog) or a silent NaN (a
/// non-finite output of a step that reported success). The round is drawn from a printed seed
/// (`HYDRAULINK_FUZZ_SEED` replays it) and has `HYDRAULINK_FUZZ_CASES` mutants (500 by default).
#[test]
fn mutated_models_run_without_panic_hang_or_silent_nan() {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let models = every_model();
    let seed = fuzz_seed();
    let cases: u64 = std::env::var("HYDRAULINK_FUZZ_CASES")
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(CI_CASES);
    eprintln!(
        "fuzz round: seed {seed:#x} (HYDRAULINK_FUZZ_SEED={seed:#x} replays it), {cases} mutants \
         of {} models",
        models.len()
    );
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = (
        0..models.len(),
        prop::collection::vec(model_mutation(), 1..4),
    );
    let started = std::time::Instant::now();
    let mut outcomes = Outcomes::default();
    for case in 0..cases {
        let (model, mutations) = strategy
            .new_tree(&mut runner)
            .expect("a mutant is drawn")
            .current();
        let (file, text) = &models[model];
        let mut text = text.clone();
        for m in &mutations {
            text = apply_model_mutation(&text, m);
        }
        let what = format!("case {case} of seed {seed:#x}: {file} with {mutations:?}");
        let _watch = Watchdog::start(what.clone());
        match std::panic::catch_unwind(|| run_briefly(&text, file)) {
            Ok(Ok(outcome)) => outcomes.count(outcome),
            Ok(Err(e)) => panic!("{what}: {e}"),
            Err(_) => panic!("{what}: panicked (above)"),
        }
    }
    eprintln!(
        "fuzz round: {cases} mutants in {:.1} s: {outcomes:?}; 0 panics, 0 hangs, 0 silent NaN",
        started.elapsed().as_secs_f64()
    );
}

/// Every number of every shipped model, one at a time, scaled by 1e±199, negated, or replaced
/// by 0, NaN or 4e9: each mutant runs a few steps without a panic or a hang (the watchdog).
/// Deterministic, unlike the proptest above: about 13 s in release for 3 000 numbers.
#[test]
fn every_single_number_mutation_of_the_shipped_models() {
    type Edit = fn(&str) -> String;
    let edits: [(&str, Edit); 6] = [
        ("× 1e199", |n| {
            n.parse::<f64>()
                .map_or(n.to_string(), |x| toml_float(x * 1e199))
        }),
        ("× 1e-199", |n| {
            n.parse::<f64>()
                .map_or(n.to_string(), |x| toml_float(x * 1e-199))
        }),
        ("negated", negated),
        ("0", |_| "0".into()),
        ("nan", |_| "nan".into()),
        ("4e9", |_| "4000000000".into()),
    ];
    for (file, text) in &every_model() {
        let (file, text) = (file.as_str(), text.as_str());
        let spans = number_spans(text);
        let start = std::time::Instant::now();
        for (k, &(a, b)) in spans.iter().enumerate() {
            for (what, edit) in &edits {
                let mutated = format!("{}{}{}", &text[..a], edit(&text[a..b]), &text[b..]);
                let case = format!("{file}: number {k} `{}` {what}", &text[a..b]);
                let _watch = Watchdog::start(case.clone());
                match std::panic::catch_unwind(|| run_briefly(&mutated, file)) {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => panic!("{case}: {e}"),
                    Err(_) => panic!("{case}: panicked (above)"),
                }
            }
        }
        eprintln!(
            "{file}: {} numbers, {:.1} s",
            spans.len(),
            start.elapsed().as_secs_f64()
        );
    }
}

/// Runs the model file named by `HYDRAULINK_FUZZ_CASE` as a mutant is run (to replay a case the
/// watchdog or a failure printed, after writing the mutant to a file).
#[test]
#[ignore = "replays one case: HYDRAULINK_FUZZ_CASE=path"]
fn replay_a_case() {
    let Ok(path) = std::env::var("HYDRAULINK_FUZZ_CASE") else {
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let start = std::time::Instant::now();
    let outcome = run_briefly(&text, &path);
    eprintln!(
        "{path}: {outcome:?} in {:.3} s",
        start.elapsed().as_secs_f64()
    );
    outcome.unwrap();
}
