//! Decoding rules the generated types cannot express by themselves; `opencode-pty-codegen` points the
//! generated fields at these functions (SPEC M3, M4).
//!
//! - A required, nullable member (`"user_title": null`) must be present: serde would otherwise read a
//!   missing `Option` as `None`, and a request missing its `title` would silently clear a title.
//! - Integers of `"format": "uint64"` stop at 2^53 − 1, the largest integer every JSON reader keeps exact.
//! - An optional nullable member whose absence and `null` differ (`x-absent-or-null`, such as `input` of `pty`)
//!   decodes into `Option<Option<T>>`: `None` when left out, `Some(None)` when `null`.

use serde::de::{Deserialize, Deserializer, Error};

/// The largest integer a JSON number holds exactly (2^53 − 1): the bound of every id, offset and timestamp.
pub const MAX_EXACT_INTEGER: u64 = (1 << 53) - 1;

fn exact<E: Error>(value: u64) -> Result<u64, E> {
    if value > MAX_EXACT_INTEGER {
        return Err(E::custom(format!("{value} is above 9007199254740991, the largest integer JSON keeps exact")));
    }
    Ok(value)
}

/// A `u64` no larger than [`MAX_EXACT_INTEGER`].
pub(crate) fn exact_u64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    exact(u64::deserialize(deserializer)?)
}

/// A nullable `u64` no larger than [`MAX_EXACT_INTEGER`]. Without `#[serde(default)]` beside it, the member
/// must be present.
pub(crate) fn nullable_exact_u64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    Option::<u64>::deserialize(deserializer)?.map(exact).transpose()
}

/// A nullable value that must be present (`null` is fine, a missing member is not).
pub(crate) fn required_nullable<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

/// A member that may be left out (`None`, through `#[serde(default)]` beside it) or present, `null` included:
/// present, it is `Some` of the nullable value.
pub(crate) fn absent_or_null<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}
