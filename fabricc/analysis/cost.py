"""Analysis, part 9: what the bill of materials costs, from a price file.

Consumes a YAML price file (part number or legacy OPN -> unit price, any one currency) and the BOM lines of
fabricc.synth.bom; produces the total, the cost per BOM category and the part numbers that have
no price. Price files are read with the spec loader's positions: a bad entry is reported as
FILE:LINE:COL with a hint, like any spec error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, RootModel

from fabricc.errors import SpecError, error, raise_if_errors
from fabricc.ir import Fabric
from fabricc.spec.validation import validate
from fabricc.spec.yamlsource import load_yaml_file
from fabricc.synth.bom import CATEGORY_ORDER, Item, bom_lines, network_lines

Price = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]


class PriceFile(RootModel[dict[Annotated[str, Field(min_length=1)], Price]]):
    """part number -> unit price"""


def load_prices(path: Path, display: str) -> dict[str, float]:
    data, source = load_yaml_file(path, display)
    if not isinstance(data, dict):
        raise SpecError(
            [
                error(
                    "a price file is a mapping of part number to unit price",
                    location=source.value(()),
                    hint='write one line per part, e.g. "920-9B210-00FN-0M0: 30000"',
                )
            ]
        )
    model, problems = validate(PriceFile, data, source)
    raise_if_errors(problems)
    assert model is not None
    return {part: float(price) for part, price in model.root.items()}


def unit_price(item: Item, prices: dict[str, float]) -> float | None:
    """A BOM item's price by its part number (the vendor's ordering number where it has one),
    else by its legacy OPN: price lists quote either (MMA4Z00-NS or 980-9I...)."""
    price = prices.get(item.part_number)
    if price is None and item.legacy_part_number:
        price = prices.get(item.legacy_part_number)
    return price


def cost(fabric: Fabric, prices: dict[str, float]) -> dict[str, Any]:
    total = 0.0
    by_category: dict[str, float] = {}
    unpriced: list[str] = []
    priced = 0
    for line in bom_lines(fabric):
        price = unit_price(line.item, prices)
        if price is None:
            unpriced.append(line.item.part_number)
            continue
        priced += 1
        amount = price * line.quantity
        total += amount
        by_category[line.item.category] = by_category.get(line.item.category, 0.0) + amount
    order = {name: i for i, name in enumerate(CATEGORY_ORDER)}
    # per network: its switches, transceivers and cables (the parts it alone orders)
    by_network = {
        network: round(
            sum((unit_price(line.item, prices) or 0.0) * line.quantity for line in lines), 2
        )
        for network, lines in sorted(network_lines(fabric).items())
    }
    return {
        "total": round(total, 2),
        "by_category": {
            name: round(value, 2)
            for name, value in sorted(by_category.items(), key=lambda kv: order.get(kv[0], 99))
        },
        "by_network": by_network,
        "priced_lines": priced,
        "unpriced": sorted(unpriced),
    }
