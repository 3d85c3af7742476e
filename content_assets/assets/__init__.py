"""The nine pipeline assets, in pipeline order (each table's checks run in its asset's step)."""

from content_assets.assets.chunk_embeddings import chunk_embeddings
from content_assets.assets.chunks import chunks
from content_assets.assets.compressed_contexts import compressed_contexts
from content_assets.assets.extractions import agentic_extractions, merged_extractions
from content_assets.assets.message_parts import message_parts
from content_assets.assets.normalised_artifacts import normalised_artifacts
from content_assets.assets.raw_files import raw_files
from content_assets.assets.search_index import search_index

ALL_ASSETS = [
    raw_files,
    normalised_artifacts,
    chunks,
    chunk_embeddings,
    search_index,
    message_parts,
    compressed_contexts,
    agentic_extractions,
    merged_extractions,
]
