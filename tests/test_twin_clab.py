"""`fabricc twin` export: a containerlab topology per Ethernet network, checked against
containerlab's own JSON schema (vendored in tests/data/containerlab with its source and licence).

Each topology must name every cable of its network (management ports aside: containerlab owns
every node's eth0), the kind of image each switch's config is for, and the generated files by
paths that resolve from the topology file to the build folder's own files.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from fabricc.cli import cli
from fabricc.errors import SpecError
from fabricc.twin import clab
from fabricc.twin.folder import load
from fabricc.twin.names import Namer
from fabricc.twin.run import ethernet_networks, export
from tests.support import EXAMPLES

SCHEMA = json.loads(
    (Path(__file__).parent / "data" / "containerlab" / "clab.schema.json").read_text()
)
EXAMPLE_LIST = ("roce-lab", "roce-lab-eos", "superpod-h100-4su", "spectrum-x-2plane")


@pytest.fixture(scope="module", params=EXAMPLE_LIST)
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(request.param) / "out"
    spec = EXAMPLES / f"{request.param}.yaml"
    result = CliRunner().invoke(cli, ["build", str(spec), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_each_ethernet_network_exports_a_valid_topology(built: Path) -> None:
    folder = load(built)
    networks = ethernet_networks(folder)
    written = export(built)
    assert [p.name for p in written] == [f"{n}.clab.yml" for n in networks]
    assert "compute" not in networks or not (built / "configs/compute-sm").is_dir()
    validator = jsonschema.Draft7Validator(SCHEMA)
    # the cabling plan as the twin reads it (border links to the site network set aside)
    rows = folder.cables
    for path in written:
        text = path.read_text()
        document = yaml.safe_load(text)
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
        assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
        network = path.name.removesuffix(".clab.yml")
        nodes = document["topology"]["nodes"]
        mine = [r for r in rows if r["network"] == network]
        assert set(nodes) == {r[e] for r in mine for e in ("a_device", "b_device")}
        management = sum(
            bool({"eth0", "mgmt0", "Management1"} & {r["a_port"], r["b_port"]}) for r in mine
        )
        links = document["topology"]["links"]
        assert len(links) == len(mine) - management
        assert f"left out here: {management} of them" in text
        ends = [end for link in links for end in link["endpoints"]]
        assert len(ends) == len(set(ends)), "an interface cabled twice"
        for name, node in nodes.items():
            expected = {
                "cumulus": "nvidia_cumulusvx",
                "sonic": "sonic-vs",
                "eos": "arista_ceos",
            }.get(
                "sonic"
                if (built / f"configs/{name}/config_db.json").is_file()
                else "cumulus"
                if (built / f"configs/{name}/startup.yaml").is_file()
                else "eos"
                if (built / f"configs/{name}/startup-config").is_file()
                else "",
                "linux",
            )
            assert node["kind"] == expected, name
            files = [node["startup-config"]] if "startup-config" in node else []
            files += [bind.split(":")[0] for bind in node.get("binds", [])]
            for file in files:
                assert (path.parent / file).resolve().is_file(), file
            if expected == "arista_ceos":
                assert node["startup-config"] == f"../configs/{name}/startup-config"
            if expected == "sonic-vs":
                assert (
                    f"../configs/{name}/config_db.json:/etc/sonic/config_db.json:ro"
                    in node["binds"]
                )


def test_switch_ports_carry_the_image_interface_names(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["build", str(EXAMPLES / "roce-lab.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    folder = load(out)
    text, left_out = clab.topology(folder, Namer(folder), "fabric", "roce-lab")
    links = yaml.safe_load(text)["topology"]["links"]
    db = json.loads((out / "configs/fabric-leaf001/config_db.json").read_text())
    # sonic-vs: eth1 is the first front-panel port in lane order (Ethernet0), eth2 the next
    by_lane = sorted(db["PORT"], key=lambda p: int(db["PORT"][p]["lanes"].split(",")[0]))
    rows = [
        r
        for r in csv.DictReader(io.StringIO((out / "cabling/cables.csv").read_text()))
        if r["network"] == "fabric"
    ]
    row = next(
        r for r in rows if r["b_device"] == "fabric-leaf001" and r["kind"] == "endpoint-leaf"
    )
    alias = Namer(folder).interface("fabric-leaf001", row["b_port"])
    expected = f"fabric-leaf001:eth{by_lane.index(alias) + 1}"
    assert any(expected in link["endpoints"] for link in links), expected
    assert left_out == 0
    assert "gpu01:NIC0" in {e for link in links for e in link["endpoints"]}


def test_eos_ports_carry_the_ceos_interface_names(tmp_path: Path) -> None:
    """cEOS with INTFTYPE=et reads et<cage>_<lane> as Ethernet<cage>/<lane> (containerlab ceos
    kind doc): a split port is named by its first lane, as the startup-config names it."""
    out = tmp_path / "out"
    spec = EXAMPLES / "roce-lab-eos.yaml"
    result = CliRunner().invoke(cli, ["build", str(spec), "-o", str(out)])
    assert result.exit_code == 0, result.output
    folder = load(out)
    text, left_out = clab.topology(folder, Namer(folder), "fabric", "roce-lab-eos")
    document = yaml.safe_load(text)
    links = {tuple(link["endpoints"]) for link in document["topology"]["links"]}
    config = (out / "configs/fabric-leaf001/startup-config").read_text()
    # gpu02's NIC0 is on the second 400G half of cage 1: Ethernet1/5 in the config
    assert "interface Ethernet1/5\n   description gpu02:NIC0\n" in config
    assert ("gpu02:NIC0", "fabric-leaf001:et1_5") in links
    assert ("fabric-leaf001:et5_1", "fabric-spine001:et1_1") in links
    node = document["topology"]["nodes"]["fabric-leaf001"]
    assert node["kind"] == "arista_ceos" and node["env"] == {"INTFTYPE": "et"}
    assert left_out == 0  # the Management1 cables are in the oob network


def test_a_device_name_containerlab_refuses_is_an_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["build", str(EXAMPLES / "roce-lab.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    folder = load(out)
    folder.cables[0]["a_device"] = "_bad name"
    with pytest.raises(SpecError, match="containerlab does not accept: _bad name"):
        clab.topology(folder, Namer(folder), folder.cables[0]["network"], "x")


def test_the_schema_refuses_what_the_export_avoids() -> None:
    """The vendored schema is live: the unmaintained `cvx` kind, an interface named twice in a link
    and a node name with a space fail it."""
    validator = jsonschema.Draft7Validator(SCHEMA)
    nodes: dict[str, object] = {"a": {"kind": "nvidia_cumulusvx"}}
    good: dict[str, object] = {"name": "x", "topology": {"nodes": nodes}}
    assert not list(validator.iter_errors(good))
    cvx = {"name": "x", "topology": {"nodes": {"a": {"kind": "cvx"}}}}
    assert list(validator.iter_errors(cvx))
    twice = {"name": "x", "topology": {"nodes": nodes, "links": [{"endpoints": ["a:e1", "a:e1"]}]}}
    assert list(validator.iter_errors(twice))
    spaced = {"name": "x", "topology": {"nodes": {"a b": {"kind": "linux"}}}}
    assert list(validator.iter_errors(spaced))
