"""MCP servers as tools and data sources: servers configured by id (stdio command or
streamable HTTP URL), driven through the official `mcp` package (the `mcp` extra, imported only
when a server is used), the media-tool convention for vision and audio tools, and resources
read as text (the `mcp_resource` data source)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports
from content_core.chat.mcp.client import McpSessions as McpSessions
from content_core.chat.mcp.client import read_mcp_resource as read_mcp_resource
from content_core.chat.mcp.config import McpServerConfig as McpServerConfig
from content_core.chat.mcp.tools import PDF as PDF
from content_core.chat.mcp.tools import MediaTool as MediaTool
from content_core.chat.mcp.tools import ToolKind as ToolKind
from content_core.chat.mcp.tools import find_media_tool as find_media_tool

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
