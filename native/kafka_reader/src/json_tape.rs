//! `Doc`: one parsed JSON document as a flat tape, the representation the JSON decoder validates
//! (`jsonschema`'s `Json` trait, implemented here) and reads into Arrow.
//!
//! The lexing is `serde_json`'s (its `Deserializer` driving a `Visitor` that appends here): the
//! same grammar, escapes, UTF-8 and surrogate checks, correctly rounded doubles (`float_roundtrip`)
//! and recursion limit as a `serde_json::Value` parse. Only the storage is this module's: nodes in
//! document order in one `Vec` (a container's `end` is the index after its last descendant; an
//! object's members are key, value, key, value, ...) and every string's text in one `String`, both
//! cleared and reused from record to record. A `Value` would allocate per object, key and string
//! and hash every key into an `IndexMap`: most of the time of a record. Objects are looked up by a
//! linear scan (records have tens of keys). A key written twice is refused (a Python dict keeps
//! its first place and last value; the caller leaves that record to the Python decoder).

use std::borrow::Cow;
use std::fmt;

use jsonschema_value::types::JsonType;
use jsonschema_value::{Array, Json, JsonNumber, Node, NodeIdentity, Object};
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// A JSON number as parsed: serde_json's three kinds (an integer beyond 64 bits is a double).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    U(u64),
    I(i64),
    F(f64),
}

#[derive(Clone, Copy, Debug)]
pub enum Tape {
    Null,
    Bool(bool),
    Num(Num),
    /// start and length in `Doc::text`
    Str(u32, u32),
    Arr {
        len: u32,
        end: u32,
    },
    Obj {
        len: u32,
        end: u32,
    },
}

#[derive(Default)]
pub struct Doc {
    tape: Vec<Tape>,
    text: String,
    keys: Vec<u32>, // the keys of the objects being parsed (a stack), to refuse a repeated key
}

impl Doc {
    /// Parses `payload` (one JSON text, whitespace around it allowed) into this document.
    pub fn parse(&mut self, payload: &[u8]) -> Result<(), String> {
        self.tape.clear();
        self.text.clear();
        self.keys.clear();
        let mut de = serde_json::Deserializer::from_slice(payload);
        Build(self)
            .deserialize(&mut de)
            .map_err(|e| e.to_string())?;
        de.end().map_err(|e| e.to_string())
    }

    pub fn root(&self) -> Ref<'_> {
        Ref { doc: self, i: 0 }
    }

    fn str_at(&self, start: u32, len: u32) -> &str {
        &self.text[start as usize..(start + len) as usize]
    }

    fn push_str(&mut self, s: &str) -> Result<Tape, String> {
        let start = u32::try_from(self.text.len()).map_err(|_| "a record of 4 GiB or more")?;
        let len = u32::try_from(s.len()).map_err(|_| "a string of 4 GiB or more")?;
        self.text.push_str(s);
        Ok(Tape::Str(start, len))
    }

    fn index(&self) -> Result<u32, String> {
        u32::try_from(self.tape.len()).map_err(|_| "a record of 2^32 values or more".to_string())
    }
}

// ---- building the tape from serde_json's events ----

struct Build<'d>(&'d mut Doc);
struct Key<'d>(&'d mut Doc);

impl<'de> DeserializeSeed<'de> for Build<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Build<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.0.tape.push(Tape::Null);
        Ok(())
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<(), E> {
        self.0.tape.push(Tape::Bool(v));
        Ok(())
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.0.tape.push(Tape::Num(Num::U(v)));
        Ok(())
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        // serde_json hands non-negative integers to visit_u64, negative ones here
        self.0
            .tape
            .push(Tape::Num(if v >= 0 { Num::U(v as u64) } else { Num::I(v) }));
        Ok(())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        self.0.tape.push(Tape::Num(Num::F(v)));
        Ok(())
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        let node = self.0.push_str(v).map_err(E::custom)?;
        self.0.tape.push(node);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let doc = self.0;
        let at = doc.index().map_err(A::Error::custom)? as usize;
        doc.tape.push(Tape::Null); // the array's node, set below
        let mut len = 0u32;
        while seq.next_element_seed(Build(doc))?.is_some() {
            len += 1;
        }
        let end = doc.index().map_err(A::Error::custom)?;
        doc.tape[at] = Tape::Arr { len, end };
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let doc = self.0;
        let at = doc.index().map_err(A::Error::custom)? as usize;
        doc.tape.push(Tape::Null); // the object's node, set below
        let first_key = doc.keys.len();
        let mut len = 0u32;
        while map.next_key_seed(Key(doc))?.is_some() {
            let key = doc.keys.len() - 1;
            let Tape::Str(s, n) = doc.tape[doc.keys[key] as usize] else {
                unreachable!("keys are strings")
            };
            let name = doc.str_at(s, n);
            let repeated = doc.keys[first_key..key]
                .iter()
                .any(|k| match doc.tape[*k as usize] {
                    Tape::Str(s2, n2) => n2 == n && doc.str_at(s2, n2) == name,
                    _ => false,
                });
            if repeated {
                return Err(A::Error::custom(format!(
                    "the key {name:?} is written twice in one object"
                )));
            }
            map.next_value_seed(Build(doc))?;
            len += 1;
        }
        doc.keys.truncate(first_key);
        let end = doc.index().map_err(A::Error::custom)?;
        doc.tape[at] = Tape::Obj { len, end };
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        let doc = self.0;
        let at = doc.index().map_err(E::custom)?;
        let node = doc.push_str(v).map_err(E::custom)?;
        doc.tape.push(node);
        doc.keys.push(at);
        Ok(())
    }
}

// ---- reading the tape ----

/// A node of a document: cheap to copy.
#[derive(Clone, Copy)]
pub struct Ref<'a> {
    doc: &'a Doc,
    i: u32,
}

impl<'a> Ref<'a> {
    pub fn tape(&self) -> Tape {
        self.doc.tape[self.i as usize]
    }

    /// The index after this node and its descendants.
    fn end(&self) -> u32 {
        match self.tape() {
            Tape::Arr { end, .. } | Tape::Obj { end, .. } => end,
            _ => self.i + 1,
        }
    }

    pub fn str(&self) -> Option<&'a str> {
        match self.tape() {
            Tape::Str(s, n) => Some(self.doc.str_at(s, n)),
            _ => None,
        }
    }

    /// The members of an object, in document order.
    pub fn members(&self) -> Members<'a> {
        let len = match self.tape() {
            Tape::Obj { len, .. } => len,
            _ => 0,
        };
        Members {
            doc: self.doc,
            next: self.i + 1,
            left: len,
        }
    }

    /// The items of an array, in order.
    pub fn items(&self) -> Items<'a> {
        let len = match self.tape() {
            Tape::Arr { len, .. } => len,
            _ => 0,
        };
        Items {
            doc: self.doc,
            next: self.i + 1,
            left: len,
        }
    }

    fn to_serde(self) -> Value {
        match self.tape() {
            Tape::Null => Value::Null,
            Tape::Bool(b) => Value::Bool(b),
            Tape::Num(n) => Value::Number(number(n)),
            Tape::Str(..) => Value::String(self.str().unwrap().to_owned()),
            Tape::Arr { .. } => Value::Array(self.items().map(Ref::to_serde).collect()),
            Tape::Obj { .. } => Value::Object(
                self.members()
                    .map(|(k, v)| (k.to_owned(), v.to_serde()))
                    .collect::<Map<String, Value>>(),
            ),
        }
    }
}

fn number(n: Num) -> Number {
    match n {
        Num::U(u) => Number::from(u),
        Num::I(i) => Number::from(i),
        Num::F(f) => Number::from_f64(f).expect("serde_json parses finite doubles only"),
    }
}

pub struct Members<'a> {
    doc: &'a Doc,
    next: u32,
    left: u32,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, Ref<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let key = Ref {
            doc: self.doc,
            i: self.next,
        };
        let value = Ref {
            doc: self.doc,
            i: self.next + 1,
        };
        self.next = value.end();
        Some((key.str().expect("keys are strings"), value))
    }
}

pub struct Items<'a> {
    doc: &'a Doc,
    next: u32,
    left: u32,
}

impl<'a> Iterator for Items<'a> {
    type Item = Ref<'a>;
    fn next(&mut self) -> Option<Ref<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let item = Ref {
            doc: self.doc,
            i: self.next,
        };
        self.next = item.end();
        Some(item)
    }
}

// ---- jsonschema's view of the tape ----

/// The tape as a `jsonschema` instance representation.
pub struct TapeJson;

impl Json for TapeJson {
    type Node<'a> = Ref<'a>;
    type PreparedKey = String;
    // a lookup is a scan of the keys: a pass over the members costs no more
    const KEYS_PER_LOOKUP: usize = usize::MAX;
    type StringBuffer = Doc;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(buffer: &mut Doc, string: &str, f: impl FnOnce(Ref<'_>) -> T) -> T {
        buffer.tape.clear();
        buffer.text.clear();
        let node = buffer
            .push_str(string)
            .expect("a property name under 4 GiB");
        buffer.tape.push(node);
        f(buffer.root())
    }
}

impl JsonNumber for Num {
    fn as_u64(&self) -> Option<u64> {
        match *self {
            Num::U(u) => Some(u),
            _ => None,
        }
    }
    fn as_i64(&self) -> Option<i64> {
        match *self {
            Num::U(u) => i64::try_from(u).ok(),
            Num::I(i) => Some(i),
            Num::F(_) => None,
        }
    }
    fn as_f64(&self) -> Option<f64> {
        Some(match *self {
            Num::U(u) => u as f64,
            Num::I(i) => i as f64,
            Num::F(f) => f,
        })
    }
    fn as_str(&self) -> Cow<'_, str> {
        Cow::Owned(number(*self).to_string())
    }
    fn to_number(&self) -> Cow<'_, Number> {
        Cow::Owned(number(*self))
    }
    fn is_written_as_integer(&self) -> bool {
        !matches!(self, Num::F(_)) // as a Python int or float from orjson: by its kind
    }
}

impl<'a> Node<'a, TapeJson> for Ref<'a> {
    type Object = Ref<'a>;
    type Array = Ref<'a>;
    type Number = Num;

    fn as_object(&self) -> Option<Ref<'a>> {
        matches!(self.tape(), Tape::Obj { .. }).then_some(*self)
    }
    fn as_array(&self) -> Option<Ref<'a>> {
        matches!(self.tape(), Tape::Arr { .. }).then_some(*self)
    }
    fn as_string(&self) -> Option<Cow<'a, str>> {
        self.str().map(Cow::Borrowed)
    }
    fn as_number(&self) -> Option<Num> {
        match self.tape() {
            Tape::Num(n) => Some(n),
            _ => None,
        }
    }
    fn as_boolean(&self) -> Option<bool> {
        match self.tape() {
            Tape::Bool(b) => Some(b),
            _ => None,
        }
    }
    fn is_null(&self) -> bool {
        matches!(self.tape(), Tape::Null)
    }
    fn json_type(&self) -> JsonType {
        match self.tape() {
            Tape::Null => JsonType::Null,
            Tape::Bool(_) => JsonType::Boolean,
            Tape::Num(_) => JsonType::Number,
            Tape::Str(..) => JsonType::String,
            Tape::Arr { .. } => JsonType::Array,
            Tape::Obj { .. } => JsonType::Object,
        }
    }
    fn equals_value(&self, expected: &Value) -> bool {
        match (self.tape(), expected) {
            (Tape::Str(..), Value::String(e)) => self.str() == Some(e.as_str()),
            (Tape::Str(..), _) | (_, Value::String(_)) => false,
            _ => jsonschema_value::cmp::equal(&self.to_serde(), expected),
        }
    }
    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(self.to_serde())
    }
    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::tagged(
            std::ptr::from_ref(self.doc) as usize,
            self.i,
        ))
    }
}

impl<'a> Object<'a, TapeJson> for Ref<'a> {
    type Node = Ref<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        match self.tape() {
            Tape::Obj { len, .. } => len as usize,
            _ => 0,
        }
    }
    fn get(&self, key: &String) -> Option<Ref<'a>> {
        Ref::members(self).find(|(k, _)| *k == key).map(|(_, v)| v)
    }
    fn members(&self) -> Members<'a> {
        Ref::members(self)
    }
}

impl<'a> Array<'a, TapeJson> for Ref<'a> {
    type Node = Ref<'a>;
    type ElementsIter = Items<'a>;

    fn len(&self) -> usize {
        match self.tape() {
            Tape::Arr { len, .. } => len as usize,
            _ => 0,
        }
    }
    fn elements(&self) -> Items<'a> {
        self.items()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(text: &str) -> Value {
        let mut doc = Doc::default();
        doc.parse(text.as_bytes()).unwrap();
        doc.root().to_serde()
    }

    #[test]
    fn the_tape_reads_back_as_serde_json_reads() {
        for text in [
            r#"{"a": [1, -2, 2.5, {"b": null}], "c": {"d": [[], {}]}, "e": "x\u00e9\n", "f": true}"#,
            "[18446744073709551615, -9223372036854775808, 123456789012345678901234567890, 1e-400]",
            "\"\"",
            "null",
        ] {
            assert_eq!(
                roundtrip(text),
                serde_json::from_str::<Value>(text).unwrap(),
                "{text}"
            );
        }
        let mut doc = Doc::default();
        assert!(doc.parse(br#"{"a": 1, "b": {"a": 2}, "a": 3}"#).is_err());
        assert!(doc.parse(br#"{"a": 1} x"#).is_err());
        assert!(doc.parse(b"NaN").is_err());
        assert!(doc.parse(br#""\ud800""#).is_err());
        doc.parse(br#"{"a": {"x": 1}, "b": {"x": 2}}"#).unwrap(); // the same key in two objects
    }

    #[test]
    fn validates_as_serde_json_values_do() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 0},
                "s": {"type": "string", "maxLength": 2, "enum": ["ab", "c"]},
                "l": {"type": "array", "items": {"type": "number"}, "uniqueItems": true},
                "o": {"type": "object", "required": ["x"], "additionalProperties": false,
                      "properties": {"x": {"const": {"k": [1, 2.0]}}}}
            },
            "required": ["n"],
            "propertyNames": {"maxLength": 1}
        });
        let tape = jsonschema::options_for::<TapeJson>()
            .build(&schema)
            .unwrap();
        let serde = jsonschema::validator_for(&schema).unwrap();
        let mut doc = Doc::default();
        for text in [
            r#"{"n": 1, "s": "ab", "l": [1, 2.5], "o": {"x": {"k": [1.0, 2]}}}"#,
            r#"{"n": -1}"#,
            r#"{"n": 1.0}"#,
            r#"{"n": 1.5}"#,
            r#"{"s": "ab"}"#,
            r#"{"n": 1, "s": "abc"}"#,
            r#"{"n": 1, "s": "b"}"#,
            r#"{"n": 1, "l": [1, 1.0]}"#,
            r#"{"n": 1, "o": {"x": {"k": [1, 3]}}}"#,
            r#"{"n": 1, "o": {"y": 1}}"#,
            r#"{"n": 1, "long": 1}"#,
            "[]",
        ] {
            doc.parse(text.as_bytes()).unwrap();
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(tape.is_valid(doc.root()), serde.is_valid(&value), "{text}");
        }
    }
}
