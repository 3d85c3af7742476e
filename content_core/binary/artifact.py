"""BinaryArtifact: one output unit of binary normalisation."""

from __future__ import annotations

import builtins

from pydantic import BaseModel, ConfigDict

from content_core.formats import default_formats

__all__ = ["BinaryArtifact", "kind_for"]


class BinaryArtifact(BaseModel):
    """A file produced by normalisation: the raw file itself, a member, or a rendition.

    `derived_from` lists the ids (SHA-256 of the bytes) of the ancestors, raw file first; it is
    empty for the raw file. `member_name` is the name a container gave this member (display
    only; never used as a path). A member that could not be produced carries `error_type` and
    `error_message`; its `bytes` are empty when the member could not even be read.
    `rendition` marks bytes derived from a sibling document by conversion (an Office file
    rendered to PDF, a HEIC image re-encoded as PNG): the same content in another format.
    `notes` are facts about the artifact that are not failures of the row, such as a drawing
    that could not be rendered while its text is still read.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    bytes: builtins.bytes
    media_type: str
    filename: str
    kind: str
    page_count: int | None = None
    derived_from: tuple[str, ...] = ()
    member_name: str | None = None
    rendition: bool = False
    error_type: str | None = None
    error_message: str | None = None
    notes: tuple[str, ...] = ()


def kind_for(media_type: str) -> str:
    """Return the canonical kind token for a media type ("pdf", "image", "archive", ...), as
    its format declares it (`content_core.formats`); "binary" for bytes of no known format."""
    return default_formats().kind_for(media_type)
