"""mcp-provenance: carry, check and record why and by whom an MCP request was made.

The rules of SEP-2817 (AI invocation audit context) and MCP Apps initiator
provenance, from the same Rust core as the npm package and the Rust crate,
so that a Python server keeps the very rules a Node gateway or a Rust server
keeps. Every function takes dicts and gives new dicts, never changing its
input (what it does not change is shared, ``arguments`` included).

>>> from mcp_provenance import AI_INVOCATION_KEY, audit_record, validate
>>> request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
...     "name": "execute_query", "arguments": {"sql": "SELECT 1"},
...     "_meta": {AI_INVOCATION_KEY: {"turnId": "t-1", "userIntent": {"text": "Show\\r\\nFAKE"}}}}}
>>> validate(request)["valid"]
True
>>> audit_record(request)["clientAsserted"]
{'turnId': 't-1', 'userIntent': 'Show  FAKE', 'userIntentRedacted': True, 'correlation': [{'kind': 'turn', 'value': 't-1', 'key': 'io.modelcontextprotocol/aiInvocation', 'member': 'turnId'}]}

Servers adopt it in one line: :mod:`mcp_provenance.fastmcp` for FastMCP,
:mod:`mcp_provenance.mcp` for the official ``mcp`` SDK.
"""

from ._native import (
    AI_INVOCATION_KEY,
    UI_KEY,
    Filter,
    Provenance,
    attach_invocation,
    audit_record,
    check_policy,
    clear_initiator,
    echo_turn_id,
    is_reserved_meta_key,
    is_valid_meta_key,
    lift_legacy_arguments,
    sanitize,
    stamp_initiator,
    validate,
)
from .errors import ProvenanceError, ProvenanceTypeError, ProvenanceValueError

__all__ = [
    "AI_INVOCATION_KEY",
    "UI_KEY",
    "Filter",
    "Provenance",
    "ProvenanceError",
    "ProvenanceTypeError",
    "ProvenanceValueError",
    "attach_invocation",
    "audit_record",
    "check_policy",
    "clear_initiator",
    "echo_turn_id",
    "is_reserved_meta_key",
    "is_valid_meta_key",
    "lift_legacy_arguments",
    "sanitize",
    "stamp_initiator",
    "validate",
]
