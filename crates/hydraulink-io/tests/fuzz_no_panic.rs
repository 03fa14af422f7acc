//! Property: mutating the default model (a number replaced by any f64, NaN, ±inf, huge, tiny or
//! a junk token; a line deleted) never makes loading panic, and every error it reports is
//! well formed: a line inside the text, a non-empty message, a path that maps back to a line.

use hydraulink_io::{check_model, line_of_path, DEFAULT_MODEL};
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
