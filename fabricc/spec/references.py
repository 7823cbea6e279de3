"""Load stage, second pass of the first round: the names a spec refers to, on the raw YAML.

Consumes the parsed YAML data (before or despite schema errors), its SourceMap and the catalog;
produces positioned Diagnostics for names that do not exist - node and switch models, networks
named by uplink_to, node groups named by endpoints, sm_nodes and partitions - with the same words
as the resolver, so that a file whose schema check fails still hears of these in the same run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from fabricc.catalog.listing import suggestion
from fabricc.catalog.loader import LoadedCatalog
from fabricc.errors import Diagnostic, error
from fabricc.spec.validation import did_you_mean
from fabricc.spec.yamlsource import DataPath, SourceMap, format_path

TIERS = ("leaf", "spine", "core")


def _mapping(value: object) -> Mapping[object, object]:
    return value if isinstance(value, Mapping) else {}


def _names(value: object) -> list[str]:
    return [str(key) for key in _mapping(value)]


def check_references(data: object, source: SourceMap, loaded: LoadedCatalog) -> list[Diagnostic]:
    """Every unknown name the raw spec refers to, in document order of the checks."""
    spec = _mapping(data)
    nodes = _names(spec.get("nodes"))
    networks = _names(spec.get("networks"))
    catalog = loaded.catalog
    problems: list[Diagnostic] = []

    def err(message: str, path: DataPath, hint: str, *, key: bool = False) -> None:
        location = source.key(path) if key else source.value(path)
        problems.append(error(message, path=format_path(path), location=location, hint=hint))

    for name, group in _mapping(spec.get("nodes")).items():
        model = _mapping(group).get("model")
        if isinstance(model, str) and model not in catalog.nodes:
            err(
                f"unknown node model {model!r}",
                ("nodes", str(name), "model"),
                suggestion(model, loaded, "nodes"),
            )
    for name, network in _mapping(spec.get("networks")).items():
        path: DataPath = ("networks", str(name))
        body = _mapping(network)
        for tier in TIERS:
            chosen = _mapping(body.get("switches")).get(tier)
            if isinstance(chosen, str) and chosen not in catalog.switches:
                err(
                    f"unknown switch model {chosen!r}",
                    (*path, "switches", tier),
                    suggestion(chosen, loaded, "switches"),
                )
        for at, member, key in _group_references(body):
            if member not in nodes:
                err(
                    f"unknown node group {member!r}",
                    (*path, *at),
                    did_you_mean(member, nodes, "node groups"),
                    key=key,
                )
        target = body.get("uplink_to")
        if isinstance(target, str) and target != name and target not in networks:
            err(
                f"unknown network {target!r}",
                (*path, "uplink_to"),
                did_you_mean(target, networks, "networks"),
            )
    return problems


def _group_references(network: Mapping[object, object]) -> Iterator[tuple[DataPath, str, bool]]:
    """(path below the network, node group named, whether the name is a key) of each reference."""
    for group in _mapping(network.get("endpoints")):
        yield ("endpoints", str(group)), str(group), True
    manager = _mapping(network.get("subnet_manager"))
    for pname, partition in _mapping(manager.get("partitions")).items():
        members = _mapping(partition).get("members")
        for index, member in enumerate(members if isinstance(members, list) else []):
            if isinstance(member, str):
                yield ("subnet_manager", "partitions", str(pname), "members", index), member, False
    sm_nodes = manager.get("sm_nodes")
    for index, member in enumerate(sm_nodes if isinstance(sm_nodes, list) else []):
        if isinstance(member, str):
            yield ("subnet_manager", "sm_nodes", index), member, False
