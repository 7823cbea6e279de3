"""Twin drill: the master subnet manager of an InfiniBand subnet goes down; a standby takes over.

Consumes a running Simulator of one subnet, the installed opensm.conf (whose header names the
master and the standbys with their priorities) and the subnet's nodes; produces the drill's
finding: the master runs as a daemon on its node, the first standby joins with its priority and
must enter STANDBY; the master is stopped; the standby must enter MASTER, bring the subnet up and
leave every LID routed from every CA port. The polling timers are shortened in the drill's copy
of the configuration so that it takes seconds (and its logs are flushed as written): the designed
bound (timeout x retries, OpenSM's defaults where the file sets none) is reported beside the time
measured.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

from fabricc.twin import lft
from fabricc.twin.ibsim import Simulator, stop
from fabricc.verify.ibnetdiscover import IbNode

# OpenSM 3.3 defaults (opensm(8), "sminfo_polling_timeout", "polling_retry_number")
POLL_MS, RETRIES = 10000, 4
DRILL_POLL_MS, DRILL_RETRIES = 500, 2
WAIT = 30.0  # s for each state change with the drill's timers
_SM_NODE = re.compile(r"^#\s+(\S+): (master|standby), sm_priority (\d+)", re.M)


def _setting(conf: str, key: str, default: int) -> int:
    found = re.findall(rf"^{key}\s+(\d+)", conf, re.M)
    return int(found[-1]) if found else default


def _host(nodes: dict[int, IbNode], device: str) -> str | None:
    names = sorted(n.description for n in nodes.values() if not n.switch)
    return next((n for n in names if n.split("/", 1)[0] == device), None)


def _wait(log: Path, text: str, process: subprocess.Popen[bytes], seconds: float) -> float | None:
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if log.is_file() and text in log.read_text(errors="replace"):
            return time.monotonic() - start
        if process.poll() is not None:
            return None
        time.sleep(0.2)
    return None


def _fast(conf: str) -> str:
    kept = [
        line
        for line in conf.splitlines()
        if not re.match(r"(sminfo_polling_timeout|polling_retry_number|force_log_flush)\s", line)
    ]
    # the drill reads the logs while the SMs run: OpenSM buffers them unless told to flush
    kept += [
        f"sminfo_polling_timeout {DRILL_POLL_MS}",
        f"polling_retry_number {DRILL_RETRIES}",
        "force_log_flush TRUE",
    ]
    return "\n".join(kept) + "\n"


def run(sim: Simulator, conf_path: Path, nodes: dict[int, IbNode]) -> dict[str, object] | None:
    """The drill's finding, or None when the design has no standby subnet manager."""
    conf = conf_path.read_text()
    managers = sorted(
        ((name, int(priority)) for name, role, priority in _SM_NODE.findall(conf)),
        key=lambda item: -item[1],
    )
    if len(managers) < 2:
        return None
    (master, master_priority), (standby, standby_priority) = managers[0], managers[1]
    bound = _setting(conf, "sminfo_polling_timeout", POLL_MS) * _setting(
        conf, "polling_retry_number", RETRIES
    )
    result: dict[str, object] = {
        "drill": "master subnet manager down",
        "down": [master],
        "takes_over": standby,
        "designed_takeover_s": bound / 1000,
    }
    failures: list[dict[str, str]] = []
    result["failures"] = failures
    hosts = {name: _host(nodes, name) for name in (master, standby)}
    if None in hosts.values():
        absent = [name for name, host in hosts.items() if host is None]
        failures.append({"problem": f"no port of {', '.join(absent)} in the subnet"})
        return result
    fast = conf_path.with_name("opensm-drill.conf")
    fast.write_text(_fast(conf))
    drill = sim.workdir / "drill"
    args = ("opensm", "-F", str(fast))
    first = sim.daemon(
        drill / "master",
        *args,
        "-p",
        str(master_priority),
        "-f",
        str(drill / "master.log"),
        host=str(hosts[master]),
        log=drill / "master.out",
    )
    second: subprocess.Popen[bytes] | None = None
    try:
        if _wait(drill / "master.log", "SUBNET UP", first, WAIT) is None:
            failures.append({"device": master, "problem": "the master did not bring the subnet up"})
            return result
        second = sim.daemon(
            drill / "standby",
            *args,
            "-p",
            str(standby_priority),
            "-D",
            "0x43",
            "--dump_files_dir",
            str(drill / "standby"),
            "-f",
            str(drill / "standby.log"),
            host=str(hosts[standby]),
            log=drill / "standby.out",
        )
        log = drill / "standby.log"
        if _wait(log, "Entering STANDBY state", second, WAIT) is None:
            failures.append({"device": standby, "problem": "did not enter STANDBY"})
            return result
        (drill / "standby" / "opensm-lfts.dump").unlink(missing_ok=True)
        stop(first)
        took = _wait(log, "Entering MASTER state", second, WAIT)
        if took is None or _wait(log, "SUBNET UP", second, WAIT) is None:
            failures.append({"device": standby, "problem": "did not take over as master"})
            return result
        result["took_s"] = round(took, 1)
        dump = drill / "standby" / "opensm-lfts.dump"
        end = time.monotonic() + WAIT
        while not dump.is_file() and time.monotonic() < end:
            time.sleep(0.2)
        time.sleep(0.5)  # the dump is written in one go after the sweep; let it finish
        tables = lft.parse_lfts(dump.read_text(errors="replace") if dump.is_file() else "")
        checked, missing, named = lft.unrouted(nodes, tables)
        result["pairs"] = checked
        failures.extend(named)
        if not checked:
            failures.append({"device": standby, "problem": "dumped no forwarding tables"})
        elif missing > len(named):
            result["unrouted"] = missing
    finally:
        stop(first)
        if second is not None:
            stop(second)
    return result
