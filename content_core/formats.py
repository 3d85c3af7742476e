"""File formats: what the pipeline knows about each one, declared once and registered once.

A `Format` declares a format's media types, the byte signatures that identify it, its
artifact kind, whether it yields text, its normalise step and its extractors. Each built-in
format is declared in its handler module (a `FORMATS` tuple next to its extractor) and that
module is listed once in `BUILTIN_FORMAT_MODULES`. Other packages add formats through the
entry point group `content_pipeline.formats` (an entry point names a `Format`, an iterable of
them, or a callable returning either). Sniffing, kinds, the normaliser's dispatch and the
extractor registry are all derived from `default_formats()`, so they cannot disagree.

Adding a format: write `content_core/extract/<fmt>.py` with its extractor and
`FORMATS = (Format(...),)`, add the module to `BUILTIN_FORMAT_MODULES`, add its tests.
"""

from __future__ import annotations

import enum
import functools
import importlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Protocol

__all__ = [
    "BUILTIN_FORMAT_MODULES",
    "ENTRY_POINT_GROUP",
    "PRIORITY_CATCH_ALL",
    "PRIORITY_FALLBACK",
    "PRIORITY_SPECIFIC",
    "PRIORITY_TEXT_FORMAT",
    "Format",
    "FormatExtractor",
    "FormatRegistry",
    "Handler",
    "NormaliseStep",
    "Package",
    "Signature",
    "default_formats",
    "office_formats",
]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "content_pipeline.formats"

# Extractor priorities: specific formats 100, second-choice parsers of a format 90, formats
# that are also valid text (Markdown, CSV, JSON, XML, HTML) 50, the plain-text catch-all 0.
PRIORITY_SPECIFIC = 100
PRIORITY_FALLBACK = 90
PRIORITY_TEXT_FORMAT = 50
PRIORITY_CATCH_ALL = 0

# One line per built-in format module, in extractor registration order (ties in priority
# dispatch in this order). Each module defines `FORMATS: tuple[Format, ...]`.
BUILTIN_FORMAT_MODULES: tuple[str, ...] = (
    "content_core.extract.pdf",
    "content_core.extract.docx",
    "content_core.extract.xlsx",
    "content_core.extract.pptx",
    "content_core.extract.odf",
    "content_core.extract.epub",
    "content_core.extract.doc",
    "content_core.extract.wordperfect",
    "content_core.extract.xls",
    "content_core.extract.ppt",
    "content_core.extract.wordml",
    "content_core.extract.spreadsheetml",
    "content_core.extract.svg",
    "content_core.extract.rtf",
    "content_core.extract.webvtt",
    "content_core.extract.html",
    "content_core.extract.csv",
    "content_core.extract.json",
    "content_core.extract.xml",
    "content_core.extract.markdown",
    "content_core.extract.text",
    "content_core.binary.images",
    "content_core.binary.archives",
    "content_core.binary.email",
    "content_core.binary.sniff",
)


class NormaliseStep(enum.StrEnum):
    """What normalisation does with a format's bytes before text extraction."""

    PASS = "pass"
    """Kept as they are (text formats, EPUB)."""
    GUARD_PDF = "guard_pdf"
    """Checked by `PdfGuard` (encryption, damage, page limit); a decrypted copy is a rendition."""
    CONVERT_IMAGE = "convert_image"
    """Decoded; re-encoded as a PNG or PDF rendition when consumers cannot read it as is."""
    RENDER_OFFICE = "render_office"
    """Rendered to a PDF rendition by the configured Office converter (if any)."""
    UNPACK_ARCHIVE = "unpack_archive"
    """A container: its members become artifacts of their own."""
    UNPACK_EMAIL = "unpack_email"
    """A message: its body and attachments become artifacts of their own."""


class Package(enum.StrEnum):
    """The container a format's bytes live in, checked before any parser sees them."""

    ZIP = "zip"
    """A zip package: an encrypted OOXML file is refused, every part inflates within budget."""
    OLE2 = "ole2"
    """A compound file: an encrypted OOXML package inside it is refused."""


@dataclass(frozen=True, slots=True)
class Signature:
    """Magic bytes at a fixed offset that identify a format."""

    magic: bytes
    offset: int = 0

    def matches(self, data: bytes) -> bool:
        """Return True when `data` holds `magic` at `offset`."""
        return data[self.offset : self.offset + len(self.magic)] == self.magic


class FormatExtractor(Protocol):
    """What a format declares as its extractor: `content_core.extract.base.Extractor` is the
    full contract (typed with extract's own values, a floor above this module)."""

    name: str

    # Any: the sniff result, blob and options are extract's types (content_core.extract.base).
    def accepts(self, info: Any) -> bool:
        """Whether this handler can try the blob `info` describes."""
        ...

    def extract(self, blob: Any, options: Any) -> Any:  # Any: as above
        """The blob's text."""
        ...


@dataclass(frozen=True, slots=True)
class Handler:
    """An extractor with its dispatch priority (higher is tried first)."""

    extractor: FormatExtractor
    priority: int = PRIORITY_SPECIFIC


@dataclass(frozen=True, slots=True)
class Format:
    """Everything the pipeline needs to know about one file format.

    Args:
        name: a short unique name ("pdf", "docx").
        media_types: the sniffed media types of the format, canonical one first; lower case,
            without parameters.
        kind: the artifact kind of its rows ("pdf", "image", "archive", ...).
        yields_text: whether its artifacts get extracted text (False for pictures and
            containers, whose text lives in other rows).
        normalise: what normalisation does with the bytes.
        handlers: its extractors with their priorities (several formats may share one).
        signatures: magic bytes that identify it; checked before the built-in family
            sniffers (zip, OLE2, tar) and before the text heuristics.
        sniff: a cheap test of the bytes for formats a fixed magic cannot tell.
        package: the container checked before any parser sees the bytes.
        extension: the usual file extension (".docx"), for converters that pick their input
            filter from a file name.
        text_to_pdf: with `BinaryConfig.wrap_text_as_pdf`, the text is also rendered as a PDF.
    """

    name: str
    media_types: tuple[str, ...]
    kind: str
    yields_text: bool = True
    normalise: NormaliseStep = NormaliseStep.PASS
    handlers: tuple[Handler, ...] = ()
    signatures: tuple[Signature, ...] = ()
    sniff: Callable[[bytes], bool] | None = None
    package: Package | None = None
    extension: str | None = None
    text_to_pdf: bool = False

    def __post_init__(self) -> None:
        if not self.media_types:
            raise ValueError(f"format {self.name!r} declares no media type")
        for media_type in self.media_types:
            if media_type != media_type.strip().lower() or ";" in media_type:
                raise ValueError(f"format {self.name!r}: media type {media_type!r} is not bare")
        if self.yields_text and not self.handlers:
            raise ValueError(f"format {self.name!r} yields text but declares no extractor")

    @property
    def media_type(self) -> str:
        """The canonical media type: what sniffing reports for this format."""
        return self.media_types[0]

    def matches(self, data: bytes) -> bool:
        """Return True when a signature or the sniff test recognises `data`."""
        if any(signature.matches(data) for signature in self.signatures):
            return True
        return self.sniff is not None and self.sniff(data)


def office_formats(
    handler: Handler, kind: str, *types: tuple[str, str], package: Package | None = Package.ZIP
) -> tuple[Format, ...]:
    """Return one Office format per `(extension, media type)`, each named after its
    extension, rendered to PDF by the Office converter and read by `handler`."""
    return tuple(
        Format(name=extension.lstrip("."), media_types=(media_type,), kind=kind,
               normalise=NormaliseStep.RENDER_OFFICE, handlers=(handler,), package=package,
               extension=extension)
        for extension, media_type in types
    )


class FormatRegistry:
    """Formats by media type, in registration order."""

    def __init__(self, formats: Iterable[Format] = ()) -> None:
        self._formats: list[Format] = []
        self._by_type: dict[str, Format] = {}
        for fmt in formats:
            self.register(fmt)

    def register(self, fmt: Format) -> None:
        """Add `fmt`.

        Raises:
            ValueError: its name or one of its media types is already registered.
        """
        if any(known.name == fmt.name for known in self._formats):
            raise ValueError(f"format {fmt.name!r} is already registered")
        taken = [media_type for media_type in fmt.media_types if media_type in self._by_type]
        if taken:
            raise ValueError(f"format {fmt.name!r}: media types already registered: {taken}")
        self._formats.append(fmt)
        for media_type in fmt.media_types:
            self._by_type[media_type] = fmt

    def formats(self) -> tuple[Format, ...]:
        """Return the formats in registration order."""
        return tuple(self._formats)

    def get(self, media_type: str) -> Format | None:
        """Return the format of a (bare, lower-case) media type, or None."""
        return self._by_type.get(media_type)

    def kind_for(self, media_type: str) -> str:
        """Return the artifact kind of a media type; "binary" for bytes of no known format."""
        fmt = self._by_type.get(media_type)
        if fmt is not None:
            return fmt.kind
        return "image" if media_type.startswith("image/") else "binary"

    def yields_text(self, media_type: str) -> bool:
        """Return True when artifacts of this media type get extracted text."""
        fmt = self._by_type.get(media_type)
        return fmt is not None and fmt.yields_text

    def media_types(self, step: NormaliseStep) -> frozenset[str]:
        """Return every media type whose format normalises with `step`."""
        return frozenset(
            media_type
            for fmt in self._formats
            if fmt.normalise is step
            for media_type in fmt.media_types
        )

    def sniff(self, data: bytes) -> str | None:
        """Return the media type of the first format whose signature matches `data`."""
        for fmt in self._formats:
            if not (fmt.signatures or fmt.sniff):
                continue
            try:
                if fmt.matches(data):
                    return fmt.media_type
            # A plug-in's sniff test may raise anything; its format is then not a match, and
            # the file is sniffed by the others.
            except Exception:  # noqa: BLE001
                logger.warning("sniff test of format %s failed", fmt.name, exc_info=True)
        return None

@functools.cache
def default_formats() -> FormatRegistry:
    """Return the shared registry: the built-in formats, then installed plug-ins.

    Plug-ins are loaded once, on first use. A plug-in that fails to load, declares something
    that is not a `Format`, or claims a name or media type already taken is logged and skipped.
    """
    registry = FormatRegistry()
    for module_name in BUILTIN_FORMAT_MODULES:
        for fmt in importlib.import_module(module_name).FORMATS:
            registry.register(fmt)
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            formats = _as_formats(entry_point.load())
        # The boundary to third-party code: whatever a broken plug-in raises on import must
        # not stop a batch.
        except Exception:  # noqa: BLE001
            logger.warning(
                "format plug-in %s (%s) failed to load; skipped",
                entry_point.name, entry_point.value, exc_info=True,
            )
            continue
        for fmt in formats:
            try:
                registry.register(fmt)
            except ValueError as exc:
                logger.warning("format plug-in %s skipped: %s", entry_point.name, exc)
    return registry


def _as_formats(value: object) -> list[Format]:
    """The formats an entry point names: a Format, an iterable of them, or a callable."""
    if callable(value) and not isinstance(value, Format):
        value = value()
    if isinstance(value, Format):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        items = list(value)
        if all(isinstance(item, Format) for item in items):
            return items
    raise TypeError(f"expected a Format or an iterable of Formats, got {type(value).__name__}")
