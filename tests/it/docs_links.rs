//! Every relative link in the README and in `docs/*.md` names a file of the repository,
//! and every `#anchor` names a heading of its file, so a page that moves or a heading that
//! is renamed fails here rather than on a reader. Links are Markdown's inline form
//! (`[text](path)`, `[text](path#anchor)`, `![alt](image.png)`, `[text](#anchor)`) and
//! reference definitions (`[name]: path`), outside code blocks and code spans. An anchor
//! is checked against GitHub's slugs of the target's headings: lowercase, punctuation
//! other than `-` and `_` dropped, each space a `-`, and `-1`, `-2`, ... after a repeated
//! slug. External links (`http:`, `https:`, `mailto:`) are not checked.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every `docs/*.md`, relative to the root.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    let docs = std::fs::read_dir(root().join("docs")).expect("docs/ is readable");
    let mut md: Vec<PathBuf> = docs
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| Path::new("docs").join(p.file_name().expect("a file name")))
        .collect();
    md.sort();
    pages.extend(md);
    pages
}

/// The lines of `text` outside fenced code blocks, with their 1-based numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| t.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(f), Some(m)) if f == m => fence = None,
            (None, None) => out.push((i + 1, line)),
            _ => {}
        }
    }
    out
}

/// `line` without its code spans (`` `...` ``), which hold no links.
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The link targets of one line of prose.
fn targets(line: &str) -> Vec<String> {
    let inline = regex::Regex::new(r#"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)"#)
        .expect("a valid pattern");
    let reference =
        regex::Regex::new(r"^\s*\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)").expect("a valid pattern");
    let line = without_code(line);
    let mut out: Vec<String> = inline
        .captures_iter(&line)
        .map(|c| c[1].to_string())
        .collect();
    out.extend(reference.captures_iter(&line).map(|c| c[1].to_string()));
    out
}

/// GitHub's anchor for a heading's text (before the `-N` of a repeated slug).
fn slug(heading: &str) -> String {
    // A link in a heading shows its text only.
    let link = regex::Regex::new(r"\[([^\]]*)\]\([^)]*\)").expect("a valid pattern");
    let text = link.replace_all(heading, "$1");
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown page's headings (ATX `#` to `######`, outside code blocks).
fn anchors(text: &str) -> HashSet<String> {
    let mut seen: HashSet<String> = HashSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim().trim_end_matches('#'));
        let mut s = base.clone();
        let mut n = 0;
        while seen.contains(&s) {
            n += 1;
            s = format!("{base}-{n}");
        }
        seen.insert(s);
    }
    seen
}

/// `path` with `.` and `..` resolved lexically; `None` when it climbs out of the root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// What is wrong with link `target` of page `page` (relative to `root`), if anything.
fn check_link(root: &Path, page: &Path, target: &str) -> Option<String> {
    let lower = target.to_ascii_lowercase();
    if ["http://", "https://", "mailto:"]
        .iter()
        .any(|s| lower.starts_with(s))
    {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        page.to_path_buf()
    } else {
        let dir = page.parent().unwrap_or(Path::new(""));
        match normalize(&dir.join(path)) {
            Some(f) => f,
            None => return Some(format!("{target}: outside the repository")),
        }
    };
    let full = root.join(&file);
    if !full.exists() {
        return Some(format!("{target}: no file {}", file.display()));
    }
    let anchor = anchor?;
    if full.extension().is_none_or(|x| x != "md") {
        return Some(format!(
            "{target}: an anchor into {}, which is not a Markdown page",
            file.display()
        ));
    }
    let text = std::fs::read_to_string(&full).ok()?;
    if anchors(&text).contains(anchor) {
        None
    } else {
        Some(format!(
            "{target}: no heading of {} has the anchor #{anchor}",
            file.display()
        ))
    }
}

/// Every broken link of `page` (relative to `root`), as `page:line: why`.
fn broken_links(root: &Path, page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join(page))
        .unwrap_or_else(|e| panic!("reading {}: {e}", page.display()));
    let mut out = Vec::new();
    for (n, line) in prose_lines(&text) {
        for t in targets(line) {
            if let Some(why) = check_link(root, page, &t) {
                out.push(format!("{}:{n}: {why}", page.display()));
            }
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_readme_and_docs_resolves() {
    let root = root();
    let pages = pages();
    assert!(
        pages.len() > 5,
        "expected README.md and the docs/ pages, found {pages:?}"
    );
    let broken: Vec<String> = pages.iter().flat_map(|p| broken_links(&root, p)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn a_missing_file_or_heading_is_reported() {
    let dir = std::env::temp_dir().join(format!("tcq-docs-links-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("docs")).expect("a temporary directory");
    let page = "# Top\n\n## Where to add X\n\n## Where to add X\n\n### `COPY` (text), step 1\n\n\
        [ok](other.md) [ok](other.md#a-b_c) [ok](#where-to-add-x-1) [ok](#copy-text-step-1)\n\
        [web](https://example.com/nowhere.md) ![img](../README.md)\n\
        [gone](missing.md)\n\
        [bad anchor](other.md#nowhere)\n\
        `[in code](missing-too.md)`\n\
        ```\n[in a block](missing-three.md)\n```\n\
        [ref]: ../nowhere.md\n";
    std::fs::write(dir.join("docs/page.md"), page).expect("write");
    std::fs::write(dir.join("docs/other.md"), "# A: b_c\n").expect("write");
    std::fs::write(dir.join("README.md"), "# R\n").expect("write");
    let broken = broken_links(&dir, Path::new("docs/page.md"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        broken,
        vec![
            "docs/page.md:11: missing.md: no file docs/missing.md".to_string(),
            "docs/page.md:12: other.md#nowhere: no heading of docs/other.md has the anchor #nowhere"
                .to_string(),
            "docs/page.md:17: ../nowhere.md: no file nowhere.md".to_string(),
        ]
    );
}
