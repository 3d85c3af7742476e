"""Binary normalisation: sniff, guard, convert and unpack raw files into artifacts.

Names resolve lazily so that importing `content_core.binary.media_types` (or this package) does
not load Pillow, pypdf or the archive libraries.
"""

from __future__ import annotations

from content_core._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ArchiveUnpacker": "content_core.binary.archives",
    "BinaryArtifact": "content_core.binary.artifact",
    "BinaryConfig": "content_core.binary.config",
    "BinaryNormalizer": "content_core.binary.normalizer",
    "EmailUnpacker": "content_core.binary.email",
    "GotenbergConverter": "content_core.binary.office",
    "ImageNormalizer": "content_core.binary.images",
    "LibreOfficeConverter": "content_core.binary.office",
    "NoOpOfficeConverter": "content_core.binary.office",
    "NormalisedImage": "content_core.binary.images",
    "OFFICE_MEDIA_TYPES": "content_core.binary.office",
    "OfficeConverter": "content_core.binary.office",
    "PdfGuard": "content_core.binary.pdf_guard",
    "build_office_converter": "content_core.binary.office",
    "sniff_media_type": "content_core.binary.sniff",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
