"""User-style extraction schemas, named by import path (`tests.support.schemas:Invoice`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class Invoice(BaseModel):
    """An invoice schema with its own prompt template."""

    model_config = ConfigDict(extra="forbid")

    prompt_template: ClassVar[str] = (
        "Read the invoice between the tags and fill the schema.\n{schema_json}\n"
        "<document>\n{content}\n</document>"
    )

    invoice_number: str | None = None
    emails: list[str] = []
    amounts: list[str] = []
    line_items: list[str] = []


class Contacts(BaseModel):
    """A schema sharing two fields with the offline facts schema."""

    emails: list[str]
    urls: list[str]


class Needy(BaseModel):
    """A schema the offline extractor cannot fill (a required field it knows nothing of)."""

    customer_id: int
