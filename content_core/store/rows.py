"""One frozen row model per table: the Arrow schema and the docs' column list come from it
(content_core.store.row_arrow).

A writer builds these rows and nothing else, so a column it forgets or one the table does not
have is a `TypeError` at the line that builds the row, never a silent null or a dropped value.
The models are slotted dataclasses rather than pydantic models because a batch writes up to
100k chunk rows; the types are checked when the rows become Arrow (`rows_to_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, ClassVar, NamedTuple

import pyarrow as pa

__all__ = [
    "AgenticExtractionRow",
    "ArtifactRow",
    "BatchRow",
    "ChunkEmbeddingRow",
    "ChunkRow",
    "Col",
    "CompressedContextRow",
    "MergedExtractionRow",
    "MessagePartRow",
    "NormalisedArtifactRow",
    "FurnitureLine",
    "OcrReading",
    "PageRange",
    "TABLE_ROWS",
    "RawFileRow",
    "TableRow",
]

KEY_COLUMNS = ("batch_id", "source_id", "path", "path_bytes")


@dataclass(frozen=True, slots=True)
class Col:
    """What a column's annotation alone does not say: its Arrow type when not the default one
    for the Python type, whether Arrow may hold nulls, and its description in the docs."""

    doc: str = ""
    arrow: pa.DataType | None = None
    nullable: bool = True


# Column types shared by many tables; a description is added with Annotated[Alias, Col(doc)].
NotNull = Annotated[str, Col(nullable=False)]  # a key, or a value every row has
Int32 = Annotated[int, Col(arrow=pa.int32())]
OptInt32 = Annotated[int | None, Col(arrow=pa.int32())]
LongText = Annotated[str, Col(arrow=pa.large_string())]
OptLongText = Annotated[str | None, Col(arrow=pa.large_string())]


class PageRange(NamedTuple):
    """Where page `page` lies in an artifact's text: `text[start:end]`."""

    page: int
    start: int
    end: int


class OcrReading(NamedTuple):
    """A page read by OCR: its confidence (0 to 1), the rotation that made it upright
    (degrees counter-clockwise) and why it was read (no_text, garbage, image)."""

    page: int
    confidence: float
    rotation: int
    reason: str


class FurnitureLine(NamedTuple):
    """A line taken out of page `page`'s text as page furniture: its kind (header, footer,
    page_number, margin, watermark) and its text."""

    page: int
    kind: str
    text: str


_PAGE_FURNITURE = pa.list_(
    pa.struct(
        [
            pa.field("page", pa.int32()),
            pa.field("kind", pa.string()),
            pa.field("text", pa.string()),
        ]
    )
)
_OCR_PAGES = pa.list_(
    pa.struct(
        [
            pa.field("page", pa.int32()),
            pa.field("confidence", pa.float64()),
            pa.field("rotation", pa.int32()),
            pa.field("reason", pa.string()),
        ]
    )
)
_PAGES = pa.list_(
    pa.struct(
        [
            pa.field("page", pa.int32()),
            pa.field("start", pa.int64()),
            pa.field("end", pa.int64()),
        ]
    )
)


@dataclass(frozen=True, slots=True, kw_only=True)
class TableRow:
    """The columns every table starts with: a file is keyed by `(source_id, path)`."""

    TABLE: ClassVar[str] = ""
    ONE_ROW_PER: ClassVar[str] = ""

    batch_id: NotNull
    source_id: NotNull
    path: Annotated[NotNull, Col("text form of path_bytes (`escape_path`)")]
    # Null only in rows written before the column existed (their path was valid UTF-8).
    path_bytes: Annotated[bytes | None, Col("the exact bytes of the path")]


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactRow(TableRow):
    """The keys of a row about one artifact of a file: the file's keys, then `artifact_id`."""

    artifact_id: NotNull


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchRow(TableRow):
    """One row per file version in a discovery manifest; deletions have change='deleted'."""

    TABLE: ClassVar[str] = "batches"
    ONE_ROW_PER: ClassVar[str] = "file change in a discovery manifest"

    batch_seq: Annotated[int, Col(nullable=False)]
    source_root: str | None
    change: NotNull
    size_bytes: int | None
    signature: Annotated[
        str | None,
        Col(
            "the source's change signature of the version pinned; "
            "a folder's is `mtime_ns:ctime_ns:inode`"
        ),
    ]
    sha256: str | None
    declared_type: str | None
    discovered_at: datetime | None


@dataclass(frozen=True, slots=True, kw_only=True)
class RawFileRow(TableRow):
    """One row per file version in a batch."""

    TABLE: ClassVar[str] = "raw_files"
    ONE_ROW_PER: ClassVar[str] = "file version in a batch"

    batch_seq: Annotated[int, Col(nullable=False)]
    change: Annotated[NotNull, Col("`added`/`modified`/`deleted`")]
    size_bytes: int | None
    sha256: str | None
    media_type: Annotated[str | None, Col("sniffed from the bytes")]
    declared_type: Annotated[str | None, Col("from the name")]
    fetched_at: datetime | None


@dataclass(frozen=True, slots=True, kw_only=True)
class NormalisedArtifactRow(ArtifactRow):
    """One row per artifact of a raw file (itself, members, bodies, renditions) or failure."""

    TABLE: ClassVar[str] = "normalised_artifacts"
    ONE_ROW_PER: ClassVar[str] = (
        "artifact (the file itself, archive members, email bodies and attachments, converted "
        "images and renders)"
    )

    # Redeclared for its description; a dataclass keeps the field where the base put it.
    artifact_id: Annotated[NotNull, Col("SHA-256 of its bytes")]
    derived_from: Annotated[tuple[str, ...], Col("ancestor ids, raw file first")]
    kind: str
    media_type: Annotated[str, Col("sniffed from the bytes")]
    filename: str
    # Null in rows written before the column existed, as in rows of documents without one.
    title: Annotated[
        str | None,
        Col(
            "the title the document declares in its own metadata: HTML `<title>`, DOCX and "
            "ODF `dc:title`, PDF `/Title` or XMP `dc:title`"
        ),
    ] = None
    page_count: OptInt32
    text: OptLongText
    pages: Annotated[tuple[PageRange, ...], Col("page, start, end offsets into text", arrow=_PAGES)]
    text_status: str  # artifact_records.TEXT_STATUSES
    error_type: str | None = None
    error_message: str | None = None
    stage: str | None = None
    notes: Annotated[
        tuple[str, ...],
        Col(
            "facts that are not the row's error, e.g. an SVG drawing that could not be "
            "rendered while its text was read"
        ),
    ] = ()
    ocr_engine: Annotated[str | None, Col("the OCR engine that read pages or the image")] = None
    ocr_confidence: Annotated[float | None, Col("mean OCR confidence of those, 0 to 1")] = None
    ocr_pages: Annotated[
        tuple[OcrReading, ...],
        Col("page, confidence, rotation, reason of each page read by OCR", arrow=_OCR_PAGES),
    ] = ()
    # Empty in rows written before the column existed, as in rows without furniture.
    page_furniture: Annotated[
        tuple[FurnitureLine, ...],
        Col(
            "page, kind (header, footer, page_number, margin, watermark), text of each line "
            "taken out of a PDF page's text as page furniture",
            arrow=_PAGE_FURNITURE,
        ),
    ] = ()
    raw_sha256: Annotated[str, Col("the raw file's SHA-256, as in raw_files")]
    fingerprint: Annotated[str, Col("configuration and code that made the row")]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkRow(ArtifactRow):
    """One row per chunk; a document that could not be chunked is one row with no content."""

    TABLE: ClassVar[str] = "chunks"
    ONE_ROW_PER: ClassVar[str] = "chunk of an artifact with text"

    chunk_id: NotNull
    index: OptInt32
    total_chunks: OptInt32
    content: OptLongText
    source_start: int | None
    source_end: Annotated[int | None, Col("offsets into the artifact text")]
    token_count: Annotated[OptInt32, Col("exact cl100k")]
    overlap_tokens: OptInt32
    page_start: OptInt32
    page_end: Annotated[OptInt32, Col("pages of its first and last character")]
    breadcrumb: str | None
    chunker: str
    chunker_fingerprint: str
    metadata: Annotated[
        str | None, Col("JSON: the chunker's fields, and `title`, the document's title")
    ]
    error_type: str | None = None
    error_message: Annotated[
        str | None,
        Col("a document that could not be chunked: one row with its keys and no content"),
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkEmbeddingRow(ArtifactRow):
    """One row per chunk: its vector, or why it could not be embedded."""

    TABLE: ClassVar[str] = "chunk_embeddings"
    ONE_ROW_PER: ClassVar[str] = "chunk (not a chunking failure row)"

    chunk_id: NotNull
    model: str
    dimension: Int32
    # Written as a fixed-size list (DuckDB `FLOAT[n]`, n = dimension) by `rows_to_table`.
    embedding: Annotated[
        tuple[float, ...] | None,
        Col("`FLOAT[dimension]`, L2-normalised for wordllama", arrow=pa.list_(pa.float32())),
    ]
    error_type: str | None = None
    error_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagePartRow(ArtifactRow):
    """One row per part of an artifact's message for a vision-capable model, or one failure
    row with no part."""

    TABLE: ClassVar[str] = "message_parts"
    ONE_ROW_PER: ClassVar[str] = "part of an artifact's message for a vision-capable model"

    part_index: Annotated[int, Col("order of the part in the message", arrow=pa.int32())]
    part_type: Annotated[str | None, Col("`text` or `image_url`")]
    page: Annotated[OptInt32, Col("the PDF page an image or text part shows")]
    text: OptLongText
    image_url: Annotated[str | None, Col("a data URL", arrow=pa.large_string())]
    image_sha256: Annotated[str | None, Col("SHA-256 of the image bytes in image_url")]
    fingerprint: Annotated[str, Col("the PDF handling settings that made the row")]
    error_type: str | None = None
    error_message: Annotated[
        str | None, Col("an artifact whose parts could not be made: one row, no part")
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CompressedContextRow(ArtifactRow):
    """One row per document: its text fitted to a token budget, or why it could not be."""

    TABLE: ClassVar[str] = "compressed_contexts"
    ONE_ROW_PER: ClassVar[str] = "artifact with text"

    strategy: str
    max_tokens: Int32
    tokens_before: OptInt32
    tokens_after: OptInt32
    text: OptLongText
    error_type: str | None = None
    error_message: Annotated[
        str | None, Col("a document that could not be compressed: no text")
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AgenticExtractionRow(ArtifactRow):
    """One row per chunk and extraction schema: the agent's validated output or its error."""

    TABLE: ClassVar[str] = "agentic_extractions"
    ONE_ROW_PER: ClassVar[str] = "chunk and schema"

    chunk_id: NotNull
    schema_name: str
    model: str
    cache_key: str
    output_json: OptLongText
    error_type: str | None = None
    error_message: str | None = None
    prompt_tokens: Int32
    completion_tokens: Int32


@dataclass(frozen=True, slots=True, kw_only=True)
class MergedExtractionRow(ArtifactRow):
    """One row per document and schema: its chunks' outputs merged."""

    TABLE: ClassVar[str] = "merged_extractions"
    ONE_ROW_PER: ClassVar[str] = "artifact and schema"

    schema_name: str
    model: str
    strategy: str
    output_json: LongText
    chunk_count: Int32
    error_count: Int32
    provenance_json: LongText


# Every table's row model, in pipeline order (manifests first).
TABLE_ROWS: tuple[type[TableRow], ...] = (
    BatchRow,
    RawFileRow,
    NormalisedArtifactRow,
    ChunkRow,
    ChunkEmbeddingRow,
    MessagePartRow,
    CompressedContextRow,
    AgenticExtractionRow,
    MergedExtractionRow,
)
