"""The chat values prepare_messages returns: model capabilities, content parts (`text`,
`image_url`, `input_audio`, and Anthropic's `image` and `document` blocks) and messages, as
the provider's JSON."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from content_core.model_limits import get_model_limits

__all__ = [
    "Base64Source",
    "ChatMessage",
    "DocumentPart",
    "ImagePart",
    "ImageURL",
    "ImageURLPart",
    "InputAudio",
    "InputAudioPart",
    "ModelCapabilities",
    "Part",
    "TextPart",
    "URLSource",
]


class ModelCapabilities(BaseModel):
    """What the target model accepts besides text: images, audio, whole PDF files."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    vision: bool = False
    audio: bool = False
    pdf: bool = False

    @classmethod
    def for_model(
        cls, model: str, *, limits_file: str | os.PathLike[str] | None = None
    ) -> ModelCapabilities:
        """The capabilities the model limits table gives `model` (none for an unknown one).

        Raises:
            ConfigError: the user limits file is unreadable or invalid.
        """
        limits = get_model_limits(model, limits_file=limits_file)
        return cls(vision=limits.vision, audio=limits.audio, pdf=limits.pdf)


class TextPart(BaseModel):
    """A `text` content part."""

    model_config = ConfigDict(frozen=True)

    type: Literal["text"] = "text"
    text: str


class ImageURL(BaseModel):
    """The `image_url` payload: an http(s) or data URL."""

    model_config = ConfigDict(frozen=True)

    url: str
    detail: str = "auto"


class ImageURLPart(BaseModel):
    """An `image_url` content part."""

    model_config = ConfigDict(frozen=True)

    type: Literal["image_url"] = "image_url"
    image_url: ImageURL


class InputAudio(BaseModel):
    """The `input_audio` payload: base64 data and its format (wav, mp3)."""

    model_config = ConfigDict(frozen=True)

    data: str
    format: str


class InputAudioPart(BaseModel):
    """An `input_audio` content part."""

    model_config = ConfigDict(frozen=True)

    type: Literal["input_audio"] = "input_audio"
    input_audio: InputAudio


class Base64Source(BaseModel):
    """An Anthropic block's inline bytes: base64 `data` of `media_type`."""

    model_config = ConfigDict(frozen=True)

    type: Literal["base64"] = "base64"
    media_type: str
    data: str


class URLSource(BaseModel):
    """An Anthropic block's bytes at an http(s) URL the provider fetches."""

    model_config = ConfigDict(frozen=True)

    type: Literal["url"] = "url"
    url: str


class ImagePart(BaseModel):
    """An Anthropic `image` block."""

    model_config = ConfigDict(frozen=True)

    type: Literal["image"] = "image"
    source: Base64Source | URLSource


class DocumentPart(BaseModel):
    """An Anthropic `document` block: a whole PDF, for a model that reads PDFs."""

    model_config = ConfigDict(frozen=True)

    type: Literal["document"] = "document"
    source: Base64Source
    title: str


Part = TextPart | ImageURLPart | InputAudioPart | ImagePart | DocumentPart


class ChatMessage(BaseModel):
    """A prepared message: a role and either plain text or model-ready parts."""

    model_config = ConfigDict(frozen=True)

    role: str
    content: str | list[Part]

    def to_openai(self) -> dict[str, Any]:
        """The message as JSON: chat-completions JSON, or an Anthropic Messages API message
        when its parts are Anthropic blocks."""
        # Any: chat-completions JSON is heterogeneous by nature.
        return self.model_dump(mode="json")
