"""Test helper: a cabling plan wired as veth pairs between network namespaces, one real lldpd
per device, and each device's `lldpctl -f json0` output collected into <device>.json.

Every device of the network gets a namespace and an lldpd (its own control socket, its hostname
set to the device name, one-second transmit interval); every cable becomes a veth pair whose ends
carry the interface names the device's OS uses. Namespaces and daemons are removed on exit.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from tests.frr_support import run

Wire = tuple[str, str, str, str]  # device, interface, device, interface
RUN = Path("/run/fabricc-lldp")


@contextlib.contextmanager
def lldp_lab(wires: list[Wire]) -> Iterator[Path]:
    """Yields the folder of the daemons' control sockets once every lldpd runs; see collect().
    The folder is under /run: pytest's tmp_path is not always visible inside `ip netns exec`
    (a private /tmp mount does not follow it into the new mount namespace)."""
    tag = uuid.uuid4().hex[:6]
    workdir = RUN / tag
    workdir.mkdir(parents=True)
    devices = sorted({w[0] for w in wires} | {w[2] for w in wires})
    spaces = {device: f"l{tag}{i}" for i, device in enumerate(devices)}
    daemons: list[subprocess.Popen[bytes]] = []
    stack = contextlib.ExitStack()
    try:
        for ns in spaces.values():
            run("ip", "netns", "add", ns)
            run("ip", "-n", ns, "link", "set", "lo", "up")
        for n, (a, a_if, b, b_if) in enumerate(wires):
            tmp_a, tmp_b = f"va{tag}{n}", f"vb{tag}{n}"
            run("ip", "link", "add", tmp_a, "type", "veth", "peer", "name", tmp_b)
            for tmp, device, name in ((tmp_a, a, a_if), (tmp_b, b, b_if)):
                run("ip", "link", "set", tmp, "netns", spaces[device])
                run("ip", "-n", spaces[device], "link", "set", tmp, "name", name)
                run("ip", "-n", spaces[device], "link", "set", name, "up")
        for device, ns in spaces.items():
            log = stack.enter_context((workdir / f"{device}.log").open("wb"))
            daemons.append(
                subprocess.Popen(
                    ["ip", "netns", "exec", ns, "lldpd", "-d", "-u", str(workdir / f"{device}.sock"),
                     "-p", str(workdir / f"{device}.pid"), "-M", "4"],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )  # fmt: skip
        for device in devices:
            sock = str(workdir / f"{device}.sock")
            deadline = time.monotonic() + 20
            while run("lldpcli", "-u", sock, "show", "chassis", check=False).returncode:
                assert time.monotonic() < deadline, (
                    f"lldpd of {device} did not start: "
                    + (workdir / f"{device}.log").read_text(errors="replace")[-2000:]
                )
                time.sleep(0.1)
            run("lldpcli", "-u", sock, "configure", "system", "hostname", device)
            run("lldpcli", "-u", sock, "configure", "lldp", "portidsubtype", "ifname")
            run("lldpcli", "-u", sock, "configure", "lldp", "tx-interval", "1")
        yield workdir
    finally:
        for daemon in daemons:
            daemon.terminate()
        for daemon in daemons:
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        for ns in spaces.values():
            run("ip", "netns", "del", ns, check=False)
        stack.close()
        shutil.rmtree(workdir, ignore_errors=True)


def collect(wires: list[Wire], workdir: Path, out: Path, timeout: float = 30) -> None:
    """Wait until every lldpd saw its neighbour on every wired interface, then write each
    device's `lldpctl -f json0` to out/<device>.json."""
    out.mkdir(parents=True, exist_ok=True)
    expected: dict[str, set[str]] = {}
    for a, a_if, b, b_if in wires:
        expected.setdefault(a, set()).add(a_if)
        expected.setdefault(b, set()).add(b_if)
    deadline = time.monotonic() + timeout
    pending = dict(expected)
    while pending:
        for device in sorted(pending):
            sock = str(workdir / f"{device}.sock")
            text = run("lldpctl", "-u", sock, "-f", "json0").stdout
            seen = {
                i["name"] for block in json.loads(text)["lldp"] for i in block.get("interface", [])
            }
            if expected[device] <= seen:
                (out / f"{device}.json").write_text(text)
                del pending[device]
        assert time.monotonic() < deadline, f"no LLDP neighbours yet on {sorted(pending)}"
        time.sleep(0.5)
