"""The packing loop's parts: sentence ends found through their marks are the ends of the
sentence regex's matches; span sizes stay exact when edges are remembered across spans; the
Markdown scan stays exact past the HTML header of a README."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from content_core.chunking._common import _SENTENCE_RE, SENTENCE
from content_core.chunking._mdopaque import opaque_regions
from content_core.chunking._mdscan import markdown_sections
from content_core.chunking._measure import TokenMeasure
from content_core.tokens import count_tokens

_PIECES = st.sampled_from(
    [
        ".",
        "!",
        "?",
        "...",
        ". ",
        "! ",
        "?\n",
        '." ',
        ".) ",
        "e.g.",
        "1.2.3",
        "a",
        "word",
        " ",
        "\n",
        "\n\n",
        "\t",
        "\u3002",
        "\uff01 ",
        "\u3002\u3002",
        "\u201d",
        "'",
    ]
)


def _oracle(text: str, lo: int, hi: int, last: bool) -> int:
    """The boundary a scan of text[:hi] finds: match ends in [lo, hi] whose match starts
    within the level's lookbehind of lo."""
    ends = [
        m.end()
        for m in _SENTENCE_RE.finditer(text, 0, hi)
        if lo <= m.end() and m.start() >= lo - SENTENCE.lookbehind
    ]
    if not ends:
        return -1
    return max(ends) if last else min(ends)


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=400), data=st.data())
def test_sentence_marks_match_a_regex_scan(pieces: list[str], data: st.DataObject) -> None:
    text = "".join(pieces)
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    assert SENTENCE.last(text, lo, hi) == _oracle(text, lo, hi, last=True)
    assert SENTENCE.first(text, lo, hi) == _oracle(text, lo, hi, last=False)


def test_dense_marks_fall_back_to_the_regex_scan() -> None:
    # Hundreds of dots that end no sentence, then one that does, far from the window's end.
    text = "Intro. " + "1.2.3." * 400 + "x" * 50
    assert SENTENCE.last(text, 0, len(text)) == len("Intro. ")
    assert SENTENCE.first(text, 1, len(text)) == len("Intro. ")
    tail = "." * 3000 + " end"
    assert SENTENCE.first(tail, 0, len(tail)) == 3001


@settings(max_examples=60, deadline=None)
@given(
    text=st.lists(_PIECES | st.sampled_from(["alpha", "é", "数据", "  ", "x1"]), max_size=600).map(
        "".join
    ),
    data=st.data(),
)
def test_spans_sharing_an_edge_count_exactly(text: str, data: st.DataObject) -> None:
    """The packer measures a span's end again for the overlap ending there and the overlap's
    start again as the next span's start: every such reuse gives the exact count."""
    doc = TokenMeasure().prepare(text)
    n = len(text)
    for _ in range(10):
        a = data.draw(st.integers(0, n))
        ends = data.draw(st.lists(st.integers(a, n), min_size=1, max_size=3))
        for b in ends:
            assert doc.size(a, b) == count_tokens(text[a:b])
            for start in data.draw(st.lists(st.integers(0, b), max_size=3)):
                assert doc.size(start, b) == count_tokens(text[start:b])


def test_html_header_keeps_later_fences_exact() -> None:
    # A PyPI README header: a block-level tag, comments and links, then code fences whose
    # '#' lines are no headings.
    header = '<p align="center">\n  <!-- logo -->\n<a href="x"><img src="y"></a>\n</p>\n\n'
    text = header + "".join(
        f"## Part {i}\n\n<a href='s'>sponsor</a>\n<!-- end -->\n\n```python\n# code {i}\n```\n\n"
        for i in range(5)
    )
    fences = [exact for start, _, exact in opaque_regions(text) if text.startswith("```", start)]
    assert fences == [True] * 5
    sections, _ = markdown_sections(text)
    assert [s.path for s in sections if s.path] == [(f"Part {i}",) for i in range(5)]
