"""SONiC config_db.json: valid against the project's schema, internally consistent (the references
SONiC's YANG models check), consistent with the cabling plan, and carrying the spec's lossless RoCE
values (NVIDIA's `nv set qos roce` defaults, or the spec's own)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fabricc.errors import SpecError
from tests.configs_support import (
    SONIC_SCHEMA,
    by_path,
    cables,
    config_dbs,
    with_custom_qos,
)
from tests.support import EXAMPLES, compile_text, compiled

# Cumulus Linux user guide, RoCE, NVIDIA defaults: RoCE DSCP 26 -> priority/TC 3 (PFC), CNP DSCP 48 -> 6
# strict, others TC 0, ECN 150 KB / 1.5 MB at 100 %, DWRR 50/50.
DEFAULTS = {"roce": (26, 3), "cnp": (48, 6), "pfc": 3, "ecn": (150, 1500, 100), "dwrr": (50, 50)}
CUSTOM = {"roce": (24, 5), "cnp": (4, 7), "pfc": 5, "ecn": (200, 2000, 50), "dwrr": (70, 30)}


def roce_lab() -> dict[str, str]:
    return by_path(compiled("roce-lab")[1])


def numbered(tmp_path: Path) -> dict[str, str]:
    text = (EXAMPLES / "roce-lab.yaml").read_text() + "\naddressing:\n  p2p: 10.255.0.0/24\n"
    return by_path(compile_text(text, tmp_path)[1])


def test_every_config_db_matches_the_schema(tmp_path: Path) -> None:
    schema = json.loads(SONIC_SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    dbs = {
        **config_dbs(roce_lab()),
        **{f"p2p-{k}": v for k, v in config_dbs(numbered(tmp_path)).items()},
    }
    assert len(dbs) == 8
    errors = {
        name: [
            f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(db)
        ]
        for name, db in dbs.items()
    }
    assert not any(errors.values()), errors
    # and the schema does reject what SONiC would: a misspelt field, a bad lane list
    db = next(iter(dbs.values()))
    broken = json.loads(json.dumps(db))
    port = next(iter(broken["PORT"]))
    broken["PORT"][port]["lanes"] = "0;1"
    broken["PORT"][port]["speeed"] = "400000"
    assert len(list(validator.iter_errors(broken))) == 2


def qos_ports(db: dict[str, Any]) -> dict[str, Any]:
    """PORT_QOS_MAP's port entries (without the switch-wide "global" one)."""
    return {k: v for k, v in db["PORT_QOS_MAP"].items() if k != "global"}


def check_references(db: dict[str, Any]) -> list[str]:
    """The leafrefs of SONiC's YANG models, as a list of dangling references."""
    problems = []
    ports = set(db["PORT"])
    assert db["PORT_QOS_MAP"]["global"] == {"dscp_to_tc_map": "ROCE"}
    for key, entry in qos_ports(db).items():
        if key not in ports:
            problems.append(f"PORT_QOS_MAP {key}")
        for field, table in (
            ("dscp_to_tc_map", "DSCP_TO_TC_MAP"),
            ("tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP"),
            ("tc_to_queue_map", "TC_TO_QUEUE_MAP"),
        ):
            if entry[field] not in db[table]:
                problems.append(f"PORT_QOS_MAP {key}.{field}")
    for key, entry in db["QUEUE"].items():
        if key.split("|")[0] not in ports or entry["scheduler"] not in db["SCHEDULER"]:
            problems.append(f"QUEUE {key}")
        if "wred_profile" in entry and entry["wred_profile"] not in db["WRED_PROFILE"]:
            problems.append(f"QUEUE {key}.wred_profile")
    for table in ("INTERFACE", "BREAKOUT_CFG"):
        problems += [f"{table} {k}" for k in db[table] if k.split("|")[0] not in ports]
    for profile in db["CABLE_LENGTH"].values():
        problems += [f"CABLE_LENGTH {k}" for k in profile if k not in ports]
    for table in ("BUFFER_PG", "BUFFER_QUEUE"):
        for key, entry in db[table].items():
            if key.split("|")[0] not in ports:
                problems.append(f"{table} {key}")
            if entry["profile"] != "NULL" and entry["profile"] not in db["BUFFER_PROFILE"]:
                problems.append(f"{table} {key}.profile")
    for name, profile in db["BUFFER_PROFILE"].items():
        if profile["pool"] not in db["BUFFER_POOL"]:
            problems.append(f"BUFFER_PROFILE {name}.pool")
    problems += [f"PFC_WD {k}" for k in db["PFC_WD"] if k != "GLOBAL" and k not in ports]
    lanes = [lane for entry in db["PORT"].values() for lane in entry["lanes"].split(",")]
    if len(lanes) != len(set(lanes)):
        problems.append("a SerDes lane is used by two ports")
    for master, entry in db["BREAKOUT_CFG"].items():
        ways = int(entry["brkout_mode"].split("x")[0])
        index = db["PORT"][master]["index"]
        if sum(1 for p in db["PORT"].values() if p["index"] == index) != ways:
            problems.append(f"BREAKOUT_CFG {master}: {ways} ports expected in cage {index}")
    return problems


def test_config_db_references_resolve(tmp_path: Path) -> None:
    dbs = {**config_dbs(roce_lab()), **config_dbs(numbered(tmp_path))}
    problems = {name: check_references(db) for name, db in dbs.items()}
    assert not any(problems.values()), problems


def alias_of(port: str) -> str:
    cage, _, sub = port.partition("/")
    return f"etp{cage}" + (chr(ord("a") + int(sub) - 1) if sub else "")


def test_ports_follow_the_cabling_plan() -> None:
    files = roce_lab()
    dbs = config_dbs(files)
    checked = 0
    for row in cables(files):
        for side, other in (("a", "b"), ("b", "a")):
            db = dbs.get(row[f"{side}_device"])
            if db is None or row[f"{side}_port"] == "eth0":
                continue
            matches = [
                n for n, p in db["PORT"].items() if p["alias"] == alias_of(row[f"{side}_port"])
            ]
            assert len(matches) == 1, row
            port = db["PORT"][matches[0]]
            assert port["admin_status"] == "up"
            assert port["speed"] == str(int(row["speed_gbps"]) * 1000)
            assert port["description"].startswith(row[f"{other}_device"] + ":")
            length = db["CABLE_LENGTH"]["AZURE"][matches[0]]
            assert length == f"{math.ceil(float(row['length_m']))}m"
            checked += 1
    # roce-lab: 8 host cables (leaf side) and 8 leaf-spine cables (both sides)
    assert checked == 8 + 2 * 8
    for name, db in dbs.items():
        up = {n for n, p in db["PORT"].items() if p["admin_status"] == "up"}
        assert up == set(qos_ports(db)), f"{name}: every cabled port carries the RoCE QoS"


def expect_qos(db: dict[str, Any], values: dict[str, Any]) -> None:
    (roce_dscp, roce_tc), (cnp_dscp, cnp_tc) = values["roce"], values["cnp"]
    dscp = db["DSCP_TO_TC_MAP"]["ROCE"]
    assert dscp[str(roce_dscp)] == str(roce_tc) and dscp[str(cnp_dscp)] == str(cnp_tc)
    assert {v for k, v in dscp.items() if int(k) not in (roce_dscp, cnp_dscp)} == {"0"}
    assert db["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"][str(values["pfc"])] == str(values["pfc"])
    assert {e["pfc_enable"] for e in qos_ports(db).values()} == {str(values["pfc"])}
    low, high, probability = values["ecn"]
    wred = db["WRED_PROFILE"]["ROCE_LOSSLESS"]
    assert wred["ecn"] == "ecn_all"
    assert (wred["green_min_threshold"], wred["green_max_threshold"]) == (
        str(low * 1024),
        str(high * 1024),
    )
    assert wred["green_drop_probability"] == str(probability)
    roce_weight, default_weight = values["dwrr"]
    for port in qos_ports(db):
        roce = db["QUEUE"][f"{port}|{roce_tc}"]
        assert roce["wred_profile"] == "ROCE_LOSSLESS"
        assert db["SCHEDULER"][roce["scheduler"]] == {"type": "DWRR", "weight": str(roce_weight)}
        assert db["SCHEDULER"][db["QUEUE"][f"{port}|{cnp_tc}"]["scheduler"]] == {"type": "STRICT"}
        default = db["SCHEDULER"][db["QUEUE"][f"{port}|0"]["scheduler"]]
        assert default == {"type": "DWRR", "weight": str(default_weight)}


def expanded(key: str) -> tuple[str, set[int]]:
    """A BUFFER_PG or BUFFER_QUEUE key as port and numbers: Ethernet0|0-2 -> Ethernet0, {0, 1, 2}."""
    port, _, span = key.partition("|")
    low, _, high = span.partition("-")
    return port, set(range(int(low), int(high or low) + 1))


def expect_lossless_buffers(db: dict[str, Any], pfc: int) -> None:
    """The PFC priority's PG and queue are lossless on every RoCE port, every other queue lossy,
    each queue named once; the PG's headroom is left to the dynamic model (profile NULL), which
    needs the port's cable length; the PFC watchdog watches every lossless port."""
    assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
    assert db["DEVICE_METADATA"]["localhost"]["default_pfcwd_status"] == "enable"
    assert db["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"][str(pfc)] == str(pfc)
    lossless_ports = set(qos_ports(db))
    assert lossless_ports
    pgs: dict[str, dict[int, str]] = {}
    for key, entry in db["BUFFER_PG"].items():
        port, numbers = expanded(key)
        for number in numbers:
            assert number not in pgs.setdefault(port, {}), key
            pgs[port][number] = entry["profile"]
    queues: dict[str, dict[int, str]] = {}
    for key, entry in db["BUFFER_QUEUE"].items():
        port, numbers = expanded(key)
        for number in numbers:
            assert number not in queues.setdefault(port, {}), key
            queues[port][number] = entry["profile"]
    # the SKU's template (buffers_config.j2, dynamic mode) gives every port the same objects
    assert set(pgs) == set(queues) == set(db["PORT"])
    lengths = db["CABLE_LENGTH"]["AZURE"]
    for port in db["PORT"]:
        assert pgs[port] == {0: "ingress_lossy_profile", pfc: "NULL"}
        assert set(queues[port]) == set(range(8))
        assert {q for q, p in queues[port].items() if p == "egress_lossless_profile"} == {pfc}
        assert {p for q, p in queues[port].items() if q != pfc} == {"q_lossy_profile"}
        assert port in lengths, f"{port}: dynamic headroom needs the cable length"
        assert db["BUFFER_PORT_INGRESS_PROFILE_LIST"][port] == {
            "profile_list": "ingress_lossless_profile,ingress_lossy_profile"
        }
        assert db["BUFFER_PORT_EGRESS_PROFILE_LIST"][port] == {
            "profile_list": "egress_lossless_profile,egress_lossy_profile"
        }
    for port in lossless_ports:
        qos = qos_ports(db)[port]
        assert qos["pfc_to_queue_map"] in db["MAP_PFC_PRIORITY_TO_QUEUE"]
        assert qos["pfcwd_sw_enable"] == qos["pfc_enable"] == str(pfc)
        watchdog = db["PFC_WD"][port]
        assert watchdog["action"] == "drop" and int(watchdog["detection_time"]) > 0
    assert set(db["PFC_WD"]) == lossless_ports | {"GLOBAL"}


def test_shipped_frr_conf_is_used_as_written() -> None:
    """split-unified: SONiC's bgp container keeps /etc/frr/frr.conf and loads it with vtysh -b
    (unified would render its own from CONFIG_DB); no BGP_NEIGHBOR, so bgpcfgd adds no peers."""
    files = roce_lab()
    dbs = config_dbs(files)
    for name, db in dbs.items():
        assert db["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "split-unified"
        assert "BGP_NEIGHBOR" not in db
        assert f"configs/{name}/frr.conf" in files


def test_qos_defaults_on_every_switch() -> None:
    dbs = config_dbs(roce_lab())
    assert {db["DEVICE_METADATA"]["localhost"]["type"] for db in dbs.values()} == {
        "BackEndToRRouter",
        "BackEndLeafRouter",
    }
    for db in dbs.values():
        expect_qos(db, DEFAULTS)
        expect_lossless_buffers(db, 3)  # DEFAULTS["pfc"]


def test_qos_comes_from_the_spec(tmp_path: Path) -> None:
    files = with_custom_qos("roce-lab", "    os: sonic\n", tmp_path)
    for db in config_dbs(files).values():
        expect_qos(db, CUSTOM)
        expect_lossless_buffers(db, 5)  # CUSTOM["pfc"]


def test_inconsistent_qos_is_a_spec_error(tmp_path: Path) -> None:
    text = (
        (EXAMPLES / "roce-lab.yaml")
        .read_text()
        .replace("    os: sonic\n", "    os: sonic\n    qos: {pfc_priority: 4}\n")
    )
    with pytest.raises(SpecError) as raised:
        compile_text(text, tmp_path)
    message = str(raised.value)
    assert "networks.fabric.qos.pfc_priority" in message and "would not be lossless" in message
    assert "spec.yaml:" in message  # points at the spec line
