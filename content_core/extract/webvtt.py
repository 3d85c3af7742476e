"""WebVTT captions as a transcript: one line per cue, attributed to its speaker (`<v Name>`),
without cue ids, timings, NOTE/STYLE/REGION blocks or markup."""

from __future__ import annotations

import html
import re

from content_core.extract._decode import decode_bytes
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Format, Handler

__all__ = ["FORMATS", "WEBVTT", "WebVttExtractor", "is_webvtt"]

WEBVTT = "text/vtt"
_BOM = b"\xef\xbb\xbf"
_MAGIC = b"WEBVTT"
# A voice span's start tag: `<v Name>` or `<v.class Name>`; bounded, so matching stays linear.
_VOICE = re.compile(r"<v(?:\.[^\s>]{0,64})?[ \t]+([^>\n]{1,200})>")
_TAG = re.compile(r"<[^>\n]{0,200}>")
_SKIPPED_BLOCKS = ("NOTE", "STYLE", "REGION")


def is_webvtt(data: bytes) -> bool:
    """True when `data` starts (after an optional BOM) with the `WEBVTT` signature line."""
    body = data[len(_BOM) :] if data.startswith(_BOM) else data
    return body.startswith(_MAGIC) and body[len(_MAGIC) : len(_MAGIC) + 1] in (
        b"", b" ", b"\t", b"\n", b"\r",
    )  # fmt: skip


def _cue_lines(payload: list[str]) -> list[tuple[str, str]]:
    """(speaker, text) for each line of a cue; a line without a voice keeps the last one."""
    out: list[tuple[str, str]] = []
    speaker = ""
    for line in payload:
        voice = _VOICE.search(line)
        if voice is not None:
            speaker = " ".join(voice.group(1).split())
        text = " ".join(html.unescape(_TAG.sub("", line)).split())
        if text:
            out.append((speaker, text))
    return out


def webvtt_transcript(text: str) -> str:
    """Return the cues of a WebVTT document as transcript lines ("Speaker: words")."""
    lines: list[tuple[str, str]] = []
    for number, block in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n\n")):
        rows = [row for row in block.split("\n") if row.strip()]
        if not rows or number == 0 and rows[0].lstrip("\ufeff").startswith("WEBVTT"):
            continue
        if rows[0].split(" ", 1)[0].split("\t", 1)[0] in _SKIPPED_BLOCKS:
            continue
        timing = next((i for i, row in enumerate(rows[:2]) if "-->" in row), None)
        if timing is None:
            continue  # not a cue (a stray block); WebVTT parsers drop it too
        for speaker, words in _cue_lines(rows[timing + 1 :]):
            if lines and lines[-1][0] == speaker and speaker:
                lines[-1] = (speaker, f"{lines[-1][1]} {words}")
            elif not lines or lines[-1] != (speaker, words):
                lines.append((speaker, words))
    return "\n".join(f"{speaker}: {words}" if speaker else words for speaker, words in lines)


class WebVttExtractor:
    """WebVTT subtitles and captions, as speaker-attributed lines."""

    name = "webvtt"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `text/vtt`."""
        return info.media_type == WEBVTT

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one line per cue (consecutive cues of one speaker joined)."""
        text = decode_bytes(blob.data, declared=blob.info.charset or "utf-8")
        return build_text([webvtt_transcript(text)], handler=self.name, paged=False)


FORMATS = (
    Format(
        name="webvtt",
        media_types=(WEBVTT,),
        kind="webvtt",
        handlers=(Handler(WebVttExtractor()),),
        sniff=is_webvtt,
        extension=".vtt",
    ),
)
