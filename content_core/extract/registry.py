"""`ExtractorRegistry`: ordered format handlers, tried in turn, with every failure recorded."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

from content_core.binary.pdf_handles import OpenedPdf
from content_core.errors import (
    ContentError,
    EncryptedFileError,
    ExtractionAttempt,
    ExtractionError,
    LimitExceededError,
    MissingDependencyError,
    UnsafeInputError,
    UnsupportedFormatError,
)
from content_core.extract.base import (
    Blob,
    ExtractedText,
    ExtractOptions,
    Extractor,
    SniffInfo,
    build_text,
    clean_text,
)
from content_core.formats import FormatRegistry

logger = logging.getLogger(__name__)

__all__ = ["ExtractorRegistry"]

_DEFAULT_OPTIONS = ExtractOptions()
_MAX_MESSAGE_CHARS = 500


@dataclass(frozen=True, slots=True)
class _Entry:
    priority: int
    order: int
    handler: Extractor


class ExtractorRegistry:
    """Handlers ordered by priority (higher first; ties keep registration order).

    `extract` tries every handler whose `accepts` says yes. A handler that raises is recorded
    as a failed attempt and the next one runs. Verdicts no other parser would change stop the
    walk at once: `UnsafeInputError` (a guard refused the bytes, so no other parser should see
    them), `LimitExceededError` and `EncryptedFileError`; so does any `BaseException` that is
    not an `Exception` (interrupts, exits).
    """

    def __init__(self) -> None:
        self._entries: list[_Entry] = []

    @classmethod
    def from_formats(cls, formats: FormatRegistry) -> ExtractorRegistry:
        """A registry of every extractor `formats` declares (each once), in their priorities."""
        registry = cls()
        seen: set[int] = set()
        for fmt in formats.formats():
            for handler in fmt.handlers:
                if id(handler.extractor) not in seen:
                    seen.add(id(handler.extractor))
                    # Each declared extractor is an extract.base.Extractor (formats types it
                    # structurally, on a floor below extract's values).
                    registry.register(cast(Extractor, handler.extractor), priority=handler.priority)
        return registry

    def register(self, handler: Extractor, *, priority: int = 0) -> None:
        """Add `handler`; specific formats use a higher `priority` than catch-alls."""
        entry = _Entry(priority=priority, order=len(self._entries), handler=handler)
        self._entries.append(entry)
        self._entries.sort(key=lambda e: (-e.priority, e.order))

    def handlers(self) -> tuple[Extractor, ...]:
        """Return the handlers in the order dispatch tries them."""
        return tuple(e.handler for e in self._entries)

    def candidates(self, info: SniffInfo) -> Iterator[Extractor]:
        """Yield the handlers that accept `info`, in dispatch order."""
        for entry in self._entries:
            if entry.handler.accepts(info):
                yield entry.handler

    def extract(
        self,
        data: bytes,
        media_type: str,
        *,
        filename: str | None = None,
        options: ExtractOptions | None = None,
        opened_pdf: OpenedPdf | None = None,
    ) -> ExtractedText:
        """Return the text of `data`, sniffed as `media_type`, from the first handler that works.

        `opened_pdf` is the PDF of `data` already open (`Blob.opened_pdf`); the caller closes it.

        Raises:
            UnsupportedFormatError: no handler accepts the media type.
            UnsafeInputError: a handler's guard refused the input as an attack.
            LimitExceededError: the input is over a configured limit.
            EncryptedFileError: the input needs a password.
            MissingDependencyError: every accepting handler lacked an optional dependency.
            ExtractionError: every accepting handler failed; `attempts` lists each failure.
        """
        info = SniffInfo.parse(media_type, filename=filename)
        blob = Blob(data=bytes(data), info=info, opened_pdf=opened_pdf)
        opts = options or _DEFAULT_OPTIONS
        attempts: list[ExtractionAttempt] = []
        missing: list[MissingDependencyError] = []
        tried = False
        for handler in self.candidates(info):
            tried = True
            try:
                result = handler.extract(blob, opts)
            except (UnsafeInputError, LimitExceededError, EncryptedFileError):
                raise
            except MissingDependencyError as exc:
                missing.append(exc)
                attempts.append(ExtractionAttempt(handler.name, exc.error_type, exc.message))
            except ContentError as exc:
                attempts.append(ExtractionAttempt(handler.name, exc.error_type, _short(exc)))
            # The one deliberate broad catch (STYLE 7): a third-party parser may raise anything
            # on hostile bytes, and the next handler deserves its chance.
            except Exception as exc:
                logger.debug("extractor %s failed on %s", handler.name, info.media_type)
                attempts.append(ExtractionAttempt(handler.name, type(exc).__name__, _short(exc)))
            else:
                return _ensure_clean(result)
        if not tried:
            raise UnsupportedFormatError(
                f"no text extractor accepts media type {info.media_type!r}",
                media_type=info.media_type,
                stage="extract",
            )
        if missing and len(missing) == len(attempts):
            raise missing[0]
        raise ExtractionError(
            f"every extractor failed for {info.media_type!r}"
            + (f" ({filename})" if filename else ""),
            attempts=attempts,
            media_type=info.media_type,
            stage="extract",
        )


def _short(exc: BaseException) -> str:
    """The exception's message, cleaned and cut: parsers sometimes quote the whole input."""
    text = clean_text(str(exc))
    return text if len(text) <= _MAX_MESSAGE_CHARS else text[:_MAX_MESSAGE_CHARS] + "..."


def _ensure_clean(result: ExtractedText) -> ExtractedText:
    """Re-clean a handler's result that skipped `build_text` and so may hold bad characters."""
    if clean_text(result.text) == result.text:
        return result
    if not result.pages:
        return build_text([result.text], handler=result.handler, paged=False)
    parts = [result.text[span.start : span.end] for span in result.pages]
    return build_text(parts, handler=result.handler, paged=True)
