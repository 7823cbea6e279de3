"""Check stage: every multi-node NVLink domain gets its IMEX nodes file, or a warning says why not.

Consumes a Fabric (NVLink domains, the in-band addresses of their trays); produces warnings. The
IMEX daemons of a rack-scale NVLink domain (GB200/GB300 NVL72: 18 compute trays) find each other
at the addresses of their nodes file: "each node's IMEX service is configured with the list of
IP addresses of all compute nodes in the domain" (NVIDIA IMEX Service for NVLink Networks User's
Guide, "Deployment Models"). fabricc writes that file from the trays' in-band addresses
(emit/provisioning/imex.py); a tray without one leaves its domain without a file, and without
IMEX no GPU memory is shared across the trays (NCCL's multi-node NVLink), so the build says so.
"""

from __future__ import annotations

from fabricc.errors import Diagnostic, warning
from fabricc.ir import Fabric
from fabricc.spec.yamlsource import format_path


def check_imex(fabric: Fabric) -> list[Diagnostic]:
    """One warning per node group whose multi-node NVLink domains lack an in-band address."""
    bare: dict[str, list[str]] = {}  # node group -> its domains without a nodes file
    for domain in fabric.nvlink_domains:
        if len(domain.members) < 2:
            continue
        trays = [fabric.devices[m] for m in domain.members]
        if all(tray.inband_ip is not None for tray in trays):
            continue
        group = trays[0].group or ""
        bare.setdefault(group, []).append(domain.name)
    found: list[Diagnostic] = []
    for group, domains in bare.items():
        path = ("nodes", group)
        shown = ", ".join(domains[:4]) + (
            f" and {len(domains) - 4} more" if len(domains) > 4 else ""
        )
        found.append(
            warning(
                f"NVLink domain{'s' if len(domains) > 1 else ''} {shown} of node group {group!r} "
                "get no IMEX nodes file: a compute tray has no in-band address, and the IMEX "
                "daemons of a domain reach each other at those addresses (no IMEX: no GPU memory "
                "shared across the trays, no multi-node NVLink for NCCL)",
                path=format_path(path),
                location=fabric.loaded.source.key(path),
                hint="add an in-band network (role: inband) that the trays join as endpoints, "
                "or write each domain's /etc/nvidia-imex/nodes_config.cfg by hand",
            )
        )
    return found
