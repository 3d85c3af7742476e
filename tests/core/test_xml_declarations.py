"""XML and SVG declarations: refuse what is dangerous, parse what is merely unusual.

Each refusal kind comes with a test that shows the danger: an unguarded lxml parser (entities
resolved, DTDs loaded) run on the same kind of generated file expands it out of all proportion
or reads a local file. Each accepted kind comes with a file that used to be refused.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from lxml import etree

from content_core.binary.sniff import sniff_media_type
from content_core.errors import UnsafeInputError
from content_core.extract import extract_text
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files
from content_core.store.blobs import BlobStore
from tests.fixtures.corpus import CORPUS

XML = "application/xml"
SVG = "image/svg+xml"


def _unguarded(data: bytes) -> str:
    """What a parser without our guard makes of `data`: every entity resolved, DTDs loaded."""
    parser = etree.XMLParser(resolve_entities=True, load_dtd=True, no_network=True,
                             huge_tree=True)
    return "".join(etree.fromstring(data, parser).itertext())


def _laughs(levels: int) -> bytes:
    declarations = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
        for i in range(1, levels + 1)
    )
    return f'<?xml version="1.0"?><!DOCTYPE r [{declarations}]><r>&lol{levels};</r>'.encode()


def _quadratic(entity_bytes: int, references: int, *, in_attribute: bool = False) -> bytes:
    refs = "&big;" * references
    body = f'<r a="{refs}"/>' if in_attribute else f"<r>{refs}</r>"
    return f'<!DOCTYPE r [<!ENTITY big "{"x" * entity_bytes}">]>{body}'.encode()


def _patent_grant() -> bytes:
    """A USPTO-style patent grant: SYSTEM DTD (never fetched), NDATA drawing entities."""
    figures = "".join(
        f'<!ENTITY US07654321-20100202-D0000{i}.TIF SYSTEM "US07654321-20100202-D0000{i}.TIF" '
        "NDATA TIF>\n"
        for i in range(3)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE us-patent-grant SYSTEM "us-patent-grant-v42-2006-08-23.dtd" [\n'
        f"{figures}]>\n"
        '<us-patent-grant lang="EN" dtd-version="v4.2 2006-08-23" '
        'file="US07654321-20100202.XML" status="PRODUCTION" id="us-patent-grant" country="US" '
        'date-produced="20100119" date-publ="20100202">'
        "<us-bibliographic-data-grant><publication-reference><document-id><country>US</country>"
        "<doc-number>07654321</doc-number><kind>B2</kind><date>20100202</date></document-id>"
        "</publication-reference>"
        "<invention-title id=\"d0e53\">Self-folding umbrella QXP01</invention-title>"
        "</us-bibliographic-data-grant>"
        '<abstract id="abstract"><p id="p-0001" num="0000">An umbrella that folds itself '
        "when the rain stops QXP02.</p></abstract>"
        '<drawings id="DRAWINGS"><figure id="Fig-EMI-D00000" num="00000">'
        '<img id="EMI-D00000" he="200.41mm" wi="150.37mm" file="US07654321-20100202-D00000.TIF" '
        'alt="embedded image" img-content="drawing" img-format="tif"/></figure></drawings>'
        '<description id="description"><p id="p-0002" num="0001">The canopy is held by '
        "a spring QXP03.</p></description>"
        '<claims id="claims"><claim id="CLM-00001" num="00001"><claim-text>1. An umbrella '
        "comprising a rain sensor QXP04.</claim-text></claim></claims>"
        "</us-patent-grant>\n"
    ).encode()


# ------------------------------------------------------------------------------ parsed


def test_uspto_patent_grant_with_ndata_entities_is_parsed() -> None:
    data = _patent_grant()
    assert sniff_media_type(data, filename="US07654321-20100202.XML") == XML
    result = extract_text(data, XML)
    assert result.handler == "xml"
    for phrase in ("QXP01", "QXP02", "QXP03", "QXP04"):
        assert phrase in result.text
    # A patent comes out as its text: the drawings' file names are markup, not text.
    assert "D00000.TIF" not in result.text


def test_uspto_patent_grant_row_has_text_and_no_error(tmp_path: Path) -> None:
    path = tmp_path / "US07654321-20100202.XML"
    path.write_bytes(_patent_grant())
    [[record]] = process_files(
        [FileInput(key="k", path=path, filename=path.name)],
        ProcessingConfig(isolate=False),
        blob_store=BlobStore(tmp_path / "blobs"),
    )
    assert record.error_type is None
    assert "rain sensor QXP04" in (record.text or "")


def test_external_dtd_is_never_loaded(tmp_path: Path) -> None:
    dtd = tmp_path / "evil.dtd"
    dtd.write_text('<!ENTITY leak "PULLED-IN-QXD1">')
    data = f'<!DOCTYPE r SYSTEM "{dtd.as_uri()}"><r>before &leak; after</r>'.encode()
    # The danger: a parser that loads DTDs reads the file named by the DOCTYPE.
    assert "PULLED-IN-QXD1" in _unguarded(data)
    result = extract_text(data, XML)
    assert result.handler == "xml"
    assert "before" in result.text and "PULLED-IN-QXD1" not in result.text


def test_small_internal_entities_are_expanded() -> None:
    data = (
        b'<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
        b'"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" ['
        b'<!ENTITY ns_svg "http://www.w3.org/2000/svg">'
        b'<!ENTITY ns_ai "http://ns.adobe.com/AdobeIllustrator/10.0/">'
        b'<!ENTITY maker "Acme QXE1">]>'
        b'<svg xmlns="&ns_svg;" xmlns:i="&ns_ai;" width="10" height="10">'
        b"<text>Made by &maker;</text></svg>"
    )
    assert extract_text(data, SVG).text == "Made by Acme QXE1"
    assert "Made by Acme QXE1" in extract_text(data, XML).text


# ------------------------------------------------------------------------------ refused


def test_billion_laughs_is_refused() -> None:
    # The danger: three levels already multiply the text by a thousand; nine make 3 GB.
    small = _laughs(3)
    assert len(_unguarded(small)) == 3 * 10**3 > 10 * len(small)
    for media_type in (XML, SVG):
        with pytest.raises(UnsafeInputError, match="billion laughs"):
            extract_text(_laughs(9), media_type)


def test_corpus_billion_laughs_svg_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "billion-laughs.svg"
    path.write_bytes((CORPUS / "svg/billion-laughs.svg").read_bytes())
    [[record]] = process_files(
        [FileInput(key="k", path=path, filename=path.name)],
        ProcessingConfig(isolate=False),
        blob_store=BlobStore(tmp_path / "blobs"),
    )
    assert record.error_type == "UnsafeInputError"
    assert "billion laughs" in (record.error_message or "")


@pytest.mark.parametrize("in_attribute", [False, True], ids=["content", "attribute"])
def test_quadratic_blowup_is_refused(in_attribute: bool) -> None:
    data = _quadratic(5_000, 1000, in_attribute=in_attribute)
    # The danger: 10 KB of document becomes 5 MB of text (about 500x), with no nesting; the
    # standard library parser expands it (its own guard starts only past 8 MiB).
    root = ElementTree.fromstring(data)
    expanded = root.get("a") if in_attribute else root.text
    assert len(expanded or "") == 5_000 * 1000 > 400 * len(data)
    with pytest.raises(UnsafeInputError, match="expan"):
        extract_text(data, XML)


def test_a_large_entity_used_once_is_not_a_blowup() -> None:
    data = _quadratic(20_000, 2)
    assert len(extract_text(data, XML).text) > 40_000


def test_external_entity_in_content_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-QXS1")
    data = f'<!DOCTYPE r [<!ENTITY x SYSTEM "{secret.as_uri()}">]><r>&x;</r>'.encode()
    # The danger: resolving the entity reads a local file into the output.
    assert "SECRET-QXS1" in _unguarded(data)
    with pytest.raises(UnsafeInputError, match="external entity"):
        extract_text(data, XML)


def test_external_parameter_entity_is_refused(tmp_path: Path) -> None:
    dtd = tmp_path / "pulled.dtd"
    dtd.write_text('<!ENTITY leak "PULLED-IN-QXD2">')
    data = (
        f'<!DOCTYPE r [<!ENTITY % ext SYSTEM "{dtd.as_uri()}"> %ext;]><r>&leak;</r>'
    ).encode()
    # The danger: the parameter entity pulls declarations (and their content) from elsewhere.
    assert "PULLED-IN-QXD2" in _unguarded(data)
    with pytest.raises(UnsafeInputError, match="external parameter entity"):
        extract_text(data, XML)
