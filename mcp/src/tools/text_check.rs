//! Text a tool takes from nobody: every string in the arguments, and every field name, is held to
//! `agentpact_schema::refused_char` before anything reads it. NUL (which Postgres cannot store
//! and which stopped the index when it reached the chain), control characters (tab and newline
//! too), bidirectional controls (a name that renders as another) and invisible characters are
//! refused with the field that holds one.

use serde_json::Value;

use super::schema_check::{child, item, named};

/// What the sentence of a refusal asks for.
pub const ASK: &str = "send text without control, bidirectional or invisible characters";

/// The first string or field name in `value` holding a refused character, as a sentence naming
/// its field: `specUri holds a NUL character (U+0000) at character 11`.
pub fn first_refused(value: &Value) -> Option<String> {
    walk(value, "")
}

fn walk(value: &Value, path: &str) -> Option<String> {
    match value {
        Value::String(text) => {
            agentpact_schema::refused_char(text).map(|refused| format!("{} holds {refused}", named(path)))
        }
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| walk(v, &item(path, i))),
        Value::Object(fields) => fields.iter().find_map(|(key, v)| {
            let Some(refused) = agentpact_schema::refused_char(key) else {
                return walk(v, &child(path, key));
            };
            let shown: String = key.chars().take(40).collect();
            let within = if path.is_empty() { String::new() } else { format!(" in {path}") };
            Some(format!("the field name {shown:?}{within} holds {refused}"))
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::first_refused;

    #[test]
    fn every_string_and_field_name_is_read_and_the_first_refused_one_named() {
        assert_eq!(first_refused(&json!({ "name": "Café ☕", "n": 7, "list": ["a", null] })), None);
        assert_eq!(
            first_refused(&json!({ "specUri": "ipfs://nul\u{0}inside" })).as_deref(),
            Some("specUri holds a NUL character (U+0000) at character 11")
        );
        assert_eq!(
            first_refused(&json!({ "updates": { "name": "Design\u{202e}Bot" } })).as_deref(),
            Some("updates.name holds a bidirectional control (U+202E) at character 7")
        );
        assert_eq!(
            first_refused(&json!({ "capabilities": [{ "name": "ok" }, { "name": "a\u{200b}b" }] }))
                .as_deref(),
            Some("capabilities[1].name holds an invisible character (U+200B) at character 2")
        );
        assert_eq!(
            first_refused(&json!({ "message": { "a\u{1b}b": 1 } })).as_deref(),
            Some("the field name \"a\\u{1b}b\" in message holds a control character (U+001B) at character 2")
        );
        assert_eq!(
            first_refused(&json!("tab\there")).as_deref(),
            Some("the arguments holds a control character (U+0009) at character 4")
        );
    }
}
