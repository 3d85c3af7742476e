"""Regenerate the sample corpus in examples/inbox/ (every file is generated here; no third-party
content). Run: python examples/make_inbox.py. Output is byte-for-byte deterministic."""

from __future__ import annotations

import io
import zipfile
from email.message import EmailMessage
from email.policy import SMTP
from pathlib import Path

from content_core.binary.textpdf import assemble_pdf

INBOX = Path(__file__).parent / "inbox"
_ZIP_TIME = (2026, 1, 1, 0, 0, 0)


def _pdf(pages: list[list[str]]) -> bytes:
    """A small valid PDF with one Helvetica text object per page."""
    objects: list[bytes] = []
    kids = []
    font_id = 3 + 2 * len(pages)
    for number, lines in enumerate(pages):
        page_id, content_id = 3 + 2 * number, 4 + 2 * number
        kids.append(f"{page_id} 0 R")
        text = ["BT /F1 12 Tf 72 740 Td 16 TL"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            text.append(f"({escaped}) Tj T*")
        text.append("ET")
        stream = "\n".join(text).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    header = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>".encode(),
    ]
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    return assemble_pdf([*header, *objects, font])


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, _ZIP_TIME), data, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def _docx(paragraphs: list[tuple[str, str]]) -> bytes:
    """A minimal WordprocessingML package: (style, text) paragraphs."""
    ns = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = "".join(
        f'<w:p><w:pPr><w:pStyle w:val="{style}"/></w:pPr><w:r><w:t xml:space="preserve">'
        f"{text}</w:t></w:r></w:p>"
        for style, text in paragraphs
    )
    document = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        f'<w:document xmlns:w="{ns}"><w:body>{body}</w:body></w:document>'
    )
    types = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" '
        'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.wordprocessingml.document.main+xml"/></Types>'
    )
    rels = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
    )
    return _zip(
        {
            "[Content_Types].xml": types.encode(),
            "_rels/.rels": rels.encode(),
            "word/document.xml": document.encode(),
        }
    )


def _email(attachment: bytes) -> bytes:
    message = EmailMessage(policy=SMTP)
    message["From"] = "Ada Operator <ada@example.org>"
    message["To"] = "ingest@example.org"
    message["Subject"] = "Quarterly figures for the content pipeline demo"
    message["Date"] = "Mon, 02 Mar 2026 09:30:00 +0000"
    message["Message-ID"] = "<demo-0001@example.org>"
    message.set_content(
        "Hello team,\n\nAttached are the quarterly figures. Revenue reached $12,400.50 on "
        "2026-03-01; the full report is at https://example.org/reports/q1.\n\nBest,\nAda\n"
    )
    message.add_attachment(
        attachment, maintype="text", subtype="csv", filename="quarterly-figures.csv"
    )
    message.set_boundary("demo-boundary-0001")  # the default boundary is random
    return message.as_bytes()


def build(variant: int = 0) -> dict[str, bytes]:
    """Every sample file, by name; a non-zero `variant` makes every file's bytes unique
    (benchmarks ingest many distinct copies)."""
    tag = f" Copy {variant}." if variant else ""
    csv = b"quarter,region,revenue\nQ1,North,5200.25\nQ1,South,7200.25\n"
    return {
        "handbook.pdf": _pdf(
            [
                [
                    "Operator Handbook",
                    "Chapter 1. Dropping files into the inbox",
                    "Every file placed in the inbox folder is discovered on the next sensor tick.",
                    "Contact support@example.org for help." + tag,
                ],
                [
                    "Chapter 2. Querying the outputs",
                    "The DuckDB catalog content.duckdb holds one view per table.",
                    "Published on 2026-02-14.",
                ],
            ]
        ),
        "notes.md": (
            "# Pipeline notes\n\nThese notes describe the sample inbox.\n\n"
            "## Chunking\n\nChunks respect an exact token budget and carry a heading "
            "breadcrumb.\n\n```python\n# this is not a heading\nprint('hello')\n```\n\n"
            "## Extraction\n\nThe offline extractor finds emails such as team@example.org, "
            "URLs like https://example.org/docs and dates like 2026-04-01.\n" + tag
        ).encode(),
        "plain.txt": (
            "Meeting minutes, 2026-03-05.\n\nAttendees agreed to budget EUR 3,000 for the "
            "archive migration. Questions go to archive@example.org.\n" + tag
        ).encode(),
        "report.docx": _docx(
            [
                ("Title", "Migration report"),
                ("Heading1", "Summary"),
                ("Normal", "The archive migration finished on 2026-03-20 under budget." + tag),
                ("Heading1", "Next steps"),
                ("Normal", "Index the scanned letters and review the email attachments."),
            ]
        ),
        "message.eml": _email(csv + tag.encode()),
        "bundle.zip": _zip(
            {
                "bundle/config.json": b'{"pipeline": "content", "stages": 6, "owner": "ops"}\n',
                "bundle/readme.txt": b"This archive shows zip fan-out: each member is its own "
                b"artifact derived from bundle.zip.\n" + tag.encode(),
            }
        ),
    }


def main() -> None:
    """Write the sample corpus."""
    INBOX.mkdir(parents=True, exist_ok=True)
    for name, data in build().items():
        (INBOX / name).write_bytes(data)


if __name__ == "__main__":
    main()
