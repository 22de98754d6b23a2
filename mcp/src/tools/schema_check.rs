//! Holding a tool's arguments to the input schema it declares, before serde reads them.
//!
//! The subset of JSON Schema that schemars writes for our input types: `type` (one or a list),
//! `properties`, `required`, `additionalProperties`, `minimum`/`maximum` (and their exclusive
//! forms), the integer `format`s (`uint8` … `uint64`, `int8` … `int64`: the type's range),
//! `minLength`/`maxLength` (in characters), `pattern` (only [`input::DIGITS`], the one our id
//! schemas declare: decimal digits), `minItems`/`maxItems`, `items`, `enum`, `const`,
//! `$ref` into the root's `$defs`, `anyOf`/`oneOf`/`allOf`. The first problem comes back as a
//! sentence naming the field by its path (`capabilities[2].name`), quoting at most 40 characters of
//! what was sent.

use serde_json::{Map, Number, Value};

use crate::input;

/// Checks `value` against `schema`, a root schema whose `$ref`s point into its own `$defs`.
pub fn check(schema: &Map<String, Value>, value: &Value) -> Result<(), String> {
    let defs = schema.get("$defs").and_then(Value::as_object);
    Checker { defs }.node(schema, value, "")
}

/// The path of field `key` of the object at `path` (`""` is the arguments themselves).
pub fn child(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

/// The path of item `index` of the array at `path`.
pub fn item(path: &str, index: usize) -> String {
    format!("{}[{index}]", if path.is_empty() { "arguments" } else { path })
}

/// The field at `path` as a sentence names it.
pub fn named(path: &str) -> &str {
    if path.is_empty() { "the arguments" } else { path }
}

/// `value` as a message quotes it: a string's first 40 characters, a number, or its kind.
pub fn shown(value: &Value) -> String {
    const KEEP: usize = 40;
    match value {
        Value::String(s) if s.chars().count() > KEEP => {
            format!("{:?}…", s.chars().take(KEEP).collect::<String>())
        }
        Value::String(s) => format!("{s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
        other => other.to_string(),
    }
}

struct Checker<'a> {
    defs: Option<&'a Map<String, Value>>,
}

impl Checker<'_> {
    fn node(&self, schema: &Map<String, Value>, value: &Value, path: &str) -> Result<(), String> {
        if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
            let resolved = target
                .strip_prefix("#/$defs/")
                .and_then(|name| self.defs?.get(name)?.as_object())
                .ok_or_else(|| {
                    format!("{}: the tool's schema names {target:?}, which it lacks", named(path))
                })?;
            self.node(resolved, value, path)?;
        }
        if let Some(types) = schema.get("type") {
            typed(types, value, path)?;
        }
        let listed = schema.get("enum").and_then(Value::as_array);
        let constant = schema.get("const");
        if listed.is_some_and(|l| !l.contains(value)) || constant.is_some_and(|c| c != value) {
            let allowed: Vec<&Value> = listed.into_iter().flatten().chain(constant).collect();
            return Err(unknown_variant(&allowed, value, path));
        }
        self.branches(schema, value, path)?;
        match value {
            Value::Number(n) => number(schema, n, path),
            Value::String(s) => string(schema, s, path),
            Value::Array(items) => self.array(schema, items, path),
            Value::Object(fields) => self.object(schema, fields, path),
            Value::Null | Value::Bool(_) => Ok(()),
        }
    }

    /// `anyOf` (one branch at least), `oneOf` (exactly one) and `allOf` (every one).
    fn branches(&self, schema: &Map<String, Value>, value: &Value, path: &str) -> Result<(), String> {
        let options = |key: &str| schema.get(key).and_then(Value::as_array).into_iter().flatten();
        for branch in options("allOf").filter_map(Value::as_object) {
            self.node(branch, value, path)?;
        }
        for key in ["anyOf", "oneOf"] {
            let branches: Vec<&Map<String, Value>> = options(key).filter_map(Value::as_object).collect();
            if branches.is_empty() {
                continue;
            }
            let results: Vec<Result<(), String>> =
                branches.iter().map(|branch| self.node(branch, value, path)).collect();
            let fits = results.iter().filter(|r| r.is_ok()).count();
            if fits == 0 {
                let constants: Option<Vec<&Value>> = branches.iter().map(|b| b.get("const")).collect();
                if let Some(allowed) = constants {
                    return Err(unknown_variant(&allowed, value, path));
                }
                // The problem of a branch of the value's type; failing that, the types it may have.
                let of_its_type = branches
                    .iter()
                    .zip(results)
                    .find(|(b, _)| b.get("type").is_none_or(|t| typed(t, value, path).is_ok()))
                    .and_then(|(_, r)| r.err());
                let types: Vec<Value> = branches
                    .iter()
                    .filter_map(|b| b.get("type"))
                    .flat_map(type_names)
                    .map(Value::from)
                    .collect();
                return Err(of_its_type
                    .unwrap_or_else(|| typed(&Value::Array(types), value, path).err().unwrap_or_default()));
            }
            if key == "oneOf" && fits > 1 {
                return Err(format!("{} fits more than one of the forms it may take", named(path)));
            }
        }
        Ok(())
    }

    fn array(&self, schema: &Map<String, Value>, items: &[Value], path: &str) -> Result<(), String> {
        let (min, max) = (bound(schema, "minItems"), bound(schema, "maxItems"));
        let n = items.len() as u64;
        if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
            let takes = match (min, max) {
                (Some(lo), Some(hi)) => format!("{lo} to {hi}"),
                (Some(lo), None) => format!("at least {lo}"),
                (None, _) => format!("at most {}", max.unwrap_or_default()),
            };
            return Err(format!("{} holds {n} items; it takes {takes}", named(path)));
        }
        if let Some(each) = schema.get("items").and_then(Value::as_object) {
            for (i, value) in items.iter().enumerate() {
                self.node(each, value, &item(path, i))?;
            }
        }
        Ok(())
    }

    fn object(
        &self,
        schema: &Map<String, Value>,
        fields: &Map<String, Value>,
        path: &str,
    ) -> Result<(), String> {
        let empty = Map::new();
        let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let whose = if path.is_empty() { String::new() } else { format!("{path} has an ") };
        for (key, value) in fields {
            match (properties.get(key).and_then(Value::as_object), schema.get("additionalProperties")) {
                (Some(field), _) => self.node(field, value, &child(path, key))?,
                (None, Some(Value::Bool(false))) => {
                    let known: Vec<String> = properties.keys().map(|k| format!("`{k}`")).collect();
                    let expected = if known.is_empty() {
                        "it takes no arguments".to_owned()
                    } else {
                        format!("expected one of {}", known.join(", "))
                    };
                    let shown_key: String = key.chars().take(40).collect();
                    let cut = if shown_key.len() < key.len() { "…" } else { "" };
                    return Err(format!("{whose}unknown field `{shown_key}{cut}`, {expected}"));
                }
                (None, Some(Value::Object(extra))) => self.node(extra, value, &child(path, key))?,
                (None, _) => {}
            }
        }
        let required = schema.get("required").and_then(Value::as_array).into_iter().flatten();
        if let Some(missing) = required.filter_map(Value::as_str).find(|name| !fields.contains_key(*name)) {
            let whose = if path.is_empty() { String::new() } else { format!("{path}: ") };
            return Err(format!("{whose}missing field `{missing}`"));
        }
        Ok(())
    }
}

/// The type names `types` lists (a name or a list of names).
fn type_names(types: &Value) -> Vec<&str> {
    match types {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Checks the JSON type of `value` against `types` (a name or a list of names).
fn typed(types: &Value, value: &Value, path: &str) -> Result<(), String> {
    let names = type_names(types);
    if names.is_empty() {
        return Ok(());
    }
    let is = |name: &str| match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    };
    if names.iter().any(|n| is(n)) {
        return Ok(());
    }
    if path.is_empty() {
        return Err(format!("{}, not {}", super::NOT_AN_OBJECT, kind(value)));
    }
    let expected: Vec<&str> = names.iter().map(|n| described(n)).collect();
    Err(format!("{path} has an invalid type: {}, expected {}", kind(value), expected.join(" or ")))
}

/// What kind of JSON value `value` is, for a sentence.
pub fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(_) => format!("the string {}", shown(value)),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn described(type_name: &str) -> &str {
    match type_name {
        "integer" => "a whole number",
        "number" => "a number",
        "string" => "a string",
        "boolean" => "true or false",
        "array" => "an array",
        "object" => "an object",
        other => other,
    }
}

fn unknown_variant(allowed: &[&Value], value: &Value, path: &str) -> String {
    let allowed: Vec<String> = allowed.iter().map(|v| v.to_string()).collect();
    format!("{} is {}, an unknown variant: expected {}", named(path), shown(value), allowed.join(" or "))
}

/// A non-negative integer keyword of `schema` (`maxLength`, `minItems`, …).
fn bound(schema: &Map<String, Value>, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

/// The range of an integer `format`, when it names one.
fn integer_range(format: &str) -> Option<(i128, i128)> {
    let bits: u32 = format.strip_prefix("uint").or_else(|| format.strip_prefix("int"))?.parse().ok()?;
    if !matches!(bits, 8 | 16 | 32 | 64) {
        return None;
    }
    Some(if format.starts_with('u') {
        (0, i128::MAX >> (127 - bits))
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    })
}

fn number(schema: &Map<String, Value>, n: &Number, path: &str) -> Result<(), String> {
    let whole = n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
    let format = schema.get("format").and_then(Value::as_str).and_then(integer_range);
    if let (Some((lo, hi)), Some(w)) = (format, whole)
        && !(lo..=hi).contains(&w)
    {
        return Err(format!("{path} has an invalid value: {n}, expected a whole number from {lo} to {hi}"));
    }
    let x = n.as_f64().unwrap_or(f64::NAN);
    let limit = |key: &str| schema.get(key).filter(|v| v.is_number());
    let (min, max) = (limit("minimum"), limit("maximum"));
    // The range, and what the field is, so the agent can pick a value without reading the schema.
    let mut takes = match (min, max) {
        (Some(lo), Some(hi)) => format!(": it takes {lo} to {hi}"),
        _ => String::new(),
    };
    if let Some(about) = schema.get("description").and_then(Value::as_str) {
        takes = format!("{takes} ({})", about.replace('\n', " ").trim_end_matches('.'));
    }
    if let Some(lo) = min.filter(|lo| x < lo.as_f64().unwrap_or(f64::NAN)) {
        return Err(format!("{path} must be at least {lo}, not {n}{takes}"));
    }
    if let Some(hi) = max.filter(|hi| x > hi.as_f64().unwrap_or(f64::NAN)) {
        return Err(format!("{path} must be at most {hi}, not {n}{takes}"));
    }
    if let Some(lo) = limit("exclusiveMinimum").filter(|lo| x <= lo.as_f64().unwrap_or(f64::NAN)) {
        return Err(format!("{path} must be above {lo}, not {n}"));
    }
    if let Some(hi) = limit("exclusiveMaximum").filter(|hi| x >= hi.as_f64().unwrap_or(f64::NAN)) {
        return Err(format!("{path} must be below {hi}, not {n}"));
    }
    Ok(())
}

fn string(schema: &Map<String, Value>, s: &str, path: &str) -> Result<(), String> {
    let (min, max) = (bound(schema, "minLength"), bound(schema, "maxLength"));
    let chars = s.chars().count() as u64;
    if let Some(hi) = max.filter(|hi| chars > *hi) {
        return Err(format!(
            "{} is too long: {chars} characters ({} bytes), at most {hi} characters",
            named(path),
            s.len()
        ));
    }
    if let Some(lo) = min.filter(|lo| chars < *lo) {
        return Err(if chars == 0 {
            format!(
                "{} is empty; it takes at least {lo} character{}",
                named(path),
                if lo == 1 { "" } else { "s" }
            )
        } else {
            format!("{} is too short: {chars} characters, at least {lo}", named(path))
        });
    }
    match schema.get("pattern").and_then(Value::as_str) {
        None => Ok(()),
        Some(input::DIGITS) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => Ok(()),
        Some(input::DIGITS) => Err(format!(
            "{} must be a whole number, as digits (\"12\") or a number (12), not {}",
            named(path),
            shown(&Value::from(s))
        )),
        Some(other) => {
            Err(format!("{}: the tool's schema has pattern {other:?}, which is not read", named(path)))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::check;

    fn schema(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    fn problem(schema_json: Value, value: Value) -> String {
        check(&schema(schema_json), &value).expect_err("refused")
    }

    #[test]
    fn types_one_or_several_and_whole_numbers() {
        let s = json!({ "type": "object", "properties": {
            "n": { "type": "integer" }, "x": { "type": "number" }, "s": { "type": ["string", "null"] },
            "b": { "type": "boolean" }, "a": { "type": "array" }, "o": { "type": "object" } } });
        let ok = json!({ "n": -3, "x": 1.5, "s": null, "b": true, "a": [], "o": {} });
        assert_eq!(check(&schema(s.clone()), &ok), Ok(()));
        assert_eq!(check(&schema(s.clone()), &json!({ "s": "text" })), Ok(()));
        assert_eq!(
            problem(s.clone(), json!({ "n": 1.5 })),
            "n has an invalid type: the number 1.5, expected a whole number"
        );
        assert_eq!(
            problem(s.clone(), json!({ "s": 7 })),
            "s has an invalid type: the number 7, expected a string or null"
        );
        assert_eq!(
            problem(s.clone(), json!({ "b": "yes" })),
            "b has an invalid type: the string \"yes\", expected true or false"
        );
        assert_eq!(
            problem(s.clone(), json!({ "x": [1] })),
            "x has an invalid type: an array, expected a number"
        );
        assert_eq!(
            problem(s, json!(["not", "an", "object"])),
            "arguments must be a JSON object of the tool's inputs, not an array"
        );
    }

    #[test]
    fn fields_unknown_missing_and_nested_are_named_by_their_path() {
        let s = json!({
            "type": "object", "additionalProperties": false, "required": ["pactId"],
            "properties": {
                "pactId": { "type": "integer" },
                "updates": { "$ref": "#/$defs/Updates" },
                "list": { "type": "array", "items": { "$ref": "#/$defs/Item" } } },
            "$defs": {
                "Updates": { "type": "object", "additionalProperties": false, "properties": { "name": { "type": "string" } } },
                "Item": { "type": "object", "required": ["price"], "properties": { "price": { "type": "string" } } } } });
        assert_eq!(check(&schema(s.clone()), &json!({ "pactId": 1, "list": [{ "price": "1" }] })), Ok(()));
        assert_eq!(problem(s.clone(), json!({})), "missing field `pactId`");
        assert_eq!(
            problem(s.clone(), json!({ "pactId": 1, "extra": 1 })),
            "unknown field `extra`, expected one of `list`, `pactId`, `updates`"
        );
        assert_eq!(
            problem(s.clone(), json!({ "pactId": 1, "updates": { "colour": "red" } })),
            "updates has an unknown field `colour`, expected one of `name`"
        );
        assert_eq!(
            problem(s.clone(), json!({ "pactId": 1, "list": [{ "price": "1" }, {}] })),
            "list[1]: missing field `price`"
        );
        assert_eq!(
            problem(s, json!({ "pactId": 1, "list": [{ "price": 5 }] })),
            "list[0].price has an invalid type: the number 5, expected a string"
        );
        let nothing = json!({ "type": "object", "additionalProperties": false });
        assert_eq!(problem(nothing, json!({ "x": 1 })), "unknown field `x`, it takes no arguments");
    }

    #[test]
    fn numbers_are_held_to_their_range_and_their_integer_format() {
        let s = json!({ "type": "object", "properties": {
            "first": { "type": ["integer", "null"], "format": "uint32", "minimum": 1, "maximum": 100,
                       "description": "How many (1-100,\ndefault 20)." },
            "id": { "type": "integer", "format": "uint64", "minimum": 0 },
            "weight": { "type": "integer", "format": "uint8", "minimum": 0, "maximum": 255 },
            "ratio": { "type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1 } } });
        assert_eq!(
            check(&schema(s.clone()), &json!({ "first": 100, "id": u64::MAX, "weight": 255 })),
            Ok(())
        );
        assert_eq!(
            problem(s.clone(), json!({ "first": 0 })),
            "first must be at least 1, not 0: it takes 1 to 100 (How many (1-100, default 20))"
        );
        assert_eq!(
            problem(s.clone(), json!({ "first": 1000 })),
            "first must be at most 100, not 1000: it takes 1 to 100 (How many (1-100, default 20))"
        );
        assert_eq!(
            problem(s.clone(), json!({ "id": -1 })),
            "id has an invalid value: -1, expected a whole number from 0 to 18446744073709551615"
        );
        assert_eq!(
            problem(s.clone(), json!({ "weight": 256 })),
            "weight has an invalid value: 256, expected a whole number from 0 to 255"
        );
        assert_eq!(
            problem(s.clone(), json!({ "id": 18_446_744_073_709_551_616_f64 })),
            "id has an invalid type: the number 1.8446744073709552e+19, expected a whole number"
        );
        assert_eq!(problem(s.clone(), json!({ "ratio": 0 })), "ratio must be above 0, not 0");
        assert_eq!(problem(s, json!({ "ratio": 1.0 })), "ratio must be below 1, not 1.0");
    }

    #[test]
    fn lengths_count_characters_and_say_bytes_and_item_counts_are_held() {
        let s = json!({ "type": "object", "properties": {
            "name": { "type": "string", "minLength": 1, "maxLength": 4 },
            "code": { "type": "string", "minLength": 3 },
            "tags": { "type": ["array", "null"], "maxItems": 2, "items": { "type": "string", "maxLength": 2 } },
            "oracles": { "type": "array", "minItems": 1, "maxItems": 10 } } });
        assert_eq!(
            check(&schema(s.clone()), &json!({ "name": "日本語!", "tags": ["ab"], "oracles": [1] })),
            Ok(())
        );
        assert_eq!(
            problem(s.clone(), json!({ "name": "日本語!!" })),
            "name is too long: 5 characters (11 bytes), at most 4 characters"
        );
        assert_eq!(problem(s.clone(), json!({ "name": "" })), "name is empty; it takes at least 1 character");
        assert_eq!(
            problem(s.clone(), json!({ "code": "ab" })),
            "code is too short: 2 characters, at least 3"
        );
        assert_eq!(
            problem(s.clone(), json!({ "tags": ["a", "b", "c"] })),
            "tags holds 3 items; it takes at most 2"
        );
        assert_eq!(
            problem(s.clone(), json!({ "tags": ["a", "abc"] })),
            "tags[1] is too long: 3 characters (3 bytes), at most 2 characters"
        );
        assert_eq!(problem(s, json!({ "oracles": [] })), "oracles holds 0 items; it takes 1 to 10");
    }

    #[test]
    fn variants_consts_and_branches() {
        let s = json!({ "type": "object", "properties": {
            "role": { "$ref": "#/$defs/Role" },
            "color": { "enum": ["red", "green"] },
            "either": { "anyOf": [{ "type": "string" }, { "type": "integer", "minimum": 1 }] },
            "one": { "oneOf": [{ "type": "integer" }, { "type": "number" }] },
            "all": { "allOf": [{ "type": "string" }, { "maxLength": 1 }] } },
            "$defs": { "Role": { "oneOf": [{ "const": "buyer", "type": "string" }, { "const": "seller", "type": "string" }] } } });
        assert_eq!(
            check(&schema(s.clone()), &json!({ "role": "seller", "color": "red", "either": 3, "one": 1.5 })),
            Ok(())
        );
        assert_eq!(
            problem(s.clone(), json!({ "role": "boss" })),
            "role is \"boss\", an unknown variant: expected \"buyer\" or \"seller\""
        );
        assert_eq!(
            problem(s.clone(), json!({ "color": "x".repeat(100) })),
            format!("color is \"{}\"…, an unknown variant: expected \"red\" or \"green\"", "x".repeat(40))
        );
        assert_eq!(problem(s.clone(), json!({ "either": 0 })), "either must be at least 1, not 0");
        assert_eq!(
            problem(s.clone(), json!({ "either": true })),
            "either has an invalid type: the boolean true, expected a string or a whole number"
        );
        assert_eq!(
            problem(s.clone(), json!({ "one": 2 })),
            "one fits more than one of the forms it may take"
        );
        assert_eq!(
            problem(s.clone(), json!({ "all": "ab" })),
            "all is too long: 2 characters (2 bytes), at most 1 characters"
        );
        let dangling = json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/Gone" } } });
        assert!(problem(dangling, json!({ "x": 1 })).contains("lacks"));
    }

    /// Values of every JSON kind, at and past the bounds our schemas declare, and each closed
    /// set's members and a stranger.
    fn probes(field: &Map<String, Value>) -> Vec<Value> {
        let mut values = vec![
            json!(null),
            json!(true),
            json!(0),
            json!(1),
            json!(-1),
            json!(1.5),
            json!(1.0),
            json!(255),
            json!(256),
            json!(4_294_967_296_u64),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1e20),
            json!(""),
            json!("12"),
            json!("1e3"),
            json!("0x2a"),
            json!("logo-design"),
            json!([]),
            json!([1]),
            json!(["a", "b"]),
            json!({}),
            json!({ "stranger": 1 }),
        ];
        for key in ["maxLength", "minLength"] {
            if let Some(n) = field.get(key).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok()) {
                values.extend([n.saturating_sub(1), n, n + 1].map(|n| json!("é".repeat(n))));
            }
        }
        for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            if let Some(n) = field.get(key).and_then(Value::as_f64) {
                values.extend([n - 1.0, n, n + 1.0].map(|x| json!(x)));
                values.extend(field.get(key).and_then(Value::as_i64).map(|n| json!(n - 1)));
            }
        }
        let text = Value::Object(field.clone()).to_string();
        let members = |key: &str| field.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
        values.extend(members("enum"));
        values.extend(field.get("const").cloned());
        for branch in members("oneOf").iter().chain(&members("anyOf")) {
            values.extend(branch.get("const").cloned());
        }
        if text.contains("\"enum\"") || text.contains("\"const\"") {
            values.push(json!("stranger"));
        }
        values
    }

    /// Each field's schema (the arguments', and every definition's) as a root of its own, with the
    /// definitions its `$ref`s point into.
    fn fields(root: &Map<String, Value>) -> Vec<(String, Map<String, Value>)> {
        let defs = root.get("$defs").cloned().unwrap_or_else(|| json!({}));
        let named =
            defs.as_object().into_iter().flatten().filter_map(|(n, d)| Some((n.as_str(), d.as_object()?)));
        let mut out = Vec::new();
        for (owner, object) in std::iter::once(("arguments", root)).chain(named) {
            let mut members: Vec<(String, &Value)> = object
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(name, field)| (name.clone(), field))
                .collect();
            members.extend(object.get("items").map(|items| ("[]".to_owned(), items)));
            for (name, field) in members {
                if let Some(field) = field.as_object() {
                    let mut alone = field.clone();
                    alone.insert("$defs".into(), defs.clone());
                    out.push((format!("{owner}.{name}"), alone));
                }
            }
        }
        out
    }

    /// A whole number written as a float (`1.0`, `1e20`), which JSON Schema counts as an integer.
    fn whole_float(value: &Value) -> bool {
        value.is_f64() && value.as_f64().is_some_and(|x| x.fract() == 0.0)
    }

    /// An integer outside the range of the integer `format` (`uint8`, ...) `schema` names.
    fn beyond_format(schema: &Map<String, Value>, value: &Value) -> bool {
        let range = schema.get("format").and_then(Value::as_str).and_then(super::integer_range);
        let whole = value.as_i64().map(i128::from).or_else(|| value.as_u64().map(i128::from));
        matches!((range, whole), (Some((lo, hi)), Some(w)) if !(lo..=hi).contains(&w))
    }

    /// The checker reads every tool's declared input schema as the ecosystem's validator
    /// (`jsonschema`, full drafts) does: each field's schema, probed with values of every kind and
    /// at its bounds, is met or refused by both alike. Ours is stricter in two ways, by design:
    /// an integer `format`'s range (`uint32`, ...: the Rust type's, which serde would refuse
    /// later with a vaguer message) and a whole number written as a float (`1.0`: serde's integer
    /// types refuse it too). Any other difference fails, naming tool, field and value.
    #[test]
    fn every_tools_input_schema_is_read_as_jsonschema_reads_it() {
        let mut compared = 0;
        let mut differences = Vec::new();
        for tool in crate::tools::catalog() {
            for (field, schema) in fields(&tool.input_schema) {
                let reference = match jsonschema::validator_for(&Value::Object(schema.clone())) {
                    Ok(reference) => reference,
                    Err(e) => panic!("{}: {field}: jsonschema cannot read the schema: {e}", tool.name),
                };
                for value in probes(&schema) {
                    compared += 1;
                    let (ours, theirs) = (check(&schema, &value), reference.is_valid(&value));
                    let stricter_by_design =
                        ours.is_err() && (whole_float(&value) || beyond_format(&schema, &value));
                    if ours.is_ok() != theirs && !(theirs && stricter_by_design) {
                        differences.push(format!(
                            "{} {field} {value}: ours {ours:?}, jsonschema {theirs}",
                            tool.name
                        ));
                    }
                }
            }
        }
        assert!(compared > 1000, "only {compared} values compared");
        assert!(differences.is_empty(), "{} differences:\n{}", differences.len(), differences.join("\n"));
    }
}
