"""Test helper for the provisioning feeds: their files by example, and real Slurm.

`slurmctld_lab` starts Debian's slurmctld (auth/none, a free port, state in a temporary folder)
on the generated nodes.conf - every node State=FUTURE, so no slurmd is needed - and topology
file, and yields a function that runs scontrol against it; the daemon is shut down on exit.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource

from tests.support import ROOT, compiled

SCHEMAS = ROOT / "schemas"


def provisioning(example: str) -> dict[str, str]:
    _, artifacts = compiled(example)
    return {
        path.removeprefix("provisioning/"): text
        for path, text in artifacts
        if path.startswith("provisioning/") and isinstance(text, str)
    }


def schema_validator(name: str) -> jsonschema.protocols.Validator:
    """A validator for schemas/<name>; schemas beside it are found by their $id."""
    path = SCHEMAS / name
    schema = json.loads(path.read_text())
    resources = []
    for other in sorted(path.parent.glob("*.schema.json")):
        document = json.loads(other.read_text())
        if "$id" in document:
            resources.append((document["$id"], Resource.from_contents(document)))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator: jsonschema.protocols.Validator = cls(
        schema, registry=Registry().with_resources(resources)
    )
    return validator


def schema_errors(name: str, document: Any) -> list[str]:
    validator = schema_validator(name)
    return [
        f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message}"
        for e in validator.iter_errors(document)
    ]


def yaml_documents(text: str) -> list[Any]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def scontrol(conf: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["scontrol", *args],
        env={"SLURM_CONF": str(conf), "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@contextlib.contextmanager
def slurmctld_lab(
    folder: Path, nodes_conf: str, topology: str, plugin: str = "topology/tree"
) -> Iterator[tuple[Callable[..., str], Path]]:
    """Yields (scontrol runner returning stdout, log path)."""
    nodes = "".join(
        f"{line} CPUs=1 State=FUTURE\n" if line.startswith("NodeName=") else f"{line}\n"
        for line in nodes_conf.splitlines()
    )
    state = folder / "state"
    state.mkdir()
    log = folder / "slurmctld.log"
    conf = folder / "slurm.conf"
    conf.write_text(
        "ClusterName=fabricc\nSlurmctldHost=localhost\nAuthType=auth/none\nCredType=cred/none\n"
        f"SlurmUser={getpass.getuser()}\nSlurmctldPort={_free_port()}\n"
        f"SlurmdPort={_free_port()}\nStateSaveLocation={state}\n"
        f"SlurmctldPidFile={folder / 'slurmctld.pid'}\nSlurmctldLogFile={log}\n"
        "SlurmctldDebug=info\nMpiDefault=none\nMailProg=/bin/true\n"
        "SelectType=select/cons_tres\nProctrackType=proctrack/linuxproc\n"
        f"GresTypes=gpu\nTopologyPlugin={plugin}\n{nodes}"
        "PartitionName=all Nodes=ALL Default=YES\n"
    )
    (folder / "topology.conf").write_text(topology)
    daemon = subprocess.Popen(
        ["slurmctld", "-D", "-f", str(conf)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def run(*args: str) -> str:
        result = scontrol(conf, *args)
        assert result.returncode == 0, f"scontrol {' '.join(args)}: {result.stderr}"
        return result.stdout

    try:
        deadline = time.monotonic() + 30
        while scontrol(conf, "ping").returncode != 0 or "UP" not in scontrol(conf, "ping").stdout:
            assert daemon.poll() is None, (
                f"slurmctld exited: {log.read_text() if log.exists() else ''}"
            )
            assert time.monotonic() < deadline, "slurmctld did not come up"
            time.sleep(0.2)
        yield run, log
    finally:
        scontrol(conf, "shutdown")
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
