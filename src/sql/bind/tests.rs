//! Unit tests of the binder: statements bound against a small catalog.

use super::*;
use crate::sql::parse::parse_all;

#[test]
fn relation_names_follow_postgresql_qualification() {
    let ok = |w: &str, db: Option<&str>| relation_name(w, db).unwrap();
    assert_eq!(ok("s", Some("tcq")), "s");
    assert_eq!(ok("public.s", Some("tcq")), "s");
    assert_eq!(ok("net.tcp", Some("tcq")), "net.tcp");
    assert_eq!(ok("tcq.public.s", Some("tcq")), "s");
    assert_eq!(ok("tcq.net.tcp", Some("tcq")), "net.tcp");
    assert_eq!(ok("other.net.tcp", None), "net.tcp");
    assert_eq!(
        relation_name("other.public.s", Some("tcq")).unwrap_err(),
        Error::FeatureNotSupported(
            "cross-database references are not implemented: other.public.s".into()
        )
    );
    assert_eq!(
        relation_name("x.y.z.w", None).unwrap_err(),
        Error::Syntax("improper qualified name (too many dotted names): x.y.z.w".into())
    );
}

pub(super) struct Schema;

impl SchemaProvider for Schema {
    fn stream(&self, name: &str) -> Option<(Vec<Column>, Option<usize>)> {
        match name {
            "flights" => Some((
                vec![
                    Column::new("ts", DataType::Timestamp),
                    Column::new("delay", DataType::Int4),
                    Column::new("distance", DataType::Int8),
                    Column::new("origin", DataType::Text),
                    Column::new("speed", DataType::Float8),
                    Column::new("code", DataType::Varchar(Some(3))),
                ],
                Some(0),
            )),
            "network.tcpdump" => Some((
                vec![
                    Column::new("t", DataType::TimestampTz),
                    Column::new("len", DataType::Int2),
                ],
                Some(0),
            )),
            "clicks" => Some((vec![Column::new("url", DataType::Text)], None)),
            _ => None,
        }
    }
    fn system_view(&self, name: &str) -> Option<Vec<Column>> {
        match name {
            "tcq_streams" => Some(vec![Column::new("name", DataType::Text)]),
            "pg_catalog.pg_type" => Some(vec![
                Column::new("oid", DataType::Int4),
                Column::new("typname", DataType::Text),
            ]),
            _ => None,
        }
    }
    fn stream_names(&self) -> Vec<String> {
        vec!["flights".into(), "clicks".into()]
    }
}

pub(super) fn plan(sql: &str) -> Result<Plan> {
    let p = parse_all(sql)?;
    bind(&p[0], &Schema, &[])
}

pub(super) fn query(sql: &str) -> Query {
    match plan(sql).unwrap() {
        Plan::Query(q) => *q,
        other => panic!("not a query: {other:?}"),
    }
}

/// The error without its position and hint (tested in `positions_and_hints`).
pub(super) fn err(sql: &str) -> Error {
    plan(sql).unwrap_err().kind().clone()
}

#[test]
fn positions_and_hints() {
    let e = plan("SELECT delya FROM flights").unwrap_err();
    assert_eq!(
        e.kind(),
        &Error::UndefinedColumn("column \"delya\" does not exist".into())
    );
    assert_eq!(e.position(), Some(8));
    assert_eq!(
        e.hint(),
        Some("Perhaps you meant to reference the column \"flights.delay\".")
    );
    let e = plan("SELECT f.orgin FROM flights f").unwrap_err();
    assert_eq!(
        e.hint(),
        Some("Perhaps you meant to reference the column \"f.origin\".")
    );
    assert_eq!(plan("SELECT xyzzy FROM flights").unwrap_err().hint(), None);
    let e = plan("SELECT 1 FROM  flihgts").unwrap_err();
    assert_eq!(e.position(), Some(16));
    assert_eq!(e.hint(), Some("Perhaps you meant the stream \"flights\"."));
    assert_eq!(
        closest("delya", ["delay", "distance"].into_iter()),
        Some("delay")
    );
    assert_eq!(closest("ab", ["xy"].into_iter()), None);
    assert_eq!(levenshtein("kitten", "sitting"), 3);
    let e = plan("SELECT 1, nosuch(delay) FROM flights").unwrap_err();
    assert_eq!(e.position(), Some(11));
    assert!(e.hint().unwrap().starts_with("No function matches"));
    // A bad window value is reported at its string: RANGE, SLIDE, START AT, SLACK.
    let at = |sql: &str| plan(sql).unwrap_err().position();
    assert_eq!(
        at("SELECT count(*) FROM flights [RANGE BY '1 month']"),
        Some(40)
    );
    assert_eq!(
        at("SELECT count(*) FROM flights [RANGE BY '1 hour' SLIDE BY '0 s']"),
        Some(58)
    );
    assert_eq!(
        at("SELECT count(*) FROM flights [RANGE BY '1 hour' START AT 'noon-ish']"),
        Some(58)
    );
    assert_eq!(
        at("SELECT count(*) FROM flights [RANGE BY '1 hour' SLACK '-1 s']"),
        Some(55)
    );
}

const HOUR: i64 = 3_600_000_000;

#[test]
fn create_stream() {
    let Plan::CreateStream(c) = plan(
        "CREATE STREAM network.tcpdump2 (t timestamptz TIMESTAMPCOLUMN, a boolean, b int2, c int, d bigint, e float4, f double precision, g numeric(10,2), h text, i varchar(5), j character varying(7), k timestamp without time zone, l interval, m float) TYPE ARCHIVED",
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(c.name, "network.tcpdump2");
    assert_eq!(c.timestamp_column, Some(0));
    assert!(c.archived && !c.if_not_exists);
    let types: Vec<DataType> = c.columns.iter().map(|c| c.data_type).collect();
    use DataType as T;
    assert_eq!(
        types,
        [
            T::TimestampTz,
            T::Bool,
            T::Int2,
            T::Int4,
            T::Int8,
            T::Float4,
            T::Float8,
            T::Numeric,
            T::Text,
            T::Varchar(Some(5)),
            T::Varchar(Some(7)),
            T::Timestamp,
            T::Interval,
            T::Float8
        ]
    );
    let Plan::CreateStream(c) = plan("CREATE STREAM s (a int)").unwrap() else {
        panic!()
    };
    assert_eq!((c.timestamp_column, c.archived), (None, false));
    assert_eq!(
        err("CREATE STREAM s (a foo)"),
        Error::UndefinedObject("type \"foo\" does not exist".into())
    );
    assert!(
        matches!(err("CREATE STREAM s (a int, a text)"), Error::DuplicateColumn(m) if m == "column \"a\" specified more than once")
    );
    assert!(
        matches!(err("CREATE STREAM s (a int TIMESTAMPCOLUMN)"), Error::InvalidTableDefinition(m) if m.contains("must be of type timestamp"))
    );
    assert!(
        matches!(err("CREATE STREAM s (a timestamp TIMESTAMPCOLUMN, b timestamp TIMESTAMPCOLUMN)"), Error::InvalidTableDefinition(m) if m.contains("more than one TIMESTAMPCOLUMN"))
    );
}

#[test]
fn drop_stream_and_utilities() {
    assert_eq!(
        plan("DROP STREAM IF EXISTS a, b").unwrap(),
        Plan::DropStream {
            names: vec!["a".into(), "b".into()],
            if_exists: true,
            cascade: false
        }
    );
    assert!(matches!(
        plan("DROP STREAM a CASCADE").unwrap(),
        Plan::DropStream { cascade: true, .. }
    ));
    assert_eq!(plan("").unwrap(), Plan::Empty);
    assert_eq!(plan(";").unwrap(), Plan::Empty);
    assert_eq!(
        plan("FETCH c").unwrap(),
        Plan::Fetch {
            cursor: "c".into(),
            count: FetchCount::Count(1),
            is_move: false,
            timeout_us: None,
        }
    );
    assert_eq!(
        plan("FETCH 5 FROM c WITH (timeout = '1.5s')").unwrap(),
        Plan::Fetch {
            cursor: "c".into(),
            count: FetchCount::Count(5),
            is_move: false,
            timeout_us: Some(1_500_000),
        }
    );
    assert_eq!(
        plan("FETCH ALL c WITH (TIMEOUT 0)").unwrap(),
        Plan::Fetch {
            cursor: "c".into(),
            count: FetchCount::All,
            is_move: false,
            timeout_us: Some(0),
        }
    );
    assert!(matches!(
        err("FETCH c WITH (timeout = '1 month')"),
        Error::InvalidParameterValue(_)
    ));
    assert!(matches!(
        err("FETCH c WITH (timeout = '-1s')"),
        Error::InvalidParameterValue(_)
    ));
    assert_eq!(
        plan("BEGIN").unwrap(),
        Plan::Transaction(TransactionOp::Begin {
            read_only: None,
            isolation: None,
            start: false
        })
    );
    assert_eq!(
        plan("SHOW server_version").unwrap(),
        Plan::Show {
            name: "server_version".into()
        }
    );
    assert_eq!(
        plan("SET datestyle TO 'ISO, MDY'").unwrap(),
        Plan::Set {
            name: "datestyle".into(),
            value: Some("ISO, MDY".into()),
            local: false,
        }
    );
    assert_eq!(
        plan("SET LOCAL TIME ZONE 'Asia/Tokyo'").unwrap(),
        Plan::Set {
            name: "timezone".into(),
            value: Some("Asia/Tokyo".into()),
            local: true,
        }
    );
    assert_eq!(plan("CLOSE ALL").unwrap(), Plan::Close { cursor: None });
    assert!(matches!(
        plan("CREATE TABLE t (a int PRIMARY KEY DEFAULT 1 + 1)").unwrap(),
        Plan::CreateTable(CreateTable { primary_key: Some(ref k), ref not_null, ref defaults, .. })
            if k == &[0] && not_null == &[true] && defaults[0].is_some()
    ));
    assert!(matches!(
        err("CREATE TABLE t (a int CHECK (a > 0))"),
        Error::FeatureNotSupported(_)
    ));
    // PostgreSQL's checks at CREATE TABLE: a key names a column once (42701), a
    // column is not both NULL and NOT NULL (42601), a constant DEFAULT must be a
    // value of the column's type (22P02).
    for (sql, state) in [
        ("CREATE TABLE t (a int, UNIQUE (a, a))", "42701"),
        (
            "CREATE TABLE t (a int, b int, PRIMARY KEY (b, a, b))",
            "42701",
        ),
        ("CREATE TABLE t (a int NULL NOT NULL)", "42601"),
        ("CREATE TABLE t (a int DEFAULT 'abc')", "22P02"),
        ("CREATE TABLE t (a smallint DEFAULT 70000)", "22003"),
    ] {
        assert_eq!(crate::server::sqlstate(&err(sql)), state, "{sql}");
    }
    assert!(plan("CREATE TABLE t (a int DEFAULT '7', b text DEFAULT 'x')").is_ok());
    // A stream's tuples are not updated: the statement names the reason.
    assert!(matches!(
        err("UPDATE flights SET delay = 1"),
        Error::FeatureNotSupported(_)
    ));
}

#[test]
fn windowed_aggregate_query() {
    let q = query("SELECT origin, avg(delay), max(delay) AS worst, wtime(*) FROM flights [RANGE BY '1 hour' SLIDE BY '10 minutes'] WHERE delay > 0 GROUP BY origin HAVING count(*) > 2 ORDER BY worst DESC LIMIT 10");
    assert!(q.is_continuous());
    assert_eq!(
        q.windows,
        vec![WindowSpec {
            range_us: HOUR,
            slide_us: HOUR / 6,
            start: StartSpec::Default,
            slack_us: None,
        }]
    );
    let agg = q.aggregate.as_ref().unwrap();
    assert_eq!(agg.group_by, vec![Expr::Column(3)]);
    assert_eq!(agg.group_types, vec![DataType::Text]);
    let funcs: Vec<(AggFunc, DataType)> =
        agg.calls.iter().map(|c| (c.func, c.result_type)).collect();
    assert_eq!(
        funcs,
        [
            (AggFunc::Avg, DataType::Numeric),
            (AggFunc::Max, DataType::Int4),
            (AggFunc::CountStar, DataType::Int8)
        ]
    );
    assert_eq!(
        q.projection,
        vec![
            Expr::Column(0),
            Expr::Column(1),
            Expr::Column(2),
            Expr::WindowMeta(WindowMeta::Wtime)
        ]
    );
    let names: Vec<&str> = q.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["origin", "avg", "worst", "wtime"]);
    assert_eq!(q.columns[3].data_type, DataType::Timestamp);
    assert_eq!(
        q.filter,
        Some(Expr::Binary {
            op: BinaryOp::Gt,
            left: Box::new(Expr::Column(1)),
            right: Box::new(Expr::Literal(Value::Int4(0)))
        })
    );
    assert_eq!(
        q.having,
        Some(Expr::Binary {
            op: BinaryOp::Gt,
            left: Box::new(Expr::Column(3)),
            right: Box::new(Expr::Literal(Value::Int4(2)))
        })
    );
    assert_eq!(
        q.order_by,
        vec![SortKey {
            expr: Expr::Column(2),
            descending: true,
            nulls_first: true
        }]
    );
    assert_eq!(q.limit, Some(10));
}

#[test]
fn window_values() {
    let q = query("SELECT count(*) FROM flights [RANGE BY '2 days' START AT 'epoch']");
    assert_eq!(
        q.windows[0],
        WindowSpec {
            range_us: 48 * HOUR,
            slide_us: 48 * HOUR,
            start: StartSpec::Epoch,
            slack_us: None,
        }
    );
    let q = query("SELECT count(*) FROM flights AS f [RANGE BY '00:05:00' SLIDE BY '1 hour 30 minutes' START AT '2001-01-01 00:00:00'] [RANGE BY '10 seconds']");
    assert_eq!(q.windows.len(), 2);
    assert_eq!(
        q.windows[0],
        WindowSpec {
            range_us: 300_000_000,
            slide_us: 90 * 60_000_000,
            start: StartSpec::At(978_307_200_000_000),
            slack_us: None,
        }
    );
    assert_eq!(q.windows[1].range_us, 10_000_000);
    assert!(
        matches!(err("SELECT count(*) FROM flights [RANGE BY '1 month']"), Error::InvalidParameterValue(m) if m.contains("has no fixed length: months and years vary in length"))
    );
    assert!(matches!(
        err("SELECT count(*) FROM flights [RANGE BY '1 year']"),
        Error::InvalidParameterValue(_)
    ));
    assert!(matches!(
        err("SELECT count(*) FROM flights [RANGE BY '0 seconds']"),
        Error::InvalidParameterValue(_)
    ));
    assert!(matches!(
        err("SELECT count(*) FROM flights [RANGE BY '-1 hour']"),
        Error::InvalidParameterValue(_)
    ));
    assert!(matches!(
        err("SELECT count(*) FROM flights [RANGE BY '1 hour' SLIDE BY '0 s']"),
        Error::InvalidParameterValue(_)
    ));
    assert!(matches!(
        err("SELECT count(*) FROM flights [RANGE BY 'soon']"),
        Error::InvalidDatetimeFormat(_)
    ));
    assert!(matches!(
        err("SELECT count(*) FROM flights [RANGE BY '1 hour' START AT 'noon-ish']"),
        Error::InvalidDatetimeFormat(_)
    ));
    assert!(matches!(
        err("SELECT count(*) FROM flights [RANGE BY '1 hour' START AT '2001-13-01']"),
        Error::DatetimeFieldOverflow(_)
    ));
    let q = query("SELECT wtime(*), wstart(*), wrange(*), wslide(*) FROM network.tcpdump [RANGE BY '1 minute']");
    let types: Vec<DataType> = q.columns.iter().map(|c| c.data_type).collect();
    assert_eq!(
        types,
        [
            DataType::TimestampTz,
            DataType::TimestampTz,
            DataType::Interval,
            DataType::Interval
        ]
    );
    let q = query("SELECT wtime(*) FROM clicks [RANGE BY '1 minute']");
    assert_eq!(q.columns[0].data_type, DataType::TimestampTz);
    assert!(matches!(
        err("SELECT wtime(*) FROM flights"),
        Error::FeatureNotSupported(_)
    ));
}

#[test]
fn aggregate_result_types() {
    // sum/avg of intervals are PostgreSQL's interval aggregates (issue 30).
    let q = query("SELECT sum(ts - ts), avg(ts - ts) FROM flights");
    let types: Vec<DataType> = q.columns.iter().map(|c| c.data_type).collect();
    assert_eq!(types, [DataType::Interval, DataType::Interval]);
    let q = query("SELECT count(delay), count(DISTINCT origin), sum(delay), sum(distance), sum(speed), avg(distance), avg(speed), min(origin), stddev(delay), var_pop(speed) FROM flights");
    use DataType as T;
    let types: Vec<DataType> = q.columns.iter().map(|c| c.data_type).collect();
    assert_eq!(
        types,
        [
            T::Int8,
            T::Int8,
            T::Int8,
            T::Numeric,
            T::Float8,
            T::Numeric,
            T::Float8,
            T::Text,
            T::Numeric,
            T::Float8
        ]
    );
    assert!(q.aggregate.as_ref().unwrap().calls[1].distinct);
    assert!(
        matches!(err("SELECT sum(origin) FROM flights"), Error::UndefinedFunction(m) if m == "function sum(text) does not exist")
    );
}

#[test]
fn grouping_rules() {
    // 42P10, as PostgreSQL: a position outside the select list.
    for sql in [
        "SELECT origin, count(*) FROM flights GROUP BY 3",
        "SELECT origin, count(*) FROM flights GROUP BY origin ORDER BY 9",
    ] {
        assert!(
            matches!(err(sql), Error::InvalidColumnReference(_)),
            "{sql}: {:?}",
            err(sql)
        );
    }
    assert_eq!(
        err("SELECT origin, delay, count(*) FROM flights GROUP BY origin"),
        Error::Grouping("column \"flights.delay\" must appear in the GROUP BY clause or be used in an aggregate function".into())
    );
    let q = query("SELECT origin AS o, delay / 10 AS bucket, count(*) FROM flights GROUP BY o, 2 ORDER BY 2, o");
    let agg = q.aggregate.unwrap();
    assert_eq!(agg.group_by[0], Expr::Column(3));
    assert_eq!(
        agg.group_by[1],
        Expr::Binary {
            op: BinaryOp::Div,
            left: Box::new(Expr::Column(1)),
            right: Box::new(Expr::Literal(Value::Int4(10)))
        }
    );
    assert_eq!(
        q.projection,
        vec![Expr::Column(0), Expr::Column(1), Expr::Column(2)]
    );
    assert_eq!(
        q.order_by
            .iter()
            .map(|k| k.expr.clone())
            .collect::<Vec<_>>(),
        vec![Expr::Column(1), Expr::Column(0)]
    );
    let q = query("SELECT avg(delay)::numeric(10, 2) FROM flights");
    assert_eq!(
        q.projection[0],
        Expr::Func {
            func: ScalarFunc::NumericTypmod,
            args: vec![
                Expr::Column(0),
                Expr::Literal(Value::Int4(10)),
                Expr::Literal(Value::Int4(2))
            ]
        }
    );
    assert_eq!(q.columns[0].name, "avg");
    let q = query("SELECT delay + 1, sum(delay) * 2 FROM flights GROUP BY delay");
    assert_eq!(
        q.projection[0],
        Expr::Binary {
            op: BinaryOp::Add,
            left: Box::new(Expr::Column(0)),
            right: Box::new(Expr::Literal(Value::Int4(1)))
        }
    );
    assert!(
        matches!(err("SELECT count(*) FROM flights WHERE sum(delay) > 1"), Error::Grouping(m) if m == "aggregate functions are not allowed in WHERE")
    );
    assert!(matches!(
        err("SELECT sum(count(*)) FROM flights"),
        Error::Grouping(_)
    ));
    assert!(matches!(
        err("SELECT count(*) FROM flights GROUP BY count(*)"),
        Error::Grouping(_)
    ));
    let q = query("SELECT * FROM flights WHERE origin = 'SFO' ORDER BY delay LIMIT 5 OFFSET 2");
    assert_eq!(q.projection.len(), 6);
    assert!(q.aggregate.is_none());
    assert_eq!((q.limit, q.offset), (Some(5), Some(2)));
}

#[test]
fn names_and_sources() {
    assert_eq!(
        err("SELECT * FROM nope"),
        Error::UndefinedTable("nope".into())
    );
    assert_eq!(
        err("SELECT nope FROM flights"),
        Error::UndefinedColumn("column \"nope\" does not exist".into())
    );
    assert_eq!(
        err("SELECT \"Delay\" FROM flights"),
        Error::UndefinedColumn("column \"Delay\" does not exist".into())
    );
    let q = query("SELECT FLIGHTS.DELAY, flights.origin FROM flights");
    assert_eq!(q.projection, vec![Expr::Column(1), Expr::Column(3)]);
    assert_eq!(
        err("SELECT f.delay FROM flights"),
        Error::MissingFromEntry("f".into())
    );
    let q = query("SELECT f.delay FROM flights f");
    assert_eq!(q.projection, vec![Expr::Column(1)]);
    let q = query("SELECT typname FROM pg_type");
    assert_eq!(
        q.source,
        Source::System {
            name: "pg_catalog.pg_type".into(),
            columns: Schema.system_view("pg_catalog.pg_type").unwrap()
        }
    );
    assert!(!q.is_continuous());
    let q = query("SELECT * FROM tcq_streams");
    assert!(matches!(q.source, Source::System { ref name, .. } if name == "tcq_streams"));
    let q = query("SELECT 1, 'a', version()");
    assert_eq!(q.source, Source::Nothing);
    let names: Vec<&str> = q.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["?column?", "?column?", "version"]);
    assert_eq!(q.columns[1].data_type, DataType::Text);
    assert!(matches!(
        err("SELECT * FROM flights a, flights b"),
        Error::FeatureNotSupported(_)
    ));
    assert!(matches!(
        err("SELECT * FROM flights JOIN clicks ON true"),
        Error::FeatureNotSupported(_)
    ));
    assert!(matches!(
        err("SELECT * FROM (SELECT * FROM flights [RANGE BY '1 minute']) AS x"),
        Error::FeatureNotSupported(_)
    ));
    assert!(matches!(
        err("SELECT * FROM tcq_streams [RANGE BY '1 minute']"),
        Error::FeatureNotSupported(_)
    ));
    let q = query("SELECT len FROM network.tcpdump [RANGE BY '1 minute']");
    assert!(matches!(q.source, Source::Stream { ref name, .. } if name == "network.tcpdump"));
}

#[test]
fn types_and_operators() {
    assert_eq!(
        err("SELECT origin + 1 FROM flights"),
        Error::UndefinedFunction("operator does not exist: text + integer".into())
    );
    let q = query("SELECT delay + distance, delay * 1.5, speed / 2, ts + '1 hour', ts - ts, '1'::int, CAST(delay AS text) FROM flights");
    use DataType as T;
    let types: Vec<DataType> = q.columns.iter().map(|c| c.data_type).collect();
    assert_eq!(
        types,
        [
            T::Int8,
            T::Numeric,
            T::Float8,
            T::Timestamp,
            T::Interval,
            T::Int4,
            T::Text
        ]
    );
    assert_eq!(q.columns[5].name, "int4");
    assert_eq!(q.columns[6].name, "delay");
    let q = query("SELECT * FROM flights WHERE ts > '2001-01-01 00:00'");
    assert_eq!(
        q.filter,
        Some(Expr::Binary {
            op: BinaryOp::Gt,
            left: Box::new(Expr::Column(0)),
            right: Box::new(Expr::Literal(Value::Timestamp(978_307_200_000_000)))
        })
    );
    assert!(matches!(
        err("SELECT * FROM flights WHERE delay = 'abc'"),
        Error::InvalidTextRepresentation(_)
    ));
    assert!(
        matches!(err("SELECT * FROM flights WHERE delay"), Error::DatatypeMismatch(m) if m == "argument of WHERE must be type boolean, not type integer")
    );
    assert!(
        matches!(err("SELECT nosuch(1)"), Error::UndefinedFunction(m) if m == "function nosuch(integer) does not exist")
    );
    let q = query("SELECT -2147483648, 2147483648, 1.5, -delay, NOT true FROM flights");
    assert_eq!(q.projection[0], Expr::Literal(Value::Int4(i32::MIN)));
    assert_eq!(q.projection[1], Expr::Literal(Value::Int8(2_147_483_648)));
    assert_eq!(q.columns[2].data_type, DataType::Numeric);
    let q = query("SELECT CASE WHEN delay > 10 THEN 'late' ELSE 'ok' END, coalesce(delay, 0), origin LIKE 'S%', delay IN (1, 2), delay BETWEEN 1 AND 5, extract(hour FROM ts) FROM flights");
    let types: Vec<DataType> = q.columns.iter().map(|c| c.data_type).collect();
    assert_eq!(
        types,
        [T::Text, T::Int4, T::Bool, T::Bool, T::Bool, T::Numeric]
    );
}

#[test]
fn parameters_take_types_from_context() {
    let p = parse_all("SELECT * FROM flights WHERE delay > $1 AND origin = $2 AND $3::int8 > 0")
        .unwrap();
    let Plan::Query(q) = bind(&p[0], &Schema, &[]).unwrap() else {
        panic!()
    };
    assert_eq!(
        q.param_types,
        vec![DataType::Int4, DataType::Text, DataType::Int8]
    );
    let Plan::Query(q) = bind(&p[0], &Schema, &[Some(DataType::Int8)]).unwrap() else {
        panic!()
    };
    assert_eq!(q.param_types[0], DataType::Int8);
    let q = query("SELECT $1");
    assert_eq!(q.param_types, vec![DataType::Text]);
}

#[test]
fn insert() {
    let Plan::Insert(i) = plan("INSERT INTO flights (ts, delay, origin) VALUES ('2001-01-01 00:00', -5, 'SFO'), ($1, $2, NULL), (DEFAULT, 1::int8, 'x')").unwrap() else { panic!() };
    assert_eq!(i.stream, "flights");
    assert_eq!(i.target_columns, vec![0, 1, 3]);
    assert_eq!(
        i.rows[0][0],
        Expr::Cast {
            expr: Box::new(Expr::Literal(Value::Text("2001-01-01 00:00".into()))),
            to: DataType::Timestamp
        }
    );
    assert_eq!(i.rows[0][1], Expr::Literal(Value::Int4(-5)));
    assert_eq!(i.rows[0][2], Expr::Literal(Value::Text("SFO".into())));
    assert_eq!(
        i.rows[1],
        vec![Expr::Param(0), Expr::Param(1), Expr::Literal(Value::Null)]
    );
    assert_eq!(i.rows[2][0], Expr::Literal(Value::Null));
    assert_eq!(
        i.rows[2][1],
        Expr::Cast {
            expr: Box::new(Expr::Cast {
                expr: Box::new(Expr::Literal(Value::Int4(1))),
                to: DataType::Int8
            }),
            to: DataType::Int4
        }
    );
    assert_eq!(i.param_types, vec![DataType::Timestamp, DataType::Int4]);
    let Plan::Insert(i) =
        plan("INSERT INTO flights VALUES ('2001-01-01', 1, 2, 'a', 1.5, 'abc')").unwrap()
    else {
        panic!()
    };
    assert_eq!(i.target_columns, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(
        i.rows[0][4],
        Expr::Cast {
            expr: Box::new(Expr::Literal(Value::Numeric(rust_decimal::Decimal::new(
                15, 1
            )))),
            to: DataType::Float8
        }
    );
    assert_eq!(
        err("INSERT INTO flights (delay) VALUES (1, 2)"),
        Error::Syntax("INSERT has more expressions than target columns".into())
    );
    assert_eq!(
        err("INSERT INTO flights (delay, origin) VALUES (1)"),
        Error::Syntax("INSERT has more target columns than expressions".into())
    );
    assert_eq!(
        err("INSERT INTO nope VALUES (1)"),
        Error::UndefinedTable("nope".into())
    );
    assert!(matches!(
        err("INSERT INTO flights (nope) VALUES (1)"),
        Error::UndefinedColumn(_)
    ));
    assert!(matches!(
        err("INSERT INTO flights (delay) VALUES (true)"),
        Error::DatatypeMismatch(_)
    ));
}

#[test]
fn copy() {
    let Plan::CopyFrom(c) = plan("COPY flights FROM STDIN").unwrap() else {
        panic!()
    };
    assert_eq!(c.target_columns, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(c.options, CopyOptions::defaults(CopyFormat::Text));
    let Plan::CopyFrom(c) = plan(
        "COPY flights (ts, delay) FROM STDIN WITH (FORMAT csv, HEADER, DELIMITER '|', NULL 'NA')",
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(c.target_columns, vec![0, 1]);
    assert_eq!(
        c.options,
        CopyOptions {
            header: true,
            delimiter: b'|',
            null: "NA".into(),
            ..CopyOptions::defaults(CopyFormat::Csv)
        }
    );
    let Plan::CopyFrom(c) = plan("COPY flights FROM STDIN WITH CSV HEADER").unwrap() else {
        panic!()
    };
    assert_eq!(
        c.options,
        CopyOptions {
            header: true,
            ..CopyOptions::defaults(CopyFormat::Csv)
        }
    );
    let Plan::CopyFrom(c) =
        plan("COPY flights FROM STDIN (FORMAT csv, QUOTE '''', ESCAPE '\\')").unwrap()
    else {
        panic!()
    };
    assert_eq!((c.options.quote, c.options.escape), (b'\'', b'\\'));
    let Plan::CopyFrom(c) = plan("COPY flights FROM STDIN (FORMAT binary)").unwrap() else {
        panic!()
    };
    assert_eq!(c.options.format, CopyFormat::Binary);
    assert_eq!(
        err("COPY flights FROM STDIN (FORMAT binary, HEADER)"),
        Error::FeatureNotSupported("cannot specify HEADER in BINARY mode".into())
    );
    // PostgreSQL 15's checks, in its order, with its SQLSTATEs and words.
    for (sql, state, message) in [
        ("(DELIMITER ';;')", "0A000", "COPY delimiter must be a single one-byte character"),
        ("(DELIMITER 'é')", "0A000", "COPY delimiter must be a single one-byte character"),
        ("(DELIMITER '')", "0A000", "COPY delimiter must be a single one-byte character"),
        ("(DELIMITER E'\\n')", "22023", "COPY delimiter cannot be newline or carriage return"),
        ("(NULL E'a\\rb')", "22023", "COPY null representation cannot use newline or carriage return"),
        ("(DELIMITER 'a')", "22023", "COPY delimiter cannot be \"a\""),
        ("(DELIMITER '1')", "22023", "COPY delimiter cannot be \"1\""),
        ("(DELIMITER '\\')", "22023", "COPY delimiter cannot be \"\\\""),
        ("(DELIMITER '.')", "22023", "COPY delimiter cannot be \".\""),
        ("(DELIMITER 'N')", "0A000", "COPY delimiter must not appear in the NULL specification"),
        ("(FORMAT csv, DELIMITER '\"')", "22023", "COPY delimiter and quote must be different"),
        ("(FORMAT csv, QUOTE ',')", "22023", "COPY delimiter and quote must be different"),
        ("(FORMAT csv, QUOTE 'ab')", "0A000", "COPY quote must be a single one-byte character"),
        ("(FORMAT csv, ESCAPE '')", "0A000", "COPY escape must be a single one-byte character"),
        ("(QUOTE '\"')", "0A000", "COPY quote available only in CSV mode"),
        ("(ESCAPE '\"')", "0A000", "COPY escape available only in CSV mode"),
        ("(FORMAT binary, QUOTE '\"')", "0A000", "COPY quote available only in CSV mode"),
        ("(FORMAT binary, DELIMITER ',')", "42601", "cannot specify DELIMITER in BINARY mode"),
        ("(FORMAT binary, NULL 'x')", "42601", "cannot specify NULL in BINARY mode"),
        ("(NULL 'a\tb')", "0A000", "COPY delimiter must not appear in the NULL specification"),
        ("(FORMAT csv, NULL '\"x\"')", "0A000", "CSV quote character must not appear in the NULL specification"),
        ("(FORMAT csv, FORMAT text)", "42601", "conflicting or redundant options"),
        ("(NULL 'x', NULL 'y')", "42601", "conflicting or redundant options"),
        ("(FORMAT xml)", "22023", "COPY format \"xml\" not recognized"),
        ("(HEADER 'yes')", "42601", "header requires a Boolean value or \"match\""),
        ("(FREEZE maybe)", "42601", "freeze requires a Boolean value"),
        ("(BOGUS 1)", "42601", "option \"bogus\" not recognized"),
        ("(ENCODING 'bogus')", "22023", "argument to option \"encoding\" must be a valid encoding name"),
        ("(FREEZE)", "55000", "cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction"),
        ("(FORCE_NOT_NULL (delay))", "0A000", "COPY force not null available only in CSV mode"),
        ("(FORMAT csv, FORCE_QUOTE *)", "0A000", "COPY force quote only available using COPY TO"),
        ("(FORMAT csv, FORCE_NULL (nope))", "42703", "column \"nope\" of relation \"flights\" does not exist"),
        ("WITH CSV DELIMITER ';' QUOTE ';'", "22023", "COPY delimiter and quote must be different"),
        ("WITH OIDS", "42601", "syntax error at or near \"OIDS\""),
    ] {
        let e = err(&format!("COPY flights FROM STDIN {sql}"));
        assert_eq!(
            (crate::server::sqlstate(&e), e.to_string().as_str()),
            (state, message),
            "{sql}"
        );
    }
    // Accepted as PostgreSQL accepts them.
    for sql in [
        "(HEADER match, FORMAT csv)",
        "(HEADER 1)",
        "(HEADER off)",
        "(\"format\" 'csv', NULL 1)",
        "(FORMAT csv, QUOTE 1)",
        "(ENCODING 'UTF-8', FREEZE false)",
        "WITH CSV NULL 'x' QUOTE '\"'",
        "WITH CSV DELIMITER ';' QUOTE '\"'",
        "WITH CSV HEADER ENCODING 'UTF8'",
        "DELIMITER AS '|' NULL AS ''",
        "(FORMAT csv, FORCE_NOT_NULL (delay, origin), FORCE_NULL (ts))",
        "CSV FORCE NOT NULL delay, origin",
    ] {
        assert!(
            matches!(
                plan(&format!("COPY flights FROM STDIN {sql}")),
                Ok(Plan::CopyFrom(_))
            ),
            "{sql}: {:?}",
            plan(&format!("COPY flights FROM STDIN {sql}"))
        );
    }
    let Plan::CopyFrom(c) = plan(
        "COPY flights (origin, delay) FROM STDIN (FORMAT csv, FORCE_NOT_NULL (delay), HEADER MATCH)",
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(c.options.force_not_null, vec![1]);
    assert!(c.options.header && c.options.header_match);
    assert_eq!(
        err("COPY flights (origin) FROM STDIN (FORMAT csv, FORCE_NULL (delay))"),
        Error::InvalidColumnReference("FORCE_NULL column \"delay\" not referenced by COPY".into())
    );
    assert_eq!(
        err("COPY (SELECT 1) TO STDOUT (HEADER match)"),
        Error::FeatureNotSupported("cannot use \"match\" with HEADER in COPY TO".into())
    );
    assert!(matches!(
        err("COPY flights FROM '/etc/passwd'"),
        Error::FeatureNotSupported(_)
    ));
    // LIVE, alone or beside other options, with or without a boolean.
    for (sql, live, format) in [
        (
            "COPY flights FROM STDIN WITH (LIVE)",
            true,
            CopyFormat::Text,
        ),
        (
            "COPY flights FROM STDIN (FORMAT csv, LIVE)",
            true,
            CopyFormat::Csv,
        ),
        (
            "COPY flights FROM STDIN (LIVE true, FORMAT csv)",
            true,
            CopyFormat::Csv,
        ),
        (
            "COPY flights FROM STDIN (FORMAT csv, LIVE off, HEADER)",
            false,
            CopyFormat::Csv,
        ),
        (
            "COPY flights FROM STDIN (FORMAT csv, LIVE '1')",
            true,
            CopyFormat::Csv,
        ),
        (
            "COPY flights FROM STDIN (FORMAT csv)",
            false,
            CopyFormat::Csv,
        ),
    ] {
        let Plan::CopyFrom(c) = plan(sql).unwrap() else {
            panic!("{sql}")
        };
        assert_eq!((c.options.live, c.options.format), (live, format), "{sql}");
    }
    assert!(matches!(
        err("COPY flights FROM STDIN (FORMAT csv, LIVE maybe)"),
        Error::Syntax(_)
    ));
    assert!(matches!(
        err("COPY (SELECT count(*) FROM flights [RANGE BY '1 minute']) TO STDOUT (LIVE)"),
        Error::Syntax(_)
    ));
    let Plan::CopyTo { query, options } = plan("COPY (SELECT count(*) FROM flights [RANGE BY '1 minute']) TO STDOUT WITH (FORMAT csv, HEADER)").unwrap() else { panic!() };
    assert_eq!(query.windows.len(), 1);
    assert!(options.header && options.format == CopyFormat::Csv);
    let ps = parse_all("COPY flights FROM STDIN; SELECT 1").unwrap();
    assert!(matches!(
        bind(&ps[1], &Schema, &[]).unwrap(),
        Plan::Query(_)
    ));
}

#[test]
fn declare_explain_advance() {
    let Plan::Declare { cursor, query, .. } =
        plan("DECLARE c CURSOR FOR SELECT count(*) FROM flights [RANGE BY '1 minute']").unwrap()
    else {
        panic!()
    };
    assert_eq!(cursor, "c");
    assert_eq!(query.windows.len(), 1);
    let Plan::Explain { query, options } = plan("EXPLAIN (FORMAT DOT, EVENT_RATE '1 per minute') SELECT sum(delay) FROM flights [RANGE BY '10 minutes'] [RANGE BY '20 minutes']").unwrap() else { panic!() };
    assert_eq!(query.windows.len(), 2);
    assert_eq!(options.format, ExplainFormat::Dot);
    assert!((options.event_rate_per_sec.unwrap() - 1.0 / 60.0).abs() < 1e-12);
    let Plan::Explain { options, .. } = plan("EXPLAIN ANALYZE SELECT 1").unwrap() else {
        panic!()
    };
    assert!(options.analyze);
    assert!(matches!(
        err("EXPLAIN (FORMAT xml) SELECT 1"),
        Error::InvalidParameterValue(_)
    ));
    assert!(matches!(
        err("EXPLAIN (EVENT_RATE 'lots') SELECT 1"),
        Error::InvalidParameterValue(_)
    ));
    assert_eq!(
        plan("SELECT tcq_advance('flights', '2001-01-01 01:00')").unwrap(),
        Plan::Advance {
            stream: Expr::Literal(Value::Text("flights".into())),
            time_expr: Expr::Literal(Value::Timestamp(978_310_800_000_000)),
            param_types: vec![],
            result_type: DataType::Timestamp,
        }
    );
    let Plan::Advance { param_types, .. } = plan("SELECT tcq_advance($1, $2)").unwrap() else {
        panic!()
    };
    assert_eq!(param_types, vec![DataType::Text, DataType::Text]);
    let Plan::SessionCall {
        func,
        column,
        param_types,
        ..
    } = plan("SELECT pg_try_advisory_lock($1, 2) AS got").unwrap()
    else {
        panic!()
    };
    assert_eq!(func, SessionFunc::TryAdvisoryLock);
    assert_eq!(column, Column::new("got", DataType::Bool));
    assert_eq!(param_types, vec![DataType::Int4]);
    assert!(matches!(
        err("SELECT 1 + pg_advisory_lock(1)"),
        Error::FeatureNotSupported(_)
    ));
    assert!(matches!(
        err("SELECT pg_advisory_lock(1, 2, 3)"),
        Error::UndefinedFunction(_)
    ));
    assert_eq!(
        plan("ROLLBACK TO SAVEPOINT a").unwrap(),
        Plan::Savepoint(SavepointOp::RollbackTo("a".into()))
    );
    assert_eq!(
        plan("UNLISTEN *").unwrap(),
        Plan::Unlisten { channel: None }
    );
    assert_eq!(
        plan("NOTIFY Jobs, 'x'").unwrap(),
        Plan::Notify {
            channel: "jobs".into(),
            payload: "x".into()
        }
    );
    assert_eq!(
        err("SELECT tcq_advance('nope', '2001-01-01')"),
        Error::UndefinedTable("nope".into())
    );
}

#[cfg(test)]
mod edge_tests {
    use super::super::*;
    use super::*;
    use crate::sql::parse::parse_all;

    #[test]
    fn window_after_alias_or_name() {
        assert_eq!(
            query("SELECT count(*) FROM flights [RANGE BY '1 minute'] f")
                .windows
                .len(),
            1
        );
        assert_eq!(
            query("SELECT count(*) FROM flights AS f [RANGE BY '1 minute']")
                .windows
                .len(),
            1
        );
    }

    #[test]
    fn varchar_compares_as_text() {
        let q = query("SELECT * FROM flights WHERE code = 'SFOX'");
        assert_eq!(
            q.filter,
            Some(Expr::Binary {
                op: BinaryOp::Eq,
                left: Box::new(Expr::Column(5)),
                right: Box::new(Expr::Literal(Value::Text("SFOX".into())))
            })
        );
        let Plan::Insert(i) = plan("INSERT INTO flights (code) VALUES ($1)").unwrap() else {
            panic!()
        };
        assert_eq!(
            i.rows[0][0],
            Expr::Cast {
                expr: Box::new(Expr::Param(0)),
                to: DataType::Varchar(Some(3))
            }
        );
        assert_eq!(i.param_types, vec![DataType::Varchar(Some(3))]);
        let p = parse_all("INSERT INTO flights (ts) VALUES ($1)").unwrap();
        let Plan::Insert(i) = bind(&p[0], &Schema, &[Some(DataType::Varchar(None))]).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            i.rows[0][0],
            Expr::Cast {
                expr: Box::new(Expr::Param(0)),
                to: DataType::Timestamp
            }
        );
    }

    #[test]
    fn statements_clients_send_bind() {
        for sql in [
            "SET extra_float_digits = 3",
            "SET application_name = 'PostgreSQL JDBC Driver'",
            "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED",
            "SHOW TRANSACTION ISOLATION LEVEL",
            "SELECT version()",
            "SELECT pg_catalog.version()",
            "SELECT current_schema(), current_database(), current_user, session_user",
            "SELECT current_setting('server_version_num')::int",
            "select 1",
            "COPY flights FROM STDIN WITH (FORMAT 'csv')",
            "COPY flights FROM STDIN WITH (FORMAT csv, HEADER true, DELIMITER E'\\t')",
            "COPY flights FROM STDIN CSV",
            "COPY flights FROM STDIN WITH DELIMITER ',' NULL AS ''",
            "COPY (SELECT * FROM flights) TO STDOUT",
            "BEGIN READ ONLY",
            "START TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "COMMIT AND NO CHAIN",
            "SELECT count(*) AS n, wtime(*) AS t FROM flights [RANGE BY '1 minute' SLIDE BY '30 seconds'] WHERE origin IN ('SFO', 'LAX') AND delay IS NOT NULL",
            "SELECT origin, stddev_pop(speed), var_samp(delay), variance(distance) FROM flights [RANGE BY '1 hour'] GROUP BY origin ORDER BY origin NULLS LAST",
            "SELECT * FROM flights LIMIT ALL",
            "SELECT TIMESTAMP '2001-01-01 00:00' + INTERVAL '1 hour'",
            "SELECT now() - INTERVAL '5 minutes' < now()",
            "SELECT '2001-01-01'::timestamp AT TIME ZONE 'UTC' IS NULL",
            "SELECT ts AT TIME ZONE 'UTC', now() AT TIME ZONE 'utc' FROM flights",
            "SELECT ts AT TIME ZONE 'Europe/Paris' FROM flights",
        ] {
            let r = plan(sql);
            assert!(r.is_ok(), "{sql}: {r:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, .. Default::default() })]

        /// No text, however garbled, panics the parser, the binder or the value inputs.
        #[test]
        fn no_input_panics(text in "[ -~]{0,60}", stem in 0usize..8) {
            let stems = [
                "SELECT ", "SELECT count(*) FROM flights [RANGE BY '", "INSERT INTO flights VALUES (",
                "CREATE STREAM s (", "COPY flights FROM STDIN WITH (", "EXPLAIN (", "FETCH ", "SET x = ",
            ];
            let sql = format!("{}{}", stems[stem], text);
            if let Ok(stmts) = crate::sql::parse::parse_all(&sql) {
                for st in &stmts {
                    let _ = bind(st, &Schema, &[]);
                }
            }
            for ty in [DataType::Bool, DataType::Int2, DataType::Int4, DataType::Int8, DataType::Float4, DataType::Float8,
                       DataType::Numeric, DataType::Varchar(Some(3)), DataType::Timestamp, DataType::TimestampTz, DataType::Interval] {
                let _ = parse_value(&text, ty);
            }
        }
    }

    fn expr_strategy() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just("0".to_string()),
            Just("1".to_string()),
            Just("-1".to_string()),
            Just("2147483647".to_string()),
            Just("(-2147483648)".to_string()),
            Just("9223372036854775807".to_string()),
            Just("1.5".to_string()),
            Just("1e308".to_string()),
            Just("'abc'".to_string()),
            Just("'2001-01-01'".to_string()),
            Just("'1 hour'".to_string()),
            Just("NULL".to_string()),
            Just("true".to_string()),
            Just("32767::int2".to_string()),
            Just("'NaN'::float8".to_string()),
            Just("'Infinity'::float4".to_string()),
            Just("now()".to_string()),
            Just("TIMESTAMP '294246-01-01'".to_string()),
            Just("INTERVAL '2147483647 days'".to_string()),
            Just("99999999999999999999999999.9::numeric".to_string()),
        ];
        leaf.prop_recursive(4, 24, 3, |inner| {
            let casts = [
                "int2",
                "int4",
                "int8",
                "float4",
                "float8",
                "numeric",
                "text",
                "interval",
                "timestamp",
                "timestamptz",
                "boolean",
                "varchar(2)",
            ];
            let ops = ["+", "-", "*", "/", "%", "||", "=", "<", "AND", "OR"];
            let funcs = [
                "abs",
                "round",
                "floor",
                "ceil",
                "sqrt",
                "lower",
                "length",
                "to_timestamp",
                "coalesce",
                "greatest",
            ];
            prop_oneof![
                (
                    inner.clone(),
                    proptest::sample::select(ops.to_vec()),
                    inner.clone()
                )
                    .prop_map(|(a, o, b)| format!("({a} {o} {b})")),
                (inner.clone(), proptest::sample::select(casts.to_vec()))
                    .prop_map(|(a, c)| format!("({a})::{c}")),
                (proptest::sample::select(funcs.to_vec()), inner.clone())
                    .prop_map(|(f, a)| format!("{f}({a})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("round({a}, {b})")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(a, b, c)| format!("substr({a}, {b}, {c})")),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| format!("date_trunc('hour', {a} + {b})")),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| format!("extract(epoch FROM {a} - {b})")),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| format!("CASE WHEN {a} THEN {b} END")),
                (inner.clone(), inner).prop_map(|(a, b)| format!("{a} IN ({b}, 1)")),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2048, .. Default::default() })]

        /// Constant expressions bind and evaluate to a value or a clean error, never a panic.
        #[test]
        fn constant_expressions_never_panic(e in expr_strategy()) {
            let sql = format!("SELECT {e}");
            if let Ok(Plan::Query(q)) = plan(&sql) {
                let ctx = crate::expr::EvalContext::new(&[], &[], None);
                for p in &q.projection {
                    if let Ok(v) = crate::expr::eval(p, &ctx) {
                        let _ = v.to_text();
                    }
                }
            }
        }
    }
}

#[test]
fn derived_streams_and_sinks_get_an_event_time_column() {
    // A windowed query without wtime(*): `wtime` is added as the TIMESTAMPCOLUMN.
    let Plan::CreateDerived(c) = plan(
        "CREATE STREAM d AS SELECT origin, count(*) FROM flights [RANGE BY '1 hour'] GROUP BY origin",
    )
    .unwrap() else {
        panic!()
    };
    let names: Vec<&str> = c.stream.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["origin", "count", "wtime"]);
    assert_eq!(c.stream.timestamp_column, Some(2));
    assert_eq!(c.stream.columns[2].data_type, DataType::Timestamp);
    assert_eq!((c.query.visible, c.query.key_columns.clone()), (2, vec![0]));
    assert_eq!(c.query.inputs, ["flights"]);
    // Selected, it is used where it is.
    let Plan::CreateDerived(c) =
        plan("CREATE STREAM d AS SELECT wtime(*) AS w, count(*) FROM network.tcpdump [RANGE BY '1 hour']")
            .unwrap()
    else {
        panic!()
    };
    assert_eq!(c.stream.timestamp_column, Some(0));
    assert_eq!(c.stream.columns[0].data_type, DataType::TimestampTz);
    // Without a window: the stream's TIMESTAMPCOLUMN, added when not selected.
    let Plan::CreateSink(k) = plan(
        "CREATE SINK k AS SELECT origin FROM flights WHERE delay > 60 WITH (connector = 'file', path = '/tmp/k')",
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!((k.query.visible, k.query.time_column), (1, Some(1)));
    assert_eq!(k.query.query.columns[1].name, "ts");
    // A stream stamped on arrival has none.
    let Plan::CreateSink(k) =
        plan("CREATE SINK k FROM clicks WITH (connector = 'file', path = '/tmp/k')").unwrap()
    else {
        panic!()
    };
    assert_eq!(k.query.time_column, None);
    let state = |sql: &str| crate::server::sqlstate(&plan(sql).unwrap_err());
    assert_eq!(state("CREATE STREAM d AS SELECT 1"), "0A000");
    assert_eq!(
        state("CREATE STREAM d AS SELECT origin FROM flights LIMIT 3"),
        "0A000"
    );
    assert_eq!(
        state("CREATE STREAM d AS SELECT count(*) AS wtime FROM flights [RANGE BY '1 hour']"),
        "42701"
    );
    assert_eq!(
        state("CREATE STREAM d WITH (connector = 'kafka') AS SELECT origin FROM flights"),
        "0A000"
    );
    assert_eq!(
        state("CREATE STREAM d WITH (colour = 'red') AS SELECT origin FROM flights"),
        "22023"
    );
    assert_eq!(
        state("CREATE STREAM d WITH (retention = '1 day') AS SELECT origin FROM flights"),
        "22023"
    );
    assert_eq!(state("CREATE STREAM d AS SELECT x FROM nowhere"), "42P01");
    assert_eq!(
        state("CREATE SINK k AS SELECT origin FROM flights"),
        "22023"
    );
    assert_eq!(
        state("CREATE SINK k AS SELECT origin FROM flights WITH (connector = 'smtp')"),
        "42704"
    );
}

/// `x COLLATE c` is its operand (text compares by code point); a non-collatable operand
/// is 42804, as in PostgreSQL.
#[test]
fn collate_keeps_text_and_rejects_other_types() {
    let q = query("SELECT origin COLLATE \"C\", 'a' COLLATE \"C\" FROM flights");
    assert_eq!(q.columns[0].data_type, DataType::Text);
    assert_eq!(q.columns[1].data_type, DataType::Text);
    assert!(matches!(
        err("SELECT delay COLLATE \"C\" FROM flights"),
        Error::DatatypeMismatch(m) if m == "collations are not supported by type integer"
    ));
    let q = query("SELECT max(origin COLLATE \"C\") FROM flights");
    assert_eq!(q.columns[0].data_type, DataType::Text);
}

/// TRIM calls btrim/ltrim/rtrim (and is named after it); LIKE ... ESCAPE is boolean;
/// a non-text operand is 42883 with PostgreSQL's message.
#[test]
fn trim_and_like_escape_are_typed_as_postgresql() {
    let q = query(
        "SELECT trim(both 'x' from origin), trim(leading from origin), \
         origin LIKE 'a#%' ESCAPE '#' FROM flights",
    );
    let names: Vec<&str> = q.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["btrim", "ltrim", "?column?"]);
    let types: Vec<DataType> = q.columns.iter().map(|c| c.data_type).collect();
    assert_eq!(types, [DataType::Text, DataType::Text, DataType::Bool]);
    let q = query("SELECT max(trim(trailing origin, 'x')) FROM flights");
    assert_eq!(q.columns[0].data_type, DataType::Text);
    assert!(matches!(
        err("SELECT trim(delay) FROM flights"),
        Error::UndefinedFunction(m) if m == "function btrim(integer) does not exist"
    ));
    assert!(matches!(
        err("SELECT origin LIKE 'a' ESCAPE 1 FROM flights"),
        Error::UndefinedFunction(m) if m == "function like_escape(unknown, integer) does not exist"
    ));
}

/// `x op ANY|ALL (ARRAY[...])` is boolean, its elements typed as PostgreSQL types the
/// array (unknowns as text, 42P18 for none); an array value is not supported here.
#[test]
fn any_all_over_array_constructors() {
    let q = query(
        "SELECT delay = ANY(ARRAY[1, 2.5]), origin <> ALL(ARRAY['a', NULL]), \
         delay > SOME(ARRAY[distance, 2]) FROM flights",
    );
    assert!(q.columns.iter().all(|c| c.data_type == DataType::Bool));
    assert!(matches!(
        err("SELECT delay = ANY(ARRAY['1']) FROM flights"),
        Error::UndefinedFunction(m) if m == "operator does not exist: integer = text"
    ));
    assert!(matches!(
        err("SELECT delay = ANY(ARRAY[]) FROM flights"),
        Error::IndeterminateDatatype(_)
    ));
    assert!(matches!(
        err("SELECT delay = ANY(ARRAY[1, 'a'::text]) FROM flights"),
        Error::DatatypeMismatch(m) if m == "ARRAY types integer and text cannot be matched"
    ));
    assert!(matches!(
        err("SELECT delay = ANY(origin) FROM flights"),
        Error::FeatureNotSupported(_)
    ));
}

/// A nested ARRAY[...] is one multidimensional array: ANY and ALL compare `x` with its
/// scalars, so an array `x` meets no operator (42883, as PostgreSQL 15 answers
/// `ARRAY[1] = ANY(ARRAY[ARRAY[1]])`), whatever the comparison; sub-arrays of mixed
/// dimensions are 42804 and of different lengths 2202E.
#[test]
fn any_all_over_nested_array_constructors() {
    let q = query(
        "SELECT delay = ANY(ARRAY[ARRAY[1, 2], ARRAY[3, delay]]), \
         delay < ALL((ARRAY[ARRAY[1], ARRAY[2.5]])) FROM flights",
    );
    assert!(q.columns.iter().all(|c| c.data_type == DataType::Bool));
    for (sql, message) in [
        (
            "SELECT ARRAY[delay] = ANY(ARRAY[ARRAY[1]]) FROM flights",
            "integer[] = integer",
        ),
        (
            "SELECT ARRAY[1] = ANY(ARRAY[1]) FROM flights",
            "integer[] = integer",
        ),
        (
            "SELECT ARRAY[delay] <> ALL(ARRAY[ARRAY[1]]) FROM flights",
            "integer[] <> integer",
        ),
        (
            "SELECT ARRAY[1.5] < ANY(ARRAY[ARRAY[1]]) FROM flights",
            "numeric[] < integer",
        ),
        (
            "SELECT ARRAY['a'] >= ALL(ARRAY[ARRAY['b']]) FROM flights",
            "text[] >= text",
        ),
        (
            "SELECT delay = ANY(ARRAY[ARRAY['a']]) FROM flights",
            "integer = text",
        ),
    ] {
        assert!(
            matches!(
                err(sql),
                Error::UndefinedFunction(ref m) if *m == format!("operator does not exist: {message}")
            ),
            "{sql}: {:?}",
            err(sql)
        );
    }
    assert!(matches!(
        err("SELECT delay = ANY(ARRAY[ARRAY[1], 2]) FROM flights"),
        Error::DatatypeMismatch(m) if m == "ARRAY types integer[] and integer cannot be matched"
    ));
    assert!(matches!(
        err("SELECT delay = ANY(ARRAY[2, ARRAY[1]]) FROM flights"),
        Error::DatatypeMismatch(m) if m == "ARRAY types integer and integer[] cannot be matched"
    ));
    assert!(matches!(
        err("SELECT delay = ANY(ARRAY[ARRAY[1], ARRAY[2, 3]]) FROM flights"),
        Error::ArraySubscript(_)
    ));
    assert!(matches!(
        err("SELECT delay = ANY(ARRAY[ARRAY[]]) FROM flights"),
        Error::IndeterminateDatatype(_)
    ));
}
