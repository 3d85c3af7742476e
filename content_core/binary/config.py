"""BinaryConfig: the limits and switches of binary normalisation."""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BinaryConfig"]

_MIB = 1024 * 1024


class BinaryConfig(BaseModel):
    """Frozen tunables for `BinaryNormalizer` and its handlers.

    Every limit is enforced while reading, not after: `max_uncompressed_bytes` and
    `max_expanded_files` are one budget shared by every container met while normalising one raw
    file (archives, emails, gzip streams and the zip packages inside Office files).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    normalize_enabled: bool = True
    max_bytes: int = Field(default=256 * _MIB, gt=0)
    max_recursion_depth: int = Field(default=5, ge=0)
    max_expanded_files: int = Field(default=1000, ge=0)
    max_uncompressed_bytes: int = Field(default=1024 * _MIB, gt=0)
    max_compression_ratio: float = Field(default=200.0, gt=1.0)
    max_image_pixels: int = Field(default=89_478_485, gt=0)
    max_pdf_pages: int = Field(default=5000, gt=0)
    max_svg_bytes: int = Field(default=8 * _MIB, gt=0)
    max_email_header_bytes: int = Field(default=256 * 1024, gt=0)
    max_email_parts: int = Field(default=500, gt=0)
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
