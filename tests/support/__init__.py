"""Test helpers that run real local services (no mocks of our own code)."""
