"""The files a chat's parts name by id (`__uploader://id`), as an uploader holds them, and what
prepare_messages already made of them."""

from __future__ import annotations

from dataclasses import dataclass, field

from content_core.agents.chat import Part
from content_core.agents.fetch import FetchCache

__all__ = ["Attachment", "AttachmentStore"]


@dataclass(frozen=True, slots=True)
class Attachment:
    """An uploaded file: its bytes, name and declared media type."""

    data: bytes
    filename: str | None = None
    media_type: str | None = None


@dataclass
class AttachmentStore:
    """Files by id, as an uploader holds them, plus text already extracted from them."""

    files: dict[str, Attachment] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    # Parts made from fetched URLs, revalidated with their ETag / Last-Modified.
    fetched: FetchCache[list[Part]] = field(default_factory=FetchCache)

    def add(
        self,
        file_id: str,
        data: bytes,
        *,
        filename: str | None = None,
        media_type: str | None = None,
    ) -> None:
        """Register a file under `file_id`."""
        self.files[file_id] = Attachment(data, filename, media_type)

    def get(self, file_id: str) -> Attachment | None:
        """The file named `file_id`, if held."""
        return self.files.get(file_id)

    def get_text(self, file_id: str) -> str | None:
        """Text saved earlier for `file_id` (a preview), if any."""
        return self.texts.get(file_id)

    def save_text(self, file_id: str, text: str) -> None:
        """Remember extracted text for `file_id` so later calls skip processing."""
        self.texts[file_id] = text
