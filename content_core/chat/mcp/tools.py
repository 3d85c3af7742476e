"""The media-tool convention: how an MCP tool says it reads images, audio or PDFs.

A tool is a *media tool* when its input schema has two string properties:

- `data`: the file's bytes, base64-encoded;
- `media_type`: the file's media type. Its `enum` (or `const`) lists the types the tool reads;
  an entry may be a wildcard such as `image/*`.

An optional string property `prompt` receives the instruction (describe, transcribe). A vision
tool reads at least one `image/*` type; it **reads PDFs when `application/pdf` is listed**, and
is then sent whole PDFs instead of their text or page images. An audio tool reads an `audio/*`
type. A `media_type` without `enum` or `const` reads `image/*` (vision) or `audio/*` (audio),
never PDFs. In Python with the `mcp` package this is the signature
`def describe(data: str, media_type: Literal["image/png", "application/pdf"], prompt: str = "")`.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import Any, Literal

from content_core.binary import media_types

__all__ = ["PDF", "MediaTool", "ToolKind", "find_media_tool"]

ToolKind = Literal["vision", "audio"]
PDF = media_types.PDF
_FAMILY: dict[ToolKind, str] = {"vision": "image/*", "audio": "audio/*"}


@dataclass(frozen=True, slots=True)
class MediaTool:
    """A tool that follows the convention: its name, the media types (or wildcards) it reads
    and whether it takes a `prompt`."""

    name: str
    media_types: tuple[str, ...]
    takes_prompt: bool = False

    def reads(self, media_type: str) -> bool:
        """Whether the tool declares `media_type`."""
        return any(fnmatchcase(media_type, pattern) for pattern in self.media_types)

    @property
    def reads_pdf(self) -> bool:
        """Whether the tool declares PDF support."""
        return self.reads(PDF)

    def with_pdf(self, reads_pdf: bool) -> MediaTool:
        """This tool with PDF support declared or withdrawn (a configuration override)."""
        others = tuple(t for t in self.media_types if t != PDF)
        return replace(self, media_types=others + ((PDF,) if reads_pdf else ()))

    def arguments(self, data: bytes, media_type: str, prompt: str) -> dict[str, str]:
        """The call's arguments for a file."""
        out = {"data": base64.b64encode(data).decode("ascii"), "media_type": media_type}
        if self.takes_prompt:
            out["prompt"] = prompt
        return out


def media_tool(name: str, input_schema: Mapping[str, Any], kind: ToolKind) -> MediaTool | None:
    """`input_schema` read as a media tool for `kind`, or None when it does not follow the
    convention or reads no type of that kind."""
    # Any: a JSON Schema.
    properties = input_schema.get("properties")
    if not isinstance(properties, Mapping):
        return None
    data, media = properties.get("data"), properties.get("media_type")
    if not (_is_string(data) and _is_string(media)):
        return None
    assert isinstance(media, Mapping)  # _is_string checked it
    if isinstance(media.get("enum"), list):
        declared = tuple(str(v) for v in media["enum"])
    elif isinstance(media.get("const"), str):
        declared = (media["const"],)
    else:
        declared = (_FAMILY[kind],)
    tool = MediaTool(name, declared, takes_prompt=_is_string(properties.get("prompt")))
    family = _FAMILY[kind]
    if not any(fnmatchcase(t, family) or t == family for t in declared):
        return None
    return tool


def _is_string(schema: object) -> bool:
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type", "string")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def find_media_tool(tools: Sequence[Any], kind: ToolKind, name: str | None) -> MediaTool | None:
    """The tool named `name` among `tools` (`mcp_types.Tool`), else the first media tool for
    `kind`, as a `MediaTool`; None when there is none."""
    # Any: mcp_types.Tool, a type of the optional dependency.
    for tool in tools:
        if name is not None and tool.name != name:
            continue
        found = media_tool(tool.name, tool.input_schema or {}, kind)
        if found is not None or name is not None:
            return found
    return None
