"""Twin scope: why a network was not booted, and whether that is a failure.

Consumes the build folder and the name of a network whose routing stage booted no router;
produces its entry in report.json: out of scope with a named reason when the network has no
routing to boot (no Ethernet switch config: InfiniBand or unmanaged; switches that only bridge,
whose access side the management-plane stage boots), otherwise a failure naming every switch
whose routing configuration the twin could not boot. A network is never silently skipped.
"""

from __future__ import annotations

from fabricc.twin import eos, eos_frr
from fabricc.twin.folder import SWITCH_KINDS, BuildFolder
from fabricc.twin.names import os_of
from fabricc.twin.nvue import nvue_set
from fabricc.twin.nvue_frr import render

Entry = dict[str, object]


def _routes(folder: BuildFolder, switch: str) -> bool:
    """The switch runs BGP: an frr.conf, NVUE from which Cumulus renders one, or an EOS config
    with `router bgp` (its startup-config, or only the AVD structured config when the build had
    no pyavd to render the CLI: that one routes, but the twin cannot boot it)."""
    if folder.has(f"configs/{switch}/frr.conf"):
        return True
    if os_of(folder, switch) == "cumulus":
        return render(nvue_set(folder, switch)) is not None
    if os_of(folder, switch) == "eos":
        blocks = eos.startup_config(folder, switch)
        if blocks is not None:
            return eos_frr.render(blocks) is not None
        return "\nrouter_bgp:" in "\n" + folder.text(f"configs/{switch}/{eos.STRUCTURED}")
    return False


def _core(folder: BuildFolder) -> dict[str, str]:
    """Switch -> the network whose switch-to-switch cables it is on (where it boots)."""
    return {
        row[end]: row["network"]
        for row in folder.cables
        if row["kind"] in SWITCH_KINDS
        for end in ("a_device", "b_device")
    }


def not_booted(folder: BuildFolder, network: str) -> Entry:
    rows = [row for row in folder.cables if row["network"] == network]
    if not any(os_of(folder, d) != "linux" for r in rows for d in (r["a_device"], r["b_device"])):
        return {
            "booted": False,
            "out_of_scope": "no Ethernet switch config (InfiniBand or unmanaged switches): "
            "not part of the routing stage",
        }
    core = _core(folder)
    # switches this network cables to other switches (management cables only manage)
    candidates = sorted(
        {
            d
            for r in rows
            if r["kind"] in (*SWITCH_KINDS, "uplink")
            for d in (r["a_device"], r["b_device"])
            if os_of(folder, d) != "linux" and core.get(d, network) == network
        }
    )
    routed = [s for s in candidates if _routes(folder, s)]
    elsewhere = sorted(
        {
            core[far]
            for r in rows
            if r["kind"] == "uplink"
            for me, far in ((r["a_device"], r["b_device"]), (r["b_device"], r["a_device"]))
            if me in routed and far in core and core[far] != network
        }
    )
    if elsewhere:
        routed = [
            s
            for s in routed
            if not any(r["kind"] == "uplink" and s in (r["a_device"], r["b_device"]) for r in rows)
        ]
    if not routed:
        reason = (
            f"its switches route through their uplinks and boot with network {', '.join(elsewhere)}"
            if elsewhere
            else "no switch of it runs BGP (layer 2, or static routes only); its access "
            "switches boot in the management-plane stage"
        )
        return {"booted": False, "out_of_scope": reason}
    return {
        "booted": False,
        "failures": [
            {"switch": s, "problem": "routing configured but not bootable by the twin"}
            for s in routed
        ],
    }
