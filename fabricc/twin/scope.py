"""Twin scope: why a network was not booted, and whether that is a failure.

Consumes the build folder and the name of a network whose routing stage booted no router;
produces its entry in report.json: out of scope with a named reason when the network has no
routing to boot (no Ethernet switch config: InfiniBand or unmanaged; switches that only bridge,
whose access side the management-plane stage boots), otherwise a failure naming every switch
whose routing configuration the twin could not boot. A network is never silently skipped.
"""

from __future__ import annotations

from fabricc.twin.folder import BuildFolder
from fabricc.twin.names import os_of
from fabricc.twin.nvue import nvue_set

Entry = dict[str, object]


def _routes(folder: BuildFolder, switch: str) -> bool:
    """The switch's config asks for routing (BGP or static routes)."""
    if folder.has(f"configs/{switch}/frr.conf"):
        return True
    if os_of(folder, switch) == "cumulus":
        tree = nvue_set(folder, switch)
        return "router" in tree or "router" in str(tree.get("vrf", ""))
    return False


def not_booted(folder: BuildFolder, network: str) -> Entry:
    switches = sorted(
        {
            device
            for row in folder.cables
            if row["network"] == network
            for device in (row["a_device"], row["b_device"])
            if os_of(folder, device) != "linux"
        }
    )
    if not switches:
        return {
            "booted": False,
            "out_of_scope": "no Ethernet switch config (InfiniBand or unmanaged switches): "
            "not part of the routing stage",
        }
    routed = [s for s in switches if _routes(folder, s)]
    if not routed:
        return {
            "booted": False,
            "out_of_scope": "layer 2 only: none of its switches routes; its access switches "
            "boot in the management-plane stage",
        }
    return {
        "booted": False,
        "failures": [
            {"switch": s, "problem": "routing configured but not bootable by the twin"}
            for s in routed
        ],
    }
