"""Verification entry points: discovery files in, findings for one network out.

Consumes the Fabric IR, the parsed discovery output and an optional network name; picks the
network the discovery belongs to (the one named, else the only one whose devices it saw - for a
multi-plane InfiniBand network, the plane), translates discovered names into IR ports and runs the
comparison. Raises SpecError when the network is unknown or cannot be told apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from fabricc.errors import SpecError, error
from fabricc.ir import Fabric
from fabricc.verify import ibnetdiscover, lldp
from fabricc.verify.compare import compare
from fabricc.verify.model import OK, Finding, Port, SeenLink
from fabricc.verify.plan import Scope, scopes


@dataclass(slots=True)
class Verdict:
    scope: str
    findings: list[Finding]

    @property
    def failed(self) -> bool:
        return any(f.status != OK for f in self.findings)

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for finding in self.findings:
            counts[finding.status] = counts.get(finding.status, 0) + 1
        return counts


def _pick(
    fabric: Fabric,
    kind: str,
    network: str | None,
    seen_for: Callable[[Scope], list[SeenLink]],
) -> tuple[Scope, list[SeenLink], frozenset[Port]]:
    every = scopes(fabric)
    candidates = [s for s in every if s.fabric == kind]
    if network is not None:
        candidates = [s for s in candidates if network in (s.name, s.network)]
        if not candidates:
            names = sorted({s.network for s in every if s.fabric == kind})
            raise SpecError(
                [
                    error(
                        f"no {kind} network {network!r} in {fabric.name}",
                        hint=f"one of: {', '.join(names) or '(none)'}",
                    )
                ]
            )
    scored: list[tuple[int, Scope, list[SeenLink]]] = []
    for scope in candidates:
        links = seen_for(scope)
        known = scope.ports
        scored.append((sum((s.a in known) + (s.b in known) for s in links), scope, links))
    scored.sort(key=lambda item: -item[0])
    if not scored or scored[0][0] == 0:
        raise SpecError(
            [
                error(
                    f"the discovered {kind} topology shares no cable with "
                    + (f"network {network!r}" if network else f"any network of {fabric.name}"),
                    hint="check that the discovery file and the spec belong together",
                )
            ]
        )
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        raise SpecError(
            [
                error(
                    "the discovered topology matches several networks: "
                    + ", ".join(s.name for score, s, _ in scored if score == scored[0][0]),
                    hint="name one with --network",
                )
            ]
        )
    _, scope, links = scored[0]
    elsewhere = frozenset(p for s in every if s is not scope for p in s.ports)
    return scope, links, elsewhere


def verify_ibnetdiscover(
    fabric: Fabric, text: str, file: str, network: str | None = None, check_speed: bool = True
) -> Verdict:
    nodes = ibnetdiscover.parse(text, file)

    def seen_for(scope: Scope) -> list[SeenLink]:
        def end(guid: int, port: int) -> Port:
            target = scope.ib_nodes.get(guid)
            node = nodes.get(guid)
            if target is None and node is not None:
                target = scope.ib_names.get(node.description)
            if isinstance(target, tuple):
                return target
            if target is None:
                name = node.description if node is not None and node.description else f"{guid:#x}"
                return (name, f"IB port {port}")
            return (target, scope.ib_ports.get((target, port), f"IB port {port}"))

        return [
            SeenLink(end(node.guid, number), end(port.far_guid, port.far_port), port.rate)
            for node in nodes.values()
            for number, port in sorted(node.ports.items())
        ]

    scope, links, elsewhere = _pick(fabric, "infiniband", network, seen_for)
    findings = compare(scope.cables, links, elsewhere=elsewhere, check_speed=check_speed)
    return Verdict(scope.name, findings)


def verify_lldp(
    fabric: Fabric,
    files: Mapping[str, tuple[str, str]],
    network: str | None = None,
    check_speed: bool = True,
) -> Verdict:
    """`files`: device name -> (lldpctl -f json0 text, file name for messages)."""
    neighbors = {device: lldp.parse(text, file) for device, (text, file) in sorted(files.items())}

    def seen_for(scope: Scope) -> list[SeenLink]:
        def end(device: str, name: str) -> Port:
            return (device, scope.aliases.get((device, name), name))

        return [
            SeenLink(
                end(device, n.interface),
                end(n.system, n.port),
                f"{n.speed}G" if n.speed is not None else None,
            )
            for device, found in neighbors.items()
            for n in found
        ]

    scope, links, elsewhere = _pick(fabric, "ethernet", network, seen_for)
    findings = compare(scope.cables, links, elsewhere=elsewhere, check_speed=check_speed)
    return Verdict(scope.name, findings)
