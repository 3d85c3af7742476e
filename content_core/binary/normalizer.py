"""BinaryNormalizer: sequence sniffing, guards, conversions and unpacking into artifacts.

This module holds no format logic: it sniffs, picks the handler for the media type, and walks
containers recursively, charging one `ExpansionBudget` per raw file. A member that fails becomes
an artifact with its error recorded; its siblings go on.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from content_core.binary import media_types as mt
from content_core.binary.archives import ArchiveUnpacker
from content_core.binary.artifact import BinaryArtifact, Damage
from content_core.binary.budget import ExpansionBudget
from content_core.binary.config import BinaryConfig
from content_core.binary.email import EmailUnpacker
from content_core.binary.images import ImageNormalizer
from content_core.binary.office import NoOpOfficeConverter, OfficeConverter
from content_core.binary.pdf_guard import PdfGuard, PdfReport
from content_core.binary.pdf_handles import PdfHandles
from content_core.binary.sniff import decode_text_sample, sniff_media_type
from content_core.binary.textpdf import text_to_pdf
from content_core.binary.zips import check_not_encrypted_package, check_zip_package
from content_core.errors import (
    ArchiveExtractionError,
    BinaryFanoutError,
    BinaryNormalizationError,
    BinaryTooLargeError,
    ContentError,
    ImageConversionError,
    UnsupportedBinaryError,
)
from content_core.formats import FormatRegistry, NormaliseStep, Package, default_formats

__all__ = ["BinaryNormalizer", "failure_id"]

_log = logging.getLogger(__name__)


def failure_id(parent_id: str, name: str, error: str) -> str:
    """Return the deterministic id of a failure artifact that has no bytes."""
    digest = hashlib.sha256()
    for part in (parent_id, name, error):
        digest.update(part.encode("utf-8", "replace"))
        digest.update(b"\x00")
    return digest.hexdigest()


@dataclass
class _Walk:
    budget: ExpansionBudget
    out: list[BinaryArtifact] = field(default_factory=list)
    # Ids already emitted: the same bytes reached twice within one raw file (a logo attached
    # twice, a file in two nested archives) are normalised and listed once.
    seen: set[str] = field(default_factory=set)
    # Notes for the artifact of these bytes (by id), set while it is handled.
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # What could not be decoded or drawn of a picture (by id), set while it is handled.
    damage: dict[str, Damage] = field(default_factory=dict)
    # Where the PDFs the guard leaves open for extraction go (the caller's), if anywhere.
    pdfs: PdfHandles | None = None


class BinaryNormalizer:
    """Turn raw bytes into a list of `BinaryArtifact`: the raw file first, then what it holds.

    Args:
        config: limits and switches; defaults to `BinaryConfig()`.
        office: the Office converter (see `build_office_converter`); defaults to no conversion.
        formats: the formats that decide each media type's step; `default_formats()` if None.
    """

    def __init__(
        self,
        *,
        config: BinaryConfig | None = None,
        office: OfficeConverter | None = None,
        formats: FormatRegistry | None = None,
    ) -> None:
        self.config = config or BinaryConfig()
        self.formats = formats if formats is not None else default_formats()
        self.office: OfficeConverter = office or NoOpOfficeConverter()
        self.pdf_guard = PdfGuard(
            max_pages=self.config.max_pdf_pages, passwords=self.config.passwords
        )
        self.images = ImageNormalizer(
            max_pixels=self.config.max_image_pixels,
            max_svg_bytes=self.config.max_svg_bytes,
            max_pages=self.config.max_pdf_pages,
        )
        self.archives = ArchiveUnpacker(passwords=self.config.passwords)
        self.emails = EmailUnpacker(
            max_header_bytes=self.config.max_email_header_bytes,
            max_parts=self.config.max_email_parts,
        )

    async def normalise(
        self,
        data: bytes,
        *,
        declared_media_type: str | None = None,
        filename: str | None = None,
        media_type: str | None = None,
        sha256: str | None = None,
        pdfs: PdfHandles | None = None,
    ) -> list[BinaryArtifact]:
        """Return the artifacts of `data`: the raw file itself first, then renditions and
        members (recursively), each with its `derived_from` ancestry.

        The declared media type is recorded nowhere and trusted for nothing: the type is sniffed.
        A caller that already sniffed the bytes (`media_type`) or hashed them (`sha256`, the
        raw file's id in `derived_from`) passes what it has, and it is not worked out again.
        With `pdfs`, the PDF documents the guard opened (not renditions) are left open there,
        by artifact id, while it has room, for their extraction (`extract_text(...,
        opened_pdf=...)`); the caller closes what it does not take, also when this raises.
        Failures of members are returned as artifacts with `error_type` set, and so is a raw
        file whose failure comes with notes (an image container that holds no decodable
        image, with what it declares).

        Raises:
            BinaryTooLargeError: the raw file is over `max_bytes` (or expands past the budget
                before anything could be read).
            BinaryNormalizationError: the raw file itself cannot be normalised (encrypted or
                corrupt PDF, unreadable archive, unsupported binary, ...).
        """
        name = filename or "upload"
        if len(data) > self.config.max_bytes:
            raise BinaryTooLargeError(
                f"{name}: {len(data)} bytes, over max_bytes={self.config.max_bytes}",
                limit="max_bytes", value=len(data), maximum=self.config.max_bytes,
            )
        media_type = media_type or sniff_media_type(data, filename=filename, formats=self.formats)
        if declared_media_type and mt.base_media_type(declared_media_type) != media_type:
            _log.debug("%s: declared %s, sniffed %s", name, declared_media_type, media_type)
        if not self.config.normalize_enabled:
            return [_artifact(data, media_type, self.formats.kind_for(media_type), name, ())]
        walk = _Walk(
            budget=ExpansionBudget(
                max_bytes=self.config.max_uncompressed_bytes,
                max_files=self.config.max_expanded_files,
                max_ratio=self.config.max_compression_ratio,
            ),
            pdfs=pdfs,
        )
        await self._visit(walk, data, media_type, name, (), 0, member_name=None, digest=sha256)
        return walk.out

    # ------------------------------------------------------------------------------ walking

    async def _visit(
        self,
        walk: _Walk,
        data: bytes,
        media_type: str,
        name: str,
        parents: tuple[str, ...],
        depth: int,
        *,
        member_name: str | None,
        digest: str | None = None,
    ) -> None:
        """Append the artifact for `data` and everything derived from it; raise only at the
        root (depth 0), record the error on the artifact below it. `digest` is the SHA-256 of
        `data` when the caller has it."""
        digest = digest or _sha256(data)
        if digest in walk.seen:
            return
        walk.seen.add(digest)
        index = len(walk.out)
        kind = self.formats.kind_for(media_type)
        artifact = _artifact(data, media_type, kind, name, parents, member_name=member_name)
        walk.out.append(artifact)
        try:
            page_count = await self._handle(walk, artifact, depth, digest)
        except ContentError as exc:
            notes = walk.notes.pop(digest, ())
            walk.damage.pop(digest, None)
            if depth == 0 and not notes:
                del walk.out[index:]
                raise
            # A failure with notes is kept as a row even for the raw file: the notes are what
            # is left of it (the declared metadata of an image that cannot be decoded).
            walk.out[index] = artifact.model_copy(
                update={"error_type": exc.error_type, "error_message": exc.message,
                        "notes": notes}
            )
            return
        except RecursionError as exc:  # a parser recursed on hostile nesting
            error = BinaryFanoutError(
                f"{name}: structure nests too deeply for the parser (recursion limit)",
                limit="recursion",
            )
            if depth == 0:
                del walk.out[index:]
                raise error from exc
            walk.out[index] = artifact.model_copy(
                update={"error_type": error.error_type, "error_message": error.message}
            )
            return
        notes = walk.notes.pop(digest, ())
        damage = walk.damage.pop(digest, None)
        if page_count is not None or notes or damage is not None:
            walk.out[index] = walk.out[index].model_copy(
                update={"page_count": page_count, "notes": notes, "damage": damage}
            )

    async def _handle(
        self, walk: _Walk, artifact: BinaryArtifact, depth: int, digest: str
    ) -> int | None:
        data, media_type, name = artifact.bytes, artifact.media_type, artifact.filename
        if len(data) > self.config.max_bytes:
            raise BinaryTooLargeError(
                f"{name}: {len(data)} bytes, over max_bytes={self.config.max_bytes}",
                limit="max_bytes", value=len(data), maximum=self.config.max_bytes,
            )
        fmt = self.formats.get(media_type)
        if fmt is None:
            raise UnsupportedBinaryError(
                f"{name}: no normaliser for {media_type}", media_type=media_type
            )
        if fmt.package is not None:
            check_not_encrypted_package(data, media_type, name)
            if fmt.package is Package.ZIP:
                check_zip_package(data, walk.budget, filename=name)
        step = fmt.normalise
        if step is NormaliseStep.GUARD_PDF:
            report = self._guard_pdf(walk, data, name, digest)
            if report.decrypted is not None:
                self._rendition(
                    walk, artifact, digest, report.decrypted, mt.PDF, ".pdf", report.page_count
                )
            return report.page_count
        if step is NormaliseStep.CONVERT_IMAGE:
            return self._image(walk, artifact, digest, keeps_text=fmt.yields_text)
        if step is NormaliseStep.UNPACK_ARCHIVE:
            await self._unpack_archive(walk, artifact, digest, depth)
            return None
        if step is NormaliseStep.UNPACK_EMAIL:
            await self._unpack_email(walk, artifact, digest, depth)
            return None
        if step is NormaliseStep.RENDER_OFFICE:
            return await self._office(walk, artifact, digest)
        if not fmt.handlers:
            # Sniffed, but nothing reads it (a compound file of no known kind, a plug-in that
            # declares a type without an extractor): a recorded failure, never a silent row.
            raise UnsupportedBinaryError(
                f"{name}: no handler reads {media_type}", media_type=media_type
            )
        if fmt.text_to_pdf and self.config.wrap_text_as_pdf:
            text = decode_text_sample(data) or ""
            pdf = text_to_pdf(text)
            pages = self.pdf_guard.check(pdf, filename=name).page_count
            self._rendition(walk, artifact, digest, pdf, mt.PDF, ".pdf", pages)
        return None

    def _guard_pdf(self, walk: _Walk, data: bytes, name: str, digest: str) -> PdfReport:
        """Check the PDF `data` (the artifact `digest`), leaving it open in `walk.pdfs` for
        its extraction while they have room."""
        keep_pages = walk.pdfs.pages_to_keep() if walk.pdfs is not None else None
        if walk.pdfs is None or keep_pages is None:
            return self.pdf_guard.check(data, filename=name)
        report, opened = self.pdf_guard.check_open(data, filename=name, keep_pages=keep_pages)
        if opened is not None:
            walk.pdfs.keep(digest, opened)
        return report

    def _image(
        self, walk: _Walk, artifact: BinaryArtifact, digest: str, *, keeps_text: bool
    ) -> int | None:
        data, media_type, name = artifact.bytes, artifact.media_type, artifact.filename
        try:
            image = self.images.normalise(data, media_type, filename=name)
        except (ImageConversionError, BinaryTooLargeError) as exc:
            if not keeps_text:
                if isinstance(exc, ImageConversionError):
                    # What the container still declares (sizes, EXIF) stays on the failed row.
                    walk.notes[digest] = self.images.describe(data, media_type)
                raise
            # A picture with text of its own (SVG) cannot be drawn, but its text is still
            # read: the row is this error only if no text comes out (artifact_records).
            walk.damage[digest] = Damage.of(exc)
            return None
        if image.damage is not None:
            # A picture decoded in part: an error unless OCR reads text in the part decoded.
            walk.damage[digest] = Damage.of(ImageConversionError(image.damage,
                                                                 media_type=media_type))
        if image.converted:
            suffix = ".pdf" if image.media_type == mt.PDF else ".png"
            self._rendition(walk, artifact, digest, image.data, image.media_type, suffix,
                            image.page_count)
        return image.page_count

    async def _office(self, walk: _Walk, artifact: BinaryArtifact, digest: str) -> int | None:
        data, media_type, name = artifact.bytes, artifact.media_type, artifact.filename
        try:
            pdf = await self.office.convert(data, media_type=media_type, filename=name)
        except ContentError as exc:
            # The document still yields text natively; the failed rendering is recorded.
            self._failure(walk, artifact, digest, f"{_stem(name)}.pdf", exc)
            return None
        if pdf is None:
            return None
        try:
            pages = self.pdf_guard.check(pdf, filename=f"{_stem(name)}.pdf").page_count
        except BinaryNormalizationError as exc:
            self._failure(walk, artifact, digest, f"{_stem(name)}.pdf", exc)
            return None
        self._rendition(walk, artifact, digest, pdf, mt.PDF, ".pdf", pages)
        return pages

    async def _unpack_archive(
        self, walk: _Walk, artifact: BinaryArtifact, digest: str, depth: int
    ) -> None:
        self._check_depth(artifact, depth)
        chain = (*artifact.derived_from, digest)
        members = self.archives.unpack(
            artifact.bytes, artifact.media_type, walk.budget, filename=artifact.filename
        )
        produced = 0
        try:
            for member in members:
                produced += 1
                if member.data is None:
                    error = member.error or ArchiveExtractionError("member unreadable")
                    walk.out.append(_failure_artifact(chain, member.name, error))
                    continue
                await self._visit_member(walk, member.data, member.name, chain, depth)
        except BinaryNormalizationError as exc:
            if produced == 0:
                raise
            # Some members are already out: keep them and record why the rest is missing.
            walk.out.append(_failure_artifact(chain, f"{artifact.filename} (rest)", exc))

    async def _unpack_email(
        self, walk: _Walk, artifact: BinaryArtifact, digest: str, depth: int
    ) -> None:
        self._check_depth(artifact, depth)
        chain = (*artifact.derived_from, digest)
        unpacked = self.emails.unpack(
            artifact.bytes, artifact.media_type, walk.budget, filename=artifact.filename
        )
        body, body_type = unpacked.body_document(render_header=self.config.email_render_header)
        if body.strip():
            suffix = ".html" if body_type == mt.HTML else ".txt"
            walk.out.append(
                BinaryArtifact(
                    bytes=body,
                    media_type=body_type,
                    filename=f"{_stem(artifact.filename)}.body{suffix}",
                    kind="email_body",
                    derived_from=chain,
                    member_name="body",
                )
            )
        for member in unpacked.attachments:
            if member.data is None:
                error = member.error or ArchiveExtractionError("attachment unreadable")
                walk.out.append(_failure_artifact(chain, member.name, error))
                continue
            await self._visit_member(walk, member.data, member.name, chain, depth)

    async def _visit_member(
        self, walk: _Walk, data: bytes, name: str, chain: tuple[str, ...], depth: int
    ) -> None:
        media_type = sniff_media_type(data, filename=name, formats=self.formats)
        await self._visit(walk, data, media_type, name, chain, depth + 1, member_name=name)

    def _check_depth(self, artifact: BinaryArtifact, depth: int) -> None:
        if depth >= self.config.max_recursion_depth:
            raise BinaryFanoutError(
                f"{artifact.filename}: containers nest deeper than "
                f"max_recursion_depth={self.config.max_recursion_depth}",
                limit="max_recursion_depth",
                value=depth + 1,
                maximum=self.config.max_recursion_depth,
            )

    # ------------------------------------------------------------------------------ records

    def _rendition(
        self,
        walk: _Walk,
        source: BinaryArtifact,
        source_id: str,
        data: bytes,
        media_type: str,
        suffix: str,
        page_count: int | None,
    ) -> None:
        digest = _sha256(data)
        if digest in walk.seen:
            return
        walk.seen.add(digest)
        walk.out.append(
            BinaryArtifact(
                bytes=data,
                media_type=media_type,
                filename=f"{_stem(source.filename)}{suffix}",
                kind=self.formats.kind_for(media_type),
                page_count=page_count,
                derived_from=(*source.derived_from, source_id),
                rendition=True,
            )
        )

    def _failure(
        self, walk: _Walk, source: BinaryArtifact, source_id: str, name: str, error: ContentError
    ) -> None:
        chain = (*source.derived_from, source_id)
        failed = _failure_artifact(chain, name, error)
        walk.out.append(failed.model_copy(update={"rendition": True}))


def _artifact(
    data: bytes,
    media_type: str,
    kind: str,
    name: str,
    parents: tuple[str, ...],
    *,
    member_name: str | None = None,
) -> BinaryArtifact:
    return BinaryArtifact(
        bytes=data,
        media_type=media_type,
        filename=name,
        kind=kind,
        derived_from=parents,
        member_name=member_name,
    )


def _failure_artifact(
    chain: tuple[str, ...], name: str, error: ContentError
) -> BinaryArtifact:
    return BinaryArtifact(
        bytes=b"",
        media_type=mt.OCTET_STREAM,
        filename=name,
        kind="failure",
        derived_from=chain,
        member_name=name,
        error_type=error.error_type,
        error_message=error.message,
    )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stem(name: str) -> str:
    base = PurePosixPath(name.replace("\\", "/")).name or "file"
    return base.rsplit(".", 1)[0] if "." in base[1:] else base
