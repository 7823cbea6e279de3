"""Check stage: the spec's InfiniBand GUID files against the design's IB node names.

Consumes the spec's subnet_manager.guids files (read, bounded and with positions, by the load
stage: IB node name -> GUID, as int or hex string) and the IB switches and CA ports of the
Fabric IR ("dgx001/OSFP4/P2"); produces network -> (IB node name -> GUID), computed once per
build, or a SpecError naming every unknown node, invalid GUID and GUID given twice at its place
in the file. The build calls check_guid_files before any emitter runs; the InfiniBand emitters
(emit/configs/ibfabric.py) read the same mapping and fill in placeholders for the nodes it lacks.
"""

from __future__ import annotations

from fabricc.errors import Diagnostic, SpecError, error
from fabricc.ir import ENDPOINT_LEAF, Fabric
from fabricc.spec.resolve import TIERS
from fabricc.spec.validation import did_you_mean
from fabricc.spec.yamlsource import DataPath

GUID_MAX = (1 << 64) - 1


def ca_name(device: str, port: str) -> str:
    return f"{device}/{port}"


def ib_node_names(fabric: Fabric) -> set[str]:
    """Names a GUID file may use: IB switches and CAs ("dgx001/OSFP4/P2") of every IB network."""
    known: set[str] = set()
    for name, network in fabric.loaded.networks.items():
        if network.fabric != "infiniband" or name not in fabric.networks:
            continue
        for tier in TIERS:
            known.update(fabric.networks[name].switches.get(tier, []))
        known.update(
            ca_name(link.a, link.a_port)
            for link in fabric.links_of(name)
            if link.kind == ENDPOINT_LEAF
        )
    return known


def guid_mappings(fabric: Fabric) -> dict[str, dict[str, int]]:
    """The spec's GUID files checked against the IB node names, once per build: validate asks
    through check_guid_files, the subnet builder for the GUIDs themselves."""
    return fabric.derived(
        "ib.guid_mappings",
        lambda: load_mappings(fabric, ib_node_names(fabric)) if fabric.loaded.guid_files else {},
    )


def check_guid_files(fabric: Fabric) -> None:
    """Raise SpecError for any problem in the spec's GUID files (what validate checks)."""
    guid_mappings(fabric)


def guid_text(guid: int) -> str:
    return f"0x{guid:016x}"


def load_mappings(fabric: Fabric, known: set[str]) -> dict[str, dict[str, int]]:
    """network -> (IB node name -> GUID) for every IB network whose spec names a guids file.

    The files were read (bounded, with positions) by the load stage; problems point into them.
    """
    problems: list[Diagnostic] = []
    result: dict[str, dict[str, int]] = {}
    for name, guid_file in fabric.loaded.guid_files.items():
        shown = guid_file.display
        mapping: dict[str, int] = {}
        owner: dict[int, str] = {}
        for key, value in guid_file.data.items():
            node = str(key)
            at: DataPath = (key,) if isinstance(key, str | int) else ()
            guid = _parse_guid(value)
            if node not in known:
                problems.append(
                    error(
                        f"{node!r} is not an InfiniBand node of network {name!r}",
                        location=guid_file.source.key(at),
                        hint=did_you_mean(node, sorted(known), "IB nodes"),
                    )
                )
            elif guid is None:
                problems.append(
                    error(
                        f"{node!r} has no valid 64-bit GUID",
                        location=guid_file.source.value(at),
                        hint="write the GUID as 0x followed by up to 16 hex digits",
                    )
                )
            elif guid in owner:
                problems.append(
                    error(
                        f"{guid_text(guid)} is given to {owner[guid]!r} and {node!r}",
                        location=guid_file.source.value(at),
                        hint=f"every GUID in {shown} must be unique",
                    )
                )
            else:
                owner[guid] = node
                mapping[node] = guid
        result[name] = mapping
    if problems:
        raise SpecError(problems)
    return result


def _parse_guid(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        guid = value
    elif isinstance(value, str):
        try:
            guid = int(value, 16)  # "0x..." or bare hex digits
        except ValueError:
            return None
    else:
        return None
    return guid if 0 < guid <= GUID_MAX else None
