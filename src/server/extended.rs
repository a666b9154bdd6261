//! The extended query protocol: Parse, Bind, Describe, Execute, Close, Sync.
//!
//! Statements and portals live in the connection's [`Conn`], not in pgwire's portal store,
//! because a portal here may hold a live [`Subscription`](crate::engine::Subscription): an
//! Execute with a row limit sends that many rows and PortalSuspended, and the next Execute
//! resumes the same query where it stopped (asyncpg cursors, JDBC `fetchSize`, psql
//! `FETCH_COUNT`). Execute with no limit streams until the query ends, flushing whenever
//! the query goes idle, like the simple protocol.
//!
//! Portals die with their transaction: at Sync outside a transaction block every portal
//! is dropped (and with it any query it was streaming), as PostgreSQL drops them at the
//! end of the implicit transaction.

use std::collections::VecDeque;

use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::data::{NoData, ParameterDescription};
use pgwire::messages::extendedquery::{
    Bind, BindComplete, Close, CloseComplete, Describe, Execute, Parse, ParseComplete,
    PortalSuspended, TARGET_TYPE_BYTE_PORTAL, TARGET_TYPE_BYTE_STATEMENT,
};
use pgwire::messages::response::{EmptyQueryResponse, TransactionStatus};
use pgwire::messages::PgWireBackendMessage;

use super::conn::{pump, Conn, ConnSlot, Portal, PortalState, Prepared, PumpEnd, RowSink};
use super::query::{copy_out, execute, ready, start_copy_in};
use super::wire::{self, Wire};
use crate::engine::memory::{MemoryKind, Reservation};
use crate::engine::Outcome;
use crate::error::{Error, Result};
use crate::types::{CatalogType, Column, DataType, Value};

/// The type OID of `oid`.
const OID: u32 = 26;

/// A parameter's type: what its value is held as, and the catalog type clients see when
/// it has one (an `oid` is four bytes in binary, an `oid[]` an `array_send`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ParamType {
    held: DataType,
    catalog: Option<CatalogType>,
}

impl ParamType {
    /// The type OID ParameterDescription announces.
    fn type_oid(&self) -> u32 {
        self.catalog.map_or_else(|| self.held.oid(), |t| t.oid())
    }
}

/// The parameter types of a description; a client's `oid` hint makes a parameter an oid.
fn param_types_of(d: &crate::engine::Description, hint_oids: &[u32]) -> Vec<ParamType> {
    d.params
        .iter()
        .enumerate()
        .map(|(i, held)| ParamType {
            held: *held,
            catalog: match d.catalog_params.iter().find(|p| p.0 == i) {
                Some((_, t)) => Some(*t),
                None => (hint_oids.get(i) == Some(&OID)).then_some(CatalogType::Oid),
            },
        })
        .collect()
}

/// The tcq type for a parameter type OID given in Parse; `None` lets the server infer it.
fn hint_type(oid: u32) -> Option<DataType> {
    Some(match oid {
        16 => DataType::Bool,
        21 => DataType::Int2,
        23 => DataType::Int4,
        20 => DataType::Int8,
        700 => DataType::Float4,
        701 => DataType::Float8,
        1700 => DataType::Numeric,
        25 => DataType::Text,
        1043 => DataType::Varchar(None),
        1114 => DataType::Timestamp,
        1184 => DataType::TimestampTz,
        1186 => DataType::Interval,
        // An oid parameter is held as its bigint value (and decoded as an oid).
        OID => DataType::Int8,
        _ => return None,
    })
}

/// Record an engine error: fail the transaction block and hand pgwire the error to send
/// (it then discards messages until Sync).
fn engine_error(wire: &mut dyn Wire, conn: &mut Conn, e: &Error) -> PgWireError {
    tracing::debug!(pid = conn.session.pid(), "error: {e}");
    conn.session.fail_transaction();
    wire.set_tx(wire::session_tx(&conn.session));
    wire::user_error(e)
}

/// Handle Parse: split and parse the text (one statement at most) and store it by name.
pub(crate) async fn on_parse(wire: &mut dyn Wire, slot: &ConnSlot, msg: Parse) -> PgWireResult<()> {
    let mut guard = slot.conn.lock().await;
    let conn = &mut *guard;
    let name = msg.name.unwrap_or_default();
    if !name.is_empty() && conn.statements.contains_key(&name) {
        conn.session.fail_transaction();
        return Err(wire::server_error(
            "42P05",
            format!("prepared statement \"{name}\" already exists"),
        ));
    }
    tracing::debug!(pid = conn.session.pid(), statement = %name, query = %crate::connect::options::redact_sql(&msg.query), "parse");
    let prepared =
        super::guard::check_text(&msg.query).and_then(|()| conn.session.prepare(&msg.query));
    let mut stmts = match prepared {
        Ok(stmts) => stmts,
        Err(e) => return Err(engine_error(wire, conn, &e)),
    };
    if stmts.len() > 1 {
        conn.session.fail_transaction();
        return Err(wire::server_error(
            "42601",
            "cannot insert multiple commands into a prepared statement",
        ));
    }
    if let Err(e) = check_prepared_limits(conn, &name, msg.query.len()) {
        conn.session.fail_transaction();
        return Err(e);
    }
    // The unnamed statement being replaced gives its bytes back first.
    if name.is_empty() {
        conn.statements.remove(&name);
    }
    let mut memory = Reservation::new(conn.session.engine.memory(), MemoryKind::PreparedStatements);
    let charge = crate::engine::memory::prepared_statement_bytes(msg.query.len());
    if let Err(refused) = memory.resize(charge) {
        return Err(engine_error(
            wire,
            conn,
            &refused.error("a prepared statement"),
        ));
    }
    for (written, cut) in stmts.iter().flat_map(|s| s.truncated_identifiers()) {
        wire.feed(wire::truncation_notice(written, cut)).await?;
    }
    let hints = msg.type_oids.iter().map(|oid| hint_type(*oid)).collect();
    conn.statements.insert(
        name,
        Prepared {
            stmt: stmts.pop(),
            hints,
            hint_oids: msg.type_oids.clone(),
            text_bytes: msg.query.len(),
            _memory: memory,
        },
    );
    wire.feed(PgWireBackendMessage::ParseComplete(ParseComplete::new()))
        .await
}

/// Refuse a Parse that would take the connection past `prepared_statements_max` named
/// statements (54000) or `prepared_statement_bytes_max` bytes of statement text (53200).
/// The statement being replaced (the unnamed one) does not count.
fn check_prepared_limits(conn: &Conn, name: &str, text_bytes: usize) -> PgWireResult<()> {
    let limits = conn.session.engine.limits();
    let others = conn.statements.iter().filter(|(n, _)| n.as_str() != name);
    let (count, bytes) = others.fold((0usize, 0usize), |(c, b), (n, p)| {
        (c + usize::from(!n.is_empty()), b + p.text_bytes)
    });
    if !name.is_empty() && count >= limits.prepared_statements_max {
        return Err(wire::server_error(
            "54000",
            format!(
                "more than {} prepared statements on one connection (prepared_statements_max)",
                limits.prepared_statements_max
            ),
        ));
    }
    if bytes + text_bytes > limits.prepared_statement_bytes_max {
        return Err(wire::server_error(
            "53200",
            format!(
                "prepared statements on one connection would hold more than {} bytes of SQL text (prepared_statement_bytes_max); deallocate some first",
                limits.prepared_statement_bytes_max
            ),
        ));
    }
    Ok(())
}

/// The parameter types of a prepared statement: the client's hints where complete, else
/// what the engine infers.
fn param_types(conn: &mut Conn, name: &str) -> Result<Vec<ParamType>> {
    let prepared = conn
        .statements
        .get(name)
        .ok_or_else(|| Error::Internal(format!("prepared statement \"{name}\" vanished")))?;
    let Some(stmt) = &prepared.stmt else {
        return Ok(Vec::new());
    };
    let hinted: Option<Vec<DataType>> = prepared.hints.iter().copied().collect();
    match hinted {
        Some(types) if !types.is_empty() => Ok(types
            .iter()
            .enumerate()
            .map(|(i, held)| ParamType {
                held: *held,
                catalog: (prepared.hint_oids.get(i) == Some(&OID)).then_some(CatalogType::Oid),
            })
            .collect()),
        _ => {
            let hint_oids = prepared.hint_oids.clone();
            let d = conn.session.describe(stmt, &prepared.hints)?;
            Ok(param_types_of(&d, &hint_oids))
        }
    }
}

/// Decode the bound parameters: text format through the types' input functions, binary
/// through their `recv` encodings.
fn decode_params(msg: &Bind, types: &[ParamType]) -> Result<Vec<Value>> {
    msg.parameters
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            let Some(bytes) = raw else {
                return Ok(Value::Null);
            };
            let ParamType { held: ty, catalog } = types[i];
            let binary = match msg.parameter_format_codes.as_slice() {
                [] => false,
                [one] => *one == 1,
                codes => codes.get(i).copied() == Some(1),
            };
            if let Some(t) = catalog {
                super::encode::parse_catalog(bytes, t, binary)
            } else if binary {
                super::encode::parse_binary(bytes, ty)
            } else {
                let text = std::str::from_utf8(bytes).map_err(|_| {
                    Error::CharacterNotInRepertoire(
                        "invalid byte sequence for encoding \"UTF8\"".into(),
                    )
                })?;
                super::encode::parse_text(text, ty)
            }
        })
        .collect()
}

/// Handle Bind: decode the parameters and create the portal.
pub(crate) async fn on_bind(wire: &mut dyn Wire, slot: &ConnSlot, msg: Bind) -> PgWireResult<()> {
    let mut guard = slot.conn.lock().await;
    let conn = &mut *guard;
    let stmt_name = msg.statement_name.clone().unwrap_or_default();
    let portal_name = msg.portal_name.clone().unwrap_or_default();
    let Some(prepared) = conn.statements.get(&stmt_name) else {
        conn.session.fail_transaction();
        return Err(wire::server_error(
            "26000",
            format!("prepared statement \"{stmt_name}\" does not exist"),
        ));
    };
    if !portal_name.is_empty() && conn.portals.contains_key(&portal_name) {
        conn.session.fail_transaction();
        return Err(wire::server_error(
            "42P03",
            format!("cursor \"{portal_name}\" already exists"),
        ));
    }
    let stmt = prepared.stmt.clone();
    let params = if msg.parameters.is_empty() {
        Vec::new()
    } else {
        let types = match param_types(conn, &stmt_name) {
            Ok(types) => types,
            Err(e) => return Err(engine_error(wire, conn, &e)),
        };
        if types.len() != msg.parameters.len() {
            conn.session.fail_transaction();
            return Err(wire::server_error(
                "08P01",
                format!(
                    "bind message supplies {} parameters, but prepared statement \"{stmt_name}\" requires {}",
                    msg.parameters.len(),
                    types.len()
                ),
            ));
        }
        match decode_params(&msg, &types) {
            Ok(values) => values,
            Err(e) => return Err(engine_error(wire, conn, &e)),
        }
    };
    let portal = Portal {
        stmt,
        params,
        formats: msg.result_column_format_codes,
        state: PortalState::Ready,
    };
    conn.portals.insert(portal_name, portal);
    wire.feed(PgWireBackendMessage::BindComplete(BindComplete::new()))
        .await
}

/// Handle Describe of a statement (ParameterDescription + RowDescription/NoData) or of a
/// portal (RowDescription in the portal's result formats, or NoData).
pub(crate) async fn on_describe(
    wire: &mut dyn Wire,
    slot: &ConnSlot,
    msg: Describe,
) -> PgWireResult<()> {
    let mut guard = slot.conn.lock().await;
    let conn = &mut *guard;
    let name = msg.name.unwrap_or_default();
    match msg.target_type {
        TARGET_TYPE_BYTE_STATEMENT => {
            let Some(prepared) = conn.statements.get(&name) else {
                conn.session.fail_transaction();
                return Err(wire::server_error(
                    "26000",
                    format!("prepared statement \"{name}\" does not exist"),
                ));
            };
            let hint_oids = prepared.hint_oids.clone();
            let (params, columns) = match &prepared.stmt {
                None => (Vec::new(), None),
                Some(stmt) => match conn.session.describe(stmt, &prepared.hints) {
                    Ok(d) => (param_types_of(&d, &hint_oids), d.columns),
                    Err(e) => return Err(engine_error(wire, conn, &e)),
                },
            };
            let oids = params.iter().map(ParamType::type_oid).collect();
            wire.feed(PgWireBackendMessage::ParameterDescription(
                ParameterDescription::new(oids),
            ))
            .await?;
            send_columns(wire, columns.as_deref(), &[]).await
        }
        TARGET_TYPE_BYTE_PORTAL => {
            let Some(portal) = conn.portals.get(&name) else {
                // A cursor made by SQL DECLARE is a portal too (psycopg's named cursors
                // describe it before fetching).
                if let Some(columns) = conn.session.cursor_columns(&name) {
                    return send_columns(wire, Some(&columns), &[]).await;
                }
                conn.session.fail_transaction();
                return Err(wire::server_error(
                    "34000",
                    format!("portal \"{name}\" does not exist"),
                ));
            };
            let columns = match (&portal.state, &portal.stmt) {
                (PortalState::Stream { sub, .. }, _) => Some(sub.columns().to_vec()),
                (PortalState::Rows { columns, .. }, _) => Some(columns.clone()),
                (_, None) => None,
                (_, Some(stmt)) => {
                    let hints: Vec<Option<DataType>> =
                        portal.params.iter().map(|v| v.data_type()).collect();
                    match conn.session.describe(stmt, &hints) {
                        Ok(d) => d.columns,
                        Err(e) => return Err(engine_error(wire, conn, &e)),
                    }
                }
            };
            let formats = portal.formats.clone();
            send_columns(wire, columns.as_deref(), &formats).await
        }
        other => Err(wire::server_error(
            "08P01",
            format!("invalid DESCRIBE message subtype {other}"),
        )),
    }
}

async fn send_columns(
    wire: &mut dyn Wire,
    columns: Option<&[Column]>,
    formats: &[i16],
) -> PgWireResult<()> {
    match columns {
        None => wire.feed(PgWireBackendMessage::NoData(NoData::new())).await,
        Some(columns) => {
            let formats = wire::field_formats(formats, columns);
            wire.feed(wire::row_description(columns, &formats)).await
        }
    }
}

/// Handle Execute: run the portal (first time) and send up to `max_rows` rows (0 = all).
pub(crate) async fn on_execute(
    wire: &mut dyn Wire,
    slot: &ConnSlot,
    msg: Execute,
) -> PgWireResult<()> {
    let mut guard = slot.conn.lock().await;
    let conn = &mut *guard;
    let name = msg.name.unwrap_or_default();
    let limit = msg.max_rows.max(0) as u64;
    let Some(mut portal) = conn.portals.remove(&name) else {
        conn.session.fail_transaction();
        return Err(wire::server_error(
            "34000",
            format!("portal \"{name}\" does not exist"),
        ));
    };
    let mut watch = conn.start_query().await;
    if matches!(portal.state, PortalState::Ready) {
        let Some(stmt) = portal.stmt.clone() else {
            conn.portals.insert(name, portal);
            return wire
                .feed(PgWireBackendMessage::EmptyQueryResponse(
                    EmptyQueryResponse::new(),
                ))
                .await;
        };
        conn.report_activity(Some(stmt.text()));
        let outcome = match execute(conn, &stmt, &portal.params, &mut watch).await? {
            Ok(outcome) => outcome,
            Err(e) => return Err(engine_error(wire, conn, &e)),
        };
        portal.state = match outcome {
            Outcome::Command(tag) => {
                wire.feed(wire::complete(&tag)).await?;
                PortalState::Done {
                    command: command_word(&tag),
                }
            }
            Outcome::Rows {
                columns,
                rows,
                tag,
                notices,
            } => {
                for n in &notices {
                    wire.feed(wire::coded_notice_message(n)).await?;
                }
                PortalState::Rows {
                    columns,
                    rows: rows.into(),
                    tag,
                }
            }
            Outcome::Stream(sub) => PortalState::Stream {
                sub,
                pending: VecDeque::new(),
            },
            Outcome::CopyIn(sink) => {
                start_copy_in(wire, conn, sink, VecDeque::new(), true).await?;
                return Ok(());
            }
            Outcome::CopyOut {
                mut subscription,
                options,
            } => {
                if let Err(e) = copy_out(wire, &mut subscription, &options, &mut watch).await? {
                    return Err(engine_error(wire, conn, &e));
                }
                PortalState::Done {
                    command: "COPY".into(),
                }
            }
        };
    }
    let result = send_portal_rows(wire, &mut portal, limit, &mut watch).await?;
    conn.portals.insert(name, portal);
    result.map_err(|e| engine_error(wire, conn, &e))
}

/// The command word of a tag (`SELECT 3` -> `SELECT`).
fn command_word(tag: &str) -> String {
    tag.split(' ').next().unwrap_or(tag).to_string()
}

/// The row count at the end of a tag (`SELECT 3` -> 3), if it has one.
fn tag_count(tag: &str) -> Option<u64> {
    tag.rsplit(' ').next()?.parse().ok()
}

/// Send the next rows of an executed portal: PortalSuspended when the limit stopped it,
/// CommandComplete when it finished.
async fn send_portal_rows(
    wire: &mut dyn Wire,
    portal: &mut Portal,
    limit: u64,
    watch: &mut super::conn::CancelWatch,
) -> PgWireResult<Result<()>> {
    match &mut portal.state {
        PortalState::Ready => Ok(Ok(())),
        PortalState::Done { command } => {
            // Executing a finished portal again completes with no rows, as PostgreSQL does.
            if command == "SELECT" || command == "FETCH" {
                wire.feed(wire::complete_rows(command, 0)).await?;
            }
            Ok(Ok(()))
        }
        PortalState::Rows { columns, rows, tag } => {
            let binary = wire::field_formats(&portal.formats, columns);
            let mut scratch = String::new();
            let mut sent = 0u64;
            while let Some(row) = rows.pop_front() {
                if limit > 0 && sent >= limit {
                    rows.push_front(row);
                    break;
                }
                wire.feed(wire::data_row(&row, &binary, &mut scratch))
                    .await?;
                sent += 1;
            }
            if limit > 0 && sent >= limit {
                // PostgreSQL suspends whenever the limit is reached, even on the last row.
                wire.feed(PgWireBackendMessage::PortalSuspended(PortalSuspended::new()))
                    .await?;
            } else {
                let command = command_word(tag);
                if tag_count(tag) == Some(sent) || tag_count(tag).is_none() {
                    wire.feed(wire::complete(tag)).await?;
                } else {
                    wire.feed(wire::complete_rows(&command, sent)).await?;
                }
                portal.state = PortalState::Done { command };
            }
            Ok(Ok(()))
        }
        PortalState::Stream { sub, pending } => {
            let binary = wire::field_formats(&portal.formats, sub.columns());
            let mut sent = 0;
            match pump(
                wire,
                sub,
                pending,
                &RowSink::Data(&binary),
                limit,
                watch,
                &mut sent,
            )
            .await?
            {
                PumpEnd::Suspended => {
                    wire.feed(PgWireBackendMessage::PortalSuspended(PortalSuspended::new()))
                        .await?;
                    Ok(Ok(()))
                }
                PumpEnd::Ended => {
                    wire.feed(wire::complete_rows("SELECT", sent)).await?;
                    portal.state = PortalState::Done {
                        command: "SELECT".into(),
                    };
                    Ok(Ok(()))
                }
                PumpEnd::Failed(e) => {
                    portal.state = PortalState::Done {
                        command: "SELECT".into(),
                    };
                    Ok(Err(e))
                }
            }
        }
    }
}

/// Handle Close of a statement or portal.
pub(crate) async fn on_close(wire: &mut dyn Wire, slot: &ConnSlot, msg: Close) -> PgWireResult<()> {
    let mut guard = slot.conn.lock().await;
    let conn = &mut *guard;
    let name = msg.name.unwrap_or_default();
    match msg.target_type {
        TARGET_TYPE_BYTE_STATEMENT => {
            conn.statements.remove(&name);
        }
        TARGET_TYPE_BYTE_PORTAL => {
            conn.portals.remove(&name);
        }
        _ => {}
    }
    wire.feed(PgWireBackendMessage::CloseComplete(CloseComplete::new()))
        .await
}

/// Handle Sync: end of the implicit transaction (portals go unless a block is open), then
/// ReadyForQuery.
pub(crate) async fn on_sync(wire: &mut dyn Wire, slot: &ConnSlot) -> PgWireResult<()> {
    let mut guard = slot.conn.lock().await;
    let conn = &mut *guard;
    if wire::session_tx(&conn.session) == TransactionStatus::Idle {
        conn.portals.clear();
    }
    ready(wire, slot, conn).await
}
