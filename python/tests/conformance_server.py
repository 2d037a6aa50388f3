"""A FastMCP server with what the official conformance suite's server
scenarios call (@modelcontextprotocol/conformance: its tools, resources and
prompts, named and shaped as each scenario's description asks), served over
Streamable HTTP by uvicorn on 127.0.0.1, with or without the ASGI middleware
in front of it, so that the suite's results can be compared.

    python conformance_server.py [--middleware] [--redact-intent] [--audit FILE] [--port N]

prints "listening on http://127.0.0.1:<port>/mcp" once it serves (port 0,
the default: one the system picks). With --audit, the middleware appends
each message's log line to FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import socket
import sys
import warnings
from typing import Any, Dict, List, Optional, TextIO

import mcp_types as mt
import uvicorn
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.prompts import Message
from fastmcp.server.event_store import EventStore
from fastmcp.tools import Tool, ToolResult
from mcp.shared.exceptions import MCPDeprecationWarning

from mcp_provenance.asgi import ProvenanceMiddleware
from mcp_provenance.types import MessageAccount

#: A 1x1 red PNG and a tiny silent WAV: the "minimal" image and audio the scenarios ask for.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = base64.b64encode(b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00"
                       b"\x02\x00\x10\x00data\x00\x00\x00\x00").decode()

#: The input schema the json-schema-2020-12 scenario looks for, kept as written (SEP-1613).
SCHEMA_2020_12: Dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}

#: What elicitation-sep1034-defaults asks for: a default for every primitive type.
DEFAULTS_SCHEMA: Dict[str, Any] = {"type": "object", "properties": {
    "name": {"type": "string", "default": "John Doe"},
    "age": {"type": "integer", "default": 30},
    "score": {"type": "number", "default": 95.5},
    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
    "verified": {"type": "boolean", "default": True},
}}

#: What elicitation-sep1330-enums asks for: its five kinds of enum.
ENUMS_SCHEMA: Dict[str, Any] = {"type": "object", "properties": {
    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
    "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"},
                                                  {"const": "value2", "title": "Second Option"},
                                                  {"const": "value3", "title": "Third Option"}]},
    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
    "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                         {"const": "value2", "title": "Second Choice"},
                                                         {"const": "value3", "title": "Third Choice"}]}},
}}


def server() -> FastMCP:
    """The server the suite's scenarios call."""
    made = FastMCP("mcp-provenance-conformance")

    @made.tool
    def test_simple_text() -> str:
        """Returns simple text."""
        return "This is a simple text response for testing."

    @made.tool
    def test_image_content() -> ToolResult:
        """Returns an image."""
        return ToolResult([mt.ImageContent(type="image", data=PNG, mime_type="image/png")])

    @made.tool
    def test_audio_content() -> ToolResult:
        """Returns audio."""
        return ToolResult([mt.AudioContent(type="audio", data=WAV, mime_type="audio/wav")])

    @made.tool
    def test_embedded_resource() -> ToolResult:
        """Returns an embedded resource."""
        return ToolResult([_embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")])

    @made.tool
    def test_multiple_content_types() -> ToolResult:
        """Returns text, an image and a resource."""
        return ToolResult([mt.TextContent(type="text", text="Multiple content types test:"),
                           mt.ImageContent(type="image", data=PNG, mime_type="image/png"),
                           _embedded("test://mixed-content-resource", "application/json", '{"test":"data","value":123}')])

    @made.tool
    async def test_tool_with_logging(ctx: Context) -> str:
        """Logs three messages as it runs."""
        await ctx.info("Tool execution started")
        await asyncio.sleep(0.05)
        await ctx.info("Tool processing data")
        await asyncio.sleep(0.05)
        await ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @made.tool
    def test_error_handling() -> str:
        """Always fails."""
        raise ToolError("This tool intentionally returns an error for testing")

    @made.tool
    async def test_tool_with_progress(ctx: Context) -> str:
        """Reports its progress as it runs."""
        for progress in (0, 50, 100):
            await ctx.report_progress(progress, 100)
            if progress < 100:
                await asyncio.sleep(0.05)
        return "Tool with progress executed successfully"

    @made.tool
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Asks the client's model."""
        message = mt.SamplingMessage(role="user", content=mt.TextContent(type="text", text=prompt))
        sampled = await ctx.session.create_message([message], max_tokens=100, related_request_id=ctx.request_id)
        content = sampled.content
        return f"LLM response: {content.text if isinstance(content, mt.TextContent) else content}"

    @made.tool
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Asks the user for a name and an address."""
        schema = {"type": "object", "required": ["username", "email"], "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}}}
        answered = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        return f"User response: action={answered.action}, content={json.dumps(answered.content)}"

    @made.tool
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Asks with a default for every primitive type."""
        return await _elicited(ctx, "Please review and update the form fields with defaults", DEFAULTS_SCHEMA)

    @made.tool
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Asks with every kind of enum."""
        return await _elicited(ctx, "Please select options from the enum fields", ENUMS_SCHEMA)

    @made.tool
    async def test_reconnection(ctx: Context) -> str:
        """Closes its event stream mid-call; the client reconnects and gets the result."""
        await ctx.close_sse_stream()
        await asyncio.sleep(0.1)
        return "Reconnection test completed"

    def json_schema_2020_12_tool(name: str = "") -> str:
        return f"Hello {name}"

    tool = Tool.from_function(json_schema_2020_12_tool, description="Tool with JSON Schema 2020-12 features")
    made.add_tool(tool.model_copy(update={"parameters": SCHEMA_2020_12}))

    @made.resource("test://static-text", mime_type="text/plain", description="A static text resource")
    def static_text() -> str:
        return "This is the content of the static text resource."

    @made.resource("test://static-binary", mime_type="image/png", description="A static binary resource")
    def static_binary() -> bytes:
        return base64.b64decode(PNG)

    @made.resource("test://watched-resource", mime_type="text/plain", description="A resource to subscribe to")
    def watched_resource() -> str:
        return "Watched resource content"

    @made.resource("test://template/{id}/data", mime_type="application/json", description="A resource template")
    def template_data(id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))

    @made.prompt
    def test_simple_prompt() -> str:
        """A prompt without arguments."""
        return "This is a simple prompt for testing."

    @made.prompt
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with two arguments."""
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @made.prompt
    def test_prompt_with_embedded_resource(resourceUri: str) -> List[Message]:
        """A prompt that embeds a resource."""
        return [Message(_embedded(resourceUri, "text/plain", "Embedded resource content for testing.")),
                Message("Please process the embedded resource above.")]

    @made.prompt
    def test_prompt_with_image() -> List[Message]:
        """A prompt with an image."""
        return [Message(mt.ImageContent(type="image", data=PNG, mime_type="image/png")), Message("Please analyze the image above.")]

    @made.completion
    def complete(ref: Any, argument: Any, context: Any) -> List[str]:
        return [value for value in ("paris", "park", "party") if value.startswith(argument.value)]

    return made


def _embedded(uri: str, mime_type: str, text: str) -> mt.EmbeddedResource:
    return mt.EmbeddedResource(type="resource", resource=mt.TextResourceContents(uri=uri, mime_type=mime_type, text=text))


async def _elicited(ctx: Context, message: str, schema: Dict[str, Any]) -> str:
    answered = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return f"Elicitation completed: action={answered.action}, content={json.dumps(answered.content)}"


class Lines:
    """The middleware's sink: each message's log line appended to a file."""

    def __init__(self, log: TextIO) -> None:
        self._log = log

    def __call__(self, account: MessageAccount, line: str) -> None:
        self._log.write(line + "\n")
        self._log.flush()


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--middleware", action="store_true", help="serve through mcp_provenance.asgi.ProvenanceMiddleware")
    parser.add_argument("--redact-intent", action="store_true", help="the middleware's policy redacts userIntent.text")
    parser.add_argument("--audit", help="the file the middleware appends each message's line to")
    parser.add_argument("--port", type=int, default=0)
    options = parser.parse_args(argv)
    # The suite speaks 2025 protocol versions: the SDK's warnings that 2026-07-28 deprecates
    # logging and sampling say nothing here.
    warnings.simplefilter("ignore", MCPDeprecationWarning)
    # Resumable streams (test_reconnection), and the server's own DNS-rebinding guard.
    app: Any = server().http_app(event_store=EventStore(), retry_interval=100, host_origin_protection=True)
    if options.middleware:
        log = open(options.audit, "a", encoding="utf-8") if options.audit else None
        app = ProvenanceMiddleware(app, policy={"userIntent": "redact"} if options.redact_intent else None,
                                   audit=Lines(log) if log is not None else None)
    listening = socket.socket()
    listening.bind(("127.0.0.1", options.port))
    port = listening.getsockname()[1]
    served = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    # Said once the server is up: a test starts the suite on it then.
    startup = served.startup

    async def started(sockets: Optional[List[socket.socket]] = None) -> None:
        await startup(sockets)
        print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)

    served.startup = started  # type: ignore[method-assign]
    served.run(sockets=[listening])


if __name__ == "__main__":
    main(sys.argv[1:])
