"""Preparing a caller's messages for a model: attachments and their saved descriptions, data
sources (the store's search, APIs, MCP resources), routing to tools, and the fetch policy for
URLs. It sits on top of the library: it uses agents for calls and search for the store."""

from __future__ import annotations

from content_core.chat.attachments import AttachmentStore, PreparedFor
from content_core.chat.data_sources import ApiEndpoint, DataSources
from content_core.chat.fetch import FetchPolicy
from content_core.chat.messages import prepare_messages
from content_core.chat.routing import Uses

__all__ = [
    "ApiEndpoint",
    "AttachmentStore",
    "DataSources",
    "FetchPolicy",
    "PreparedFor",
    "Uses",
    "prepare_messages",
]
