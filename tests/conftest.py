"""pytest configuration: a deterministic hash seed check and shared markers."""

from __future__ import annotations
