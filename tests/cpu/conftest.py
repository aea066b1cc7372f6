"""Fixtures of the cpu-backend tests (the backend is registered in kdsl.runtime.backends)."""
