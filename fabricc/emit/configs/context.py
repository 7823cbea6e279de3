"""Emit helper (configs): what every config builder needs about the whole design, computed once.

Consumes the Fabric IR; produces a ConfigContext: the link index, each switch's network OS, the
OS name of any switch port (so that a description can name the far end as its own switch calls
it), the split of every cage in use, SONiC platform data and the RoCE QoS plan per network.
"""

from __future__ import annotations

from typing import Any

from fabricc.catalog.models import SwitchModel
from fabricc.emit.configs.index import End, LinkIndex
from fabricc.emit.configs.ports import (
    cage_group,
    cumulus_name,
    is_mgmt_port,
    mgmt_port_names,
    split_port,
)
from fabricc.emit.configs.qos import QosPlan, qos_plan
from fabricc.emit.configs.sonic_platform import SonicSwitch, sonic_platforms, sonic_switch
from fabricc.emit.templating import SharedTrees
from fabricc.errors import DesignError, error
from fabricc.ir import Device, Fabric
from fabricc.spec.yamlsource import format_path

ROUTED_ROLES = ("compute", "storage")
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
        """sonic, cumulus or infiniband for switches; host for everything else. Asked per link
        end (port names, descriptions): kept per device."""
        os = self._os.get(device.name)
        if os is None:
            if device.kind != "switch" or device.network is None:
                os = "host"
            else:
                network = self.fabric.loaded.networks[device.network]
                os = "infiniband" if network.fabric == "infiniband" else network.spec.os
            self._os[device.name] = os
        return os

    def role_of(self, device: Device) -> str:
        assert device.network is not None
        return self.fabric.loaded.networks[device.network].spec.role

    def routed(self, device: Device) -> bool:
        return (
            device.kind == "switch"
            and self.os_of(device) in ("sonic", "cumulus")
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
        """Cage -> ports it is split into, for every cage with a link."""
        ways = self._ways.get(device.name)
        if ways is None:
            model = self.switch_model(device)
            mgmt_ports = mgmt_port_names(model)
            ways = {}
            for end in self.ends(device.name):
                if end.port in mgmt_ports:
                    continue
                cage, sub = split_port(end.port)
                split = cage_group(model, cage).cage_speed // end.link.speed if sub else 1
                ways[cage] = max(ways.get(cage, 1), split)
            self._ways[device.name] = ways
        return ways

    def sonic(self, device: Device) -> SonicSwitch:
        """The switch's SONiC platform, SKU (chosen by its port plan) and ports, kept per switch;
        a model or port plan SONiC cannot run is an error at the network's os."""
        found = self._sonic.get(device.name)
        if found is not None:
            return found
        platform = sonic_platforms().get(device.model)
        if platform is None:
            result: SonicSwitch | str = (
                "sonic-buildimage has no platform for this model (device/mellanox/)"
            )
        else:
            sizes = [g.count for g in self.switch_model(device).port_groups]
            result = sonic_switch(platform, sizes, self.cage_ways(device))
        if isinstance(result, str):
            assert device.network is not None
            path = (*self.fabric.loaded.networks[device.network].path, "os")
            where = f" ({platform.platform})" if platform is not None else ""
            raise DesignError(
                [
                    error(
                        f"SONiC cannot run switch model {device.model!r}{where} as "
                        f"{device.name}: {result}",
                        path=format_path(path),
                        location=self.fabric.loaded.source.value(path),
                        hint="use os: cumulus, or a switch model whose SONiC SKU runs the "
                        "port plan (fabricc/emit/configs/data/sonic.yaml)",
                    )
                ]
            )
        self._sonic[device.name] = result
        return result

    def port_name(self, device_name: str, port: str) -> str:
        """The port as the device's own OS names it (IR name for hosts and InfiniBand)."""
        device = self.devices[device_name]
        os = self._os.get(device_name) or self.os_of(device)
        if os == "cumulus":
            return cumulus_name(port)
        if os == "sonic":
            model = self.switch_model(device)
            if is_mgmt_port(model, port):
                return port
            cage, sub = split_port(port)
            return self.sonic(device).by_cage[(cage, sub or 1)].name
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
