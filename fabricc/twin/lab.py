"""Twin containment: network namespaces, veth cables and daemons that never leak.

Consumes nothing from the build; produces a Lab that creates namespaces (named with one random
tag, so a run and its leftovers are recognisable), veth pairs created directly inside them (never
in the root namespace), daemons started inside them, and one scratch folder under /run. On exit -
normal, failure, Ctrl-C or SIGTERM - every process is stopped, every namespace (with its veths)
deleted and the scratch folder removed. Every command runs under a deadline.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

RUN = Path("/run/fabricc-twin")  # tmp_path is not always visible through `ip netns exec`
PREFIX = "ftw"  # every namespace of a twin run: ftw<tag><n>
TAG_LENGTH = 5
_OPENED: set[str] = set()  # tags of the labs this process opened
_LINKS: dict[str, int] = {}  # tag of each open lab -> the links it booted (neighbour entries)
_LINKS_LOCK = threading.Lock()  # labs boot in threads of their own (run.py)
IFNAMSIZ = 16  # linux/if.h: names are at most 15 characters
NETNS = Path("/run/netns")  # where `ip netns add` binds each namespace
NEIGHBOR_TABLES = [Path(f"/proc/sys/net/{family}/neigh/default") for family in ("ipv6", "ipv4")]


def inside(ns: str) -> list[str]:
    """The command prefix that runs a program in the network namespace `ns`: nsenter joins only
    the network namespace (`ip netns exec` also copies the mount table and remounts /sys, which
    costs seconds on a machine holding many namespaces; the twin's programs read their network
    through netlink and /proc, which follow the network namespace)."""
    return ["nsenter", f"--net={NETNS / ns}"]


class TwinTimeout(Exception):
    """The run's time bound was reached."""


class Interrupted(Exception):
    """SIGTERM or SIGHUP arrived; raised so that the cleanup runs."""


@dataclass(slots=True)
class Lab:
    tag: str
    deadline: float
    workdir: Path
    spaces: list[str] = field(default_factory=list)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    pid_files: list[Path] = field(default_factory=list)
    frr_dirs: list[Path] = field(default_factory=list)

    def room_for_neighbors(self, links: int) -> None:
        """Makes room for `links` more links of this Lab in the kernel's neighbour table, beside
        those of the other Labs open at the same time (they share the table)."""
        with _LINKS_LOCK:
            _LINKS[self.tag] = _LINKS.get(self.tag, 0) + links
            make_room_for_neighbors(sum(_LINKS.values()))

    def expire(self) -> None:
        """Ends the Lab's time now: its next command raises TwinTimeout (another stage failed)."""
        self.deadline = time.monotonic()

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TwinTimeout("the twin ran out of time")
        return left

    def run(
        self, *args: str, check: bool = True, timeout: float = 30, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        try:
            result = subprocess.run(
                args,
                input=stdin,
                capture_output=True,
                text=True,
                timeout=min(timeout, self.remaining()),
                check=False,
            )
        except subprocess.TimeoutExpired:
            if time.monotonic() >= self.deadline:
                raise TwinTimeout("the twin ran out of time") from None
            return subprocess.CompletedProcess(args, 124, "", "timed out")
        if check and result.returncode != 0:
            message = result.stderr.strip() or result.stdout.strip()
            raise RuntimeError(f"{' '.join(args)} exited {result.returncode}: {message}")
        return result

    def exec(
        self, ns: str, *args: str, check: bool = True, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        return self.run(*inside(ns), *args, check=check, timeout=timeout)

    def namespace(self) -> str:
        """A new namespace with lo up and forwarding on (no route out: nothing links it to the
        root namespace)."""
        return self.namespaces(1)[0]

    def namespaces(self, count: int, switches: bool = False) -> list[str]:
        """`count` new namespaces as `namespace` makes them, added in one `ip -batch`;
        `switches`: each with SWITCH_SYSCTLS too."""
        names = [f"{PREFIX}{self.tag}{len(self.spaces) + k}" for k in range(count)]
        if not names:
            return []
        self.spaces.extend(names)  # before they exist: an interrupted batch leaves none behind
        self.run("ip", "-batch", "-", stdin="".join(f"netns add {n}\n" for n in names))
        _prepare(names, SYSCTLS + SWITCH_SYSCTLS if switches else SYSCTLS)
        return names

    def cable(self, a: str, a_if: str, b: str, b_if: str, mtu: int | None = None) -> None:
        """A veth pair created with each end already inside its namespace, up."""
        self.cables([(a, a_if, mtu, b, b_if, mtu)])

    def cables(self, pairs: list[tuple[str, str, int | None, str, str, int | None]]) -> None:
        """Veth pairs (a, a_if, a_mtu, b, b_if, b_mtu), each end created inside its namespace
        with its MTU, then brought up: one `ip -batch` per namespace for all its ends."""
        up: dict[str, list[str]] = {}
        create: list[str] = []  # batched in the root namespace: the ends are created inside theirs
        for a, a_if, a_mtu, b, b_if, b_mtu in pairs:
            for name in (a_if, b_if):
                if len(name) >= IFNAMSIZ:
                    raise ValueError(f"interface name {name!r} is longer than IFNAMSIZ-1")
            a_size = f" mtu {a_mtu}" if a_mtu is not None else ""
            b_size = f" mtu {b_mtu}" if b_mtu is not None else ""
            create.append(
                f"link add name {a_if} netns {a}{a_size} type veth peer name {b_if} netns {b}"
                f"{b_size}\n"
            )
            up.setdefault(a, []).append(a_if)
            up.setdefault(b, []).append(b_if)
        if create:
            self.run("ip", "-batch", "-", stdin="".join(create), timeout=120)
        for ns, names in up.items():
            self.run(
                "ip", "-n", ns, "-batch", "-", stdin="".join(f"link set {n} up\n" for n in names)
            )

    def stand_in(self, ns: str, name: str, mtu: int | None = None) -> None:
        """An interface with carrier that leads nowhere: one end of a veth pair whose other end
        (`<name>p`) stays in the same namespace (neither the dummy driver nor a cable needed)."""
        self.run("ip", "-n", ns, "link", "add", name, "type", "veth", "peer", "name", name + "p")
        for end in (name + "p", name):
            if mtu is not None:
                self.run("ip", "-n", ns, "link", "set", end, "mtu", str(mtu))
            self.run("ip", "-n", ns, "link", "set", end, "up")

    def start(self, ns: str, *args: str, log: str, env: dict[str, str] | None = None) -> None:
        """A daemon in the foreground inside `ns`, its output in the scratch folder."""
        with (self.workdir / log).open("wb") as out:
            self.processes.append(
                subprocess.Popen(
                    [*inside(ns), *args],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                    cwd=self.workdir,
                    start_new_session=True,  # Ctrl-C reaches the twin, which stops them
                )
            )

    def close(self) -> None:
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        for pid_file in self.pid_files:
            with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
                os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        stop = time.monotonic() + 5
        for process in self.processes:
            try:
                process.wait(timeout=max(0.1, stop - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        # every namespace of this run's tag, also one made just before an interruption
        spaces = list(dict.fromkeys([*self.spaces, *leftovers(f"{PREFIX}{self.tag}")]))
        # the namespaces go below whatever happened to their processes
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            _empty(spaces)
        for ns in spaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        for folder in self.frr_dirs:
            shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(self.workdir, ignore_errors=True)


# each new namespace's settings: forwarding on, IPv6 on, and no duplicate address detection on
# the twin's links (docs/twin.md): each is a veth pair between two namespaces, so an IPv6
# link-local address is usable the moment its link comes up (BGP unnumbered waits for it), not
# a second later
SYSCTLS = (
    ("net/ipv4/ip_forward", "1"),
    ("net/ipv6/conf/all/forwarding", "1"),
    ("net/ipv6/conf/all/disable_ipv6", "0"),
    ("net/ipv6/conf/default/disable_ipv6", "0"),
    ("net/ipv6/conf/all/accept_dad", "0"),
    ("net/ipv6/conf/default/accept_dad", "0"),
)
# a switch's namespace also answers ARP as a switch OS does: only for an address of the interface
# the request came in on, from a sender of that interface's subnet (arp_ignore 2), asking from an
# address of the target's subnet (arp_announce 2), and announcing itself when a link comes up
# (arp_notify 1): Cumulus Linux user guide, "Address Resolution Protocol - ARP" (its defaults);
# SONiC's files/image_config/sysctl/sysctl-net.conf sets all.arp_ignore 2 and all.arp_notify 1
# alike. Without it a VRR macvlan answers for its SVI's own address with the VRR MAC, which the
# asking peer holds as its own (ARP flux, Linux's default arp_ignore 0)
SWITCH_SYSCTLS = (
    ("net/ipv4/conf/all/arp_ignore", "2"),
    ("net/ipv4/conf/all/arp_announce", "2"),
    ("net/ipv4/conf/all/arp_notify", "1"),
)
CLONE_NEWNET = 0x40000000  # linux/sched.h
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1  # linux/sockios.h, linux/if.h


def _prepare(names: list[str], sysctls: tuple[tuple[str, str], ...]) -> None:
    """lo up and `sysctls` in each namespace, from one thread of this process that enters them in
    turn (setns moves only the calling thread, and the thread ends with the job): no process
    started per namespace (two were, `ip` and `sysctl`, some 400 for a large network)."""
    errors: list[BaseException] = []

    def work() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            for name in names:
                fd = os.open(NETNS / name, os.O_RDONLY)
                try:
                    if libc.setns(fd, CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), f"setns into {name}")
                finally:
                    os.close(fd)
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                    asked = fcntl.ioctl(sock, SIOCGIFFLAGS, struct.pack("16sH14x", b"lo", 0))
                    flags = struct.unpack_from("16sH", asked)[1]
                    fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))
                for key, value in sysctls:
                    (Path("/proc/sys") / key).write_text(value + "\n")
        except BaseException as exc:  # raised again in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=work, name="fabricc-twin-netns")
    thread.start()
    thread.join()
    if errors:
        raise RuntimeError(f"could not set up the namespaces: {errors[0]}") from errors[0]


def _alive(pid: int) -> bool:
    """Running (a zombie has stopped: where no init reaps it, it stays in /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :][:1] not in ("Z", "X")


def _empty(spaces: list[str]) -> None:
    """Stops whatever still runs inside the namespaces (forked daemons), by its id: all of them
    signalled first, then one wait for all."""
    pids = [pid for ns in spaces for pid in _ns_pids(ns)]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + 3
    while pids and time.monotonic() < end:
        pids = [p for p in pids if _alive(p)]
        time.sleep(0.05)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _ns_pids(ns: str) -> list[int]:
    result = subprocess.run(
        ["ip", "netns", "pids", ns], capture_output=True, text=True, check=False, timeout=10
    )
    return [int(word) for word in result.stdout.split() if word.isdecimal()]


def leftovers(prefix: str = PREFIX) -> list[str]:
    """Namespaces of twin runs (or of one run's tag) still present (a clean machine has none)."""
    result = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return sorted(line.split()[0] for line in result.stdout.splitlines() if line.startswith(prefix))


def own_leftovers() -> list[str]:
    """Namespaces of the labs this process opened that are still present (other twin runs on the
    same machine are not this process's leak)."""
    return [ns for ns in leftovers() if ns[len(PREFIX) : len(PREFIX) + TAG_LENGTH] in _OPENED]


def make_room_for_neighbors(links: int) -> None:
    """BGP unnumbered keeps an IPv6 neighbour entry at both ends of every link, hosts and SVIs
    an ARP entry per neighbour, and the kernel's neighbour tables are shared by all namespaces
    (gc_thresh3, 1024 by default: sessions stay Idle, pings fail, with "neighbor table
    overflow"). Each interface also holds its multicast groups' entries (all-nodes, MLD, the
    peer's solicited-node: NOARP, freed only by the kernel's garbage collector): gb300-nvl72-
    spectrum-x, 1,000 links, peaked at 4,059 IPv6 entries, within 4 x links + 1024 only while
    the collector keeps up, so the room is four times that. A limit, not memory: the kernel
    allocates an entry when it is used. Raise the limits when lower than needed; never lower."""
    needed = 16 * links + 4096
    for table in NEIGHBOR_TABLES:
        with contextlib.suppress(OSError):
            if int((table / "gc_thresh3").read_text()) >= needed:
                continue
            for name, value in (("gc_thresh1", needed // 4), ("gc_thresh2", needed // 2)):
                if int((table / name).read_text()) < value:
                    (table / name).write_text(f"{value}\n")
            (table / "gc_thresh3").write_text(f"{needed}\n")


NEIGHBOR_STATS = {
    "IPv6": Path("/proc/net/stat/ndisc_cache"),
    "ARP": Path("/proc/net/stat/arp_cache"),
}


def neighbor_overflows() -> dict[str, int]:
    """Table -> the new neighbour entries the kernel refused since it booted ("neighbor table
    overflow": its table_fulls, the last column of /proc/net/stat/<table>, one row per CPU);
    absent where the kernel does not say."""
    found: dict[str, int] = {}
    for name, path in NEIGHBOR_STATS.items():
        with contextlib.suppress(OSError, ValueError, IndexError):
            header, *rows = path.read_text().split("\n")
            column = header.split().index("table_fulls")
            found[name] = sum(int(row.split()[column], 16) for row in rows if row.strip())
    return found


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(signal.Signals(signum).name)


@contextlib.contextmanager
def lab(seconds: float) -> Iterator[Lab]:
    """A Lab bounded to `seconds`; everything it made is removed when the block ends."""
    tag = uuid.uuid4().hex[:TAG_LENGTH]
    _OPENED.add(tag)
    workdir = RUN / tag
    workdir.mkdir(parents=True, mode=0o755)
    RUN.chmod(0o755)
    the_lab = Lab(tag, time.monotonic() + seconds, workdir)
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield the_lab
    finally:
        # a Ctrl-C or SIGTERM during the cleanup must not leave namespaces behind: it is held
        # until the cleanup is done, then raised (a run between two labs stops as in one)
        held = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        arrived: list[int] = []
        during = {sig: signal.signal(sig, lambda n, _f: arrived.append(n)) for sig in held}
        try:
            the_lab.close()
            with _LINKS_LOCK:
                _LINKS.pop(tag, None)
        finally:
            signal.signal(signal.SIGINT, during[signal.SIGINT])
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if arrived and sys.exc_info()[0] is None:
            if arrived[0] == signal.SIGINT:
                raise KeyboardInterrupt
            raise Interrupted(signal.Signals(arrived[0]).name)
