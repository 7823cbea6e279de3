"""Twin layer 2 of a Cumulus switch: bonds, the MLAG peer link, br_default, SVIs and VRR.

Consumes the merged NVUE `set` tree of one switch (fabricc.twin.nvue.nvue_set) and the names of
the ports cabled into its namespace; produces a Bundles map (which cable ports a bond, the peer
link or a routed subinterface stands on) and, applied in the namespace with `ip`, the devices its
routing runs on: one Linux bridge `br_default` holding every bridged port and the peer link, a
macvlan per SVI (`vlanN`, its address from the rendered frr.conf), one per VRR address
(`vlanN-v0` with the VRR MAC, as Cumulus names it) and one per routed subinterface of the peer
link (`peerlink.4094`). The twin assumes neither the bonding, 802.1Q nor VRF driver (not every
kernel has them): a bond is its first cabled member, the other members stay unbridged (a loop
otherwise), and the VLANs of br_default share one broadcast domain. MLAG's control plane (clagd)
is not run: both peers bridge the peer link and answer the VRR address, as a synced pair would,
each holding the VRR MAC as a local entry of its bridge.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from fabricc.twin.lab import Lab
from fabricc.twin.nvue_frr import VRR_SUFFIX, natural, vrr_addresses, vrr_mac

Tree = dict[str, object]
BRIDGE = "br_default"
STAND_IN = "standin"
FORWARD_DELAY = 200  # centiseconds: STP blocks loops; 2 s is the kernel's least forward delay


def _map(value: object) -> Tree:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


@dataclass(slots=True)
class Bundles:
    bonds: dict[str, list[str]] = field(default_factory=dict)  # bond -> members, natural order
    peerlink: str | None = None
    bridged: list[str] = field(default_factory=list)  # ports and bonds in br_default
    svis: dict[str, Tree] = field(default_factory=dict)  # vlanN -> its NVUE entry
    routed_subinterfaces: list[str] = field(default_factory=list)  # peerlink.4094, ...
    neighbors: list[str] = field(default_factory=list)  # BGP neighbor names

    def bond_of(self, port: str) -> str | None:
        return next((b for b, members in self.bonds.items() if port in members), None)

    def carrier(self, bond: str, cabled: set[str]) -> str | None:
        """The member that stands for the bond: its first cabled one."""
        return next((m for m in self.bonds.get(bond, []) if m in cabled), None)

    def session_interface(self, port: str) -> str:
        """The interface a BGP session over this cable port runs on: the port, or the bond (or
        one of its subinterfaces) it is a member of."""
        bond = self.bond_of(port)
        if bond is None:
            return port
        named = [n for n in self.neighbors if n == bond or n.startswith(bond + ".")]
        return named[0] if named else bond


def bundles(tree: Tree) -> Bundles:
    result = Bundles()
    interfaces = _map(tree.get("interface"))
    for name in sorted(interfaces, key=natural):
        entry = _map(interfaces[name])
        members = sorted(_map(_map(entry.get("bond")).get("member")), key=natural)
        if members:
            result.bonds[name] = members
        if entry.get("type") == "peerlink":
            result.peerlink = name
        domain = _map(_map(entry.get("bridge")).get("domain"))
        if BRIDGE in domain:
            result.bridged.append(name)
        if entry.get("type") == "svi":
            result.svis[name] = entry
    bgp = _map(_map(_map(_map(tree.get("vrf")).get("default")).get("router")).get("bgp"))
    result.neighbors = sorted(_map(bgp.get("neighbor")), key=natural)
    result.routed_subinterfaces = [
        n for n in result.neighbors if "." in n and n.partition(".")[0] in result.bonds
    ]
    return result


def apply(lab: Lab, ns: str, found: Bundles, cabled: set[str], mtu: int | None) -> list[str]:
    """Creates br_default, the SVI, VRR and subinterface macvlans in `ns`; `cabled`: the ports
    whose veths exist there; `mtu`: the switch's largest port MTU (the stand-in port's). Returns
    the cabled ports it put into the bridge."""
    ports: list[str] = []
    for name in [*found.bridged, *([found.peerlink] if found.peerlink else [])]:
        port = found.carrier(name, cabled) if name in found.bonds else name
        if port is not None and port in cabled and port not in ports:
            ports.append(port)
    if not ports and not found.svis and not found.routed_subinterfaces:
        return []
    # one `ip -batch` for the namespace's layer 2, in the order written here
    commands = [f"link add {BRIDGE} type bridge stp_state 1 forward_delay {FORWARD_DELAY}"]
    uncabled = [
        name
        for name in found.bridged
        if name not in cabled and not set(found.bonds.get(name, [])) & cabled
    ]
    if uncabled:
        # ports to devices this stage does not boot (a PDU's management port, ...): one
        # stand-in port, so that the bridge and its SVIs have carrier as with anything plugged in
        lab.stand_in(ns, STAND_IN, mtu)
        ports.append(STAND_IN)
    commands += [f"link set {port} master {BRIDGE}" for port in ports]
    commands.append(f"link set {BRIDGE} up")

    def macvlan(name: str, mac: str | None = None) -> None:
        extra = f" address {mac}" if mac else ""
        commands.append(f"link add link {BRIDGE} name {name}{extra} type macvlan mode bridge")
        commands.append(f"link set {name} up")

    local: list[str] = []
    for svi, entry in sorted(found.svis.items()):
        macvlan(svi)
        if vrr_addresses(entry):
            mac = vrr_mac(entry)
            macvlan(svi + VRR_SUFFIX, mac)
            if mac:
                local.append(mac)
    for name in found.routed_subinterfaces:
        macvlan(name)
    lab.run("ip", "-n", ns, "-batch", "-", stdin="".join(line + "\n" for line in commands))
    if local:
        # both peers own the VRR MAC: each holds it as a local entry of its bridge, as an MLAG
        # pair installs it, so that a reply from the peer's VRR (the peer link) is not learnt
        # there and the frames to it are not sent back and forth between the two bridges
        lab.run(
            "bridge",
            "-n",
            ns,
            "-batch",
            "-",
            stdin="".join(f"fdb add {mac} dev {BRIDGE} self local\n" for mac in sorted(set(local))),
        )
    return [port for port in ports if port in cabled]


def wait_forwarding(lab: Lab, namespaces: list[str]) -> None:
    """Waits until no bridged port of `namespaces` is in spanning tree's listening or learning
    state (a port whose carrier came back, as when a host renames its NIC, passes both before
    it forwards: two forward delays), or that time and a second more have passed."""
    end = time.monotonic() + 2 * FORWARD_DELAY / 100 + 1
    pending = list(namespaces)
    while pending and time.monotonic() < end:
        still = []
        for ns in pending:
            result = lab.run("bridge", "-n", ns, "-j", "link", "show", check=False)
            try:
                ports = json.loads(result.stdout or "[]")
            except json.JSONDecodeError:
                continue
            if any(port.get("state") in ("listening", "learning") for port in ports):
                still.append(ns)
        pending = still
        if pending:
            time.sleep(0.2)
