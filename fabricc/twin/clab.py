"""Twin export: one containerlab topology per Ethernet network, for vendor images (Cumulus VX,
SONiC-VS, cEOS) where the namespaces of the twin run the open daemons.

Consumes the build folder (cabling plan, which OS each switch's config is for, config_db PORT
tables); produces OUT/twin/<network>.clab.yml: a node per device the network cables (kind
`nvidia_cumulusvx` for a switch with a startup.yaml, `sonic-vs` for one with a config_db.json,
`arista_ceos` for one with an EOS startup-config, `linux` for the rest), the generated files
given to it by paths relative to the topology file, and a link per cable with the interface
names each image uses. Kinds, keys and patterns follow
containerlab's JSON schema (schemas/clab.schema.json, github.com/srl-labs/containerlab).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import yaml

from fabricc.errors import Location, SpecError, error
from fabricc.twin import eos
from fabricc.twin.folder import BuildFolder
from fabricc.twin.lab import IFNAMSIZ
from fabricc.twin.names import MGMT_PORTS, Namer, os_of

# containerlab kind names (schema definitions/node-config/properties/kind/enum): the container
# `cvx` kind is unmaintained and absent from the schema; nvidia_cumulusvx boots the VX image
KINDS = {
    "cumulus": "nvidia_cumulusvx",
    "sonic": "sonic-vs",
    "eos": "arista_ceos",
    "linux": "linux",
}
# cEOS reads its data ports as `et<cage>_<lane>` (Ethernet<cage>/<lane>, the twin's own names)
# when INTFTYPE is `et` (containerlab ceos kind doc, "Additional interface naming considerations")
CEOS_ENV = {"INTFTYPE": "et"}
SONIC_FILES = (  # what SONiC reads at boot (split-unified: frr.conf as written)
    ("config_db.json", "/etc/sonic/config_db.json"),
    ("frr.conf", "/etc/sonic/frr/frr.conf"),
)
_NODE_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9-._|]*")  # schema topology/nodes patternProperties
HEADER = """\
# containerlab topology of network {network} ({design}), written by `fabricc twin`.
# Boot it with: containerlab deploy -t {file}
# Images are yours: add `image:` per kind under topology.kinds (nvidia_cumulusvx, sonic-vs,
# arista_ceos, linux). containerlab puts every node's eth0 on its own management network, so
# cables to a management port are left out here: {left_out} of them.
"""


def _sonic_ports(namer: Namer, folder: BuildFolder, device: str) -> dict[str, str]:
    """SONiC port -> the sonic-vs container's interface: eth1 is the first front-panel port in
    lane order, eth2 the next (containerlab sonic-vs doc, "Interfaces mapping")."""
    db = folder.json(f"configs/{device}/config_db.json")
    ports = db.get("PORT", {}) if isinstance(db, dict) else {}

    def first_lane(item: tuple[str, object]) -> tuple[int, str]:
        entry = item[1]
        lanes = str(entry.get("lanes", "")) if isinstance(entry, dict) else ""
        head = lanes.split(",")[0].strip()
        return (int(head) if head.isdigit() else 1 << 30, item[0])

    ordered = sorted(ports.items(), key=first_lane)
    return {name: f"eth{index}" for index, (name, _) in enumerate(ordered, 1)}


def _node(folder: BuildFolder, device: str, relative: str) -> dict[str, object]:
    kind = os_of(folder, device)
    node: dict[str, object] = {"kind": KINDS[kind]}
    role = folder.devices.get(device, {}).get("role", "")
    if role:
        node["group"] = role
    if kind == "cumulus":
        node["startup-config"] = f"{relative}/configs/{device}/startup.yaml"
    elif kind == "eos" and folder.has(f"configs/{device}/{eos.STARTUP}"):
        node["startup-config"] = f"{relative}/configs/{device}/{eos.STARTUP}"
        node["env"] = dict(CEOS_ENV)
    elif kind == "sonic":
        node["binds"] = [
            f"{relative}/configs/{device}/{name}:{target}:ro"
            for name, target in SONIC_FILES
            if folder.has(f"configs/{device}/{name}")
        ]
    return node


def topology(folder: BuildFolder, namer: Namer, network: str, design: str) -> tuple[str, int]:
    """The topology file's text and the number of management-port cables left out."""
    rows = sorted(
        (r for r in folder.cables if r.get("network") == network), key=lambda r: r["cable_id"]
    )
    relative = ".."  # OUT/twin/<network>.clab.yml -> OUT
    devices = sorted({r[end] for r in rows for end in ("a_device", "b_device")})
    bad = [d for d in devices if not _NODE_NAME.fullmatch(d)]
    if bad:
        where = Location(folder.path("cabling/cables.csv").as_posix(), 1, 1)
        raise SpecError(
            [
                error(
                    f"device names containerlab does not accept: {', '.join(bad)}",
                    location=where,
                    hint="containerlab node names match [a-zA-Z0-9][a-zA-Z0-9-._|]*",
                )
            ]
        )
    sonic = {d: _sonic_ports(namer, folder, d) for d in devices if os_of(folder, d) == "sonic"}

    def end(device: str, port: str) -> str | None:
        if port in MGMT_PORTS:
            return None
        name = namer.interface(device, port)
        if device not in sonic and os_of(folder, device) == "linux":
            # a server's port as the plan names it ("OSFP4/P2" -> "OSFP4-P2"): linux nodes take
            # any interface name, and this one reads back to the cabling plan
            plain = re.sub(r"[^A-Za-z0-9_.-]", "-", port)
            name = plain if len(plain) < IFNAMSIZ else name
        if name == "eth0":
            return None
        if device in sonic:
            name = sonic[device].get(name, name)
        return f"{device}:{name}"

    links: list[dict[str, object]] = []
    left_out = 0
    for row in rows:
        a, b = end(row["a_device"], row["a_port"]), end(row["b_device"], row["b_port"])
        if a is None or b is None:
            left_out += 1
            continue
        links.append({"endpoints": [a, b]})
    document = {
        "name": re.sub(r"[^a-zA-Z0-9-]+", "-", f"{design}-{network}").strip("-"),
        "topology": {
            "nodes": {d: _node(folder, d, relative) for d in devices},
            "links": links,
        },
    }
    file = f"{network}.clab.yml"
    header = HEADER.format(network=network, design=design, file=file, left_out=left_out)
    body = yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=100)
    return header + body, left_out


def write(out: Path, folder: BuildFolder, networks: list[str], design: str) -> list[Path]:
    """OUT/twin/<network>.clab.yml per Ethernet network, each written atomically."""
    target = out / "twin"
    target.mkdir(exist_ok=True)
    namer = Namer(folder)
    written: list[Path] = []
    for network in networks:
        text, _ = topology(folder, namer, network, design)
        path = target / f"{network}.clab.yml"
        fd, temporary = tempfile.mkstemp(dir=target, prefix=".clab-")
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        Path(temporary).chmod(0o644)
        Path(temporary).replace(path)
        written.append(path)
    return written
