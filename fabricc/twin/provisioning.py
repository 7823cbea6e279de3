"""Twin stage: the management plane from factory default - DHCP through the relays, then ZTP.

Consumes the build folder (seeds.txt, the mgmt cables of cabling/cables.csv, the access
switches' startup.yaml, provisioning/kea/kea-dhcp4.conf and the provisioning tree) and a Lab.
The provisioning server's namespace runs the real kea-dhcp4 on the generated config (only its
listening interfaces, lease file and log are changed) and serves the build folder over HTTP as
/fabricc/. Seeds come up from what seeds.txt puts on their USB drive, switches without an OS
from what its by-hand lines tell their operator (twin/byhand.py); each configured access
switch gets Linux's bridge, its access VLANs and SVIs, and isc-dhcp-relay exactly where its
startup.yaml enables the relay (circuit-id = the port, as use-pif-circuit-id does). Every other
switch starts with an unconfigured eth0, runs dhclient, and fetches its ZTP file and every file
that file names, each compared byte for byte with the build's; among them must be the files its
OS boots from (BOOT_FILES: an EOS boot script must install its startup-config). Switches so
provisioned that are access switches themselves serve the next round. Produces provisioned by
USB / by hand / DHCP / not at all, and a failure per switch not provisioned, with the reason.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from fabricc.twin.byhand import MARK, by_hand
from fabricc.twin.folder import BuildFolder
from fabricc.twin.lab import Lab, inside
from fabricc.twin.names import Namer, os_of
from fabricc.twin.nvue import SwitchConfig, switch_config

SEEDS = "provisioning/ztp/seeds.txt"
KEA = "provisioning/kea/kea-dhcp4.conf"
_SERVER = re.compile(r"Provisioning server[^:]*:\s*(\d+\.\d+\.\d+\.\d+)")
_URL = re.compile(r"http://[0-9.]+(?::\d+)?/fabricc/[A-Za-z0-9_./-]+")
# the relay-to-server path is not booted (docs/twin.md): a stand-in router joins them on
# addresses of the benchmarking range (RFC 2544), which no design uses for management
TRANSIT = ipaddress.ip_network("198.18.0.0/15")
CORE = str(TRANSIT.broadcast_address - 1)  # the stand-in router's address towards the server
DHCP_WAIT = 20.0
# the files a switch boots from, per OS: its ZTP must install each the build writes for it (Cumulus
# applies startup.yaml; SONiC loads config_db.json and, split-unified, reads frr.conf as written;
# EOS boots /mnt/flash/startup-config, which its option-67 boot script writes)
BOOT_FILES = {
    "cumulus": ("startup.yaml",),
    "sonic": ("config_db.json", "frr.conf"),
    "eos": ("startup-config",),
}
FETCHERS = 8  # ZTP clients fetching at once
Failure = dict[str, object]


@dataclass(slots=True)
class Client:
    name: str
    access: str  # access switch its eth0 is cabled to
    port: str  # the access switch's interface
    ns: str = ""
    address: str = ""


@dataclass(slots=True)
class Plane:
    server: str = ""
    server_ns: str = ""
    core_ns: str = ""
    kea_interfaces: list[str] = field(default_factory=list)
    access_ns: dict[str, str] = field(default_factory=dict)
    links: int = 0


def seeds(folder: BuildFolder) -> tuple[list[str], str]:
    """The seed switches in order, and the provisioning server's address."""
    if not folder.has(SEEDS):
        return [], ""
    names: list[str] = []
    server = ""
    for line in folder.text(SEEDS).splitlines():
        found = _SERVER.search(line)
        if found:
            server = found.group(1)
        fields = line.split("\t")
        if line.strip() and not line.startswith("#") and fields[1:2] != [MARK]:
            names.append(line.split()[0])
    return names, server


def _mgmt_cables(folder: BuildFolder, namer: Namer) -> dict[str, tuple[str, str]]:
    """Switch -> (access switch, access switch interface) of the switch's management port."""
    found: dict[str, tuple[str, str]] = {}
    for row in folder.cables:
        if (
            row["kind"] == "mgmt"
            and folder.devices.get(row["a_device"], {}).get("kind") == "switch"
        ):
            access = row["b_device"]
            found.setdefault(row["a_device"], (access, namer.interface(access, row["b_port"])))
    return found


def _apply_access(lab: Lab, ns: str, config: SwitchConfig) -> None:
    """Access VLANs and SVIs of a Cumulus access switch, one Linux bridge per VLAN named like
    its SVI (vlanN, holding the SVI's addresses): the traditional-bridge form of a VLAN-aware
    bridge's access ports, which needs neither VLAN filtering nor the 8021q driver."""
    for vlan in sorted(set(config.access_vlan.values()) | set(config.svi)):
        svi = f"vlan{vlan}"
        lab.run("ip", "-n", ns, "link", "add", svi, "type", "bridge")
        for address in config.svi.get(vlan, []):
            lab.run("ip", "-n", ns, "addr", "add", address, "dev", svi)
        lab.run("ip", "-n", ns, "link", "set", svi, "up")


def _attach(lab: Lab, ns: str, config: SwitchConfig, port: str) -> None:
    """A cabled port joins the bridge of its configured access VLAN."""
    vlan = config.access_vlan.get(port)
    if vlan is not None:
        lab.run("ip", "-n", ns, "link", "set", port, "master", f"vlan{vlan}")


def _relay_ports(config: SwitchConfig, ports: list[str]) -> dict[str, str]:
    """Port -> the address it relays with (giaddr) as the port gets it: for ports in a relayed
    VLAN the SVI's (a /32 on the port), for a relayed routed port (a management tree's root on
    an in-band switch, synth/rootlinks.py) the port's own /31."""
    relay = config.relay
    if relay is None or not relay.port_circuit_id:
        return {}
    relayed: dict[str, str] = {}
    for port in ports:
        vlan = config.access_vlan.get(port)
        if vlan is not None and f"vlan{vlan}" in relay.downstream and config.svi.get(vlan):
            relayed[port] = config.svi[vlan][0].split("/")[0] + "/32"
        elif vlan is None and port in relay.downstream and config.addresses.get(port):
            relayed[port] = config.addresses[port][0]
    return relayed


def _start_server(lab: Lab, folder: BuildFolder, plane: Plane) -> None:
    plane.server_ns = lab.namespace()
    plane.core_ns = lab.namespace()
    lab.cable(plane.server_ns, "srv0", plane.core_ns, "core0")
    lab.run("ip", "-n", plane.server_ns, "addr", "add", f"{plane.server}/32", "dev", "srv0")
    lab.run("ip", "-n", plane.core_ns, "addr", "add", f"{CORE}/32", "dev", "core0")
    lab.run("ip", "-n", plane.core_ns, "route", "add", f"{plane.server}/32", "dev", "core0")
    www = lab.workdir / "www"
    www.mkdir()
    (www / "fabricc").symlink_to(folder.root.resolve())
    lab.start(
        plane.server_ns,
        "python3",
        "-m",
        "http.server",
        "80",
        "--bind",
        plane.server,
        "--directory",
        str(www),
        log="http.log",
    )
    config = folder.json(KEA)
    assert isinstance(config, dict)
    dhcp4 = config["Dhcp4"]
    dhcp4["interfaces-config"] = {"interfaces": ["srv0"], "dhcp-socket-type": "udp"}
    dhcp4["lease-database"] = {"type": "memfile", "persist": False}
    dhcp4["loggers"] = [
        {
            "name": "kea-dhcp4",
            "severity": "INFO",
            "output_options": [{"output": str(lab.workdir / "kea.log")}],
        }
    ]
    (lab.workdir / "kea.conf").write_text(json.dumps(config))
    env = {**os.environ, "KEA_PIDFILE_DIR": str(lab.workdir), "KEA_LOCKFILE_DIR": str(lab.workdir)}
    lab.start(
        plane.server_ns, "kea-dhcp4", "-c", str(lab.workdir / "kea.conf"), log="kea.out", env=env
    )


def _join_to_server(lab: Lab, plane: Plane, ns: str, config: SwitchConfig) -> None:
    """The stand-in for the routed path from a relay's upstream to the server."""
    relay = config.relay
    assert relay is not None
    k = plane.links
    plane.links += 1
    base = TRANSIT.network_address + 2 * k
    hosts = (base, base + 1)
    core_if, up_if = f"r{k}", (relay.upstream[0] if relay.upstream else "up0")
    lab.cable(plane.core_ns, core_if, ns, up_if)
    lab.run("ip", "-n", plane.core_ns, "addr", "add", f"{hosts[0]}/31", "dev", core_if)
    lab.run("ip", "-n", ns, "addr", "add", f"{hosts[1]}/31", "dev", up_if)
    lab.run("ip", "-n", ns, "route", "add", f"{plane.server}/32", "via", str(hosts[0]))
    routed = [config.addresses.get(port, []) for port in relay.downstream]
    for addresses in [*config.svi.values(), *routed]:
        for address in addresses:
            subnet = ipaddress.ip_interface(address).network
            lab.run(
                "ip", "-n", plane.core_ns, "route", "replace", str(subnet), "via", str(hosts[1])
            )
            lab.run(
                "ip",
                "-n",
                plane.server_ns,
                "route",
                "replace",
                str(subnet),
                "via",
                CORE,
                "dev",
                "srv0",
                "onlink",
            )


def _lease(path: Path) -> dict[str, str]:
    text = path.read_text() if path.is_file() else ""
    if "lease {" not in text:
        return {}
    values: dict[str, str] = {}
    for line in text[text.rindex("lease {") :].splitlines():
        words = line.strip().rstrip(";").split(None, 2)
        if len(words) >= 2 and words[0] in ("fixed-address", "filename"):
            values[words[0]] = words[1].strip('"')
        elif len(words) == 3 and words[0] == "option":
            values[words[1]] = words[2].strip('"')
    return values


def _fetch(lab: Lab, ns: str, urls: list[str]) -> dict[str, bytes | None]:
    """Fetches the URLs from inside `ns`, one process for all (a switch's ZTP client fetches
    from its own management port); url -> its bytes, None where the fetch failed."""
    code = (
        "import base64,json,sys,urllib.request\n"
        "out={}\n"
        "for url in sys.argv[1:]:\n"
        " try:out[url]=base64.b64encode(urllib.request.urlopen(url,timeout=5).read()).decode()\n"
        " except Exception:out[url]=None\n"
        "print(json.dumps(out))"
    )
    try:
        result = subprocess.run(
            [*inside(ns), "python3", "-c", code, *urls],
            capture_output=True,
            timeout=min(15 + 5 * len(urls), lab.remaining()),
            check=False,
        )
        found = json.loads(result.stdout) if result.returncode == 0 else {}
    except (subprocess.TimeoutExpired, json.JSONDecodeError):
        found = {}
    return {
        url: base64.b64decode(found[url]) if isinstance(found.get(url), str) else None
        for url in urls
    }


def _wanted(folder: BuildFolder, url: str) -> list[str]:
    """The URL and every URL the build's files it leads to name (what a ZTP run fetches when
    each file is the build's; a file that differs is named, its own links need no fetch)."""
    found: list[str] = []
    pending = [url]
    while pending:
        current = pending.pop(0)
        if current in found:
            continue
        found.append(current)
        relative = current.split("/fabricc/", 1)[1]
        if folder.has(relative):
            pending.extend(_URL.findall(folder.data(relative).decode("utf-8", errors="replace")))
    return found


def boot_files(folder: BuildFolder, switch: str) -> list[str]:
    """The build's files the switch boots from (BOOT_FILES of its OS that the build wrote)."""
    names = BOOT_FILES.get(os_of(folder, switch), ())
    return [f"configs/{switch}/{n}" for n in names if folder.has(f"configs/{switch}/{n}")]


def _ztp(
    lab: Lab,
    folder: BuildFolder,
    client: Client,
    url: str,
    operator: set[str],
    fetched: set[str],
) -> list[str]:
    """Fetch the ZTP file and every file it names (a Cumulus ztp.sh, a SONiC ztp.json and its
    plugins, an EOS boot script: each names its files by URL); problems (empty when all are the
    build's). `fetched` collects the build's files so fetched."""
    wanted = _wanted(folder, url)
    got_all = _fetch(lab, client.ns, [u for u in wanted if folder.has(u.split("/fabricc/", 1)[1])])
    problems: list[str] = []
    pending, seen = [url], set()
    while pending:
        current = pending.pop(0)
        if current in seen:
            continue
        seen.add(current)
        relative = current.split("/fabricc/", 1)[1]
        if not folder.has(relative):
            # a file the operator supplies (the password hash): served by them, not checked
            operator.add(relative)
            continue
        got = got_all.get(current)
        if got is None:
            problems.append(f"cannot fetch {current}")
            continue
        if got != folder.data(relative):
            problems.append(f"{current} differs from the build's {relative}")
            continue
        fetched.add(relative)
        pending.extend(_URL.findall(got.decode("utf-8", errors="replace")))
    return problems


def provision(lab: Lab, folder: BuildFolder, namer: Namer) -> dict[str, object]:
    seed_list, server = seeds(folder)
    cables = _mgmt_cables(folder, namer)
    ztp_switches = sorted(
        name
        for name, row in folder.devices.items()
        if row.get("kind") == "switch" and (folder.root / "provisioning/ztp" / name).is_dir()
    )
    by_usb: list[str] = []
    failures: list[Failure] = []
    for seed in seed_list:
        needs = [f"provisioning/ztp/{seed}/ztp.sh", f"configs/{seed}/startup.yaml"]
        lost = [path for path in needs if not folder.has(path)]
        if lost:
            failures.append({"device": seed, "problem": f"USB seed lacks {', '.join(lost)}"})
        else:
            by_usb.append(seed)
    hands = by_hand(folder, namer)
    by_hand_ok: list[str] = []
    bad_hands: list[str] = []
    for name, hand in sorted(hands.items()):
        problems = list(hand.problems)
        want = folder.devices.get(name, {}).get("mgmt_ip", "")
        if want and hand.address != want:
            problems.append(
                f"by-hand management address {hand.address or 'none'}, the inventory plans {want}"
            )
        failures.extend({"device": name, "problem": p} for p in problems)
        (bad_hands if problems else by_hand_ok).append(name)
    result: dict[str, object] = {"by_usb": by_usb, "by_hand": by_hand_ok, "server": server}
    if not server or not folder.has(KEA):
        failures.append(
            {"device": "", "problem": "no provisioning server or Kea config in the build"}
        )
        result.update(
            by_dhcp=[], not_provisioned=sorted([*ztp_switches, *bad_hands]), failures=failures
        )
        return result
    plane = Plane(server)
    _start_server(lab, folder, plane)
    configured = set(by_usb) | set(by_hand_ok)
    by_dhcp: list[str] = []
    pending = [name for name in ztp_switches if name not in configured]
    reasons: dict[str, str] = {}
    active: set[str] = set()
    operator: set[str] = set()  # files the operator supplies (password hash): not checked
    time.sleep(1.0)  # kea and the HTTP server open their sockets
    # rounds until one brings no switch up: a management tree's levels, and a tree's root on an
    # in-band switch that itself came up by DHCP one round before (synth/rootlinks.py)
    while True:
        ready = sorted(
            a for a in configured if a not in active and a in {c[0] for c in cables.values()}
        )
        clients: list[Client] = []
        relays: list[tuple[str, SwitchConfig, dict[str, str]]] = []
        for access in ready:
            active.add(access)
            config = hands[access].config if access in hands else switch_config(folder, access)
            if config is None or config.os not in ("cumulus", "byhand"):
                continue
            ns = lab.namespace()
            plane.access_ns[access] = ns
            _apply_access(lab, ns, config)
            ports = []
            for name in pending:
                where = cables.get(name)
                if where is None or where[0] != access:
                    continue
                client = Client(name, access, where[1], lab.namespace())
                lab.cable(client.ns, "eth0", ns, client.port)
                _attach(lab, ns, config, client.port)
                ports.append(client.port)
                clients.append(client)
            relayed = _relay_ports(config, ports)
            if config.relay is not None and relayed:
                _join_to_server(lab, plane, ns, config)
                relays.append((ns, config, relayed))
            for client in clients:
                if client.access != access:
                    continue
                if config.relay is None:
                    reasons[client.name] = f"{access} runs no DHCP relay"
                elif client.port not in relayed:
                    vlan = config.access_vlan.get(client.port)
                    reasons[client.name] = (
                        f"{access}:{client.port} (VLAN {vlan}) is not in a VLAN its relay serves"
                    )
        for ns, config, relayed in relays:
            for port, giaddr in relayed.items():
                lab.run("ip", "-n", ns, "addr", "add", giaddr, "dev", port)
            assert config.relay is not None
            upstream = config.relay.upstream[:1] or ["up0"]
            args = ["dhcrelay", "-d", "-4", "-a", "-pf", str(lab.workdir / f"relay-{ns}.pid")]
            for port in sorted(relayed):
                args += ["-id", port]
            args += ["-iu", upstream[0], *config.relay.servers]
            lab.start(ns, *args, log=f"relay-{ns}.log")
        if not clients:
            break
        time.sleep(0.5)
        done = _dhcp(lab, folder, clients, reasons, failures, operator)
        if not done:
            break
        by_dhcp.extend(done)
        configured.update(done)
        pending = [name for name in pending if name not in done]
    for name in pending:
        where = cables.get(name)
        reason = reasons.get(name) or (
            f"its management port is cabled to {where[0]}, which is not provisioned"
            if where
            else "no management cable in the cabling plan"
        )
        failures.append({"device": name, "problem": f"not provisioned: {reason}"})
    result.update(
        by_dhcp=sorted(by_dhcp), not_provisioned=sorted([*pending, *bad_hands]), failures=failures
    )
    result["operator_files"] = sorted(operator)
    return result


def _dhcp(
    lab: Lab,
    folder: BuildFolder,
    clients: list[Client],
    reasons: dict[str, str],
    failures: list[Failure],
    operator: set[str],
) -> list[str]:
    """dhclient on every client at once; the ones that got their address and files."""
    conf = lab.workdir / "dhclient.conf"
    conf.write_text(
        "option ztp-url code 239 = text;\ntimeout 15;\nretry 1;\n"
        # the twin's client timing: resend a DISCOVER lost while the relays start after 1-2 s,
        # not dhclient's 10 s (dhclient.conf(5): initial-interval, backoff-cutoff)
        "initial-interval 1;\nbackoff-cutoff 2;\n"
        "request subnet-mask, routers, host-name, bootfile-name, ztp-url;\n"
    )
    processes = []
    for client in clients:
        lease = lab.workdir / f"{client.name}.lease"
        processes.append(
            subprocess.Popen(
                [
                    *inside(client.ns),
                    "dhclient",
                    "-1",
                    "-cf",
                    str(conf),
                    "-lf",
                    str(lease),
                    "-pf",
                    str(lab.workdir / f"{client.name}.dhclient.pid"),
                    "-sf",
                    "/bin/true",
                    "eth0",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
    for process in processes:
        try:
            process.wait(timeout=max(1.0, min(DHCP_WAIT + 5, lab.remaining())))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    fetching: list[tuple[Client, str]] = []
    for client in clients:
        got = _lease(lab.workdir / f"{client.name}.lease")
        if "fixed-address" not in got:
            reasons.setdefault(client.name, f"no DHCP answer through {client.access}:{client.port}")
            continue
        address = got["fixed-address"]
        want = folder.devices.get(client.name, {}).get("mgmt_ip", "")
        if want and address != want:
            failures.append(
                {
                    "device": client.name,
                    "problem": f"DHCP gave {address}, the inventory plans {want}",
                }
            )
        mask = got.get("subnet-mask", "255.255.255.255")
        prefix = ipaddress.ip_network(f"0.0.0.0/{mask}").prefixlen
        lab.run("ip", "-n", client.ns, "addr", "add", f"{address}/{prefix}", "dev", "eth0")
        if "routers" in got:
            lab.run(
                "ip",
                "-n",
                client.ns,
                "route",
                "add",
                "default",
                "via",
                got["routers"].split(",")[0],
            )
        url = got.get("ztp-url") or got.get("bootfile-name") or got.get("filename", "")
        if not url:
            reasons[client.name] = "the DHCP answer has no ZTP URL (option 239 or boot file name)"
            continue
        fetching.append((client, url))

    def run_ztp(job: tuple[Client, str]) -> list[str]:
        client, url = job
        fetched: set[str] = set()
        problems = _ztp(lab, folder, client, url, operator, fetched)
        lost = [path for path in boot_files(folder, client.name) if path not in fetched]
        if lost and not problems:
            problems.append(
                f"its ZTP ({url}) installs no {', '.join(lost)}: the switch would boot "
                "without the configuration the twin routes"
            )
        return problems

    # the switches fetch their files at the same time, as they boot (each fetch is a process)
    with ThreadPoolExecutor(FETCHERS) as pool:
        found = list(pool.map(run_ztp, fetching))
    done: list[str] = []
    for (client, _url), problems in zip(fetching, found, strict=True):
        if problems:
            failures.extend({"device": client.name, "problem": p} for p in problems)
            reasons[client.name] = (
                "its ZTP files could not be fetched intact or do not install its configuration"
            )
            continue
        done.append(client.name)
    return done
