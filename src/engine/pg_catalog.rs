//! PostgreSQL 15's system catalogs and `information_schema`, filled from tcq's catalog, as
//! relations for finite queries ([`crate::sql::RelationProvider`]).
//!
//! Columns carry PostgreSQL 15's names in its order and, but for a few, its types: `oid`
//! columns are `oid` (held as `bigint`), arrays are typed with their element type
//! (`pg_constraint.conkey` is `smallint[]`, `pg_index.indkey` an `int2vector`,
//! `pg_proc.proargtypes` an `oidvector`; held as their text form, `{1,2}` and `1 2`), so
//! drivers decode them as PostgreSQL's; `name` and `"char"` columns are `name` and
//! `"char"` (held as text), and arrays of a type tcq lacks (`aclitem[]`) are `text`.
//!
//! Streams are foreign tables (relkind `'f'`) of the foreign server `tcq` (wrapper
//! `tcq_stream`): a stream's tuples live outside any stored table, so psql's `\d flights`
//! prints `Foreign table "public.flights"` with `FDW options: (timestampcolumn 'ts', type
//! 'unarchived')`, and the TIMESTAMPCOLUMN is NOT NULL with the column FDW option
//! `timestampcolumn 'true'`. `\d` and `\dE` list streams; `\dt` lists stored tables only.
//! A stream named `network.tcpdump` lives in schema `network`.
//!
//! The catalogs themselves are listed in `pg_class` (relkind `'r'` in `pg_catalog`,
//! `'v'` in `information_schema`) with their columns in `pg_attribute`, so `\d pg_class`
//! and `'pg_catalog.pg_extension'::regclass` work. The roles (`pg_authid`, `pg_roles`,
//! `pg_user`) are those of `engine::roles`, plus the session's user and every relation
//! owner that is no role (trust-connected users, superusers); the session's user has oid
//! 10 and owns the system objects, every other role a stable oid from its name. Relations
//! show their owner (`relowner`) and, once something is granted, their `relacl`
//! (`{owner=arwdD/owner,alice=r/owner}`). One database: the session's.

use std::sync::Arc;

use super::catalog::{Catalog, Stream};
use crate::exec::relational_funcs::{INFORMATION_SCHEMA_OID, PG_CATALOG_OID, PUBLIC_OID};
use crate::sql::{Privileges, RelationProvider};
use crate::types::{CatalogType, Column, DataType, ElemType, Value};

/// The relations of the catalogs: (schema, name, fixed oid or 0, columns as
/// `name:type` with type one of oid, name, text, char, bool, int2, int4, int8, float4,
/// tstz, regproc, the typed arrays text[], name[], char[], int2[], oid[], int2vector,
/// oidvector, and arr (an array of a type tcq lacks, `aclitem[]`: sent as text).
const RELATIONS: &[(&str, &str, i64, &str)] = &[
    ("pg_catalog", "pg_namespace", 2615, "oid:oid nspname:name nspowner:oid nspacl:arr"),
    ("pg_catalog", "pg_class", 1259, "oid:oid relname:name relnamespace:oid reltype:oid reloftype:oid relowner:oid relam:oid relfilenode:oid reltablespace:oid relpages:int4 reltuples:float4 relallvisible:int4 reltoastrelid:oid relhasindex:bool relisshared:bool relpersistence:char relkind:char relnatts:int2 relchecks:int2 relhasrules:bool relhastriggers:bool relhassubclass:bool relrowsecurity:bool relforcerowsecurity:bool relispopulated:bool relreplident:char relispartition:bool relrewrite:oid relfrozenxid:int8 relminmxid:int8 relacl:arr reloptions:text[] relpartbound:text"),
    ("pg_catalog", "pg_attribute", 1249, "attrelid:oid attname:name atttypid:oid attstattarget:int4 attlen:int2 attnum:int2 attndims:int4 attcacheoff:int4 atttypmod:int4 attbyval:bool attalign:char attstorage:char attcompression:char attnotnull:bool atthasdef:bool atthasmissing:bool attidentity:char attgenerated:char attisdropped:bool attislocal:bool attinhcount:int4 attcollation:oid attacl:arr attoptions:text[] attfdwoptions:text[] attmissingval:arr"),
    ("pg_catalog", "pg_type", 1247, "oid:oid typname:name typnamespace:oid typowner:oid typlen:int2 typbyval:bool typtype:char typcategory:char typispreferred:bool typisdefined:bool typdelim:char typrelid:oid typsubscript:regproc typelem:oid typarray:oid typinput:regproc typoutput:regproc typreceive:regproc typsend:regproc typmodin:regproc typmodout:regproc typanalyze:regproc typalign:char typstorage:char typnotnull:bool typbasetype:oid typtypmod:int4 typndims:int4 typcollation:oid typdefaultbin:text typdefault:text typacl:arr"),
    ("pg_catalog", "pg_proc", 1255, "oid:oid proname:name pronamespace:oid proowner:oid prolang:oid procost:float4 prorows:float4 provariadic:oid prosupport:regproc prokind:char prosecdef:bool proleakproof:bool proisstrict:bool proretset:bool provolatile:char proparallel:char pronargs:int2 pronargdefaults:int2 prorettype:oid proargtypes:oidvector proallargtypes:oid[] proargmodes:char[] proargnames:text[] proargdefaults:text protrftypes:oid[] prosrc:text probin:text prosqlbody:text proconfig:text[] proacl:arr"),
    ("pg_catalog", "pg_database", 1262, "oid:oid datname:name datdba:oid encoding:int4 datlocprovider:char datistemplate:bool datallowconn:bool datconnlimit:int4 datfrozenxid:int8 datminmxid:int8 dattablespace:oid datcollate:text datctype:text daticulocale:text datcollversion:text datacl:arr"),
    ("pg_catalog", "pg_authid", 1260, "oid:oid rolname:name rolsuper:bool rolinherit:bool rolcreaterole:bool rolcreatedb:bool rolcanlogin:bool rolreplication:bool rolbypassrls:bool rolconnlimit:int4 rolpassword:text rolvaliduntil:tstz"),
    ("pg_catalog", "pg_roles", 0, "rolname:name rolsuper:bool rolinherit:bool rolcreaterole:bool rolcreatedb:bool rolcanlogin:bool rolreplication:bool rolconnlimit:int4 rolpassword:text rolvaliduntil:tstz rolbypassrls:bool rolconfig:text[] oid:oid"),
    ("pg_catalog", "pg_user", 0, "usename:name usesysid:oid usecreatedb:bool usesuper:bool userepl:bool usebypassrls:bool passwd:text valuntil:tstz useconfig:text[]"),
    ("pg_catalog", "pg_auth_members", 1261, "roleid:oid member:oid grantor:oid admin_option:bool"),
    ("pg_catalog", "pg_index", 2610, "indexrelid:oid indrelid:oid indnatts:int2 indnkeyatts:int2 indisunique:bool indnullsnotdistinct:bool indisprimary:bool indisexclusion:bool indimmediate:bool indisclustered:bool indisvalid:bool indcheckxmin:bool indisready:bool indislive:bool indisreplident:bool indkey:int2vector indcollation:oidvector indclass:oidvector indoption:int2vector indexprs:text indpred:text"),
    ("pg_catalog", "pg_constraint", 2606, "oid:oid conname:name connamespace:oid contype:char condeferrable:bool condeferred:bool convalidated:bool conrelid:oid contypid:oid conindid:oid conparentid:oid confrelid:oid confupdtype:char confdeltype:char confmatchtype:char conislocal:bool coninhcount:int4 connoinherit:bool conkey:int2[] confkey:int2[] conpfeqop:oid[] conppeqop:oid[] conffeqop:oid[] confdelsetcols:int2[] conexclop:oid[] conbin:text"),
    ("pg_catalog", "pg_description", 2609, "objoid:oid classoid:oid objsubid:int4 description:text"),
    ("pg_catalog", "pg_shdescription", 2396, "objoid:oid classoid:oid description:text"),
    ("pg_catalog", "pg_am", 2601, "oid:oid amname:name amhandler:regproc amtype:char"),
    ("pg_catalog", "pg_attrdef", 2604, "oid:oid adrelid:oid adnum:int2 adbin:text"),
    ("pg_catalog", "pg_inherits", 2611, "inhrelid:oid inhparent:oid inhseqno:int4 inhdetachpending:bool"),
    ("pg_catalog", "pg_extension", 3079, "oid:oid extname:name extowner:oid extnamespace:oid extrelocatable:bool extversion:text extconfig:oid[] extcondition:text[]"),
    ("pg_catalog", "pg_collation", 3456, "oid:oid collname:name collnamespace:oid collowner:oid collprovider:char collisdeterministic:bool collencoding:int4 collcollate:text collctype:text colliculocale:text collversion:text"),
    ("pg_catalog", "pg_enum", 3501, "oid:oid enumtypid:oid enumsortorder:float4 enumlabel:name"),
    ("pg_catalog", "pg_range", 3541, "rngtypid:oid rngsubtype:oid rngmultitypid:oid rngcollation:oid rngsubopc:oid rngcanonical:regproc rngsubdiff:regproc"),
    ("pg_catalog", "pg_settings", 0, "name:text setting:text unit:text category:text short_desc:text extra_desc:text context:text vartype:text source:text min_val:text max_val:text enumvals:text[] boot_val:text reset_val:text sourcefile:text sourceline:int4 pending_restart:bool"),
    ("pg_catalog", "pg_tables", 0, "schemaname:name tablename:name tableowner:name tablespace:name hasindexes:bool hasrules:bool hastriggers:bool rowsecurity:bool"),
    ("pg_catalog", "pg_views", 0, "schemaname:name viewname:name viewowner:name definition:text"),
    ("pg_catalog", "pg_matviews", 0, "schemaname:name matviewname:name matviewowner:name tablespace:name hasindexes:bool ispopulated:bool definition:text"),
    ("pg_catalog", "pg_foreign_table", 3118, "ftrelid:oid ftserver:oid ftoptions:text[]"),
    ("pg_catalog", "pg_foreign_server", 1417, "oid:oid srvname:name srvowner:oid srvfdw:oid srvtype:text srvversion:text srvacl:arr srvoptions:text[]"),
    ("pg_catalog", "pg_foreign_data_wrapper", 2328, "oid:oid fdwname:name fdwowner:oid fdwhandler:oid fdwvalidator:oid fdwacl:arr fdwoptions:text[]"),
    ("pg_catalog", "pg_policy", 3256, "oid:oid polname:name polrelid:oid polcmd:char polpermissive:bool polroles:oid[] polqual:text polwithcheck:text"),
    ("pg_catalog", "pg_statistic_ext", 3381, "oid:oid stxrelid:oid stxname:name stxnamespace:oid stxowner:oid stxstattarget:int4 stxkeys:int2vector stxkind:char[] stxexprs:text"),
    ("pg_catalog", "pg_publication", 6104, "oid:oid pubname:name pubowner:oid puballtables:bool pubinsert:bool pubupdate:bool pubdelete:bool pubtruncate:bool pubviaroot:bool"),
    ("pg_catalog", "pg_publication_namespace", 6237, "oid:oid pnpubid:oid pnnspid:oid"),
    ("pg_catalog", "pg_publication_rel", 6106, "oid:oid prpubid:oid prrelid:oid prqual:text prattrs:int2vector"),
    ("pg_catalog", "pg_trigger", 2620, "oid:oid tgrelid:oid tgparentid:oid tgname:name tgfoid:oid tgtype:int2 tgenabled:char tgisinternal:bool tgconstrrelid:oid tgconstrindid:oid tgconstraint:oid tgdeferrable:bool tginitdeferred:bool tgnargs:int2 tgattr:int2vector tgargs:text tgqual:text tgoldtable:name tgnewtable:name"),
    ("pg_catalog", "pg_rewrite", 2618, "oid:oid rulename:name ev_class:oid ev_type:char ev_enabled:char is_instead:bool ev_qual:text ev_action:text"),
    ("pg_catalog", "pg_sequence", 2224, "seqrelid:oid seqtypid:oid seqstart:int8 seqincrement:int8 seqmax:int8 seqmin:int8 seqcache:int8 seqcycle:bool"),
    ("pg_catalog", "pg_depend", 2608, "classid:oid objid:oid objsubid:int4 refclassid:oid refobjid:oid refobjsubid:int4 deptype:char"),
    ("pg_catalog", "pg_tablespace", 1213, "oid:oid spcname:name spcowner:oid spcacl:arr spcoptions:text[]"),
    ("pg_catalog", "pg_language", 2612, "oid:oid lanname:name lanowner:oid lanispl:bool lanpltrusted:bool lanplcallfoid:oid laninline:oid lanvalidator:oid lanacl:arr"),
    ("pg_catalog", "pg_operator", 2617, "oid:oid oprname:name oprnamespace:oid oprowner:oid oprkind:char oprcanmerge:bool oprcanhash:bool oprleft:oid oprright:oid oprresult:oid oprcom:oid oprnegate:oid oprcode:regproc oprrest:regproc oprjoin:regproc"),
    ("pg_catalog", "pg_event_trigger", 3466, "oid:oid evtname:name evtevent:name evtowner:oid evtfoid:oid evtenabled:char evttags:text[]"),
    ("pg_catalog", "pg_cast", 2605, "oid:oid castsource:oid casttarget:oid castfunc:oid castcontext:char castmethod:char"),
    ("pg_catalog", "pg_db_role_setting", 2964, "setdatabase:oid setrole:oid setconfig:text[]"),
    ("pg_catalog", "pg_ts_config", 3602, "oid:oid cfgname:name cfgnamespace:oid cfgowner:oid cfgparser:oid"),
    ("pg_catalog", "pg_ts_parser", 3601, "oid:oid prsname:name prsnamespace:oid prsstart:regproc prstoken:regproc prsend:regproc prsheadline:regproc prslextype:regproc"),
    ("pg_catalog", "pg_ts_dict", 3600, "oid:oid dictname:name dictnamespace:oid dictowner:oid dicttemplate:oid dictinitoption:text"),
    ("pg_catalog", "pg_ts_template", 3764, "oid:oid tmplname:name tmplnamespace:oid tmplinit:regproc tmpllexize:regproc"),
    ("pg_catalog", "pg_opclass", 2616, "oid:oid opcmethod:oid opcname:name opcnamespace:oid opcowner:oid opcfamily:oid opcintype:oid opcdefault:bool opckeytype:oid"),
    ("pg_catalog", "pg_opfamily", 2753, "oid:oid opfmethod:oid opfname:name opfnamespace:oid opfowner:oid"),
    ("pg_catalog", "pg_conversion", 2607, "oid:oid conname:name connamespace:oid conowner:oid conforencoding:int4 contoencoding:int4 conproc:regproc condefault:bool"),
    ("pg_catalog", "pg_default_acl", 826, "oid:oid defaclrole:oid defaclnamespace:oid defaclobjtype:char defaclacl:arr"),
    ("pg_catalog", "pg_user_mapping", 1418, "oid:oid umuser:oid umserver:oid umoptions:text[]"),
    ("pg_catalog", "pg_subscription", 6100, "oid:oid subdbid:oid subname:name subowner:oid subenabled:bool subconninfo:text subslotname:name subsynccommit:text subpublications:text[]"),
    ("pg_catalog", "pg_user_mappings", 0, "umid:oid srvid:oid srvname:name umuser:oid usename:name umoptions:text[]"),
    ("information_schema", "schemata", 0, "catalog_name:name schema_name:name schema_owner:name default_character_set_catalog:name default_character_set_schema:name default_character_set_name:name sql_path:varchar"),
    ("information_schema", "tables", 0, "table_catalog:name table_schema:name table_name:name table_type:varchar self_referencing_column_name:name reference_generation:varchar user_defined_type_catalog:name user_defined_type_schema:name user_defined_type_name:name is_insertable_into:varchar is_typed:varchar commit_action:varchar"),
    ("information_schema", "columns", 0, "table_catalog:name table_schema:name table_name:name column_name:name ordinal_position:int4 column_default:varchar is_nullable:varchar data_type:varchar character_maximum_length:int4 character_octet_length:int4 numeric_precision:int4 numeric_precision_radix:int4 numeric_scale:int4 datetime_precision:int4 interval_type:varchar interval_precision:int4 character_set_catalog:name character_set_schema:name character_set_name:name collation_catalog:name collation_schema:name collation_name:name domain_catalog:name domain_schema:name domain_name:name udt_catalog:name udt_schema:name udt_name:name scope_catalog:name scope_schema:name scope_name:name maximum_cardinality:int4 dtd_identifier:name is_self_referencing:varchar is_identity:varchar identity_generation:varchar identity_start:varchar identity_increment:varchar identity_maximum:varchar identity_minimum:varchar identity_cycle:varchar is_generated:varchar generation_expression:varchar is_updatable:varchar"),
    ("information_schema", "views", 0, "table_catalog:name table_schema:name table_name:name view_definition:varchar check_option:varchar is_updatable:varchar is_insertable_into:varchar is_trigger_updatable:varchar is_trigger_deletable:varchar is_trigger_insertable_into:varchar"),
    ("information_schema", "routines", 0, "specific_catalog:name specific_schema:name specific_name:name routine_catalog:name routine_schema:name routine_name:name routine_type:varchar data_type:varchar type_udt_catalog:name type_udt_schema:name type_udt_name:name routine_body:varchar routine_definition:varchar external_name:varchar external_language:varchar is_deterministic:varchar is_null_call:varchar security_type:varchar"),
];

/// Built-in types: (oid, name, length, category, array oid). Array types follow from the
/// array oid (named `_name`, category 'A').
const TYPES: &[(i64, &str, i64, char, i64)] = &[
    (16, "bool", 1, 'B', 1000),
    (17, "bytea", -1, 'U', 1001),
    (18, "char", 1, 'Z', 1002),
    (19, "name", 64, 'S', 1003),
    (20, "int8", 8, 'N', 1016),
    (21, "int2", 2, 'N', 1005),
    (22, "int2vector", -1, 'A', 1006),
    (23, "int4", 4, 'N', 1007),
    (24, "regproc", 4, 'N', 1008),
    (25, "text", -1, 'S', 1009),
    (26, "oid", 4, 'N', 1028),
    (27, "tid", 6, 'U', 1010),
    (28, "xid", 4, 'U', 1011),
    (29, "cid", 4, 'U', 1012),
    (30, "oidvector", -1, 'A', 1013),
    (114, "json", -1, 'U', 199),
    (142, "xml", -1, 'U', 143),
    (194, "pg_node_tree", -1, 'Z', 0),
    (700, "float4", 4, 'N', 1021),
    (701, "float8", 8, 'N', 1022),
    (705, "unknown", -2, 'X', 0),
    (869, "inet", -1, 'I', 1041),
    (1033, "aclitem", 12, 'U', 1034),
    (1042, "bpchar", -1, 'S', 1014),
    (1043, "varchar", -1, 'S', 1015),
    (1082, "date", 4, 'D', 1182),
    (1083, "time", 8, 'D', 1183),
    (1114, "timestamp", 8, 'D', 1115),
    (1184, "timestamptz", 8, 'D', 1185),
    (1186, "interval", 16, 'T', 1187),
    (1266, "timetz", 12, 'D', 1270),
    (1700, "numeric", -1, 'N', 1231),
    (2205, "regclass", 4, 'N', 2210),
    (2206, "regtype", 4, 'N', 2211),
    (2249, "record", -1, 'P', 2287),
    (2275, "cstring", -2, 'P', 1263),
    (2276, "any", 4, 'P', 0),
    (2277, "anyarray", -1, 'P', 0),
    (2278, "void", 4, 'P', 0),
    (2283, "anyelement", 4, 'P', 0),
    (2950, "uuid", 16, 'U', 2951),
    (3802, "jsonb", -1, 'U', 3807),
    (4089, "regnamespace", 4, 'N', 4090),
    (4096, "regrole", 4, 'N', 4097),
];

/// tcq's own functions: (oid, name, kind, argument types, argument names, result type,
/// returns a set, description).
type Proc = (
    i64,
    &'static str,
    char,
    &'static [i64],
    &'static [&'static str],
    i64,
    &'static str,
);

/// A `pg_proc` row as the catalogs list it: [`Proc`] with owned argument types.
type ProcRow = (
    i64,
    &'static str,
    char,
    Vec<i64>,
    &'static [&'static str],
    i64,
    &'static str,
);

/// Every function `pg_proc` lists: tcq's own and the few built-ins above, then every
/// aggregate overload of the function table ([`crate::sql::functions`]).
fn procs() -> Vec<ProcRow> {
    let mut out: Vec<ProcRow> = PROCS
        .iter()
        .map(|&(o, n, k, args, names, ret, d)| (o, n, k, args.to_vec(), names, ret, d))
        .collect();
    for (o, n, k, args, ret, d) in crate::sql::functions::pg_proc_rows() {
        let args = args.into_iter().map(i64::from).collect();
        out.push((o.into(), n, k, args, &[], ret.into(), d));
    }
    out
}

const PROCS: &[Proc] = &[
    (
        9001,
        "tcq_advance",
        'f',
        &[25, 1114],
        &["stream", "t"],
        1114,
        "move an idle stream's time forward (a heartbeat)",
    ),
    (
        9002,
        "wtime",
        'f',
        &[],
        &[],
        1114,
        "end (exclusive) of the window instance being emitted",
    ),
    (
        9003,
        "wstart",
        'f',
        &[],
        &[],
        1114,
        "start of the window instance being emitted",
    ),
    (
        9004,
        "wrange",
        'f',
        &[],
        &[],
        1186,
        "RANGE BY of the window being emitted",
    ),
    (
        9005,
        "wslide",
        'f',
        &[],
        &[],
        1186,
        "SLIDE BY of the window being emitted",
    ),
    (
        89,
        "version",
        'f',
        &[],
        &[],
        25,
        "PostgreSQL version string",
    ),
    (1299, "now", 'f', &[], &[], 1184, "current transaction time"),
    (
        1081,
        "format_type",
        'f',
        &[26, 23],
        &[],
        25,
        "format a type oid and atttypmod to canonical SQL",
    ),
];

/// Oid of the foreign data wrapper and server that streams belong to.
const FDW_OID: i64 = 9100;
const SERVER_OID: i64 = 9101;
/// Oid of the one role.
const ROLE_OID: i64 = 10;
/// Oid of the one database.
const DATABASE_OID: i64 = 5;
/// Oid of the first catalog relation without a PostgreSQL oid.
const FIRST_VIEW_OID: i64 = 12000;

/// `typalign` of the built-in type `oid` (or of its array type), as PostgreSQL 15's
/// pg_type has it: `c` for one byte, `name`, `cstring` and `uuid`, `s` for two-byte
/// types and `tid`, `d` for eight bytes, `interval`, `timetz`, `record` and arrays of
/// those, `i` otherwise.
fn type_align(oid: i64) -> &'static str {
    if let Some(&(elem, ..)) = TYPES.iter().find(|t| t.4 == oid) {
        return if type_align(elem) == "d" { "d" } else { "i" };
    }
    let len = TYPES.iter().find(|t| t.0 == oid).map_or(-1, |t| t.2);
    match (oid, len) {
        (2950, _) | (_, 1 | 64 | -2) => "c",
        (_, 2 | 6) => "s",
        (1186 | 2249 | 2277, _) | (_, 8 | 12) => "d",
        _ => "i",
    }
}

/// `typstorage` of a built-in type of length `len`: `m` (main) for `inet` and
/// `numeric`, `x` (extended) for other variable-length types, `p` (plain) otherwise.
fn type_storage(oid: i64, len: i64) -> &'static str {
    match oid {
        869 | 1700 => "m",
        _ if len == -1 => "x",
        _ => "p",
    }
}

/// `provolatile` of function `oid` of kind `kind`, as PostgreSQL 15 has it: its
/// aggregates are immutable (`i`), `version`, `now` and `format_type` stable (`s`);
/// tcq's own functions are volatile (`v`): `tcq_advance` moves a stream's time and the
/// window functions (`wtime`, ...) change with the window being emitted.
fn volatility(oid: i64, kind: char) -> &'static str {
    match (oid, kind) {
        (_, 'a') => "i",
        (89 | 1081 | 1299, _) => "s",
        _ => "v",
    }
}

/// A catalog column of spec type `t` (see [`RELATIONS`]).
fn column_of(name: &str, t: &str) -> Column {
    let array = |e| Column::catalog(name, CatalogType::Array(e));
    match t {
        "oid" => Column::catalog(name, CatalogType::Oid),
        "name" => Column::catalog(name, CatalogType::Name),
        "char" => Column::catalog(name, CatalogType::Char),
        "text[]" => array(ElemType::Text),
        "name[]" => array(ElemType::Name),
        "char[]" => array(ElemType::Char),
        "int2[]" => array(ElemType::Int2),
        "oid[]" => array(ElemType::Oid),
        "int2vector" => Column::catalog(name, CatalogType::Int2Vector),
        "oidvector" => Column::catalog(name, CatalogType::OidVector),
        other => Column::new(name, col_type(other)),
    }
}

fn col_type(t: &str) -> DataType {
    match t {
        "int8" => DataType::Int8,
        "bool" => DataType::Bool,
        "int2" => DataType::Int2,
        "int4" => DataType::Int4,
        "float4" => DataType::Float4,
        "tstz" => DataType::TimestampTz,
        // information_schema's character_data and yes_or_no: varchar domains.
        "varchar" => DataType::Varchar(None),
        _ => DataType::Text,
    }
}

/// The PostgreSQL type oid a catalog column reports in `pg_attribute`: the type it is sent
/// as, but for the spec types held and sent as text (`name`, `"char"`, `regproc`, and
/// `arr`, an array of a type tcq lacks, reported as `text[]`).
fn col_pg_type(t: &str) -> i64 {
    match t {
        "name" => 19,
        "char" => 18,
        "regproc" => 24,
        "arr" => 1009,
        other => i64::from(column_of("", other).type_oid()),
    }
}

fn specs(cols: &str) -> Vec<(&str, &str)> {
    cols.split_whitespace()
        .map(|c| c.split_once(':').expect("name:type"))
        .collect()
}

/// The relation's oid: PostgreSQL's where it has one.
fn relation_oid(i: usize) -> i64 {
    match RELATIONS[i].2 {
        0 => FIRST_VIEW_OID + i as i64,
        oid => oid,
    }
}

fn int_of_named(row: &[(&str, Value)], col: &str) -> i64 {
    row.iter()
        .find(|(n, _)| *n == col)
        .and_then(|(_, v)| crate::exec::relational::int_of(v))
        .unwrap_or(0)
}

fn t(s: impl Into<String>) -> Value {
    Value::Text(s.into().into())
}

fn oid(v: i64) -> Value {
    Value::Int8(v)
}

/// A stable oid for a user schema (streams named `schema.name`).
fn schema_oid(name: &str) -> i64 {
    match name {
        "pg_catalog" => PG_CATALOG_OID,
        "public" => PUBLIC_OID,
        "information_schema" => INFORMATION_SCHEMA_OID,
        _ => {
            // FNV-1a, folded into [100000, 1100000): stable across statements and restarts.
            let mut h: u64 = 0xcbf29ce484222325;
            for b in name.bytes() {
                h ^= b as u64;
                h = h.wrapping_mul(0x100000001b3);
            }
            100_000 + (h % 1_000_000) as i64
        }
    }
}

fn split_name(name: &str) -> (&str, &str) {
    name.split_once('.').unwrap_or(("public", name))
}

/// A PostgreSQL type's (oid, typmod, length, storage) for a tcq column type.
/// [`pg_type_of`] for a stream's or table's column: `numeric(p, s)` has its typmod,
/// `((p << 16) | s) + 4` as PostgreSQL stores it.
fn pg_type_of_column(c: &crate::types::Column) -> (i64, i64, i64, char) {
    let (o, m, l, st) = pg_type_of(c.data_type);
    match c.typmod {
        Some(tm) => (o, tm.atttypmod(), l, st),
        None => (o, m, l, st),
    }
}

fn pg_type_of(d: DataType) -> (i64, i64, i64, char) {
    let typmod = match d {
        DataType::Varchar(Some(n)) | DataType::Bpchar(Some(n)) => n as i64 + 4,
        _ => -1,
    };
    let (len, storage) = match d {
        DataType::Bool => (1, 'p'),
        DataType::Int2 => (2, 'p'),
        DataType::Int4 | DataType::Float4 | DataType::Date => (4, 'p'),
        DataType::Int8
        | DataType::Float8
        | DataType::Timestamp
        | DataType::TimestampTz
        | DataType::Time => (8, 'p'),
        DataType::Interval => (16, 'p'),
        DataType::Numeric => (-1, 'm'),
        DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_) => (-1, 'x'),
    };
    (d.oid() as i64, typmod, len, storage)
}

/// The catalogs as the session of `user` on `database` sees them.
pub(crate) struct CatalogRelations<'a> {
    pub(crate) catalog: &'a Catalog,
    pub(crate) user: &'a str,
    pub(crate) database: &'a str,
    /// The session's settings (name, value), for `pg_settings`.
    pub(crate) settings: &'a [(String, String)],
    /// Whether the session's user is a superuser now.
    pub(crate) superuser: bool,
}

impl RelationProvider for CatalogRelations<'_> {
    fn relation(&self, schema: &str, name: &str) -> Option<(Vec<Column>, Vec<Vec<Value>>)> {
        relation(self, schema, name)
    }

    fn check_read(&self, schema: &str, name: &str) -> crate::Result<()> {
        // PostgreSQL grants pg_authid (it holds the password verifiers) to no one: only
        // superusers read it; pg_roles and pg_user are the open views of the roles.
        if schema == "pg_catalog" && name == "pg_authid" && !self.superuser {
            return Err(crate::Error::InsufficientPrivilege(
                "permission denied for table pg_authid".into(),
            ));
        }
        let whole = whole_name(schema, name);
        if !self.catalog.tables_read().contains_key(&whole) {
            return Ok(());
        }
        self.catalog.roles().check(
            self.user,
            self.superuser,
            "table",
            &whole,
            crate::sql::Privileges::SELECT,
        )
    }

    fn database(&self) -> Option<&str> {
        Some(self.database)
    }

    fn table_privileges(&self, role: &str, schema: &str, name: &str) -> (Privileges, bool) {
        // Names in pg_authid that are no role are the session's user and relation owners
        // shown as superusers (trust-connected bootstrap users); `public` is nobody's.
        let superuser = if role == self.user {
            self.superuser
        } else {
            role != super::roles::PUBLIC && self.catalog.roles().is_superuser(role, true)
        };
        if superuser {
            return (Privileges::ALL, true);
        }
        if schema == "pg_catalog" || schema == "information_schema" {
            // As PostgreSQL grants its catalogs: SELECT to PUBLIC, but for pg_authid.
            let readable = !(schema == "pg_catalog" && name == "pg_authid");
            let held = if readable {
                Privileges::SELECT
            } else {
                Privileges::default()
            };
            return (held, false);
        }
        self.catalog
            .roles()
            .privileges(role, &whole_name(schema, name))
    }
}

/// A relation's name in tcq's catalog: `name` in `public`, `schema.name` elsewhere.
fn whole_name(schema: &str, name: &str) -> String {
    if schema == "public" {
        name.to_string()
    } else {
        format!("{schema}.{name}")
    }
}

impl RelationProvider for Catalog {
    fn relation(&self, schema: &str, name: &str) -> Option<(Vec<Column>, Vec<Vec<Value>>)> {
        let settings: Vec<(String, String)> = super::settings::default_settings()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let view = CatalogRelations {
            catalog: self,
            user: "tcq",
            database: "tcq",
            settings: &settings,
            superuser: true,
        };
        relation(&view, schema, name)
    }
}

fn relation(
    view: &CatalogRelations,
    schema: &str,
    name: &str,
) -> Option<(Vec<Column>, Vec<Vec<Value>>)> {
    let (catalog, user, database) = (view.catalog, view.user, view.database);
    if schema == "pg_catalog" {
        if let Some(cols) = super::views::system_view_columns(name) {
            let viewer = super::views::Viewer {
                user,
                superuser: view.superuser,
            };
            return Some((cols, catalog.system_view_rows(name, &viewer)));
        }
    }
    // A stored table, as it is now.
    let whole = whole_name(schema, name);
    if let Some(t) = catalog.tables_read().get(&whole) {
        let snap = t.snapshot();
        return Some((snap.columns.to_vec(), snap.rows().to_vec()));
    }
    let i = RELATIONS
        .iter()
        .position(|r| r.0 == schema && r.1 == name)?;
    let spec = specs(RELATIONS[i].3);
    let columns: Vec<Column> = spec.iter().map(|(n, ty)| column_of(n, ty)).collect();
    let mut streams: Vec<Arc<Stream>> = catalog.streams_read().values().cloned().collect();
    streams.sort_by_key(|s| s.oid);
    let mut tables: Vec<Arc<crate::table::Table>> =
        catalog.tables_read().values().cloned().collect();
    tables.sort_by_key(|t| t.oid);
    let ctx = Ctx {
        streams: &streams,
        tables: &tables,
        user,
        database,
        settings: view.settings,
        roles: catalog.roles(),
        superuser: view.superuser,
    };
    let rows: Vec<Vec<(&str, Value)>> = ctx.rows(name);
    let rows = rows.into_iter().map(|r| fill(&spec, r)).collect();
    Some((columns, rows))
}

/// The pg_catalog views that list the relations of one kind: (view, relkind, the column
/// of the relation's name, the column of its owner). Their other columns are NULL or
/// false (no tablespace, definition, indexes, rules or triggers).
const RELATION_LISTS: &[(&str, char, &str, &str)] = &[
    ("pg_tables", 'r', "tablename", "tableowner"),
    ("pg_views", 'v', "viewname", "viewowner"),
    ("pg_matviews", 'm', "matviewname", "matviewowner"),
];

fn relation_list(view: &str) -> Option<(&'static str, char, &'static str, &'static str)> {
    RELATION_LISTS.iter().find(|l| l.0 == view).copied()
}

/// A full row from named values; the others get the type's default (false, 0, '' or NULL).
fn fill(spec: &[(&str, &str)], mut named: Vec<(&str, Value)>) -> Vec<Value> {
    spec.iter()
        .map(|(n, ty)| match named.iter().position(|(k, _)| k == n) {
            Some(p) => named.swap_remove(p).1,
            None => match *ty {
                "bool" => Value::Bool(false),
                "oid" | "int8" => Value::Int8(0),
                "int2" => Value::Int2(0),
                "int4" => Value::Int4(0),
                "float4" => Value::Float4(0.0),
                "name" | "char" => t(""),
                "regproc" => t("-"),
                _ => Value::Null,
            },
        })
        .collect()
}

struct Ctx<'a> {
    streams: &'a [Arc<Stream>],
    /// Stored tables: relkind 'r' in the schema their name gives.
    tables: &'a [Arc<crate::table::Table>],
    user: &'a str,
    database: &'a str,
    settings: &'a [(String, String)],
    roles: &'a super::roles::Roles,
    superuser: bool,
}

/// A role name as `aclitemout` writes it: bare when it is made of lowercase letters,
/// digits and underscores, else double-quoted with its quotes doubled.
fn acl_name(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// A row of `pg_authid`: (oid, name, superuser, login, password verifier).
type RoleRow = (i64, String, bool, bool, Option<String>);

type Named = Vec<(&'static str, Value)>;

/// One key index of a stored table (see [`Ctx::indexes`]).
struct IndexInfo {
    oid: i64,
    constraint_oid: i64,
    table_oid: i64,
    schema: String,
    name: String,
    primary: bool,
    columns: Vec<IndexColumn>,
}

/// A key column: (attnum in the table, name, type oid, typmod, len, storage).
type IndexColumn = (i64, String, i64, i64, i64, char);

impl Ctx<'_> {
    /// The oid of role `name`: 10 for the session's user (it owns the system objects).
    fn role_oid(&self, name: &str) -> i64 {
        if name == self.user {
            ROLE_OID
        } else {
            super::roles::role_oid(name)
        }
    }

    /// The oid of the owner of relation `ns`.`name` (10, the session's user, when none is
    /// recorded: system relations).
    fn owner_oid(&self, ns: &str, name: &str) -> i64 {
        self.roles
            .owner(&whole_name(ns, name))
            .map_or(ROLE_OID, |o| self.role_oid(&o))
    }

    /// The owner's name of relation `ns`.`name`.
    fn owner_name(&self, ns: &str, name: &str) -> String {
        self.roles
            .owner(&whole_name(ns, name))
            .unwrap_or_else(|| self.user.to_string())
    }

    /// `relacl` of relation `ns`.`name`: NULL (the default: owner only) until a GRANT or
    /// REVOKE names it, then the owner's entry and the grants to others.
    fn relacl(&self, ns: &str, name: &str) -> Value {
        let Some(acl) = self.roles.acl(&whole_name(ns, name)) else {
            return Value::Null;
        };
        if !acl.explicit && acl.grants.is_empty() {
            return Value::Null;
        }
        let all = crate::sql::Privileges::ALL.letters();
        let owner = acl_name(&acl.owner);
        let mut items = vec![t(format!("{owner}={all}/{owner}"))];
        for (grantee, p) in &acl.grants {
            let who = if grantee == super::roles::PUBLIC {
                String::new()
            } else {
                acl_name(grantee)
            };
            items.push(t(format!("{who}={}/{owner}", p.letters())));
        }
        t(crate::exec::relational::format_array(&items))
    }

    /// Every role: those of `engine::roles`, the session's user, and relation owners that
    /// are no role (trust-connected bootstrap users, superusers).
    fn role_rows(&self) -> Vec<RoleRow> {
        let mut rows: Vec<RoleRow> = self
            .roles
            .list()
            .into_iter()
            .map(|r| {
                (
                    self.role_oid(&r.name),
                    r.name,
                    r.superuser,
                    r.login,
                    r.password,
                )
            })
            .collect();
        let mut implicit = vec![(self.user.to_string(), self.superuser)];
        implicit.extend(self.roles.owners().into_iter().map(|o| (o, true)));
        for (name, superuser) in implicit {
            if !rows.iter().any(|r| r.1 == name) {
                rows.push((self.role_oid(&name), name, superuser, true, None));
            }
        }
        rows.sort_by_key(|r| r.0);
        rows
    }

    fn schemas(&self) -> Vec<String> {
        let mut s: Vec<String> = vec![
            "pg_catalog".into(),
            "public".into(),
            "information_schema".into(),
        ];
        let names = self
            .streams
            .iter()
            .map(|st| &st.name)
            .chain(self.tables.iter().map(|t| &t.name));
        for name in names {
            let ns = split_name(name).0.to_string();
            if !s.contains(&ns) {
                s.push(ns);
            }
        }
        s
    }

    /// Every relation: (oid, schema, name, relkind, columns as (name, type oid, typmod,
    /// len, storage, not null, fdw options)).
    #[allow(clippy::type_complexity)]
    fn relations(
        &self,
    ) -> Vec<(
        i64,
        String,
        String,
        char,
        Vec<(String, i64, i64, i64, char, bool, Option<String>)>,
    )> {
        let mut out = Vec::new();
        for (i, (schema, name, _, cols)) in RELATIONS.iter().enumerate() {
            let kind = if *schema == "pg_catalog" && RELATIONS[i].2 != 0 {
                'r'
            } else {
                'v'
            };
            let cols = specs(cols)
                .into_iter()
                .map(|(n, ty)| {
                    let (len, storage) = match ty {
                        "oid" | "int4" | "float4" => (4, 'p'),
                        "int8" | "tstz" => (8, 'p'),
                        "int2" => (2, 'p'),
                        "bool" | "char" => (1, 'p'),
                        "name" => (64, 'p'),
                        _ => (-1, 'x'),
                    };
                    (
                        n.to_string(),
                        col_pg_type(ty),
                        -1,
                        len,
                        storage,
                        kind == 'r',
                        None,
                    )
                })
                .collect();
            out.push((
                relation_oid(i),
                schema.to_string(),
                name.to_string(),
                kind,
                cols,
            ));
        }
        for (j, v) in [
            "tcq_streams",
            "tcq_queries",
            "pg_stat_activity",
            "tcq_plans",
            "tcq_memory",
            "pg_stat_ssl",
            "tcq_sources",
            "tcq_sinks",
        ]
        .iter()
        .enumerate()
        {
            let cols = super::views::system_view_columns(v)
                .unwrap_or_default()
                .into_iter()
                .map(|c| {
                    let (o, m, l, s) = pg_type_of(c.data_type);
                    (c.name, o, m, l, s, false, None)
                })
                .collect();
            out.push((
                FIRST_VIEW_OID + 500 + j as i64,
                "pg_catalog".into(),
                v.to_string(),
                'v',
                cols,
            ));
        }
        for s in self.streams {
            let (ns, rel) = split_name(&s.name);
            let cols = s
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let (o, m, l, st) = pg_type_of_column(c);
                    let ts = s.ts_col == Some(i);
                    (
                        c.name.clone(),
                        o,
                        m,
                        l,
                        st,
                        ts,
                        ts.then(|| "{timestampcolumn=true}".to_string()),
                    )
                })
                .collect();
            out.push((s.oid as i64, ns.to_string(), rel.to_string(), 'f', cols));
        }
        for t in self.tables {
            let (ns, rel) = split_name(&t.name);
            let cols = t
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let (o, m, l, st) = pg_type_of_column(c);
                    (c.name.clone(), o, m, l, st, t.not_null[i], None)
                })
                .collect();
            out.push((t.oid as i64, ns.to_string(), rel.to_string(), 'r', cols));
        }
        out.sort_by_key(|r| r.0);
        out
    }

    /// The key indexes of stored tables, one per PRIMARY KEY or UNIQUE, as PostgreSQL
    /// keeps them: an index relation (relkind 'i', btree) named after the constraint
    /// (`<table>_pkey`, `<table>_<col>_key`) and a constraint (contype 'p' or 'u').
    fn indexes(&self) -> Vec<IndexInfo> {
        let mut out = Vec::new();
        for t in self.tables {
            let ns = split_name(&t.name).0.to_string();
            for (k, def) in t.keys.iter().enumerate() {
                let columns = def
                    .columns
                    .iter()
                    .map(|&c| {
                        let (o, m, l, st) = pg_type_of_column(&t.columns[c]);
                        (c as i64 + 1, t.columns[c].name.clone(), o, m, l, st)
                    })
                    .collect();
                out.push(IndexInfo {
                    oid: crate::table::index_oid(t.oid, k) as i64,
                    constraint_oid: crate::table::constraint_oid(t.oid, k) as i64,
                    table_oid: t.oid as i64,
                    schema: ns.clone(),
                    name: split_name(&def.name).1.to_string(),
                    primary: def.primary,
                    columns,
                });
            }
        }
        out
    }

    fn stream_options(s: &Stream) -> String {
        let kind = if s.archived { "archived" } else { "unarchived" };
        let mut options = vec![
            match s.ts_col {
                Some(c) => t(format!("timestampcolumn={}", s.columns[c].name)),
                None => t("stamp=arrival"),
            },
            t(format!("type={kind}")),
        ];
        // An archived stream's retention, as `WITH (retention = ...)` gives it (psql's
        // `\d` shows it with the other FDW options).
        if let Some(r) = *s.retention_us.lock() {
            options.push(t(format!("retention={}", crate::time::human_interval(r))));
        }
        crate::exec::relational::format_array(&options)
    }

    /// The rows of catalog `name` (a pg_catalog table or view, or an information_schema
    /// view), each a row of (column, value) pairs; an unknown name has none.
    fn rows(&self, name: &str) -> Vec<Named> {
        match name {
            "pg_namespace" => self.rows_pg_namespace(),
            "schemata" => self.rows_schemata(),
            "pg_class" => self.rows_pg_class(),
            "pg_index" => self.rows_pg_index(),
            "pg_constraint" => self.rows_pg_constraint(),
            "pg_attribute" => self.rows_pg_attribute(),
            "pg_type" => self.rows_pg_type(),
            "pg_proc" => self.rows_pg_proc(),
            "pg_description" => self.rows_pg_description(),
            "pg_database" => self.rows_pg_database(),
            "pg_authid" | "pg_roles" => self.rows_pg_roles(name),
            "pg_user" => self.rows_pg_user(),
            "pg_am" => self.rows_pg_am(),
            "pg_collation" => self.rows_pg_collation(),
            "pg_tablespace" => self.rows_pg_tablespace(),
            "pg_language" => self.rows_pg_language(),
            "pg_foreign_data_wrapper" => self.rows_pg_foreign_data_wrapper(),
            "pg_foreign_server" => self.rows_pg_foreign_server(),
            "pg_attrdef" => self.rows_pg_attrdef(),
            "pg_foreign_table" => self.rows_pg_foreign_table(),
            "pg_settings" => self.rows_pg_settings(),
            list if relation_list(list).is_some() => self.rows_relation_list(list),
            "tables" => self.rows_tables(),
            "views" => self.rows_views(),
            "columns" => self.rows_columns(),
            "routines" => self.rows_routines(),
            _ => vec![],
        }
    }

    /// The rows of `pg_namespace`.
    fn rows_pg_namespace(&self) -> Vec<Named> {
        self.schemas()
            .into_iter()
            .map(|n| {
                vec![
                    ("oid", oid(schema_oid(&n))),
                    ("nspname", t(n)),
                    ("nspowner", oid(ROLE_OID)),
                ]
            })
            .collect()
    }

    /// The rows of `schemata`.
    fn rows_schemata(&self) -> Vec<Named> {
        self.schemas()
            .into_iter()
            .map(|n| {
                vec![
                    ("catalog_name", t(self.database)),
                    ("schema_name", t(n)),
                    ("schema_owner", t(self.user)),
                ]
            })
            .collect()
    }

    /// The rows of `pg_class`.
    fn rows_pg_class(&self) -> Vec<Named> {
        let b = Value::Bool;
        let indexes = self.indexes();
        let mut out: Vec<Named> = self
            .relations()
            .into_iter()
            .map(|(o, ns, n, kind, cols)| {
                let (owner, acl) = (self.owner_oid(&ns, &n), self.relacl(&ns, &n));
                let has_index = indexes.iter().any(|i| i.table_oid == o);
                vec![
                    ("oid", oid(o)),
                    ("relname", t(n)),
                    ("relnamespace", oid(schema_oid(&ns))),
                    ("relowner", oid(owner)),
                    ("relacl", acl),
                    ("relam", oid(if kind == 'r' { 2 } else { 0 })),
                    ("relhasindex", b(has_index)),
                    ("relpersistence", t("p")),
                    ("relkind", t(kind.to_string())),
                    ("relnatts", Value::Int2(cols.len() as i16)),
                    ("relispopulated", b(true)),
                    ("relreplident", t(if kind == 'r' { "d" } else { "n" })),
                    ("reltuples", Value::Float4(-1.0)),
                ]
            })
            .collect();
        for i in indexes {
            out.push(vec![
                ("oid", oid(i.oid)),
                ("relname", t(i.name)),
                ("relnamespace", oid(schema_oid(&i.schema))),
                ("relowner", oid(ROLE_OID)),
                ("relam", oid(403)),
                ("relpersistence", t("p")),
                ("relkind", t("i")),
                ("relnatts", Value::Int2(i.columns.len() as i16)),
                ("relispopulated", b(true)),
                ("relreplident", t("n")),
                ("reltuples", Value::Float4(-1.0)),
            ]);
        }
        out.sort_by_key(|r| int_of_named(r, "oid"));
        out
    }

    /// The rows of `pg_index`.
    fn rows_pg_index(&self) -> Vec<Named> {
        let b = Value::Bool;
        self.indexes()
            .into_iter()
            .map(|i| {
                let n = i.columns.len() as i16;
                let key = |f: &dyn Fn(&IndexColumn) -> String| {
                    i.columns.iter().map(f).collect::<Vec<_>>().join(" ")
                };
                vec![
                    ("indexrelid", oid(i.oid)),
                    ("indrelid", oid(i.table_oid)),
                    ("indnatts", Value::Int2(n)),
                    ("indnkeyatts", Value::Int2(n)),
                    ("indisunique", b(true)),
                    ("indisprimary", b(i.primary)),
                    ("indimmediate", b(true)),
                    ("indisvalid", b(true)),
                    ("indisready", b(true)),
                    ("indislive", b(true)),
                    ("indkey", t(key(&|c| c.0.to_string()))),
                    (
                        "indcollation",
                        t(key(&|c| {
                            if matches!(c.2, 25 | 1043 | 1042) {
                                "100"
                            } else {
                                "0"
                            }
                            .to_string()
                        })),
                    ),
                    ("indclass", t(key(&|_| "0".to_string()))),
                    ("indoption", t(key(&|_| "0".to_string()))),
                ]
            })
            .collect()
    }

    /// The rows of `pg_constraint`.
    fn rows_pg_constraint(&self) -> Vec<Named> {
        let b = Value::Bool;
        self.indexes()
            .into_iter()
            .map(|i| {
                let conkey: Vec<Value> = i.columns.iter().map(|c| t(c.0.to_string())).collect();
                vec![
                    ("oid", oid(i.constraint_oid)),
                    ("conname", t(i.name)),
                    ("connamespace", oid(schema_oid(&i.schema))),
                    ("contype", t(if i.primary { "p" } else { "u" })),
                    ("convalidated", b(true)),
                    ("conrelid", oid(i.table_oid)),
                    ("conindid", oid(i.oid)),
                    ("conislocal", b(true)),
                    ("connoinherit", b(true)),
                    ("conkey", t(crate::exec::relational::format_array(&conkey))),
                ]
            })
            .collect()
    }

    /// The rows of `pg_attribute`.
    fn rows_pg_attribute(&self) -> Vec<Named> {
        let b = Value::Bool;
        let mut out = Vec::new();
        let has_default = |rel: i64, col: usize| {
            self.tables.iter().any(|tb| {
                tb.oid as i64 == rel && tb.default_sql.get(col).is_some_and(Option::is_some)
            })
        };
        let indexes = self.indexes().into_iter().map(|i| {
            let cols = i
                .columns
                .into_iter()
                .map(|(_, n, ty, m, l, st)| (n, ty, m, l, st, false, None))
                .collect::<Vec<_>>();
            (i.oid, String::new(), String::new(), 'i', cols)
        });
        for (o, _, _, _, cols) in self.relations().into_iter().chain(indexes) {
            for (i, (n, ty, typmod, len, storage, notnull, fdw)) in cols.into_iter().enumerate() {
                let collation = if matches!(ty, 25 | 1043 | 1042) {
                    100
                } else if ty == 19 {
                    950
                } else {
                    0
                };
                out.push(vec![
                    ("attrelid", oid(o)),
                    ("attname", t(n)),
                    ("atttypid", oid(ty)),
                    ("attstattarget", Value::Int4(-1)),
                    ("attlen", Value::Int2(len as i16)),
                    ("attnum", Value::Int2(i as i16 + 1)),
                    ("attcacheoff", Value::Int4(-1)),
                    ("atttypmod", Value::Int4(typmod as i32)),
                    ("attbyval", b(len > 0 && len <= 8)),
                    ("attalign", t(type_align(ty))),
                    ("attstorage", t(storage.to_string())),
                    ("attnotnull", b(notnull)),
                    ("atthasdef", b(has_default(o, i))),
                    ("attislocal", b(true)),
                    ("attcollation", oid(collation)),
                    ("attfdwoptions", fdw.map_or(Value::Null, t)),
                ]);
            }
        }
        out
    }

    /// The rows of `pg_type`.
    fn rows_pg_type(&self) -> Vec<Named> {
        let b = Value::Bool;
        let mut out = Vec::new();
        for &(o, n, len, cat, arr) in TYPES {
            let collation = match n {
                "text" | "varchar" | "bpchar" => 100,
                "name" => 950,
                _ => 0,
            };
            let base =
                |o: i64, n: String, len: i64, cat: char, elem: i64, arr: i64, collation: i64| {
                    // PostgreSQL's I/O function names: `int4in`, `timestamp_in`, `array_in`.
                    let io = if n.starts_with('_') {
                        "array_".to_string()
                    } else if matches!(
                        n.as_str(),
                        "timestamp"
                            | "timestamptz"
                            | "numeric"
                            | "date"
                            | "time"
                            | "timetz"
                            | "interval"
                            | "record"
                            | "uuid"
                            | "json"
                            | "jsonb"
                            | "xml"
                            | "inet"
                            | "cstring"
                            | "anyarray"
                            | "any"
                            | "anyelement"
                            | "void"
                    ) {
                        format!("{n}_")
                    } else {
                        n.clone()
                    };
                    vec![
                        ("oid", oid(o)),
                        ("typname", t(n)),
                        ("typnamespace", oid(PG_CATALOG_OID)),
                        ("typowner", oid(ROLE_OID)),
                        ("typlen", Value::Int2(len as i16)),
                        ("typbyval", b(len > 0 && len <= 8)),
                        ("typtype", t(if cat == 'P' { "p" } else { "b" })),
                        ("typcategory", t(cat.to_string())),
                        ("typisdefined", b(true)),
                        ("typdelim", t(",")),
                        (
                            "typsubscript",
                            t(if elem != 0 {
                                "array_subscript_handler"
                            } else {
                                "-"
                            }),
                        ),
                        ("typelem", oid(elem)),
                        ("typarray", oid(arr)),
                        ("typinput", t(format!("{io}in"))),
                        ("typoutput", t(format!("{io}out"))),
                        ("typreceive", t(format!("{io}recv"))),
                        ("typsend", t(format!("{io}send"))),
                        ("typalign", t(type_align(o))),
                        ("typstorage", t(type_storage(o, len))),
                        ("typtypmod", Value::Int4(-1)),
                        ("typcollation", oid(collation)),
                    ]
                };
            // int2vector and oidvector are arrays of int2 and oid to clients
            // (asyncpg decodes them with their element's codec), as in PostgreSQL.
            let elem = match o {
                22 => 21,
                30 => 26,
                _ => 0,
            };
            out.push(base(o, n.to_string(), len, cat, elem, arr, collation));
            if arr != 0 {
                out.push(base(arr, format!("_{n}"), -1, 'A', o, 0, collation));
            }
        }
        out
    }

    /// The rows of `pg_proc`.
    fn rows_pg_proc(&self) -> Vec<Named> {
        procs()
            .into_iter()
            .map(|(o, n, kind, args, names, ret, _)| {
                let args_text: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                vec![
                    ("oid", oid(o)),
                    ("proname", t(n)),
                    ("pronamespace", oid(PG_CATALOG_OID)),
                    ("proowner", oid(ROLE_OID)),
                    ("prolang", oid(12)),
                    ("procost", Value::Float4(1.0)),
                    ("prokind", t(kind.to_string())),
                    ("provolatile", t(volatility(o, kind))),
                    ("proparallel", t("s")),
                    ("pronargs", Value::Int2(args.len() as i16)),
                    ("prorettype", oid(ret)),
                    ("proargtypes", t(args_text.join(" "))),
                    (
                        "proargnames",
                        if names.is_empty() {
                            Value::Null
                        } else {
                            t(crate::exec::relational::format_array(
                                &names.iter().map(|n| t(*n)).collect::<Vec<_>>(),
                            ))
                        },
                    ),
                    ("prosrc", t(n)),
                ]
            })
            .collect()
    }

    /// The rows of `pg_description`.
    fn rows_pg_description(&self) -> Vec<Named> {
        let mut out: Vec<Named> = procs()
            .into_iter()
            .map(|(o, .., d)| {
                vec![
                    ("objoid", oid(o)),
                    ("classoid", oid(1255)),
                    ("objsubid", Value::Int4(0)),
                    ("description", t(d)),
                ]
            })
            .collect();
        for s in self.streams {
            let time = s.ts_col.map_or("stamped on arrival".to_string(), |c| {
                format!("TIMESTAMPCOLUMN {}", s.columns[c].name)
            });
            let kind = if s.archived { "ARCHIVED" } else { "UNARCHIVED" };
            out.push(vec![
                ("objoid", oid(s.oid as i64)),
                ("classoid", oid(1259)),
                ("objsubid", Value::Int4(0)),
                ("description", t(format!("{kind} stream, {time}"))),
            ]);
        }
        out
    }

    /// The rows of `pg_database`.
    fn rows_pg_database(&self) -> Vec<Named> {
        let b = Value::Bool;
        vec![vec![
            ("oid", oid(DATABASE_OID)),
            ("datname", t(self.database)),
            ("datdba", oid(ROLE_OID)),
            ("encoding", Value::Int4(6)),
            ("datlocprovider", t("c")),
            ("datallowconn", b(true)),
            ("datconnlimit", Value::Int4(-1)),
            ("dattablespace", oid(1663)),
            ("datcollate", t("C")),
            ("datctype", t("C")),
        ]]
    }

    /// The rows of `pg_roles` (and `pg_authid`, the same view).
    fn rows_pg_roles(&self, name: &str) -> Vec<Named> {
        // A superuser has every attribute, as PostgreSQL's bootstrap user shows them.
        // Only superusers read pg_authid (`check_read`); functions that read it for
        // others (pg_get_userbyid, regrole) see no verifier. pg_roles masks it, NULL
        // when there is none.
        let b = Value::Bool;
        self.role_rows()
            .into_iter()
            .map(|(o, role, su, login, password)| {
                let password = if name == "pg_roles" {
                    password.map(|_| t("********"))
                } else {
                    password.filter(|_| self.superuser).map(t)
                };
                vec![
                    ("oid", oid(o)),
                    ("rolname", t(role)),
                    ("rolsuper", b(su)),
                    ("rolinherit", b(true)),
                    ("rolcreaterole", b(su)),
                    ("rolcreatedb", b(su)),
                    ("rolcanlogin", b(login)),
                    ("rolreplication", b(su)),
                    ("rolbypassrls", b(su)),
                    ("rolconnlimit", Value::Int4(-1)),
                    ("rolpassword", password.unwrap_or(Value::Null)),
                ]
            })
            .collect()
    }

    /// The rows of `pg_user`.
    fn rows_pg_user(&self) -> Vec<Named> {
        let b = Value::Bool;
        self.role_rows()
            .into_iter()
            .filter(|r| r.3)
            .map(|(o, name, su, _, _)| {
                vec![
                    ("usename", t(name)),
                    ("usesysid", oid(o)),
                    ("usecreatedb", b(su)),
                    ("usesuper", b(su)),
                    ("userepl", b(su)),
                    ("usebypassrls", b(su)),
                    ("passwd", t("********")),
                ]
            })
            .collect()
    }

    /// The rows of `pg_am`.
    fn rows_pg_am(&self) -> Vec<Named> {
        vec![
            vec![
                ("oid", oid(2)),
                ("amname", t("heap")),
                ("amhandler", t("heap_tableam_handler")),
                ("amtype", t("t")),
            ],
            vec![
                ("oid", oid(403)),
                ("amname", t("btree")),
                ("amhandler", t("bthandler")),
                ("amtype", t("i")),
            ],
            vec![
                ("oid", oid(405)),
                ("amname", t("hash")),
                ("amhandler", t("hashhandler")),
                ("amtype", t("i")),
            ],
        ]
    }

    /// The rows of `pg_collation`.
    fn rows_pg_collation(&self) -> Vec<Named> {
        let b = Value::Bool;
        [(100, "default", "d"), (950, "C", "c"), (951, "POSIX", "c")]
            .iter()
            .map(|&(o, n, p)| {
                vec![
                    ("oid", oid(o)),
                    ("collname", t(n)),
                    ("collnamespace", oid(PG_CATALOG_OID)),
                    ("collowner", oid(ROLE_OID)),
                    ("collprovider", t(p)),
                    ("collisdeterministic", b(true)),
                    ("collencoding", Value::Int4(-1)),
                    ("collcollate", if o == 100 { Value::Null } else { t(n) }),
                    ("collctype", if o == 100 { Value::Null } else { t(n) }),
                ]
            })
            .collect()
    }

    /// The rows of `pg_tablespace`.
    fn rows_pg_tablespace(&self) -> Vec<Named> {
        vec![
            vec![
                ("oid", oid(1663)),
                ("spcname", t("pg_default")),
                ("spcowner", oid(ROLE_OID)),
            ],
            vec![
                ("oid", oid(1664)),
                ("spcname", t("pg_global")),
                ("spcowner", oid(ROLE_OID)),
            ],
        ]
    }

    /// The rows of `pg_language`.
    fn rows_pg_language(&self) -> Vec<Named> {
        let b = Value::Bool;
        vec![
            vec![
                ("oid", oid(12)),
                ("lanname", t("internal")),
                ("lanowner", oid(ROLE_OID)),
            ],
            vec![
                ("oid", oid(14)),
                ("lanname", t("sql")),
                ("lanowner", oid(ROLE_OID)),
                ("lanpltrusted", b(true)),
            ],
        ]
    }

    /// The rows of `pg_foreign_data_wrapper`.
    fn rows_pg_foreign_data_wrapper(&self) -> Vec<Named> {
        vec![vec![
            ("oid", oid(FDW_OID)),
            ("fdwname", t("tcq_stream")),
            ("fdwowner", oid(ROLE_OID)),
        ]]
    }

    /// The rows of `pg_foreign_server`.
    fn rows_pg_foreign_server(&self) -> Vec<Named> {
        vec![vec![
            ("oid", oid(SERVER_OID)),
            ("srvname", t("tcq")),
            ("srvowner", oid(ROLE_OID)),
            ("srvfdw", oid(FDW_OID)),
        ]]
    }

    /// The rows of `pg_attrdef`.
    fn rows_pg_attrdef(&self) -> Vec<Named> {
        self.tables
            .iter()
            .flat_map(|tb| {
                tb.default_sql.iter().enumerate().filter_map(|(i, d)| {
                    let text = d.as_ref()?;
                    Some(vec![
                        // An oid of its own per default, past the table's and its keys'.
                        ("oid", oid(((tb.oid as i64) << 8) + i as i64 + 1)),
                        ("adrelid", oid(tb.oid as i64)),
                        ("adnum", Value::Int2(i as i16 + 1)),
                        ("adbin", t(text.clone())),
                    ])
                })
            })
            .collect()
    }

    /// The rows of `pg_foreign_table`.
    fn rows_pg_foreign_table(&self) -> Vec<Named> {
        self.streams
            .iter()
            .map(|s| {
                vec![
                    ("ftrelid", oid(s.oid as i64)),
                    ("ftserver", oid(SERVER_OID)),
                    ("ftoptions", t(Self::stream_options(s))),
                ]
            })
            .collect()
    }

    /// The rows of `pg_settings`.
    fn rows_pg_settings(&self) -> Vec<Named> {
        let b = Value::Bool;
        self.settings
            .iter()
            .map(|(n, v)| {
                let default = super::settings::default_settings()
                    .iter()
                    .find(|(k, _)| k == n)
                    .map(|(_, d)| d.to_string());
                let source = if default.as_deref() == Some(v.as_str()) {
                    "default"
                } else {
                    "session"
                };
                vec![
                    ("name", t(n.clone())),
                    ("setting", t(v.clone())),
                    ("category", t("tcq")),
                    ("context", t("user")),
                    ("vartype", t("string")),
                    ("source", t(source)),
                    ("boot_val", default.clone().map_or(Value::Null, t)),
                    ("reset_val", default.map_or(Value::Null, t)),
                    ("pending_restart", b(false)),
                ]
            })
            .collect()
    }

    /// The rows of pg_tables, pg_views and the other relation lists.
    fn rows_relation_list(&self, list: &str) -> Vec<Named> {
        let (_, kind, name_column, owner_column) = relation_list(list).expect("a relation list");
        self.relations()
            .into_iter()
            .filter(|r| r.3 == kind)
            .map(|(_, ns, n, ..)| {
                let owner = self.owner_name(&ns, &n);
                vec![
                    ("schemaname", t(ns)),
                    (name_column, t(n)),
                    (owner_column, t(owner)),
                    ("tablespace", Value::Null),
                    ("definition", Value::Null),
                ]
            })
            .collect()
    }

    /// The rows of `tables`.
    fn rows_tables(&self) -> Vec<Named> {
        self.relations()
            .into_iter()
            .map(|(_, ns, n, kind, _)| {
                let ty = match kind {
                    'f' => "FOREIGN",
                    'v' => "VIEW",
                    _ => "BASE TABLE",
                };
                vec![
                    ("table_catalog", t(self.database)),
                    ("table_schema", t(ns)),
                    ("table_name", t(n)),
                    ("table_type", t(ty)),
                    (
                        "is_insertable_into",
                        t(if kind == 'f' { "YES" } else { "NO" }),
                    ),
                    ("is_typed", t("NO")),
                ]
            })
            .collect()
    }

    /// The rows of `views`.
    fn rows_views(&self) -> Vec<Named> {
        self.relations()
            .into_iter()
            .filter(|r| r.3 == 'v')
            .map(|(_, ns, n, ..)| {
                vec![
                    ("table_catalog", t(self.database)),
                    ("table_schema", t(ns)),
                    ("table_name", t(n)),
                    ("check_option", t("NONE")),
                    ("is_updatable", t("NO")),
                    ("is_insertable_into", t("NO")),
                    ("is_trigger_updatable", t("NO")),
                    ("is_trigger_deletable", t("NO")),
                    ("is_trigger_insertable_into", t("NO")),
                ]
            })
            .collect()
    }

    /// The rows of `columns`.
    fn rows_columns(&self) -> Vec<Named> {
        let mut out = Vec::new();
        for (_, ns, n, _, cols) in self.relations() {
            for (i, (c, ty, typmod, _, _, notnull, _)) in cols.into_iter().enumerate() {
                let (data_type, udt) = info_type(ty, typmod);
                out.push(vec![
                    ("table_catalog", t(self.database)),
                    ("table_schema", t(ns.clone())),
                    ("table_name", t(n.clone())),
                    ("column_name", t(c)),
                    ("ordinal_position", Value::Int4(i as i32 + 1)),
                    ("is_nullable", t(if notnull { "NO" } else { "YES" })),
                    ("data_type", t(data_type)),
                    ("character_maximum_length", char_max_length(ty, typmod)),
                    ("character_octet_length", char_octet_length(ty, typmod)),
                    (
                        "numeric_precision",
                        numeric_facet(ty, typmod, Facet::Precision),
                    ),
                    (
                        "numeric_precision_radix",
                        numeric_facet(ty, typmod, Facet::Radix),
                    ),
                    ("numeric_scale", numeric_facet(ty, typmod, Facet::Scale)),
                    ("datetime_precision", datetime_precision(ty, typmod)),
                    ("interval_precision", Value::Null),
                    ("maximum_cardinality", Value::Null),
                    ("udt_catalog", t(self.database)),
                    ("udt_schema", t("pg_catalog")),
                    ("udt_name", t(udt)),
                    ("dtd_identifier", t((i + 1).to_string())),
                    ("is_self_referencing", t("NO")),
                    ("is_identity", t("NO")),
                    ("is_generated", t("NEVER")),
                    ("is_updatable", t("NO")),
                ]);
            }
        }
        out
    }

    /// The rows of `routines`.
    fn rows_routines(&self) -> Vec<Named> {
        procs()
            .into_iter()
            .map(|(o, n, _, _, _, ret, _)| {
                let (data_type, udt) = info_type(ret, -1);
                vec![
                    ("specific_catalog", t(self.database)),
                    ("specific_schema", t("pg_catalog")),
                    ("specific_name", t(format!("{n}_{o}"))),
                    ("routine_catalog", t(self.database)),
                    ("routine_schema", t("pg_catalog")),
                    ("routine_name", t(n)),
                    ("routine_type", t("FUNCTION")),
                    ("data_type", t(data_type)),
                    ("type_udt_catalog", t(self.database)),
                    ("type_udt_schema", t("pg_catalog")),
                    ("type_udt_name", t(udt)),
                    ("routine_body", t("EXTERNAL")),
                    ("external_language", t("INTERNAL")),
                    ("is_deterministic", t("NO")),
                    ("is_null_call", t("NO")),
                    ("security_type", t("INVOKER")),
                ]
            })
            .collect()
    }
}

/// information_schema's `data_type` and `udt_name` for a type oid.
fn info_type(ty: i64, typmod: i64) -> (String, String) {
    let _ = typmod;
    let (dt, udt) = match ty {
        16 => ("boolean", "bool"),
        20 => ("bigint", "int8"),
        21 => ("smallint", "int2"),
        23 => ("integer", "int4"),
        700 => ("real", "float4"),
        701 => ("double precision", "float8"),
        1700 => ("numeric", "numeric"),
        25 => ("text", "text"),
        1043 => ("character varying", "varchar"),
        1114 => ("timestamp without time zone", "timestamp"),
        1184 => ("timestamp with time zone", "timestamptz"),
        1186 => ("interval", "interval"),
        1082 => ("date", "date"),
        1083 => ("time without time zone", "time"),
        1042 => ("character", "bpchar"),
        26 => ("oid", "oid"),
        19 => ("name", "name"),
        18 => ("\"char\"", "char"),
        24 => ("regproc", "regproc"),
        1009 => ("ARRAY", "_text"),
        _ => ("USER-DEFINED", "unknown"),
    };
    (dt.to_string(), udt.to_string())
}

/// `information_schema.columns.character_maximum_length` of a column of type oid `ty`
/// and typmod `typmod`, as PostgreSQL 15's `_pg_char_max_length`: the declared length of
/// a `character` or `character varying`, else NULL.
fn char_max_length(ty: i64, typmod: i64) -> Value {
    match ty {
        1042 | 1043 if typmod > 4 => Value::Int4((typmod - 4) as i32),
        _ => Value::Null,
    }
}

/// `character_octet_length`, as `_pg_char_octet_length` in UTF8 (4 bytes a character):
/// 2^30 for a text or a string of no declared length, NULL for other types.
fn char_octet_length(ty: i64, typmod: i64) -> Value {
    match ty {
        25 | 1042 | 1043 if typmod > 4 => Value::Int4((typmod - 4) as i32 * 4),
        25 | 1042 | 1043 => Value::Int4(1 << 30),
        _ => Value::Null,
    }
}

/// Which of the numeric facets of `information_schema.columns`.
#[derive(Clone, Copy)]
enum Facet {
    Precision,
    Radix,
    Scale,
}

/// `numeric_precision`, `numeric_precision_radix` or `numeric_scale`, as PostgreSQL 15's
/// `_pg_numeric_precision` and its siblings: binary precisions of the integer and float
/// types, the declared precision and scale of a `numeric(p, s)`, NULL for other types.
fn numeric_facet(ty: i64, typmod: i64, facet: Facet) -> Value {
    let bits = match ty {
        21 => 16,
        23 => 32,
        20 => 64,
        700 => 24,
        701 => 53,
        1700 => {
            return match facet {
                Facet::Radix => Value::Int4(10),
                _ if typmod < 4 => Value::Null,
                Facet::Precision => Value::Int4((((typmod - 4) >> 16) & 0xffff) as i32),
                Facet::Scale => Value::Int4(((typmod - 4) & 0xffff) as i32),
            }
        }
        _ => return Value::Null,
    };
    match facet {
        Facet::Precision => Value::Int4(bits),
        Facet::Radix => Value::Int4(2),
        Facet::Scale if matches!(ty, 21 | 23 | 20) => Value::Int4(0),
        Facet::Scale => Value::Null,
    }
}

/// `datetime_precision`, as `_pg_datetime_precision`: 0 for a date, the declared
/// fractional digits (6 if none) of a time, timestamp or interval, NULL for other types.
fn datetime_precision(ty: i64, typmod: i64) -> Value {
    match ty {
        1082 => Value::Int4(0),
        1083 | 1266 | 1114 | 1184 if typmod >= 0 => Value::Int4(typmod as i32),
        1186 if typmod >= 0 => Value::Int4((typmod & 0xffff) as i32),
        1083 | 1266 | 1114 | 1184 | 1186 => Value::Int4(6),
        _ => Value::Null,
    }
}
