"""The exception tree of content_core: every deliberate failure is one of these.

Five classes name the cause of a failed file, the thing a person acts on; the `error_type`
column of a failure row records that cause (`ContentError.error_type`), and the message names
the file, its format and the reason. The specific class is kept for code that catches it.

```
ContentError                      base of everything raised on purpose; retryable = False
├── EncryptedFileError            CAUSE: needs a password (any format; the format is named)
│   ├── EncryptedPdfError         (binary) PDF needs a user password we do not have
│   ├── EncryptedArchiveError     (binary) zip or 7z member/archive needs a password
│   ├── EncryptedDocumentError    (binary) Office package encrypted (OLE2 EncryptedPackage)
│   └── EncryptedMessageError     (binary) email part PGP- or S/MIME-encrypted
├── CorruptFileError              CAUSE: broken beyond repair (truncated, malformed)
│   ├── CorruptPdfError           (binary) PDF malformed even after PDFium's repair
│   ├── ArchiveExtractionError    (binary) archive or member could not be read
│   ├── EmailParseError           (binary) email could not be parsed
│   ├── ImageConversionError      (binary) image could not be decoded or re-encoded
│   └── ExtractionError           every accepting extractor failed; carries the attempts
├── UnsupportedFormatError        CAUSE: no handler reads this format (or this part of it)
│   └── UnsupportedBinaryError    (binary) no normaliser for these bytes
├── LimitExceededError            CAUSE: over a configured limit; `limit` and `value` say which
│   ├── BinaryTooLargeError       (binary) bytes, expanded bytes, ratio, pixels or pages
│   ├── BinaryFanoutError         (binary) nesting depth or member count
│   └── StageTimeoutError         a stage after normalisation passed its per-artifact budget
├── UnsafeInputError              CAUSE: an attack by construction (overlapping zip data,
│   │                             entity expansion, external references, path traversal)
│   └── UnsafeArchiveError        (binary) zip entries share data; a link leaves the archive
├── SourceError                   an item cannot be listed or read
│   ├── UnknownSourceSchemeError  no source is registered for a URI's scheme (lists the known)
│   ├── LocalPathRefusedError     a local path in a message is outside the allowed folders
│   │                             (also UnsafeInput; refused by default without a LocalPolicy)
│   └── FetchError                an http(s) URL could not be fetched (connection, timeout, status)
│       ├── FetchRefusedError     the fetch policy refused a URL or an address (also UnsafeInput)
│       ├── FetchTooLargeError    the body passed the policy's size cap (also LimitExceeded)
│       └── FetchTypeError        the bytes are not the type the part needs (also Unsupported)
├── SearchError                   the search index cannot be built or read
├── McpError                      an MCP server could not be reached, timed out or failed a call
├── ConfigError                   settings cannot work (also ValueError): LLM_MERGE or
│                                 RAG.query without an agent, a model limits file
│                                 that cannot be read; the message names what to fix
├── EmptyFileError                the file has no bytes: nothing to extract
├── ConversionError               a conversion ran and failed (base of the binary ones above)
│   └── OfficeConversionError     (binary) Office renderer failed or timed out (rendition row)
├── MissingDependencyError        an optional dependency for the chosen handler is absent
│   └── OcrUnavailableError       a page needed OCR and the configured engine cannot run
└── LLMError
    ├── LLMUnavailableError       timeout, rate limit, 5xx; retryable = True
    └── LLMOutputError            the reply does not validate against the schema
```

Every binary error also derives from `BinaryNormalizationError`, the seed's base class, so
callers may catch either family. `ConversionError` is a base of the binary conversion errors
(CorruptPdfError, ArchiveExtractionError, EmailParseError, ImageConversionError), kept for
callers that catch it. The worker pool's own failures (`content_core.sandbox`) are rows with
stage "worker": WorkerTimeoutError is a LimitExceededError (the time limit), WorkerCrashedError
a ConversionError.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ArchiveExtractionError",
    "BinaryFanoutError",
    "BinaryNormalizationError",
    "BinaryTooLargeError",
    "CAUSES",
    "ConfigError",
    "ContentError",
    "ConversionError",
    "CorruptFileError",
    "CorruptPdfError",
    "EmailParseError",
    "EmbeddingError",
    "EmbeddingUnavailableError",
    "EmptyFileError",
    "EncryptedArchiveError",
    "EncryptedDocumentError",
    "EncryptedFileError",
    "EncryptedMessageError",
    "EncryptedPdfError",
    "ExtractionAttempt",
    "ExtractionError",
    "FetchError",
    "FetchRefusedError",
    "FetchTooLargeError",
    "FetchTypeError",
    "ImageConversionError",
    "LLMError",
    "LLMOutputError",
    "LLMUnavailableError",
    "LimitExceededError",
    "LocalPathRefusedError",
    "McpError",
    "MissingDependencyError",
    "OcrUnavailableError",
    "OfficeConversionError",
    "SearchError",
    "SourceError",
    "StageTimeoutError",
    "UnknownSourceSchemeError",
    "UnsafeArchiveError",
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
        """The cause, as recorded in the `error_type` column of failure rows: the nearest of
        `CAUSES` among the class's bases, else the class name (errors that are not about the
        file's content: a source, a missing dependency, the model endpoint)."""
        for cls in type(self).__mro__:
            if cls in CAUSES:
                return cls.__name__
        return type(self).__name__

    @property
    def error_class(self) -> str:
        """The specific class name (`EncryptedPdfError`, ...), for logs and debugging."""
        return type(self).__name__


class EncryptedFileError(ContentError):
    """The file, or a part of it, needs a password (or key) we do not have; the message names
    the format. Configure the password (`BinaryConfig.passwords`) or ask for an open copy."""

    def __init__(self, message: str, *, file_format: str, **context: str | None) -> None:
        super().__init__(message, **context)
        self.file_format = file_format


class CorruptFileError(ContentError):
    """The file is broken beyond repair (truncated, malformed); get a good copy."""


class UnsupportedFormatError(ContentError):
    """No handler reads the sniffed format (or this part of the file)."""


class LimitExceededError(ContentError):
    """The file is over a configured limit: `limit` names it, `value` is what the file has
    (or would have had), `maximum` the configured bound. Raise the limit if the file is
    trusted."""

    def __init__(
        self,
        message: str,
        *,
        limit: str | None = None,
        value: float | None = None,
        maximum: float | None = None,
        **context: str | None,
    ) -> None:
        super().__init__(message, **context)
        self.limit = limit
        self.value = value
        self.maximum = maximum


class UnsafeInputError(ContentError):
    """An attack by construction was refused (overlapping zip data, entity expansion, external
    references, path traversal); nothing to raise, the file is hostile or badly broken."""


class SourceError(ContentError):
    """An item of a source cannot be listed or read."""


class UnknownSourceSchemeError(SourceError):
    """No source is registered for a URI's scheme; the message lists the schemes that are."""


class FetchError(SourceError):
    """An http(s) URL could not be fetched: the connection failed, timed out, or the server
    answered with an error status; the message names the URL and the reason."""


class FetchRefusedError(FetchError, UnsafeInputError):
    """The fetch policy refused a URL: a scheme other than http(s), a redirect past the limit,
    or a host resolving to a loopback, private, link-local, multicast, reserved or metadata
    address that `FetchPolicy.allow_hosts` does not name."""


class FetchTooLargeError(FetchError, LimitExceededError):
    """The response body passed `FetchPolicy.max_bytes`; reading stopped at the cap."""


class FetchTypeError(FetchError, UnsupportedFormatError):
    """The fetched bytes are not of the type the part needs (an `image_url` that is not an
    image), whatever the server declared."""


class SearchError(ContentError):
    """The search index over a store's chunks cannot be built or queried."""


class EmptyFileError(ContentError):
    """The file is 0 bytes long: an answer, recorded as such, not a lost extraction."""


class StageTimeoutError(LimitExceededError):
    """A stage after normalisation ran past its per-artifact time budget; the batch went on."""

    @classmethod
    def past_budget(
        cls, stage: str, timeout_s: float, *, unit: str, setting: str
    ) -> StageTimeoutError:
        """The error of one `unit` of `stage` that ran past `timeout_s` (the `setting`)."""
        return cls(
            f"{stage}: ran past the stage's time budget of {timeout_s:g} s per {unit} ({setting})",
            limit=setting,
            maximum=timeout_s,
            stage=stage,
        )

    @property
    def error_type(self) -> str:
        """Recorded under its own name: it is a row of a later stage (chunks, compressed
        contexts, extractions) about that stage's budget, and the file's own normalised row
        stays as it was; users filter stage timeouts by this name."""
        return type(self).__name__


class ConversionError(ContentError):
    """An image, archive, email or Office conversion ran and failed."""


class MissingDependencyError(ContentError):
    """An optional dependency needed by the chosen handler is not installed."""

    def __init__(self, message: str, *, extra: str | None = None, **context: str | None) -> None:
        hint = f" (install with: pip install 'content-pipeline[{extra}]')" if extra else ""
        super().__init__(message + hint, **context)
        self.extra = extra


class OcrUnavailableError(MissingDependencyError):
    """A page or image needed OCR and the configured engine is not installed or lacks the
    configured languages (`CONTENT_OCR`, `CONTENT_OCR_LANGS`)."""


class ExtractionAttempt:
    """One failed try of one extractor: its name, the error type and the message."""

    __slots__ = ("error_type", "handler", "message")

    def __init__(self, handler: str, error_type: str, message: str) -> None:
        self.handler = handler
        self.error_type = error_type
        self.message = message

    def __repr__(self) -> str:
        return f"{self.handler}: {self.error_type}: {self.message}"


class ExtractionError(CorruptFileError):
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


class BinaryTooLargeError(BinaryNormalizationError, LimitExceededError):
    """The input, or what it expands to (bytes, ratio, pixels, pages), is over a limit."""


class UnsupportedBinaryError(BinaryNormalizationError, UnsupportedFormatError):
    """No normaliser handles these bytes."""


class EncryptedPdfError(BinaryNormalizationError, EncryptedFileError):
    """The PDF is encrypted and does not open with an empty user password."""

    def __init__(self, message: str, *, file_format: str = "PDF", **context: str | None) -> None:
        super().__init__(message, file_format=file_format, **context)


class EncryptedArchiveError(BinaryNormalizationError, EncryptedFileError):
    """A zip or 7z archive, or one of its members, needs a password none configured opens."""


class EncryptedDocumentError(BinaryNormalizationError, EncryptedFileError):
    """An Office or OpenDocument file is password-protected."""


class EncryptedMessageError(BinaryNormalizationError, EncryptedFileError):
    """An email part is PGP- or S/MIME-encrypted: it needs the recipient's private key."""


class BinaryFanoutError(BinaryNormalizationError, LimitExceededError):
    """A container nests deeper, or holds more members, than the configuration allows."""


class UnsafeArchiveError(BinaryNormalizationError, UnsafeInputError):
    """A zip whose entries share data ranges (a bomb by construction), or an archive link
    that points outside the archive (path traversal)."""


class CorruptPdfError(BinaryNormalizationError, ConversionError, CorruptFileError):
    """The PDF is malformed or truncated, and PDFium cannot repair it either."""


class OfficeConversionError(BinaryNormalizationError, ConversionError):
    """The Office renderer failed, was unreachable, or timed out."""


class ImageConversionError(BinaryNormalizationError, ConversionError, CorruptFileError):
    """The image could not be decoded or re-encoded."""


class ArchiveExtractionError(BinaryNormalizationError, ConversionError, CorruptFileError):
    """The archive, or one of its members, could not be read."""


class EmailParseError(BinaryNormalizationError, ConversionError, CorruptFileError):
    """The email could not be parsed."""


# The causes a person acts on; `ContentError.error_type` records the nearest one.
CAUSES: frozenset[type[ContentError]] = frozenset(
    {
        EncryptedFileError,
        CorruptFileError,
        UnsupportedFormatError,
        LimitExceededError,
        UnsafeInputError,
    }
)


class EmbeddingError(ContentError):
    """A chunk could not be embedded: the endpoint refused it, or its text has no token the
    model knows (an empty vector)."""


class EmbeddingUnavailableError(EmbeddingError):
    """The embeddings endpoint timed out, rate-limited or failed with a 5xx; worth retrying."""

    retryable = True


class McpError(ContentError):
    """An MCP server could not be started or reached, timed out, or answered a call with an
    error (content_core.chat.mcp)."""


class LocalPathRefusedError(SourceError, UnsafeInputError):
    """A local file path in a message resolves (symlinks and `..` followed) outside the
    folders a `LocalPolicy` allows, or no policy allows local paths at all."""


class ConfigError(ContentError, ValueError):
    """Settings cannot work: a strategy that needs an agent given none, or a configuration
    file (a model limits file, ...) that cannot be read or holds invalid entries; the message
    names the argument, file or entry to fix."""
