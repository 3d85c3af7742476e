"""MCP servers as tools and data sources: servers configured by id (stdio command or
streamable HTTP URL), driven through the official `mcp` package (the `mcp` extra, imported only
when a server is used), the media-tool convention for vision and audio tools, and resources
read as text (the `mcp_resource` data source)."""

from __future__ import annotations

from content_core.chat.mcp.client import McpSessions, read_mcp_resource
from content_core.chat.mcp.config import McpServerConfig
from content_core.chat.mcp.tools import PDF, MediaTool, ToolKind, find_media_tool

__all__ = [
    "PDF",
    "McpServerConfig",
    "McpSessions",
    "MediaTool",
    "ToolKind",
    "find_media_tool",
    "read_mcp_resource",
]
