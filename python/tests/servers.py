"""What the middleware tests share: the request a model's host sends, and a
store that can be made to fail."""

from __future__ import annotations

from typing import Any, Dict, List

from mcp_provenance import AI_INVOCATION_KEY, UI_KEY
from mcp_provenance.types import AuditRecord

#: The `_meta` of a tools/call a host's model chose, with a log-forging intent.
META: Dict[str, Any] = {
    AI_INVOCATION_KEY: {
        "invocationReason": {"text": "The user asked for the open orders"},
        "model": {"name": "example-model"},
        "userIntent": {"text": "show open orders\r\nINFO forged line"},
        "turnId": "turn-7",
        "x-vendor": {"kept": False},
    },
    UI_KEY: {"initiator": "model"},
    "vscode.conversationId": "conv-1",
}

#: What each record keeps of it, whatever the protocol version.
ASSERTED: Dict[str, Any] = {
    "turnId": "turn-7",
    "model": "example-model",
    "invocationReason": "The user asked for the open orders",
    "userIntent": "show open orders  INFO forged line",
    "userIntentRedacted": True,
    "correlation": [
        {"kind": "turn", "value": "turn-7", "key": AI_INVOCATION_KEY, "member": "turnId"},
        {"kind": "conversation", "value": "conv-1", "key": "vscode.conversationId"},
    ],
}


class Store:
    """An audit store; ``failing`` makes it raise, as a full disk would."""

    def __init__(self) -> None:
        self.records: List[AuditRecord] = []
        self.failing = False

    def keep(self, record: AuditRecord, request: Dict[str, Any]) -> None:
        if self.failing:
            raise OSError("the audit store is full")
        self.records.append(record)

    def calls(self) -> List[AuditRecord]:
        return [record for record in self.records if record["method"] == "tools/call"]
