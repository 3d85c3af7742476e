"""Beyond one machine: the Celery executor and workers, the forking run launcher and what
they preload. The only package that imports Dagster's or dagster-celery's private names
(`dagster._*`); tests/assets/test_dagster_private_api.py checks each one it uses, and
pyproject.toml bounds the versions that test has passed on (import-linter enforces the rule).
"""
