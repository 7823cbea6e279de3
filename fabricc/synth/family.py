"""Synthesis helper: what every non-fat-tree topology family shares - switches, links, endpoints.

Consumes a ResolvedNetwork, the node plans and the port book; produces named switch devices,
booked links and the NetworkTopology of one network, for the family modules (railonly.py,
dragonfly.py, torus.py). Names come from the spec's hostname patterns (naming.py), ports from the
cage layout (switch_port), and every port is booked once (portbook.py), as in the fat-tree pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.catalog.models import SwitchModel
from fabricc.ir import ENDPOINT_LEAF, LeafClass, Link
from fabricc.spec.resolve import Attachment, general_cages, switch_port_speeds
from fabricc.synth.builder import NetworkBuilder
from fabricc.synth.naming import switch_port
from fabricc.synth.nodes import Endpoint
from fabricc.synth.switches import Place, add_switch


@dataclass(frozen=True, slots=True)
class Host:
    """One attached node (or compute tray): its endpoint and the attachment that wires it."""

    endpoint: Endpoint
    attachment: Attachment


class FamilyBuilder(NetworkBuilder):
    """Base of the family builders (rail-only, dragonfly-plus, torus): the plumbing they share
    beyond NetworkBuilder's."""

    # -- endpoints -----------------------------------------------------------------------------

    def hosts(self) -> list[Host]:
        """Every attached endpoint, in attachment (spec) order, then node order."""
        return [
            Host(endpoint, attachment)
            for attachment in self.net.attachments
            for endpoint in self.plans[attachment.group].endpoints
        ]

    def endpoint_speed(self) -> int | None:
        """The one speed of the attached node ports (a family's leaves serve one speed)."""
        speeds = sorted({a.speed for a in self.net.attachments})
        if not speeds:
            self.fail(
                "no node is attached to this network, so it has no switches",
                self.net.path,
                "attach a node group, or remove the network",
            )
            return None
        if len(speeds) > 1:
            self.fail(
                f"topology: {self.family} attaches node ports of one speed; these run at "
                f"{', '.join(f'{s}G' for s in speeds)}",
                (*self.net.path, "topology"),
                "attach node groups of one port speed, or use topology: fat-tree",
            )
            return None
        return speeds[0]

    def unit_of(self, hosts: list[Host], first: int) -> int | None:
        """The scalable unit of the `first`-th host, if any: a switch serving it is placed in
        that unit's network rack, near its nodes (racks.py), instead of a central rack."""
        return hosts[first].endpoint.su if first < len(hosts) else None

    def rails(self) -> int:
        """Ports of the widest attached node: its rails (per plane)."""
        return max(len(a.ports) for a in self.net.attachments)

    def endpoint_port(self, attachment: Attachment, rail: int, plane: int) -> str:
        port = attachment.ports[rail]
        return f"{port}/{plane + 1}" if attachment.breakout > 1 else port

    def ports_at(self, model: SwitchModel, speed: int) -> tuple[int, int]:
        """(ports, breakout) of a switch's general cages at `speed`."""
        breakout = switch_port_speeds(model)[speed]
        return general_cages(model) * breakout, breakout

    def leaf_class(self, down: int, up: int, speed: int, rail: bool) -> None:
        self.topology.leaf_classes = [
            LeafClass(
                name=self.family,
                groups=[a.group for a in self.net.attachments],
                down_ports=down,
                up_ports=up,
                down_speed=speed,
                up_speed=self.net.fabric_speed,
                rail_optimized=rail,
                leaves=list(self.topology.switches.get("leaf", [])),
            )
        ]

    # -- devices and links ---------------------------------------------------------------------

    def new_switch(
        self, role: str, coordinates: tuple[int, ...] | None = None, **fields: int | None
    ) -> str:
        """A switch at its stable fields (Place) and, on a torus, its coordinates."""
        model = self.net.switch_models["leaf" if role == "leaf" else "spine"]
        return add_switch(
            self.fabric,
            self.topology,
            self.net,
            self.counts,
            role,
            model,
            Place(**fields),
            coordinates=coordinates,
        )

    def link(self, link: Link) -> None:
        taken = self.book.take_link(link)
        if taken is not None:
            device, port = taken
            self.fail(f"port {port} of {device} would be used twice", self.net.path)
            return
        self.fabric.links.append(link)

    def host_link(
        self,
        host: Host,
        rail: int,
        plane: int,
        switch: str,
        index: int,
        breakout: int,
        port: int | None = None,
    ) -> None:
        """Node port `port` (default: `rail`) of `host` (its plane share), on rail `rail`, to
        the `index`-th port of `switch`."""
        self.link(
            Link(
                network=self.net.name,
                kind=ENDPOINT_LEAF,
                a=host.endpoint.device,
                a_port=self.endpoint_port(host.attachment, rail if port is None else port, plane),
                b=switch,
                b_port=switch_port(0, index, breakout),
                speed=host.attachment.speed,
                rail=rail,
                plane=plane,
            )
        )

    def switch_link(self, kind: str, a: str, a_port: str, b: str, b_port: str, plane: int) -> None:
        self.link(
            Link(
                network=self.net.name,
                kind=kind,
                a=a,
                a_port=a_port,
                b=b,
                b_port=b_port,
                speed=self.net.fabric_speed,
                plane=plane,
            )
        )
