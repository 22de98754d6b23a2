//! The one rule of answers (docs/mcp.md §Outputs), held over every tool's output schema: a time
//! is Unix seconds (an integer), and a field is always present, as null when it is empty (every
//! property required). Webhook bodies follow the same rule (docs/push.md §What is sent).

use serde_json::{Map, Value};

use super::catalog;

/// Whether a property's name says it is a time.
fn is_time(name: &str) -> bool {
    name.ends_with("At") || name.ends_with("Time")
}

/// Deepest nesting walked (a type that contains itself would otherwise never end).
const DEEPEST: usize = 16;

/// Every way the object schemas reachable from `schema` break the rule, as `path: problem`.
fn breaches(schema: &Map<String, Value>, defs: &Map<String, Value>, path: &str, out: &mut Vec<String>) {
    if path.matches(['.', '[']).count() > DEEPEST {
        return;
    }
    if let Some(name) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/"))
        && let Some(target) = defs.get(name).and_then(Value::as_object)
    {
        breaches(target, defs, path, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for branch in
            schema.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_object)
        {
            breaches(branch, defs, path, out);
        }
    }
    if let Some(items) = schema.get("items").and_then(Value::as_object) {
        breaches(items, defs, &format!("{path}[]"), out);
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for (name, property) in properties {
        let at = format!("{path}.{name}");
        if !required.contains(&name.as_str()) {
            out.push(format!("{at}: may be left out (present it as null instead)"));
        }
        let Some(property) = property.as_object() else { continue };
        if is_time(name) && !integer_or_null(property, defs) {
            out.push(format!("{at}: a time that is not Unix seconds (an integer)"));
        }
        breaches(property, defs, &at, out);
    }
}

/// Whether every value `schema` allows is an integer or null.
fn integer_or_null(schema: &Map<String, Value>, defs: &Map<String, Value>) -> bool {
    if let Some(name) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        return defs.get(name).and_then(Value::as_object).is_some_and(|t| integer_or_null(t, defs));
    }
    if let Some(branches) = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array) {
        return branches.iter().filter_map(Value::as_object).all(|b| integer_or_null(b, defs));
    }
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer" || t == "null",
        Some(Value::Array(types)) => types.iter().all(|t| t == "integer" || t == "null"),
        _ => false,
    }
}

#[test]
fn every_answer_gives_times_in_unix_seconds_and_empty_fields_as_null() {
    let mut found = Vec::new();
    for tool in catalog().iter() {
        let defs = tool.output_schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
        let mut breached = Vec::new();
        breaches(&tool.output_schema, &defs, "", &mut breached);
        breached.sort();
        breached.dedup();
        found.extend(breached.into_iter().map(|b| format!("{}{b}", tool.name)));
    }
    assert!(found.is_empty(), "answers breaking docs/mcp.md §Outputs:\n{}", found.join("\n"));
}

#[test]
fn the_rule_catches_an_omitted_field_and_a_time_as_text() {
    let schema = serde_json::json!({
        "properties": { "createdAt": { "type": "string" }, "note": { "type": ["string", "null"] } },
        "required": ["createdAt"]
    });
    let mut found = Vec::new();
    breaches(schema.as_object().expect("an object"), &Map::new(), "", &mut found);
    assert_eq!(
        found,
        [
            ".createdAt: a time that is not Unix seconds (an integer)",
            ".note: may be left out (present it as null instead)"
        ]
    );
}
