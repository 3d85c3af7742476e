"""HTML in legacy and EBCDIC charsets: sniffed as HTML and decoded as a browser would (BOM,
then the page's own `<meta>` or XML declaration, then detection; EBCDIC by its first bytes)."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from content_core.binary import media_types as mt
from content_core.binary.sniff import sniff_media_type
from content_core.extract import extract_text
from content_core.extract._decode import decode_html, markup_charset
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files
from content_core.store.blobs import BlobStore

# (case id, document, codec that writes the bytes, sniffed type, marker that must come out)
CASES = [
    (
        "meta_charset_windows_1251",
        '<!DOCTYPE html><html><head><meta charset="windows-1251"><title>t</title></head>'
        "<body><p>Привет, мир QH7201</p></body></html>",
        "cp1251",
        mt.HTML,
        "Привет, мир QH7201",
    ),
    (
        # The label says Shift_JIS; 髙 exists only in the browsers' Shift_JIS (cp932).
        "http_equiv_shift_jis",
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=shift_jis">'
        "</head><body><p>髙橋淳 日本語 QH7202</p></body></html>",
        "cp932",
        mt.HTML,
        "髙橋淳 日本語 QH7202",
    ),
    (
        "ebcdic_cp037",
        '<html><head><meta charset="ibm037"></head><body><p>Café crème déjà vu QH7203 [x]</p>'
        "</body></html>",
        "cp037",
        mt.HTML,
        "Café crème déjà vu QH7203 [x]",
    ),
    (
        # cp500 puts "!" and brackets elsewhere than cp037: the label decides.
        "ebcdic_cp500",
        '<!DOCTYPE html>\n<html><head><meta charset="cp500"></head>'
        "<body><p>Straße naïve QH7204 [y]!</p></body></html>",
        "cp500",
        mt.HTML,
        "Straße naïve QH7204 [y]!",
    ),
    (
        # No label: z/OS line ends (0x15) tell cp1047.
        "ebcdic_cp1047_unlabelled",
        "<!DOCTYPE html>\n<html>\n<body>\n<p>Ärger über Öl QH7205 [z]</p>\n</body>\n</html>\n",
        "cp1047",
        mt.HTML,
        "Ärger über Öl QH7205 [z]",
    ),
    (
        "ebcdic_xhtml_declaration",
        '<?xml version="1.0" encoding="IBM037"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
        "<body><p>Señor Müller QH7206</p></body></html>",
        "cp037",
        mt.XHTML,
        "Señor Müller QH7206",
    ),
    (
        # EBCDIC pages open with any tag an ASCII page may open with, not just <html>.
        "ebcdic_cp037_paragraph",
        "<p>Grüße aus Zürich QH7207</p>\n<p>Zweite Zeile</p>\n",
        "cp037",
        mt.HTML,
        "Grüße aus Zürich QH7207",
    ),
    (
        "ebcdic_cp1047_heading",
        "\n\n<H1>Bericht QH7208</H1>\n<P>Ärger über Öl [z]\n"
        "<TABLE><TR><TD>Zelle</TD></TR></TABLE>\n",
        "cp1047",
        mt.HTML,
        "Ärger über Öl [z]",
    ),
    (
        # Unlabelled cp500 reads as cp037, which differs only in "!" and brackets.
        "ebcdic_cp500_table",
        "<TABLE>\n<TR><TD>Crème brûlée QH7209</TD></TR>\n</TABLE>\n",
        "cp500",
        mt.HTML,
        "Crème brûlée QH7209",
    ),
]


def _encode(text: str, codec: str) -> bytes:
    if codec == "cp1047":
        import ebcdic  # noqa: F401 - registers cp1047

    return text.encode(codec)


@pytest.mark.parametrize(("case", "html", "codec", "sniffed", "marker"), CASES,
                         ids=[c[0] for c in CASES])
def test_sniffed_and_extracted(case: str, html: str, codec: str, sniffed: str,
                               marker: str) -> None:
    data = _encode(html, codec)
    assert sniff_media_type(data, filename=f"{case}.html") == sniffed
    assert sniff_media_type(data) == sniffed  # the name is no help
    result = extract_text(data, sniffed, filename=f"{case}.html")
    assert result.handler == "html"
    assert marker in result.text, result.text


def test_ebcdic_bytes_hold_no_ascii_markup() -> None:
    data = _encode("<html><body>x</body></html>", "cp037")
    assert data.startswith(b"\x4c\x88\xa3\x94\x93")  # "<html" in cp037
    assert b"<" not in data and markup_charset(data) is None


def test_bom_wins_over_the_meta_label() -> None:
    html = '<meta charset="windows-1251"><p>Grüße QH7211</p>'
    assert "Grüße QH7211" in decode_html(codecs.BOM_UTF8 + html.encode("utf-8"))
    assert "Grüße QH7211" in decode_html(codecs.BOM_UTF16_LE + html.encode("utf-16-le"))


def test_meta_inside_a_comment_or_past_1024_bytes_is_ignored() -> None:
    commented = b'<!-- <meta charset="koi8-r"> --><meta charset="iso-8859-7">'
    assert markup_charset(commented) == "iso8859-7"
    late = b"<html>" + b" " * 1100 + b'<meta charset="koi8-r">'
    assert markup_charset(late) is None


def test_labels_map_as_browsers_map_them() -> None:
    assert markup_charset(b'<meta charset="ISO-8859-1">') == "cp1252"
    assert markup_charset(b'<meta charset="gb2312">') == "gb18030"
    assert markup_charset(b'<meta charset="utf-16">') == "utf-8"
    assert markup_charset(b'<meta charset="no-such-charset">') is None


def test_valid_utf8_wins_over_a_legacy_label() -> None:
    # A common mislabel: the page says Latin-1 and is UTF-8.
    data = '<meta charset="iso-8859-1"><p>naïve café QH7212</p>'.encode()
    assert "naïve café QH7212" in decode_html(data)


def test_ascii_page_with_an_ebcdic_label_stays_ascii() -> None:
    data = b'<html><head><meta charset="cp037"></head><body>plain QH7213</body></html>'
    assert sniff_media_type(data) == mt.HTML
    assert "plain QH7213" in extract_text(data, mt.HTML).text


def test_text_starting_with_l_is_not_ebcdic() -> None:
    data = b"Lorem ipsum QH7214 dolor sit amet.\n"
    assert sniff_media_type(data, filename="a.txt") == mt.PLAIN


def test_ebcdic_and_shift_jis_pages_through_process_files(tmp_path: Path) -> None:
    inputs = []
    for case, html, codec, _, _ in CASES:
        path = tmp_path / f"{case}.htm"
        path.write_bytes(_encode(html, codec))
        inputs.append(FileInput(key=case, path=path, filename=path.name))
    results = process_files(inputs, ProcessingConfig(isolate=False),
                            blob_store=BlobStore(tmp_path / "store"))
    for (case, _, _, sniffed, marker), records in zip(CASES, results, strict=True):
        [record] = records
        assert (record.media_type, record.error_type) == (sniffed, None), case
        assert marker in (record.text or ""), case


# (case id, page, codec that writes the bytes, marker): the <meta> names a charset in which
# these bytes do not decode, so the page's charset is detected from the bytes.
MISLABELLED = [
    (
        "arabic_cp1256_declared_utf8",
        '<html><head><meta charset="utf-8"><title>t</title></head><body>'
        "<p>مرحبا بالعالم، هذه صفحة عربية للاختبار QH7221</p>"
        "<p>اللغة العربية جميلة جدا وهي لغة القرآن</p></body></html>",
        "cp1256",
        "مرحبا بالعالم، هذه صفحة عربية للاختبار QH7221",
    ),
    (
        # cp1252 leaves 0x81, 0x8D and 0x90 (Persian پ چ گ in cp1256) undefined.
        "persian_cp1256_declared_windows_1252",
        '<html><head><meta http-equiv="Content-Type" content="text/html; '
        'charset=windows-1252"></head><body><p>پدر و مادر من چگونه هستند؟ QH7222</p>'
        "<p>گل‌هاي باغ بسيار زيبا هستند و چاي مي‌نوشيم</p></body></html>",
        "cp1256",
        "پدر و مادر من چگونه هستند؟ QH7222",
    ),
    (
        "cyrillic_cp1251_declared_utf8",
        '<!DOCTYPE html><html><head><meta charset="UTF-8"></head><body>'
        "<p>Съешь же ещё этих мягких французских булок QH7223</p></body></html>",
        "cp1251",
        "Съешь же ещё этих мягких французских булок QH7223",
    ),
]


@pytest.mark.parametrize(("case", "html", "codec", "marker"), MISLABELLED,
                         ids=[c[0] for c in MISLABELLED])
def test_a_wrong_meta_charset_gives_way_to_detection(case: str, html: str, codec: str,
                                                     marker: str) -> None:
    data = html.encode(codec)
    assert "\ufffd" not in decode_html(data)
    result = extract_text(data, sniff_media_type(data), filename=f"{case}.html")
    assert marker in result.text, result.text


def test_a_few_broken_bytes_keep_a_declared_multibyte_charset() -> None:
    # A genuine UTF-8 page with one damaged byte: still UTF-8, not re-detected as 8-bit.
    text = "<meta charset='utf-8'><p>" + "日本語のテキスト QH7224 " * 20 + "</p>"
    data = text.encode("utf-8")
    damaged = data[:60] + b"\xff" + data[60:]
    decoded = decode_html(damaged)
    assert decoded.count("\ufffd") == 1 and "日本語のテキスト QH7224" in decoded
