//! One JSON object to one row, in a single pass: a serde visitor walks the object's keys,
//! finds each key's column without allocating, and reads its value straight into the
//! column's type. No `serde_json::Value` tree or key map is built, which made the source
//! path allocate a map per message.
//!
//! The rules are [`super::format`]'s: a key that names a column fills it (a repeated key:
//! the last one counts), a missing key or `null` is NULL, other keys are ignored; strings
//! are read as PostgreSQL reads the column's type from text; numbers fill numeric columns
//! (and timestamp columns under an epoch `timestamp_format`), booleans boolean columns;
//! anything else is a wrong type. Of several wrong values the first in the text is told.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::format::Decoder;
use crate::types::Value;

/// Read `text`, one JSON object, into `row` (one slot per column, NULL-filled). Errors:
/// text that is no JSON object ("not a JSON object: ..."), or the first value that does
/// not fit its column (as [`Decoder::text_value`] and the wrong-type rule word it).
pub(crate) fn read_object(
    decoder: &Decoder,
    text: &[u8],
    row: &mut [Value],
) -> Result<(), super::format::BadMessage> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let mut first_wrong: Option<super::format::BadMessage> = None;
    let seed = ObjectSeed {
        decoder,
        row,
        first_wrong: &mut first_wrong,
    };
    seed.deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| format!("not a JSON object: {e}"))?;
    match first_wrong {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

struct ObjectSeed<'a> {
    decoder: &'a Decoder,
    row: &'a mut [Value],
    first_wrong: &'a mut Option<super::format::BadMessage>,
}

impl<'de> DeserializeSeed<'de> for ObjectSeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ObjectSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(column) = map.next_key_seed(KeySeed(self.decoder))? {
            let Some(c) = column else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let read = map.next_value_seed(ValueSeed {
                decoder: self.decoder,
                column: c,
            })?;
            match read {
                Ok(v) => self.row[c] = v,
                Err(e) => {
                    if self.first_wrong.is_none() {
                        *self.first_wrong = Some(e);
                    }
                }
            }
        }
        Ok(())
    }
}

/// A key: the column it names, if any.
struct KeySeed<'a>(&'a Decoder);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Option<usize>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<Option<usize>, E> {
        Ok(self.0.column_named(key))
    }
}

/// A value for column `column`: the value, or why it does not fit.
struct ValueSeed<'a> {
    decoder: &'a Decoder,
    column: usize,
}

type Read = Result<Value, super::format::BadMessage>;

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Read;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Read, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Read;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Read, E> {
        Ok(Ok(Value::Null))
    }
    fn visit_none<E: de::Error>(self) -> Result<Read, E> {
        Ok(Ok(Value::Null))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Read, E> {
        Ok(self.decoder.text_value(self.column, s))
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Read, E> {
        Ok(self.decoder.json_bool(self.column, b))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Read, E> {
        Ok(self
            .decoder
            .json_number(self.column, itoa::Buffer::new().format(n)))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Read, E> {
        Ok(self
            .decoder
            .json_number(self.column, itoa::Buffer::new().format(n)))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Read, E> {
        // As serde_json prints a number it read (finite: JSON has no other).
        let text = serde_json::Number::from_f64(n).map_or_else(|| n.to_string(), |n| n.to_string());
        Ok(self.decoder.json_number(self.column, &text))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Read, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Err(self.decoder.wrong(self.column, "array").into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Err(self.decoder.wrong(self.column, "object").into()))
    }
}
