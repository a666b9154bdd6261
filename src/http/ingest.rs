//! `POST /ingest/<stream>`: NDJSON or CSV rows into a stream over HTTP, with the wire's
//! users and privileges.
//!
//! - Authentication: without a password file, as the console (no password); with one,
//!   HTTP Basic as any role that may log in, checked against its SCRAM verifier (a
//!   superuser is not needed, unlike the console's pages).
//! - Privileges: INSERT on the stream (its owner, a superuser, or a GRANT), as `INSERT` and
//!   `COPY` over the wire (403 otherwise).
//! - The body: `Content-Type: application/x-ndjson` (or `application/json`,
//!   `application/jsonl`: one JSON object a line, mapped to columns by name) or `text/csv`
//!   (fields in column order); `?format=json|csv` overrides it, `?header=true` skips a CSV
//!   header line, `?timestamp_format=epoch_s|epoch_ms|epoch_us` reads the
//!   TIMESTAMPCOLUMN as numbers. At most `ingest_bytes_max` bytes (413 beyond).
//! - All or nothing, as a COPY: a bad line refuses the whole body (400 with the line and
//!   the SQLSTATE COPY gives the same fault in the JSON error: 22003 out of range, 22008
//!   a bad date, 22021 a NUL, 22P02 text that is no value or no JSON, 22P04 a CSV line of the
//!   wrong field count or a quote left open, 23502 no TIMESTAMPCOLUMN value); an accepted body answers `{"rows": n}` once
//!   its rows are in the stream (on disk per `--sync` for an archived stream).
//! - Other answers: 401 without valid credentials, 404 for a stream that does not exist,
//!   415 for a body of another type.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::{error_response, Console};
use crate::connect::format::{batch_of, Decoder};
use crate::connect::spec::{FormatKind, FormatSpec, TimeFormat};

/// The query string of `POST /ingest/<stream>`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct IngestQuery {
    format: Option<String>,
    header: Option<bool>,
    timestamp_format: Option<String>,
}

/// `POST /ingest/{stream}`.
pub(crate) async fn ingest(
    State(console): State<Arc<Console>>,
    Path(stream): Path<String>,
    Query(q): Query<IngestQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(user) = console.authenticated(headers.get(header::AUTHORIZATION), false) else {
        return super::unauthorized();
    };
    let engine = console.engine();
    let superuser = engine
        .roles()
        .is_superuser(&user, console.options.passwords.is_none());
    let Ok(target) = engine.catalog.stream(&stream) else {
        return error_response(
            StatusCode::NOT_FOUND,
            format!("stream \"{stream}\" does not exist"),
            "42P01",
        );
    };
    if let Err(e) = engine.roles().check(
        &user,
        superuser,
        "stream",
        &stream,
        crate::sql::Privileges::INSERT,
    ) {
        return error_response(StatusCode::FORBIDDEN, e.to_string(), "42501");
    }
    let spec = match format_of(&q, &headers) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let decoder = Decoder::new(&target.columns, target.ts_col, spec);
    // A CSV header is the body's first line.
    let (data, first_line): (&[u8], usize) = match memchr::memchr(b'\n', &body) {
        Some(i) if decoder.spec().header && decoder.spec().kind == FormatKind::Csv => {
            (&body[i + 1..], 2)
        }
        _ => (&body, 1),
    };
    let mut rows = Vec::new();
    if let Err(e) = decoder.lines(data, first_line, crate::time::now_us(), &mut rows) {
        return error_response(StatusCode::BAD_REQUEST, e.text, e.sqlstate);
    }
    let n = rows.len();
    if n > 0 {
        let batch = batch_of(&decoder, &mut rows);
        if let Err(e) = engine
            .catalog
            .ingest_from_source(&target, batch.into(), Vec::new())
            .await
        {
            return super::engine_error(&e);
        }
    }
    (StatusCode::OK, axum::Json(serde_json::json!({ "rows": n }))).into_response()
}

/// The format of a body, from the query string or its Content-Type. Errors: 415, or 400
/// for a bad `timestamp_format`.
fn format_of(q: &IngestQuery, headers: &HeaderMap) -> Result<FormatSpec, Box<Response>> {
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
    let kind = match (q.format.as_deref(), media.as_deref()) {
        (Some("csv"), _) | (None, Some("text/csv")) => FormatKind::Csv,
        (Some("json"), _)
        | (None, Some("application/x-ndjson" | "application/json" | "application/jsonl")) => {
            FormatKind::Json
        }
        _ => {
            return Err(Box::new(error_response(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send NDJSON (Content-Type: application/x-ndjson) or CSV (text/csv), or say ?format=json|csv".into(),
                "0A000",
            )))
        }
    };
    let time = match q.timestamp_format.as_deref() {
        None | Some("iso8601") => TimeFormat::Iso8601,
        Some("epoch_s") => TimeFormat::EpochSeconds,
        Some("epoch_ms") => TimeFormat::EpochMillis,
        Some("epoch_us") => TimeFormat::EpochMicros,
        Some(other) => {
            return Err(Box::new(error_response(
                StatusCode::BAD_REQUEST,
                format!("timestamp_format \"{other}\": iso8601, epoch_s, epoch_ms or epoch_us"),
                "22023",
            )))
        }
    };
    Ok(FormatSpec {
        kind,
        header: q.header.unwrap_or(false),
        time,
        ..FormatSpec::default()
    })
}
