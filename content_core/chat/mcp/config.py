"""McpServerConfig: an MCP server named by id, reached by a stdio command or a streamable HTTP
URL, with its time limit and the tools to use for vision and audio."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["McpServerConfig"]


class McpServerConfig(BaseModel):
    """One MCP server: `command` (a program and its arguments, spoken to over stdio) or `url`
    (a streamable HTTP endpoint), exactly one of them.

    `vision_tool` and `audio_tool` name the tools to call; unset, the first listed tool that
    follows the media-tool convention (content_core.chat.mcp.tools) for images or audio is used.
    `reads_pdf` overrides what the vision tool declares about PDFs (for a server one cannot
    change). `timeout_s` bounds starting and connecting the server and each call.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    command: tuple[str, ...] | None = None
    url: str | None = None
    # Added to the minimal environment the SDK gives a stdio server (PATH, HOME, ...).
    env: dict[str, str] | None = None
    cwd: str | None = None
    timeout_s: float = Field(default=30.0, gt=0)
    vision_tool: str | None = None
    audio_tool: str | None = None
    reads_pdf: bool | None = None

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server {self.id!r}: give exactly one of command and url")
        if self.command is not None and not self.command:
            raise ValueError(f"MCP server {self.id!r}: command is empty")
        if self.url is not None and urlsplit(self.url).scheme not in ("http", "https"):
            raise ValueError(f"MCP server {self.id!r}: url must be http(s), not {self.url!r}")
        return self

    @property
    def transport(self) -> str:
        """`stdio` or `streamable-http`, for messages."""
        return "stdio" if self.command is not None else "streamable-http"
