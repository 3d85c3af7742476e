"""Legacy PowerPoint 97-2003 (.ppt) slide text from the binary record stream.

The `PowerPoint Document` stream is a tree of records (8-byte headers; version 0xF marks a
container). Slide text lives in text atoms (UTF-16 `TextCharsAtom`, 8-bit `TextBytesAtom`)
inside each `Slide` container's drawing, or else in the `SlideListWithText` list, one group
per `SlidePersistAtom`. Master and notes containers are skipped.
"""

from __future__ import annotations

import io
import struct

import olefile

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Handler, office_formats

__all__ = ["FORMATS", "PptExtractor"]

_CONTAINER_VERSION = 0xF
_SLIDE = 0x03EE
_MAIN_MASTER = 0x03F8
_NOTES = 0x03F0
_SLIDE_LIST = 0x0FF0
_SLIDE_PERSIST = 0x03F3
_TEXT_CHARS = 0x0FA0
_TEXT_BYTES = 0x0FA8
_MAX_DEPTH = 64
_HEADER = struct.Struct("<HHI")



class _Collector:
    """Walks the record tree, grouping text atoms by slide."""

    def __init__(self, stream: bytes) -> None:
        self.stream = stream
        self.slides: list[list[str]] = []
        self.listed: list[list[str]] = []
        self._in_list = False

    def walk(self, start: int, end: int, depth: int, target: list[str] | None) -> None:
        pos = start
        while pos + _HEADER.size <= end:
            ver_inst, rec_type, length = _HEADER.unpack_from(self.stream, pos)
            body = pos + _HEADER.size
            stop = min(body + length, end)
            if (ver_inst & 0xF) == _CONTAINER_VERSION:
                if depth < _MAX_DEPTH and rec_type not in (_MAIN_MASTER, _NOTES):
                    self._container(rec_type, ver_inst >> 4, body, stop, depth, target)
            elif rec_type == _SLIDE_PERSIST and target is None and self._in_list:
                self.listed.append([])
            elif rec_type in (_TEXT_CHARS, _TEXT_BYTES):
                raw = self.stream[body:stop]
                text = raw.decode("utf-16-le" if rec_type == _TEXT_CHARS else "cp1252", "replace")
                sink = target if target is not None else (self.listed[-1] if self.listed else None)
                if sink is not None and text.strip() not in ("", "*"):
                    sink.append(text)
            pos = body + length

    def _container(
        self,
        rec_type: int,
        instance: int,
        body: int,
        stop: int,
        depth: int,
        target: list[str] | None,
    ) -> None:
        if rec_type == _SLIDE:
            page: list[str] = []
            self.slides.append(page)
            self.walk(body, stop, depth + 1, page)
        elif rec_type == _SLIDE_LIST:
            # Instance 0 lists the slides; 1 the masters and 2 the notes.
            if instance == 0:
                self._in_list = True
                self.walk(body, stop, depth + 1, None)
                self._in_list = False
        else:
            self.walk(body, stop, depth + 1, target)


def read_ppt_slides(data: bytes) -> list[str]:
    """Return the text of each slide of a PowerPoint 97-2003 file.

    Raises:
        ExtractionError: not a readable PowerPoint binary file.
    """
    try:
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            stream = ole.openstream("PowerPoint Document").read()
    except (OSError, ValueError, IndexError) as exc:
        raise ExtractionError(f"not a PowerPoint 97 file: {exc}", media_type=mt.PPT) from exc
    collector = _Collector(stream)
    collector.walk(0, len(stream), 0, None)
    groups = collector.slides if any(collector.slides) else collector.listed
    return ["\n".join(texts) for texts in groups]


class PptExtractor:
    """PowerPoint 97-2003 binary presentations: one page per slide."""

    name = "ppt"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `application/vnd.ms-powerpoint`."""
        return info.media_type == mt.PPT

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one page per slide (`## Slide N` and its text).

        Raises:
            ExtractionError: not a readable PowerPoint 97-2003 file.
        """
        try:
            slides = read_ppt_slides(blob.data)
        except struct.error as exc:
            raise ExtractionError(f"truncated record: {exc}", media_type=mt.PPT) from exc
        pages = [
            f"## Slide {number}\n\n{text}"
            for number, text in enumerate(slides[: options.max_pdf_pages], start=1)
        ]
        return build_text(pages, handler=self.name, paged=True)


FORMATS = office_formats(Handler(PptExtractor()), "ppt", (".ppt", mt.PPT), package=None)
