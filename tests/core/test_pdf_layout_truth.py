"""The PDF layout ground truth (tests/corpus/layout) and its scorer (tests/fixtures/layout_truth).

The truth must parse, name documents that exist, say of generated documents only what their
source says, and the scorer must give the truth's own Markdown full marks and fail it where a
running head, a swapped paragraph, a shifted cell or a plain-text heading breaks it.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections import Counter
from xml.etree import ElementTree

import pytest

from tests.fixtures.corpus import CORPUS, manifest_rows
from tests.fixtures.layout_docs import (
    GENERATED,
    LayoutDoc,
    Para,
    expected_markdown,
    layout_docs,
    layout_truths,
)
from tests.fixtures.layout_truth import (
    KINDS,
    Check,
    Document,
    document_bytes,
    load_truth,
    markdown_tables,
    page_count,
    score,
    score_document,
)

DOCUMENTS, CHECKS = load_truth()
BY_DOC: dict[str, list[Check]] = {}
for _check in CHECKS:
    BY_DOC.setdefault(_check.doc, []).append(_check)
GENERATED_DOCS = {f"layout/generated/{doc.name}.pdf": doc for doc in layout_docs()}


def test_truth_is_large_and_covers_every_kind() -> None:
    kinds = Counter(check.kind for check in CHECKS)
    assert set(kinds) == set(KINDS), kinds
    assert len(CHECKS) >= 150 and len(DOCUMENTS) >= 15, (len(CHECKS), len(DOCUMENTS))
    assert len({d.path for d in DOCUMENTS}) == len(DOCUMENTS), "a document is described twice"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.path)
def test_every_document_exists_with_a_manifest_row_and_checks(document: Document) -> None:
    path = CORPUS / document.path
    rows = {row["path"]: row for row in manifest_rows()}
    assert path.is_file()
    assert document.path in rows, "each truth PDF is a corpus file with origin and licence"
    assert rows[document.path]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert document.source in ("hand", "generated")
    assert BY_DOC.get(document.path), "a document without checks measures nothing"
    if document.pages is not None:
        first, last = document.pages
        assert 1 <= first <= last <= page_count(path.read_bytes())
        assert page_count(document_bytes(document)) == last - first + 1


def test_every_check_names_a_described_document_and_is_well_formed() -> None:
    described = {document.path for document in DOCUMENTS}
    required = {
        "present": {"text"},
        "absent": {"text"},
        "order": {"before", "after"},
        "heading": {"text", "level"},
        "formula": {"latex"},
    }
    for check in CHECKS:
        assert check.doc in described, check.describe()
        keys = {key for key, _ in check.fields}
        if check.kind == "table":
            directions = keys & {"right", "left", "up", "down"}
            assert "cell" in keys and len(directions) == 1, check.describe()
        else:
            assert required[check.kind] <= keys, check.describe()
        if check.kind == "heading":
            assert check.get("level") in range(1, 7), check.describe()


def test_generated_truth_is_what_the_builders_say() -> None:
    # The committed checks are exactly those derived from the builders' data and the page
    # counts of the committed renderings: nobody edited them by hand.
    lines = []
    for doc in layout_docs():
        pages = page_count((GENERATED / f"{doc.name}.pdf").read_bytes())
        lines += [json.dumps(check, ensure_ascii=False) for check in layout_truths(doc, pages)]
    committed = (GENERATED / "generated.jsonl").read_text(encoding="utf-8").splitlines()
    assert committed == lines, "run: python -m tests.fixtures.layout_docs --write"


def _docx_text(doc: LayoutDoc) -> str:
    # Every w:t of the document body, header, footer and footnotes parts, as one string.
    namespace = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
    texts = []
    with zipfile.ZipFile(GENERATED / f"{doc.name}.docx") as archive:
        for name in archive.namelist():
            if name.startswith("word/") and name.endswith(".xml"):
                root = ElementTree.fromstring(archive.read(name))
                texts += [node.text or "" for node in root.iter(f"{namespace}t")]
    return " ".join(" ".join(texts).split())


@pytest.mark.parametrize("path", sorted(GENERATED_DOCS), ids=lambda p: p.rsplit("/", 1)[-1])
def test_generated_present_and_headings_are_in_the_source(path: str) -> None:
    source = _docx_text(GENERATED_DOCS[path])
    for check in BY_DOC[path]:
        if check.kind in ("present", "heading"):
            assert " ".join(str(check.get("text")).split()) in source, check.describe()


@pytest.mark.parametrize("path", sorted(GENERATED_DOCS), ids=lambda p: p.rsplit("/", 1)[-1])
def test_the_truths_own_markdown_scores_full_marks(path: str) -> None:
    result = score_document(expected_markdown(GENERATED_DOCS[path]), BY_DOC[path])
    assert result.failures == []
    assert result.overall == 1.0
    assert result.heading_precision == 1.0 and result.level_accuracy == 1.0


def test_a_running_head_left_in_the_body_fails_its_absent_check() -> None:
    path, doc = next(iter(GENERATED_DOCS.items()))
    markdown = expected_markdown(doc)
    middle = len(markdown) // 2
    cut = markdown.index("\n\n", middle)
    with_head = markdown[:cut] + f"\n\n{doc.header}\n\n" + markdown[cut:]
    result = score_document(with_head, BY_DOC[path])
    assert result.failures == [f"{path}: absent text={doc.header!r}"]


def test_swapped_paragraphs_fail_their_order_check() -> None:
    path, doc = next(iter(GENERATED_DOCS.items()))
    paragraphs = [block.text for block in doc.blocks if isinstance(block, Para)]
    markdown = expected_markdown(doc)
    first, second = paragraphs[0], paragraphs[1]
    swapped = markdown.replace(first, "\0").replace(second, first).replace("\0", second)
    result = score_document(swapped, BY_DOC[path])
    assert result.passed["present"] == result.total["present"]
    assert result.passed["order"] < result.total["order"]


def test_plain_text_headings_give_no_recall_and_extra_headings_cost_precision() -> None:
    path, doc = next(iter(GENERATED_DOCS.items()))
    markdown = expected_markdown(doc)
    plain = "\n".join(line.lstrip("# ") for line in markdown.splitlines())
    result = score_document(plain, BY_DOC[path])
    assert result.heading_recall == 0.0 and result.headings_emitted == 0
    noisy = score_document("# Page 1 of 3\n\n" + markdown, BY_DOC[path])
    assert noisy.heading_recall == 1.0
    assert noisy.heading_precision == noisy.headings_matched / (noisy.headings_matched + 1)


def test_a_heading_set_on_two_lines_matches_as_two_hash_lines() -> None:
    checks = [Check("x.pdf", "heading", (("text", "Freight Routing 2% Volume"), ("level", 1)))]
    result = score_document("# Freight Routing\n\n# **2%** Volume\n\nbody", checks)
    assert result.heading_recall == 1.0 and result.heading_precision == 1.0
    assert score_document("# Freight Routing\n\nbody", checks).heading_recall == 0.0


def test_html_spans_are_expanded_and_markdown_tables_read() -> None:
    html = (
        '<table><tr><th rowspan="2">Terminal</th><th colspan="2">Traffic</th></tr>'
        "<tr><td>In<br>bound</td><td>Out</td></tr></table>"
    )
    markdown = "text\n\n| a | b |\n|---|:-:|\n| c \\| d | e |\n\nmore"
    grids = markdown_tables(markdown + "\n" + html)
    # An escaped pipe stays inside its cell (compared, like all text, with pipes as spaces).
    assert grids == [
        [["a", "b"], ["c d", "e"]],
        [["terminal", "traffic", "traffic"], ["terminal", "in bound", "out"]],
    ]


def test_shifted_cells_fail_table_checks() -> None:
    checks = [
        Check("x.pdf", "table", (("cell", "Austria"), ("right", "8.9"))),
        Check("x.pdf", "table", (("cell", "Vienna"), ("up", "Brussels"))),
    ]
    right = "| Austria | 8.9 | Brussels |\n|---|---|---|\n| Belgium | 11.5 | Vienna |"
    shifted = "| Austria | | 8.9 | Brussels |\n|---|---|---|---|\n| Belgium | 11.5 | Vienna | |"
    assert score_document(right, checks).passed["table"] == 2
    assert score_document(shifted, checks).passed["table"] == 0


def test_text_is_compared_as_a_reader_would() -> None:
    checks = [
        Check("x.pdf", "present", (("text", "efficient passage retrieval"),)),
        Check("x.pdf", "present", (("text", "let's do more"),)),
        Check("x.pdf", "absent", (("text", "2"), ("line", True))),
        Check("x.pdf", "formula", (("latex", "E=\\frac{v^{2}}{2g}+h"),)),
    ]
    text = (
        "relies on **ef-\nficient** passage\nretrieval; let’s do more in 2 steps\n"
        "$$E = \\frac{v^{2}}{2g} + h$$"
    )
    assert score_document(text, checks).failures == []
    assert score_document(text + "\n\n2\n", checks).failures == [
        "x.pdf: absent text='2', line=True"
    ]


def test_score_runs_a_converter_over_the_whole_set() -> None:
    calls = []

    def convert(data: bytes) -> str:
        calls.append(len(data))
        return ""

    result = score(convert)
    assert len(calls) == len(DOCUMENTS)
    # An empty body passes exactly the absent checks and nothing else.
    assert result.passed["absent"] == result.total["absent"]
    assert sum(result.passed.values()) == result.passed["absent"]
