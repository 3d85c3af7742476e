"""BinaryArtifact: one output unit of binary normalisation."""

from __future__ import annotations

import builtins

from pydantic import BaseModel, ConfigDict

from content_core.errors import ContentError
from content_core.formats import default_formats

__all__ = ["BinaryArtifact", "Damage", "kind_for"]


class Damage(BaseModel):
    """Why a picture was decoded or drawn only in part (a JPEG cut short, an SVG that cannot be
    drawn): the cause as `error_type` records it, the specific class and the message.

    It is the row's error unless text was still read (by OCR, or from an SVG's XML); then it
    is a note on the row (`note`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    error_type: str
    error_class: str
    message: str

    @classmethod
    def of(cls, error: ContentError) -> Damage:
        """The damage `error` describes."""
        return cls(error_type=error.error_type, error_class=error.error_class,
                   message=error.message)

    @property
    def note(self) -> str:
        """The damage as a note on a row that still has text."""
        return f"{self.error_class}: {self.message}"


class BinaryArtifact(BaseModel):
    """A file produced by normalisation: the raw file itself, a member, or a rendition.

    `derived_from` lists the ids (SHA-256 of the bytes) of the ancestors, raw file first; it is
    empty for the raw file. `member_name` is the name a container gave this member (display
    only; never used as a path). A member that could not be produced carries `error_type` and
    `error_message`; its `bytes` are empty when the member could not even be read.
    `rendition` marks bytes derived from a sibling document by conversion (an Office file
    rendered to PDF, a HEIC image re-encoded as PNG): the same content in another format.
    `notes` are facts about the artifact that are not failures of the row. `damage` marks a
    picture that could be decoded or drawn only in part: whether the row is that error or keeps
    it as a note depends on the text read afterwards (the normalise stage's `records`).
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
    damage: Damage | None = None


def kind_for(media_type: str) -> str:
    """Return the canonical kind token for a media type ("pdf", "image", "archive", ...), as
    its format declares it (`content_core.formats`); "binary" for bytes of no known format."""
    return default_formats().kind_for(media_type)
