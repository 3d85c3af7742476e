"""The exception tree of content_core: every deliberate failure is one of these.

```
ContentError                      base of everything raised on purpose; retryable = False
├── SourceError                   an item cannot be listed or read
├── EmptyFileError                the file has no bytes: nothing to extract
├── StageTimeoutError             a stage after normalisation passed its per-artifact time budget
├── UnsupportedFormatError        no handler accepts the sniffed media type
│   └── UnsupportedBinaryError    (binary) no normaliser for these bytes
├── UnsafeInputError              a guard refused the input (encrypted, bomb, over a limit)
│   ├── BinaryTooLargeError       (binary) bytes or expanded bytes over a limit
│   ├── EncryptedPdfError         (binary) PDF needs a password we do not have
│   └── BinaryFanoutError         (binary) depth or member count over a limit
├── ConversionError               image, archive, email or Office conversion ran and failed
│   ├── CorruptPdfError           (binary) PDF is malformed or truncated
│   ├── OfficeConversionError     (binary) Office renderer failed or timed out
│   ├── ImageConversionError      (binary) image could not be decoded or re-encoded
│   ├── ArchiveExtractionError    (binary) archive could not be read
│   └── EmailParseError           (binary) email could not be parsed
├── MissingDependencyError        an optional dependency for the chosen handler is absent
├── ExtractionError               every accepting extractor failed; carries the attempts
└── LLMError
    ├── LLMUnavailableError       timeout, rate limit, 5xx; retryable = True
    └── LLMOutputError            the reply does not validate against the schema
```

Every binary error also derives from `BinaryNormalizationError`, the seed's base class, so
callers may catch either family.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ArchiveExtractionError",
    "BinaryFanoutError",
    "BinaryNormalizationError",
    "BinaryTooLargeError",
    "ContentError",
    "EmptyFileError",
    "ConversionError",
    "CorruptPdfError",
    "EmailParseError",
    "EncryptedPdfError",
    "ExtractionAttempt",
    "ExtractionError",
    "ImageConversionError",
    "LLMError",
    "LLMOutputError",
    "LLMUnavailableError",
    "MissingDependencyError",
    "OfficeConversionError",
    "SourceError",
    "StageTimeoutError",
    "UnsafeInputError",
    "UnsupportedBinaryError",
    "UnsupportedFormatError",
]


class ContentError(Exception):
    """Base of every error content_core raises on purpose."""

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        document_id: str | None = None,
        media_type: str | None = None,
        stage: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.document_id = document_id
        self.media_type = media_type
        self.stage = stage

    @property
    def error_type(self) -> str:
        """The class name, as recorded in the `error_type` column of failure rows."""
        return type(self).__name__


class SourceError(ContentError):
    """An item of a source cannot be listed or read."""


class EmptyFileError(ContentError):
    """The file is 0 bytes long: an answer, recorded as such, not a lost extraction."""


class StageTimeoutError(ContentError):
    """A stage after normalisation ran past its per-artifact time budget; the batch went on."""


class UnsupportedFormatError(ContentError):
    """No handler accepts the sniffed media type."""


class UnsafeInputError(ContentError):
    """A guard refused the input: encrypted, a bomb, or over a configured limit."""


class ConversionError(ContentError):
    """An image, archive, email or Office conversion ran and failed."""


class MissingDependencyError(ContentError):
    """An optional dependency needed by the chosen handler is not installed."""

    def __init__(self, message: str, *, extra: str | None = None, **context: str | None) -> None:
        hint = f" (install with: pip install 'content-pipeline[{extra}]')" if extra else ""
        super().__init__(message + hint, **context)
        self.extra = extra


class ExtractionAttempt:
    """One failed try of one extractor: its name, the error type and the message."""

    __slots__ = ("error_type", "handler", "message")

    def __init__(self, handler: str, error_type: str, message: str) -> None:
        self.handler = handler
        self.error_type = error_type
        self.message = message

    def __repr__(self) -> str:
        return f"{self.handler}: {self.error_type}: {self.message}"


class ExtractionError(ContentError):
    """Every extractor that accepted the input failed; `attempts` says how."""

    def __init__(
        self,
        message: str,
        *,
        attempts: Sequence[ExtractionAttempt] = (),
        **context: str | None,
    ) -> None:
        detail = "; ".join(repr(a) for a in attempts)
        super().__init__(f"{message}: {detail}" if detail else message, **context)
        self.attempts = tuple(attempts)


class LLMError(ContentError):
    """Base of the agent-call failures."""


class LLMUnavailableError(LLMError):
    """The model endpoint timed out, rate-limited or failed with a 5xx; worth retrying."""

    retryable = True


class LLMOutputError(LLMError):
    """The model replied, but the reply does not validate against the schema."""


class BinaryNormalizationError(ContentError):
    """Base of the binary normalisation errors (the seed's root class)."""


class BinaryTooLargeError(BinaryNormalizationError, UnsafeInputError):
    """The input, or what it expands to, is over a configured byte limit."""


class UnsupportedBinaryError(BinaryNormalizationError, UnsupportedFormatError):
    """No normaliser handles these bytes."""


class EncryptedPdfError(BinaryNormalizationError, UnsafeInputError):
    """The PDF is encrypted and does not open with an empty user password."""


class BinaryFanoutError(BinaryNormalizationError, UnsafeInputError):
    """A container nests deeper, or holds more members, than the configuration allows."""


class CorruptPdfError(BinaryNormalizationError, ConversionError):
    """The PDF is malformed or truncated."""


class OfficeConversionError(BinaryNormalizationError, ConversionError):
    """The Office renderer failed, was unreachable, or timed out."""


class ImageConversionError(BinaryNormalizationError, ConversionError):
    """The image could not be decoded or re-encoded."""


class ArchiveExtractionError(BinaryNormalizationError, ConversionError):
    """The archive could not be read."""


class EmailParseError(BinaryNormalizationError, ConversionError):
    """The email could not be parsed."""
