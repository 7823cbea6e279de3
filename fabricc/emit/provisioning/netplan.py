"""Emit stage, provisioning: the host side of the in-band network (netplan, DGX OS and Ubuntu).

Consumes the hosts cabled to an in-band network, their in-band addresses, the network's gateway
(synth/mgmtnet.py: the top tier's VRR address, or the host's leaf pair's where the leaves route)
and the RDMA devices of their in-band ports (catalog); produces provisioning/netplan/:
- <host>.yaml of a host dual-homed to an MLAG leaf pair: bond0 over its in-band ports, LACP
  (mode 802.3ad, as the leaves' MLAG bonds run it: lacp-rate fast, Cumulus's bond default;
  ports that run IP over InfiniBand - by the network's fabric or the catalog port's protocols -
  bond active-backup only, the one mode the bonding driver offers for them),
  transmit-hash-policy layer3+4 (flows, not host pairs, spread over both links), MII link
  monitoring, the host's in-band address and the default route through the in-band gateway
  (netplan YAML reference: bonds, routes);
- <host>.yaml of a host on a network that is not dual-homed (its leaves are no MLAG pair and
  bond none of its ports): with several in-band ports in one subnet (one leaf, or leaves the
  network bridges) an active-backup bond, which "does not require any special switch support"
  (Linux kernel documentation, bonding.rst, Bonding Driver Options: mode), else the address and
  default route on its first in-band port;
- <node model>.rules: udev rules naming each in-band port `inband<k>` (in catalog order) by the
  PCI address of its function where the catalog gives one, else by its RDMA device, as
  provisioning/k8s/udev names the rails - so the netplan files name the same interfaces on
  every host of a model. A port with neither in the catalog is listed for the operator to name
  (by MAC address). Each rule follows a comment naming its port (`# <port>`, or
  `# <port>: ...`), which the twin reads to name the cabled ports as udev would.
The MTU is the network's, capped at 9000, the host MTU of NVIDIA's cluster networks (BCM
internalnet); the switches run the network's own (9216) so every host frame fits.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.emit import Artifact
from fabricc.emit.provisioning.k8s import by_rdma_device, rename_rule
from fabricc.ir import ENDPOINT_LEAF, Fabric
from fabricc.synth.inbandleaves import routes_at_leaves
from fabricc.synth.mgmtnet import management_net

BOND = "bond0"
HOST_MTU = 9000
LACP, ACTIVE_BACKUP = "802.3ad", "active-backup"
BOND_PARAMETERS: dict[str, dict[str, object]] = {
    LACP: {
        "mode": LACP,
        "lacp-rate": "fast",
        "transmit-hash-policy": "layer3+4",
        "mii-monitor-interval": 100,
    },
    # the first port carries the traffic while its link is up (netplan: primary)
    ACTIVE_BACKUP: {"mode": ACTIVE_BACKUP, "primary": "inband1", "mii-monitor-interval": 100},
}


@dataclass(frozen=True, slots=True)
class HostPorts:
    ports: list[str]  # in-band ports, catalog order
    mode: str | None  # the bond's mode, None: the first port alone

    @property
    def configured(self) -> list[str]:
        """The ports the netplan file configures (and the udev rules name): a bond's all, else
        the first."""
        return self.ports if self.mode is not None else self.ports[:1]


def inband_hosts(fabric: Fabric) -> dict[str, HostPorts]:
    """Host -> its in-band ports and how they bond: LACP over the MLAG pair of a dual-homed
    network; active-backup where the leaves bond nothing but every port is in the host's subnet
    (one leaf, or a network bridged up to its spines); the first port alone otherwise. Hosts
    without an in-band address are left out."""
    dual = {
        name: network.spec.dual_homed
        for name, network in fabric.loaded.networks.items()
        if network.spec.role == "inband"
    }
    ports: dict[str, list[str]] = {}
    leaves: dict[str, set[str]] = {}
    network_of: dict[str, str] = {}
    for name in dual:  # networks are wired in spec order: the same order as fabric.links
        for link in fabric.links_of(name):
            if link.kind == ENDPOINT_LEAF:
                ports.setdefault(link.a, []).append(link.a_port)
                leaves.setdefault(link.a, set()).add(link.b)
                network_of[link.a] = name
    catalog = fabric.loaded.catalog.catalog
    # node model -> (port -> its catalog position, the position of a port the model lacks)
    ranks: dict[str, tuple[dict[str, int], int]] = {}
    out: dict[str, HostPorts] = {}
    for host, found in ports.items():
        device = fabric.devices[host]
        if device.inband_ip is None:
            continue
        known = ranks.get(device.model)
        if known is None:
            names = [p.name for p in catalog.nodes[device.model].ports]
            known = ranks[device.model] = ({n: names.index(n) for n in names}, len(names))
        rank, last = known
        ordered = sorted(found, key=lambda p: rank.get(p, last))
        network = network_of[host]
        mode: str | None = None
        if len(ordered) >= 2 and ipoib(fabric, network, device.model, ordered):
            mode = ACTIVE_BACKUP  # whatever the leaves run: IPoIB bonds only active-backup
        elif len(ordered) >= 2 and dual[network]:
            mode = LACP
        elif len(ordered) >= 2 and (
            len(leaves[host]) == 1 or not routes_at_leaves(fabric, network)
        ):
            mode = ACTIVE_BACKUP
        out[host] = HostPorts(ordered, mode)
    return out


def ipoib(fabric: Fabric, network: str, model: str, ports: list[str]) -> bool:
    """Whether the host's in-band ports run IP over InfiniBand: by port type - the network's
    fabric, or a catalog port that speaks InfiniBand only - never by a port's name. An IPoIB
    bond is active-backup only (Linux commit 1533e773, "net/bonding: Enforce active-backup
    policy for IPoIB bonds": "only active-backup mode is a valid use case")."""
    if fabric.loaded.networks[network].fabric == "infiniband":
        return True
    specs = fabric.loaded.catalog.catalog.nodes[model].ports
    return any(
        "ethernet" not in spec.protocols
        for port in ports
        for spec in specs
        if port == spec.name or port.startswith(spec.name + "/")
    )


def interface(index: int) -> str:
    return f"inband{index + 1}"


def host_text(fabric: Fabric, host: str, plan: HostPorts) -> str:
    """The host's netplan YAML: a bond over its in-band ports, or its first in-band port alone.
    Written as text: every value is a name, a number or an IPv4 address, plain in YAML (the
    tests read it back); a YAML writer per host cost tens of seconds at 13,000 hosts."""
    net = management_net(fabric)
    device = fabric.devices[host]
    mtu, prefixlen, gateway = HOST_MTU, 16, None
    if net.inband is not None:
        network = fabric.loaded.networks[net.inband.network].spec
        mtu = min(network.mtu, HOST_MTU)
        assert device.inband_ip is not None
        # its leaf group's subnet and gateway where the leaves route, else the spine pair's
        prefixlen, gateway = net.inband.host_gateway(device.inband_ip)
    ports, mode = plan.ports, plan.mode
    names = [interface(k) for k in range(len(plan.configured))]
    if mode is None:
        what = f"in-band port {ports[0]}"
        if len(ports) > 1:
            what += f" ({', '.join(ports[1:])} in other leaves' subnets: not configured)"
    else:
        what = f"the in-band {mode} bond over {', '.join(ports)}"
    lines = [
        f"# netplan of {host} ({fabric.name}), generated by fabricc: {what}.",
        "# Install as /etc/netplan/60-fabricc-inband.yaml (mode 600), then `netplan apply`.",
        "network:",
        "  version: 2",
        "  renderer: networkd",
        "  ethernets:",
    ]
    if mode is None:
        lines += [f"    {names[0]}:", "      dhcp4: false"]
    else:
        for name in names:
            lines += [f"    {name}:", f"      mtu: {mtu}", "      dhcp4: false"]
        lines += ["  bonds:", f"    {BOND}:", "      interfaces:"]
        lines += [f"      - {name}" for name in names]
    lines += [f"      mtu: {mtu}", "      addresses:", f"      - {device.inband_ip}/{prefixlen}"]
    if gateway is not None:
        lines += ["      routes:", "      - to: default", f"        via: {gateway}"]
    if mode is not None:
        lines.append("      parameters:")
        lines += [f"        {key}: {value}" for key, value in BOND_PARAMETERS[mode].items()]
    return "\n".join(lines) + "\n"


def udev_rules(fabric: Fabric, hosts: dict[str, list[str]]) -> list[Artifact]:
    catalog = fabric.loaded.catalog.catalog
    models: dict[str, list[str]] = {}
    for host, ports in hosts.items():
        models.setdefault(fabric.devices[host].model, ports)
    out: list[Artifact] = []
    for model_name, ports in sorted(models.items()):
        model = catalog.nodes[model_name]
        by_name = {p.name: p for p in model.ports}
        lines = [
            f"# In-band interface names of {model_name} ({fabric.name}), generated by fabricc.",
            "# Install as /etc/udev/rules.d/70-fabricc-inband.rules; the netplan files use them.",
        ]
        for k, port in enumerate(ports):
            address = model.port_pci(port)
            if address is not None:  # the function itself: no reliance on probe order
                lines += [f"# {port}", rename_rule(f'KERNELS=="{address}"', interface(k))]
                continue
            rdma = by_name[port].rdma_device if port in by_name else None
            if rdma is None:
                lines.append(
                    f"# {port}: no RDMA device in the catalog - name it {interface(k)} yourself, "
                    f'e.g. SUBSYSTEM=="net", ATTR{{address}}=="<its MAC>", NAME="{interface(k)}"'
                )
                continue
            lines += [f"# {port}", rename_rule(by_rdma_device(rdma), interface(k))]
        out.append((f"provisioning/netplan/{model_name}.rules", "\n".join(lines) + "\n"))
    return out


def emit(fabric: Fabric) -> list[Artifact]:
    hosts = inband_hosts(fabric)
    if not hosts:
        return []
    out: list[Artifact] = [
        (f"provisioning/netplan/{host}.yaml", host_text(fabric, host, plan))
        for host, plan in hosts.items()
    ]
    named = {host: plan.configured for host, plan in hosts.items()}
    return [*udev_rules(fabric, named), *out]
