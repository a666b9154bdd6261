//! Roles, relation owners and privileges: who may log in, who is a superuser, who may read,
//! write and drop each stream and table.
//!
//! [`Roles`] holds two things behind one lock:
//! - the roles: those of the `--password-file` (installed by the server at start, superusers
//!   that can log in, not stored in the catalog and not changed by SQL) and those of
//!   `CREATE ROLE` / `CREATE USER` (stored in the data directory's catalog, with their
//!   password only as a SCRAM-SHA-256 verifier);
//! - an access list per relation: its owner and the privileges granted to other roles
//!   (`public` stands for every role).
//!
//! A session is a superuser when its user is a role with SUPERUSER, or when it is not a
//! role at all and connected by trust (loopback without `--password-file`): such a user is
//! the server's bootstrap user, as PostgreSQL's initdb user is, so a trust-connected client
//! keeps every right unless its name is a role created NOSUPERUSER. Superusers pass every
//! check. Everyone else needs, per relation, to own it or to hold the privilege through a
//! grant to them or to `public`.
//!
//! Design decision: privileges are checked when a statement starts (binding has resolved
//! its relations), not per tuple; a continuous query already running keeps its rows after a
//! REVOKE, as a PostgreSQL cursor opened before a REVOKE does.
//!
//! ```ignore
//! use tcq::engine::roles::{Roles, RoleOptionsSet};
//! use tcq::sql::Privileges;
//! let roles = Roles::default();
//! roles.create("alice", RoleOptionsSet { login: true, superuser: false, password: None }).unwrap();
//! roles.set_owner("flights", "bob");
//! assert!(roles.check("alice", false, "stream", "flights", Privileges::SELECT).is_err());
//! roles.grant("flights", &["alice".to_string()], Privileges::SELECT, true).unwrap();
//! assert!(roles.check("alice", false, "stream", "flights", Privileges::SELECT).is_ok());
//! assert!(roles.check("alice", false, "stream", "flights", Privileges::INSERT).is_err());
//! ```

use std::collections::BTreeMap;

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::sql::Privileges;

/// The grantee that stands for every role.
pub(crate) const PUBLIC: &str = "public";

/// One role.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Role {
    /// The role's name.
    pub(crate) name: String,
    /// May connect (LOGIN).
    pub(crate) login: bool,
    /// Passes every privilege check and manages roles (SUPERUSER).
    pub(crate) superuser: bool,
    /// The SCRAM-SHA-256 verifier of its password, PostgreSQL's stored form
    /// (`SCRAM-SHA-256$4096:...`); `None`: no password, it cannot log in with one.
    pub(crate) password: Option<String>,
    /// Defined by `--password-file`: not stored in the catalog, not changed by SQL.
    #[serde(skip)]
    pub(crate) from_file: bool,
}

/// The attributes of a new role.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RoleOptionsSet {
    /// LOGIN.
    pub(crate) login: bool,
    /// SUPERUSER.
    pub(crate) superuser: bool,
    /// The SCRAM-SHA-256 verifier of its password.
    pub(crate) password: Option<String>,
}

/// A relation's owner and the privileges granted on it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Acl {
    /// The relation's name.
    pub(crate) relation: String,
    /// The role (or trust-connected user) that created it.
    pub(crate) owner: String,
    /// Privileges granted, by grantee (`public` for every role).
    pub(crate) grants: BTreeMap<String, Privileges>,
    /// A GRANT or REVOKE has named the relation: its access list is no longer the
    /// default, and `relacl` shows it (the owner's entry at least), as PostgreSQL shows an
    /// access list from the first GRANT or REVOKE on.
    #[serde(default)]
    pub(crate) explicit: bool,
}

#[derive(Default)]
struct State {
    roles: BTreeMap<String, Role>,
    acls: BTreeMap<String, Acl>,
}

/// Roles and access lists, shared by every session.
#[derive(Default)]
pub(crate) struct Roles {
    state: RwLock<State>,
    /// Counts changes to the roles (not to access lists), so that a cache of verified
    /// passwords can tell when it is stale (see [`Roles::generation`]).
    generation: std::sync::atomic::AtomicU64,
}

/// A stable oid for a role name (FNV-1a folded into [20000, 1020000)), so that
/// `pg_class.relowner` and `pg_authid.oid` agree across statements and restarts.
pub(crate) fn role_oid(name: &str) -> i64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    20_000 + (h % 1_000_000) as i64
}

impl Roles {
    /// Install the `--password-file` users: superusers that can log in, with their
    /// verifiers. A catalog role of the same name keeps its own attributes.
    pub(crate) fn install_file_roles(&self, users: impl IntoIterator<Item = (String, String)>) {
        let mut st = self.state.write();
        for (name, verifier) in users {
            st.roles.entry(name.clone()).or_insert(Role {
                name,
                login: true,
                superuser: true,
                password: Some(verifier),
                from_file: true,
            });
        }
        drop(st);
        self.changed();
    }

    /// A number that changes whenever a role is created, altered, dropped or restored:
    /// credentials checked under one generation need checking again under another.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    fn changed(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// The role called `name`, if there is one.
    pub(crate) fn get(&self, name: &str) -> Option<Role> {
        self.state.read().roles.get(name).cloned()
    }

    /// Every role, by name.
    pub(crate) fn list(&self) -> Vec<Role> {
        self.state.read().roles.values().cloned().collect()
    }

    /// Whether `user` is a superuser now; `implicit` is what a user who is no role is (a
    /// trust-connected bootstrap user).
    pub(crate) fn is_superuser(&self, user: &str, implicit: bool) -> bool {
        // Asked by every statement (each INSERT on the ingest path): no copy of the role.
        self.state
            .read()
            .roles
            .get(user)
            .map_or(implicit, |r| r.superuser)
    }

    /// `CREATE ROLE`. Errors: 42939 for a reserved name, 42710 when it exists.
    pub(crate) fn create(&self, name: &str, o: RoleOptionsSet) -> Result<()> {
        check_role_name(name)?;
        let mut st = self.state.write();
        if st.roles.contains_key(name) {
            return Err(Error::DuplicateObject(format!(
                "role \"{name}\" already exists"
            )));
        }
        st.roles.insert(
            name.to_string(),
            Role {
                name: name.to_string(),
                login: o.login,
                superuser: o.superuser,
                password: o.password,
                from_file: false,
            },
        );
        drop(st);
        self.changed();
        Ok(())
    }

    /// Change a role with `f`. Errors: 42704 for an unknown role, 42501 for a role of the
    /// password file.
    pub(crate) fn alter(&self, name: &str, f: impl FnOnce(&mut Role)) -> Result<()> {
        let mut st = self.state.write();
        let role = st
            .roles
            .get_mut(name)
            .ok_or_else(|| Error::UndefinedObject(format!("role \"{name}\" does not exist")))?;
        if role.from_file {
            return Err(from_file(name));
        }
        f(role);
        drop(st);
        self.changed();
        Ok(())
    }

    /// `DROP ROLE`: `Ok(false)` when it does not exist. Errors: 42501 for a role of the
    /// password file, 2BP01 while it owns relations (named in the message).
    pub(crate) fn drop_role(&self, name: &str) -> Result<bool> {
        let mut st = self.state.write();
        let Some(role) = st.roles.get(name) else {
            return Ok(false);
        };
        if role.from_file {
            return Err(from_file(name));
        }
        let owned: Vec<&str> = st
            .acls
            .values()
            .filter(|a| a.owner == name)
            .map(|a| a.relation.as_str())
            .collect();
        if !owned.is_empty() {
            return Err(Error::DependentObjectsStillExist(format!(
                "role \"{name}\" cannot be dropped because some objects depend on it: owner of {}",
                owned.join(", ")
            )));
        }
        st.roles.remove(name);
        for acl in st.acls.values_mut() {
            acl.grants.remove(name);
        }
        drop(st);
        self.changed();
        Ok(true)
    }

    /// Record that `owner` created `relation` (no privileges granted yet).
    pub(crate) fn set_owner(&self, relation: &str, owner: &str) {
        self.state.write().acls.insert(
            relation.to_string(),
            Acl {
                relation: relation.to_string(),
                owner: owner.to_string(),
                grants: BTreeMap::new(),
                explicit: false,
            },
        );
    }

    /// Give `relation` to `owner`, keeping the grants to other roles. What was granted
    /// to the new owner is folded into its ownership (it holds every privilege), so the
    /// access list has one entry per grantee, as PostgreSQL's `aclnewowner` leaves it.
    /// Errors: 42704 when `owner` is no role.
    pub(crate) fn change_owner(&self, relation: &str, owner: &str) -> Result<()> {
        let mut st = self.state.write();
        if !st.roles.contains_key(owner) {
            return Err(Error::UndefinedObject(format!(
                "role \"{owner}\" does not exist"
            )));
        }
        let acl = st.acls.entry(relation.to_string()).or_insert_with(|| Acl {
            relation: relation.to_string(),
            ..Acl::default()
        });
        acl.owner = owner.to_string();
        acl.grants.remove(owner);
        Ok(())
    }

    /// Forget a dropped relation's owner and grants.
    pub(crate) fn remove_relation(&self, relation: &str) {
        self.state.write().acls.remove(relation);
    }

    /// The owner of `relation`; `None` for a relation whose owner was never recorded (one
    /// created before roles existed: only superusers may use it).
    pub(crate) fn owner(&self, relation: &str) -> Option<String> {
        self.state
            .read()
            .acls
            .get(relation)
            .map(|a| a.owner.clone())
    }

    /// The access list of `relation`.
    pub(crate) fn acl(&self, relation: &str) -> Option<Acl> {
        self.state.read().acls.get(relation).cloned()
    }

    /// Every relation owner (for `pg_authid`: owners that are no role are shown too).
    pub(crate) fn owners(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .state
            .read()
            .acls
            .values()
            .map(|a| a.owner.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// GRANT (`grant`) or REVOKE `privileges` on `relation` to or from `grantees`. The
    /// owner holds every privilege already: a grant to it changes nothing (and a revoke
    /// from it neither: tcq has no owner that gave up its own rights).
    /// Errors: 42704 for a grantee that is neither a role nor `public`.
    pub(crate) fn grant(
        &self,
        relation: &str,
        grantees: &[String],
        privileges: Privileges,
        grant: bool,
    ) -> Result<()> {
        let mut st = self.state.write();
        for g in grantees {
            if g != PUBLIC && !st.roles.contains_key(g) {
                return Err(Error::UndefinedObject(format!(
                    "role \"{g}\" does not exist"
                )));
            }
        }
        let acl = st.acls.entry(relation.to_string()).or_insert_with(|| Acl {
            relation: relation.to_string(),
            ..Acl::default()
        });
        acl.explicit = true;
        for g in grantees.iter().filter(|g| **g != acl.owner) {
            let held = acl.grants.get(g).copied().unwrap_or_default();
            let now = if grant {
                held.union(privileges)
            } else {
                held.without(privileges)
            };
            if now.is_empty() {
                acl.grants.remove(g);
            } else {
                acl.grants.insert(g.clone(), now);
            }
        }
        Ok(())
    }

    /// Whether `user` (a superuser when `superuser`) may use `privileges` on `relation`, a
    /// `kind` (`stream` or `table`). Errors: 42501 `permission denied for stream x`.
    pub(crate) fn check(
        &self,
        user: &str,
        superuser: bool,
        kind: &str,
        relation: &str,
        privileges: Privileges,
    ) -> Result<()> {
        if superuser || self.privileges(user, relation).0.contains(privileges) {
            Ok(())
        } else {
            Err(Error::InsufficientPrivilege(format!(
                "permission denied for {kind} {relation}"
            )))
        }
    }

    /// What `user` (not a superuser) holds on `relation`: every privilege when it owns it
    /// (`true`: with grant option), else what was granted to it or to `public` (`false`).
    /// A relation with no recorded owner grants nothing.
    pub(crate) fn privileges(&self, user: &str, relation: &str) -> (Privileges, bool) {
        let st = self.state.read();
        let Some(a) = st.acls.get(relation) else {
            return (Privileges::default(), false);
        };
        if a.owner == user {
            return (Privileges::ALL, true);
        }
        let granted = |g: &str| a.grants.get(g).copied().unwrap_or_default();
        (granted(user).union(granted(PUBLIC)), false)
    }

    /// Whether `user` owns `relation` (or is a superuser). Errors: 42501 `must be owner of
    /// <kind> <relation>`.
    pub(crate) fn check_owner(
        &self,
        user: &str,
        superuser: bool,
        kind: &str,
        relation: &str,
    ) -> Result<()> {
        let owns = || {
            self.state
                .read()
                .acls
                .get(relation)
                .is_some_and(|a| a.owner == user)
        };
        if superuser || owns() {
            return Ok(());
        }
        Err(Error::InsufficientPrivilege(format!(
            "must be owner of {kind} {relation}"
        )))
    }

    /// The catalog records: the roles made by SQL, then the access lists.
    pub(crate) fn records(&self) -> Vec<super::archive::CatalogRecord> {
        let st = self.state.read();
        let roles = st
            .roles
            .values()
            .filter(|r| !r.from_file)
            .map(|r| serde_json::to_string(r).expect("a role serialises"))
            .map(super::archive::CatalogRecord::Role);
        let acls = st
            .acls
            .values()
            .map(|a| serde_json::to_string(a).expect("an access list serialises"))
            .map(super::archive::CatalogRecord::Acl);
        roles.chain(acls).collect()
    }

    /// Restore a role from its catalog record. Errors: XX001 for a record that is no role.
    pub(crate) fn restore_role(&self, json: &str) -> Result<()> {
        let role: Role = serde_json::from_str(json)
            .map_err(|e| Error::DataCorrupted(format!("catalog role record: {e}")))?;
        self.state.write().roles.insert(role.name.clone(), role);
        self.changed();
        Ok(())
    }

    /// Restore an access list from its catalog record. Errors: XX001.
    pub(crate) fn restore_acl(&self, json: &str) -> Result<()> {
        let mut acl: Acl = serde_json::from_str(json)
            .map_err(|e| Error::DataCorrupted(format!("catalog access list record: {e}")))?;
        // Records written before owners' own grants were folded into ownership.
        let owner = acl.owner.clone();
        acl.grants.remove(&owner);
        self.state.write().acls.insert(acl.relation.clone(), acl);
        Ok(())
    }

    /// A copy of the state, to put back with [`Roles::restore`] when persisting a change
    /// fails.
    pub(crate) fn snapshot(&self) -> (Vec<Role>, Vec<Acl>) {
        let st = self.state.read();
        (
            st.roles.values().cloned().collect(),
            st.acls.values().cloned().collect(),
        )
    }

    /// Put back a [`Roles::snapshot`].
    pub(crate) fn restore(&self, (roles, acls): (Vec<Role>, Vec<Acl>)) {
        let mut st = self.state.write();
        st.roles = roles.into_iter().map(|r| (r.name.clone(), r)).collect();
        st.acls = acls.into_iter().map(|a| (a.relation.clone(), a)).collect();
        drop(st);
        self.changed();
    }
}

fn from_file(name: &str) -> Error {
    Error::InsufficientPrivilege(format!(
        "role \"{name}\" is defined by the password file: change it there"
    ))
}

/// PostgreSQL's reserved role names: `public`, `none`, and names starting with `pg_`.
fn check_role_name(name: &str) -> Result<()> {
    if name == PUBLIC || name == "none" {
        return Err(Error::ReservedName(format!(
            "role name \"{name}\" is reserved"
        )));
    }
    if name.starts_with("pg_") {
        return Err(Error::ReservedName(format!(
            "role name \"{name}\" is reserved: names starting with \"pg_\" are the system's"
        )));
    }
    if name.is_empty() {
        return Err(Error::InvalidParameterValue(
            "a role name cannot be empty".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles() -> Roles {
        let r = Roles::default();
        r.install_file_roles([("admin".to_string(), "SCRAM-SHA-256$x".to_string())]);
        r.create(
            "alice",
            RoleOptionsSet {
                login: true,
                ..Default::default()
            },
        )
        .unwrap();
        r.create("bob", RoleOptionsSet::default()).unwrap();
        r.set_owner("s", "bob");
        r
    }

    #[test]
    fn owners_grants_public_and_revoke() {
        let r = roles();
        assert!(r
            .check("bob", false, "stream", "s", Privileges::ALL)
            .is_ok());
        let denied = r
            .check("alice", false, "stream", "s", Privileges::SELECT)
            .unwrap_err();
        assert_eq!(denied.to_string(), "permission denied for stream s");
        r.grant("s", &[PUBLIC.into()], Privileges::SELECT, true)
            .unwrap();
        assert!(r
            .check("alice", false, "stream", "s", Privileges::SELECT)
            .is_ok());
        assert!(r
            .check("alice", false, "stream", "s", Privileges::INSERT)
            .is_err());
        r.grant("s", &[PUBLIC.into()], Privileges::ALL, false)
            .unwrap();
        assert!(r
            .check("alice", false, "stream", "s", Privileges::SELECT)
            .is_err());
        assert!(r
            .check("alice", true, "stream", "s", Privileges::ALL)
            .is_ok());
        assert!(matches!(
            r.grant("s", &["carol".into()], Privileges::SELECT, true),
            Err(Error::UndefinedObject(_))
        ));
        // A relation whose owner was never recorded is for superusers only.
        assert!(r
            .check("alice", false, "stream", "old", Privileges::SELECT)
            .is_err());
    }

    #[test]
    fn reserved_duplicate_file_and_owning_roles_are_refused() {
        let r = roles();
        assert!(matches!(
            r.create("public", RoleOptionsSet::default()),
            Err(Error::ReservedName(_))
        ));
        assert!(matches!(
            r.create("pg_x", RoleOptionsSet::default()),
            Err(Error::ReservedName(_))
        ));
        assert!(matches!(
            r.create("alice", RoleOptionsSet::default()),
            Err(Error::DuplicateObject(_))
        ));
        assert!(matches!(
            r.alter("admin", |x| x.superuser = false),
            Err(Error::InsufficientPrivilege(_))
        ));
        assert!(matches!(
            r.drop_role("bob"),
            Err(Error::DependentObjectsStillExist(_))
        ));
        r.remove_relation("s");
        assert!(r.drop_role("bob").unwrap());
        assert!(!r.drop_role("bob").unwrap());
    }

    #[test]
    fn records_round_trip_without_the_file_roles() {
        let r = roles();
        r.grant("s", &["alice".into()], Privileges::INSERT, true)
            .unwrap();
        let copy = Roles::default();
        for rec in r.records() {
            match rec {
                super::super::archive::CatalogRecord::Role(j) => copy.restore_role(&j).unwrap(),
                super::super::archive::CatalogRecord::Acl(j) => copy.restore_acl(&j).unwrap(),
                other => panic!("unexpected record {other:?}"),
            }
        }
        assert!(copy.get("admin").is_none());
        assert_eq!(copy.get("alice"), r.get("alice"));
        assert_eq!(copy.acl("s"), r.acl("s"));
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::engine::roles::{RoleOptionsSet, Roles};
        use crate::sql::Privileges;
        let roles = Roles::default();
        roles
            .create(
                "alice",
                RoleOptionsSet {
                    login: true,
                    superuser: false,
                    password: None,
                },
            )
            .unwrap();
        roles.set_owner("flights", "bob");
        assert!(roles
            .check("alice", false, "stream", "flights", Privileges::SELECT)
            .is_err());
        roles
            .grant("flights", &["alice".to_string()], Privileges::SELECT, true)
            .unwrap();
        assert!(roles
            .check("alice", false, "stream", "flights", Privileges::SELECT)
            .is_ok());
        assert!(roles
            .check("alice", false, "stream", "flights", Privileges::INSERT)
            .is_err());
    }
}
