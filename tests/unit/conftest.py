"""Unit tests: no Milvus at all. The hooks below fail any test here that reaches it (see no_milvus.py)."""

from .no_milvus import pytest_runtest_call, pytest_runtest_setup, pytest_runtest_teardown

__all__ = ["pytest_runtest_call", "pytest_runtest_setup", "pytest_runtest_teardown"]
