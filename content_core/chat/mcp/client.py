"""McpSessions: connections to configured MCP servers through the official `mcp` package, one
per server, opened on first use and closed together; every wait bounded by the server's
`timeout_s`, every failure an `McpError`.

A server that failed (could not start, timed out) is not asked again by the same
`McpSessions`: later calls get the same error at once instead of another full wait.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import Iterable
from contextlib import AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any

from anyio import CancelScope, Event, create_task_group, fail_after
from anyio.abc import TaskGroup

from content_core.chat.mcp.config import McpServerConfig
from content_core.chat.mcp.tools import MediaTool, ToolKind, find_media_tool
from content_core.errors import ContentError, McpError, MissingDependencyError

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["McpSessions", "read_mcp_resource"]

logger = logging.getLogger(__name__)


class McpSessions:
    """Sessions with the servers of `servers` (by id) for one unit of work; an async context
    manager that closes every connection it opened (and stops stdio servers)."""

    def __init__(self, servers: Iterable[McpServerConfig]) -> None:
        self.servers = {server.id: server for server in servers}
        self._stack = AsyncExitStack()
        self._group: TaskGroup | None = None
        self._stop: Event | None = None
        self._clients: dict[str, Client] = {}
        self._broken: dict[str, McpError] = {}
        self._tools: dict[str, list[Any]] = {}  # Any: mcp_types.Tool, imported lazily

    async def __aenter__(self) -> McpSessions:
        # Each connection lives in a task of this group: the SDK's transports hold cancel
        # scopes that must be left in the task that entered them, so a time limit on
        # connecting cannot wrap entering them in the caller's task.
        self._stop = Event()
        self._group = await self._stack.enter_async_context(create_task_group())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._stop is not None:
            self._stop.set()  # each connection closes (the SDK bounds stopping a stdio server)
        if isinstance(exc, Exception):
            # The body's own error: the connections close normally and it propagates as it
            # is (handed to the task group, it would come out wrapped in an ExceptionGroup).
            await self._stack.aclose()
        else:
            await self._stack.__aexit__(exc_type, exc, tb)

    def server(self, server_id: str) -> McpServerConfig:
        """The configuration of `server_id`.

        Raises:
            McpError: no server has that id.
        """
        if server_id not in self.servers:
            raise McpError(f"no MCP server {server_id!r} is configured")
        return self.servers[server_id]

    async def _client(self, server_id: str) -> Client:
        if server_id in self._broken:
            raise self._broken[server_id]
        if server_id in self._clients:
            return self._clients[server_id]
        config = self.server(server_id)
        try:
            from mcp import Client, StdioServerParameters
        except ImportError as exc:
            raise MissingDependencyError(
                "MCP servers need the `mcp` package: pip install 'content-pipeline[mcp]'"
            ) from exc
        target: StdioServerParameters | str
        if config.command is not None:
            program, *args = config.command
            target = StdioServerParameters(
                command=program, args=args, env=config.env, cwd=config.cwd
            )
        else:
            assert config.url is not None  # the config's validator: exactly one of the two
            target = config.url
        if self._group is None or self._stop is None:
            raise RuntimeError("McpSessions is used outside `async with`")
        stop = self._stop
        client = Client(target, read_timeout_seconds=config.timeout_s)
        ready = Event()
        failures: list[Exception] = []
        scope = CancelScope()

        async def hold() -> None:
            with scope:
                try:
                    async with client:
                        ready.set()
                        await stop.wait()
                except Exception as exc:  # foreign code: whatever it raises is the failure
                    failures.append(exc)
                    ready.set()

        self._group.start_soon(hold)
        try:
            with fail_after(config.timeout_s):
                await ready.wait()
        except TimeoutError as exc:
            scope.cancel()
            raise self._fail(config, "could not be started or reached", exc) from exc
        if failures:
            raise self._fail(config, "could not be started or reached", failures[0])
        self._clients[server_id] = client
        return client

    def _fail(self, config: McpServerConfig, what: str, exc: BaseException) -> McpError:
        reason = (
            f"timed out after {config.timeout_s:g} s"
            if isinstance(exc, TimeoutError)
            else f"{what}: {_reason(exc)}"
        )
        error = McpError(f"MCP server {config.id!r} ({config.transport}) {reason}")
        if isinstance(exc, TimeoutError) or what.startswith("could not"):
            self._broken[config.id] = error
        logger.warning("%s", error.message)
        return error

    async def list_tools(self, server_id: str) -> list[Any]:
        """The tools `server_id` offers (`mcp_types.Tool`), listed once per session.

        Raises:
            McpError: the server could not be reached or failed to answer.
        """
        # Any: mcp_types.Tool, a type of the optional dependency.
        if server_id not in self._tools:
            self._tools[server_id] = await self._request(
                server_id, "tools/list", lambda c: _all_tools(c)
            )
        return self._tools[server_id]

    async def media_tool(self, server_id: str, kind: ToolKind) -> MediaTool:
        """The tool of `server_id` to use for `kind` (see content_core.chat.mcp.tools).

        Raises:
            McpError: the server cannot be reached or has no such tool.
        """
        config = self.server(server_id)
        named = config.vision_tool if kind == "vision" else config.audio_tool
        tool = find_media_tool(await self.list_tools(server_id), kind, named)
        if tool is None:
            wanted = f"tool {named!r}" if named else f"{kind} tool (data, media_type)"
            raise McpError(f"MCP server {server_id!r} offers no {wanted}")
        if kind == "vision" and config.reads_pdf is not None:
            return tool.with_pdf(config.reads_pdf)
        return tool

    async def call_tool(self, server_id: str, name: str, arguments: dict[str, Any]) -> str:
        """The text a tool answers (its text blocks, else its structured result as JSON).

        Raises:
            McpError: the server failed, timed out or answered with an error result.
        """
        # Any: JSON arguments of the tool's own schema.
        result = await self._request(
            server_id, f"tool {name!r}", lambda c: c.call_tool(name, arguments)
        )
        text = "\n".join(b.text for b in result.content if getattr(b, "type", "") == "text")
        if not text and result.structured_content is not None:
            text = json.dumps(result.structured_content, ensure_ascii=False, default=str)
        if result.is_error:
            raise McpError(
                f"MCP server {server_id!r}: tool {name!r} answered an error: "
                f"{' '.join(text.split())[:300] or 'no message'}"
            )
        return text

    async def read_resource(self, server_id: str, uri: str) -> str:
        """A resource's contents as text: text contents as they are, binary ones (a PDF, an
        Office file) through the extractors, anything unreadable named with its size.

        Raises:
            McpError: the server failed, timed out or refused the read.
        """
        result = await self._request(
            server_id, f"resource {uri!r}", lambda c: c.read_resource(uri)
        )
        texts: list[str] = []
        for item in result.contents:
            if getattr(item, "text", None) is not None:
                texts.append(item.text)
            else:
                texts.append(_blob_text(str(item.uri), item.blob, item.mime_type))
        return "\n\n".join(texts)

    async def _request(self, server_id: str, what: str, call: Any) -> Any:
        # Any: `call` maps the SDK's Client to one of its result models.
        client = await self._client(server_id)
        config = self.servers[server_id]
        try:
            with fail_after(config.timeout_s):
                return await call(client)
        except Exception as exc:  # the SDK and the server are foreign code: any failure is one
            raise self._fail(config, f"{what} failed", exc) from exc


async def _all_tools(client: Client) -> list[Any]:
    # Any: mcp_types.Tool. Pages are followed up to a bound, so a looping cursor cannot hang.
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _reason(exc: BaseException) -> str:
    """A foreign exception as a person reads it; a task group's group is unwrapped."""
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _reason(exc.exceptions[0])
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _blob_text(uri: str, blob: str, mime_type: str | None) -> str:
    try:
        data = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        return f"[resource {uri}: invalid base64]"
    from content_core.binary import sniff_media_type
    from content_core.extract import extract_text

    media_type = sniff_media_type(data, default=mime_type or "application/octet-stream")
    try:
        return extract_text(data, media_type).text
    except ContentError as exc:
        return f"[resource {uri}: {media_type}, {len(data)} bytes, not readable as text: {exc}]"


async def read_mcp_resource(server: McpServerConfig, uri: str) -> str:
    """The resource `uri` of `server` as text (the `mcp_resource` data source), through a
    connection opened for this read and closed after it.

    Raises:
        McpError: the server could not be reached, timed out or refused the read.
        MissingDependencyError: the `mcp` package is not installed.
    """
    async with McpSessions([server]) as sessions:
        return await sessions.read_resource(server.id, uri)
