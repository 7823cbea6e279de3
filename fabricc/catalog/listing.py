"""Catalog stage, for people: what hardware the catalog holds (`fabricc catalog`).

Consumes a LoadedCatalog; produces the rows of the listing (every model by section and kind
with its key facts: GPUs, ports and speeds, height, power, source), one entry in full as YAML in
the format a site catalog file takes (with its host topology, when the catalog has one), and
the closest model keys to a word, looked up in every section. Printing is the CLI's job.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from difflib import SequenceMatcher
from typing import Any

import yaml

from fabricc.catalog.loader import LoadedCatalog
from fabricc.catalog.models import (
    Catalog,
    NodeModel,
    PortSpec,
    SwitchModel,
    rack_system_power_w,
)
from fabricc.yamlsafe import SafeDumper

# The sections a model key may live in, as `fabricc catalog` lists them.
SECTIONS = ("nodes", "switches", "transceivers", "cables", "parts")
COLUMNS = ("model", "kind", "GPUs", "ports", "U", "kW", "source")


def _speeds(speeds: Iterable[int]) -> str:
    return "/".join(f"{s}G" for s in speeds)


def _node_ports(ports: list[PortSpec]) -> str:
    """`8x 400G/200G osfp-rhs compute, 2x 400G/200G/100G qsfp112 inband, 1x 1G rj45 oob`."""
    counts: Counter[tuple[str, str, str]] = Counter(
        (_speeds(p.speeds), p.form, p.role) for p in ports
    )
    return ", ".join(f"{n}x {speed} {form} {role}" for (speed, form, role), n in counts.items())


def _switch_ports(switch: SwitchModel) -> str:
    """Cages with their speed and the ways they split: `64x 800G osfp (2x400G)`."""
    parts = []
    for group in switch.port_groups:
        splits = [f"{b}x{group.cage_speed // b}G" for b in group.breakouts if b > 1]
        extra = f" ({', '.join(splits)})" if splits else ""
        use = " uplink" if group.use == "uplink" else ""
        parts.append(f"{group.count}x {group.cage_speed}G {group.form}{extra}{use}")
    return ", ".join(parts)


def _kw(watts: float) -> str:
    return f"{watts / 1000:g}"


def _kw_or_blank(watts: float) -> str:
    """kW, or a blank cell for a model the catalog gives no power for."""
    return _kw(watts) if watts else ""


def _node_gpus(catalog: Catalog, node: NodeModel) -> str:
    if not node.gpus:
        return ""
    gpu = node.gpu
    if gpu is None and node.rack_scale is not None:
        tray = catalog.compute_tray(node)
        gpu = tray[1].gpu if tray is not None else None
    return f"{node.gpus}x {gpu.model}" if gpu is not None else str(node.gpus)


def rows(loaded: LoadedCatalog) -> dict[str, list[tuple[str, ...]]]:
    """Per section, one row per model (COLUMNS), nodes ordered by kind, then by key."""
    catalog = loaded.catalog
    listing: dict[str, list[tuple[str, ...]]] = {}
    listing["nodes"] = [
        (
            key,
            node.kind,
            _node_gpus(catalog, node),
            _node_ports(node.ports),
            str(node.height_u) if node.rack_scale is None else str(node.rack_scale.height_u),
            _kw_or_blank(rack_system_power_w(catalog, node)),
            node.source,
        )
        for key, node in sorted(catalog.nodes.items(), key=lambda item: (item[1].kind, item[0]))
    ]
    listing["switches"] = [
        (
            key,
            f"{switch.fabric} {switch.asic}",
            "",
            _switch_ports(switch),
            str(switch.height_u),
            _kw(switch.power_w),
            switch.source,
        )
        for key, switch in sorted(catalog.switches.items())
    ]
    listing["transceivers"] = [
        (
            key,
            f"{module.media} module",
            "",
            f"{module.ports}x {module.speed}G {module.form}, {module.reach_m:g} m",
            "",
            _kw(module.power_w),
            module.source,
        )
        for key, module in sorted(catalog.transceivers.items())
    ]
    listing["cables"] = [
        (
            key,
            f"{cable.media} {cable.kind}",
            "",
            f"{cable.a_form} to {cable.legs}x {cable.b_form}"
            + (f" {cable.speed}G" if cable.speed else "")
            + f", up to {cable.reach_m:g} m",
            "",
            "",
            cable.source,
        )
        for key, cable in sorted(catalog.cables.items())
    ]
    listing["parts"] = [
        (
            key,
            part.category,
            "",
            "",
            str(part.height_u) if part.height_u else "",
            _kw_or_blank(part.power_w),
            part.source,
        )
        for key, part in sorted(catalog.parts.items())
    ]
    return listing


def entry_yaml(loaded: LoadedCatalog, key: str) -> str | None:
    """The entry of `key` in full, as a site catalog file takes it (`nodes: {key: ...}`), with
    its host topology; None when no section has the key."""
    catalog = loaded.catalog
    document: dict[str, Any] = {}
    for section in SECTIONS:
        entry = getattr(catalog, section).get(key)
        if entry is not None:
            document[section] = {key: entry.model_dump(mode="json", exclude_defaults=True)}
    if not document:
        return None
    if key in catalog.host_topologies:
        topology = catalog.host_topologies[key]
        document["host_topologies"] = {key: topology.model_dump(mode="json", exclude_defaults=True)}
    origins = sorted(
        {loaded.origins[(s, key)].name for s in document if (s, key) in loaded.origins}
    )
    header = (
        f"# {key}, from {', '.join(origins)}.\n"
        "# To change it for a site, save this as a file, edit it and name the file in the spec's\n"
        "# `catalog:` list: an entry of the same key replaces this one whole, a new key adds a\n"
        "# model. See docs/catalog.md.\n"
    )
    body = yaml.dump(document, Dumper=_Dumper, sort_keys=False, width=1_000_000, allow_unicode=True)
    return header + body


class _Dumper(SafeDumper):
    """Block style, except a mapping or list of plain values (a port, a GPU, a speed list) on
    one line in flow style, as the built-in files are written."""

    def represent_mapping(self, tag: str, mapping: Any, flow_style: bool | None = None) -> Any:
        flat = all(_plain(v) for v in mapping.values())
        return super().represent_mapping(tag, mapping, flow_style=flat or None)

    def represent_sequence(self, tag: str, sequence: Any, flow_style: bool | None = None) -> Any:
        flat = all(not isinstance(v, dict | list) for v in sequence)
        return super().represent_sequence(tag, sequence, flow_style=flat or None)


def _plain(value: object) -> bool:
    return not isinstance(value, dict | list) or (
        isinstance(value, list) and all(not isinstance(v, dict | list) for v in value)
    )


_NUMBERED = re.compile(r"\d")


def closest(word: str, loaded: LoadedCatalog, limit: int = 3) -> list[tuple[str, str]]:
    """The (section, key) of every section closest to `word`: keys that share the most
    model-number tokens with it (`h200` in `hgx-h200` -> `dgx-h200`: the generation a user
    names matters more than the brand), then by similarity; only reasonably close ones."""
    catalog = loaded.catalog
    tokens = set(re.split(r"[-_.]", word.lower()))
    numbered = {t for t in tokens if _NUMBERED.search(t)}
    scored = []
    for section in SECTIONS:
        for key in getattr(catalog, section):
            ratio = SequenceMatcher(None, word.lower(), key.lower()).ratio()
            shared = numbered & set(re.split(r"[-_.]", key.lower()))
            if ratio < 0.6 and not (shared and ratio >= 0.4):
                continue
            scored.append((-len(shared), -ratio, section, key))
    scored.sort()
    return [(section, key) for _, _, section, key in scored[:limit]]


SECTION_NOUN = {
    "nodes": "node model",
    "switches": "switch model",
    "transceivers": "transceiver",
    "cables": "cable",
    "parts": "part",
}


def suggestion(word: str, loaded: LoadedCatalog, wanted: str) -> str:
    """A hint for an unknown `wanted` (section) key: the closest key of that section, a key
    of another section said to be one, and where to see them all."""
    found = closest(word, loaded)
    same = [key for section, key in found if section == wanted]
    other = [(section, key) for section, key in found if section != wanted]
    tail = "`fabricc catalog` lists every model"
    if word in {key for _, key in other}:
        section = next(section for section, key in other if key == word)
        return f"{word!r} is a {SECTION_NOUN[section]}, not a {SECTION_NOUN[wanted]}; {tail}"
    if same:
        more = f" (or {same[1]!r})" if len(same) > 1 else ""
        return f"did you mean {same[0]!r}?{more}; {tail}"
    return tail
