//! Text that the index cannot store: Postgres `text` and `jsonb` refuse the NUL character, so
//! input holding one is refused as bad input before it reaches a query.

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
