"""BinaryConfig: the one set of limits and switches of normalisation and text extraction.

`ExtractOptions` (content_core.extract) is the same model under the name the extractor
protocol uses: the limits a file is normalised under are the limits its text is read under.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BinaryConfig"]

_MIB = 1024 * 1024


class BinaryConfig(BaseModel):
    """Frozen tunables for `BinaryNormalizer`, its handlers and the text extractors.

    Every limit is enforced while reading, not after: `max_uncompressed_bytes` and
    `max_expanded_files` are one budget shared by every container met while normalising one raw
    file (archives, emails, gzip streams and the zip packages inside Office files);
    `max_uncompressed_bytes`, `max_compression_ratio` and `max_zip_members` also bound what
    an extractor inflates from one zip-based document.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    normalize_enabled: bool = True
    max_bytes: int = Field(default=256 * _MIB, gt=0)
    max_recursion_depth: int = Field(default=5, ge=0)
    max_expanded_files: int = Field(default=1000, ge=0)
    # Everything inflated from one raw file sits in the worker's memory (the walk keeps each
    # member's bytes, a parser builds its tree over them), so the budget stays well under
    # ProcessingConfig.memory_mb (2 GiB): 256 MiB leaves room for a parser's several-fold
    # overhead. Past it a file is a LimitExceededError row; past the memory cap it would be a
    # worker failure, retried on every run. (The old normaliser default, 1 GiB, did not fit.)
    max_uncompressed_bytes: int = Field(default=256 * _MIB, gt=0)
    max_compression_ratio: float = Field(default=200.0, gt=1.0)
    max_zip_members: int = Field(default=10_000, gt=0)
    """Members in one zip-based document's directory (DOCX, XLSX, ODT, ...) read at most."""
    max_image_pixels: int = Field(default=89_478_485, gt=0)
    # PdfGuard refuses a PDF over this many pages before extraction runs, so a larger limit
    # for extraction (the old 10,000) could never apply; extractors cut slides at it too.
    max_pdf_pages: int = Field(default=5000, gt=0)
    """PDF pages (refused above it) and slides (read up to it)."""
    max_table_cells: int = Field(default=2_000_000, gt=0)
    """Cells read from one spreadsheet or CSV file; the rest is cut with a marker line."""
    max_json_depth: int = Field(default=256, gt=0)
    max_xml_bytes: int = Field(default=64 * _MIB, gt=0)
    max_svg_bytes: int = Field(default=8 * _MIB, gt=0)
    max_email_header_bytes: int = Field(default=256 * 1024, gt=0)
    max_email_parts: int = Field(default=500, gt=0)
    include_comments: bool = True
    """Include reviewer comments (DOCX) and speaker notes (PPTX, ODP) in the text."""
    wrap_text_as_pdf: bool = False
    email_render_header: bool = True
    office_converter: Literal["none", "gotenberg", "libreoffice"] = "none"
    gotenberg_url: str = "http://127.0.0.1:3000"
    gotenberg_timeout_s: float = Field(default=60.0, gt=0)
    libreoffice_path: str = "soffice"
    libreoffice_timeout_s: float = Field(default=120.0, gt=0)
    passwords: tuple[str, ...] = ()

    def fingerprint(self) -> str:
        """Return a short stable hash of every field (it changes when any limit changes)."""
        return hashlib.sha256(self.model_dump_json().encode("utf-8")).hexdigest()[:16]
