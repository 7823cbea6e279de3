"""Emit stage, provisioning: zero-touch provisioning files for the Ethernet switches.

Consumes the Ethernet switches of the Fabric IR whose config fabricc writes (SONiC config_db.json,
Cumulus NVUE startup.yaml, EOS startup-config) and that can be handed a ZTP file - those whose management port is
cabled to an OOB access switch (kea.py reserves their address and hands the file's URL out) and
the seeds (synth/mgmtnet.py: bootstrapped from a USB drive) - and the OOB pool; produces
provisioning/ztp/<switch>/ztp.json (SONiC ZTP: load the config_db.json, then install frr.conf
with the plugin provisioning/ztp/<switch>/frr-conf.sh) or
provisioning/ztp/<switch>/ztp.sh (a Cumulus ZTP script: fetch startup.yaml, apply it) or
provisioning/ztp/<switch>/bootstrap (an EOS ZTP boot script: the site's accounts and the
startup-config pyavd rendered to flash; none without pyavd, which renders it). All fetch
from the provisioning server (synth/mgmtnet.py: the first server node on an in-band network, else
the OOB pool's last address; an address a device holds: no ZTP) serving this output folder at
http://<server>/fabricc/; kea.py hands the URLs out. A switch that is no seed and whose
management port no access switch serves (a design without an OOB network) gets none - no DHCP
request of its reaches Kea - and its startup.yaml is applied from a console.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabricc.emit import Artifact
from fabricc.emit.configs import avd
from fabricc.emit.configs.eos_files import STARTUP
from fabricc.emit.configs.ports import cumulus_name
from fabricc.emit.provisioning.byhand import by_hand_lines
from fabricc.emit.tables import json_text
from fabricc.ir import Fabric
from fabricc.synth.mgmtnet import ManagementNet, management_net
from fabricc.synth.rootlinks import root_fallback
from fabricc.synth.switchos import has_config

ROOT = "fabricc"  # where the server publishes this output folder


@dataclass(frozen=True, slots=True)
class SwitchZtp:
    os: str  # sonic | cumulus | eos
    url: str  # what DHCP hands out
    config_url: str  # the switch config the ZTP file fetches
    frr_url: str = ""  # SONiC: the frr.conf its ZTP plugin installs
    plugin_url: str = ""  # SONiC: that plugin (a script beside ztp.json)


@dataclass(slots=True)
class ZtpPlan:
    server: str
    switches: dict[str, SwitchZtp] = field(default_factory=dict)


def server_address(fabric: Fabric) -> str:
    """The provisioning server (synth/mgmtnet.py: the design's first in-band server node)."""
    return management_net(fabric).server


def ztp_plan(fabric: Fabric) -> ZtpPlan:
    def compute() -> ZtpPlan:
        plan = ZtpPlan(server_address(fabric))
        if plan.server in {d.mgmt_ip for d in fabric.devices.values()}:
            return plan  # a full pool leaves no address for the server: no ZTP
        base = f"http://{plan.server}/{ROOT}"
        net = management_net(fabric)
        seeds = set(net.seeds)
        for device in fabric.devices.values():
            if device.kind != "switch" or device.network is None:
                continue
            if (
                device.name not in seeds
                and device.name not in net.root_links
                and (device.name not in net.served_by or device.mgmt_ip is None)
            ):
                continue  # no management cable to an access switch: no DHCP reaches it
            network = fabric.loaded.networks[device.network]
            if network.fabric == "infiniband" or not has_config(fabric, device):
                continue
            os = network.spec.os
            if os == "eos":
                if not avd.available():
                    continue  # no startup-config without pyavd (the build says so)
                plan.switches[device.name] = SwitchZtp(
                    os,
                    f"{base}/provisioning/ztp/{device.name}/{EOS_BOOTSTRAP}",
                    f"{base}/configs/{device.name}/{STARTUP}",
                )
            elif os == "sonic":
                plan.switches[device.name] = SwitchZtp(
                    os,
                    f"{base}/provisioning/ztp/{device.name}/ztp.json",
                    f"{base}/configs/{device.name}/config_db.json",
                    f"{base}/configs/{device.name}/frr.conf",
                    f"{base}/provisioning/ztp/{device.name}/{FRR_PLUGIN}",
                )
            else:
                plan.switches[device.name] = SwitchZtp(
                    os,
                    f"{base}/provisioning/ztp/{device.name}/ztp.sh",
                    f"{base}/configs/{device.name}/startup.yaml",
                )
        return plan

    return fabric.derived("provisioning.ztp", compute)


# the section of ztp.json that installs frr.conf: sections run in lexical order of their names
# (SONiC doc/ztp/ztp.md, "ZTP JSON"), so after configdb-json and its config reload
FRR_SECTION = "frr-conf"
FRR_PLUGIN = "frr-conf.sh"  # its user-defined plugin, beside ztp.json
FRR_CONF = "/etc/sonic/frr/frr.conf"  # what the bgp container reads in split-unified mode


def sonic_ztp(ztp: SwitchZtp) -> str:
    """SONiC ZTP JSON (doc/ztp/ztp.md): the shipped configdb-json plugin loads config_db.json
    (config reload), then a user-defined plugin ("plugin": {"url": ...}, 3.2.1) installs the
    switch's frr.conf where docker_routing_config_mode split-unified reads it and restarts bgp -
    no shipped plugin writes frr.conf, and without it BGP never starts."""
    return json_text(
        {
            "ztp": {
                "configdb-json": {
                    "url": {"source": ztp.config_url, "destination": "/etc/sonic/config_db.json"}
                },
                FRR_SECTION: {
                    "plugin": {
                        "url": {
                            "source": ztp.plugin_url,
                            "destination": f"/var/run/ztp/plugins/{FRR_SECTION}",
                        }
                    }
                },
                "reboot-on-success": False,
            }
        }
    )


def sonic_frr_plugin(switch: str, ztp: SwitchZtp) -> str:
    """The frr-conf plugin of a SONiC switch: fetch its frr.conf, put it in place atomically,
    restart the bgp service (its container reads the file at start). Exit 0 is SUCCESS, any
    other code FAILED (doc/ztp/ztp.md, "Plugin Exit Code")."""
    return (
        "#!/bin/bash\n"
        f"# SONiC ZTP plugin of {switch}, generated by fabricc: install its frr.conf\n"
        f"# ({FRR_CONF}, read by bgp in docker_routing_config_mode split-unified).\n"
        "set -euo pipefail\n"
        f"mkdir -p {FRR_CONF.rsplit('/', 1)[0]}\n"
        f"curl -fsS -o {FRR_CONF}.new '{ztp.frr_url}'\n"
        f"mv {FRR_CONF}.new {FRR_CONF}\n"
        "systemctl restart bgp\n"
    )


EOS_BOOTSTRAP = "bootstrap"  # the script DHCP option 67 names to an EOS switch
# the site's EOS accounts (the operator's, never generated): `username` lines with sha512 secrets,
# beside the boot scripts; the startup-config pyavd renders holds no account
EOS_USERS = "eos-users.cfg"


def eos_bootstrap(switch: str, ztp: SwitchZtp, server_root: str) -> str:
    """An EOS ZTP boot script (Arista EOS User Manual, "Initial Switch Access", Zero Touch
    Provisioning: the switch fetches the startup-config or boot script the DHCP server names in
    option 67, bootfile-name, runs a script, then reboots with what it retrieved): it fetches the
    site's accounts and the switch's startup-config and writes both as flash:startup-config
    (/mnt/flash/startup-config), accounts first. An empty or missing accounts file fails the
    script (ZTP tries again) rather than boot a switch nobody can log in to."""
    return (
        "#!/bin/bash\n"
        f"# EOS ZTP boot script of {switch}, generated by fabricc: install its startup-config\n"
        f"# with the site's accounts ({EOS_USERS} on the provisioning server: EOS `username`\n"
        "# lines with sha512 secrets, yours); ZTP then reboots the switch with it.\n"
        "set -euo pipefail\n"
        f"curl -fsS -o /tmp/{EOS_USERS} '{server_root}/{EOS_USERS}'\n"
        f"grep -q '^username ' /tmp/{EOS_USERS}\n"
        f"curl -fsS -o /tmp/startup-config '{ztp.config_url}'\n"
        f"cat /tmp/{EOS_USERS} /tmp/startup-config > /mnt/flash/startup-config.new\n"
        "mv /mnt/flash/startup-config.new /mnt/flash/startup-config\n"
    )


# where SONiC ZTP reads a ZTP JSON from the local disk (sonic-ztp, src/usr/lib/python3/
# dist-packages/ztp/defaults.py: ztp-json-local)
SONIC_LOCAL_ZTP_JSON = "/host/ztp/ztp_data_local.json"
PASSWORD_FILE = "cumulus-password.hash"  # the operator's: `mkpasswd -m sha-512`, never generated


# where the target release's image is expected (the operator's, never generated): Cumulus Linux
# 5 runs on NVIDIA Spectrum switches only, its image cumulus-linux-<release>-mlx-amd64.bin
IMAGES = "images"


def cumulus_image(release: str) -> str:
    return f"cumulus-linux-{release}-mlx-amd64.bin"


def cumulus_ztp(switch: str, ztp: SwitchZtp, server_root: str, release: str) -> str:
    """A Cumulus ZTP script as the "Zero Touch Provisioning - ZTP" page writes them: the
    CUMULUS-AUTOPROVISIONING marker, all output appended to /var/log/autoprovision, an ERR trap
    that names the failing command, a check of the running release - on another release it
    installs the target one as the page's "Check the Cumulus Linux Release" example does
    (onie-install -fa -i <image> -z <this script>, then reboot; ZTP runs this script again on
    the new release) - the cumulus user's password set from a hash (chpasswd -e; the site's hash
    is fetched from the server, never part of the output), then the switch's startup.yaml
    fetched and applied."""
    server = ztp.url.split("/")[2]
    image = cumulus_image(release)
    return (
        "#!/bin/bash\n"
        "# CUMULUS-AUTOPROVISIONING\n"
        f"# ZTP script of {switch}, generated by fabricc: fetch its NVUE startup.yaml, apply it.\n"
        "# Delivered by DHCP option 239, or - for a seed switch (docs/management.md) - from a\n"
        "# USB drive as cumulus-ztp. On another Cumulus Linux release it installs the target\n"
        f"# release first: {image} from http://{server}/{IMAGES}/ (or\n"
        f"# {ROOT}/{image} on the USB drive), then reboots and runs again.\n"
        "exec >>/var/log/autoprovision 2>&1\n"
        "function error() {\n"
        "  echo \"ERROR: ZTP failed running '$BASH_COMMAND' at line $BASH_LINENO\" >&2\n"
        "  exit 1\n"
        "}\n"
        "trap error ERR\n"
        "set -euo pipefail\n"
        'PATH="$PATH:/usr/cumulus/bin"  # onie-install\n'
        f'date "+%FT%T ztp: {switch} starting"\n'
        f"TARGET_RELEASE={release}\n"
        'RELEASE=$(sed -n "s/^DISTRIB_RELEASE=//p" /etc/lsb-release)\n'
        'case "$RELEASE" in\n'
        '  "$TARGET_RELEASE" | "$TARGET_RELEASE".*) ;;\n'
        "  *)\n"
        '    echo "Cumulus Linux $RELEASE runs, the config is for $TARGET_RELEASE: installing it"\n'
        '    if [ -n "${ZTP_USB_MOUNTPOINT:-}" ]; then\n'
        f'      onie-install -fa -i "$ZTP_USB_MOUNTPOINT/{ROOT}/{image}"\n'
        "    else\n"
        f"      onie-install -fa -i 'http://{server}/{IMAGES}/{image}' -z '{ztp.url}'\n"
        "    fi\n"
        "    reboot\n"
        "    exit 0\n"
        "    ;;\n"
        "esac\n"
        'if [ -n "${ZTP_USB_MOUNTPOINT:-}" ]; then  # ZTP-USB (a seed): the files on the drive\n'
        f'  HASH=$(cat "$ZTP_USB_MOUNTPOINT/{ROOT}/{PASSWORD_FILE}")\n'
        f'  cp "$ZTP_USB_MOUNTPOINT/{ROOT}/{switch}/startup.yaml" /tmp/startup.yaml\n'
        "else  # DHCP option 239: the files on the provisioning server\n"
        f"  HASH=$(curl -fsS '{server_root}/{PASSWORD_FILE}')\n"
        f"  curl -fsS -o /tmp/startup.yaml '{ztp.config_url}'\n"
        "fi\n"
        'echo "cumulus:$HASH" | chpasswd -e\n'
        "nv config replace /tmp/startup.yaml\n"
        "nv config apply --assume-yes\n"
        f'date "+%FT%T ztp: {switch} done"\n'
        "exit 0\n"
    )


def _site_server(fabric: Fabric, net: ManagementNet) -> str:
    """Where the site's provisioning server goes: on the port a management tree's root keeps for
    it (synth/mgmtnet.py), else anywhere routed to the relays. The port as the root's OS names
    it; a root without one (set up by hand) as the cabling plan does."""
    for switch, access in net.subnets.items():
        if access.server_port is not None and access.server_link is not None:
            port = (
                cumulus_name(access.server_port)
                if has_config(fabric, fabric.devices[switch])
                else f"port {access.server_port}"
            )
            return (
                f"/{access.server_link.network.prefixlen} (yours: cable it to {switch}"
                f" {port}, gateway {access.server_link.ip})"
            )
    return " (yours: route it)"


def seeds_text(fabric: Fabric) -> str:
    """The switches to bootstrap first, in order, and why (synth/mgmtnet.py); where an access
    switch has no path to the provisioning server (no uplink, so no relay), it says so and lists
    the switches behind it as booting from USB too."""
    net = management_net(fabric)
    stranded = [s for s, access in net.subnets.items() if not access.relays]
    if not net.subnets:
        dhcp = "# no OOB access switch relays DHCP: apply the other switches' startup.yaml by hand."
    elif len(stranded) == len(net.subnets):
        dhcp = (
            "# No access switch has a path to the provisioning server in this design (no uplink,\n"
            "# so no DHCP relay): no DHCP request reaches Kea and every switch here boots from\n"
            "# USB. Cable and route an uplink per access switch to provision the rest by DHCP."
        )
    else:
        dhcp = "# every other switch then provisions itself by DHCP (option 239) through them." + (
            "\n# Access switches without an uplink relay nothing: the switches behind them boot"
            " from USB." * bool(stranded)
        )
    lines = [
        f"# Seed switches of {fabric.name}, generated by fabricc: bootstrap them first, in this",
        "# order, from a USB drive (Cumulus ZTP-USB) holding this switch's ztp.sh as",
        f"# cumulus-ztp at its root, {ROOT}/{PASSWORD_FILE} and {ROOT}/<switch>/startup.yaml",
        f"# (SONiC: its ztp.json as {SONIC_LOCAL_ZTP_JSON});",
        dhcp,
        f"# Provisioning server (Kea, HTTP for {ROOT}/): {net.server}"
        + (f" on {net.server_device}" if net.server_device else _site_server(fabric, net)),
    ]
    seeded = set(net.seeds)
    partial = net.inband is not None and not all(top in seeded for top in net.inband.real)
    for switch in net.seeds:
        if not has_config(fabric, fabric.devices[switch]):
            continue  # no file to put on a USB drive: listed below, configured by hand
        if switch in net.subnets and switch not in net.served_by:
            subnet = net.subnets[switch].network
            why = (
                "access switch: a root of its network's management tree (its management port"
                " is cabled to no relay: the first of its floor region, or no access switch"
                f" before it has a free port), router and DHCP relay of {subnet}"
                if net.subnets[switch].relays
                else f"access switch: router of {subnet}; no path toward the provisioning"
                " server, so no DHCP relay"
            )
            network = fabric.devices[switch].network
            if network is not None and fabric.loaded.networks[network].spec.uplink_to:
                # why it has no link to the in-band top tier (synth/rootlinks.py)
                why += f"; not provisioned through the in-band top tier: {root_fallback(fabric, network, switch)}"
        elif net.served_by.get(switch) in stranded:
            why = f"no path to the provisioning server: {net.served_by[switch]} has no uplink"
        elif net.inband is not None and switch in net.inband.real and net.inband.spines:
            why = "in-band core: routes between the pods' spines and the relays"
        elif net.inband is not None and switch in net.inband.spines:
            why = f"in-band spine above {net.server_device}'s leaves: routes them to the cores"
        elif net.inband is not None and switch in net.inband.real and net.inband.leaves:
            why = "in-band spine: routes between the leaves' subnets and the relays"
        elif net.inband is not None and switch in net.inband.real:
            why = f"in-band top tier: owns the gateway {net.inband.virtual}, routes to the relays"
        else:
            why = f"in-band leaf of the provisioning server {net.server_device}"
        if partial and net.inband is not None and switch in net.inband.real:
            why += (
                "; the relays' first route to the provisioning server (the rest of its tier"
                " provisions itself by DHCP through the access switches uplinked into it)"
            )
        lines.append(f"{switch}\t{why}")
    for root, link in net.root_links.items():
        lines.append(
            f"# {root} (a management tree's root): by DHCP on {link.address}/31 through"
            f" {link.switch} {cumulus_name(link.port)}, its router and DHCP relay"
        )
    lines.extend(by_hand_lines(fabric, net))
    return "\n".join(lines) + "\n"


def emit(fabric: Fabric) -> list[Artifact]:
    plan = ztp_plan(fabric)
    root = f"http://{plan.server}/{ROOT}/provisioning/ztp"
    out: list[Artifact] = []
    for name, ztp in plan.switches.items():
        if ztp.os == "eos":
            script = eos_bootstrap(name, ztp, root)
            out.append((f"provisioning/ztp/{name}/{EOS_BOOTSTRAP}", script))
        elif ztp.os == "sonic":
            out.append((f"provisioning/ztp/{name}/ztp.json", sonic_ztp(ztp)))
            out.append((f"provisioning/ztp/{name}/{FRR_PLUGIN}", sonic_frr_plugin(name, ztp)))
        else:
            network = fabric.devices[name].network
            assert network is not None
            release = fabric.loaded.networks[network].spec.nvue_release
            out.append((f"provisioning/ztp/{name}/ztp.sh", cumulus_ztp(name, ztp, root, release)))
    if out and management_net(fabric).seeds:
        out.append(("provisioning/ztp/seeds.txt", seeds_text(fabric)))
    return out
