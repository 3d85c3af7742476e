"""Extraction schemas: the default offline facts schema and loading user schemas by import path."""

from __future__ import annotations

import hashlib
import importlib
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_SCHEMA_PATH",
    "ExtractedFacts",
    "default_prompt",
    "load_schema",
    "schema_fingerprint",
    "schema_name",
]

DEFAULT_SCHEMA_PATH = "content_core.agents.schemas:ExtractedFacts"
_PROMPTS = Path(__file__).resolve().parent / "prompts"


class ExtractedFacts(BaseModel):
    """Facts found in one chunk: what the offline extractor fills and the default schema."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str | None = Field(default=None, description="The chunk's title or first heading")
    summary: str = Field(default="", description="Two or three sentences on what it says")
    key_terms: list[str] = Field(default_factory=list, description="Main topical terms")
    emails: list[str] = Field(default_factory=list, description="Email addresses, verbatim")
    urls: list[str] = Field(default_factory=list, description="URLs, verbatim")
    dates: list[str] = Field(default_factory=list, description="Dates, as written")
    amounts: list[str] = Field(default_factory=list, description="Money amounts with currency")
    headings: list[str] = Field(default_factory=list, description="Section headings, in order")


def load_schema(path: str | None) -> type[BaseModel]:
    """Import the pydantic model named `"package.module:ClassName"` (None = ExtractedFacts).

    Raises:
        ValueError: the path is malformed, does not import, or names no pydantic model.
    """
    if path is None:
        return ExtractedFacts
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"schema path {path!r} must look like 'package.module:ClassName'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"schema module {module_name!r} cannot be imported: {exc}") from exc
    obj: object = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ValueError(f"schema {path!r}: {module_name} has no attribute {attr!r}")
    if not (isinstance(obj, type) and issubclass(obj, BaseModel)):
        raise ValueError(f"schema {path!r} is not a pydantic BaseModel subclass")
    return obj


def schema_name(schema: type[BaseModel]) -> str:
    """The schema's import path, `module:QualName`, as stored in extraction rows."""
    return f"{schema.__module__}:{schema.__qualname__}"


def schema_fingerprint(schema: type[BaseModel]) -> str:
    """Hash of the schema's JSON Schema: any change to fields or types changes it."""
    payload = json.dumps(schema.model_json_schema(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def default_prompt(schema: type[BaseModel]) -> str:
    """The schema's prompt template: its `prompt_template` class attribute if it has one,
    `prompts/facts.md` for ExtractedFacts, else the generic `prompts/extract.md`."""
    own = getattr(schema, "prompt_template", None)
    if isinstance(own, str) and own.strip():
        return own
    name = "facts" if schema is ExtractedFacts else "extract"
    return (_PROMPTS / f"{name}.md").read_text(encoding="utf-8")
