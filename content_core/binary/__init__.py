"""Binary normalisation: sniff, guard, convert and unpack raw files into artifacts.

Names resolve lazily so that importing `content_core.binary.media_types` (or this package) does
not load Pillow, pypdf or the archive libraries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports

if TYPE_CHECKING:
    from content_core.binary.archives import ArchiveUnpacker as ArchiveUnpacker
    from content_core.binary.artifact import BinaryArtifact as BinaryArtifact
    from content_core.binary.config import BinaryConfig as BinaryConfig
    from content_core.binary.email import EmailUnpacker as EmailUnpacker
    from content_core.binary.images import ImageNormalizer as ImageNormalizer
    from content_core.binary.images import NormalisedImage as NormalisedImage
    from content_core.binary.normalizer import BinaryNormalizer as BinaryNormalizer
    from content_core.binary.office import OFFICE_MEDIA_TYPES as OFFICE_MEDIA_TYPES
    from content_core.binary.office import GotenbergConverter as GotenbergConverter
    from content_core.binary.office import LibreOfficeConverter as LibreOfficeConverter
    from content_core.binary.office import NoOpOfficeConverter as NoOpOfficeConverter
    from content_core.binary.office import OfficeConverter as OfficeConverter
    from content_core.binary.office import build_office_converter as build_office_converter
    from content_core.binary.pdf_guard import PdfGuard as PdfGuard
    from content_core.binary.sniff import sniff_media_type as sniff_media_type

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
