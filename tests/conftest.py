"""pytest configuration: Hypothesis derandomized in CI (CI=true): the property tests there run
the same examples every time, so a failure is reproducible from the commit alone; locally they
search with fresh seeds."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
