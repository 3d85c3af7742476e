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
    "ChunkBox",
    "ChunkRow",
    "Col",
    "CompressedContextRow",
    "DocumentSimilarityRow",
    "MergedExtractionRow",
    "MessagePartRow",
    "NormalisedArtifactRow",
    "FurnitureLine",
    "OcrReading",
    "PageRange",
    "TABLE_ROWS",
    "RawFileRow",
    "TableRow",
    "TextLineBox",
]

KEY_COLUMNS = ("batch_id", "source_id", "path", "path_bytes")


@dataclass(frozen=True, slots=True)
class Col:
    """What a column's annotation alone does not say: its Arrow type when not the default one
    for the Python type, whether Arrow may hold nulls, and its description (in the docs and on
    the asset's page in the Dagster UI; every column has one, a test checks it)."""

    doc: str = ""
    arrow: pa.DataType | None = None
    nullable: bool = True


# Column types shared by many tables; a description is added with Annotated[Alias, Col(doc)].
NotNull = Annotated[str, Col(nullable=False)]  # a key, or a value every row has
Int32 = Annotated[int, Col(arrow=pa.int32())]
OptInt32 = Annotated[int | None, Col(arrow=pa.int32())]
LongText = Annotated[str, Col(arrow=pa.large_string())]
OptLongText = Annotated[str | None, Col(arrow=pa.large_string())]

# Columns several tables share, described once; a table may still give its own description.
BatchSeq = Annotated[
    int, Col("the batch's sequence number within its source: 1, 2, ... in discovery order",
             nullable=False)
]
Sha256 = Annotated[
    str | None,
    Col("hex SHA-256 of the file's bytes, pinned in the blob store at discovery; "
        "null for a deletion"),
]
SizeBytes = Annotated[int | None, Col("the file's size in bytes; null for a deletion")]
DeclaredType = Annotated[
    str | None,
    Col("the media type the file name's extension suggests (a hint only); null when it "
        "suggests none"),
]
ChunkId = Annotated[
    NotNull,
    Col("the chunk's id, as in chunks: a hash of artifact_id, the chunking settings' "
        "fingerprint and the chunk's index, the same on every rerun"),
]
ErrorType = Annotated[
    str | None,
    Col("the class of the error that made this a failure row (`CorruptFileError`, "
        "`StageTimeoutError`, ...: see the Errors page); null on a row without error"),
]
ErrorMessage = Annotated[
    str | None,
    Col("what failed and why, naming the input; null on a row without error"),
]
SchemaName = Annotated[
    str, Col("the extraction schema: its pydantic model as `module:QualName`")
]


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
class TextLineBox(NamedTuple):
    """Where `text[start:end]` (a line, or a table or heading block) lies on page `page`:
    x0 < x1, y0 < y1 in PDF points, origin at the bottom left of the unrotated page (image
    pixels, origin at the top left, for an image); `edges` has the left edge of each
    character when known."""

    start: int
    end: int
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    edges: tuple[float, ...]


class ChunkBox(NamedTuple):
    """A rectangle of page `page` that a chunk (or a message part's text) covers, in its
    artifact's text_boxes frame."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float


_BOX_FIELDS = [pa.field(name, pa.float32()) for name in ("x0", "y0", "x1", "y1")]
_TEXT_BOXES = pa.list_(
    pa.struct(
        [
            pa.field("start", pa.int64()),
            pa.field("end", pa.int64()),
            pa.field("page", pa.int32()),
            *_BOX_FIELDS,
            pa.field("edges", pa.list_(pa.float32())),
        ]
    )
)
_CHUNK_BOXES = pa.list_(pa.struct([pa.field("page", pa.int32()), *_BOX_FIELDS]))
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
    # A row about two files: its columns naming the other file (batch_id, source_id, path),
    # which must be current too for the row to be in the table's current_* view (when set).
    OTHER_FILE: ClassVar[tuple[str, str, str] | None] = None

    batch_id: Annotated[
        NotNull,
        Col("the ingest batch that wrote the row (`<source_id>-<batch_seq>-<hash>`), also its "
            "Dagster partition key"),
    ]
    source_id: Annotated[
        NotNull,
        Col("the source the file came from: the name of its folder or S3 prefix and a hash of "
            "its location (`inbox-1a2b3c4d`)"),
    ]
    path: Annotated[
        NotNull,
        Col("the file's path relative to the source, the text form of path_bytes "
            "(`escape_path`); a file is keyed by source_id and path"),
    ]
    # Null only in rows written before the column existed (their path was valid UTF-8).
    path_bytes: Annotated[
        bytes | None,
        Col("the exact bytes of the path as the source listed it; files are read back by "
            "these bytes"),
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactRow(TableRow):
    """The keys of a row about one artifact of a file: the file's keys, then `artifact_id`."""

    artifact_id: Annotated[
        NotNull,
        Col("the artifact the row is about, as in normalised_artifacts: the SHA-256 of its "
            "bytes"),
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchRow(TableRow):
    """One row per file version in a discovery manifest; deletions have change='deleted'."""

    TABLE: ClassVar[str] = "batches"
    ONE_ROW_PER: ClassVar[str] = "file change in a discovery manifest"

    batch_seq: BatchSeq
    source_root: Annotated[
        str | None, Col("where the source is: a folder's absolute path or an `s3://` URI")
    ]
    change: Annotated[
        NotNull,
        Col("`added`, `modified` or `deleted`: how the file differs from the store's latest "
            "version of it"),
    ]
    size_bytes: SizeBytes
    signature: Annotated[
        str | None,
        Col(
            "the source's change signature of the version pinned; "
            "a folder's is `mtime_ns:ctime_ns:inode`, an S3 object's `etag@mtime_ns`; "
            "null for a deletion"
        ),
    ]
    sha256: Sha256
    declared_type: DeclaredType
    discovered_at: Annotated[datetime | None, Col("when discovery wrote the manifest (UTC)")]


@dataclass(frozen=True, slots=True, kw_only=True)
class RawFileRow(TableRow):
    """One row per file version in a batch."""

    TABLE: ClassVar[str] = "raw_files"
    ONE_ROW_PER: ClassVar[str] = "file version in a batch"

    batch_seq: BatchSeq
    change: Annotated[
        NotNull, Col("`added`, `modified` or `deleted`, as in the batch's manifest")
    ]
    size_bytes: SizeBytes
    sha256: Sha256
    media_type: Annotated[
        str | None,
        Col("the media type sniffed from the bytes (the name is only a hint); null for a "
            "deletion"),
    ]
    declared_type: DeclaredType
    fetched_at: Annotated[
        datetime | None,
        Col("when the bytes were fetched into the blob store (UTC): the manifest's "
            "discovered_at"),
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class NormalisedArtifactRow(ArtifactRow):
    """One row per artifact of a raw file (itself, members, bodies, renditions) or failure."""

    TABLE: ClassVar[str] = "normalised_artifacts"
    ONE_ROW_PER: ClassVar[str] = (
        "artifact (the file itself, archive members, email bodies and attachments, converted "
        "images and renders)"
    )

    # Redeclared for its description; a dataclass keeps the field where the base put it.
    artifact_id: Annotated[
        NotNull,
        Col("hex SHA-256 of the artifact's bytes; a failure without bytes gets a hash of its "
            "parent's id, its name and its error"),
    ]
    derived_from: Annotated[
        tuple[str, ...],
        Col("ids of the artifacts it came from, raw file first; empty for the raw file itself"),
    ]
    kind: Annotated[
        str,
        Col("the kind its format declares: `pdf`, `image`, `archive`, `email`, `html`, `text`, "
            "...; `binary` for bytes of no known format"),
    ]
    media_type: Annotated[str, Col("the media type sniffed from the artifact's bytes")]
    filename: Annotated[
        str,
        Col("the last part of path for the raw file itself; for a member, attachment or "
            "rendition the name its container or conversion gave it (display only)"),
    ]
    # Null in rows written before the column existed, as in rows of documents without one.
    title: Annotated[
        str | None,
        Col(
            "the title the document declares in its own metadata: HTML `<title>`, DOCX and "
            "ODF `dc:title`, PDF `/Title` or XMP `dc:title`"
        ),
    ] = None
    page_count: Annotated[
        OptInt32, Col("pages of a PDF, or frames of a multi-page image; null for other kinds")
    ]
    text: Annotated[
        OptLongText,
        Col("the extracted text, OCR included; null on containers, renditions and failures "
            "(text_status says why)"),
    ]
    pages: Annotated[
        tuple[PageRange, ...],
        Col("where each page lies in text: page number, start and end offsets "
            "(`text[start:end]`)", arrow=_PAGES),
    ]
    text_status: Annotated[
        str,  # artifact_records.TEXT_STATUSES
        Col("why text is what it is: `ok`, `empty`, `no_text_layer`, `container`, "
            "`rendition`, `unsupported` or `error` (see the text_status page)"),
    ]
    error_type: ErrorType = None
    error_message: ErrorMessage = None
    stage: Annotated[
        str | None,
        Col("where the failure happened: `sniff`, `normalise`, `extract` or `worker` (time or "
            "memory limit); null on a row without error"),
    ] = None
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
    fingerprint: Annotated[
        str,
        Col("a hash of the configuration and package version that made the row: rows with "
            "the same raw_sha256 and fingerprint are reused, not made again"),
    ]
    # Empty in rows written before the column existed, as in rows of formats without pages.
    text_boxes: Annotated[
        tuple[TextLineBox, ...],
        Col(
            "where each line of page text lies on its page: start, end (offsets into text), "
            "page, x0, y0, x1, y1 (PDF points, origin at the bottom left of the unrotated "
            "page) and edges (the left edge of each character, when known); a table or "
            "heading is one box; empty without a PDF text layer",
            arrow=_TEXT_BOXES,
        ),
    ] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkRow(ArtifactRow):
    """One row per chunk; a document that could not be chunked is one row with no content."""

    TABLE: ClassVar[str] = "chunks"
    ONE_ROW_PER: ClassVar[str] = "chunk of an artifact with text"

    chunk_id: ChunkId
    index: Annotated[
        OptInt32, Col("the chunk's position in its artifact, from 0; null on a failure row")
    ]
    total_chunks: Annotated[
        OptInt32, Col("how many chunks its artifact has; null on a failure row")
    ]
    content: Annotated[
        OptLongText,
        Col("the chunk's text: its breadcrumb, if any, then the artifact's "
            "`text[source_start:source_end]`; a table's later part repeats the table's header "
            "before it (and an HTML part closes with `</table>`), counted in metadata "
            "`prefix_chars` and `suffix_chars`"),
    ]
    source_start: Annotated[
        int | None,
        Col("character offset in the artifact's text (normalised_artifacts) where the chunk "
            "starts"),
    ]
    source_end: Annotated[
        int | None, Col("character offset in the artifact's text where the chunk ends (excluded)")
    ]
    token_count: Annotated[
        OptInt32,
        Col("exact tokens of content in the encoding the encoding column names (cl100k_base "
            "unless the chunking settings name another encoding or an OpenAI model), "
            "breadcrumb and repeated table header included"),
    ]
    overlap_tokens: Annotated[
        OptInt32, Col("tokens at the chunk's start that repeat the end of the chunk before")
    ]
    page_start: Annotated[
        OptInt32, Col("the page of the chunk's first character; null for text without pages")
    ]
    page_end: Annotated[
        OptInt32, Col("the page of the chunk's last character; null for text without pages")
    ]
    breadcrumb: Annotated[
        str | None,
        Col("the headings the chunk lies under, joined by ` > ` (Markdown chunker); also the "
            "start of content"),
    ]
    chunker: Annotated[str, Col("the chunker that made the chunk (`markdown`, `recursive`, ...)")]
    chunker_fingerprint: Annotated[
        str,
        Col("a hash of the chunking settings (chunker, size, overlap, options, encoding), part "
            "of chunk_id"),
    ]
    metadata: Annotated[
        str | None,
        Col("JSON: the chunker's fields (a table's chunk: `table`, `table_caption`, "
            "`table_part`, `table_parts`, `table_row_split`), and `title`, the document's title"),
    ]
    error_type: ErrorType = None
    error_message: Annotated[
        ErrorMessage,
        Col("why the document could not be chunked: its one row has its keys and no content"),
    ] = None
    encoding: Annotated[
        str | None,
        Col("the encoding token_count and overlap_tokens count in (`cl100k_base`, "
            "`o200k_base`), from the chunking settings; null on rows written before it was "
            "recorded"),
    ] = None
    # Empty in rows written before the column existed, as in chunks of formats without boxes.
    boxes: Annotated[
        tuple[ChunkBox, ...],
        Col(
            "where the chunk lies on its pages: page, x0, y0, x1, y1 per line it covers (cut "
            "where it starts or ends inside a line), touching lines of one column merged; "
            "PDF points, origin at the bottom left as in normalised_artifacts.text_boxes; "
            "empty for formats without boxes",
            arrow=_CHUNK_BOXES,
        ),
    ] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkEmbeddingRow(ArtifactRow):
    """One row per chunk: its vector, or why it could not be embedded."""

    TABLE: ClassVar[str] = "chunk_embeddings"
    ONE_ROW_PER: ClassVar[str] = "chunk (not a chunking failure row)"

    chunk_id: ChunkId
    model: Annotated[
        str,
        Col("the embedding model that made the vector (`wordllama-...` or an endpoint's "
            "model); `off` when embeddings were off and no vector was made"),
    ]
    dimension: Annotated[Int32, Col("the vector's length; 0 when no vector was made")]
    # Written as a fixed-size list (DuckDB `FLOAT[n]`, n = dimension) by `rows_to_table`.
    embedding: Annotated[
        tuple[float, ...] | None,
        Col("the vector, `FLOAT[dimension]`, L2-normalised for wordllama; null when none was "
            "made", arrow=pa.list_(pa.float32())),
    ]
    error_type: ErrorType = None
    error_message: ErrorMessage = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagePartRow(ArtifactRow):
    """One row per part of an artifact's message for a vision-capable model, or one failure
    row with no part."""

    TABLE: ClassVar[str] = "message_parts"
    ONE_ROW_PER: ClassVar[str] = "part of an artifact's message for a vision-capable model"

    part_index: Annotated[int, Col("order of the part in the message", arrow=pa.int32())]
    part_type: Annotated[str | None, Col("`text` or `image_url`")]
    page: Annotated[OptInt32, Col("the PDF page an image or text part shows")]
    text: Annotated[OptLongText, Col("the text of a `text` part; null for an image part")]
    image_url: Annotated[
        str | None,
        Col("the image of an `image_url` part as a data URL; null for a text part",
            arrow=pa.large_string()),
    ]
    image_sha256: Annotated[str | None, Col("SHA-256 of the image bytes in image_url")]
    fingerprint: Annotated[str, Col("a hash of the PDF handling settings that made the row")]
    error_type: ErrorType = None
    error_message: Annotated[
        ErrorMessage,
        Col("why the artifact's parts could not be made: its one row has no part"),
    ] = None
    # Empty in rows written before the column existed.
    boxes: Annotated[
        tuple[ChunkBox, ...],
        Col(
            "where a text part's text lies on its pages, as chunks.boxes (page, x0, y0, x1, "
            "y1 per line, touching lines of one column merged, in the frame of "
            "normalised_artifacts.text_boxes); empty for an image part and for formats "
            "without boxes",
            arrow=_CHUNK_BOXES,
        ),
    ] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CompressedContextRow(ArtifactRow):
    """One row per document: its text fitted to a token budget, or why it could not be."""

    TABLE: ClassVar[str] = "compressed_contexts"
    ONE_ROW_PER: ClassVar[str] = "artifact with text"

    strategy: Annotated[
        str,
        Col("how the text was reduced: `extractive` (best-scoring sentences kept), "
            "`truncation` (the beginning kept), or `none` when it already fitted"),
    ]
    max_tokens: Annotated[Int32, Col("the token budget the text was fitted to")]
    tokens_before: Annotated[
        OptInt32, Col("exact tokens of the artifact's text in `encoding`; null on a failure row")
    ]
    tokens_after: Annotated[
        OptInt32,
        Col("exact tokens of text in `encoding`, at most max_tokens; null on a failure row"),
    ]
    text: Annotated[
        OptLongText, Col("the artifact's text fitted to max_tokens; null on a failure row")
    ]
    error_type: ErrorType = None
    error_message: Annotated[
        ErrorMessage, Col("why the document could not be compressed: its row has no text")
    ] = None
    encoding: Annotated[
        str | None,
        Col("the encoding max_tokens, tokens_before and tokens_after count in "
            "(`cl100k_base`, `o200k_base`); null on rows written before it was recorded"),
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AgenticExtractionRow(ArtifactRow):
    """One row per chunk and extraction schema: the agent's validated output or its error."""

    TABLE: ClassVar[str] = "agentic_extractions"
    ONE_ROW_PER: ClassVar[str] = "chunk and schema"

    chunk_id: ChunkId
    schema_name: SchemaName
    model: Annotated[
        str,
        Col("the model that produced the output (`offline-facts-v2` for the offline "
            "extractor)"),
    ]
    cache_key: Annotated[
        str,
        Col("the extraction cache's key: hex SHA-256 of the chunk text, schema, model and "
            "rendered prompt"),
    ]
    output_json: Annotated[
        OptLongText,
        Col("the agent's output as JSON, validated against the schema; null on a failure row"),
    ]
    error_type: ErrorType = None
    error_message: ErrorMessage = None
    prompt_tokens: Annotated[
        Int32,
        Col("prompt tokens of the call that made the output (kept when read from the cache); "
            "0 offline and on a failure row"),
    ]
    completion_tokens: Annotated[
        Int32,
        Col("completion tokens of the call that made the output (kept when read from the "
            "cache); 0 offline and on a failure row"),
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class MergedExtractionRow(ArtifactRow):
    """One row per document and schema: its chunks' outputs merged."""

    TABLE: ClassVar[str] = "merged_extractions"
    ONE_ROW_PER: ClassVar[str] = "artifact and schema"

    schema_name: SchemaName
    model: Annotated[
        str,
        Col("the model of the first chunk output merged (of the first chunk when all failed)"),
    ]
    strategy: Annotated[
        str, Col("the merge strategy: `concatenate_list`, `merge_json` or `llm_merge`")
    ]
    output_json: Annotated[LongText, Col("the merged output as JSON")]
    chunk_count: Annotated[
        Int32,
        Col("rows of agentic_extractions for this document and schema, merged or failed"),
    ]
    error_count: Annotated[Int32, Col("of those, the failed ones (left out of the merge)")]
    provenance_json: Annotated[
        LongText,
        Col("JSON: `chunks` merged, `failed_chunks`, `fields` (for each field path the chunk "
            "ids that gave its values) and `llm_fallback`"),
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentSimilarityRow(ArtifactRow):
    """One row per document of the batch (its MinHash signature) and one per near-duplicate
    pair it makes with a document of the store (the `other_*` columns and `jaccard` set)."""

    TABLE: ClassVar[str] = "document_similarity"
    ONE_ROW_PER: ClassVar[str] = (
        "artifact with text (other_path null: its signature), and near-duplicate pair of it "
        "with a document current when the batch ran (other_path set)"
    )
    OTHER_FILE: ClassVar[tuple[str, str, str] | None] = (
        "other_batch_id", "other_source_id", "other_path",
    )

    signature: Annotated[
        tuple[int, ...] | None,
        Col("the MinHash signature of the artifact's text (word 3-shingles, 128 values); "
            "null on a pair row and for a text without words", arrow=pa.list_(pa.uint32())),
    ]
    band_keys: Annotated[
        tuple[int, ...],
        Col("one hash per LSH band of the signature (42 bands of 3 values): documents sharing "
            "a key are compared; empty on a pair row"),
    ]
    shingles: Annotated[
        OptInt32, Col("distinct word 3-shingles of the text; null on a pair row")
    ]
    other_batch_id: Annotated[
        str | None, Col("the batch of the near-duplicate document; null on a signature row")
    ]
    other_source_id: Annotated[
        str | None, Col("the source of the near-duplicate document; null on a signature row")
    ]
    other_path: Annotated[
        str | None,
        Col("the path of the near-duplicate document; null on a signature row (the row of "
            "the document itself)"),
    ]
    other_artifact_id: Annotated[
        str | None,
        Col("the near-duplicate artifact (same id: the same bytes under another path); null "
            "on a signature row"),
    ]
    jaccard: Annotated[
        float | None,
        Col("the Jaccard similarity of the two texts' shingles estimated from their "
            "signatures, at least 0.5; null on a signature row"),
    ]
    fingerprint: Annotated[
        str,
        Col("a hash of the MinHash settings (library, permutations, seed, shingles, bands): "
            "only signatures of one fingerprint are compared"),
    ]


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
    DocumentSimilarityRow,
)
