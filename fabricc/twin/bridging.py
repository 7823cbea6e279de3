"""Twin layer 2 of a Cumulus switch: bonds, the MLAG peer link, br_default, SVIs and VRR.

Consumes the merged NVUE `set` tree of one switch (fabricc.twin.nvue.nvue_set) and the names of the
ports cabled into its namespace; produces a Bundles map (which cable ports a bond, the peer link or
a routed subinterface stands on) and, applied in the namespace with `ip`, the devices its routing
runs on: one Linux bridge `br_default` holding every bridged port and the peer link, a macvlan per
SVI (`vlanN`, its address from the rendered frr.conf), one per VRR address (`vlanN-v0` with the VRR
MAC, as Cumulus names it); a routed subinterface of the peer link (`peerlink.4094`) is a veth of
its own between the peers, outside the bridge and its STP. The twin assumes neither the bonding,
802.1Q nor VRF driver (not every kernel has them): a bond is its first cabled member, the other
members stay unbridged (a loop otherwise). Nor 802.1Q filtering in the bridge
(CONFIG_BRIDGE_VLAN_FILTERING): br_default stands for one VLAN, its SVIs' (or the domain's only
one); an access port of another VLAN gets a bridge of its own (`br_vlanN`, that VLAN on this
switch), a trunk that does not carry br_default's VLAN is in no bridge; where the SVIs sit on
several VLANs, every port shares br_default's one domain. MLAG's control plane (clagd) is not run:
both peers bridge the peer link and answer the VRR address, as a synced pair would, each holding
the VRR MAC as a local entry of its bridge.
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
    vlans: list[int] = field(default_factory=list)  # br_default's VLANs
    access: dict[str, int] = field(default_factory=dict)  # bridged port or bond -> access VLAN
    trunk: dict[str, list[int]] = field(default_factory=dict)  # bridged trunk -> its VLANs

    def port_vlans(self, name: str) -> tuple[int | None, list[int]]:
        """(access VLAN, tagged VLANs) of a bridged port or bond: an access port carries its
        VLAN untagged, a trunk (and the peer link) every VLAN of the domain or those it names
        (NVUE: a bridge domain port without `access` is a trunk of the domain's VLANs)."""
        if name in self.access:
            return self.access[name], []
        return None, self.trunk.get(name, self.vlans)

    @property
    def home(self) -> int | None:
        """The VLAN br_default stands for: its SVIs' one VLAN, else the domain's only VLAN; None
        where the domain mixes VLANs the twin cannot keep apart (see the module docstring)."""
        svi = {v for n, e in self.svis.items() if (v := _svi_vlan(n, e)) is not None}
        if len(svi) == 1:
            return svi.pop()
        return self.vlans[0] if not svi and len(self.vlans) == 1 else None

    def elsewhere(self, name: str) -> int | None:
        """The VLAN of a bridged port or bond that does not carry br_default's home VLAN (an
        access port of another VLAN: its own bridge; a trunk without it: 0, in no bridge);
        None for a port of the home VLAN."""
        home = self.home
        if home is None:
            return None
        access, tagged = self.port_vlans(name)
        if access is not None:
            return None if access == home else access
        return None if home in tagged else 0

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


def _vlan_ids(value: object) -> list[int]:
    """VLAN ids of an NVUE vlan map or list ("10", 10, "100-102")."""
    ids: set[int] = set()
    for key in _map(value) if isinstance(value, dict) else value if isinstance(value, list) else []:
        low, _, high = str(key).partition("-")
        if low.isdecimal() and (not high or high.isdecimal()):
            ids.update(range(int(low), int(high or low) + 1))
    return sorted(ids)


def _svi_vlan(name: str, entry: Tree) -> int | None:
    vlan = entry.get("vlan")
    if isinstance(vlan, int):
        return vlan
    digits = name.removeprefix("vlan")
    return int(digits) if digits.isdecimal() else None


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
            port = _map(domain[BRIDGE])
            access = port.get("access")
            if isinstance(access, int):
                result.access[name] = access
            elif "vlan" in port:
                result.trunk[name] = _vlan_ids(port["vlan"])
        if entry.get("type") == "svi":
            result.svis[name] = entry
    domain = _map(_map(_map(tree.get("bridge")).get("domain")).get(BRIDGE))
    result.vlans = _vlan_ids(domain.get("vlan"))
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
    apart: dict[str, int] = {}  # port -> the VLAN it is in, not br_default's (0: none)
    for name in [*found.bridged, *([found.peerlink] if found.peerlink else [])]:
        port = found.carrier(name, cabled) if name in found.bonds else name
        if port is not None and port in cabled and port not in ports:
            ports.append(port)
            vlan = found.elsewhere(name)
            if vlan is not None:
                apart[port] = vlan
    if not ports and not found.svis and not set(found.routed_subinterfaces) - cabled:
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
    commands += [f"link set {port} master {BRIDGE}" for port in ports if port not in apart]
    commands.append(f"link set {BRIDGE} up")
    for vlan in sorted(set(apart.values()) - {0}):
        # an access VLAN br_default does not stand for: its own broadcast domain on this switch
        commands.append(f"link add br_vlan{vlan} type bridge")
        commands += [f"link set {p} master br_vlan{vlan}" for p in ports if apart.get(p) == vlan]
        commands.append(f"link set br_vlan{vlan} up")

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
        if name not in cabled:  # a link of its own between the peers (fabricc.twin.routing)
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
    return [port for port in ports if port in cabled and apart.get(port) != 0]


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
