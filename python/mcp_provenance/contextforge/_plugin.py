"""A cpex plugin for ContextForge: the filter's rules on each request's ``_meta``, once the
gateway's hooks carry it (``upstream/contextforge/meta-in-pre-invoke.patch``; ContextForge
1.1.0 with cpex 0.1.4 hands a hook no ``_meta``, and the plugin refuses to load there).

Configured as every cpex plugin is, in the gateway's plugin file::

    plugins:
      - name: "Provenance"
        kind: "mcp_provenance.contextforge.ProvenancePlugin"
        hooks: ["tool_pre_invoke", "tool_post_invoke", "prompt_pre_fetch", "resource_pre_fetch"]
        mode: "sequential"
        on_error: "fail"
        config:
          policy: {userIntent: "redact"}
          audit: "my_company.audit:keep"

For each tool call, prompt and resource read it hands the request's ``_meta`` to
:class:`~mcp_provenance.Filter`, the wire filter every middleware of the package runs: a
request the filter refuses (a bare ``_meta.userIntent`` under a policy that redacts intents,
WIRE-6) is refused with the filter's code and never forwarded; otherwise the gateway forwards
the ``_meta`` the filter made (sanitized and redacted per policy; the very ``_meta`` that came
when nothing needed changing, AI-12). Each request's account (its audit record, or why it was
refused) goes to the ``audit`` sink; a sink that fails refuses the request. On
``tool_post_invoke`` the result's ``_meta`` carries the request's ``turnId`` and nothing
else of the envelope (AI-11).

``config`` holds ``policy``, ``invocationKeys`` and ``uiKeys`` (the filter's options, as
everywhere), ``audit`` (required: ``"module:callable"``, called with each account; async for
a sink that waits on I/O, as a sync one holds the gateway's event loop) and ``echo``
(``false`` leaves results as the server made them). The plugin fails
closed: it will not load unless it runs ``sequential`` with ``on_error: fail`` and the gateway
lets a hook rewrite ``meta``, so that a refusal stops the request and a redaction is what goes
on.
"""

# mypy: disable-error-code="import-untyped, import-not-found, no-any-unimported"
# mypy: disallow-subclassing-any=False

from __future__ import annotations

import importlib
import inspect
import json
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Tuple, cast

from cpex.framework import (
    OnError,
    Plugin,
    PluginConfig,
    PluginContext,
    PluginMode,
    PluginPayload,
    PluginViolation,
    PromptPrehookPayload,
    PromptPrehookResult,
    ResourcePreFetchPayload,
    ResourcePreFetchResult,
    ToolPostInvokePayload,
    ToolPostInvokeResult,
    ToolPreInvokePayload,
    ToolPreInvokeResult,
)

from .._audit import _log_refusal
from .._native import Filter
from ..errors import ProvenanceError, ProvenanceValueError
from ..types import FilterContext, FilterOptions, MessageAccount, Outcome

__all__ = ["ProvenancePlugin"]

#: Called with each request's account (its record, or the code it was refused with).
AccountSink = Callable[[MessageAccount], Any]

#: The ``config`` members handed to the filter as its options.
FILTER_OPTIONS = ("policy", "invocationKeys", "uiKeys")

#: Every ``config`` member the plugin reads.
CONFIG = (*FILTER_OPTIONS, "audit", "echo")

#: The hooks that carry a request's ``_meta``, with the payload each hands a plugin.
PRE_HOOKS = {
    "tool_pre_invoke": ToolPreInvokePayload,
    "prompt_pre_fetch": PromptPrehookPayload,
    "resource_pre_fetch": ResourcePreFetchPayload,
}

#: Where the filter's outcome for a request waits in the plugin's context for ``tool_post_invoke``.
FORWARDED = "mcp_provenance.forwarded"

#: JSON-RPC's internal error: the gateway could not audit, so it does not serve.
INTERNAL_ERROR = -32603


class ProvenancePlugin(Plugin):
    """Runs the package's filter on the ``_meta`` of every request a pre-invoke hook sees.

    Raises :class:`~mcp_provenance.ProvenanceValueError` (code ``invalid-option`` or
    ``unknown-option``) for a ``config`` it cannot run, and
    :class:`~mcp_provenance.ProvenanceError` with code ``hook-without-meta`` where the
    gateway hands hooks no ``_meta`` or would drop what a hook returns.
    """

    def __init__(self, config: PluginConfig) -> None:
        super().__init__(config)
        options = dict(config.config or {})
        unknown = sorted(set(options) - set(CONFIG))
        if unknown:
            raise ProvenanceValueError(
                f"ProvenancePlugin config has no member {unknown[0]!r}; it reads {', '.join(CONFIG)}", "unknown-option")
        if config.mode != PluginMode.SEQUENTIAL or config.on_error != OnError.FAIL:
            raise ProvenanceValueError(
                "ProvenancePlugin refuses and rewrites requests: it runs with mode 'sequential' and on_error 'fail'",
                "invalid-option")
        if "tool_pre_invoke" not in config.hooks:
            raise ProvenanceValueError("ProvenancePlugin needs the tool_pre_invoke hook", "invalid-option")
        _check_gateway_forwards_meta([hook for hook in config.hooks if hook in PRE_HOOKS])
        self._filter = Filter(cast(FilterOptions, {name: options[name] for name in FILTER_OPTIONS if name in options}))
        self._audit = _sink(options.get("audit"))
        echo = options.get("echo", True)
        if not isinstance(echo, bool):
            raise ProvenanceValueError("ProvenancePlugin config 'echo' must be a boolean", "invalid-option")
        self._echo = echo

    async def tool_pre_invoke(self, payload: ToolPreInvokePayload, context: PluginContext) -> ToolPreInvokeResult:
        """Refuses the call, or lets it go on with the ``_meta`` the filter made."""
        modified, violation = await self._admit(payload, "tools/call", {"name": payload.name}, context)
        return ToolPreInvokeResult(continue_processing=violation is None, violation=violation, modified_payload=modified)

    async def tool_post_invoke(self, payload: ToolPostInvokePayload, context: PluginContext) -> ToolPostInvokeResult:
        """The result with the request's ``turnId`` in its ``_meta``, and nothing else of the envelope."""
        forwarded: Optional[Outcome] = context.state.get(FORWARDED)
        result = payload.result
        if not self._echo or forwarded is None or not isinstance(result, dict):
            return ToolPostInvokeResult(continue_processing=True)
        meta = result.get("_meta")
        answer = json.dumps({"jsonrpc": "2.0", "id": context.global_context.request_id,
                             "result": {"_meta": meta} if isinstance(meta, dict) else {}})
        echoed = self._filter.echo(answer, forwarded)
        if echoed is None:
            # The filter reads every answer written here; were it not to, the result stops here.
            raise ProvenanceError("the result's _meta could not be echoed into", "internal-error")
        if echoed is answer:
            return ToolPostInvokeResult(continue_processing=True)
        echoed_meta = json.loads(echoed)["result"]["_meta"]
        return ToolPostInvokeResult(continue_processing=True,
                                    modified_payload=payload.model_copy(update={"result": {**result, "_meta": echoed_meta}}))

    async def prompt_pre_fetch(self, payload: PromptPrehookPayload, context: PluginContext) -> PromptPrehookResult:
        """Refuses the prompt request, or lets it go on with the ``_meta`` the filter made."""
        modified, violation = await self._admit(payload, "prompts/get", {"name": payload.prompt_id}, context)
        return PromptPrehookResult(continue_processing=violation is None, violation=violation, modified_payload=modified)

    async def resource_pre_fetch(self, payload: ResourcePreFetchPayload, context: PluginContext) -> ResourcePreFetchResult:
        """Refuses the resource read, or lets it go on with the ``_meta`` the filter made."""
        modified, violation = await self._admit(payload, "resources/read", {"uri": payload.uri}, context)
        return ResourcePreFetchResult(continue_processing=violation is None, violation=violation, modified_payload=modified)

    async def _admit(self, payload: PluginPayload, method: str, params: Dict[str, Any],
                     context: PluginContext) -> Tuple[Optional[PluginPayload], Optional[PluginViolation]]:
        """Filters the ``method`` request whose ``params`` (but ``_meta``) a hook's ``payload``
        holds: the payload with the ``_meta`` to forward (``None`` when it goes on as it came),
        or the violation that refuses it. Its id is the gateway's request id, the JSON-RPC id
        being out of a hook's reach."""
        meta = payload.meta
        request: Dict[str, Any] = {"jsonrpc": "2.0", "id": context.global_context.request_id, "method": method,
                                   "params": params if meta is None else {**params, "_meta": meta}}
        body = json.dumps(request)
        outcome: Outcome = self._filter(body, _witnessed(context))
        [account] = outcome["messages"]
        try:
            kept = self._audit(account)
            if inspect.isawaitable(kept):
                await kept
        except Exception as failure:  # pylint: disable=broad-except
            code = getattr(failure, "code", None)
            code = code if isinstance(code, str) else "audit-failed"
            _log_refusal(request, failure, code)
            return None, PluginViolation(reason="refused by the provenance filter", description="the request could not be audited",
                                          code=code, details={"code": code}, mcp_error_code=INTERNAL_ERROR)
        if "reject" in outcome:
            error = json.loads(outcome["reject"])["error"]
            return None, PluginViolation(reason="refused by the provenance filter", description=error["message"],
                                          code=error["data"]["code"], details=error["data"],
                                          mcp_error_code=error["code"])
        context.state[FORWARDED] = outcome
        forward = outcome["forward"]
        if forward is body:
            return None, None
        forwarded: Dict[str, Any] = json.loads(forward)["params"]
        return payload.model_copy(update={"meta": forwarded.get("_meta")}), None


def _witnessed(context: PluginContext) -> FilterContext:
    """What the gateway itself knows of the request: when the plugin saw it, and the user the
    gateway authenticated (never a client's header)."""
    witnessed: FilterContext = {
        "receivedAt": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")}
    principal = context.user_email
    if isinstance(principal, str) and principal:
        witnessed["principal"] = principal
    return witnessed


def _sink(name: object) -> AccountSink:
    """The ``audit`` sink named ``"module:callable"``."""
    if not isinstance(name, str) or name.count(":") != 1:
        raise ProvenanceValueError("ProvenancePlugin config 'audit' must be 'module:callable'", "invalid-option")
    module, attribute = name.split(":")
    try:
        sink: AccountSink = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as missing:
        raise ProvenanceValueError(f"ProvenancePlugin config 'audit' names {name!r}, which cannot be imported",
                                   "invalid-option") from missing
    if not callable(sink):
        raise ProvenanceValueError(f"ProvenancePlugin config 'audit' names {name!r}, which is not callable",
                                   "invalid-option")
    return sink


def _check_gateway_forwards_meta(hooks: List[str]) -> None:
    """Raises unless each of ``hooks`` hands a plugin the request's ``_meta`` and the gateway
    forwards the ``_meta`` a plugin returns: where it would not, a refusal could still hold,
    but a redaction would be dropped and the very words it removes sent on."""
    try:
        from mcpgateway.plugins.policy import HOOK_PAYLOAD_POLICIES  # pylint: disable=import-outside-toplevel
    except ImportError as missing:
        raise ProvenanceError("ProvenancePlugin runs inside ContextForge (mcpgateway)", "hook-without-meta") from missing
    for hook in hooks:
        payload_type = PRE_HOOKS[hook]
        policy = HOOK_PAYLOAD_POLICIES.get(hook)
        if "meta" not in payload_type.model_fields or policy is None or "meta" not in policy.writable_fields:
            raise ProvenanceError(
                f"this ContextForge does not hand {hook} hooks the request's _meta or forward what they return: "
                "apply upstream/contextforge/meta-in-pre-invoke.patch, or serve mcp_provenance.contextforge:app",
                "hook-without-meta")
