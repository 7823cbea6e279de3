"""`fabricc diff`: cables matched by their ends, the work order, BOM delta and topology changes.

A spec and the folder it was built into compare equal; growing roce-lab from 4 to 12 servers is
pure addition (installs, new cables, parts to order, new and changed configs) and the work order
lists it rack by rack; doubling the spines of an InfiniBand fabric is reported as a topology change
with every leaf-spine cable that moves; adding a floor region (storage in racks of its own, a
second GPU group) with --keep changes no existing name, place, address, out-of-band port or
cable ID.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fabricc.build import build
from fabricc.change.compare import (
    ADDED,
    CHANGED,
    REMOVED,
    RENUMBERED,
    RETERMINATED,
    Diff,
    PartDelta,
    diff,
)
from fabricc.change.snapshot import (
    CABLES,
    DEVICES,
    Snapshot,
    compile_files,
    from_files,
    kept_places,
    load,
    load_places,
)
from fabricc.change.workorder import files, work_order
from fabricc.cli import cli
from fabricc.ir import UPLINK
from fabricc.synth.addressing import oob_gateways
from tests.support import EXAMPLES, compile_text

ROCE = (EXAMPLES / "roce-lab.yaml").read_text()
IB = """\
metadata:
  name: ib-growth
nodes:
  dgx:
    model: dgx-h100
    count: {count}
    hostname: "dgx{{n:03d}}"
networks:
  compute:
    role: compute
    fabric: infiniband
    endpoints:
      dgx: {{}}
"""
# DGX in units with storage arrays on a storage fabric: more arrays add spines, array leaves and
# arrays to the central racks, which first-fit repacks
STORAGE = """\
metadata: {{name: grow}}
site: {{racks_per_row: 12, rack: {{power_kw: 140}}}}
nodes:
  dgx: {{model: dgx-h100, count: 64, nodes_per_rack: 4}}
  storage: {{model: storage-array, count: {arrays}}}
networks:
  compute: {{role: compute, fabric: infiniband, endpoints: {{dgx: {{}}}}}}
  storage: {{role: storage, fabric: infiniband, rail_optimized: true, oversubscription: '4:3',
    endpoints: {{dgx: {{}}, storage: {{leaf_downlinks: 16, oversubscription: '1:1'}}}}}}
  oob: {{role: oob}}
"""
# two GPU groups in units on 10-rack rows: the first growing by a unit needs another row
TWO_GROUPS = """\
metadata: {{name: two-groups}}
site: {{racks_per_row: 10}}
nodes:
  a: {{model: dgx-h100, count: {count}}}
  b: {{model: dgx-h100, count: 32}}
networks:
  compute: {{role: compute, fabric: infiniband, endpoints: {{a: {{}}, b: {{}}}}}}
  oob: {{role: oob}}
"""
# a GPU group in units, management servers in central racks, in-band and out-of-band networks;
# growth adds a floor region: storage arrays in racks of their own, or a second GPU group in units
# In-band at 4:1 leaves its spines ports for the access switches a new region adds (at the default ratio a
# region's uplinks would grow the spine tier: a change of shape, which moves cables).
REGIONS = """\
metadata: {{name: regions}}
site: {{racks_per_row: 12, rack: {{power_kw: 140}}}}
nodes:
  dgx: {{model: dgx-h100, count: 64, nodes_per_rack: 4}}
  mgmt: {{model: mgmt-server, count: 4}}
{added}networks:
  compute: {{role: compute, fabric: infiniband, spines_for_sus: 4}}
  inband: {{role: inband, dual_homed: true, oversubscription: "4:1", endpoints: {{dgx: {{}}, mgmt: {{}}}}}}
  oob: {{role: oob, uplink_to: inband}}
"""
NEW_REGIONS = {
    "storage in racks of its own": "  storage: {model: storage-array, count: 8, "
    "placement: own-racks}\n",
    "a second GPU group in units": "  hgx: {model: dgx-h100, count: 32, nodes_per_rack: 4}\n",
}


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _spec(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_spec_and_its_build_compare_equal(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "lab.yaml", ROCE)
    build(spec, tmp_path / "built")
    result = CliRunner().invoke(cli, ["diff", str(spec), str(tmp_path / "built")])
    assert result.exit_code == 0, result.output
    assert "  devices: no change\n  cables: no change\n  configs: no change\n" in result.output
    assert "parts to order: 0 part numbers" in result.output


def test_growth_is_additions_rack_by_rack(tmp_path: Path) -> None:
    old = _spec(tmp_path, "old.yaml", ROCE)
    new = _spec(tmp_path, "new.yaml", ROCE.replace("count: 4\n", "count: 12\n"))
    out = tmp_path / "change"
    result = CliRunner().invoke(cli, ["diff", str(old), str(new), "-o", str(out)])
    assert result.exit_code == 0, result.output
    # cable IDs, loopbacks, ASNs, racks, rack units and management addresses stay
    identity = [line for line in result.output.splitlines() if "identity:" in line]
    assert not identity, identity
    assert "network fabric: rewire" not in result.output

    built = tmp_path / "new-built"
    build(new, built)
    plan = {row["cable_id"]: row for row in _rows((built / CABLES).read_text())}
    devices = {row["name"]: row for row in _rows((built / DEVICES).read_text())}
    steps = _rows((out / "work-order.csv").read_text())
    installs = {s["item"]: s for s in steps if s["action"] == "install device"}
    build(old, tmp_path / "old-built")
    before = {row["name"] for row in _rows((tmp_path / "old-built" / DEVICES).read_text())}
    assert set(installs) == set(devices) - before
    assert {f"gpu{n:02d}" for n in range(5, 13)} <= set(installs)
    for name, step in installs.items():  # 0U devices (PDUs) have no U
        u = devices[name]["u"]
        rack = devices[name]["rack"]
        assert (step["rack"], step["where"]) == (rack, f"{rack} U{u}" if u else rack)
    runs = {s["item"] for s in steps if s["action"] == "run cable"}
    new_hosts = {f"gpu{n:02d}" for n in range(5, 13)}
    assert {cid for cid, row in plan.items() if row["a_device"] in new_hosts} <= runs
    for rack in {s["rack"] for s in steps}:  # steps count from 1 within each rack
        numbers = [int(s["step"]) for s in steps if s["rack"] == rack]
        assert numbers == list(range(1, len(numbers) + 1))

    bom = {row["part_number"]: row for row in _rows((out / "bom-delta.csv").read_text())}
    assert (bom["LAB-GPU-SERVER"]["old"], bom["LAB-GPU-SERVER"]["new"]) == ("4", "12")
    assert bom["LAB-GPU-SERVER"]["delta"] == "8"
    assert "+++ b/configs/hosts/gpu12.sh" in (out / "configs.diff").read_text()
    html = (out / "work-order.html").read_text()
    assert "<h2>Parts to order and return</h2>" in html and "LAB-GPU-SERVER" in html
    assert all(f"<h2>Rack {rack}</h2>" in html for rack in {s["rack"] for s in steps})


def _cable(cid: str, a: str, b: str, part: str = "P1", kind: str = "endpoint-leaf") -> str:
    (a_dev, a_port), (b_dev, b_port) = a.split(":"), b.split(":")
    return (
        f"{cid},x,net,{kind},{a_dev},{a_port},R1,U1,{b_dev},{b_port},R2,U40,400,mmf,5,{part},1,,,,,"
    )


def _snapshot(label: str, cables: list[str]) -> Snapshot:
    header = (
        "cable_id,label,network,kind,a_device,a_port,a_rack,a_u,b_device,b_port,b_rack,b_u,"
        "speed_gbps,medium,length_m,cable_part,cable_quantity,leg,a_transceiver,b_transceiver,"
        "rail,plane"
    )
    return from_files(label, {CABLES: "\n".join([header, *cables]) + "\n"})


def test_cables_are_matched_by_their_ends() -> None:
    old = _snapshot(
        "old",
        [
            _cable("N-1", "h1:p0", "l1:1"),
            _cable("N-2", "h2:p0", "l1:2"),
            _cable("N-3", "l1:10", "s1:1", kind="leaf-spine"),
            _cable("N-4", "h3:p0", "l1:3"),
            _cable("N-5", "h4:p0", "l1:4"),
        ],
    )
    new = _snapshot(
        "new",
        [
            _cable("N-1", "h1:p0", "l1:1"),  # unchanged
            _cable("N-2", "h2:p0", "l2:1"),  # the host end stays, the leaf end moves
            _cable("N-6", "h5:p0", "l1:5"),  # new; N-3 is gone
            _cable("N-9", "h3:p0", "l1:3"),  # same ends, new ID
            _cable("N-5", "h4:p0", "l1:4", part="P2"),  # same ends, other cable
        ],
    )
    result = diff(old, new)
    found = {(c.change, c.cable_id, c.old_id) for c in result.cables}
    assert found == {
        (RETERMINATED, "N-2", "N-2"),
        (REMOVED, "N-3", ""),
        (ADDED, "N-6", ""),
        (RENUMBERED, "N-9", "N-4"),
        (CHANGED, "N-5", "N-5"),
    }
    moved = next(c for c in result.cables if c.change == RETERMINATED)
    assert moved.detail == "keep h2:p0; move the other end from l1:2 to l2:1"
    assert result.topology == [
        "network net: rewire: 1 existing endpoint-leaf cable re-terminated or removed",
        "network net: rewire: 1 existing leaf-spine cable re-terminated or removed",
        "identity: 1 existing cables get a new cable ID",
    ]
    steps = [(s.rack, s.step, s.action, s.item) for s in work_order(result)]
    assert steps == [
        ("R1", 1, "remove cable", "N-3"),
        ("R1", 2, "replace cable", "N-5"),
        ("R1", 3, "run cable", "N-6"),
        ("R2", 1, "re-terminate cable", "N-2"),
    ]


def test_doubling_the_spines_is_reported_as_a_rewire(tmp_path: Path) -> None:
    old = _spec(tmp_path, "old.yaml", IB.format(count=4))
    new = _spec(tmp_path, "new.yaml", IB.format(count=40))
    result = CliRunner().invoke(cli, ["diff", str(old), str(new)])
    assert result.exit_code == 0, result.output
    assert "network compute: spines 4 -> 8\n" in result.output
    assert "network compute: rewire: " in result.output
    assert "existing leaf-spine cables re-terminated or removed" in result.output


def test_keep_leaves_installed_central_devices_where_they_stand(tmp_path: Path) -> None:
    """Without --keep, more storage repacks the central racks (devices move, reported under
    identity); with it, the earlier build's devices keep rack, unit, out-of-band port and
    management address, and the change of shape is still reported."""
    old = _spec(tmp_path, "old.yaml", STORAGE.format(arrays=8))
    new = _spec(tmp_path, "new.yaml", STORAGE.format(arrays=24))
    built = tmp_path / "old"
    build(old, built)
    plain = CliRunner().invoke(cli, ["diff", str(built), str(new)])
    assert "identity: " in plain.output, "the case must move devices without --keep"
    kept = CliRunner().invoke(cli, ["diff", str(built), str(new), "--keep"])
    assert kept.exit_code == 0, kept.output
    assert "identity: " not in kept.output
    assert "network storage: spines 4 -> 8\n" in kept.output
    assert "network oob: rewire" not in kept.output

    grown = tmp_path / "new"
    result = CliRunner().invoke(cli, ["build", str(new), "-o", str(grown), "--keep", str(built)])
    assert result.exit_code == 0, result.output
    before = {r["name"]: r for r in _rows((built / DEVICES).read_text())}
    after = {r["name"]: r for r in _rows((grown / DEVICES).read_text())}
    fields = ("rack", "u", "mgmt_ip")
    moved = [n for n, r in before.items() if any(r[f] != after[n][f] for f in fields)]
    assert not moved, moved[:3]
    assert len(after) > len(before)


def test_keep_leaves_the_racks_of_other_regions_where_they_stand(tmp_path: Path) -> None:
    """A group outgrowing its rows moves the next group's region a row on (every rack renamed)
    - unless the earlier build is kept: then its racks keep their names and the new unit takes
    a new row after the floor's last."""
    old = _spec(tmp_path, "old.yaml", TWO_GROUPS.format(count=32))
    new = _spec(tmp_path, "new.yaml", TWO_GROUPS.format(count=64))
    plain = CliRunner().invoke(cli, ["diff", str(old), str(new)])
    assert "existing devices change rack" in plain.output, "the case must move racks"
    out = tmp_path / "diff"
    kept = CliRunner().invoke(cli, ["diff", str(old), str(new), "--keep", "-o", str(out)])
    assert kept.exit_code == 0, kept.output
    assert "identity: " not in kept.output
    assert "network compute: spines 8 -> 16\n" in kept.output
    changes = _rows((out / "devices.csv").read_text())
    assert not [c for c in changes if c["change"] == "removed"]
    # the second group's units keep their numbers too (test below)
    assert not [c for c in changes if c["change"] == "changed"]


def _expand(expression: str) -> list[str]:
    """A hostlist as fabricc writes it (`a[001-032],b005`) -> its names."""
    names: list[str] = []
    for prefix, ranges in re.findall(r"([^,\[]+)(?:\[([^\]]*)\])?", expression):
        if not ranges:
            names.append(prefix)
        for part in ranges.split(",") if ranges else ():
            first, _, last = part.partition("-")
            numbers = range(int(first), int(last or first) + 1)
            names += [f"{prefix}{n:0{len(first)}d}" for n in numbers]
    return names


def _units_of_nodes(files: dict[str, str]) -> dict[str, tuple[object, ...]]:
    """Each GPU node's unit as every provisioning feed prints it: the ansible host var `su`
    and `su<n>` group, the Kubernetes label and the Slurm switch of its unit."""
    inventory = yaml.safe_load(files["provisioning/ansible/inventory.yaml"])["all"]
    groups = {
        host: name
        for name, group in inventory["children"].items()
        if re.fullmatch(r"su\d+", name)
        for host in group["hosts"]
    }
    labels = {
        doc["metadata"]["name"]: doc["metadata"]["labels"]["topology.fabricc.io/su"]
        for doc in yaml.safe_load_all(files["provisioning/k8s/node-labels.yaml"])
    }
    switches = {
        node: fields["SwitchName"]
        for line in files["provisioning/slurm/topology.conf"].splitlines()
        if "Nodes=" in line
        for fields in [dict(item.split("=", 1) for item in line.split())]
        for node in _expand(fields["Nodes"])
    }
    return {
        name: (host.get("su"), groups.get(name), labels.get(name), switches.get(name))
        for name, host in inventory["hosts"].items()
        if host["kind"] == "node"
    }


def test_keep_holds_the_unit_numbers_of_a_later_group_when_an_earlier_one_grows(
    tmp_path: Path,
) -> None:
    """Units are indexed design-wide group after group, so the first group's new unit shifts
    the second group's indices. Without --keep the printed numbers follow (2 -> 3); with it
    every existing device keeps its unit's number - inventory, ansible, Kubernetes and Slurm
    - and the new unit takes the next number above the earlier build's."""
    old = _spec(tmp_path, "old.yaml", TWO_GROUPS.format(count=32))
    new = _spec(tmp_path, "new.yaml", TWO_GROUPS.format(count=64))
    before_files = compile_files(old)
    before = from_files("old", before_files)
    plain = from_files("plain", compile_files(new))
    assert plain.devices["b001"]["scalable_unit"] == "3", "the case must shift the indices"
    after_files = compile_files(new, kept_places(before))
    after = from_files("new", after_files)

    units = {name: row["scalable_unit"] for name, row in before.devices.items()}
    assert {units["a001"], units["b001"]} == {"1", "2"}
    assert {name: after.devices[name]["scalable_unit"] for name in units} == units
    added = {row["scalable_unit"] for n, row in after.devices.items() if n not in units}
    assert added - {""} == {"3"}
    assert after.devices["a033"]["scalable_unit"] == "3"

    fed, refed = _units_of_nodes(before_files), _units_of_nodes(after_files)
    assert fed["b001"] == (2, "su2", "2", "compute-su2")
    assert {name: refed[name] for name in fed} == fed
    assert refed["a064"] == (3, "su3", "3", "compute-su3")
    # the diagrams name units by their numbers: the first group's two units drawn once
    diagrams = sorted(path for path in after_files if path.startswith("diagrams/su-"))
    assert diagrams == ["diagrams/su-compute-1.dot", "diagrams/su-compute-2.dot"]
    assert "same as SU 3" in after_files["diagrams/su-compute-1.dot"]
    assert "SU 2 leaves: compute-b-leaf001" in after_files["diagrams/overview-compute.dot"]


def test_a_removed_units_number_is_not_given_to_another(tmp_path: Path) -> None:
    """The first group shrinks by a unit and the second grows by one, the earlier build kept:
    the second group keeps its number and its new unit takes the next one above the earlier
    build's, not the number of the unit that went (its racks may still carry it)."""
    old = _spec(tmp_path, "old.yaml", TWO_GROUPS.format(count=64))
    grown = TWO_GROUPS.format(count=32).replace(
        "b: {model: dgx-h100, count: 32}", "b: {model: dgx-h100, count: 64}"
    )
    new = _spec(tmp_path, "new.yaml", grown)
    before = from_files("old", compile_files(old))
    after = from_files("new", compile_files(new, kept_places(before)))

    def units(snapshot: Snapshot) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for row in snapshot.devices.values():
            if row["kind"] == "node":
                found.setdefault(row["group"], set()).add(row["scalable_unit"])
        return found

    assert units(before) == {"a": {"1", "2"}, "b": {"3"}}
    assert units(after) == {"a": {"1"}, "b": {"3", "4"}}
    assert after.devices["b033"]["scalable_unit"] == "4"


def test_keep_of_the_same_design_changes_nothing(tmp_path: Path) -> None:
    for name in ("superpod-h100-4su.yaml", "roce-lab.yaml"):
        spec = EXAMPLES / name
        plain = compile_files(spec)
        assert compile_files(spec, kept_places(from_files(name, plain))) == plain, name


def test_keep_needs_a_spec_to_compile(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "lab.yaml", ROCE)
    build(spec, tmp_path / "out")
    result = CliRunner().invoke(cli, ["diff", str(spec), str(tmp_path / "out"), "--keep"])
    assert result.exit_code == 1
    assert "error: --keep compiles NEW with OLD's places, but NEW is a build folder" in (
        result.output
    )


def test_a_folder_that_is_no_build_is_an_error(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "lab.yaml", ROCE)
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["diff", str(spec), str(tmp_path / "empty")])
    assert result.exit_code == 1
    assert (
        f"{(tmp_path / 'empty').as_posix()}:1:1: error: not a fabricc build folder" in result.output
    )


def test_work_order_tables_write_numbers_as_numbers_and_guard_formulas() -> None:
    """The work order's CSVs go through the project's CSV writer: a negative BOM delta stays a
    number and text that a spreadsheet would run as a formula gets its apostrophe."""
    result = Diff(Snapshot("old"), Snapshot("new"))
    result.bom = [PartDelta("P-1", "=SUM(A1:A9)", "cable", 4, 1, 0, 3)]
    tables = dict(files(result))
    rows = list(csv.reader(io.StringIO(tables["bom-delta.csv"])))
    assert rows[1] == ["P-1", "'=SUM(A1:A9)", "cable", "4", "1", "-3", "0", "3"]


@pytest.mark.parametrize("added", sorted(NEW_REGIONS))
def test_keep_holds_every_identity_when_a_floor_region_is_added(tmp_path: Path, added: str) -> None:
    """A new floor region numbers its access switches in a series of its own, takes its own
    part of the management pool and its own uplink places: with --keep no existing device
    changes name, rack, unit, management address or out-of-band port, and no cable its ID."""
    old = _spec(tmp_path, "old.yaml", REGIONS.format(added=""))
    new = _spec(tmp_path, "new.yaml", REGIONS.format(added=NEW_REGIONS[added]))
    before = from_files("old", compile_files(old))
    after = from_files("new", compile_files(new, kept_places(before)))
    access = {name for name, row in before.devices.items() if row["network"] == "oob"}
    assert len(access) > 2 and any(name not in access for name in after.devices if "oob" in name)
    for name, row in before.devices.items():
        assert name in after.devices, name
        fields = ("rack", "u", "mgmt_ip", "inband_ip", "scalable_unit")
        assert [row[f] for f in fields] == [after.devices[name][f] for f in fields], name

    def ends(rows: list[dict[str, str]]) -> dict[tuple[str, ...], str]:
        """Cable ID by the cable's two ends (both out-of-band ports of a management cable)."""
        return {
            (r["a_device"], r["a_port"], r["b_device"], r["b_port"]): r["cable_id"] for r in rows
        }

    old_ends, new_ends = ends(before.cables), ends(after.cables)
    missing = [end for end, cid in old_ends.items() if end not in new_ends]
    assert not missing, missing[:3]
    renumbered = [end for end, cid in old_ends.items() if end in new_ends and new_ends[end] != cid]
    assert not renumbered, renumbered[:3]
    result = diff(before, after)
    moved = [note for note in result.topology if "identity:" in note or "rewire" in note]
    assert moved == [], moved


def test_growth_in_place_holds_each_root_cable_where_it_was_installed(tmp_path: Path) -> None:
    """A management tree's root's cable to the in-band network has no place of its own (the
    highest cage left after the uplinks): a new region's uplinks would take it. Grown in place
    (the earlier build read from its folder's cables.csv), every root cable keeps both ends,
    and the new uplinks go around it."""
    folder = tmp_path / "out"
    build(_spec(tmp_path, "old.yaml", REGIONS.format(added="")), folder)

    def roots() -> dict[str, tuple[str, str, str]]:
        devices = {row["name"]: row for row in _rows((folder / DEVICES).read_text())}
        return {
            row["a_device"]: (row["a_port"], row["b_device"], row["b_port"])
            for row in _rows((folder / CABLES).read_text())
            if row["kind"] == "mgmt" and devices[row["b_device"]]["network"] != row["network"]
        }

    before = roots()
    assert before
    for added in sorted(NEW_REGIONS):
        build(_spec(tmp_path, f"{added}.yaml", REGIONS.format(added=NEW_REGIONS[added])), folder)
        after = roots()
        assert {root: after.get(root) for root in before} == before, added
        ends = [
            (row["b_device"], row["b_port"])
            for row in _rows((folder / CABLES).read_text())
            if row["b_device"] in {b for _, b, _ in before.values()}
        ]
        assert len(ends) == len(set(ends)), f"{added}: a cage cabled twice"
        build(_spec(tmp_path, "old.yaml", REGIONS.format(added="")), folder, fresh=True)


def test_access_switches_are_a_name_series_and_an_address_part_per_region(tmp_path: Path) -> None:
    """Central racks keep `oob-leaf001`, a group's racks get `oob-<group>-leaf001`; a written
    pattern's {group} is the region's group ('central' for central racks). The first group's
    region takes the first half of the management pool, the central racks the next quarter."""
    text = REGIONS.format(added=NEW_REGIONS["storage in racks of its own"])
    fabric, _ = compile_text(text, tmp_path)
    access = {n: d for n, d in fabric.devices.items() if d.network == "oob"}
    assert {"oob-leaf001", "oob-dgx-leaf001", "oob-storage-leaf001"} <= set(access)
    # each switch the first host of its subnet: a /26 for 48 ports (network, switch, ports,
    # broadcast)
    # each its subnet's first address (its management port is on its parent's subnet where it
    # has a parent in the management tree: synth/oob.py connect_tree)
    gateways = oob_gateways(fabric)
    assert gateways["oob-dgx-leaf001"] == "10.128.0.1"
    assert gateways["oob-dgx-leaf002"] == "10.128.0.65"
    assert gateways["oob-leaf001"] == "10.128.128.1"
    assert gateways["oob-storage-leaf001"] == "10.128.192.1"
    written = text.replace(
        "uplink_to: inband}", "uplink_to: inband, hostnames: {leaf: 'm-{group}{n}'}}"
    )
    fabric, _ = compile_text(written, tmp_path, "written.yaml")
    names = {n for n, d in fabric.devices.items() if d.network == "oob"}
    assert {"m-central1", "m-dgx1", "m-dgx2", "m-storage1"} <= names


def test_access_switch_uplinks_without_their_places_warn_and_take_the_next_target(
    tmp_path: Path,
) -> None:
    """In-band spines with 3 ports to spare: uplinks past their places take the highest free
    ports - of the next spine where the round-robin one is full (this spec failed with 'no
    free port left' before) - and the build warns that they may move on growth."""
    text = """\
metadata: {name: tight}
site: {racks_per_row: 24, rack: {power_kw: 140}}
nodes:
  gpu: {model: hgx-h100, count: 86}
  storage: {model: storage-array, count: 3}
networks:
  compute: {role: compute, fabric: ethernet, oversubscription: '2:1'}
  inband: {role: inband, dual_homed: true, oversubscription: '1:1'}
  oob: {role: oob, uplink_to: inband}
"""
    fabric, _ = compile_text(text, tmp_path)
    uplinks = [link for link in fabric.links if link.network == "oob" and link.kind == UPLINK]
    access = fabric.networks["oob"].switches["leaf"]
    assert len(uplinks) == 2 * len(access)
    assert len({(link.b, link.b_port) for link in uplinks}) == len(uplinks)
    warned = [w.message for w in fabric.warnings if "found no free port" in w.message]
    assert len(warned) == 1, fabric.warnings
    assert (
        " uplinks of oob found no free port at their places on inband's spine switches"
        in (warned[0])
    )


SUPERPOD = (EXAMPLES / "superpod-h100-4su.yaml").read_text()


def test_growth_in_place_that_rewires_says_so_at_build_time(tmp_path: Path) -> None:
    """Two units grown to four into the same folder: the spines double and most leaf-spine
    cables move; the build says how many, why, and that spines_for_sus for the final size
    avoids it - on the terminal and in the report. Sized for four units from the start, the
    same growth moves nothing and says nothing."""
    small = _spec(tmp_path, "small.yaml", SUPERPOD.replace("count: 127\n", "count: 63\n"))
    large = _spec(tmp_path, "large.yaml", SUPERPOD)
    out = tmp_path / "out"
    assert not [w for w in build(small, out).warnings if "rewires" in w.message]
    grown = [w for w in build(large, out).warnings if "rewires" in w.message]
    assert [w.message for w in grown] == [
        "growing in place rewires the earlier build: spines 8 -> 16: 480 of 512 installed "
        "leaf-spine cables are re-terminated or removed, because its upper tier was sized for "
        "its own units"
    ]
    assert grown[0].hint is not None and "spines_for_sus: 4 " in grown[0].hint
    report = (out / "report" / "index.html").read_text()
    assert "growing in place rewires the earlier build" in report
    sized = "    fabric: infiniband\n    spines_for_sus: 4\n"
    small = _spec(
        tmp_path, "s4.yaml", small.read_text().replace("    fabric: infiniband\n", sized, 1)
    )
    large = _spec(tmp_path, "l4.yaml", SUPERPOD.replace("    fabric: infiniband\n", sized, 1))
    out = tmp_path / "sized"
    build(small, out)
    assert not [w for w in build(large, out).warnings if "rewires" in w.message]


def _unique_new_cables(result: Diff) -> dict[str, int]:
    """Per part, the cables that must be new ones: added, or put in place of another part."""
    keys = {
        (c.cable_id, c.part)
        for c in result.cables
        if c.change == ADDED or (c.old_part and c.old_part != c.part)
    }
    counts: dict[str, int] = {}
    for _, part in keys:
        counts[part] = counts.get(part, 0) + 1
    return counts


def test_parts_to_order_cover_every_cable_whose_part_changes(tmp_path: Path) -> None:
    """Growing into a doubled spine tier re-terminates cables onto other lengths: each is a
    replacement in the work order, ordered new and its old part returned, not netted against
    the surplus of the old length."""
    # the runs this scenario was written with: switch racks packed without an air limit or
    # cable managers, 0.5 m slack plus the 0.5 m routing allowance; growing then re-terminates
    # cables onto other lengths
    packed = SUPERPOD.replace(
        "    power_kw: 45", "    power_kw: 45\n    air_cooled_kw: 500\n    cable_u: 0"
    ).replace("  row_pitch_m: 3.0\n", "  row_pitch_m: 3.0\n  slack_m: 0.5\n")
    assert packed.count("slack_m: 0.5") == 1
    small = _spec(tmp_path, "small.yaml", packed.replace("count: 127\n", "count: 63\n"))
    old = from_files("old", compile_files(small))
    new = from_files("new", compile_files(_spec(tmp_path, "large.yaml", packed), kept_places(old)))
    result = diff(old, new)
    moved = [c for c in result.cables if c.change == RETERMINATED and c.old_part != c.part]
    assert len(moved) >= 10
    actions = {(s.item, s.action) for s in work_order(result)}
    assert all((c.cable_id, "replace cable") in actions for c in moved)
    parts = {p.part: p for p in result.bom}
    for part, count in _unique_new_cables(result).items():
        assert parts[part].order >= count, part
    for change in moved:
        assert parts[change.old_part].returned >= 1
    # a length that nets to zero is still ordered and returned
    assert any(p.delta == 0 and p.order > 0 and p.returned == p.order for p in result.bom)
    for p in result.bom:
        assert p.order - p.returned == p.delta
    table = _rows(dict(files(result))["bom-delta.csv"])
    assert table[0].keys() >= {"order", "return"}


def test_growth_reads_the_places_of_a_build_folder_as_the_full_read_gives_them(
    tmp_path: Path,
) -> None:
    """A build growing in place reads only its earlier build's devices and cables (the columns
    the places need): the same places as reading the whole folder, and the same refusal of a
    file that a link put there (a link planted in an old build carries no bytes in)."""
    spec = _spec(tmp_path, "lab.yaml", ROCE)
    built = tmp_path / "out"
    build(spec, built)
    places = kept_places(load_places(built))
    assert places and places == kept_places(load(built))
    outside = tmp_path / "outside.csv"
    outside.write_text((built / DEVICES).read_text())
    (built / DEVICES).unlink()
    (built / DEVICES).symlink_to(outside)
    assert load_places(built).devices == {} == load(built).devices
    assert kept_places(load_places(built)) == kept_places(load(built)) == {}
