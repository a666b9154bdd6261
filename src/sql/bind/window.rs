//! Window clauses (`[RANGE BY ... SLIDE BY ... START AT ... SLACK ...]`) and the other
//! interval options of statements (SLACK, retention, FETCH timeout).

use super::*;

/// A FETCH timeout as written (an interval of fixed length, `'1s'`, `'250 milliseconds'`)
/// in microseconds. Errors: 22023 for a negative or month-based one, 22007 for bad text.
pub(super) fn fetch_timeout(text: &str) -> Result<i64> {
    let iv = crate::time::parse_interval(text)?;
    let us = crate::time::fixed_length_us(&iv).map_err(|_| {
        Error::InvalidParameterValue(format!(
            "FETCH timeout \"{text}\" has no fixed length: give it in days or smaller units"
        ))
    })?;
    if us < 0 {
        return Err(Error::InvalidParameterValue(format!(
            "FETCH timeout \"{text}\" is negative"
        )));
    }
    Ok(us)
}

/// Check a window clause's values: fixed-length positive RANGE and SLIDE, START AT. An
/// error is reported at the value it is about, when the parser recorded where that is.
pub(super) fn window_spec(
    w: &RawWindow,
    time_type: DataType,
    position: impl Fn(sqlparser::tokenizer::Location) -> u32,
) -> Result<WindowSpec> {
    let at = |i: usize| {
        move |e: Error| match w.value_at[i] {
            Some(loc) if e.position().is_none() => e.at(position(loc)),
            _ => e,
        }
    };
    window_values(w, time_type).map_err(|(i, e)| at(i)(e))
}

/// [`window_spec`]'s checks; an error comes with the index of its value in
/// [`RawWindow::value_at`].
pub(super) fn window_values(
    w: &RawWindow,
    time_type: DataType,
) -> std::result::Result<WindowSpec, (usize, Error)> {
    let length = |text: &str, what: &str| -> Result<i64> {
        let iv = crate::time::parse_interval(text)?;
        if iv.months != 0 {
            return Err(Error::InvalidParameterValue(format!(
                "{what} '{text}' has no fixed length: months and years vary in length; use days, hours, minutes or seconds"
            )));
        }
        let us = crate::time::fixed_length_us(&iv)?;
        if us <= 0 {
            return Err(Error::InvalidParameterValue(format!(
                "{what} must be positive, not '{text}'"
            )));
        }
        Ok(us)
    };
    let range_us = length(&w.range, "RANGE BY").map_err(|e| (0, e))?;
    let slide_us = match &w.slide {
        Some(s) => length(s, "SLIDE BY").map_err(|e| (1, e))?,
        None => range_us,
    };
    let start = match &w.start {
        None => StartSpec::Default,
        Some(s) if s.trim().eq_ignore_ascii_case("epoch") => StartSpec::Epoch,
        Some(s) => StartSpec::At(
            if time_type == DataType::Timestamp {
                crate::time::parse_timestamp_naive(s)
            } else {
                crate::time::parse_timestamp(s)
            }
            .map_err(|e| (2, e))?,
        ),
    };
    let slack_us = w
        .slack
        .as_deref()
        .map(slack_length)
        .transpose()
        .map_err(|e| (3, e))?;
    Ok(WindowSpec {
        range_us,
        slide_us,
        start,
        slack_us,
    })
}

/// A SLACK interval: fixed length, not negative. Errors: 22023.
pub(super) fn slack_length(text: &str) -> Result<i64> {
    let iv = crate::time::parse_interval(text)?;
    if iv.months != 0 {
        return Err(Error::InvalidParameterValue(format!(
            "SLACK '{text}' has no fixed length: months and years vary in length; use days, hours, minutes or seconds"
        )));
    }
    let us = crate::time::fixed_length_us(&iv)?;
    if us < 0 {
        return Err(Error::InvalidParameterValue(format!(
            "SLACK must not be negative, not '{text}'"
        )));
    }
    Ok(us)
}

/// A retention interval: fixed length and positive. Errors: 22023.
pub(super) fn retention_length(text: &str) -> Result<i64> {
    let iv = crate::time::parse_interval(text)?;
    if iv.months != 0 {
        return Err(Error::InvalidParameterValue(format!(
            "retention '{text}' has no fixed length: months and years vary in length; use days or hours"
        )));
    }
    let us = crate::time::fixed_length_us(&iv)?;
    if us <= 0 {
        return Err(Error::InvalidParameterValue(format!(
            "retention must be positive, not '{text}'"
        )));
    }
    Ok(us)
}
