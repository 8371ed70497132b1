//! Duplicate members in JSON text: `serde_json` keeps the last of two equal keys without a word, so a request
//! like `{"token": T, "request": {"op": "ping"}, "request": {"op": "shutdown"}}` would mean something other than
//! what a reader of its first half sees. [`first_duplicate`] walks the text once, building no JSON tree, and
//! names the first member that appears twice in one object, at any depth.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The longest member name a [`first_duplicate`] answer repeats; a longer one is cut (and says so), so an error
/// message stays small whatever the client sent.
pub const MAX_REPORTED_MEMBER_CHARS: usize = 64;

/// An object member's name, borrowed from the text unless it had escapes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The name a duplicate is reported by: at most [`MAX_REPORTED_MEMBER_CHARS`] characters.
pub(crate) fn reported(name: &str) -> String {
    cut(name, MAX_REPORTED_MEMBER_CHARS)
}

/// `text` cut to its first `limit` characters, with `...` added when anything was cut.
pub(crate) fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}...", &text[..end]),
    }
}

/// The one member name `serde_json` gives a meaning of its own (with the `raw_value` feature this crate needs):
/// a JSON tree turns `{"$serde_json::private::RawValue": "1"}` into `1`, and refuses the object when the string
/// is not JSON. So that an object means what its text says, every decoder here refuses the name outright.
pub const RESERVED_MEMBER: &str = "$serde_json::private::RawValue";

/// Walks one JSON value as strictly as parsing it into a tree would (depth limit, valid escapes, numbers in
/// range) but stores nothing, so text that a JSON tree would refuse is refused here too, at no memory cost.
/// It refuses [`RESERVED_MEMBER`] as well.
pub(crate) struct Skip;

impl<'de> de::Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Skip, D::Error> {
        deserializer.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while let Some(key) = map.next_key::<Key>()? {
            if key.0 == RESERVED_MEMBER {
                return Err(de::Error::custom(format!("the member name {RESERVED_MEMBER:?} is reserved")));
            }
            map.next_value::<Skip>()?;
        }
        Ok(Skip)
    }
}

/// Checks that `json` is one JSON value a tree parse would accept, storing nothing, and that it has no member
/// named [`RESERVED_MEMBER`].
///
/// # Errors
///
/// Whatever parsing `json` into a `serde_json::Value` would fail with, or the reserved name.
pub(crate) fn validate(json: &str) -> Result<(), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    de::Deserialize::deserialize(&mut deserializer).map(|Skip| ())?;
    deserializer.end()
}

/// Walks one JSON value; records the first duplicate member met and then skips the rest.
struct Walk<'a> {
    found: &'a mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while self.found.is_none() {
            if seq.next_element_seed(Walk { found: &mut *self.found })?.is_none() {
                return Ok(());
            }
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while self.found.is_none() {
            let Some(key) = map.next_key::<Key<'de>>()? else { return Ok(()) };
            map.next_value_seed(Walk { found: &mut *self.found })?;
            if self.found.is_none() && !seen.insert(key.clone()) {
                *self.found = Some(reported(&key.0));
            }
        }
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// The first member that appears twice in one object of `json` (cut to [`MAX_REPORTED_MEMBER_CHARS`]), in the
/// order a reader meets the second occurrence; `Ok(None)` when there is none.
///
/// # Errors
///
/// When `json` is not one valid JSON value.
pub fn first_duplicate(json: &str) -> Result<Option<String>, serde_json::Error> {
    let mut found = None;
    let mut deserializer = serde_json::Deserializer::from_str(json);
    Walk { found: &mut found }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_found_at_every_depth() {
        assert_eq!(first_duplicate(r#"{"a":1,"b":2}"#).unwrap(), None);
        assert_eq!(first_duplicate(r#"{"a":1,"a":1}"#).unwrap().as_deref(), Some("a"));
        assert_eq!(first_duplicate(r#"{"a":{"b":[{"c":1,"c":2}]}}"#).unwrap().as_deref(), Some("c"));
        assert_eq!(first_duplicate(r#"[1,{"x":{},"x":[]}]"#).unwrap().as_deref(), Some("x"));
        // Equal after unescaping is equal: `\u0061` is `a`.
        assert_eq!(first_duplicate(r#"{"a":1,"\u0061":2}"#).unwrap().as_deref(), Some("a"));
        // The same name in two sibling objects is no duplicate.
        assert_eq!(first_duplicate(r#"[{"a":1},{"a":2}]"#).unwrap(), None);
        assert_eq!(first_duplicate(r#""text""#).unwrap(), None);
    }

    #[test]
    fn a_nested_duplicate_is_reported_before_a_later_outer_one() {
        assert_eq!(first_duplicate(r#"{"a":{"b":1,"b":2},"a":3}"#).unwrap().as_deref(), Some("b"));
    }

    #[test]
    fn long_names_are_cut_in_the_report() {
        let long = "k".repeat(1000);
        let json = format!(r#"{{"{long}":1,"{long}":2}}"#);
        let reported = first_duplicate(&json).unwrap().unwrap();
        assert_eq!(reported, format!("{}...", "k".repeat(MAX_REPORTED_MEMBER_CHARS)));
    }

    #[test]
    fn validation_is_as_strict_as_a_tree() {
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(200), "]".repeat(200));
        for text in [deep.as_str(), r#"{"x":1e400}"#, r#"{"x":"\udc00"}"#, r#"{"a":1} {}"#, r#"{"a":"#] {
            assert!(serde_json::from_str::<serde_json::Value>(text).is_err(), "{text}");
            assert!(validate(text).is_err(), "{text}");
        }
        let fine = format!("{{\"x\":{}{}}}", "[".repeat(100), "]".repeat(100));
        for text in [fine.as_str(), r#"{"x":1e300,"y":"\ud83d\ude00","z":[null,true,-1]}"#] {
            assert!(serde_json::from_str::<serde_json::Value>(text).is_ok(), "{text}");
            assert!(validate(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn invalid_json_is_an_error() {
        assert!(first_duplicate(r#"{"a":1,"#).is_err());
        assert!(first_duplicate(r#"{"a":1} x"#).is_err());
    }
}
