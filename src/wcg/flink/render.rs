//! Flink SQL text for tcq's values: identifiers, types, interval and timestamp literals,
//! and bound expressions (WHERE, group keys, aggregate arguments, select lists, HAVING).

use super::{refuse, MS};
use crate::error::Result;
use crate::sql::{BinaryOp, Expr, ScalarFunc, UnaryOp, WindowMeta};
use crate::types::{DataType, Value};

/// A Flink identifier, always quoted (Flink reserves many common words).
pub(crate) fn ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

pub(crate) fn flink_type(t: &DataType) -> Result<&'static str> {
    Ok(match t {
        DataType::Bool => "BOOLEAN",
        DataType::Int2 => "SMALLINT",
        DataType::Int4 => "INT",
        DataType::Int8 => "BIGINT",
        DataType::Float4 => "FLOAT",
        DataType::Float8 => "DOUBLE",
        DataType::Numeric => "DECIMAL(38, 18)",
        DataType::Text | DataType::Varchar(_) => "STRING",
        DataType::Bpchar(_) => return refuse("character(n) values have no exact Flink type"),
        DataType::Date => "DATE",
        DataType::Time => "TIME(6)",
        DataType::Timestamp => "TIMESTAMP(3)",
        DataType::TimestampTz => "TIMESTAMP_LTZ(3)",
        DataType::Interval => return refuse("interval values have no exact Flink type"),
    })
}

/// A Flink interval literal for `us` microseconds (a whole number of milliseconds): the
/// largest of DAY, HOUR, MINUTE, SECOND that divides it with fewer than 100 units (the
/// default leading precision), else seconds with milliseconds below 100 s, else
/// `DAY TO SECOND(3)`.
///
/// Errors: 0A000 when `us` is not a positive whole number of milliseconds.
pub(crate) fn interval(us: i64) -> Result<String> {
    if us <= 0 || us % MS != 0 {
        return refuse(format!("the interval of {us} microseconds"));
    }
    const UNITS: [(i64, &str); 4] = [
        (86_400_000_000, "DAY"),
        (3_600_000_000, "HOUR"),
        (60_000_000, "MINUTE"),
        (1_000_000, "SECOND"),
    ];
    for (unit, name) in UNITS {
        if us % unit == 0 && us / unit < 100 {
            return Ok(format!("INTERVAL '{}' {name}", us / unit));
        }
    }
    if us < 100_000_000 {
        return Ok(format!(
            "INTERVAL '{}.{:03}' SECOND",
            us / 1_000_000,
            us % 1_000_000 / MS
        ));
    }
    let ms = us / MS;
    let (days, rest) = (ms / 86_400_000, ms % 86_400_000);
    let text = format!(
        "{days} {:02}:{:02}:{:02}.{:03}",
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    );
    let lead = if days >= 100 { "DAY(3)" } else { "DAY" };
    if days >= 1000 {
        return refuse("an interval of 1000 days or more");
    }
    Ok(format!("INTERVAL '{text}' {lead} TO SECOND(3)"))
}

pub(crate) fn timestamp(us: i64) -> String {
    format!("TIMESTAMP '{}'", crate::time::format_timestamp(us))
}

/// Render a bound expression as Flink SQL; `col` renders a column of the row in context,
/// `meta` a window function.
pub(crate) fn render(
    e: &Expr,
    col: &dyn Fn(usize) -> Result<String>,
    meta: &dyn Fn(WindowMeta) -> Result<String>,
) -> Result<String> {
    let r = |x: &Expr| render(x, col, meta);
    Ok(match e {
        Expr::Column(i) => col(*i)?,
        Expr::Literal(v) => literal(v)?,
        Expr::Param(_) => return refuse("parameters ($n); explain the query with its values"),
        Expr::Unary { op, expr } => match op {
            UnaryOp::Neg => format!("(- {})", r(expr)?),
            UnaryOp::Not => format!("(NOT {})", r(expr)?),
        },
        Expr::Binary { op, left, right } => {
            let (a, b) = (r(left)?, r(right)?);
            let sym = match op {
                BinaryOp::Mod => return Ok(format!("MOD({a}, {b})")),
                BinaryOp::Add => "+",
                BinaryOp::Sub => "-",
                BinaryOp::Mul => "*",
                BinaryOp::Div => "/",
                BinaryOp::Eq => "=",
                BinaryOp::NotEq => "<>",
                BinaryOp::Lt => "<",
                BinaryOp::LtEq => "<=",
                BinaryOp::Gt => ">",
                BinaryOp::GtEq => ">=",
                BinaryOp::And => "AND",
                BinaryOp::Or => "OR",
                BinaryOp::Concat => "||",
            };
            format!("({a} {sym} {b})")
        }
        Expr::Cast { expr, to } => format!("CAST({} AS {})", r(expr)?, flink_type(to)?),
        // A cast to numeric(p, s): ROUND to the scale, as tcq rounded such casts before it
        // checked the precision (an overflow is an error in tcq, not a row).
        Expr::Func {
            func: ScalarFunc::NumericTypmod,
            args,
        } if args.len() == 3 => format!("ROUND({}, {})", r(&args[0])?, r(&args[2])?),
        Expr::Func { func, args } => {
            let name = match func {
                ScalarFunc::Abs => "ABS",
                ScalarFunc::Round => "ROUND",
                ScalarFunc::Floor => "FLOOR",
                ScalarFunc::Ceil => "CEIL",
                ScalarFunc::Sqrt => "SQRT",
                ScalarFunc::Coalesce => "COALESCE",
                ScalarFunc::NullIf => "NULLIF",
                ScalarFunc::Greatest => "GREATEST",
                ScalarFunc::Least => "LEAST",
                ScalarFunc::Lower => "LOWER",
                ScalarFunc::Upper => "UPPER",
                ScalarFunc::Length => "CHAR_LENGTH",
                other => return refuse(format!("the function {other:?}")),
            };
            let args: Vec<String> = args.iter().map(r).collect::<Result<_>>()?;
            format!("{name}({})", args.join(", "))
        }
        Expr::Case {
            operand,
            branches,
            otherwise,
        } => {
            let mut s = "CASE".to_string();
            if let Some(o) = operand {
                s.push_str(&format!(" {}", r(o)?));
            }
            for (w, t) in branches {
                s.push_str(&format!(" WHEN {} THEN {}", r(w)?, r(t)?));
            }
            if let Some(o) = otherwise {
                s.push_str(&format!(" ELSE {}", r(o)?));
            }
            s.push_str(" END");
            s
        }
        Expr::IsNull { expr, negated } => {
            format!(
                "({} IS {}NULL)",
                r(expr)?,
                if *negated { "NOT " } else { "" }
            )
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let items: Vec<String> = list.iter().map(r).collect::<Result<_>>()?;
            format!(
                "({} {}IN ({}))",
                r(expr)?,
                if *negated { "NOT " } else { "" },
                items.join(", ")
            )
        }
        Expr::Like {
            expr,
            pattern,
            negated,
            case_insensitive,
        } => {
            let not = if *negated { "NOT " } else { "" };
            if *case_insensitive {
                format!("(LOWER({}) {not}LIKE LOWER({}))", r(expr)?, r(pattern)?)
            } else {
                format!("({} {not}LIKE {})", r(expr)?, r(pattern)?)
            }
        }
        Expr::WindowMeta(m) => meta(*m)?,
    })
}

fn literal(v: &Value) -> Result<String> {
    Ok(match v {
        Value::Null => "NULL".into(),
        Value::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
        Value::Int2(n) => format!("CAST({n} AS SMALLINT)"),
        Value::Int4(n) => n.to_string(),
        Value::Int8(n) => format!("CAST({n} AS BIGINT)"),
        Value::Float4(x) if x.is_finite() => format!("CAST({x:?} AS FLOAT)"),
        Value::Float8(x) if x.is_finite() => format!("CAST({x:?} AS DOUBLE)"),
        Value::Numeric(d) => d.to_string(),
        Value::Text(s) => format!("'{}'", s.replace('\'', "''")),
        Value::Timestamp(us) if us % MS == 0 => timestamp(*us),
        _ => return refuse(format!("the constant {v:?}")),
    })
}
