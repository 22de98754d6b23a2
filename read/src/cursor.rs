//! Opaque cursors for keyset pagination. A cursor names the ordering it was made for, the sort
//! key of the row it points at and the row's pact id, so the next page starts exactly after that
//! row however many rows were added meanwhile. Encoded as hex so clients treat it as opaque.

use alloy::{hex, primitives::U256};

use super::{ReadError, pacts::PactOrderField};

const PREFIX: &str = "pact1";

/// The last second of 9999, the latest a deadline key may name.
const MAX_TIMESTAMP: i64 = 253_402_300_799;

/// A position in a list of pacts ordered by one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The ordering the cursor belongs to.
    pub field: PactOrderField,
    /// The row's sort key as text (a decimal number, or empty when ordering by id).
    pub key: String,
    /// The row's pact id, which breaks ties.
    pub id: U256,
}

impl Cursor {
    /// The opaque string handed to clients.
    pub fn encode(&self) -> String {
        hex::encode(format!("{PREFIX}:{}:{}:{}", self.field.name(), self.key, self.id))
    }

    /// Reads a cursor handed out for ordering `field`; anything else is a [`ReadError::BadCursor`].
    pub fn decode(text: &str, field: PactOrderField) -> Result<Self, ReadError> {
        let not_ours = || {
            ReadError::BadCursor(format!(
                "`{}` is not a cursor of this API: pass the `cursor` of an edge or the \
                 `startCursor`/`endCursor` of a page, unchanged",
                truncate(text)
            ))
        };
        let bytes = hex::decode(text).map_err(|_| not_ours())?;
        let plain = String::from_utf8(bytes).map_err(|_| not_ours())?;
        let mut parts = plain.split(':');
        let (Some(PREFIX), Some(name), Some(key), Some(id), None) =
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(not_ours());
        };
        let made_for = PactOrderField::from_name(name).ok_or_else(not_ours)?;
        if made_for != field {
            return Err(ReadError::BadCursor(format!(
                "this cursor was made for ordering by {}, not {}: start again without a cursor \
                 when changing the order",
                made_for.name(),
                field.name()
            )));
        }
        let id: U256 = id.parse().map_err(|_| not_ours())?;
        let key_ok = match field {
            PactOrderField::Created => key.is_empty(),
            PactOrderField::Payment => key.parse::<U256>().is_ok(),
            // A deadline the database can turn into a timestamp (to 9999-12-31).
            PactOrderField::Deadline => key.parse::<i64>().is_ok_and(|t| (0..=MAX_TIMESTAMP).contains(&t)),
            PactOrderField::Updated => key.parse::<i64>().is_ok_and(|b| b >= 0),
        };
        if !key_ok {
            return Err(not_ours());
        }
        Ok(Self { field, key: key.to_owned(), id })
    }
}

/// Echoes at most 80 characters of a bad input back.
fn truncate(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_each_ordering() {
        for (field, key) in [
            (PactOrderField::Created, ""),
            (PactOrderField::Payment, "500000000000000000"),
            (PactOrderField::Deadline, "1790000000"),
            (PactOrderField::Updated, "42"),
        ] {
            let cursor = Cursor { field, key: key.into(), id: U256::from(7) };
            assert_eq!(Cursor::decode(&cursor.encode(), field).expect("decodes"), cursor);
        }
    }

    #[test]
    fn refuses_foreign_and_mismatched_cursors() {
        for text in [
            "",
            "zz",
            "YXJyYXljb25uZWN0aW9uOjA=",
            &hex::encode("pact1:CREATED::x"),
            &hex::encode("pact1:PAYMENT:-1:3"),
        ] {
            let err = Cursor::decode(text, PactOrderField::Created).expect_err(text);
            assert_eq!(err.code(), "BAD_CURSOR", "{text}");
        }
        let payment = Cursor { field: PactOrderField::Payment, key: "1".into(), id: U256::from(1) }.encode();
        let err = Cursor::decode(&payment, PactOrderField::Created).expect_err("other ordering");
        assert!(err.to_string().contains("made for ordering by PAYMENT"), "{err}");
    }
}
