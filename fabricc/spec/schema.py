"""The JSON Schema of the spec language, generated from the pydantic models.

Consumes fabricc.spec.models; produces the text committed as schemas/fabricc.schema.json, which
editors use (yaml-language-server) to complete and check keys while an architect types.
"""

from __future__ import annotations

import json
from typing import Any

from fabricc.spec.models import Spec

SCHEMA_ID = "https://fabricc.dev/schemas/fabricc.schema.json"


def schema_dict() -> dict[str, Any]:
    schema = Spec.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def schema_text() -> str:
    return json.dumps(schema_dict(), indent=2, sort_keys=False) + "\n"
