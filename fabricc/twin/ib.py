"""Twin stage: each InfiniBand subnet of the build in ibsim, routed by OpenSM as configured.

Consumes the build folder's subnet-manager folders (configs/<subnet>-sm: ibsim.net, opensm.conf
and the files it names, installed where opensm.conf says, /etc/opensm, rewritten to a scratch
folder), the cabling plan and the inventory; produces per subnet: the subnet manager's verdict
(SUBNET UP with the configured routing engine, not a fallback), the cabling ibnetdiscover finds
compared with the plan (the comparison of `fabricc verify --ibnetdiscover`), and every LID pair
checked against the forwarding tables OpenSM programmed. Where the master subnet manager drill
runs (a standby is designed), the master's first sweep, as a daemon on its node, is the one
checked, and the drill goes on from it. Each simulator runs in a namespace of the Lab, so its
sockets stay inside the twin.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from fabricc.catalog.loader import load_catalog
from fabricc.catalog.models import SwitchModel
from fabricc.emit.configs.ports import ib_port
from fabricc.twin import lft, smdrill
from fabricc.twin.folder import BuildFolder
from fabricc.twin.ibsim import Simulator, SimulatorError, simulator, stop
from fabricc.twin.lab import Lab
from fabricc.verify import ibnetdiscover
from fabricc.verify.compare import compare
from fabricc.verify.model import OK, PlannedCable, Port, SeenLink

SM_DIR = "/etc/opensm/"  # where opensm.conf expects its files (its own comment says so)
SUFFIX = "-sm"
DEBUG = "0x43"  # errors, info, verbose and routing (0x40: OpenSM dumps its LFTs)
_ENGINE = re.compile(r"^routing_engine\s+(\S+)", re.M)
_CONFIGURED = re.compile(r"osm_ucast_mgr_process: (\S+) tables configured on all switches")
_SM_NODE = re.compile(r"^#\s+(\S+): (master|standby), sm_priority (\d+)", re.M)


@dataclass(frozen=True, slots=True)
class Subnet:
    name: str  # network[-plane<n>][-rail<n>], the folder without -sm
    folder: str  # configs/<name>-sm

    def file(self, name: str) -> str:
        return f"{self.folder}/{name}"


def subnets(folder: BuildFolder) -> list[Subnet]:
    """The subnets the build wrote an ibsim topology for (none: the build has no InfiniBand)."""
    configs = folder.path("configs")
    if not configs.is_dir():
        return []
    return [
        Subnet(path.parent.name.removesuffix(SUFFIX), f"configs/{path.parent.name}")
        for path in sorted(configs.glob(f"*{SUFFIX}/ibsim.net"))
    ]


def has_infiniband(root: Path) -> bool:
    """Whether the build folder at `root` has an InfiniBand subnet (its requirements then join
    the twin's); read before the folder is loaded, so a wrong path still reaches the loader."""
    return any((root / "configs").glob(f"*{SUFFIX}/ibsim.net"))


def networks(folder: BuildFolder) -> set[str]:
    """The networks whose cables reach a node of an ibsim topology (InfiniBand networks)."""
    nodes: set[str] = set()
    for subnet in subnets(folder):
        switches, cas = _net_nodes(folder.text(subnet.file("ibsim.net")))
        nodes |= switches | {name.split("/", 1)[0] for name in cas}
    return {
        row.get("network", "")
        for row in folder.cables
        if row["a_device"] in nodes and row["b_device"] in nodes
    }


# -- the plan, read back from the build folder ---------------------------------------------------


def _net_nodes(net: str) -> tuple[set[str], set[str]]:
    """(switch names, CA names) of an ibsim.net; a CA is named <device>/<port>."""
    switches: set[str] = set()
    cas: set[str] = set()
    for line in net.splitlines():
        kind, _, rest = line.partition("\t")
        if kind in ("Switch", "Ca", "Hca") and '"' in rest:
            (switches if kind == "Switch" else cas).add(rest.split('"')[1])
    return switches, cas


@dataclass(slots=True)
class Plan:
    network: str
    cables: list[PlannedCable]
    ca_names: dict[str, Port]  # IB node name -> (device, port)
    switch_ports: dict[tuple[str, int], str]  # (switch, IB port number) -> port of the plan
    problems: list[dict[str, str]]


def _model(folder: BuildFolder, models: dict[str, SwitchModel], switch: str) -> SwitchModel | None:
    row = folder.devices.get(switch)
    return models.get(row.get("model", "")) if row else None


def plan(folder: BuildFolder, net: str, models: dict[str, SwitchModel]) -> Plan:
    switches, cas = _net_nodes(net)
    cables: list[PlannedCable] = []
    networks: set[str] = set()
    ca_names: dict[str, Port] = {}
    switch_ports: dict[tuple[str, int], str] = {}
    problems: list[dict[str, str]] = []
    for row in folder.cables:
        ends: list[Port] = [(row["a_device"], row["a_port"]), (row["b_device"], row["b_port"])]
        inside = [d in switches or f"{d}/{p}" in cas for d, p in ends]
        if not all(inside):
            continue
        networks.add(row.get("network", ""))
        for device, port in ends:
            if device not in switches:
                ca_names[f"{device}/{port}"] = (device, port)
                continue
            model = _model(folder, models, device)
            try:
                if model is None:
                    raise ValueError(f"switch model of {device} not in the catalog")
                number = ib_port(model, port)
            except ValueError as exc:
                problems.append({"device": device, "port": port, "problem": str(exc)})
                continue
            switch_ports[(device, number)] = port
        cables.append(PlannedCable(row["cable_id"], ends[0], ends[1], ""))
    network = "/".join(sorted(networks)) or "?"
    return Plan(network, cables, ca_names, switch_ports, problems)


def _seen(plan: Plan, nodes: dict[int, ibnetdiscover.IbNode]) -> list[SeenLink]:
    def end(guid: int, port: int) -> Port:
        node = nodes.get(guid)
        name = node.description if node is not None and node.description else f"{guid:#x}"
        if node is not None and not node.switch:
            return plan.ca_names.get(name, (name, f"IB port {port}"))
        return (name, plan.switch_ports.get((name, port), f"IB port {port}"))

    return [
        SeenLink(end(node.guid, number), end(link.far_guid, link.far_port), None)
        for node in nodes.values()
        for number, link in sorted(node.ports.items())
    ]


# -- one subnet -----------------------------------------------------------------------------------


def _install(folder: BuildFolder, subnet: Subnet, target: Path) -> Path:
    """The subnet's files where opensm.conf looks for them (SM_DIR, here the scratch folder)."""
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(folder.path(subnet.folder).iterdir()):
        if path.is_file():
            text = folder.text(f"{subnet.folder}/{path.name}")
            (target / path.name).write_text(text.replace(SM_DIR, f"{target}/"))
    return target / "opensm.conf"


def _subnet_manager(conf: str, log: str) -> dict[str, object]:
    engines = _ENGINE.findall(conf)
    wanted = engines[-1].split(",")[0] if engines else "minhop"
    configured = _CONFIGURED.findall(log)
    used = configured[-1] if configured else None
    failures: list[dict[str, str]] = []
    if "SUBNET UP" not in log:
        failures.append({"problem": "OpenSM did not bring the subnet up (no SUBNET UP)"})
    if used is None:
        failures.append({"problem": "OpenSM configured no forwarding tables"})
    elif used.lower() != wanted.lower():
        errors = [line.split("-> ", 1)[-1] for line in log.splitlines() if " ERR " in line]
        failures.append(
            {
                "problem": f"routing engine {wanted} refused the topology; OpenSM fell back "
                f"to {used}",
                "detail": "; ".join(errors[:3]),
            }
        )
    managers = _SM_NODE.findall(conf)
    note = (
        {}
        if managers
        else {
            "note": "the design names no subnet-manager host: the twin ran OpenSM on the first "
            "node of ibsim.net, where no SM will run as built"
        }
    )
    return {
        **note,
        "routing_engine": wanted,
        "configured_by": used or "",
        "master": next((n for n, role, _ in managers if role == "master"), ""),
        "standbys": [n for n, role, _ in managers if role == "standby"],
        "failures": failures,
    }


def _cabling(plan: Plan, nodes: dict[int, ibnetdiscover.IbNode]) -> dict[str, object]:
    # ibsim links have no rate of their own (4xSDR), so ends and cables are compared, not speeds
    findings = compare(plan.cables, _seen(plan, nodes), check_speed=False)
    failures: list[dict[str, str]] = [
        {
            "cable": f.cable,
            "status": f.status,
            "planned": f.planned,
            "found": f.found,
            "detail": f.detail,
        }
        for f in findings
        if f.status != OK
    ]
    return {
        "cables": len(plan.cables),
        "ok": sum(f.status == OK for f in findings),
        "failures": [*plan.problems, *failures],
    }


def _routes(
    sim: Simulator, nodes: dict[int, ibnetdiscover.IbNode], *, running: bool
) -> dict[str, object]:
    """`running`: the SM is a daemon, which may be rewriting its dump (smdrill.read_dump)."""
    switches = sum(node.switch for node in nodes.values())
    text = smdrill.read_dump(
        sim.workdir / "opensm-lfts.dump", switches, settle=smdrill.WAIT if running else 0
    )
    if not text:
        return {"pairs": 0, "failures": [{"problem": "OpenSM dumped no forwarding tables"}]}
    tables = lft.parse_lfts(text)
    checked, missing, named = lft.unrouted(nodes, tables)
    result: dict[str, object] = {"lids": len(tables.owner), "pairs": checked, "failures": named}
    if missing > len(named):
        result["unrouted"] = missing
    return result


def check(
    lab: Lab, folder: BuildFolder, subnet: Subnet, *, drill: bool = True
) -> dict[str, object]:
    models = dict(load_catalog().catalog.switches)
    net = folder.text(subnet.file("ibsim.net"))
    the_plan = plan(folder, net, models)
    result: dict[str, object] = {"fabric": "infiniband", "network": the_plan.network}
    scratch = lab.workdir / "ib" / subnet.name
    conf = _install(folder, subnet, scratch / "sm")
    ns = lab.namespace()
    prefix = ("ip", "netns", "exec", ns)
    try:
        with simulator(net, scratch / "sim", prefix=prefix) as sim:
            check_args = ("-D", DEBUG, "--dump_files_dir", str(sim.workdir))
            found = smdrill.managers(conf.read_text(), _net_nodes(net)[1]) if drill else None
            # with a drill, the designed master's first sweep is the check's: one sweep less
            master = smdrill.start_master(sim, conf, found, *check_args) if found else None
            try:
                if master is not None:
                    log = master[1].read_text(errors="replace")
                else:
                    log = sim.opensm_once(
                        "-F",
                        str(conf),
                        "--dump_files_dir",
                        str(sim.workdir),
                        debug=DEBUG,
                        timeout=min(600.0, lab.remaining()),
                    )
                result["subnet_manager"] = _subnet_manager(conf.read_text(), log)
                seen = sim.tool("ibnetdiscover", timeout=min(120.0, lab.remaining()))
                if seen.returncode != 0:
                    raise SimulatorError(f"ibnetdiscover exited {seen.returncode}: {seen.stderr}")
                nodes = ibnetdiscover.parse(seen.stdout, f"{subnet.name}/ibnetdiscover")
                result["cabling"] = _cabling(the_plan, nodes)
                result["routes"] = _routes(sim, nodes, running=master is not None)
                running = master[0] if master is not None else None
                finding = smdrill.run(sim, conf, nodes, running) if drill else None
            finally:
                if master is not None:
                    stop(master[0])
            if finding is not None:
                result["drills"] = [finding]
    except SimulatorError as exc:
        result["subnet_manager"] = {"failures": [{"problem": str(exc)}]}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return result
