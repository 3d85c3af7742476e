"""The chat values prepare_messages returns: model capabilities, content parts (`text`,
`image_url`, `input_audio`) and messages, as chat-completions JSON."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "ChatMessage",
    "ImageURL",
    "ImageURLPart",
    "InputAudio",
    "InputAudioPart",
    "ModelCapabilities",
    "Part",
    "TextPart",
]


class ModelCapabilities(BaseModel):
    """What the target model accepts besides text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    vision: bool = False
    audio: bool = False


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


Part = TextPart | ImageURLPart | InputAudioPart


class ChatMessage(BaseModel):
    """A prepared message: a role and either plain text or model-ready parts."""

    model_config = ConfigDict(frozen=True)

    role: str
    content: str | list[Part]

    def to_openai(self) -> dict[str, Any]:
        """The message as chat-completions JSON."""
        # Any: chat-completions JSON is heterogeneous by nature.
        return self.model_dump(mode="json")
