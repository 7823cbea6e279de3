"""Regenerate every generated file that the tests compare against; review the git diff after.

  python scripts/regen.py

Writes schemas/fabricc.schema.json, the spec and catalog references of the documentation site
(docs/reference/spec.md, docs/reference/catalog.md), tests/golden/<example>/... and
tests/errors/*.err (the exact messages for the bad-spec corpus).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fabricc.spec.schema import schema_text  # noqa: E402
from tests.support import ERRORS, GOLDEN, GOLDEN_FULL, GOLDEN_SELECTED, golden_artifacts  # noqa: E402


def main() -> None:
    from fabricc.emit.configs import avd

    if not avd.available():  # the EOS goldens hold what pyavd renders
        sys.exit("regen needs pyavd: pip install -e '.[test]' (or '.[eos]')")
    (ROOT / "schemas" / "fabricc.schema.json").write_text(schema_text())
    regen_docs()
    for example in sorted({*GOLDEN_FULL, *GOLDEN_SELECTED}):
        folder = GOLDEN / example
        if example in GOLDEN_FULL and folder.exists():
            shutil.rmtree(folder)
        for path, content in golden_artifacts(example).items():
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
    regen_errors()


def regen_docs() -> None:
    """The generated pages of the documentation site (tests/test_docs.py checks them fresh)."""
    from fabricc.catalog import reference as catalog_reference
    from fabricc.spec import reference as spec_reference

    for module in (spec_reference, catalog_reference):
        target = ROOT / module.PAGE
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(module.page())


def regen_errors() -> None:
    from tests.errors_support import render_error

    for spec in sorted(ERRORS.glob("*.yaml")):
        spec.with_suffix(".err").write_text(render_error(spec))


if __name__ == "__main__":
    main()
