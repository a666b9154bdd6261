//! Operating errors: what a user can cause, as values.
//!
//! Every fallible public function returns [`Result`]. Each variant names a kind of fault the
//! way PostgreSQL's error classes do, and carries the message the user will read. Only
//! `server/` turns a variant into its SQLSTATE (see `server::sqlstate`); programmer errors are
//! assertions, never variants.
//!
//! ```
//! use tcq::Error;
//! let e = Error::UndefinedTable("flights".into());
//! assert_eq!(e.to_string(), r#"relation "flights" does not exist"#);
//! ```

use thiserror::Error;

/// A user-visible error. The `String` payloads are complete sentences or the offending name.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum Error {
    /// 42601: the statement does not parse.
    #[error("{0}")]
    Syntax(String),
    /// 42P01: a stream, table or view name that does not exist.
    #[error("relation \"{0}\" does not exist")]
    UndefinedTable(String),
    /// 42P01: a qualifier (`x.col`) that names no relation of the FROM clause.
    #[error("missing FROM-clause entry for table \"{0}\"")]
    MissingFromEntry(String),
    /// 42P01 said of one kind of relation, as PostgreSQL's DROP says it (`table "t" does
    /// not exist`).
    #[error("{kind} \"{name}\" does not exist")]
    UndefinedRelationOfKind {
        /// "table"
        kind: &'static str,
        /// The name as given.
        name: String,
    },
    /// 42703: a column name that does not exist.
    #[error("{0}")]
    UndefinedColumn(String),
    /// 42883: a function or operator that does not exist for the argument types.
    #[error("{0}")]
    UndefinedFunction(String),
    /// 42P07: CREATE of a name that exists.
    #[error("relation \"{0}\" already exists")]
    DuplicateTable(String),
    /// 42P16: an invalid stream definition (TIMESTAMPCOLUMN twice or on a non-timestamp).
    #[error("{0}")]
    InvalidTableDefinition(String),
    /// 42702: an unqualified column name that several relations of a join have.
    #[error("{0}")]
    AmbiguousColumn(String),
    /// 42725: a function or operator call that several candidates fit equally well
    /// (`operator is not unique: unknown + unknown`).
    #[error("{0}")]
    AmbiguousFunction(String),
    /// 42712: one name given to two relations of a FROM clause.
    #[error("table name \"{0}\" specified more than once")]
    DuplicateAlias(String),
    /// 42712: one name given to two queries of a WITH clause.
    #[error("WITH query name \"{0}\" specified more than once")]
    DuplicateCteName(String),
    /// 42P19: a WITH RECURSIVE query of a shape PostgreSQL refuses (no non-recursive
    /// term, or a self-reference inside it).
    #[error("{0}")]
    InvalidRecursion(String),
    /// 42701: a column named twice.
    #[error("{0}")]
    DuplicateColumn(String),
    /// 42804: a value or expression of the wrong type.
    #[error("{0}")]
    DatatypeMismatch(String),
    /// 42846: no cast exists from one type to the other (`cannot cast type boolean to
    /// timestamp without time zone`).
    #[error("{0}")]
    CannotCoerce(String),
    /// 42803: a grouping error (a column neither grouped nor aggregated).
    #[error("{0}")]
    Grouping(String),
    /// 42P20: a window function where none is allowed (WHERE, GROUP BY, nested in
    /// another's arguments).
    #[error("{0}")]
    Windowing(String),
    /// 42704: an unknown type name.
    #[error("{0}")]
    UndefinedObject(String),
    /// 42P02: a `$n` that names no parameter: one given no value in a simple query, `$0`,
    /// or a number past the protocol's 65,535 parameters.
    #[error("{0}")]
    UndefinedParameter(String),
    /// 42P18 / 42P08: a parameter whose type cannot be determined.
    #[error("{0}")]
    IndeterminateDatatype(String),
    /// 22P02: text that is not a valid value of its type.
    #[error("{0}")]
    InvalidTextRepresentation(String),
    /// 22007: a malformed date/time.
    #[error("{0}")]
    InvalidDatetimeFormat(String),
    /// 22008: a date/time out of range.
    #[error("{0}")]
    DatetimeFieldOverflow(String),
    /// 22009: a time zone displacement out of range (`to_timestamp` with `TZH` 16).
    #[error("{0}")]
    InvalidTimeZoneDisplacement(String),
    /// 22023: a bad parameter value (window RANGE/SLIDE, options).
    #[error("{0}")]
    InvalidParameterValue(String),
    /// 22003: a number out of its type's range.
    #[error("{0}")]
    NumericValueOutOfRange(String),
    /// 2202E: an array subscript or dimension error (`ARRAY[ARRAY[1], ARRAY[2, 3]]`).
    #[error("{0}")]
    ArraySubscript(String),
    /// 22012: division by zero.
    #[error("division by zero")]
    DivisionByZero,
    /// 22001: a string too long for varchar(n).
    #[error("{0}")]
    StringDataRightTruncation(String),
    /// 23502: NULL where NULL is not allowed.
    #[error("{0}")]
    NotNullViolation(String),
    /// 23505: a row whose PRIMARY KEY or UNIQUE key a table already holds.
    #[error("{0}")]
    UniqueViolation(String),
    /// 42P10: an ON CONFLICT target that names no key of the table.
    #[error("{0}")]
    InvalidColumnReference(String),
    /// 21000: one statement would change the same row twice (ON CONFLICT DO UPDATE), or a
    /// scalar subquery returned more than one row.
    #[error("{0}")]
    CardinalityViolation(String),
    /// 22P04: a malformed COPY row (bad column count, bad quoting).
    #[error("{0}")]
    BadCopyFileFormat(String),
    /// 0A000: valid SQL that tcq does not support (yet).
    #[error("{0}")]
    FeatureNotSupported(String),
    /// 34000: an unknown cursor or portal name.
    #[error("cursor \"{0}\" does not exist")]
    InvalidCursorName(String),
    /// 26000: DEALLOCATE of a prepared statement the connection does not hold.
    #[error("{0}")]
    InvalidSqlStatementName(String),
    /// 25006: a statement that writes, in a read-only transaction.
    #[error("{0}")]
    ReadOnlySqlTransaction(String),
    /// 42P03: DECLARE of a cursor name in use.
    #[error("cursor \"{0}\" already exists")]
    DuplicateCursor(String),
    /// 25P01: a statement that needs a transaction block outside one.
    #[error("{0}")]
    NoActiveTransaction(String),
    /// 25P02: a statement in a failed transaction block.
    #[error("current transaction is aborted, commands ignored until end of transaction block")]
    InFailedTransaction,
    /// 57014: the query was cancelled by the user.
    #[error("canceling statement due to user request")]
    QueryCanceled,
    /// 57014: the statement ran longer than the session's `statement_timeout`.
    #[error("canceling statement due to statement timeout")]
    StatementTimeout,
    /// 22021: text that is not valid UTF-8, or that contains a NUL character.
    #[error("{0}")]
    CharacterNotInRepertoire(String),
    /// 2201W: a negative LIMIT.
    #[error("{0}")]
    InvalidRowCountInLimit(String),
    /// 2201X: a negative OFFSET.
    #[error("{0}")]
    InvalidRowCountInResultOffset(String),
    /// 54000: a configured limit was hit; the message names the limit and its value.
    #[error("{0}")]
    ProgramLimitExceeded(String),
    /// 54001: a statement too deeply nested to evaluate.
    #[error("{0}")]
    StatementTooComplex(String),
    /// 53200: out of a configured memory budget.
    #[error("{0}")]
    OutOfMemory(String),
    /// 08P01: a protocol violation by the client.
    #[error("{0}")]
    ProtocolViolation(String),
    /// 42501: not allowed.
    #[error("{0}")]
    InsufficientPrivilege(String),
    /// 42710: an object of that name already exists (a role).
    #[error("{0}")]
    DuplicateObject(String),
    /// 42939: a name reserved by the system (`public`, `pg_*` roles).
    #[error("{0}")]
    ReservedName(String),
    /// 2BP01: an object cannot be dropped because others depend on it (a role that owns
    /// relations).
    #[error("{0}")]
    DependentObjectsStillExist(String),
    /// 55000: the object is not in the state the statement needs.
    #[error("{0}")]
    ObjectNotInPrerequisiteState(String),
    /// 22P03: binary data that is not a valid value of its type.
    #[error("{0}")]
    InvalidBinaryRepresentation(String),
    /// 3B001: RELEASE or ROLLBACK TO a savepoint that does not exist.
    #[error("savepoint \"{0}\" does not exist")]
    InvalidSavepoint(String),
    /// 25001: a statement that cannot run inside a transaction block.
    #[error("{0}")]
    ActiveSqlTransaction(String),
    /// Another error with what PostgreSQL adds to it: where in the query string it was
    /// found (`position`, 1-based, in characters: psql's `LINE 1:` caret) and a `hint`.
    /// The SQLSTATE is the inner error's.
    #[error("{error}")]
    Detailed {
        /// The error itself.
        error: Box<Error>,
        /// 1-based character position in the query string.
        position: Option<u32>,
        /// A hint for the user ("Perhaps you meant to reference the column ...").
        hint: Option<String>,
        /// PostgreSQL's DETAIL: more about what was wrong ("A field with precision 5,
        /// scale 2 must round to an absolute value less than 10^3.").
        detail: Option<String>,
        /// PostgreSQL's CONTEXT: where the error arose ("COPY t, line 2, column v: \"x\"").
        context: Option<String>,
    },
    /// 3F000: a schema name that does not exist.
    #[error("{0}")]
    UndefinedSchema(String),
    /// 42602: a name of the wrong form (a file sink's relative path, as PostgreSQL's
    /// `relative path not allowed for COPY to file`).
    #[error("{0}")]
    InvalidName(String),
    /// 58P01: a file or directory that does not exist.
    #[error("{0}")]
    UndefinedFile(String),
    /// 58030: a read, write or fsync of the data directory failed.
    #[error("{0}")]
    Io(String),
    /// XX001: a file of the data directory holds what tcq did not write (a failed
    /// checksum, a bad header); the message names the file and offset.
    #[error("{0}")]
    DataCorrupted(String),
    /// 42809: an object of the wrong kind (ORDER BY in a call of a non-aggregate).
    #[error("{0}")]
    WrongObjectType(String),
    /// 55006: the object is in use (a data directory locked by another server).
    #[error("{0}")]
    ObjectInUse(String),
    /// 2201F: an argument a power function does not take (the square root of a negative
    /// number).
    #[error("{0}")]
    InvalidArgumentForPowerFunction(String),
    /// 2201E: the logarithm of zero or of a negative number.
    #[error("{0}")]
    InvalidArgumentForLogarithm(String),
    /// 55P02: a parameter that cannot be changed (`SET server_version = ...`).
    #[error("{0}")]
    CantChangeRuntimeParam(String),
    /// 2201B: a regular expression that does not compile.
    #[error("{0}")]
    InvalidRegularExpression(String),
    /// 22011: a substring that cannot be taken (a negative length).
    #[error("{0}")]
    SubstringError(String),
    /// 22025: a LIKE pattern or ESCAPE string that is not one (a pattern ending in its
    /// escape character, an ESCAPE of more than one character).
    #[error("{0}")]
    InvalidEscapeSequence(String),
    /// 2200C: an escape character used wrongly (more than two `esc"` separators in the
    /// pattern of `substring(s SIMILAR pattern ESCAPE esc)`).
    #[error("{0}")]
    InvalidUseOfEscapeCharacter(String),
    /// 2201G: an argument `width_bucket` does not take (a count of zero, equal bounds).
    #[error("{0}")]
    InvalidArgumentForWidthBucket(String),
    /// 22014: `ntile` with a bucket count below 1.
    #[error("{0}")]
    InvalidArgumentForNtile(String),
    /// 22016: `nth_value` with a row number below 1.
    #[error("{0}")]
    InvalidArgumentForNthValue(String),
    /// 22013: a window frame offset below zero.
    #[error("{0}")]
    InvalidPrecedingOrFollowingSize(String),
    /// 22004: a NULL where a value is required (a window frame offset).
    #[error("{0}")]
    NullValueNotAllowed(String),
    /// XX000: a bug in tcq; the message says what invariant failed.
    #[error("internal error: {0}")]
    Internal(String),
}

/// `std::result::Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The error without its position and hint.
    pub(crate) fn kind(&self) -> &Error {
        match self {
            Error::Detailed { error, .. } => error.kind(),
            e => e,
        }
    }

    /// 1-based character position in the query string, if known.
    pub(crate) fn position(&self) -> Option<u32> {
        match self {
            Error::Detailed { position, .. } => *position,
            _ => None,
        }
    }

    /// The hint, if any: the one given, else PostgreSQL's for a missing operator (42883
    /// `operator does not exist: ...`), which every such error carries.
    pub(crate) fn hint(&self) -> Option<&str> {
        match self {
            Error::Detailed { hint: Some(h), .. } => Some(h),
            e => e.kind().default_hint(),
        }
    }

    /// PostgreSQL's hint (op_error) for 42883 `operator does not exist: l op r`, or its
    /// singular for a prefix operator (`- text`).
    fn default_hint(&self) -> Option<&'static str> {
        let Error::UndefinedFunction(m) = self else {
            return None;
        };
        let operands = m.strip_prefix("operator does not exist: ")?;
        let prefix = operands
            .chars()
            .next()
            .is_some_and(|c| !c.is_alphanumeric() && c != '"' && c != '_');
        Some(if prefix {
            "No operator matches the given name and argument type. You might need to add an explicit type cast."
        } else {
            "No operator matches the given name and argument types. You might need to add explicit type casts."
        })
    }

    /// The detail, if any.
    pub(crate) fn detail(&self) -> Option<&str> {
        match self {
            Error::Detailed { detail, .. } => detail.as_deref(),
            _ => None,
        }
    }

    /// The error's parts: the inner error and its position, hint, detail and context.
    fn into_parts(self) -> Parts {
        match self {
            Error::Detailed {
                error,
                position,
                hint,
                detail,
                context,
            } => Parts {
                error,
                position,
                hint,
                detail,
                context,
            },
            e => Parts {
                error: Box::new(e),
                position: None,
                hint: None,
                detail: None,
                context: None,
            },
        }
    }

    /// The same error found at `position` (an earlier position is kept).
    pub(crate) fn at(self, position: u32) -> Error {
        let mut p = self.into_parts();
        p.position = p.position.or(Some(position));
        p.into_error()
    }

    /// The same error with a hint.
    pub(crate) fn with_hint(self, hint: impl Into<String>) -> Error {
        let mut p = self.into_parts();
        p.hint = Some(hint.into());
        p.into_error()
    }

    /// The same error with a detail.
    pub(crate) fn with_detail(self, detail: impl Into<String>) -> Error {
        let mut p = self.into_parts();
        p.detail = Some(detail.into());
        p.into_error()
    }

    /// The same error with a context (PostgreSQL's CONTEXT field, e.g. the COPY line).
    pub(crate) fn with_context(self, context: impl Into<String>) -> Error {
        let mut p = self.into_parts();
        p.context = Some(context.into());
        p.into_error()
    }

    /// The context, if any.
    pub(crate) fn context(&self) -> Option<&str> {
        match self {
            Error::Detailed { context, .. } => context.as_deref(),
            _ => None,
        }
    }
}

/// [`Error::Detailed`]'s fields, for the builders above.
struct Parts {
    error: Box<Error>,
    position: Option<u32>,
    hint: Option<String>,
    detail: Option<String>,
    context: Option<String>,
}

impl Parts {
    fn into_error(self) -> Error {
        Error::Detailed {
            error: self.error,
            position: self.position,
            hint: self.hint,
            detail: self.detail,
            context: self.context,
        }
    }
}
