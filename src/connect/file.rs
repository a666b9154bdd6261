//! `connector = 'file'`: a directory of CSV, NDJSON or Parquet files, read in name order,
//! then new files as they appear; the last file is followed as it grows (`tail -f`).
//!
//! The position is `{"file": name, "offset": bytes (rows for Parquet), "line": n}`: the
//! place after the last delivered record. Files named before it are done. A file is left
//! for the next one only once a later file exists, so a writer appends to the last file
//! and starts another when it is done; a last line without its line end waits for it
//! until then. A file that shrinks below the position (replaced) is read again from its
//! start. A Parquet file is read once its footer is readable (one being written is waited
//! for while it is the last file, and reported and skipped otherwise).

use std::io::{Read, Seek, SeekFrom};
use std::time::Duration;

use serde_json::json;

use super::format::{CsvSplitter, Row};
use super::runner::{Ctx, Halt};
use super::spec::{FileSpec, FormatKind};

/// Bytes read from a file at once.
const CHUNK_BYTES: usize = 1 << 20;
/// The longest record (a line, or a CSV record with quoted line breaks) a file may hold,
/// as an HTTP ingest body; a longer one leaves the source `retrying` at it.
const RECORD_BYTES_MAX: usize = 64 << 20;
/// How often a caught-up source looks for more.
const POLL: Duration = Duration::from_millis(100);

/// Where the source is: the file, the offset after the last record, its line count.
#[derive(Clone, Debug, Default, PartialEq)]
struct At {
    file: String,
    offset: u64,
    line: u64,
}

impl At {
    fn json(&self) -> serde_json::Value {
        json!({"file": self.file, "offset": self.offset, "line": self.line})
    }
}

/// Read `spec`'s directory until stopped.
pub(crate) async fn run(spec: &FileSpec, ctx: &mut Ctx) -> Result<(), Halt> {
    let mut at = ctx
        .position()
        .map(|p| At {
            file: p["file"].as_str().unwrap_or("").to_string(),
            offset: p["offset"].as_u64().unwrap_or(0),
            line: p["line"].as_u64().unwrap_or(0),
        })
        .unwrap_or_default();
    let mut splitter = CsvSplitter::new(ctx.decoder.spec().delimiter);
    loop {
        ctx.gate().await?;
        let files = list(spec).map_err(Halt::Retry)?;
        ctx.connected();
        let Some(i) = files.iter().position(|(n, _)| *n >= at.file) else {
            ctx.set_lag(Some(0));
            ctx.sleep(POLL).await;
            continue;
        };
        let (name, len) = &files[i];
        if *name != at.file {
            at = At {
                file: name.clone(),
                ..At::default()
            };
        }
        let later = files.len() > i + 1;
        let progressed = match ctx.decoder.spec().kind {
            FormatKind::Parquet => parquet_step(spec, ctx, &mut at, later).await?,
            _ => {
                if *len < at.offset {
                    tracing::warn!(
                        "source of stream {}: {} shrank below the position; reading it again from its start",
                        ctx.stream.name,
                        name
                    );
                    at.offset = 0;
                    at.line = 0;
                }
                let lag: u64 = (len - at.offset) + files[i + 1..].iter().map(|f| f.1).sum::<u64>();
                ctx.set_lag(Some(lag as i64));
                text_step(spec, ctx, &mut at, later, &mut splitter).await?
            }
        };
        if progressed {
            continue;
        }
        if later {
            // Done with this file: the next one starts at its beginning.
            at = At {
                file: files[i + 1].0.clone(),
                ..At::default()
            };
            ctx.advance(at.json());
        } else {
            ctx.sleep(POLL).await;
        }
    }
}

/// The directory's files matching the pattern, by name, with their sizes.
fn list(spec: &FileSpec) -> Result<Vec<(String, u64)>, String> {
    let dir = std::fs::read_dir(&spec.dir)
        .map_err(|e| format!("cannot read directory {}: {e}", spec.dir.display()))?;
    let mut files: Vec<(String, u64)> = dir
        .filter_map(|e| {
            let e = e.ok()?;
            let meta = e.metadata().ok()?;
            let name = e.file_name().into_string().ok()?;
            let wanted = meta.is_file()
                && !name.starts_with('.')
                && spec.pattern.as_deref().is_none_or(|p| glob(p, &name));
            wanted.then_some((name, meta.len()))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Whether `name` matches `pattern` (`*` any run of characters, `?` one).
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Read the records of `at.file` after `at.offset` (at most a chunk), deliver them, move
/// `at`. False when there was nothing complete to read.
async fn text_step(
    spec: &FileSpec,
    ctx: &mut Ctx,
    at: &mut At,
    later: bool,
    splitter: &mut CsvSplitter,
) -> Result<bool, Halt> {
    let path = spec.dir.join(&at.file);
    let mut chunk = CHUNK_BYTES;
    let (buf, at_end, consumed, records) = loop {
        let mut buf = Vec::with_capacity(chunk);
        let read = std::fs::File::open(&path).and_then(|mut f| {
            f.seek(SeekFrom::Start(at.offset))?;
            f.take(chunk as u64).read_to_end(&mut buf)
        });
        if let Err(e) = read {
            return Err(Halt::Retry(format!("cannot read {}: {e}", path.display())));
        }
        // The input is complete when the file is done (a later one exists) and this chunk
        // reaches its end.
        let at_end = later && buf.len() < chunk;
        let (consumed, records) = split_records(ctx, at, &buf, at_end, splitter);
        if consumed > 0 || buf.len() < chunk {
            break (buf, at_end, consumed, records);
        }
        // A full chunk without one whole record: a longer record is read whole (up to
        // RECORD_BYTES_MAX), never skipped with the rest of its file.
        if chunk >= RECORD_BYTES_MAX {
            return Err(Halt::Retry(format!(
                "file {} line {}: a record longer than {} MiB",
                at.file,
                at.line + 1,
                RECORD_BYTES_MAX >> 20
            )));
        }
        chunk = (chunk * 4).min(RECORD_BYTES_MAX);
    };
    if consumed == 0 {
        return Ok(false);
    }
    let lines = buf[..consumed].iter().filter(|&&b| b == b'\n').count() as u64;
    let mut builder = ctx.decoder.builder();
    let mut messages = 0;
    let mut before = 0;
    for (end, line, r) in records {
        match r {
            Ok((mut row, t)) => {
                builder.push_row(&mut row, t);
                messages += 1;
            }
            Err(e) if e.is_empty() => {} // the header
            Err(e) => {
                if let Err(halt) = ctx.bad(&format!("file {} line {line}", at.file), &e) {
                    // Stopped at this line: what came before it is delivered, and the
                    // source resumes at the line itself.
                    at.offset += before as u64;
                    at.line = line - 1;
                    ctx.deliver(builder.finish(), messages, Some(at.json()))
                        .await?;
                    return Err(halt);
                }
            }
        }
        before = end;
    }
    at.offset += consumed as u64;
    at.line += lines + u64::from(at_end && consumed == buf.len() && !buf.ends_with(b"\n"));
    ctx.deliver(builder.finish(), messages, Some(at.json()))
        .await?;
    Ok(true)
}

/// The records of `buf` (read at `at`; `at_end`: nothing follows it), each with the offset
/// after it, its line and its row (an empty error for a header line), and the bytes they
/// take.
#[allow(clippy::type_complexity)]
fn split_records(
    ctx: &Ctx,
    at: &At,
    buf: &[u8],
    at_end: bool,
    splitter: &mut CsvSplitter,
) -> (usize, Vec<(usize, u64, Result<Row, String>)>) {
    let mut records: Vec<(usize, u64, Result<Row, String>)> = Vec::new();
    let arrival = crate::time::now_us();
    let header_pending = spec_header(ctx) && at.offset == 0;
    let decoder = &ctx.decoder;
    let consumed = match decoder.spec().kind {
        FormatKind::Csv => splitter.records(buf, at_end, &mut |fields, line, end| {
            let line = at.line + line as u64;
            if !(header_pending && line == 1) {
                records.push((
                    end,
                    line,
                    decoder.csv(fields, None, arrival).map_err(String::from),
                ));
            } else {
                records.push((end, line, Err(String::new())));
            }
            records.len() < super::format::BATCH_ROWS
        }),
        _ => json_lines(buf, at_end, at.line, |end, line, text| {
            records.push((
                end,
                line,
                decoder.json(text, None, arrival).map_err(String::from),
            ));
            records.len() < super::format::BATCH_ROWS
        }),
    };
    (consumed, records)
}

fn spec_header(ctx: &Ctx) -> bool {
    ctx.decoder.spec().header
}

/// Hand each complete line of `buf` (`at_end`: a last line without a line end too) to
/// `each` (the offset after it, its line number after `line0`, its bytes) until `each`
/// returns false; empty lines are passed over. Returns the bytes consumed.
fn json_lines(
    buf: &[u8],
    at_end: bool,
    line0: u64,
    mut each: impl FnMut(usize, u64, &[u8]) -> bool,
) -> usize {
    let mut start = 0;
    let mut line = line0;
    while start < buf.len() {
        let end = match memchr::memchr(b'\n', &buf[start..]) {
            Some(i) => start + i + 1,
            None if at_end => buf.len(),
            None => break,
        };
        line += 1;
        let text = &buf[start..end];
        let go = text.iter().all(u8::is_ascii_whitespace) || each(end, line, text);
        start = end;
        if !go {
            break;
        }
    }
    start
}

/// Read the rows of Parquet file `at.file` after row `at.offset` (a batch), deliver them.
/// False when there was nothing to read (done, or not readable yet).
async fn parquet_step(
    spec: &FileSpec,
    ctx: &mut Ctx,
    at: &mut At,
    later: bool,
) -> Result<bool, Halt> {
    let path = spec.dir.join(&at.file);
    let rows = match super::parquet_rows::read(&path, at.offset, &ctx.decoder) {
        Ok(r) => r,
        Err(e) if later => {
            ctx.bad(&format!("file {}", at.file), &e)?;
            return Ok(false);
        }
        // The last file may still be being written.
        Err(_) => return Ok(false),
    };
    let Some((rows, bad)) = rows else {
        return Ok(false);
    };
    let n = (rows.len() + bad.len()) as u64;
    for (row, why) in bad {
        ctx.bad(
            &format!("file {} row {}", at.file, at.offset + row as u64 + 1),
            &why,
        )?;
    }
    let messages = rows.len() as u64;
    let mut rows = rows;
    let batch = super::format::batch_of(&ctx.decoder, &mut rows);
    at.offset += n;
    at.line = at.offset;
    ctx.deliver(batch, messages, Some(at.json())).await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_names() {
        assert!(glob("*.csv", "a.csv"));
        assert!(!glob("*.csv", "a.csv.tmp"));
        assert!(glob("part-??.json", "part-07.json"));
        assert!(glob("*", "x"));
        assert!(!glob("a*b", "ac"));
    }

    #[test]
    fn json_lines_wait_for_a_line_end() {
        let mut got = Vec::new();
        let n = json_lines(
            b"{\"a\":1}\n\n{\"a\":2}\n{\"a\"",
            false,
            10,
            |end, line, t| {
                got.push((end, line, t.len()));
                true
            },
        );
        assert_eq!(got, vec![(8, 11, 8), (17, 13, 8)]);
        assert_eq!(n, 17);
    }
}
