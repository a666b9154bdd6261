//! The golden-file comparison shared by the SQL regression suites (`tests/regress.rs`
//! through tokio-postgres, `tests/psql_regress.rs` through psql), as PostgreSQL's
//! pg_regress does it: every `NAME.sql` of a directory runs, and its output must equal
//! `expected/NAME.out` exactly.
//!
//! `TCQ_REGRESS_ONLY=word` runs the scripts whose path contains `word`;
//! `TCQ_REGRESS_BLESS=1` rewrites the expected files instead of comparing (for deliberate
//! changes, after reading the diff). On a mismatch the suite prints expected and actual
//! side by side and leaves the actual output in `target/tmp/SUITE/NAME.out`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The `.sql` scripts of `dir`, sorted, narrowed by `TCQ_REGRESS_ONLY`.
pub fn scripts(dir: &Path) -> Vec<PathBuf> {
    let only = std::env::var("TCQ_REGRESS_ONLY").ok();
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .filter(|p| {
            only.as_deref()
                .is_none_or(|o| p.to_string_lossy().contains(o))
        })
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty(), "no scripts under {}", dir.display());
    scripts
}

/// Where a suite leaves its actual output: `target/tmp/<suite>/`.
pub fn actual_dir(suite: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(suite);
    std::fs::create_dir_all(&dir).expect("create the actual-output directory");
    dir
}

/// Compare (or, under `TCQ_REGRESS_BLESS`, write) each `(name, actual output)` with
/// `expected_dir/NAME.out`; panics naming every script whose output differs.
pub fn check(suite: &str, expected_dir: &Path, outputs: &[(String, String)]) {
    let bless = std::env::var_os("TCQ_REGRESS_BLESS").is_some();
    let actual_dir = actual_dir(suite);
    let mut failures = Vec::new();
    for (name, actual) in outputs {
        std::fs::write(actual_dir.join(format!("{name}.out")), actual).expect("write actual");
        let expected_path = expected_dir.join(format!("{name}.out"));
        if bless {
            std::fs::write(&expected_path, actual).expect("write expected");
            eprintln!("blessed {}", expected_path.display());
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected == *actual {
            eprintln!("ok       {name}");
        } else {
            eprintln!("FAILED   {name}\n{}", side_by_side(&expected, actual));
            failures.push(name.clone());
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scripts differ from their expected output: {}\n(actual output in {})",
        failures.len(),
        outputs.len(),
        failures.join(", "),
        actual_dir.display()
    );
}

/// Expected and actual side by side, changed lines marked, with two lines of context.
pub fn side_by_side(expected: &str, actual: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    // Longest common subsequence table, from the ends.
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut pairs: Vec<(Option<&str>, Option<&str>)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            pairs.push((Some(a[i]), Some(b[j])));
            (i, j) = (i + 1, j + 1);
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            pairs.push((None, Some(b[j])));
            j += 1;
        } else {
            pairs.push((Some(a[i]), None));
            i += 1;
        }
    }
    let changed = |k: usize| pairs[k].0 != pairs[k].1;
    let width = 60;
    let mut out = format!("{:<width$} | {}\n", "--- expected", "+++ actual");
    let mut skipped = false;
    for k in 0..pairs.len() {
        let near = (k.saturating_sub(2)..(k + 3).min(pairs.len())).any(changed);
        if !near {
            skipped = true;
            continue;
        }
        if skipped {
            out.push_str("...\n");
            skipped = false;
        }
        let (l, r) = pairs[k];
        let mark = match (l, r) {
            (Some(x), Some(y)) if x == y => ' ',
            (Some(_), None) => '<',
            (None, Some(_)) => '>',
            _ => '|',
        };
        let left: String = l.unwrap_or("").chars().take(width).collect();
        writeln!(out, "{left:<width$} {mark} {}", r.unwrap_or("")).unwrap();
    }
    out
}
