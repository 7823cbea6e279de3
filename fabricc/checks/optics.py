"""Check stage: switches that get transceivers of another vendor.

Consumes a Fabric; produces one warning per switch model (typically a site catalog's non-NVIDIA
switch) whose cages got catalog transceivers of another vendor: which parts were chosen, and why
(they are the catalog's modules that fit the cage's form, speed and reach). Switch vendors
qualify their own optics; a site catalog adds them (`transceivers:` with `vendor:`), and cabling
then prefers them (synth/cabling.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from fabricc.errors import Diagnostic, warning
from fabricc.ir import Fabric
from fabricc.spec.yamlsource import format_path


def check_optics_vendor(fabric: Fabric) -> list[Diagnostic]:
    catalog = fabric.loaded.catalog.catalog
    chosen: dict[str, Counter[str]] = defaultdict(Counter)  # switch model -> part -> modules
    first: dict[str, str] = {}  # switch model -> its first device
    for module in fabric.modules:
        device = fabric.devices.get(module.device)
        if device is None or device.kind != "switch":
            continue
        switch = catalog.switches.get(device.model)
        optic = catalog.transceivers.get(module.part)
        if switch is None or optic is None or optic.vendor in (None, switch.vendor):
            continue  # a site catalog's module of no stated vendor is the site's own choice
        chosen[device.model][module.part] += 1
        first.setdefault(device.model, device.name)
    found: list[Diagnostic] = []
    for model, parts in sorted(chosen.items()):
        switch = catalog.switches[model]
        device = fabric.devices[first[model]]
        vendors = sorted({catalog.transceivers[p].vendor or "" for p in parts})
        listed = ", ".join(f"{count:,}x {part}" for part, count in sorted(parts.items()))
        found.append(
            warning(
                f"{model} (vendor {switch.vendor}) gets {' and '.join(vendors)} "
                f"transceivers ({listed}): the catalog has no {switch.vendor} module for those "
                "cages, and these are the ones that fit their form, speed and reach",
                path=format_path(device.spec_path),
                location=fabric.loaded.source.value(device.spec_path),
                hint=f"check that {switch.vendor} supports them, or add {switch.vendor}'s "
                f"optics to a site catalog (`transceivers:` entries with `vendor: "
                f"{switch.vendor}`): cabling then prefers them for this switch",
            )
        )
    return found
