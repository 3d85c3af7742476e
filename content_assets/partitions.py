"""The one partitioning of every asset: ingest batches (never one partition per file)."""

import dagster as dg

INGEST_BATCHES = "ingest_batches"

ingest_batches = dg.DynamicPartitionsDefinition(name=INGEST_BATCHES)
