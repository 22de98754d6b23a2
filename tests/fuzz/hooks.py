"""Schemathesis hooks for the GraphQL fuzz run (tests/tests/api_fuzz.rs).

Strategies for the API's own scalars (well-formed values and arbitrary text, so both the happy
path and the parsers are exercised), and the checks: every generated request is client input, so
no answer may be a 5xx, carry an error coded INTERNAL, or carry an error without a code.
Schemathesis's own `not_a_server_error` is left out because it counts resolver errors it does not
recognise by code (ours: BAD_ARGUMENT, BAD_CURSOR, PAGE_TOO_LARGE, ...) as server errors; the check
below is the stricter reading of what the API promises. `negative_data_rejection` is left out too:
`chainId` takes values past GraphQL's 32-bit `Int` on purpose (chain ids can be larger), which the
fuzzer counts as a schema violation. `positive_data_acceptance` is left out because limits (a page
over 100, a search over 200 characters) refuse some schema-valid input with a coded error.
"""

import schemathesis
from hypothesis import strategies as st
from schemathesis.graphql import nodes

_text = st.text(max_size=80)
_hex = lambda n: st.from_regex(rf"\A0x[0-9a-fA-F]{{{n}}}\Z")

schemathesis.graphql.scalar("Address", st.one_of(_hex(40), _text).map(nodes.String))
schemathesis.graphql.scalar("Bytes32", st.one_of(_hex(64), _text).map(nodes.String))
schemathesis.graphql.scalar(
    "BigInt", st.one_of(st.integers(min_value=0, max_value=2**256 - 1).map(str), _text).map(nodes.String)
)
schemathesis.graphql.scalar(
    "DateTime", st.one_of(st.datetimes().map(lambda d: d.isoformat() + "Z"), _text).map(nodes.String)
)


@schemathesis.check
def no_internal_error_for_client_input(ctx, response, case):
    if response.status_code >= 500:
        raise AssertionError(f"HTTP {response.status_code} for client input: {response.text[:200]}")
    try:
        body = response.json()
    except ValueError:
        raise AssertionError(f"not JSON (HTTP {response.status_code}): {response.text[:200]}")
    for error in (body or {}).get("errors") or []:
        code = (error.get("extensions") or {}).get("code")
        if code is None:
            raise AssertionError(f"an error without a code: {error}")
        if code == "INTERNAL":
            raise AssertionError(f"client input answered as INTERNAL: {error}")
