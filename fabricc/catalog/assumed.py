"""Why each assumed catalog value stays assumed: the built-in record of reasons and searches.

Stage: catalog reference. Input: fabricc/catalog/assumed.yaml (packaged beside the catalog data,
not a catalog section). Output: one `AssumedRecord` per (section, entry, where) of a source that
says `assumed`, with its reason (one of `REASONS`) and what was searched for it; the catalog
reference shows them in its list of assumed values, grouped by reason.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

Reason = Literal["generic", "unpublished", "unread", "derived"]


class AssumedRecord(BaseModel):
    """One assumed value: where it is in the catalog, why it stays assumed, what was searched."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    section: str
    entry: str
    where: str
    reason: Reason
    searched: str = Field(min_length=1, description="documents and queries searched for it")


class AssumedFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    reasons: dict[Reason, str]
    values: tuple[AssumedRecord, ...]


@cache
def assumed_records() -> AssumedFile:
    """The packaged record of assumed values (validated; a broken file is a product bug)."""
    text = (resources.files("fabricc.catalog") / "assumed.yaml").read_text(encoding="utf-8")
    return AssumedFile.model_validate(yaml.safe_load(text))


def record_for(section: str, entry: str, where: str) -> AssumedRecord | None:
    """The record of one assumed value, or None (a site catalog's own assumed values)."""
    for record in assumed_records().values:
        if (record.section, record.entry, record.where) == (section, entry, where):
            return record
    return None


def record_gaps(
    listed: list[tuple[str, str, str]],
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """(assumed values without a record, records of values no longer assumed), each sorted;
    `listed` is (section, entry, where) of every assumed value of the built-in catalog."""
    recorded = {(r.section, r.entry, r.where) for r in assumed_records().values}
    return sorted(set(listed) - recorded), sorted(recorded - set(listed))
