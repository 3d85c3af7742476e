"""The built-in stages, one module per table, each defining `STAGE` (the order they run in is
`content_core.pipeline.registry.BUILTIN_STAGE_MODULES`)."""
