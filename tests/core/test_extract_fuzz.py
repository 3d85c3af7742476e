"""Mutated inputs for every handler: the result is clean text or one of our errors, never a
third-party exception, a NUL in the text, or a hang."""

from __future__ import annotations

import functools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from content_core.errors import ContentError
from content_core.extract import extract_text
from tests.core import extract_inputs as inputs
from tests.core import format_inputs as formats
from tests.fixtures.wordperfect import wp6_document, wp6_text

SEEDS = {
    "application/pdf": lambda: inputs.make_pdf(["fuzz page one", "fuzz page two"]),
    inputs.DOCX: inputs.docx_mixed,
    inputs.XLSX: inputs.xlsx_two_sheets,
    inputs.PPTX: inputs.pptx_slides,
    inputs.ODT: inputs.odt_text,
    "application/epub+zip": inputs.epub_book,
    "text/html": lambda: inputs.HTML_PAGE,
    "application/rtf": lambda: inputs.RTF_DOC,
    "image/svg+xml": lambda: inputs.SVG_DRAWING,
    "application/rss+xml": lambda: inputs.RSS_FEED,
    "application/json": lambda: inputs.JSON_DOC,
    "text/csv": lambda: inputs.CSV_SEMICOLON,
    "application/msword": lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(1024),
    "application/vnd.wordperfect": lambda: wp6_document(wp6_text(["Fuzz QFZ01 café", "Two"])),
    "application/vnd.ms-wordml": lambda: formats.WORDML_2003_DOC,
    "application/vnd.ms-spreadsheetml": lambda: formats.SPREADSHEETML_2003_DOC,
}


@functools.cache
def _seed(media_type: str) -> bytes:
    return SEEDS[media_type]()


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    media_type = draw(st.sampled_from(sorted(SEEDS)))
    data = bytearray(_seed(media_type))
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        position = draw(st.integers(min_value=0, max_value=len(data) - 1))
        action = draw(st.sampled_from(["flip", "cut", "dup"]))
        if action == "flip":
            data[position] = draw(st.integers(min_value=0, max_value=255))
        elif action == "cut":
            del data[position : position + draw(st.integers(min_value=1, max_value=64))]
        else:
            data[position:position] = data[position : position + 32]
        if not data:
            data = bytearray(b"x")
    return media_type, bytes(data)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated())
def test_mutated_inputs_give_clean_text_or_our_errors(case: tuple[str, bytes]) -> None:
    media_type, data = case
    try:
        result = extract_text(data, media_type)
    except ContentError:
        return
    assert "\x00" not in result.text
    result.text.encode("utf-8")
    for span in result.pages:
        assert 0 <= span.start <= span.end <= len(result.text)
