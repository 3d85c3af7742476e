"""Dagster definitions for the content pipeline; every asset body calls content_core."""
