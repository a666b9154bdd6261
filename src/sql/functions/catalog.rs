//! Functions of the relational evaluator ([`crate::exec::relational_funcs`]): catalog
//! functions (`format_type`, `pg_get_userbyid`, `has_table_privilege`, ...), string and
//! array helpers, and set-returning functions, one row each with its result's static type.

use crate::sql::{RType, RegKind};
use crate::types::{CatalogType, DataType, ElemType};

/// Whether a relational function returns one value or a set of rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Returns {
    /// One value of this static type.
    Value(RType),
    /// Rows: a set-returning function (FROM, or a select list for some).
    Set,
}

const B: Returns = Returns::Value(RType::Base(DataType::Bool));
const I8: Returns = Returns::Value(RType::Base(DataType::Int8));
const I4: Returns = Returns::Value(RType::Base(DataType::Int4));
const TX: Returns = Returns::Value(RType::Base(DataType::Text));
const NM: Returns = Returns::Value(RType::Catalog(CatalogType::Name));
const TZ: Returns = Returns::Value(RType::Base(DataType::TimestampTz));
const SET: Returns = Returns::Set;

/// Every function the relational evaluator computes by name, with what it returns.
pub(crate) static CATALOG_FUNCTIONS: &[(&str, Returns)] = &[
    ("format_type", TX),
    ("pg_get_userbyid", NM),
    ("pg_table_is_visible", B),
    ("pg_type_is_visible", B),
    ("pg_function_is_visible", B),
    ("pg_get_expr", TX),
    ("obj_description", TX),
    ("col_description", TX),
    ("shobj_description", TX),
    ("pg_encoding_to_char", NM),
    ("array_to_string", TX),
    ("row", Returns::Value(RType::Record(&[]))),
    (
        "current_schemas",
        Returns::Value(RType::Catalog(CatalogType::Array(ElemType::Name))),
    ),
    ("pg_get_indexdef", TX),
    ("pg_get_constraintdef", TX),
    ("pg_get_viewdef", TX),
    ("pg_get_triggerdef", TX),
    ("pg_get_ruledef", TX),
    ("pg_get_partkeydef", TX),
    ("pg_get_statisticsobjdef_columns", TX),
    ("pg_get_serial_sequence", TX),
    ("pg_relation_size", I8),
    ("pg_total_relation_size", I8),
    ("pg_table_size", I8),
    ("pg_indexes_size", I8),
    ("pg_database_size", I8),
    ("pg_size_pretty", TX),
    ("has_table_privilege", B),
    ("has_schema_privilege", B),
    ("has_database_privilege", B),
    ("has_function_privilege", B),
    ("has_column_privilege", B),
    ("has_any_column_privilege", B),
    ("has_type_privilege", B),
    ("pg_has_role", B),
    ("quote_ident", TX),
    ("bit_length", I4),
    ("quote_literal", TX),
    ("quote_nullable", TX),
    ("pg_get_function_result", TX),
    ("pg_get_function_arguments", TX),
    ("pg_get_function_identity_arguments", TX),
    ("pg_relation_is_publishable", B),
    ("pg_is_in_recovery", B),
    ("array_position", I4),
    (
        "array_positions",
        Returns::Value(RType::Catalog(CatalogType::Array(ElemType::Int4))),
    ),
    // Typed as their array argument (the relational binder's static_type).
    ("array_remove", TX),
    ("array_replace", TX),
    ("array_dims", TX),
    ("arraycontains", B),
    ("arraycontained", B),
    ("arrayoverlap", B),
    ("array_ndims", I4),
    ("array_upper", I4),
    ("array_lower", I4),
    ("array_length", I4),
    ("cardinality", I4),
    ("to_regclass", Returns::Value(RType::Reg(RegKind::Class))),
    ("to_regtype", Returns::Value(RType::Reg(RegKind::Type))),
    ("to_regproc", Returns::Value(RType::Reg(RegKind::Proc))),
    (
        "to_regnamespace",
        Returns::Value(RType::Reg(RegKind::Namespace)),
    ),
    ("pg_char_to_encoding", I4),
    (
        "string_to_array",
        Returns::Value(RType::Catalog(CatalogType::Array(ElemType::Text))),
    ),
    (
        "regexp_match",
        Returns::Value(RType::Catalog(CatalogType::Array(ElemType::Text))),
    ),
    (
        "regexp_split_to_array",
        Returns::Value(RType::Catalog(CatalogType::Array(ElemType::Text))),
    ),
    ("replace", TX),
    ("split_part", TX),
    ("left", TX),
    ("right", TX),
    ("starts_with", B),
    ("concat_ws", TX),
    ("pg_postmaster_start_time", TZ),
    ("pg_conf_load_time", TZ),
    ("inet_server_addr", TX),
    ("inet_server_port", I4),
    ("inet_client_addr", TX),
    ("txid_current", I8),
    ("pg_current_xact_id", I8),
    ("pg_tablespace_location", TX),
    ("pg_options_to_table", SET),
    ("pg_get_keywords", SET),
    ("generate_series", SET),
    ("generate_subscripts", SET),
    ("unnest", SET),
    ("regexp_matches", SET),
    ("regexp_split_to_table", SET),
    ("pg_typeof", Returns::Value(RType::Reg(RegKind::Type))),
    ("pg_collation_is_visible", B),
    ("pg_opclass_is_visible", B),
    ("json_build_object", TX),
    ("json_build_array", TX),
    ("_pg_expandarray", SET),
    ("pg_get_function_sqlbody", TX),
    ("pg_opfamily_is_visible", B),
    ("pg_statistics_obj_is_visible", B),
    ("getdatabaseencoding", NM),
    ("format", TX),
    ("pg_operator_is_visible", B),
    ("pg_conversion_is_visible", B),
    ("pg_ts_config_is_visible", B),
    ("pg_ts_parser_is_visible", B),
    ("pg_ts_dict_is_visible", B),
    ("pg_ts_template_is_visible", B),
    ("set_config", TX),
];

/// What relational function `name` returns, if the evaluator has it.
pub(crate) fn catalog_function(name: &str) -> Option<Returns> {
    CATALOG_FUNCTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, r)| *r)
}
