"""A task for a worker pool that reports what its worker had loaded before the task ran."""

from __future__ import annotations

import sys

# A parser, the PDF library, the tokeniser and a format handler: each is imported only inside
# the functions that need it, so a worker has it before its first task only by preloading.
PROBED = ("content_core.extract.docx", "lxml.etree", "pypdfium2", "tiktoken")


def preloaded(_: object) -> dict[str, object]:
    """Which of PROBED this worker had imported, and how many WordLlama models it holds."""
    from content_core.embeddings import wordllama

    return {
        "modules": [name for name in PROBED if name in sys.modules],
        "models": wordllama._load.cache_info().currsize,
    }
