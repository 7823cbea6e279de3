"""Twin drill: the master subnet manager of an InfiniBand subnet goes down; a standby takes over.

Consumes a running Simulator of one subnet, the installed opensm.conf (whose header names the
master and the standbys with their priorities) and the subnet's nodes; produces the drill's
finding: the master runs as a daemon on its node (the caller may start it and use its first sweep
as the subnet's check: see start_master), the first standby joins with its priority and must
enter STANDBY; the master is stopped; the standby must enter MASTER, bring the subnet up and
leave every LID routed from every CA port. The polling timers are shortened in the drill's copy
of the configuration so that it takes seconds (and its logs are flushed as written): the designed
bound (timeout x retries, OpenSM's defaults where the file sets none) is reported beside the time
measured.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from fabricc.twin import lft
from fabricc.twin.ibsim import Simulator, stop
from fabricc.verify.ibnetdiscover import IbNode

# OpenSM 3.3 defaults (opensm(8), "sminfo_polling_timeout", "polling_retry_number")
POLL_MS, RETRIES = 10000, 4
DRILL_POLL_MS, DRILL_RETRIES = 500, 2
SETTLE = 1.5  # s of a master without log or CPU: its sweeps are done (a drill's poll: 0.5 s)
WAIT = 30.0  # s without progress (the log or the daemon's CPU time growing) for a state change
LIMIT = 600.0  # s for any state change, however busy the daemon (a sweep of a loaded machine)
BUSY = 0.1  # of the time on a CPU: the daemon is sweeping, not waiting
TICKS_PER_S = os.sysconf("SC_CLK_TCK")
_SM_NODE = re.compile(r"^#\s+(\S+): (master|standby), sm_priority (\d+)", re.M)


def _setting(conf: str, key: str, default: int) -> int:
    found = re.findall(rf"^{key}\s+(\d+)", conf, re.M)
    return int(found[-1]) if found else default


def _host(cas: set[str], device: str) -> str | None:
    """The first CA port (`device/port`, as ibsim.net and ibnetdiscover name it) of `device`."""
    return next((n for n in sorted(cas) if n.split("/", 1)[0] == device), None)


@dataclass(frozen=True, slots=True)
class Managers:
    master: str
    master_priority: int
    standby: str
    standby_priority: int
    hosts: dict[str, str | None]  # each of the two -> the CA port it runs on (None: no port)


def managers(conf: str, cas: set[str]) -> Managers | None:
    """The master and first standby the configuration's header names, or None without a standby
    (no drill); `cas`: the subnet's CA ports."""
    found = sorted(
        ((name, int(priority)) for name, role, priority in _SM_NODE.findall(conf)),
        key=lambda item: -item[1],
    )
    if len(found) < 2:
        return None
    (master, master_priority), (standby, standby_priority) = found[0], found[1]
    hosts = {name: _host(cas, name) for name in (master, standby)}
    return Managers(master, master_priority, standby, standby_priority, hosts)


def _drill_conf(conf_path: Path) -> Path:
    fast = conf_path.with_name("opensm-drill.conf")
    fast.write_text(_fast(conf_path.read_text()))
    return fast


def start_master(
    sim: Simulator, conf_path: Path, found: Managers, *args: str
) -> tuple[subprocess.Popen[bytes], Path] | None:
    """The master as a daemon on its node, with the drill's timers and `args` (the check's
    debug level and dump folder), and its log; None when it did not bring the subnet up (then
    the master stays stopped and the drill names it)."""
    host = found.hosts[found.master]
    if host is None or found.hosts[found.standby] is None:
        return None
    drill = sim.workdir / "drill"
    log = drill / "master.log"
    first = sim.daemon(
        drill / "master",
        "opensm",
        "-F",
        str(_drill_conf(conf_path)),
        "-p",
        str(found.master_priority),
        *args,
        "-f",
        str(log),
        host=host,
        log=drill / "master.out",
    )
    if _wait(log, "SUBNET UP", first, WAIT) is None:
        stop(first)
        return None
    return first, log


def read_dump(dump: Path, switches: int, *, settle: float = WAIT) -> str:
    """OpenSM's LFT dump once it holds every one of `switches`' tables whole (lft.whole): a daemon
    rewrites it at each heavy sweep, so it is read again until a read is whole, or the file has not
    changed for `settle` s (a switch the SM never routed: the check names what is missing), or
    LIMIT. '' without a dump."""
    start = last = time.monotonic()
    text, seen = "", (-1, -1)
    while True:
        try:
            stat = dump.stat()
            text = dump.read_text(errors="replace")
        except FileNotFoundError:
            stat, text = None, ""
        if lft.whole(text, switches):
            return text
        now = time.monotonic()
        state = (stat.st_size, stat.st_mtime_ns) if stat else (-1, -1)
        if state != seen:
            seen, last = state, now
        if now - last >= settle or now - start >= LIMIT:
            return text
        time.sleep(0.3)


def _cpu_ticks(pid: int) -> int:
    """The process's user and system time in clock ticks (proc(5), /proc/PID/stat fields 14
    and 15), -1 once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    fields = stat.rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])


def _wait(
    log: Path,
    text: str | None,
    process: subprocess.Popen[bytes],
    stall: float,
    limit: float = LIMIT,
) -> float | None:
    """Seconds until `text` is in `log` (None: no text, only the stall ends the wait); None when
    the daemon exits first, or makes no progress for `stall` seconds, or after `limit`.
    Progress: its log grows, or it is busy (at least BUSY of the time on a CPU): a sweep of a
    large subnet on a loaded machine takes as long as it takes; a daemon that only waits or
    polls does not hold the drill up."""
    start = last = time.monotonic()
    size, ticks = -1, _cpu_ticks(process.pid)
    wanted, read = (text or "").encode(), 0
    while time.monotonic() - last < stall and time.monotonic() - start < limit:
        now_size = log.stat().st_size if log.is_file() else -1
        if text is not None and now_size > read:
            # only what was written since the last look (and the text's length before it)
            with log.open("rb") as file:
                file.seek(max(0, read - len(wanted)))
                written = file.read()
            read += len(written) - min(read, len(wanted))
            if wanted in written:
                return time.monotonic() - start
        if process.poll() is not None:
            return None
        now_ticks, now = _cpu_ticks(process.pid), time.monotonic()
        if now_size != size or now_ticks - ticks >= BUSY * (now - last) * TICKS_PER_S:
            size, ticks, last = now_size, now_ticks, now
        time.sleep(0.2)
    return None


def _quiet(log: Path, process: subprocess.Popen[bytes], settle: float) -> None:
    """Return once the daemon has neither logged nor been busy (BUSY of the time on a CPU) for
    `settle` s, or has exited, or after WAIT (a daemon that never settles goes as it is)."""
    _wait(log, None, process, settle, WAIT)


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


def run(
    sim: Simulator,
    conf_path: Path,
    nodes: dict[int, IbNode],
    master: subprocess.Popen[bytes] | None = None,
) -> dict[str, object] | None:
    """The drill's finding, or None when the design has no standby subnet manager. `master`:
    the master already running (start_master), else it is started here."""
    conf = conf_path.read_text()
    found = managers(conf, {n.description for n in nodes.values() if not n.switch})
    if found is None:
        return None
    bound = _setting(conf, "sminfo_polling_timeout", POLL_MS) * _setting(
        conf, "polling_retry_number", RETRIES
    )
    result: dict[str, object] = {
        "drill": "master subnet manager down",
        "down": [found.master],
        "takes_over": found.standby,
        "designed_takeover_s": bound / 1000,
    }
    failures: list[dict[str, str]] = []
    result["failures"] = failures
    if None in found.hosts.values():
        absent = [name for name, host in found.hosts.items() if host is None]
        failures.append({"problem": f"no port of {', '.join(absent)} in the subnet"})
        return result
    drill = sim.workdir / "drill"
    if master is None:
        started = start_master(sim, conf_path, found)
        if started is None:
            failures.append(
                {"device": found.master, "problem": "the master did not bring the subnet up"}
            )
            return result
        master = started[0]
    first = master
    second: subprocess.Popen[bytes] | None = None
    try:
        second = sim.daemon(
            drill / "standby",
            "opensm",
            "-F",
            str(conf_path.with_name("opensm-drill.conf")),
            "-p",
            str(found.standby_priority),
            "-D",
            "0x43",
            "--dump_files_dir",
            str(drill / "standby"),
            "-f",
            str(drill / "standby.log"),
            host=str(found.hosts[found.standby]),
            log=drill / "standby.out",
        )
        log = drill / "standby.log"
        if _wait(log, "Entering STANDBY state", second, WAIT) is None:
            failures.append({"device": found.standby, "problem": "did not enter STANDBY"})
            return result
        (drill / "standby" / "opensm-lfts.dump").unlink(missing_ok=True)
        # The master sweeps again when the standby joins: stopped in the middle of that sweep
        # (its switch tables half sent), it left the standby stuck in DISCOVERING once in a
        # few runs on a loaded machine (OpenSM 3.3.23 under ibsim: no log, no CPU, no
        # takeover). The drill is the designed failover of a subnet that is up, so the master
        # goes once it is quiet.
        _quiet(drill / "master.log", first, SETTLE)
        stop(first)
        took = _wait(log, "Entering MASTER state", second, WAIT)
        up = None if took is None else _wait(log, "SUBNET UP", second, WAIT)
        if took is None or up is None:
            # which step it stopped at, and whether the daemon still ran: the next such run
            # says whether the standby never saw the master go or swept without end
            step = "entered MASTER, no SUBNET UP" if took is not None else "stayed STANDBY"
            state = "exited" if second.poll() is not None else "still running"
            failures.append(
                {
                    "device": found.standby,
                    "problem": f"did not take over as master ({step}; {state})",
                }
            )
            return result
        result["took_s"] = round(took, 1)
        switches = sum(node.switch for node in nodes.values())
        tables = lft.parse_lfts(read_dump(drill / "standby" / "opensm-lfts.dump", switches))
        checked, missing, named = lft.unrouted(nodes, tables)
        result["pairs"] = checked
        failures.extend(named)
        if not checked:
            failures.append({"device": found.standby, "problem": "dumped no forwarding tables"})
        elif missing > len(named):
            result["unrouted"] = missing
    finally:
        stop(first)
        if second is not None:
            stop(second)
    return result
