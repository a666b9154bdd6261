//! A session's side of roles and privileges: the check every statement passes before it
//! runs, and the role and GRANT/REVOKE statements themselves (the rules are in
//! `engine::roles`).
//!
//! Every check happens here, once binding has named the statement's relations: reading a
//! stream or table (SELECT, a continuous query, `COPY (SELECT ...) TO`, EXPLAIN, DECLARE)
//! needs SELECT; INSERT, `COPY ... FROM` and `tcq_advance` need INSERT; UPDATE, DELETE and
//! TRUNCATE their own privilege (and SELECT when they read rows); DROP, ALTER, GRANT and
//! REVOKE need the owner; `ALTER ... OWNER TO` and role statements a superuser (a role may
//! change its own password). Finite queries over stored tables are
//! checked as they scan each table (`CatalogRelations::check_read`).

use super::persist::save_catalog;
use super::roles::RoleOptionsSet;
use super::session::Session;
use super::Notice;
use super::Outcome;
use crate::error::{Error, Result};
use crate::sql::{self, Grant, GrantTarget, Plan, Privileges, Query, RoleOptions, Source};

impl Session {
    /// Whether this session's user is a superuser now (a role's SUPERUSER, or a
    /// trust-connected user who is no role).
    pub(crate) fn is_superuser(&self) -> bool {
        self.engine
            .catalog
            .roles()
            .is_superuser(&self.vars.user, self.implicit_superuser)
    }

    /// Record how the client authenticated (call after [`Session::set_identity`]): `trusted`
    /// (no password asked) makes a user who is no role the bootstrap superuser; a
    /// password-authenticated user has exactly its role's attributes.
    pub(crate) fn set_trusted(&mut self, trusted: bool) {
        self.implicit_superuser = trusted;
        let superuser = if self.is_superuser() { "on" } else { "off" };
        self.vars
            .settings
            .insert("is_superuser".into(), superuser.into());
    }

    /// 42501 unless the user may use `privileges` on `relation` (a `kind`).
    pub(crate) fn check_relation(
        &self,
        kind: &str,
        relation: &str,
        privileges: Privileges,
    ) -> Result<()> {
        self.engine.catalog.roles().check(
            &self.vars.user,
            self.is_superuser(),
            kind,
            relation,
            privileges,
        )
    }

    fn check_owner(&self, kind: &str, relation: &str) -> Result<()> {
        self.engine.catalog.roles().check_owner(
            &self.vars.user,
            self.is_superuser(),
            kind,
            relation,
        )
    }

    fn require_superuser(&self, what: &str) -> Result<()> {
        if self.is_superuser() {
            return Ok(());
        }
        Err(Error::InsufficientPrivilege(format!(
            "permission denied to {what}: only superusers manage roles"
        )))
    }

    /// 42501 unless a superuser, for the statements of derived streams and sinks.
    fn require_superuser_for(&self, what: &str) -> Result<()> {
        if self.is_superuser() {
            return Ok(());
        }
        Err(Error::InsufficientPrivilege(format!(
            "permission denied to {what}: only superusers create and drop derived streams and sinks"
        )))
    }

    /// May this session cancel (`cancel`) or terminate backend `pid`? Its own user's
    /// backends, or any as a superuser; a superuser's only as a superuser. Errors: 42501 in
    /// PostgreSQL 15's words. An unknown pid passes (the caller answers it).
    pub(crate) fn check_signal(&self, pid: i32, cancel: bool) -> Result<()> {
        let Some(target) = self
            .engine
            .catalog
            .backends()
            .list()
            .into_iter()
            .find(|b| b.pid == pid)
        else {
            return Ok(());
        };
        if self.is_superuser() {
            return Ok(());
        }
        let (verb, what) = if cancel {
            ("cancel", "query is being canceled")
        } else {
            ("terminate", "process is being terminated")
        };
        // A trust-connected user who is no role is a superuser (engine::roles).
        if self.engine.catalog.roles().is_superuser(&target.user, true) {
            return Err(Error::InsufficientPrivilege(format!(
                "must be a superuser to {verb} superuser {}",
                if cancel { "query" } else { "process" }
            )));
        }
        if target.user != self.vars.user {
            return Err(Error::InsufficientPrivilege(format!(
                "must be a member of the role whose {what} or member of pg_signal_backend"
            )));
        }
        Ok(())
    }

    /// The privilege check of a bound statement. Errors: 42501 naming what is missing.
    pub(crate) fn check_privileges(&self, plan: &Plan) -> Result<()> {
        let catalog = &self.engine.catalog;
        match plan {
            Plan::CreateRole { .. } => self.require_superuser("create role"),
            Plan::DropRole { .. } => self.require_superuser("drop role"),
            Plan::DropStream { names, .. } => names
                .iter()
                .filter(|n| catalog.streams_read().contains_key(*n))
                .try_for_each(|n| self.check_owner("stream", n)),
            Plan::DropTable { names, .. } => names
                .iter()
                .filter(|n| catalog.tables_read().contains_key(*n))
                .try_for_each(|n| self.check_owner("table", n)),
            Plan::AlterStreamRetention { name, .. } | Plan::AlterStreamSource { name, .. } => {
                self.check_owner("stream", name)
            }
            // They run without a client, as the server: sinks write files and reach other
            // hosts (PostgreSQL keeps that to superusers), and both hold a query for good.
            Plan::CreateDerived(c) => {
                self.require_superuser_for(&format!("create derived stream \"{}\"", c.stream.name))?;
                self.check_query(&c.query.query)
            }
            Plan::CreateSink(c) => {
                self.require_superuser_for(&format!("create sink \"{}\"", c.name))?;
                self.check_query(&c.query.query)
            }
            Plan::DropSink { .. } => self.require_superuser_for("drop sinks"),
            Plan::CreateStream(c) if c.source.is_some() && !self.is_superuser() => {
                Err(Error::InsufficientPrivilege(format!(
                    "permission denied to create stream \"{}\" with a source: only superusers declare connectors",
                    c.name
                )))
            }
            // Without role membership an owner could only give a relation to itself: only
            // superusers change owners.
            Plan::AlterOwner { table, name, .. } => {
                self.check_owner(kind(*table), name)?;
                if self.is_superuser() {
                    Ok(())
                } else {
                    Err(Error::InsufficientPrivilege(format!(
                        "permission denied to change the owner of {} {name}: only superusers do",
                        kind(*table)
                    )))
                }
            }
            Plan::Truncate { names } => names
                .iter()
                .try_for_each(|n| self.check_relation("table", n, Privileges::TRUNCATE)),
            // As PostgreSQL: reading rows (WHERE, RETURNING, ON CONFLICT DO UPDATE's held
            // row) needs SELECT besides the privilege of the change.
            Plan::Update(u) => {
                let reads = u.filter.is_some() || u.returning.is_some();
                let needs = Privileges::UPDATE.union(select_if(reads));
                self.check_relation("table", &u.table, needs)
            }
            Plan::Delete(d) => {
                let reads = d.filter.is_some() || d.returning.is_some();
                let needs = Privileges::DELETE.union(select_if(reads));
                self.check_relation("table", &d.table, needs)
            }
            Plan::Insert(i) => {
                let upsert = matches!(i.on_conflict, sql::OnConflict::DoUpdate { .. });
                let needs = Privileges::INSERT
                    .union(select_if(upsert || i.returning.is_some()))
                    .union(if upsert {
                        Privileges::UPDATE
                    } else {
                        Privileges::default()
                    });
                self.check_relation(kind(i.table), &i.stream, needs)?;
                i.select.as_deref().map_or(Ok(()), |q| self.check_query(q))
            }
            Plan::CopyFrom(c) => self.check_relation(kind(c.table), &c.stream, Privileges::INSERT),
            Plan::Query(q)
            | Plan::CopyTo { query: q, .. }
            | Plan::Explain { query: q, .. }
            | Plan::Declare { query: q, .. } => self.check_query(q),
            _ => Ok(()),
        }
    }

    /// SELECT on every stream and table a query reads (finite queries over stored tables
    /// are checked as they scan).
    fn check_query(&self, q: &Query) -> Result<()> {
        match &q.source {
            Source::Stream { name, .. } => self.check_relation("stream", name, Privileges::SELECT),
            Source::Table { name, .. } => self.check_relation("table", name, Privileges::SELECT),
            Source::Join { inputs, tables } => {
                for i in inputs {
                    self.check_relation("stream", &i.stream, Privileges::SELECT)?;
                }
                for t in tables {
                    self.check_relation("table", &t.table, Privileges::SELECT)?;
                }
                Ok(())
            }
            Source::System { .. } | Source::Nothing | Source::Relational(_) => Ok(()),
        }
    }

    /// Persist the roles and access lists after `change`; when `change` fails part-way
    /// (`DROP ROLE a, b` with `b` owning a relation) or the catalog cannot be written, all
    /// of it is undone. Holds the streams' write lock, so that no other catalog change
    /// interleaves.
    fn change_roles(&self, change: impl FnOnce() -> Result<()>) -> Result<()> {
        self.change_relation_roles(&[], change)
    }

    /// [`Self::change_roles`] for a change to the access lists of `relations`, checked to
    /// still exist under the lock: a `DROP` that ran since the statement was bound would
    /// otherwise leave an access list, and an owner, for a relation that is gone. Errors:
    /// 42P01 for a relation dropped meanwhile.
    fn change_relation_roles(
        &self,
        relations: &[String],
        change: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let streams = self.engine.catalog.streams_write();
        if let Some(gone) = relations.iter().find(|r| {
            !streams.contains_key(*r) && !self.engine.catalog.tables_read().contains_key(*r)
        }) {
            return Err(Error::UndefinedTable(gone.clone()));
        }
        let before = self.engine.catalog.roles().snapshot();
        if let Err(e) = change().and_then(|()| save_catalog(&self.engine, &streams)) {
            self.engine.catalog.roles().restore(before);
            return Err(e);
        }
        Ok(())
    }

    pub(super) fn create_role(
        &mut self,
        name: &str,
        options: RoleOptions,
        user: bool,
    ) -> Result<Outcome> {
        let mut notices = Vec::new();
        let password = verifier(options.password, &mut notices);
        let set = RoleOptionsSet {
            login: options.login.unwrap_or(user),
            superuser: options.superuser.unwrap_or(false),
            password: password.flatten(),
        };
        self.change_roles(|| self.engine.catalog.roles().create(name, set))?;
        Ok(command(
            if user { "CREATE USER" } else { "CREATE ROLE" },
            notices,
        ))
    }

    pub(super) fn alter_role(&mut self, name: &str, options: RoleOptions) -> Result<Outcome> {
        let own_password = name == self.vars.user
            && options.login.is_none()
            && options.superuser.is_none()
            && options.password.is_some();
        if !own_password {
            self.require_superuser("alter role")?;
        }
        let mut notices = Vec::new();
        let password = verifier(options.password, &mut notices);
        self.change_roles(|| {
            self.engine.catalog.roles().alter(name, |r| {
                if let Some(login) = options.login {
                    r.login = login;
                }
                if let Some(superuser) = options.superuser {
                    r.superuser = superuser;
                }
                if let Some(p) = password {
                    r.password = p;
                }
            })
        })?;
        Ok(command("ALTER ROLE", notices))
    }

    pub(super) fn drop_role(&mut self, names: Vec<String>, if_exists: bool) -> Result<Outcome> {
        if names.contains(&self.vars.user) {
            return Err(Error::ObjectInUse("current user cannot be dropped".into()));
        }
        let mut notices = Vec::new();
        self.change_roles(|| {
            for n in &names {
                if self.engine.catalog.roles().get(n).is_none() && !if_exists {
                    return Err(Error::UndefinedObject(format!(
                        "role \"{n}\" does not exist"
                    )));
                }
            }
            for n in &names {
                if !self.engine.catalog.roles().drop_role(n)? {
                    notices.push(format!("role \"{n}\" does not exist, skipping").into());
                }
            }
            Ok(())
        })?;
        Ok(command("DROP ROLE", notices))
    }

    pub(super) fn grant(&mut self, g: Grant) -> Result<Outcome> {
        let catalog = &self.engine.catalog;
        for r in &g.relations {
            let is_stream = catalog.streams_read().contains_key(r);
            let kind = match (is_stream, g.target) {
                (true, _) => "stream",
                (false, GrantTarget::Relation) if catalog.tables_read().contains_key(r) => "table",
                (false, GrantTarget::Stream) => {
                    let hint = catalog
                        .tables_read()
                        .contains_key(r)
                        .then(|| format!("\"{r}\" is a table: grant ON TABLE {r}"));
                    let e = Error::UndefinedTable(r.clone());
                    return Err(match hint {
                        Some(h) => e.with_hint(h),
                        None => e,
                    });
                }
                (false, GrantTarget::Relation) => return Err(Error::UndefinedTable(r.clone())),
            };
            if !self.is_superuser()
                && self.engine.catalog.roles().owner(r).as_deref() != Some(&self.vars.user)
            {
                return Err(Error::InsufficientPrivilege(format!(
                    "permission denied for {kind} {r}: only its owner or a superuser grants"
                )));
            }
        }
        self.change_relation_roles(&g.relations, || {
            for r in &g.relations {
                self.engine
                    .catalog
                    .roles()
                    .grant(r, &g.grantees, g.privileges, g.grant)?;
            }
            Ok(())
        })?;
        Ok(command(if g.grant { "GRANT" } else { "REVOKE" }, vec![]))
    }

    pub(super) fn alter_owner(&mut self, table: bool, name: &str, owner: &str) -> Result<Outcome> {
        self.change_relation_roles(&[name.to_string()], || {
            self.engine.catalog.roles().change_owner(name, owner)
        })?;
        Ok(Outcome::Command(
            if table { "ALTER TABLE" } else { "ALTER STREAM" }.into(),
        ))
    }
}

fn select_if(reads: bool) -> Privileges {
    if reads {
        Privileges::SELECT
    } else {
        Privileges::default()
    }
}

fn kind(table: bool) -> &'static str {
    if table {
        "table"
    } else {
        "stream"
    }
}

fn command(tag: &str, notices: Vec<Notice>) -> Outcome {
    Outcome::Rows {
        columns: vec![],
        rows: vec![],
        tag: tag.into(),
        notices,
    }
}

/// The stored form of a `PASSWORD` option: a SCRAM-SHA-256 verifier (a given verifier is
/// kept as it is, as PostgreSQL does); `Some(None)` clears the password. An empty password
/// clears it too, with PostgreSQL's NOTICE.
fn verifier(password: Option<Option<String>>, notices: &mut Vec<Notice>) -> Option<Option<String>> {
    password.map(|p| match p {
        Some(p) if p.is_empty() => {
            notices.push("empty string is not a valid password, clearing password".into());
            None
        }
        Some(p) => Some(
            crate::password::Verifier::parse(&p)
                .unwrap_or_else(|| crate::password::Verifier::from_password(&p))
                .to_string(),
        ),
        None => None,
    })
}
