"""Emit helper (configs): the NVUE object model of the Cumulus Linux release a network runs.

Consumes networks.<n>.cumulus_release; produces the spellings of the NVUE `set` tree that
Cumulus Linux 5.15 changed (Cumulus Linux 5.15 user guide, "New and Changed NVUE Commands",
Changes to Command Syntax): an object's `enable on|off` became `state enabled|disabled`
(router bgp, vrf router bgp and its address families, qos roce, router adaptive-routing, mlag),
other on/off leaves became enabled/disabled (multipath aspath-ignore, stp admin-edge and
bpdu-guard, bond lacp-bypass), and an interface's `ip address|gateway` became `ipv4 ...` (`ipv6`
for IPv6 prefixes) with `ip vrf` moving up to `vrf`. Releases up to 5.14 keep the old model.
Values NVIDIA did not rename stay as they are (qos pfc tx/rx `enable`, congestion-control `ecn
enable`, interface `qos pfc-watchdog state enable`). One change came a release earlier: 5.14
replaced the DHCP relay's `interface` and `server` lists by server groups (NVUE reference, Set
and Unset Commands, DHCP: `server-group <id> server|upstream-interface` and
`downstream-interface <id> server-group-name`, introduced in 5.14.0; Cumulus Linux 5.14 "DHCP
Relays": "In Cumulus Linux 5.13 and earlier, DHCP relay does not use server groups").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Tree = dict[str, Any]

RENAMED_IN = (5, 15)
SERVER_GROUPS_IN = (5, 14)


def release(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


@dataclass(frozen=True, slots=True)
class Nvue:
    """The object model of one Cumulus Linux release. `legacy`: 5.14 and earlier (`enable
    on`, `ip address`); `relay_server_groups`: 5.14 and later, the DHCP relay is configured as
    server groups. Both read once from the release (asked per interface)."""

    release: str
    legacy: bool = field(init=False, repr=False, compare=False)
    relay_server_groups: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        number = release(self.release)
        object.__setattr__(self, "legacy", number < RENAMED_IN)
        object.__setattr__(self, "relay_server_groups", number >= SERVER_GROUPS_IN)

    @property
    def on(self) -> str:
        """An on/off leaf switched on."""
        return "on" if self.legacy else "enabled"

    @property
    def enabled(self) -> Tree:
        """An object switched on: `enable on` or `state enabled`."""
        return {"enable": "on"} if self.legacy else {"state": "enabled"}

    def addresses(self, prefixes: list[str]) -> Tree:
        """An interface's addresses: `ip address` (5.14), or `ipv4 address` and `ipv6 address`."""
        if self.legacy:
            return {"ip": {"address": {p: {} for p in prefixes}}}
        tree: Tree = {}
        for prefix in prefixes:
            tree.setdefault(self.family(prefix), {"address": {}})["address"][prefix] = {}
        return tree

    def family(self, prefix: str) -> str:
        """The key of an interface's addresses that holds `prefix`: `ip` (5.14), else `ipv4` or
        `ipv6`; addresses(prefixes) of one prefix is {family(prefix): {"address": {prefix: {}}}}.
        The prefixes are fabricc's own (ipaddress wrote them): an IPv6 one has a colon, an IPv4
        one none - parsing each again was a tenth of the configs stage at scale."""
        if self.legacy:
            return "ip"
        return "ipv6" if ":" in prefix else "ipv4"

    def management(self, prefix: str, gateway: str, vrf: str) -> Tree:
        """eth0's address, gateway and VRF."""
        if self.legacy:
            return {"ip": {"address": {prefix: {}}, "gateway": {gateway: {}}, "vrf": vrf}}
        return {"ipv4": {"address": {prefix: {}}, "gateway": {gateway: {}}}, "vrf": vrf}

    def vrr(self, real: str, virtual: str, mac: str) -> Tree:
        """An SVI's own address and its VRR gateway (the same virtual address and MAC on each
        switch of the tier): `ip vrr ... state up` up to 5.14, `ipv4 vrr ... state enabled` from
        5.15 (NVUE reference, Set and Unset Commands, VRR)."""
        if self.legacy:
            return {
                "ip": {
                    "address": {real: {}},
                    "vrr": {"address": {virtual: {}}, "mac-address": mac, "state": {"up": {}}},
                }
            }
        return {
            "ipv4": {
                "address": {real: {}},
                "vrr": {"address": {virtual: {}}, "mac-address": mac, "state": "enabled"},
            }
        }
