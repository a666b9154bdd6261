//! Stored tables: rows kept in memory, with NOT NULL, PRIMARY KEY and UNIQUE enforced.
//!
//! A [`Table`] holds its rows as one `Arc<TableData>`: a [`TableSnapshot`] is a clone of
//! that `Arc` (cheap, whatever the table's size), and every change is copy-on-write
//! (`Arc::make_mut`), so a reader keeps the table exactly as it was when it took the
//! snapshot while writers go on. Each PRIMARY KEY / UNIQUE constraint has a hash index from
//! key to row position, which enforces the constraint (23505) and answers key look-ups.
//!
//! Design decision: a statement is all or nothing. INSERT validates every new row against
//! the indexes before it appends any; UPDATE and DELETE compute the new row set and its
//! indexes aside and swap them in only when every constraint holds. UPDATE and DELETE
//! rebuild the indexes (linear in the table's size), which the row limit
//! (`Limits::table_rows_max`) keeps bounded.
//!
//! ```ignore
//! use tcq::table::{Conflict, KeyDef, Table};
//! use tcq::types::{Column, DataType, Value};
//!
//! let pkey = KeyDef { name: "airports_pkey".into(), columns: vec![0], primary: true };
//! let columns = vec![Column::new("code", DataType::Text), Column::new("city", DataType::Text)];
//! let t = Table::new("airports".into(), 16384, columns, vec![true, false], vec![None, None], vec![pkey], 1000);
//! let sfo = vec![Value::Text("SFO".into()), Value::Text("San Francisco".into())];
//! assert_eq!(t.insert(vec![sfo.clone()], Conflict::Error).unwrap(), 1);
//! assert!(t.insert(vec![sfo.clone()], Conflict::Error).is_err()); // 23505
//! let before = t.snapshot();
//! t.truncate().unwrap();
//! // A snapshot keeps the table as it was, key index included.
//! assert_eq!(before.lookup(0, &[Value::Text("SFO".into())]), Some(&sfo[..]));
//! assert!(t.is_empty());
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::agg::{group_eq, hash_value};
use crate::error::{Error, Result};
use crate::sql::Expr;
use crate::types::{Column, Value};

/// A key of a PRIMARY KEY or UNIQUE index: the values of its columns, hashed and compared
/// as GROUP BY compares them (`1.0 = 1.00`, `-0.0 = 0.0`).
#[derive(Clone, Debug)]
pub(crate) struct Key(pub(crate) Vec<Value>);

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for v in &self.0 {
            hash_value(v, state);
        }
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| group_eq(a, b))
    }
}

impl Eq for Key {}

/// A PRIMARY KEY or UNIQUE constraint.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KeyDef {
    /// PostgreSQL's constraint name (`t_pkey`, `t_col_key`), shown in 23505 errors.
    pub(crate) name: String,
    /// The key's columns, by index in the table's row.
    pub(crate) columns: Vec<usize>,
    /// PRIMARY KEY (its columns are NOT NULL).
    pub(crate) primary: bool,
}

/// The oids a table with oid `table` and `keys` keys takes: its own, then per key its
/// index relation's and its constraint's ([`index_oid`], [`constraint_oid`]).
pub(crate) fn oids_taken(keys: usize) -> u32 {
    1 + 2 * keys as u32
}

/// The oid of the index relation (`pg_class`, relkind 'i') of key `k` of the table with
/// oid `table`.
pub(crate) fn index_oid(table: u32, k: usize) -> u32 {
    table + 1 + 2 * k as u32
}

/// The oid of the `pg_constraint` row (contype 'p' or 'u') of key `k` of the table with
/// oid `table`.
pub(crate) fn constraint_oid(table: u32, k: usize) -> u32 {
    table + 2 + 2 * k as u32
}

/// A table's rows and its key indexes (one per [`KeyDef`], same order).
#[derive(Clone, Debug, Default)]
pub(crate) struct TableData {
    rows: Vec<Vec<Value>>,
    indexes: Vec<HashMap<Key, usize>>,
}

impl TableData {}

/// A table as it was at one instant: its columns, rows and key indexes. Cheap to take and
/// to clone (two `Arc`s); never changes.
#[derive(Clone, Debug)]
pub(crate) struct TableSnapshot {
    /// The table's OID: a table dropped and created again under its name has a new one.
    pub(crate) oid: u32,
    /// The table's columns.
    pub(crate) columns: Arc<Vec<Column>>,
    /// Its PRIMARY KEY / UNIQUE constraints.
    pub(crate) keys: Arc<Vec<KeyDef>>,
    data: Arc<TableData>,
}

impl TableSnapshot {
    /// The rows, each as wide as `columns`.
    pub(crate) fn rows(&self) -> &[Vec<Value>] {
        &self.data.rows
    }

    /// The row whose key `k` (an index into `keys`) equals `key`, if any. A key with a
    /// NULL finds nothing (NULL equals nothing).
    pub(crate) fn lookup(&self, k: usize, key: &[Value]) -> Option<&[Value]> {
        if key.iter().any(Value::is_null) {
            return None;
        }
        let i = *self.data.indexes[k].get(&Key(key.to_vec()))?;
        Some(&self.data.rows[i])
    }
}

/// What INSERT does with a row whose key a table already holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Conflict {
    /// 23505 and the whole statement is refused (the default).
    Error,
    /// `ON CONFLICT DO NOTHING`: the row is skipped when it clashes on key `k` of the
    /// table's keys (`Some(k)`: the arbiter of `ON CONFLICT (cols)`) or on any key (`None`);
    /// a clash on another key is 23505 all the same.
    Skip(Option<usize>),
}

/// The update of an upsert: `(held row, proposed row)` to the new row, or `None` to leave
/// the held row alone.
pub(crate) type UpsertFn<'a> = dyn FnMut(&[Value], &[Value]) -> Result<Option<Vec<Value>>> + 'a;

/// One change a statement made to a table's rows, as a [`Journal`] records it. Positions
/// are row indexes in storage order before the change.
#[derive(Debug, PartialEq)]
pub(crate) enum Effect<'a> {
    /// These rows were appended.
    Append(&'a [Vec<Value>]),
    /// The row at each position was replaced (its place kept).
    Replace(Vec<(usize, &'a [Value])>),
    /// The rows at these positions (ascending) were removed; the others keep their order.
    Remove(&'a [usize]),
    /// Every row was removed.
    Clear,
}

/// Where a table writes each statement's [`Effect`]s before they take effect (the table
/// store on disk). Called with the table's write lock held, so the journal's order is the
/// order in which changes happen.
pub(crate) trait Journal: Send + Sync {
    /// Record one statement's effects (all or nothing). An error leaves the table unchanged.
    fn record(&self, effects: &[Effect<'_>]) -> Result<()>;
}

/// Apply recorded `effects` to `rows` (recovery replays a table's journal this way).
/// Errors: a position past the rows (the journal does not match the table).
pub(crate) fn apply_effects(rows: &mut Vec<Vec<Value>>, effects: Vec<OwnedEffect>) -> Result<()> {
    let bad = |p: usize, n: usize| {
        Error::DataCorrupted(format!("a change at row {p} of a table of {n} rows"))
    };
    for e in effects {
        match e {
            OwnedEffect::Append(r) => rows.extend(r),
            OwnedEffect::Replace(changes) => {
                for (p, row) in changes {
                    let n = rows.len();
                    *rows.get_mut(p).ok_or_else(|| bad(p, n))? = row;
                }
            }
            OwnedEffect::Remove(positions) => {
                let n = rows.len();
                if let Some(&p) = positions.last().filter(|&&p| p >= n) {
                    return Err(bad(p, n));
                }
                let mut doomed = positions.into_iter().peekable();
                let mut i = 0;
                rows.retain(|_| {
                    let gone = doomed.next_if_eq(&i).is_some();
                    i += 1;
                    !gone
                });
            }
            OwnedEffect::Clear => rows.clear(),
        }
    }
    Ok(())
}

/// An [`Effect`] read back from a journal.
#[derive(Debug, PartialEq)]
pub(crate) enum OwnedEffect {
    /// See [`Effect::Append`].
    Append(Vec<Vec<Value>>),
    /// See [`Effect::Replace`].
    Replace(Vec<(usize, Vec<Value>)>),
    /// See [`Effect::Remove`].
    Remove(Vec<usize>),
    /// See [`Effect::Clear`].
    Clear,
}

/// A stored table.
pub(crate) struct Table {
    /// Normalised name.
    pub(crate) name: String,
    /// The OID psql sees (`pg_class.oid`).
    pub(crate) oid: u32,
    /// Columns in order.
    pub(crate) columns: Arc<Vec<Column>>,
    /// Per column: NOT NULL (also every PRIMARY KEY column).
    pub(crate) not_null: Vec<bool>,
    /// Per column: its DEFAULT, a constant expression evaluated at each insert.
    pub(crate) defaults: Vec<Option<Expr>>,
    /// Per column: the DEFAULT's SQL text as written (`pg_attrdef.adbin`, psql's `\d`).
    pub(crate) default_sql: Vec<Option<String>>,
    /// PRIMARY KEY and UNIQUE constraints.
    pub(crate) keys: Arc<Vec<KeyDef>>,
    /// Rows the table may hold (`Limits::table_rows_max`).
    pub(crate) rows_max: usize,
    /// Where changes are recorded before they take effect (none: the table lives in memory
    /// only).
    pub(crate) journal: Option<Arc<dyn Journal>>,
    data: RwLock<Arc<TableData>>,
}

impl Table {
    /// An empty table.
    pub(crate) fn new(
        name: String,
        oid: u32,
        columns: Vec<Column>,
        not_null: Vec<bool>,
        defaults: Vec<Option<Expr>>,
        keys: Vec<KeyDef>,
        rows_max: usize,
    ) -> Table {
        let data = TableData {
            rows: Vec::new(),
            indexes: vec![HashMap::new(); keys.len()],
        };
        Table {
            name,
            oid,
            columns: Arc::new(columns),
            not_null,
            default_sql: vec![None; defaults.len()],
            defaults,
            keys: Arc::new(keys),
            rows_max,
            journal: None,
            data: RwLock::new(Arc::new(data)),
        }
    }

    /// The table with `journal` recording its changes and `rows` as its content (what the
    /// journal held at start-up). Errors: 23505 when two of `rows` share a key (a damaged
    /// journal).
    pub(crate) fn with_journal(
        mut self,
        journal: Arc<dyn Journal>,
        rows: Vec<Vec<Value>>,
    ) -> Result<Table> {
        *self.data.write() = Arc::new(self.indexed(rows)?);
        self.journal = Some(journal);
        Ok(self)
    }

    fn record(&self, effects: &[Effect<'_>]) -> Result<()> {
        match &self.journal {
            Some(j) => j.record(effects),
            None => Ok(()),
        }
    }

    /// The table now.
    pub(crate) fn snapshot(&self) -> TableSnapshot {
        TableSnapshot {
            oid: self.oid,
            columns: self.columns.clone(),
            keys: self.keys.clone(),
            data: self.data.read().clone(),
        }
    }

    /// Number of rows now.
    pub(crate) fn len(&self) -> usize {
        self.data.read().rows.len()
    }

    #[cfg(test)]
    /// True when the table has no rows.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[cfg(test)]
    /// Append `rows` (each as wide as the table), all or none. Returns how many were
    /// inserted (fewer than given only with [`Conflict::Skip`]). Errors: 23502 for a NULL
    /// in a NOT NULL column, 23505 for a duplicate key, 54000 past `rows_max`.
    pub(crate) fn insert(&self, rows: Vec<Vec<Value>>, on_conflict: Conflict) -> Result<u64> {
        Ok(self.insert_with(rows, on_conflict, false)?.0)
    }

    /// [`Table::insert`], also returning a copy of each inserted row when `keep` (for
    /// RETURNING).
    pub(crate) fn insert_with(
        &self,
        rows: Vec<Vec<Value>>,
        on_conflict: Conflict,
        keep: bool,
    ) -> Result<(u64, Vec<Vec<Value>>)> {
        self.insert_rows(rows, on_conflict, keep, &|_, e| e)
    }

    /// [`Table::insert`] for COPY: an error about row `i` (0-based, in the order given: a
    /// value that does not fit, a NULL in a NOT NULL column, a duplicate key) goes through
    /// `at_row(i, error)`, which adds where the row came from.
    pub(crate) fn insert_numbered(
        &self,
        rows: Vec<Vec<Value>>,
        on_conflict: Conflict,
        at_row: &dyn Fn(usize, Error) -> Error,
    ) -> Result<u64> {
        Ok(self.insert_rows(rows, on_conflict, false, at_row)?.0)
    }

    fn insert_rows(
        &self,
        rows: Vec<Vec<Value>>,
        on_conflict: Conflict,
        keep: bool,
        at_row: &dyn Fn(usize, Error) -> Error,
    ) -> Result<(u64, Vec<Vec<Value>>)> {
        let mut guard = self.data.write();
        let mut pending: Vec<HashMap<Key, usize>> = vec![HashMap::new(); self.keys.len()];
        let mut accepted = Vec::with_capacity(rows.len());
        'rows: for (i, mut row) in rows.into_iter().enumerate() {
            debug_assert_eq!(
                row.len(),
                self.columns.len(),
                "rows are as wide as the table"
            );
            self.conform(&mut row).map_err(|e| at_row(i, e))?;
            self.check_not_null(&row).map_err(|e| at_row(i, e))?;
            let clash = |k: usize| {
                key_of(&self.keys[k], &row).filter(|key| {
                    guard.indexes[k].contains_key(key) || pending[k].contains_key(key)
                })
            };
            // The arbiter first, as PostgreSQL checks it before inserting.
            if let Conflict::Skip(Some(k)) = on_conflict {
                if clash(k).is_some() {
                    continue 'rows;
                }
            }
            for (k, def) in self.keys.iter().enumerate() {
                if let Some(key) = clash(k) {
                    match on_conflict {
                        Conflict::Skip(None) => continue 'rows,
                        _ => return Err(at_row(i, self.duplicate(def, &key))),
                    }
                }
            }
            for (k, def) in self.keys.iter().enumerate() {
                if let Some(key) = key_of(def, &row) {
                    pending[k].insert(key, 0);
                }
            }
            accepted.push(row);
        }
        let total = guard.rows.len() + accepted.len();
        if total > self.rows_max {
            return Err(Error::ProgramLimitExceeded(format!(
                "table \"{}\" would hold {total} rows, more than table_rows_max ({})",
                self.name, self.rows_max
            )));
        }
        let n = accepted.len() as u64;
        if n > 0 {
            self.record(&[Effect::Append(&accepted)])?;
        }
        let kept = if keep { accepted.clone() } else { Vec::new() };
        let data = Arc::make_mut(&mut guard);
        for row in accepted {
            let at = data.rows.len();
            for (k, def) in self.keys.iter().enumerate() {
                if let Some(key) = key_of(def, &row) {
                    data.indexes[k].insert(key, at);
                }
            }
            data.rows.push(row);
        }
        Ok((n, kept))
    }

    /// INSERT ... ON CONFLICT DO UPDATE, all or none: each row whose key `key` (an index
    /// into `keys`) the table holds replaces that held row with `update(held, proposed)`
    /// (`None` leaves it alone); the others are inserted. Returns rows inserted plus rows
    /// updated, and with `keep` a copy of each (for RETURNING). Errors: 21000 when one
    /// statement reaches the same row twice, 23502, 23505 (on another key), 54000 past
    /// `rows_max`, and those of `update`.
    pub(crate) fn upsert(
        &self,
        rows: Vec<Vec<Value>>,
        key: usize,
        update: &mut UpsertFn<'_>,
        keep: bool,
    ) -> Result<(u64, Vec<Vec<Value>>)> {
        let mut guard = self.data.write();
        // Rows change in place, so the statement works on a copy that replaces the table
        // only when every row has passed.
        let mut data: TableData = (**guard).clone();
        let mut touched = std::collections::HashSet::new();
        let mut n = 0;
        let mut kept = Vec::new();
        for mut row in rows {
            self.conform(&mut row)?;
            self.check_not_null(&row)?;
            let held =
                key_of(&self.keys[key], &row).and_then(|k| data.indexes[key].get(&k).copied());
            let Some(i) = held else {
                for (k, def) in self.keys.iter().enumerate() {
                    if let Some(kv) = key_of(def, &row) {
                        if data.indexes[k].contains_key(&kv) {
                            return Err(self.duplicate(def, &kv));
                        }
                    }
                }
                if data.rows.len() >= self.rows_max {
                    return Err(Error::ProgramLimitExceeded(format!(
                        "table \"{}\" would hold more than table_rows_max ({}) rows",
                        self.name, self.rows_max
                    )));
                }
                let at = data.rows.len();
                for (k, def) in self.keys.iter().enumerate() {
                    if let Some(kv) = key_of(def, &row) {
                        data.indexes[k].insert(kv, at);
                    }
                }
                if keep {
                    kept.push(row.clone());
                }
                data.rows.push(row);
                touched.insert(at);
                n += 1;
                continue;
            };
            if !touched.insert(i) {
                return Err(Error::CardinalityViolation(
                    "ON CONFLICT DO UPDATE command cannot affect row a second time: two proposed rows have the same key".into(),
                ));
            }
            let Some(mut new) = update(&data.rows[i], &row)? else {
                continue;
            };
            self.conform(&mut new)?;
            self.check_not_null(&new)?;
            for (k, def) in self.keys.iter().enumerate() {
                if let Some(old) = key_of(def, &data.rows[i]) {
                    data.indexes[k].remove(&old);
                }
            }
            for (k, def) in self.keys.iter().enumerate() {
                if let Some(kv) = key_of(def, &new) {
                    if data.indexes[k].contains_key(&kv) {
                        return Err(self.duplicate(def, &kv));
                    }
                    data.indexes[k].insert(kv, i);
                }
            }
            if keep {
                kept.push(new.clone());
            }
            data.rows[i] = new;
            n += 1;
        }
        let held = guard.rows.len();
        let mut replaced: Vec<usize> = touched.into_iter().filter(|&i| i < held).collect();
        replaced.sort_unstable();
        let effects = [
            Effect::Replace(replaced.iter().map(|&i| (i, &data.rows[i][..])).collect()),
            Effect::Append(&data.rows[held..]),
        ];
        if n > 0 {
            self.record(&effects)?;
        }
        *guard = Arc::new(data);
        Ok((n, kept))
    }

    /// Replace each row for which `change` gives a new row (UPDATE), all or none. Returns
    /// how many rows changed. Errors: those of `change`, 23502, 23505.
    pub(crate) fn update(
        &self,
        mut change: impl FnMut(&[Value]) -> Result<Option<Vec<Value>>>,
    ) -> Result<u64> {
        let mut guard = self.data.write();
        let mut changed = Vec::new();
        let mut rows = Vec::with_capacity(guard.rows.len());
        for row in &guard.rows {
            match change(row)? {
                Some(mut new) => {
                    self.conform(&mut new)?;
                    self.check_not_null(&new)?;
                    changed.push(rows.len());
                    rows.push(new);
                }
                None => rows.push(row.clone()),
            }
        }
        if !changed.is_empty() {
            let data = self.indexed(rows)?;
            let replaced = changed.iter().map(|&i| (i, &data.rows[i][..])).collect();
            self.record(&[Effect::Replace(replaced)])?;
            *guard = Arc::new(data);
        }
        Ok(changed.len() as u64)
    }

    /// Remove each row for which `doomed` is true (DELETE). Returns how many were removed.
    pub(crate) fn delete(&self, mut doomed: impl FnMut(&[Value]) -> Result<bool>) -> Result<u64> {
        let mut guard = self.data.write();
        let mut rows = Vec::with_capacity(guard.rows.len());
        let mut removed = Vec::new();
        for (i, row) in guard.rows.iter().enumerate() {
            if doomed(row)? {
                removed.push(i);
            } else {
                rows.push(row.clone());
            }
        }
        if !removed.is_empty() {
            let data = self.indexed(rows)?;
            self.record(&[Effect::Remove(&removed)])?;
            *guard = Arc::new(data);
        }
        Ok(removed.len() as u64)
    }

    /// Remove every row (TRUNCATE). Errors: the journal could not record it.
    pub(crate) fn truncate(&self) -> Result<()> {
        let mut guard = self.data.write();
        self.record(&[Effect::Clear])?;
        *guard = Arc::new(TableData {
            rows: Vec::new(),
            indexes: vec![HashMap::new(); self.keys.len()],
        });
        Ok(())
    }

    /// `rows` with their indexes built; 23505 when two share a key.
    fn indexed(&self, rows: Vec<Vec<Value>>) -> Result<TableData> {
        let mut indexes = vec![HashMap::new(); self.keys.len()];
        for (at, row) in rows.iter().enumerate() {
            for (k, def) in self.keys.iter().enumerate() {
                let Some(key) = key_of(def, row) else {
                    continue;
                };
                if indexes[k].contains_key(&key) {
                    return Err(self.duplicate(def, &key));
                }
                indexes[k].insert(key, at);
            }
        }
        Ok(TableData { rows, indexes })
    }

    /// Each value as its column stores it (`numeric(p, s)`: rounded, its size checked).
    /// Fit a row's values to their columns' type modifiers (`numeric(p, s)` rounds to its
    /// scale), as storing it does. Errors: 22003 for a value too wide for its column.
    pub(crate) fn conform(&self, row: &mut [Value]) -> Result<()> {
        for (v, c) in row.iter_mut().zip(self.columns.iter()) {
            crate::types::conform(v, c.typmod)?;
        }
        Ok(())
    }

    fn check_not_null(&self, row: &[Value]) -> Result<()> {
        for (i, v) in row.iter().enumerate() {
            if self.not_null[i] && v.is_null() {
                return Err(Error::NotNullViolation(format!(
                    "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                    self.columns[i].name, self.name
                ))
                .with_detail(failing_row(row)));
            }
        }
        Ok(())
    }

    fn duplicate(&self, def: &KeyDef, key: &Key) -> Error {
        let names: Vec<&str> = def
            .columns
            .iter()
            .map(|&c| self.columns[c].name.as_str())
            .collect();
        let values: Vec<String> = key
            .0
            .iter()
            .map(|v| {
                let mut s = String::new();
                crate::types::format_value(v, &mut s);
                s
            })
            .collect();
        Error::UniqueViolation(format!(
            "duplicate key value violates unique constraint \"{}\"",
            def.name
        ))
        .with_detail(format!(
            "Key ({})=({}) already exists.",
            names.join(", "),
            values.join(", ")
        ))
    }
}

/// The key of `row` under `def`, or `None` when one of its values is NULL (a NULL never
/// equals another, so such a row never conflicts).
fn key_of(def: &KeyDef, row: &[Value]) -> Option<Key> {
    let key: Vec<Value> = def.columns.iter().map(|&c| row[c].clone()).collect();
    (!key.iter().any(Value::is_null)).then_some(Key(key))
}

/// PostgreSQL's DETAIL for a row that breaks a constraint: `Failing row contains (1, null,
/// x).`, each value in its text form cut to 64 bytes with `...` (as
/// `ExecBuildSlotValueDescription` cuts it), NULL as `null`.
fn failing_row(row: &[Value]) -> String {
    const VALUE_BYTES: usize = 64;
    let values: Vec<String> = row
        .iter()
        .map(|v| match v.to_text() {
            None => "null".to_string(),
            Some(t) if t.len() > VALUE_BYTES => {
                let mut cut = VALUE_BYTES;
                while !t.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!("{}...", &t[..cut])
            }
            Some(t) => t,
        })
        .collect();
    format!("Failing row contains ({}).", values.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::DataType;

    fn airports() -> Table {
        Table::new(
            "airports".into(),
            1,
            vec![
                Column::new("code", DataType::Text),
                Column::new("city", DataType::Text),
            ],
            vec![true, false],
            vec![None, None],
            vec![KeyDef {
                name: "airports_pkey".into(),
                columns: vec![0],
                primary: true,
            }],
            10,
        )
    }

    fn row(code: &str, city: &str) -> Vec<Value> {
        vec![Value::Text(code.into()), Value::Text(city.into())]
    }

    #[test]
    fn a_snapshot_keeps_the_table_as_it_was() {
        let t = airports();
        t.insert(vec![row("SFO", "San Francisco")], Conflict::Error)
            .unwrap();
        let before = t.snapshot();
        t.update(|r| Ok(Some(vec![r[0].clone(), Value::Text("SF".into())])))
            .unwrap();
        t.insert(vec![row("LAX", "Los Angeles")], Conflict::Error)
            .unwrap();
        assert_eq!(before.rows(), &[row("SFO", "San Francisco")]);
        let after = t.snapshot();
        assert_eq!(after.rows().len(), 2);
        assert_eq!(
            after.lookup(0, &[Value::Text("SFO".into())]),
            Some(&row("SFO", "SF")[..])
        );
    }

    #[test]
    fn a_duplicate_key_refuses_the_whole_statement() {
        let t = airports();
        let e = t
            .insert(
                vec![row("SFO", "a"), row("LAX", "b"), row("SFO", "c")],
                Conflict::Error,
            )
            .unwrap_err();
        assert!(matches!(e.kind(), Error::UniqueViolation(_)), "{e:?}");
        assert!(t.is_empty());
        let n = t
            .insert(vec![row("SFO", "a"), row("SFO", "c")], Conflict::Skip(None))
            .unwrap();
        assert_eq!(n, 1);
        assert_eq!(t.snapshot().rows(), &[row("SFO", "a")]);
    }

    #[test]
    fn update_to_a_held_key_and_the_row_limit_are_refused() {
        let t = airports();
        t.insert(vec![row("SFO", "a"), row("LAX", "b")], Conflict::Error)
            .unwrap();
        let e = t.update(|_| Ok(Some(row("SFO", "x")))).unwrap_err();
        assert!(matches!(e.kind(), Error::UniqueViolation(_)), "{e:?}");
        assert_eq!(t.snapshot().rows(), &[row("SFO", "a"), row("LAX", "b")]);
        let many: Vec<_> = (0..9).map(|i| row(&format!("X{i}"), "c")).collect();
        let e = t.insert(many, Conflict::Error).unwrap_err();
        assert!(matches!(e, Error::ProgramLimitExceeded(_)), "{e:?}");
        assert_eq!(
            t.delete(|r| Ok(r[0] == Value::Text("SFO".into()))).unwrap(),
            1
        );
        assert_eq!(
            t.snapshot().lookup(0, &[Value::Text("LAX".into())]),
            Some(&row("LAX", "b")[..])
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::table::{Conflict, KeyDef, Table};
        use crate::types::{Column, DataType, Value};

        let pkey = KeyDef {
            name: "airports_pkey".into(),
            columns: vec![0],
            primary: true,
        };
        let columns = vec![
            Column::new("code", DataType::Text),
            Column::new("city", DataType::Text),
        ];
        let t = Table::new(
            "airports".into(),
            16384,
            columns,
            vec![true, false],
            vec![None, None],
            vec![pkey],
            1000,
        );
        let sfo = vec![
            Value::Text("SFO".into()),
            Value::Text("San Francisco".into()),
        ];
        assert_eq!(t.insert(vec![sfo.clone()], Conflict::Error).unwrap(), 1);
        assert!(t.insert(vec![sfo.clone()], Conflict::Error).is_err()); // 23505
        let before = t.snapshot();
        t.truncate().unwrap();
        // A snapshot keeps the table as it was, key index included.
        assert_eq!(
            before.lookup(0, &[Value::Text("SFO".into())]),
            Some(&sfo[..])
        );
        assert!(t.is_empty());
    }
}
