"""Which of ContextForge's routes pass MCP on, found from its own route table, and the
:class:`Gateway` that serves each request as its route asks.

Each route is classified in :data:`ROUTES` by the code that serves it: its endpoint,
``module.function``, the same for a route and its ``/v1`` twin, its legacy alias, its
trailing-slash variant and its ``/v1/virtual-servers`` alias; a mount by its path. A class
says what the body is, and so what the gateway does with it:

- :data:`MESSAGES`: JSON-RPC in and out (``/rpc``, the ``/mcp`` mount): the middleware,
  both ways.
- :data:`MESSAGE`: one JSON-RPC message, answered in a form of ContextForge's own (``null``,
  a receipt): filtered; the answer goes back as ContextForge made it.
- :func:`params`: the params of one MCP request (``/protocol/completion/complete``):
  filtered as that request; ContextForge gets the params the filter forwarded.
- :data:`NONE`: passes no MCP params or ``_meta`` upstream (the admin API, the UI, auth,
  health), or hands its messages to ``/rpc`` over loopback, where they are filtered.
- :data:`REFUSED`: ContextForge's own internal hops, which this app does not serve.

:class:`RouteTable` walks an app's routes when the gateway is made (Starlette's ``Route``
and ``Mount``, FastAPI's ``APIRoute`` and the routers it includes) and matches a request
as the app does: the first route that matches it whole, else the first that matches its
path (which answers 405), under the root path the app itself uses. A route that takes a
POST, PUT or PATCH and is not in :data:`ROUTES` is :data:`UNCLASSIFIED`: the gateway refuses
a body sent to it (501) rather than pass it unread, and says at start which routes those are.

>>> from starlette.routing import Mount, Route
>>> async def rpc(request): ...
>>> async def tools(request): ...
>>> table = RouteTable([Route("/rpc", rpc, methods=["POST"]), Route("/tools", tools, methods=["GET", "POST"]),
...                     Mount("/mcp", app=tools)],
...                    {f"{__name__}.rpc": MESSAGES, "mount /mcp": MESSAGES})
>>> def found(path, method="POST"):
...     return table.find({"type": "http", "method": method, "path": path, "root_path": "", "headers": []}).handling.kind
>>> found("/rpc"), found("/mcp/"), found("/rpc", "PUT"), found("/tools", "GET"), found("/tools"), found("/nowhere")
('messages', 'messages', 'none', 'unclassified', 'unclassified', 'none')
>>> table.unclassified()
['GET,HEAD,POST /tools (mcp_provenance.contextforge._routes.tools)']
"""

from __future__ import annotations

import importlib
import json
import logging
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from starlette.routing import Match, Mount, WebSocketRoute

from ..asgi import App, Receive, Scope, Send
from ._params import ParamsFilter

LOGGER = logging.getLogger("mcp_provenance")

#: The methods whose requests carry a body a route may pass on.
BODY_METHODS = frozenset(("POST", "PUT", "PATCH"))


class Handling(NamedTuple):
    """What the gateway does with a request to a route: ``kind`` (``"messages"``,
    ``"message"``, ``"params"``, ``"none"``, ``"refused"``, ``"unclassified"``) and, for
    ``"params"``, the MCP ``method`` whose params the body is."""

    kind: str
    method: Optional[str] = None


#: The body is JSON-RPC, and so is the answer: the middleware, both ways.
MESSAGES = Handling("messages")
#: The body is one JSON-RPC message, answered in a form of the app's own: filtered, the answer as it comes.
MESSAGE = Handling("message")
#: The route passes no MCP params or ``_meta`` upstream.
NONE = Handling("none")
#: The route is not served through the gateway.
REFUSED = Handling("refused")
#: A route not in the table.
UNCLASSIFIED = Handling("unclassified")


def params(method: str) -> Handling:
    """The body is the params of a ``method`` request."""
    return Handling("params", method)


def _each(handling: Handling, module: str, names: str) -> Dict[str, Handling]:
    """``handling`` for each endpoint of ``module`` in ``names`` (separated by white space)."""
    return {f"{module}.{name}": handling for name in names.split()}


_MAIN = "mcpgateway.main"
_ROUTERS = "mcpgateway.routers"

#: ContextForge 1.1.0's routes that take a body, every feature on (the admin API and UI, A2A,
#: observability, the reverse proxy, ToolOps, SSO, SIEM, LLM chat, the Vault OAuth backend),
#: by endpoint; a mount by ``mount <path>``.
ROUTES: Mapping[str, Handling] = {
    # Streamable HTTP, and what ContextForge rewrites to it before routing: /mcp,
    # /servers/<id>/mcp and /v1/virtual-servers/<id>/mcp, and all under /mcp.
    "mount /mcp": MESSAGES,
    # /rpc (the SSE and WebSocket transports hand each message to it over loopback).
    f"{_MAIN}.handle_rpc": MESSAGES,
    # An MCP App's /appbridge/sessions/<id>/rpc: tools/call and resources/read go upstream.
    f"{_MAIN}.handle_mcp_app_session_rpc": MESSAGES,
    # /protocol/ping: a ping, answered in JSON-RPC.
    f"{_MAIN}.ping": MESSAGES,
    # /protocol/notifications and /notifications: a notification, answered `null`.
    f"{_MAIN}.handle_notification": MESSAGE,
    # /reverse-proxy/sessions/<id>/request: an MCP request sent to a reverse-proxied
    # server, answered with a receipt.
    f"{_ROUTERS}.reverse_proxy.send_request_to_session": MESSAGE,
    # /protocol/initialize and /initialize.
    f"{_MAIN}.initialize": params("initialize"),
    # /protocol/completion/complete: ContextForge sends the params' _meta to the prompt's
    # or resource's upstream.
    f"{_MAIN}.handle_completion": params("completion/complete"),
    # /protocol/sampling/createMessage.
    f"{_MAIN}.handle_sampling": params("sampling/createMessage"),
    # /_internal/mcp/*: ContextForge's own hops (its Rust runtime's, session affinity's),
    # gated on loopback and a shared secret. It makes the affinity hop in process, never
    # through this app; a Rust runtime would take MCP around it.
    **_each(REFUSED, _MAIN, """
        handle_internal_mcp_authenticate handle_internal_mcp_completion_complete handle_internal_mcp_initialize
        handle_internal_mcp_logging_set_level handle_internal_mcp_notifications_cancelled
        handle_internal_mcp_notifications_initialized handle_internal_mcp_notifications_message
        handle_internal_mcp_prompts_get handle_internal_mcp_prompts_get_authz handle_internal_mcp_prompts_list
        handle_internal_mcp_prompts_list_authz handle_internal_mcp_resource_templates_list
        handle_internal_mcp_resource_templates_list_authz handle_internal_mcp_resources_list
        handle_internal_mcp_resources_list_authz handle_internal_mcp_resources_read
        handle_internal_mcp_resources_read_authz handle_internal_mcp_resources_subscribe
        handle_internal_mcp_resources_unsubscribe handle_internal_mcp_roots_list handle_internal_mcp_rpc
        handle_internal_mcp_sampling_create_message handle_internal_mcp_tools_call handle_internal_mcp_tools_call_metric
        handle_internal_mcp_tools_list handle_internal_mcp_tools_list_authz"""),
    # The SSE transport's POSTs (/servers/<id>/message, /message): each message goes to /rpc
    # over loopback, through this app, and is filtered there.
    **_each(NONE, _MAIN, "message_endpoint utility_message_endpoint"),
    # The catalog's CRUD and state: tools, resources, prompts, servers, gateways, roots, A2A
    # agents; import and export; metrics; the log level.
    **_each(NONE, _MAIN, """
        add_root create_a2a_agent create_prompt create_resource create_server create_tool register_gateway
        update_a2a_agent update_gateway update_prompt update_resource update_root update_server update_tool
        set_a2a_agent_state set_gateway_state set_prompt_state set_resource_state set_server_state set_tool_state
        toggle_a2a_agent_status toggle_gateway_status toggle_prompt_status toggle_resource_status
        toggle_server_status toggle_tool_status
        cleanup_import_statuses export_selective_configuration import_configuration reset_metrics set_log_level"""),
    # POST /prompts/<id> renders a prompt from string arguments (no _meta goes on); a
    # tool's preview calls nothing; /resources/subscribe reads no body; a gateway's tools
    # are refreshed and a server's handshake tested by ContextForge as a client of its
    # own; an MCP App's session is made for a resource.
    **_each(NONE, _MAIN, """
        get_prompt preview_tool subscribe_resource refresh_gateway_tools test_server_mcp_handshake
        create_mcp_app_session"""),
    # A2A, which carries no MCP _meta: agents invoked, and ContextForge's internal A2A hops.
    **_each(NONE, _MAIN, """
        invoke_a2a_agent invoke_a2a_agent_by_id invoke_a2a_agent_jsonrpc
        handle_internal_a2a_agent_card handle_internal_a2a_agent_resolve handle_internal_a2a_authenticate
        handle_internal_a2a_events_flush handle_internal_a2a_events_replay handle_internal_a2a_get_authz
        handle_internal_a2a_invoke_authz handle_internal_a2a_list_authz handle_internal_a2a_push_create
        handle_internal_a2a_push_delete handle_internal_a2a_push_get handle_internal_a2a_push_list
        handle_internal_a2a_tasks_cancel handle_internal_a2a_tasks_get handle_internal_a2a_tasks_list"""),
    # The admin UI's forms and API (MCPGATEWAY_ADMIN_API_ENABLED): the catalog, users,
    # teams, settings; its tests of a gateway or an agent send an operator's own request.
    **_each(NONE, "mcpgateway.admin", """
        admin_activate_user admin_add_a2a_agent admin_add_gateway admin_add_prompt admin_add_resource admin_add_root
        admin_add_server admin_add_team_members admin_add_tool admin_approve_join_request
        admin_create_a2a_plugin_binding admin_create_grpc_service admin_create_join_request admin_create_team
        admin_create_user admin_deactivate_user admin_delete_a2a_agent admin_delete_a2a_plugin_binding
        admin_delete_gateway admin_delete_grpc_service admin_delete_prompt admin_delete_resource admin_delete_root
        admin_delete_server admin_delete_tool admin_discover_oauth admin_edit_a2a_agent admin_edit_gateway
        admin_edit_prompt admin_edit_resource admin_edit_server admin_edit_tool admin_export_selective
        admin_force_password_change admin_forgot_password_handler admin_import_configuration admin_import_preview
        admin_import_tools admin_leave_team admin_login_handler admin_logout_post admin_reflect_grpc_service
        admin_reject_join_request admin_remove_team_member admin_reset_metrics admin_reset_password_handler
        admin_set_a2a_agent_state admin_set_gateway_state admin_set_grpc_service_state admin_set_prompt_state
        admin_set_resource_state admin_set_server_state admin_set_tool_state admin_test_a2a_agent admin_test_gateway
        admin_unlock_user admin_update_gateway_rest admin_update_grpc_service admin_update_root admin_update_team
        admin_update_team_member_role admin_update_user bulk_register_catalog_servers
        change_password_required_handler generate_schemas_from_openapi invalidate_a2a_stats_cache
        invalidate_passthrough_headers_cache register_catalog_server save_observability_query toggle_plugins_global
        track_query_usage transfer_gateway_ownership update_global_passthrough_headers update_observability_query
        update_plugin_mode"""),
    # Authentication, users, teams, tokens, roles, SSO.
    **_each(NONE, f"{_ROUTERS}.auth", "login logout refresh_session"),
    **_each(NONE, f"{_ROUTERS}.email_auth", """
        change_password complete_password_reset create_user forgot_password login register unlock_user update_user"""),
    **_each(NONE, f"{_ROUTERS}.teams", """
        accept_team_invitation add_team_member approve_join_request create_team decline_team_invitation
        invite_team_member request_to_join_team update_team update_team_member"""),
    **_each(NONE, f"{_ROUTERS}.tokens", "create_team_token create_token update_token"),
    **_each(NONE, f"{_ROUTERS}.rbac", "assign_role_to_user check_permission create_role update_role"),
    **_each(NONE, f"{_ROUTERS}.sso", "create_sso_provider handle_approval_request update_sso_provider"),
    **_each(NONE, f"{_ROUTERS}.sso_user_provisioning", "create_sso_user"),
    # LLM chat and its providers: a chat's tool calls are ContextForge's own, as a client of
    # the servers it connects to; the LLM proxy speaks to LLM providers.
    **_each(NONE, f"{_ROUTERS}.llmchat_router", "chat connect disconnect"),
    **_each(NONE, f"{_ROUTERS}.llm_proxy_router", "chat_completions"),
    **_each(NONE, f"{_ROUTERS}.llm_config_router", """
        check_provider_health create_model create_provider set_model_state set_provider_state update_model
        update_provider"""),
    **_each(NONE, f"{_ROUTERS}.llm_admin_router", """
        admin_test_api check_provider_health fetch_provider_models set_model_state_html set_provider_state_html
        sync_provider_models"""),
    # ToolOps: test cases and enrichment made by an LLM, run by ContextForge itself.
    **_each(NONE, f"{_ROUTERS}.toolops_router", "enrich_a_tool execute_tool_nl_testcases generate_testcases_for_tool"),
    # Everything else: plugin bindings, cancellation (local), the catalog, compliance,
    # logs, metrics, OAuth, observability, OpenAPI schemas, SIEM, connectivity checks.
    **_each(NONE, f"{_ROUTERS}.a2a_agent_plugin_bindings", "upsert_a2a_agent_plugin_binding"),
    **_each(NONE, f"{_ROUTERS}.tool_plugin_bindings", "upsert_tool_plugin_bindings"),
    **_each(NONE, f"{_ROUTERS}.cancellation_router", "cancel_run"),
    **_each(NONE, f"{_ROUTERS}.catalog", "register_catalog_server"),
    **_each(NONE, f"{_ROUTERS}.compliance_router", "generate_report"),
    **_each(NONE, f"{_ROUTERS}.log_search", "search_logs"),
    **_each(NONE, f"{_ROUTERS}.metrics_maintenance", "trigger_cleanup trigger_rollup"),
    **_each(NONE, f"{_ROUTERS}.mcp_servers_router", "check_mcp_server_connectivity check_mcp_server_handshake"),
    **_each(NONE, f"{_ROUTERS}.oauth_router", "fetch_tools_after_oauth"),
    **_each(NONE, f"{_ROUTERS}.observability", "export_traces query_traces_advanced"),
    **_each(NONE, f"{_ROUTERS}.openapi_schema_router", "generate_schemas_from_openapi"),
    **_each(NONE, f"{_ROUTERS}.siem", "add_siem_destination replace_siem_destinations test_siem_destination"),
    # The UI's static files (MCPGATEWAY_UI_ENABLED).
    "mount /static": NONE,
}


class Route(NamedTuple):
    """One route of the app, as the table knows it."""

    #: What matches a request (Starlette's ``matches(scope)``).
    route: Any
    #: The methods it takes (``None``: every one, as a mount).
    methods: Optional[FrozenSet[str]]
    #: Its path as the app has it, e.g. ``/v1/servers/{server_id}``.
    path: str
    #: Its endpoint (``module.function``) or ``mount <path>``; ``None`` when it has no name
    #: that says which code serves it.
    name: Optional[str]
    handling: Handling

    def __str__(self) -> str:
        methods = ",".join(sorted(self.methods)) if self.methods is not None else "*"
        return f"{methods} {self.path} ({self.name or 'an endpoint without a name'})"

    @property
    def takes_body(self) -> bool:
        """Whether it takes a POST, PUT or PATCH."""
        return self.methods is None or not self.methods.isdisjoint(BODY_METHODS)


class Found(NamedTuple):
    """What a request gets: the ``handling`` of the ``route`` the app would serve it with
    (``None``, and :data:`NONE`, when the app answers it itself: 404, 405, a redirect)."""

    handling: Handling
    route: Optional[Route]


#: What the app answers itself with, serving no route.
_NOWHERE = Found(NONE, None)


class RouteTable:
    """``routes`` (an app's, in order), each with its handling from ``table``, matched as the
    app matches them. ``root_path`` is the one the app sets on each request (FastAPI's
    ``root_path``), ``rewrite`` what the app's own middleware does to a request's path
    before routing it."""

    def __init__(self, routes: Sequence[Any], table: Mapping[str, Handling] = ROUTES, root_path: str = "",
                 rewrite: Optional[Callable[[Scope], Scope]] = None) -> None:
        self.routes: List[Route] = [_route(route, table) for route in _leaves(routes)
                                    if not isinstance(getattr(route, "original_route", route), WebSocketRoute)]
        self._root_path = root_path
        self._rewrite = rewrite
        # Routes by the literal segments their paths begin with (at most two): a request
        # is matched against the few that can match it, in their order.
        self._index: Dict[Tuple[str, ...], List[int]] = {}
        for at, route in enumerate(self.routes):
            self._index.setdefault(_literal_segments(route.path), []).append(at)

    def find(self, scope: Scope) -> Found:
        """The route the app would serve the HTTP request ``scope`` with, and its handling."""
        probe: Scope = {**scope, "root_path": self._root_path or scope.get("root_path", "")}
        if self._rewrite is not None:
            probe = self._rewrite(probe)
        partial: Optional[Route] = None
        for at in self._candidates(_route_path(probe)):
            route = self.routes[at]
            match, _ = route.route.matches(probe)
            if match is Match.FULL:
                return Found(route.handling, route)
            if match is Match.PARTIAL and partial is None:
                partial = route
        # A route that matches the path alone answers 405, reading nothing.
        return Found(NONE, partial) if partial is not None else _NOWHERE

    def unclassified(self) -> List[str]:
        """Each route that takes a body and is not in the table."""
        return [str(route) for route in self.routes if route.handling is UNCLASSIFIED and route.takes_body]

    def _candidates(self, path: Optional[str]) -> List[int]:
        """The routes that can match ``path`` (every route when it is not a path), in order."""
        if path is None or not path.startswith("/"):
            return list(range(len(self.routes)))
        segments = path[1:].split("/", 2)
        keys = [(), tuple(segments[:1]), tuple(segments[:2])] if len(segments) > 1 else [(), tuple(segments)]
        found: List[int] = []
        for key in keys:
            found += self._index.get(key, ())
        return sorted(found)


def _leaves(routes: Sequence[Any]) -> List[Any]:
    """``routes`` with the routers FastAPI includes replaced by their routes, each with its
    full path and its own ``matches``; as they are where FastAPI copies included routes."""
    try:
        contexts = importlib.import_module("fastapi.routing").iter_route_contexts
    except (ImportError, AttributeError):
        return list(routes)
    return list(contexts(routes))


def _route(route: Any, table: Mapping[str, Handling]) -> Route:
    """``route`` with its handling in ``table``."""
    path = getattr(route, "path", None)
    path = path if isinstance(path, str) else ""
    methods = getattr(route, "methods", None)
    if isinstance(getattr(route, "original_route", route), Mount):
        name: Optional[str] = f"mount {path}"
        methods = None
    else:
        endpoint = getattr(route, "endpoint", None)
        module, qualname = getattr(endpoint, "__module__", None), getattr(endpoint, "__qualname__", None)
        # A function made inside another (a decorator that does not wrap) says not which code it serves.
        known = isinstance(module, str) and isinstance(qualname, str) and "<locals>" not in qualname
        name = f"{module}.{qualname}" if known else None
    handling = table.get(name, UNCLASSIFIED) if name is not None else UNCLASSIFIED
    return Route(route, frozenset(methods) if methods is not None else None, path, name, handling)


def _literal_segments(path: str) -> Tuple[str, ...]:
    """The segments (at most two) a route's path begins with before any parameter: every
    path it matches begins with them."""
    if not path.startswith("/"):
        return ()
    literal: List[str] = []
    for segment in path[1:].split("/")[:2]:
        if "{" in segment:
            break
        literal.append(segment)
    return tuple(literal)


def _route_path(scope: Scope) -> Optional[str]:
    """The path a route matches (Starlette's ``get_route_path``): the request's, without the
    root path it begins with."""
    path = scope.get("path")
    if not isinstance(path, str):
        return None
    root = scope.get("root_path") or ""
    if not root or not path.startswith(root):
        return path
    if path == root:
        return ""
    return path[len(root):] if path[len(root)] == "/" else path


class Gateway:
    """An app (``contextforge``), each HTTP request served as the route the app would serve it
    with asks (``routes``): through ``middleware(contextforge)``, the package's middleware (JSON-RPC);
    through a :class:`~._params.ParamsFilter` (params, or a message answered apart), which makes
    its own with ``middleware``; refused (403, 501 for a route not classified that takes a
    body); or straight to the app. WebSockets and lifespan go straight to the app."""

    def __init__(self, contextforge: App, routes: RouteTable, middleware: Callable[[App], App]) -> None:
        self._contextforge = contextforge
        self.routes = routes
        self._messages = middleware(contextforge)
        # A filter for each method whose params a route takes (None: one message, answered apart).
        self._params = {route.handling.method: ParamsFilter(contextforge, middleware, route.handling.method)
                        for route in routes.routes if route.handling.kind in ("params", "message")}
        unclassified = routes.unclassified()
        if unclassified:
            LOGGER.warning("provenance: %d route(s) that take a body are not classified, and are refused: %s",
                           len(unclassified), "; ".join(unclassified))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self._contextforge(scope, receive, send)
        found = self.routes.find(scope)
        kind = found.handling.kind
        if kind == "messages":
            await self._messages(scope, receive, send)
        elif kind in ("params", "message"):
            await self._params[found.handling.method](scope, receive, send)
        elif kind == "refused":
            await _refuse(send, 403, "this route is ContextForge's own internal hop, not served through "
                                     "mcp_provenance.contextforge", "internal-route")
        elif kind == "unclassified" and scope["method"] in BODY_METHODS:
            _refused_unclassified(found)
            await _refuse(send, 501, "mcp_provenance.contextforge does not know what this route passes upstream, "
                                     "and does not serve it", "unclassified-route")
        else:
            await self._contextforge(scope, receive, send)

    def handling(self, scope: Scope) -> str:
        """What the gateway does with the HTTP request ``scope``: ``"messages"``,
        ``"message"``, ``"params <method>"``, ``"none"``, ``"refused"`` or ``"unclassified"``."""
        handling = self.routes.find(scope).handling
        return f"{handling.kind} {handling.method}" if handling.method is not None else handling.kind


def _refused_unclassified(found: Found) -> None:
    """Says which route a body was refused at: its pattern and endpoint, never the request's values."""
    LOGGER.warning("provenance: a body refused at %s, a route not classified", found.route)


async def _refuse(send: Send, status: int, detail: str, code: str) -> None:
    """Answers ``status`` with a JSON error that names the reason and no value of the request."""
    body = json.dumps({"detail": detail, "code": code}, separators=(",", ":")).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body, "more_body": False})
