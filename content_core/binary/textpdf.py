"""A tiny PDF writer for plain text (used by `wrap_text_as_pdf` and test servers).

Writes Helvetica text in WinAnsi encoding with simple word wrapping; characters outside
cp1252 become "?". It exists so wrapping text needs no heavy dependency.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence

__all__ = ["assemble_pdf", "text_to_pdf"]

_PAGE_W, _PAGE_H = 612, 792
_MARGIN = 54
_FONT_SIZE = 10
_LEADING = 12
_COLUMNS = 95
_LINES_PER_PAGE = (_PAGE_H - 2 * _MARGIN) // _LEADING


def _escape(line: str) -> bytes:
    raw = line.encode("cp1252", errors="replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def text_to_pdf(text: str) -> bytes:
    """Return a PDF that shows `text`, wrapped to the page width, one or more pages."""
    lines: list[str] = []
    for paragraph in text.replace("\r\n", "\n").replace("\f", "\n").split("\n"):
        wrapped = textwrap.wrap(paragraph.expandtabs(4), _COLUMNS) or [""]
        lines.extend(wrapped)
    pages = [lines[i : i + _LINES_PER_PAGE] for i in range(0, len(lines), _LINES_PER_PAGE)] or [[]]
    objects: list[bytes] = []
    # 1: catalog, 2: pages, 3: font, then (page, content) pairs.
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    )
    for index, page_lines in enumerate(pages):
        content = io.BytesIO()
        top = _PAGE_H - _MARGIN - _FONT_SIZE
        content.write(b"BT /F1 %d Tf %d TL %d %d Td\n" % (_FONT_SIZE, _LEADING, _MARGIN, top))
        for line in page_lines:
            content.write(b"(" + _escape(line) + b") Tj T*\n")
        content.write(b"ET")
        stream = content.getvalue()
        objects.append(
            (
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {_PAGE_W} {_PAGE_H}] "
                f"/Contents {5 + 2 * index} 0 R /Resources << /Font << /F1 3 0 R >> >> >>"
            ).encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    return assemble_pdf(objects)


def assemble_pdf(objects: Sequence[bytes]) -> bytes:
    """Return a PDF file of `objects` (numbered from 1; object 1 is the catalog) with a
    correct cross-reference table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()
