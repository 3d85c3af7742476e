"""`Uses`: which tool sees images and hears audio for a model that cannot, an in-process
agent ("agent") or an MCP server's tool ("mcp:<server_id>"); whether the store's search adds
context and whether URLs are fetched; and the router prepare_messages asks (one per call,
holding that call's MCP sessions)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from content_core.agents.base import Agent
from content_core.chat.data_sources import DataContext, DataSources, SourceText
from content_core.chat.mcp import McpSessions, ToolKind
from content_core.errors import McpError

__all__ = ["ToolRouter", "Uses"]

logger = logging.getLogger(__name__)

_ROUTE = r"^(agent|mcp:[A-Za-z0-9_.-]+)$"


class Uses(BaseModel):
    """The tool for each modality the model lacks: `"agent"` (the agent passed as
    `vision_agent` / `audio_agent`) or `"mcp:<server_id>"` (that server's media tool, see
    content_core.chat.mcp.tools). Unset: the agent, when one is passed.

    `search="store"`: the last user message's text is searched in the content store
    (prepare_messages' `search_store`, else `DataSources.store`) and the hits are added to
    that message as a text part. `fetch="policy"`: http(s) URLs in parts (and `api` data
    sources) are fetched under the `fetch_policy` passed, or under the default `FetchPolicy()`
    (public addresses only) when none is.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    vision: str | None = Field(default=None, pattern=_ROUTE)
    audio: str | None = Field(default=None, pattern=_ROUTE)
    search: Literal["store"] | None = None
    fetch: Literal["policy"] | None = None

    def server_ids(self) -> set[str]:
        """The MCP servers these routes name."""
        routes = (self.vision, self.audio)
        return {r.removeprefix("mcp:") for r in routes if r and r.startswith("mcp:")}


class ToolRouter:
    """The routes of one prepare_messages call: `agent(kind)` is the agent to use (None when
    the route is MCP or unset), `mcp(kind)` the server id, reached through `sessions` (open for
    the call). A route naming a server `sessions` does not configure, or "agent" with no
    agent passed, is a `ValueError`."""

    def __init__(
        self,
        uses: Uses | None,
        agents: Mapping[ToolKind, Agent | None],
        sessions: McpSessions,
    ) -> None:
        if uses is not None and (missing := uses.server_ids() - set(sessions.servers)):
            raise ValueError(f"Uses names MCP servers that are not configured: {sorted(missing)}")
        self.routes: dict[ToolKind, str | None] = {
            "vision": uses.vision if uses is not None else None,
            "audio": uses.audio if uses is not None else None,
        }
        self.agents = agents
        self.sessions = sessions
        for kind, route in self.routes.items():
            if route == "agent" and agents.get(kind) is None:
                raise ValueError(f'Uses({kind}="agent") needs the {kind}_agent argument')

    def mcp(self, kind: ToolKind) -> str | None:
        """The MCP server routed to for `kind`, if any."""
        route = self.routes[kind]
        return route.removeprefix("mcp:") if route and route.startswith("mcp:") else None

    def agent(self, kind: ToolKind) -> Agent | None:
        """The agent routed to for `kind`: the one passed, unless the route names MCP."""
        return None if self.mcp(kind) else self.agents.get(kind)

    def route(self, kind: ToolKind) -> str | None:
        """What turns `kind` into text: "mcp:<server_id>", "agent", or None (nothing)."""
        if (server := self.mcp(kind)) is not None:
            return f"mcp:{server}"
        return "agent" if self.agent(kind) is not None else None

    def can_see(self) -> bool:
        """Whether images can be turned into descriptions (an agent or an MCP tool)."""
        return self.mcp("vision") is not None or self.agent("vision") is not None

    async def reads_pdf(self) -> bool:
        """Whether the vision route is an MCP tool that declares PDF support. A server that
        cannot be reached reads nothing (its failure is logged; the PDF goes on as configured).
        """
        server = self.mcp("vision")
        if server is None:
            return False
        try:
            return (await self.sessions.media_tool(server, "vision")).reads_pdf
        except McpError as exc:
            logger.warning("PDF support of %s unknown: %s", server, exc.message)
            return False

    async def run_tool(self, kind: ToolKind, data: bytes, media_type: str, prompt: str) -> str:
        """The answer of the MCP tool routed to for `kind`, for one file.

        Raises:
            McpError: the server failed, timed out, has no such tool, or the tool does not
                declare `media_type`.
        """
        server = self.mcp(kind)
        if server is None:
            raise McpError(f"no MCP route for {kind}")
        tool = await self.sessions.media_tool(server, kind)
        if not tool.reads(media_type):
            raise McpError(f"mcp:{server} tool {tool.name!r} does not read {media_type}")
        return await self.sessions.call_tool(
            server, tool.name, tool.arguments(data, media_type, prompt)
        )

    def with_mcp_resources(self, sources: DataSources | None) -> DataSources | None:
        """`sources` with the `mcp_resource` data source read through this call's sessions (a
        resolver of its own for that type, when `sources` has one, is kept); as they are when
        no MCP server is configured."""
        sessions = self.sessions
        if not sessions.servers:
            return sources

        async def read(source: Mapping[str, Any], context: DataContext) -> SourceText:
            # Any: a data source is client JSON.
            server = str(source.get("server") or source.get("server_id") or "")
            uri = str(source.get("uri") or "")
            return SourceText(f"mcp:{server} {uri}", await sessions.read_resource(server, uri))

        base = sources or DataSources()
        return base.model_copy(update={"resolvers": {"mcp_resource": read, **base.resolvers}})
