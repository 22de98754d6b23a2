//! Text: what the index cannot store, what a client may not send, and how text the chain emitted
//! is shown. One policy, applied in three places (docs/indexer.md §Text the chain emits):
//!
//! - [`holds_nul`]: Postgres `text` and `jsonb` refuse the NUL character, so client input holding
//!   one is refused as bad input before it reaches a query.
//! - [`refused_char`]: characters a client may not put in any text input (NUL, control
//!   characters, bidirectional controls, invisible characters): a reader cannot see them, or they
//!   make the text around them read as something else.
//! - [`ChainText`]: a string field of a contract event, kept as the exact bytes the chain emitted,
//!   with a display form in which invalid UTF-8 and every refused character are replaced visibly.

use std::{borrow::Cow, fmt};

use serde_json::Value;

/// Whether any string or object key in `value` holds a NUL character.
pub fn holds_nul(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(holds_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || holds_nul(v)),
        _ => false,
    }
}

/// A character that text from a client may not hold, and where it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefusedChar {
    /// The character.
    pub ch: char,
    /// Its position, counted in characters from 1.
    pub position: usize,
}

impl RefusedChar {
    /// What kind of character it is, for a sentence ("a NUL character").
    pub const fn kind(&self) -> &'static str {
        match hidden(self.ch) {
            Some(Hidden::Nul) => "a NUL character",
            Some(Hidden::Control) => "a control character",
            Some(Hidden::Bidi) => "a bidirectional control",
            Some(Hidden::Invisible) | None => "an invisible character",
        }
    }
}

impl fmt::Display for RefusedChar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (U+{:04X}) at character {}", self.kind(), u32::from(self.ch), self.position)
    }
}

/// The first character of `text` that a client may not send: NUL, a control character (tab and
/// newline included), a bidirectional control (U+202E and its kin, which make "Design\u{202e}Bot"
/// render as another name) or an invisible character (zero-width space and joiners, word joiner,
/// byte-order mark).
pub fn refused_char(text: &str) -> Option<RefusedChar> {
    text.chars()
        .enumerate()
        .find(|(_, c)| hidden(*c).is_some())
        .map(|(i, ch)| RefusedChar { ch, position: i + 1 })
}

/// Characters that do not show as themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hidden {
    Nul,
    Control,
    Bidi,
    Invisible,
}

const fn hidden(c: char) -> Option<Hidden> {
    match c {
        '\0' => Some(Hidden::Nul),
        '\u{1}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => Some(Hidden::Control),
        '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
            Some(Hidden::Bidi)
        }
        '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}' => Some(Hidden::Invisible),
        _ => None,
    }
}

/// How a hidden character is shown: C0 controls and NUL as their Unicode control pictures
/// (U+2400–U+241F: "␀", "␛"), DEL as "␡", everything else as the replacement character "�".
const fn picture(c: char) -> char {
    match c {
        '\0'..='\u{1f}' => match char::from_u32(0x2400 + c as u32) {
            Some(p) => p,
            None => char::REPLACEMENT_CHARACTER,
        },
        '\u{7f}' => '\u{2421}',
        _ => char::REPLACEMENT_CHARACTER,
    }
}

/// A string field of a contract event: the exact bytes the chain emitted (a Solidity `string`
/// need not be UTF-8, and may hold NUL), with the form it is shown in.
///
/// The journal stores it as a JSON string when it is plain (valid UTF-8 that shows as itself) and
/// as `{"hex": "0x…"}` otherwise; reading accepts both, so journals written before this type read
/// back unchanged. Projections store [`ChainText::display`] in the text column and, only when the
/// text is not plain, the exact bytes in the `…_bytes` column beside it.
#[derive(Clone, PartialEq, Eq)]
pub struct ChainText(Vec<u8>);

impl ChainText {
    /// The text of exactly these bytes.
    pub const fn from_bytes(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    /// The text stored as `display` with its exact bytes `exact` beside it (`None` when the
    /// display form is exact), as a projection holds it.
    pub fn stored(display: String, exact: Option<Vec<u8>>) -> Self {
        Self(exact.unwrap_or_else(|| display.into_bytes()))
    }

    /// The exact bytes the chain emitted.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Whether the text shows as itself: valid UTF-8 with no character [`refused_char`] refuses.
    pub fn is_plain(&self) -> bool {
        std::str::from_utf8(&self.0).is_ok_and(|s| refused_char(s).is_none())
    }

    /// The display form: invalid UTF-8 as "�", NUL and the other C0 controls as their control
    /// pictures ("␀"), DEL as "␡", other controls, bidirectional and invisible characters as
    /// "�". Always storable in Postgres `text`; equal to the bytes when the text is plain.
    pub fn display(&self) -> Cow<'_, str> {
        let lossy = String::from_utf8_lossy(&self.0);
        if refused_char(&lossy).is_none() {
            return lossy;
        }
        Cow::Owned(lossy.chars().map(|c| if hidden(c).is_some() { picture(c) } else { c }).collect())
    }

    /// The exact bytes when they differ from the display form (a projection's `…_bytes` column),
    /// else `None`.
    pub fn exact_if_not_plain(&self) -> Option<Vec<u8>> {
        (!self.is_plain()).then(|| self.0.clone())
    }

    /// The exact bytes as `0x` and lower-case hex.
    pub fn hex(&self) -> String {
        alloy::hex::encode_prefixed(&self.0)
    }
}

impl fmt::Debug for ChainText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_plain() {
            write!(f, "{:?}", self.display())
        } else {
            write!(f, "ChainText({})", self.hex())
        }
    }
}

impl From<String> for ChainText {
    fn from(text: String) -> Self {
        Self(text.into_bytes())
    }
}

impl From<&str> for ChainText {
    fn from(text: &str) -> Self {
        Self(text.as_bytes().to_vec())
    }
}

impl serde::Serialize for ChainText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if self.is_plain() {
            return serializer.serialize_str(&self.display());
        }
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("hex", &self.hex())?;
        map.end()
    }
}

impl<'de> serde::Deserialize<'de> for ChainText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Stored {
            Plain(String),
            Hex { hex: String },
        }
        match Stored::deserialize(deserializer)? {
            Stored::Plain(text) => Ok(Self(text.into_bytes())),
            Stored::Hex { hex } => alloy::hex::decode(&hex)
                .map(Self)
                .map_err(|_| D::Error::custom(format!("{hex:?} is not 0x-prefixed hex"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_characters_are_named_with_their_place() {
        assert_eq!(refused_char("logo-design, 3 rounds"), None);
        assert_eq!(refused_char("Café ☕ 日本"), None);
        let nul = refused_char("ipfs://nul\0inside").expect("NUL");
        assert_eq!(nul.to_string(), "a NUL character (U+0000) at character 11");
        assert_eq!(refused_char("a\u{1b}[31m").expect("ESC").kind(), "a control character");
        assert_eq!(refused_char("a\nb").expect("newline").kind(), "a control character");
        assert_eq!(refused_char("Design\u{202e}Bot").expect("RLO").kind(), "a bidirectional control");
        assert_eq!(refused_char("x\u{200b}y").expect("ZWSP").kind(), "an invisible character");
        assert_eq!(refused_char("\u{85}").expect("C1 NEL").kind(), "a control character");
    }

    #[test]
    fn display_replaces_visibly_and_bytes_round_trip() {
        let cases: [(&[u8], &str); 5] = [
            (b"ipfs://plain", "ipfs://plain"),
            (b"nul\0inside", "nul\u{2400}inside"),
            (b"\xff\xfe", "\u{fffd}\u{fffd}"),
            (b"esc\x1b\x7f", "esc\u{241b}\u{2421}"),
            ("Design\u{202e}Bot".as_bytes(), "Design\u{fffd}Bot"),
        ];
        for (bytes, shown) in cases {
            let text = ChainText::from_bytes(bytes.to_vec());
            assert_eq!(text.display(), shown);
            assert!(!text.display().contains('\0'));
            assert_eq!(text.is_plain(), bytes == shown.as_bytes(), "{text:?}");
            let json = serde_json::to_string(&text).expect("serializes");
            assert!(!json.contains("\\u0000"), "{json}");
            let back: ChainText = serde_json::from_str(&json).expect("reads back");
            assert_eq!(back.as_bytes(), bytes, "{json}");
            let stored = ChainText::stored(text.display().into_owned(), text.exact_if_not_plain());
            assert_eq!(stored, text);
        }
        assert_eq!(serde_json::to_string(&ChainText::from("a")).expect("json"), "\"a\"");
        assert_eq!(
            serde_json::to_string(&ChainText::from_bytes(vec![0])).expect("json"),
            r#"{"hex":"0x00"}"#
        );
        assert!(serde_json::from_str::<ChainText>(r#"{"hex":"zz"}"#).is_err());
    }
}
