"""Switch operating systems per catalog model and SONiC beyond Mellanox.

A network's os must be one its switch models run (catalog operating_systems), a model that names
none gets no config files and a warning, and SONiC takes the platform, SKU, port layout and
buffers of Broadcom boxes from sonic-buildimage's device tree as it does NVIDIA's. Expected values
are read from github.com/sonic-net/sonic-buildimage at 086b03bd: device/dell/x86_64-dell_z9864f-r0
and device/arista/x86_64-arista_7060dx5_64s (platform.json, hwsku.json, port_config.ini), the
Dell SKUs' buffers_defaults_t1.j2 and pg_profile_lookup.ini.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabricc.catalog.loader import load_catalog
from fabricc.catalog.sonic import SonicPlatform, SonicSwitch, sonic_platforms, sonic_switch
from fabricc.emit.configs.qos import qos_plan
from fabricc.emit.configs.sonic import headroom_lengths, static_buffer_tables
from fabricc.errors import DesignError, Severity
from tests.support import EXAMPLES, compile_text, compiled


def platform_of(model: str) -> SonicPlatform:
    support = load_catalog().catalog.switches[model].os_support("sonic")
    assert support is not None
    return sonic_platforms()[support.platform]


def switch(model: str, ways: dict[int, int]) -> SonicSwitch:
    sizes = [g.count for g in load_catalog().catalog.switches[model].port_groups]
    result = sonic_switch(platform_of(model), sizes, ways)
    assert not isinstance(result, str), result
    return result


def port(sw: SonicSwitch, name: str) -> tuple[str, str, int, int, str]:
    (found,) = [p for p in sw.ports if p.name == name]
    return found.lanes, found.alias, found.index, found.speed, found.mode


def lab(switches: str, os: str) -> str:
    text = (EXAMPLES / "roce-lab.yaml").read_text()
    assert "    os: sonic\n" in text
    return text.replace("    os: sonic\n", f"    os: {os}\n    switches: {switches}\n")


# -- which OS a switch runs -------------------------------------------------------------------


def test_cumulus_on_a_non_nvidia_switch_is_refused_with_the_choices(tmp_path: Path) -> None:
    with pytest.raises(DesignError) as failure:
        compile_text(lab("{leaf: z9864f, spine: z9864f}", "cumulus"), tmp_path)
    (found,) = [d for d in failure.value.diagnostics if d.severity is Severity.ERROR]
    assert found.path == "networks.fabric.os"
    assert found.location is not None and found.location.line > 0
    assert "z9864f (Dell) runs sonic" in found.message
    assert "the choices for this network: sonic" in found.message
    assert found.hint == "set os to one of: sonic"


def test_a_mixed_network_lists_only_the_os_every_model_runs(tmp_path: Path) -> None:
    """SN5600 leaves run Cumulus and SONiC, Z9864F spines SONiC only: Cumulus is refused, and the
    one choice for the whole network is sonic."""
    with pytest.raises(DesignError) as failure:
        compile_text(lab("{leaf: sn5600, spine: z9864f}", "cumulus"), tmp_path)
    message = str(failure.value)
    assert "networks.fabric.os" in message and "choices for this network: sonic" in message
    assert "sn5600" not in message.split("do not run:")[1].split(";")[0]
    _, artifacts = compile_text(lab("{leaf: sn5600, spine: z9864f}", "sonic"), tmp_path)
    dbs = {p: json.loads(t) for p, t in artifacts if p.endswith("config_db.json")}
    platforms = {db["DEVICE_METADATA"]["localhost"]["platform"] for db in dbs.values()}
    assert platforms == {"x86_64-nvidia_sn5600-r0", "x86_64-dell_z9864f-r0"}


def site_spec(tmp_path: Path, catalog: str, os: str) -> str:
    (tmp_path / "site.yaml").write_text(catalog)
    text = lab("{leaf: site-sw, spine: site-sw}", os)
    return text.replace("metadata:", "catalog: [site.yaml]\nmetadata:", 1)


SN5600_ENTRY = """switches:
  site-sw:
    description: an SN5600 described by a site catalog written before operating_systems
    part_number: SITE-SN5600
    source: "NVIDIA Spectrum-4 SN5600 datasheet"
    fabric: ethernet
    asic: Spectrum-4
    height_u: 2
    power_w: 2300
    port_groups:
      - {count: 64, form: osfp, cage_speed: 800, breakouts: [1, 2, 4, 8]}
    mgmt_ports:
      - {name: eth0, cage: eth0, form: rj45, speeds: [1], role: oob, protocols: [ethernet]}
"""


def test_a_site_nvidia_spectrum_switch_without_operating_systems_keeps_cumulus(
    tmp_path: Path,
) -> None:
    fabric, artifacts = compile_text(site_spec(tmp_path, SN5600_ENTRY, "cumulus"), tmp_path)
    paths = {p for p, _ in artifacts}
    assert "configs/fabric-leaf001/startup.yaml" in paths
    assert not [w for w in fabric.warnings if "operating system" in w.message]
    # SONiC needs the platform named
    with pytest.raises(DesignError) as failure:
        compile_text(site_spec(tmp_path, SN5600_ENTRY, "sonic"), tmp_path)
    assert "choices for this network: cumulus" in str(failure.value)


def test_a_site_catalog_names_its_sonic_platform_and_sku(tmp_path: Path) -> None:
    entry = SN5600_ENTRY.replace("    mgmt_ports:", "    vendor: NVIDIA\n    mgmt_ports:") + (
        "    operating_systems:\n"
        "      - {os: sonic, platform: x86_64-nvidia_sn5600-r0, skus: [ACS-SN5600],"
        ' source: "sonic-buildimage device/mellanox/x86_64-nvidia_sn5600-r0"}\n'
    )
    _, artifacts = compile_text(site_spec(tmp_path, entry, "sonic"), tmp_path)
    dbs = [json.loads(t) for p, t in artifacts if p.endswith("config_db.json")]
    assert {db["DEVICE_METADATA"]["localhost"]["hwsku"] for db in dbs} == {"ACS-SN5600"}
    # now it names SONiC only: Cumulus is refused
    with pytest.raises(DesignError) as failure:
        compile_text(site_spec(tmp_path, entry, "cumulus"), tmp_path)
    assert "runs sonic" in str(failure.value)
    # a SKU the platform does not have, or a platform fabricc has no layout of: positioned errors
    for bad, said in (
        ("skus: [ACS-SN5600]", "has no SKU Mellanox-SN9999"),
        ("platform: x86_64-nvidia_sn5600-r0", "no port layout for its SONiC platform"),
    ):
        wrong = entry.replace(
            bad,
            "skus: [Mellanox-SN9999]" if "skus" in bad else "platform: x86_64-nvidia_sn9999-r0",
        )
        with pytest.raises(DesignError) as failure:
            compile_text(site_spec(tmp_path, wrong, "sonic"), tmp_path)
        assert said in str(failure.value) and "networks.fabric.os" in str(failure.value)


def test_a_switch_naming_no_os_gets_no_configs_and_a_warning() -> None:
    """megascale-roce's generic 1GbE management switch names no operating system: a warning, and
    no startup.yaml, frr.conf or ZTP file for any of its switches; the SONiC switches keep theirs."""
    fabric, artifacts = compiled("megascale-roce")
    (warned,) = [w for w in fabric.warnings if "names no operating system" in w.message]
    assert warned.path == "networks.oob.os" and "'mgmt-48x1g'" in warned.message
    oob = [n for n, d in fabric.devices.items() if d.kind == "switch" and d.network == "oob"]
    assert oob
    paths = {p for p, _ in artifacts}
    assert not [p for p in paths if any(f"/{name}/" in p for name in oob)]
    compute = [
        n for n, d in fabric.devices.items() if d.kind == "switch" and d.network == "compute"
    ]
    assert len(compute) == 40
    for name in compute:
        assert f"configs/{name}/config_db.json" in paths
        assert f"configs/{name}/startup.yaml" not in paths


# -- SONiC on Broadcom platforms ----------------------------------------------------------------


def test_z9864f_layout_is_platform_json() -> None:
    """x86_64-dell_z9864f-r0/platform.json: Ethernet<8 (cage - 1)>, cage lanes out of order
    (cage 15 from lane 233, cage 33 from lane 25), etp aliases, 2 SFP28 ports."""
    dell = switch("z9864f", {15: 2, 33: 4, 64: 8})
    assert dell.sku.name == "Dell-Z9864f-O64"  # default_sku; hwsku.json 1x800G
    assert port(dell, "Ethernet0") == ("1,2,3,4,5,6,7,8", "etp1", 1, 800000, "1x800G")
    assert port(dell, "Ethernet112") == ("233,234,235,236", "etp15a", 15, 400000, "2x400G(8)")
    assert port(dell, "Ethernet116") == ("237,238,239,240", "etp15b", 15, 400000, "2x400G(8)")
    assert port(dell, "Ethernet262") == ("31,32", "etp33d", 33, 200000, "4x200G")
    assert port(dell, "Ethernet511") == ("488", "etp64h", 64, 100000, "8x100G")
    assert port(dell, "Ethernet513") == ("516", "etp66", 66, 25000, "1x25G")
    assert len(dell.ports) == 61 + 2 + 4 + 8 + 2


def test_7060dx5_64s_layout_is_platform_json() -> None:
    """x86_64-arista_7060dx5_64s/platform.json: cage 1 on lanes 17-24 and cage 2 on 9-16,
    aliases Ethernet<cage>/<lane>, 2x200G on lanes 1-4 and 5-8 of the cage."""
    arista = switch("dcs-7060dx5-64s", {1: 2, 2: 4, 33: 8})
    assert arista.sku.name == "Arista-7060DX5-64S"
    assert port(arista, "Ethernet4") == (
        "21,22,23,24",
        "Ethernet1/5",
        1,
        200000,
        "2x200G[100G,50G,40G,25G,10G]",
    )
    assert port(arista, "Ethernet10")[:3] == ("11,12", "Ethernet2/3", 2)
    assert port(arista, "Ethernet263")[:4] == ("8", "Ethernet33/8", 33, 50000)
    assert port(arista, "Ethernet504")[:3] == (
        "489,490,491,492,493,494,495,496",
        "Ethernet64/1",
        64,
    )
    assert port(arista, "Ethernet512")[:4] == ("515", "Ethernet65", 65, 10000)
    assert port(arista, "Ethernet513")[:2] == ("513", "Ethernet66")


def test_broadcom_platforms_refuse_splits_platform_json_lacks() -> None:
    sizes = [64]
    assert "allows 1, 2, 4, 8 ports per cage" in str(
        sonic_switch(platform_of("dcs-7060dx5-64s"), sizes, {1: 16})
    )


def test_a_platform_whose_skus_render_no_lossless_buffers_is_refused() -> None:
    """x86_64-arista_7060x6_64pe: its SKUs link common/profiles/th5/gen/BALANCED, which renders
    no buffer objects and has no headroom rows."""
    reason = sonic_switch(sonic_platforms()["x86_64-arista_7060x6_64pe"], [64], {1: 1})
    assert isinstance(reason, str) and "no lossless RoCE port plan" in reason


def test_static_buffers_are_the_dell_templates() -> None:
    """Dell-Z9864f-O64 buffers_defaults_t1.j2 (pools, profiles) and pg_profile_lookup.ini (the
    lossless PG profile buffermgrd makes per speed and cable length)."""
    sku = switch("z9864f", {1: 2}).sku
    assert sku.static is not None and sku.default_cable == "40m"
    plan = qos_plan(compiled("roce-lab")[0], "fabric")
    speeds = {"Ethernet0": 400000, "Ethernet8": 800000, "Ethernet16": 800000}
    lengths = headroom_lengths(
        sku.static,
        speeds,
        {"Ethernet0": "3m", "Ethernet8": "41m", "Ethernet16": "40m"},
        ["Ethernet0", "Ethernet8"],
    )
    # rounded up to the table's next cable length; the unused port keeps its own
    assert lengths == {"Ethernet0": "5m", "Ethernet8": "300m", "Ethernet16": "40m"}
    tables = static_buffer_tables(plan, sku.static, speeds, lengths, ["Ethernet0", "Ethernet8"])
    assert tables["BUFFER_POOL"]["ingress_lossless_pool"] == {
        "size": "162539680",
        "type": "ingress",
        "mode": "dynamic",
        "xoff": "33374584",
    }
    profiles = tables["BUFFER_PROFILE"]
    assert profiles["egress_lossy_profile"] == {
        "pool": "egress_lossless_pool",
        "size": "1778",
        "dynamic_th": "0",
    }
    # "400000 5m 18796 0 393192 0 3556" and "800000 300m 18796 0 1621536 0 3556"
    assert profiles["pg_lossless_400000_5m_profile"] == {
        "pool": "ingress_lossless_pool",
        "size": "18796",
        "xon": "0",
        "xoff": "393192",
        "xon_offset": "3556",
        "dynamic_th": "0",
    }
    assert profiles["pg_lossless_800000_300m_profile"]["xoff"] == "1621536"
    lossless = plan.traffic_class(plan.pfc_priority)
    assert tables["BUFFER_PG"]["Ethernet8|" + str(lossless)] == {
        "profile": "pg_lossless_800000_300m_profile"
    }
    assert f"Ethernet16|{lossless}" not in tables["BUFFER_PG"]  # unused: no lossless PG
    assert tables["BUFFER_PG"]["Ethernet16|0"] == {"profile": "ingress_lossy_profile"}
    with pytest.raises(ValueError, match="301 m"):
        headroom_lengths(sku.static, {"Ethernet0": 400000}, {"Ethernet0": "301m"}, ["Ethernet0"])


def test_megascale_runs_sonic_on_its_tomahawk_4_switches() -> None:
    """The site catalog names x86_64-arista_7060dx5_64s / Arista-7060DX5-64S: leaves split 32
    cages 2x 200G toward the NICs (BREAKOUT_CFG 2x200G), 400G up; the traditional buffer model
    with DellEMC-Z9664f-O64's TH4 objects and headroom rows."""
    _, artifacts = compiled("megascale-roce")
    dbs: dict[str, Any] = {
        p.split("/")[1]: json.loads(t) for p, t in artifacts if p.endswith("config_db.json")
    }
    assert len(dbs) == 40
    leaf = dbs["compute-leaf001"]
    meta = leaf["DEVICE_METADATA"]["localhost"]
    assert (meta["platform"], meta["hwsku"], meta["buffer_model"]) == (
        "x86_64-arista_7060dx5_64s",
        "Arista-7060DX5-64S",
        "traditional",
    )
    modes = [b["brkout_mode"] for b in leaf["BREAKOUT_CFG"].values()]
    assert modes.count("2x200G[100G,50G,40G,25G,10G]") == 32
    assert modes.count("1x400G[200G,100G,50G,40G,25G,10G]") == 32
    assert leaf["BUFFER_POOL"]["egress_lossless_pool"]["size"] == "113620296"
    up = [p for p, e in leaf["PORT"].items() if e.get("speed") == "400000" and "description" in e]
    assert len(up) == 32
    for db in dbs.values():
        lengths = db["CABLE_LENGTH"]["AZURE"]
        assert set(lengths.values()) <= {"5m", "40m", "300m"}
        for key, pg in db["BUFFER_PG"].items():
            if pg["profile"].startswith("pg_lossless_"):
                port_name = key.split("|")[0]
                speed = db["PORT"][port_name]["speed"]
                assert pg["profile"] == f"pg_lossless_{speed}_{lengths[port_name]}_profile"


GENERIC_ENTRY = (
    SN5600_ENTRY.replace("an SN5600 described by", "a generic 64x 800G switch of")
    .replace("    asic: Spectrum-4\n", "    vendor: OEM\n    asic: generic\n")
    .replace('"NVIDIA Spectrum-4 SN5600 datasheet"', '"assumed: the site\'s switch"')
)


@pytest.mark.parametrize("os", ["sonic", "cumulus"])
def test_a_routed_network_of_switches_naming_no_os_builds_without_their_configs(
    tmp_path: Path, os: str
) -> None:
    """Whatever the network's os, switches whose model names none get no config_db.json,
    startup.yaml, frr.conf or ZTP file; the hosts' files are still written."""
    fabric, artifacts = compile_text(site_spec(tmp_path, GENERIC_ENTRY, os), tmp_path)
    (warned,) = [w for w in fabric.warnings if "names no operating system" in w.message]
    assert "its 4 switch(es) of network 'fabric'" in warned.message
    paths = {p for p, _ in artifacts}
    assert not [p for p in paths if "/fabric-leaf" in p or "/fabric-spine" in p]
    assert [p for p in paths if p.startswith("configs/hosts/")]
