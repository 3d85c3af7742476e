"""Preparing a caller's messages for a model: attachments and their saved descriptions, data
sources (the store's search, APIs, MCP resources), routing to tools, and the fetch policy for
URLs. It sits on top of the library: it uses agents for calls and search for the store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports
from content_core.chat.attachments import AttachmentStore as AttachmentStore
from content_core.chat.attachments import PreparedFor as PreparedFor
from content_core.chat.data_sources import ApiEndpoint as ApiEndpoint
from content_core.chat.data_sources import DataSources as DataSources
from content_core.chat.fetch import FetchPolicy as FetchPolicy
from content_core.chat.local import LocalPolicy as LocalPolicy
from content_core.chat.messages import prepare_messages as prepare_messages
from content_core.chat.routing import Uses as Uses

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
