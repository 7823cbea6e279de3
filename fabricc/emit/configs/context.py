"""Emit helper (configs): what every config builder needs about the whole design, computed once.

Consumes the Fabric IR; produces a ConfigContext: the link index, each switch's network OS, the
OS name of any switch port (so that a description can name the far end as its own switch calls
it), the split of every cage in use, SONiC platform data and the RoCE QoS plan per network.
"""

from __future__ import annotations

from typing import Any

from fabricc.catalog.models import SwitchModel
from fabricc.catalog.ports import is_mgmt_port, split_port
from fabricc.catalog.sonic import SonicSwitch
from fabricc.emit.configs.index import End, LinkIndex
from fabricc.emit.configs.ports import cumulus_name, eos_name
from fabricc.emit.configs.qos import QosPlan, qos_plan
from fabricc.emit.templating import SharedTrees
from fabricc.ir import Device, Fabric
from fabricc.synth.addressing import ROUTED_ROLES
from fabricc.synth.portplan import cage_ways, sonic_switch_of, sonic_switches

MANAGEMENT_ROLES = ("inband", "oob")


class ConfigContext:
    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.devices = fabric.devices
        self.catalog = fabric.loaded.catalog.catalog
        self.index = LinkIndex(fabric)
        self._ways: dict[str, dict[int, int]] = {}
        self._qos: dict[str, QosPlan] = {}
        self._os: dict[str, str] = {}
        self._far: dict[tuple[str, str], str] = {}
        self._routed: dict[str, bool] = {}
        self._sonic: dict[str, SonicSwitch] = {}
        # Config subtrees that many ports repeat, built once and shared (see templating.yaml_block);
        # those that many switches repeat are in `shared` too, spelled once for all of them
        self.subtrees: dict[tuple[object, ...], dict[str, Any]] = {}
        self.shared = SharedTrees()

    # -- what a switch is ------------------------------------------------------------------------

    def switch_model(self, device: Device) -> SwitchModel:
        return self.catalog.switches[device.model]

    def os_of(self, device: Device) -> str:
        """sonic, cumulus, eos or infiniband for switches (none for an Ethernet switch whose model
        names no OS: fabricc writes no config of it, and its ports keep their IR names); host for
        everything else. Asked per link end (port names, descriptions): kept per device."""
        os = self._os.get(device.name)
        if os is None:
            if device.kind != "switch" or device.network is None:
                os = "host"
            else:
                network = self.fabric.loaded.networks[device.network]
                if network.fabric == "infiniband":
                    os = "infiniband"
                elif not self.switch_model(device).runs():
                    os = "none"
                else:
                    os = network.spec.os
            self._os[device.name] = os
        return os

    def role_of(self, device: Device) -> str:
        assert device.network is not None
        return self.fabric.loaded.networks[device.network].spec.role

    def routed(self, device: Device) -> bool:
        return (
            device.kind == "switch"
            and self.os_of(device) in ("sonic", "cumulus", "eos", "none")
            and self.role_of(device) in ROUTED_ROLES
        )

    def routed_switch(self, name: str) -> bool:
        """routed() of the device of this name, kept per name (asked per host NIC)."""
        found = self._routed.get(name)
        if found is None:
            found = self._routed[name] = self.routed(self.devices[name])
        return found

    def ends(self, device: str) -> list[End]:
        """The device's ends of Ethernet links in port order (see LinkIndex)."""
        return self.index.ends(device)

    # -- ports -----------------------------------------------------------------------------------

    def cage_ways(self, device: Device) -> dict[int, int]:
        """Cage -> ports it is split into, for every cage with a link (the port plan)."""
        ways = self._ways.get(device.name)
        if ways is None:
            links = ((end.port, end.link.speed) for end in self.ends(device.name))
            ways = self._ways[device.name] = cage_ways(self.switch_model(device), links)
        return ways

    def sonic(self, device: Device) -> SonicSwitch:
        """The switch's SONiC platform, SKU (chosen by its port plan) and ports, kept per switch;
        a model or port plan SONiC cannot run is an error at the network's os. The routed
        switches' are the design check's (fabricc/synth/portplan.py), computed once per build."""
        found = self._sonic.get(device.name)
        if found is None:
            found = sonic_switches(self.fabric).get(device.name)
            if found is None:
                found = sonic_switch_of(self.fabric, device, self.cage_ways(device))
            self._sonic[device.name] = found
        return found

    def port_name(self, device_name: str, port: str) -> str:
        """The port as the device's own OS names it (IR name for hosts and InfiniBand)."""
        os = self._os.get(device_name)
        if os is None:
            os = self.os_of(self.devices[device_name])
        if os == "host":
            return port
        if os == "cumulus":
            return cumulus_name(port)
        device = self.devices[device_name]
        if os == "sonic":
            model = self.switch_model(device)
            if is_mgmt_port(model, port):
                return port
            cage, sub = split_port(port)
            return self.sonic(device).by_cage[(cage, sub or 1)].name
        if os == "eos":
            model = self.switch_model(device)
            if is_mgmt_port(model, port):
                return port
            cage, _ = split_port(port)
            return eos_name(model, port, self.cage_ways(device).get(cage, 1))
        return port

    def far_end(self, end: End) -> str:
        """A port description: the device and port at the other end of the cable. Kept per far
        port: a switch's NVUE tree and frr.conf (and the host on the other side) each ask."""
        key = (end.far, end.far_port)
        text = self._far.get(key)
        if text is None:
            text = self._far[key] = f"{end.far}:{self.port_name(end.far, end.far_port)}"
        return text

    # -- per network -----------------------------------------------------------------------------

    def qos(self, network: str) -> QosPlan:
        plan = self._qos.get(network)
        if plan is None:
            plan = self._qos[network] = qos_plan(self.fabric, network)
        return plan
