"""The text form of file names: valid UTF-8, reversible, injective, unchanged for plain names."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from content_core.errors import SourceError
from content_core.paths import escape_path, escape_path_array, os_path_text, unescape_path

SETTINGS = settings(max_examples=500, deadline=None)
# Any bytes a Linux name may hold (all but NUL), biased towards the interesting ones: backslash,
# 'x' and hex digits (to forge escapes), UTF-8 lead and continuation bytes, '/' and newline.
_BYTE = st.one_of(
    st.integers(1, 255),
    st.sampled_from([0x5C, ord("x"), ord("f"), ord("0"), 0xC3, 0xA9, 0xE2, 0x82, 0xFF, 0x2F, 0x0A]),
)
NAMES = st.lists(_BYTE, max_size=64).map(bytes)


@SETTINGS
@given(NAMES)
def test_escape_is_valid_utf8_and_unescape_is_its_exact_inverse(raw: bytes) -> None:
    text = escape_path(raw)
    text.encode("utf-8")  # strict: no lone surrogate ever leaves escape_path
    assert unescape_path(text) == raw
    assert escape_path(unescape_path(text)) == text


@SETTINGS
@given(NAMES, NAMES)
def test_two_distinct_names_never_share_a_text_form(first: bytes, second: bytes) -> None:
    assert (escape_path(first) == escape_path(second)) == (first == second)


@SETTINGS
@given(st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\\\0")))
def test_valid_utf8_without_backslash_is_unchanged(name: str) -> None:
    assert escape_path(name.encode("utf-8")) == name
    assert unescape_path(name) == name.encode("utf-8")


@SETTINGS
@given(st.text(st.sampled_from(["\\", "x", "f", "4", "1", "a", "é", "\udcff"]), max_size=16))
def test_unescape_accepts_only_canonical_text_forms(text: str) -> None:
    """Any text either is the text form of exactly one name or is refused."""
    try:
        raw = unescape_path(text)
    except SourceError:
        return
    assert escape_path(raw) == text


def test_documented_examples() -> None:
    examples = {
        b"plain name.txt": "plain name.txt",
        "café.txt".encode(): "café.txt",
        b"a\xff": "a\\xff",  # one undecodable byte
        b"a\\xff": "a\\\\xff",  # a real name of five characters: a, backslash, x, f, f
        b"caf\xe9.txt": "caf\\xe9.txt",  # Latin-1
        b"\xe2\x82.txt": "\\xe2\\x82.txt",  # a truncated sequence: each byte escaped
        b"\xed\xa0\x80": "\\xed\\xa0\\x80",  # an encoded surrogate is not UTF-8
        b"line\nbreak": "line\nbreak",  # valid UTF-8: kept, previews make it visible
    }
    for raw, text in examples.items():
        assert escape_path(raw) == text
        assert unescape_path(text) == raw
    for refused in ["a\\", "a\\q", "a\\x4", "a\\xFF", "a\\x41", "\udcff"]:
        with pytest.raises(SourceError):
            unescape_path(refused)


def test_the_arrow_form_equals_the_scalar_form() -> None:
    plain = [b"a.txt", b"b/c.txt"]
    assert escape_path_array(pa.array(plain, pa.binary())).to_pylist() == ["a.txt", "b/c.txt"]
    mixed = [b"a.txt", b"a\xff", b"a\\xff", b"\n"]
    assert escape_path_array(pa.array(mixed, pa.binary())).to_pylist() == [
        escape_path(name) for name in mixed
    ]
    assert escape_path_array(pa.array([], pa.binary())).to_pylist() == []


def test_os_paths_from_python_become_their_text_form() -> None:
    """A str path that Python decoded with surrogateescape prints as its escaped text."""
    decoded = os.fsdecode(b"/tmp/caf\xe9/x.txt")
    assert os_path_text(decoded) == "/tmp/caf\\xe9/x.txt"
    assert os_path_text(b"/tmp/a\\b") == "/tmp/a\\\\b"
