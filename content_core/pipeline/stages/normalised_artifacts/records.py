"""ArtifactRecord, one row of `normalised_artifacts`, and how the artifacts of one normalised
raw file become records: blobs stored, text extracted (falling back on a PDF rendition), OCR
read where a page or a picture has no text, and every failure kept as a record of its own.

Runs in a pool worker, called by the stage's `worker` module for each raw file.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, computed_field

from content_core.binary import media_types as mt
from content_core.binary.artifact import BinaryArtifact, Damage
from content_core.binary.config import BinaryConfig
from content_core.binary.normalizer import failure_id
from content_core.binary.pdf_handles import OpenedPdf, PdfHandles
from content_core.errors import ContentError
from content_core.extract import ExtractedText, PageFurniture, PageSpan, TextBox, extract_text
from content_core.formats import default_formats
from content_core.ocr import OcrOutcome, OcrPage, OcrRun, is_picture
from content_core.store.blobs import BlobStore

__all__ = ["TEXT_STATUSES", "ArtifactRecord", "error_record", "records_of"]

_UNSAFE_CHARS = re.compile("[\x00\ud800-\udfff]")
# Why an artifact has the text it has; users filter on it (docs/reference/text-status.md).
TEXT_STATUSES = (
    "ok",  # text came out
    "empty",  # a document whose text is empty or only white space
    "no_text_layer",  # pages or pixels without text: a scan, a picture that decodes (needs OCR)
    "container",  # an archive or an email: its text is in its member and body rows
    "rendition",  # the same content in another format, as a sibling row (no double counting)
    "unsupported",  # bytes of no format we read
    "error",  # error_type says why
)


class ArtifactRecord(BaseModel):
    """One row of `normalised_artifacts`: an artifact, its text, or why it failed.

    `artifact_id` is the SHA-256 of the artifact bytes (stored in the blob store); a failure
    without bytes gets a deterministic hash of (parent id, member name, error) instead.
    `derived_from` lists ancestor ids, raw file first; it is empty for the raw file itself.
    Text is set on document rows only; renditions (an Office file rendered to PDF, an image
    re-encoded) carry no text, so nothing is counted twice. `stage` names where a failure
    happened: "sniff", "normalise", "extract" or "worker". `notes` are facts about the row that
    are not its error (an SVG whose drawing could not be rendered but whose text was read).
    `ocr_engine` names the engine that read some of its pages or its image, `ocr_confidence`
    is their mean confidence (0..1) and `ocr_pages` has one entry per page read. `title` is
    the title a document declares in its own metadata (HTML `<title>`, DOCX/ODF `dc:title`,
    PDF `/Title` or XMP), never one guessed from its name or first heading. `page_furniture`
    holds the lines taken out of a PDF's page text as page furniture (running heads, page
    numbers, margin stamps, watermarks), pages read by OCR aside. `text_boxes` places the lines
    of its text on its pages (`TextBox`), where the extraction knows them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    artifact_id: str
    derived_from: tuple[str, ...]
    kind: str
    media_type: str
    filename: str
    page_count: int | None
    text: str | None
    pages: tuple[PageSpan, ...] = ()
    error_type: str | None = None
    error_message: str | None = None
    stage: str | None = None
    notes: tuple[str, ...] = ()
    ocr_engine: str | None = None
    ocr_confidence: float | None = None
    ocr_pages: tuple[OcrPage, ...] = ()
    title: str | None = None
    page_furniture: tuple[PageFurniture, ...] = ()
    text_boxes: tuple[TextBox, ...] = ()

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form
    @property
    def text_status(self) -> str:
        """One of TEXT_STATUSES: never a silent '' that could mean "extraction lost it"."""
        if self.error_type is not None:
            return "error"
        if self.text is None:  # extraction was not asked for: see where the text lives
            if self.kind in ("archive", "email"):
                return "container"
            if self.kind == "image":
                return "no_text_layer"
            return "unsupported" if self.kind == "binary" else "rendition"
        if self.text.strip():
            return "ok"
        # A scan or a picture where OCR found nothing (or did not run: `ocr_engine` is null).
        pictured = self.kind == "image" or (self.kind == "pdf" and bool(self.page_count))
        return "no_text_layer" if pictured else "empty"


def records_of(
    artifacts: list[BinaryArtifact],
    store: BlobStore,
    raw_id: str,
    limits: BinaryConfig,
    ocr: OcrRun,
    *,
    pdfs: PdfHandles | None = None,
) -> list[ArtifactRecord]:
    """The records of one raw file's `artifacts` (the raw file first, identified by `raw_id`),
    each artifact's bytes stored in `store`, documents with their text, pictures and pages
    without a text layer read by `ocr`; one record per distinct id.

    `pdfs` holds the PDFs normalisation left open (`BinaryNormalizer.normalise`): a document's
    is taken for its extraction and closed once read, also when reading it fails; the caller
    closes `pdfs` for whatever is left (see `PdfHandles`)."""
    records: list[ArtifactRecord | None] = [None] * len(artifacts)
    ids: list[str] = []
    for artifact in artifacts:
        if not artifact.derived_from:  # the raw file itself: its id is known
            ids.append(store.put(artifact.bytes, blob_id=raw_id))
        elif artifact.error_type is not None and not artifact.bytes:
            parent = artifact.derived_from[-1]
            ids.append(failure_id(parent, artifact.filename, artifact.error_message or ""))
        else:
            ids.append(store.put(artifact.bytes))
    # Renditions of each artifact (by id), to fall back on when native extraction fails.
    renditions: dict[str, list[int]] = {}
    for index, artifact in enumerate(artifacts):
        if artifact.rendition and artifact.error_type is None and artifact.derived_from:
            renditions.setdefault(artifact.derived_from[-1], []).append(index)
    # Damaged pictures that became errors (by id): what was decoded of them is no rendition of
    # anything readable, so it gets no row (a rendition always comes after its source).
    unreadable: set[str] = set()
    for index, artifact in enumerate(artifacts):
        if artifact.rendition and artifact.derived_from and artifact.derived_from[-1] in unreadable:
            continue
        base = ArtifactRecord(
            artifact_id=ids[index],
            derived_from=artifact.derived_from,
            kind=artifact.kind,
            media_type=artifact.media_type,
            filename=_clean(artifact.filename),
            page_count=artifact.page_count,
            text=None,
            notes=tuple(_clean(note) for note in artifact.notes),
        )
        if artifact.error_type is not None:
            records[index] = base.model_copy(update={
                "error_type": artifact.error_type,
                "error_message": _clean(artifact.error_message or ""),
                "stage": "normalise",
            })
            continue
        # Whether a format has text of its own is its declaration (pictures and containers
        # have none; an SVG picture does).
        own = [artifacts[i] for i in renditions.get(ids[index], [])]
        if is_picture(artifact):
            outcome = ocr.read_picture(artifact, own)
            # A picture in which OCR found nothing keeps no text, as before OCR.
            found = outcome.engine is not None and bool(outcome.extracted.text.strip())
            made = _with_ocr(base, outcome, text=found)
        elif artifact.rendition or not default_formats().yields_text(artifact.media_type):
            made = base
        else:
            fallbacks = [rendition for rendition in own if rendition.media_type == mt.PDF]
            opened = pdfs.take(ids[index]) if pdfs is not None else None
            made = _with_text(artifact, base, fallbacks, limits, ocr, opened)
        if artifact.damage is not None:
            if not _read_anyway(made):
                unreadable.add(ids[index])
            made = _with_damage(made, artifact.damage)
        records[index] = made
    unique: list[ArtifactRecord] = []
    emitted: set[str] = set()
    for record in records:
        # Two failures of the same name and reason under one parent share an id: keep one.
        if record is not None and record.artifact_id not in emitted:
            emitted.add(record.artifact_id)
            unique.append(record)
    return unique


def _with_text(
    artifact: BinaryArtifact,
    base: ArtifactRecord,
    fallbacks: list[BinaryArtifact],
    limits: BinaryConfig,
    ocr: OcrRun,
    opened: OpenedPdf | None,
) -> ArtifactRecord:
    """Extract the text of a document artifact under `limits` (from `opened`, its PDF the
    guard left open, when there is one), falling back on its PDF rendition (legacy Office
    formats, password-decrypted PDFs); PDF pages without a usable text layer are read by OCR."""
    pdf = artifact.bytes if artifact.media_type == mt.PDF else None
    try:
        extracted = _own_text(artifact, limits, opened)
    except ContentError as exc:
        for rendition in fallbacks:
            try:
                extracted = extract_text(
                    rendition.bytes, mt.PDF, filename=rendition.filename, options=limits
                )
            except ContentError:
                continue
            pdf = rendition.bytes
            break
        else:
            return base.model_copy(update={
                "error_type": exc.error_type,
                "error_message": _clean(exc.message),
                "stage": "extract",
            })
    except RecursionError as exc:
        return base.model_copy(update={
            "error_type": "LimitExceededError",
            "error_message": f"input nests too deeply for the parser ({exc})",
            "stage": "extract",
        })
    furniture = tuple(
        item.model_copy(update={"text": _clean(item.text)}) for item in extracted.furniture
    )
    base = base.model_copy(update={"title": extracted.title, "page_furniture": furniture})
    if pdf is not None and extracted.pages:
        made = _with_ocr(base, ocr.read_pdf(pdf, extracted), text=True)
        # A page OCR read has OCR's text: the text layer's furniture of it is not its own.
        read = {page.page for page in made.ocr_pages}
        if read and furniture:
            kept = tuple(item for item in furniture if item.page not in read)
            made = made.model_copy(update={"page_furniture": kept})
        return made
    return base.model_copy(update={
        "text": _clean(extracted.text), "pages": extracted.pages,
        "text_boxes": extracted.text_boxes,
    })


def _own_text(
    artifact: BinaryArtifact, limits: BinaryConfig, opened: OpenedPdf | None
) -> ExtractedText:
    """The text of the artifact's own bytes, read from `opened` when the guard left them open.
    `opened` is closed once read: fallbacks and OCR open documents of their own, and holding it
    through them would hold two copies."""
    try:
        return extract_text(artifact.bytes, artifact.media_type, filename=artifact.filename,
                            options=limits, opened_pdf=opened)
    finally:
        if opened is not None:
            opened.close()


def _read_anyway(record: ArtifactRecord) -> bool:
    """Whether a damaged picture's row has text all the same (or fails for a reason of its
    own, which stays its error)."""
    return record.error_type is not None or bool((record.text or "").strip())


def _with_damage(record: ArtifactRecord, damage: Damage) -> ArtifactRecord:
    """`record` of a picture decoded or drawn only in part: text read from it all the same
    (OCR of the part decoded, an SVG's XML) is kept with the damage as a note; without text the
    damage is the row's error, never a clean-looking `no_text_layer`."""
    if _read_anyway(record):
        return record.model_copy(update={"notes": (*record.notes, _clean(damage.note))})
    return record.model_copy(update={
        "error_type": damage.error_type,
        "error_message": _clean(damage.message),
        "stage": "normalise",
    })


def _with_ocr(base: ArtifactRecord, outcome: OcrOutcome, *, text: bool) -> ArtifactRecord:
    """`base` with what OCR read (its text too when `text`), its notes and its error."""
    update: dict[str, object] = {
        "notes": base.notes + tuple(_clean(note) for note in outcome.notes),
        "ocr_engine": outcome.engine,
        "ocr_confidence": outcome.confidence,
        "ocr_pages": outcome.pages,
    }
    if text:
        update.update(text=_clean(outcome.extracted.text), pages=outcome.extracted.pages,
                      text_boxes=outcome.extracted.text_boxes)
    if outcome.unavailable is not None:
        error = outcome.unavailable
        update.update(error_type=error.error_type, error_message=_clean(error.message),
                      stage="extract")
    return base.model_copy(update=update)


def _clean(text: str) -> str:
    """Replace NULs and lone surrogates (DuckDB rejects both) one for one, so page offsets
    stay valid."""
    return _UNSAFE_CHARS.sub("\ufffd", text) if _UNSAFE_CHARS.search(text) else text


def error_record(
    artifact_id: str,
    derived_from: tuple[str, ...],
    media_type: str,
    filename: str,
    error_type: str,
    message: str,
    stage: str,
    *,
    kind: str = "failure",
) -> ArtifactRecord:
    """The record of an artifact that failed at `stage` and has nothing else to show."""
    return ArtifactRecord(
        artifact_id=artifact_id,
        derived_from=derived_from,
        kind=kind,
        media_type=media_type,
        filename=_clean(filename),
        page_count=None,
        text=None,
        error_type=error_type,
        error_message=_clean(message),
        stage=stage,
    )
