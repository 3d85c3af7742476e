"""The files a chat's parts name by id (`__uploader://id`), as an uploader holds them, and what
prepare_messages already made of them, for the kind of model it made them for."""

from __future__ import annotations

from dataclasses import dataclass, field

from content_core.agents.chat import Part
from content_core.chat.fetch import FetchCache

__all__ = ["Attachment", "AttachmentStore", "PreparedFor"]


@dataclass(frozen=True, slots=True)
class Attachment:
    """An uploaded file: its bytes, name and declared media type."""

    data: bytes
    filename: str | None = None
    media_type: str | None = None


@dataclass(frozen=True, slots=True)
class PreparedFor:
    """What text saved for a file was made for: what the target model takes besides text, the
    routes that turned the rest into text ("agent", "mcp:<server_id>", None for none), the
    PDF handling's fingerprint where PDF pages could be shown as images, and whether PDFs are
    sent whole.

    An image described for a text-only model is saved for that model only: a vision model is
    a different `PreparedFor` and gets the image itself. The default, a text-only model with
    no routes, is the uploader's preview (`AttachmentStore.texts`).
    """

    vision: bool = False
    audio: bool = False
    vision_route: str | None = None
    audio_route: str | None = None
    pdf_handling: str | None = None
    whole_pdfs: bool = False  # PDFs go to the model as `document` blocks, not as text


_PREVIEW = PreparedFor()


@dataclass
class AttachmentStore:
    """Files by id, as an uploader holds them, plus text already made of them: `texts`, the
    uploader's previews (what a text-only model with no routes gets), and `prepared`, what
    prepare_messages made for other models."""

    files: dict[str, Attachment] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    prepared: dict[tuple[str, PreparedFor], str] = field(default_factory=dict)
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

    def get_text(self, file_id: str, made_for: PreparedFor = _PREVIEW) -> str | None:
        """Text saved earlier for `file_id` and a model like `made_for` (by default the
        preview), if any."""
        if made_for == _PREVIEW:
            return self.texts.get(file_id)
        return self.prepared.get((file_id, made_for))

    def save_text(self, file_id: str, text: str, made_for: PreparedFor = _PREVIEW) -> None:
        """Remember the text made of `file_id` for a model like `made_for` (by default the
        preview), so later calls for such a model skip processing."""
        if made_for == _PREVIEW:
            self.texts[file_id] = text
        else:
            self.prepared[(file_id, made_for)] = text
