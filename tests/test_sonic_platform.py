"""SONiC platforms, SKUs and port layouts: the SKU follows the port plan, PORT and BREAKOUT_CFG are
what SONiC's portconfig.py derives from the platform's platform.json and the SKU's hwsku.json, the
buffer objects are what the SKU's templates generate, and a model SONiC cannot run is an error.
Expected values are read from sonic-buildimage (master 086b03bd): device/<vendor>/<platform>/."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest

from fabricc.catalog.loader import load_catalog
from fabricc.catalog.sonic import (
    SonicPlatform,
    SonicSwitch,
    sonic_platforms,
    sonic_release_data,
    sonic_releases,
    sonic_switch,
)
from fabricc.emit.configs.qos import qos_plan
from fabricc.emit.configs.sonic import buffer_tables
from fabricc.errors import DesignError
from fabricc.spec.models import NetworkSpec
from tests.configs_support import by_path, config_dbs
from tests.support import EXAMPLES, compile_text, compiled


def platform_of(model: str) -> SonicPlatform:
    support = load_catalog().catalog.switches[model].os_support("sonic")
    assert support is not None, model
    return sonic_platforms()[support.platform]


def switch(model: str, ways: dict[int, int]) -> SonicSwitch:
    catalog = load_catalog().catalog
    sizes = [g.count for g in catalog.switches[model].port_groups]
    result = sonic_switch(platform_of(model), sizes, ways)
    assert not isinstance(result, str), result
    return result


def port(sw: SonicSwitch, name: str) -> tuple[str, str, int, int]:
    (found,) = [p for p in sw.ports if p.name == name]
    return found.lanes, found.alias, found.index, found.speed


def test_every_catalog_ethernet_switch_names_its_sonic_platform() -> None:
    catalog = load_catalog().catalog
    ethernet = {name for name, m in catalog.switches.items() if m.fabric == "ethernet"}
    # the models that run SONiC (the Arista 7060X6-64PE lists EOS only: its SKUs' shared
    # Tomahawk-5 profile renders no lossless buffers)
    sonic = {m for m in ethernet if catalog.switches[m].os_support("sonic") is not None}
    assert "dcs-7060x6-64pe" in ethernet and "dcs-7060x6-64pe" not in sonic
    assert {m: platform_of(m).platform for m in sonic} == {
        "sn5600": "x86_64-nvidia_sn5600-r0",
        "sn5610": "x86_64-nvidia_sn5610n-r0",
        "sn4600c": "x86_64-mlnx_msn4600c-r0",
        "sn2201": "x86_64-nvidia_sn2201-r0",
        "z9864f": "x86_64-dell_z9864f-r0",
        "dcs-7060dx5-64s": "x86_64-arista_7060dx5_64s",
    }
    # the Cumulus Linux HCL's platforms are NVIDIA's Spectrum switches only
    assert {platform_of(m).platform for m in sonic} <= set(sonic_platforms())
    cumulus = {m for m in ethernet if catalog.switches[m].os_support("cumulus") is not None}
    assert cumulus == {"sn5600", "sn5610", "sn4600c", "sn2201"}
    assert all(catalog.switches[m].vendor == "NVIDIA" for m in cumulus)


def test_sku_follows_the_port_plan() -> None:
    every = range(1, 65)
    # default_sku ACS-SN5600: 64x 800G
    assert switch("sn5600", dict.fromkeys(every, 1)).sku.name == "ACS-SN5600"
    # Mellanox-SN5600-O128: every cage 2x 400G (hwsku.json), its SAI profile allows no other split
    assert switch("sn5600", dict.fromkeys(every, 2)).sku.name == "Mellanox-SN5600-O128"
    assert switch("sn5600", {1: 2, 5: 2}).sku.name == "Mellanox-SN5600-O128"
    # Mellanox-SN5600-V256: every cage 4x 200G
    assert switch("sn5600", {1: 4, 2: 4}).sku.name == "Mellanox-SN5600-V256"
    # mixed splits: only ACS-SN5600 breaks out both ways (sai_5600.xml breakout-modes 3)
    assert switch("sn5600", {1: 2, 2: 1}).sku.name == "ACS-SN5600"
    assert switch("sn5600", {1: 4, 2: 1, 3: 1}).sku.name == "ACS-SN5600"
    assert switch("sn5600", {1: 4, 2: 2}).sku.name == "ACS-SN5600"
    assert switch("sn4600c", {1: 1, 2: 2}).sku.name == "ACS-MSN4600C"


def test_plans_sonic_cannot_run() -> None:
    catalog = load_catalog().catalog
    sizes = [g.count for g in catalog.switches["sn4600c"].port_groups]
    # SN4600C platform.json: 1x100G and 2x50G only
    assert "allows 1, 2 ports per cage" in str(sonic_switch(platform_of("sn4600c"), sizes, {3: 4}))
    # sn5600 has no 8x 100G on a lossless SKU (C256S1/C224O8 are lossy-only, not offered)
    sizes = [g.count for g in catalog.switches["sn5600"].port_groups]
    assert "allows 1, 2, 4" in str(sonic_switch(platform_of("sn5600"), sizes, {3: 8}))


def test_sn5600_layout_is_platform_json() -> None:
    acs = switch("sn5600", {18: 2, 64: 4})
    # platform.json Ethernet0: lanes 0-7, index 1, 1x800G alias etp1
    assert port(acs, "Ethernet0") == ("0,1,2,3,4,5,6,7", "etp1", 1, 800000)
    # Ethernet136 (cage 18) 2x400G: etp18a lanes 136-139, etp18b = Ethernet140 lanes 140-143
    assert port(acs, "Ethernet136") == ("136,137,138,139", "etp18a", 18, 400000)
    assert port(acs, "Ethernet140") == ("140,141,142,143", "etp18b", 18, 400000)
    # Ethernet504 (cage 64) 4x200G: Ethernet504/506/508/510, two lanes each
    assert port(acs, "Ethernet510") == ("510,511", "etp64d", 64, 200000)
    # and the 25G SFP port: Ethernet512, lane 512, etp65, index 65, 1x25G[10G]
    assert port(acs, "Ethernet512") == ("512", "etp65", 65, 25000)
    assert len(acs.ports) == 62 + 2 + 4 + 1
    o128 = switch("sn5600", {1: 2})
    # Mellanox-SN5600-O128/port_config.ini: 128x 400G + Ethernet512, last Ethernet508 etp64b
    assert len(o128.ports) == 129
    assert port(o128, "Ethernet508") == ("508,509,510,511", "etp64b", 64, 400000)


def test_other_layouts_are_platform_json() -> None:
    # x86_64-mlnx_msn4600c-r0: Ethernet4 = cage 2, lanes 8-11; 2x50G Ethernet4/Ethernet6
    sn4600c = switch("sn4600c", {2: 2})
    assert port(sn4600c, "Ethernet4") == ("8,9", "etp2a", 2, 50000)
    assert port(sn4600c, "Ethernet6") == ("10,11", "etp2b", 2, 50000)
    assert port(sn4600c, "Ethernet252") == ("504,505,506,507", "etp64", 64, 100000)
    # x86_64-nvidia_sn2201-r0: 48 RJ45 (Ethernet47 lane 188, 1000) and QSFP28 from Ethernet48
    sn2201 = switch("sn2201", {49: 1})
    assert port(sn2201, "Ethernet47") == ("188", "etp48", 48, 1000)
    assert port(sn2201, "Ethernet60") == ("204,205,206,207", "etp52", 52, 100000)


def roce_lab() -> dict[str, dict[str, Any]]:
    return config_dbs(by_path(compiled("roce-lab")[1]))


def test_config_db_names_the_sku_and_writes_its_breakouts() -> None:
    for name, db in roce_lab().items():
        meta = db["DEVICE_METADATA"]["localhost"]
        assert (meta["platform"], meta["hwsku"]) == ("x86_64-nvidia_sn5600-r0", "ACS-SN5600")
        ports, breakouts = db["PORT"], db["BREAKOUT_CFG"]
        assert isinstance(ports, dict) and isinstance(breakouts, dict)
        assert ports["Ethernet512"]["speed"] == "25000", name
        assert breakouts["Ethernet512"] == {"brkout_mode": "1x25G[10G]"}
        for master, entry in breakouts.items():
            children = [p for p in ports.values() if p["index"] == ports[master]["index"]]
            assert len(children) == int(entry["brkout_mode"].split("x")[0])
            assert {p["speed"] for p in children} <= {"800000", "400000", "25000"}
        assert "autoneg" not in ports["Ethernet0"]


def test_buffer_objects_are_the_sku_template() -> None:
    for db in roce_lab().values():
        pools, profiles = db["BUFFER_POOL"], db["BUFFER_PROFILE"]
        assert isinstance(pools, dict) and isinstance(profiles, dict)
        # ACS-SN5600/buffers_defaults_t1.j2 and the shared ACS-MSN2700 objects, dynamic mode
        assert pools["egress_lossless_pool"] == {
            "type": "egress",
            "mode": "dynamic",
            "size": "158229504",
        }
        assert "size" not in pools["ingress_lossy_pool"]
        assert profiles["ingress_lossy_profile"]["pool"] == "ingress_lossy_pool"
        assert profiles["ingress_lossless_profile"] == {
            "pool": "ingress_lossless_pool",
            "size": "0",
            "dynamic_th": "7",
        }
        assert profiles["q_lossy_profile"] == {
            "pool": "egress_lossy_pool",
            "size": "0",
            "dynamic_th": "3",
        }
        # sonic-utilities db_migrator.py: the dynamic model's traffic pattern
        assert db["LOSSLESS_TRAFFIC_PATTERN"] == {
            "AZURE": {"mtu": "1024", "small_packet_percentage": "100"}
        }
        # unused ports take the template's default_cable (5m)
        lengths = db["CABLE_LENGTH"]["AZURE"]
        assert lengths["Ethernet512"] == "5m"


def test_version_and_mac(tmp_path: Path) -> None:
    dbs = roce_lab()
    macs = {db["DEVICE_METADATA"]["localhost"]["mac"] for db in dbs.values()}
    assert len(macs) == len(dbs)
    assert all(int(m[:2], 16) & 0x03 == 0x02 for m in macs)  # locally administered unicast
    assert {str(db["VERSIONS"]) for db in dbs.values()} == {
        str({"DATABASE": {"VERSION": "version_202605_01"}})
    }
    text = (
        (EXAMPLES / "roce-lab.yaml")
        .read_text()
        .replace("    os: sonic\n", '    os: sonic\n    sonic_release: "202505"\n')
    )
    assert 'sonic_release: "202505"' in text
    for db in config_dbs(by_path(compile_text(text, tmp_path)[1])).values():
        assert db["VERSIONS"] == {"DATABASE": {"VERSION": "version_202505_01"}}


def test_a_model_sonic_cannot_run_is_a_positioned_error(tmp_path: Path) -> None:
    text = (
        (EXAMPLES / "roce-lab.yaml")
        .read_text()
        .replace("    os: sonic\n", "    os: sonic\n    switches: {leaf: sn5610, spine: sn5610}\n")
    )
    assert "sn5610" in text
    with pytest.raises(DesignError) as failure:
        compile_text(text, tmp_path)
    message = str(failure.value)
    assert "x86_64-nvidia_sn5610n-r0" in message and "networks.fabric.os" in message
    assert "os: cumulus" in message


def test_every_cage_2x400g_runs_o128(tmp_path: Path) -> None:
    """A single-tier lab: the leaves' only cabled cages run 2x 400G, so the SKU is
    Mellanox-SN5600-O128 and PORT is its port_config.ini (Ethernet4 4,5,6,7 etp1b 1 400000)."""
    text = (EXAMPLES / "roce-lab.yaml").read_text()
    assert "    tiers: 2\n    spines: 2\n" in text
    text = text.replace(
        "    tiers: 2\n    spines: 2\n", "    tiers: 1\n    rail_optimized: false\n"
    )
    dbs = config_dbs(by_path(compile_text(text, tmp_path)[1]))
    assert dbs
    for db in dbs.values():
        assert db["DEVICE_METADATA"]["localhost"]["hwsku"] == "Mellanox-SN5600-O128"
        ports = db["PORT"]
        assert isinstance(ports, dict) and len(ports) == 129
        entry = ports["Ethernet4"]
        assert (entry["lanes"], entry["alias"], entry["index"], entry["speed"]) == (
            "4,5,6,7",
            "etp1b",
            "1",
            "400000",
        )
        # hwsku.json: autoneg off on the 128 cage ports, not on the SFP port
        assert {p.get("autoneg") for n, p in ports.items() if n != "Ethernet512"} == {"off"}
        assert "autoneg" not in ports["Ethernet512"]
        assert db["BREAKOUT_CFG"]["Ethernet504"] == {
            "brkout_mode": "2x400G[200G,100G,50G,40G,25G,10G]"
        }


def test_one_ingress_pool_skus_put_lossy_pgs_on_the_lossless_pool() -> None:
    """Mellanox-SN5600-V256 links Mellanox-SN2700-D48C8/buffers_defaults_objects.j2: no
    ingress_lossy_pool, ingress_lossy_profile on ingress_lossless_pool, one ingress profile."""
    v256 = switch("sn5600", {1: 4})
    assert v256.sku.name == "Mellanox-SN5600-V256"
    plan = qos_plan(compiled("roce-lab")[0], "fabric")
    tables = buffer_tables(plan, v256.sku, ["Ethernet0"], ["Ethernet0"])
    assert "ingress_lossy_pool" not in tables["BUFFER_POOL"]
    assert tables["BUFFER_PROFILE"]["ingress_lossy_profile"]["pool"] == "ingress_lossless_pool"
    assert tables["BUFFER_PORT_INGRESS_PROFILE_LIST"] == {
        "Ethernet0": {"profile_list": "ingress_lossless_profile"}
    }
    assert v256.sku.default_cable == "300m"


def test_every_spec_release_has_a_database_version() -> None:
    """networks.<n>.sonic_release offers exactly the releases data/sonic.yaml maps to a
    VERSIONS|DATABASE version (sonic-utilities db_migrator.py), each version_<release>_NN."""
    field = NetworkSpec.model_fields["sonic_release"]
    assert set(get_args(field.annotation)) == set(sonic_releases())
    assert field.default in sonic_releases()
    for release, version in sonic_releases().items():
        assert version.startswith(f"version_{release}_")


# The version_<release>_NN migration steps each release branch's scripts/db_migrator.py defines
# (github.com/sonic-net/sonic-utilities, read at the commits data/sonic.yaml names): a config_db
# whose VERSIONS|DATABASE names a step the image's branch lacks fails `config reload`'s migration
# (DBMigrator.migrate calls getattr(self, version)).
DB_MIGRATOR_STEPS = {
    "202311": "202305_01 202311_01 202311_02 202311_03",
    "202405": "202305_01 202311_01 202311_02 202311_03 202405_01 202405_02",
    "202411": "202305_01 202311_01 202311_02 202311_03 202405_01 202405_02 202411_01 202411_02",
    "202505": "202305_01 202311_01 202311_02 202311_03 202405_01 202405_02 202411_01 202411_02"
    " 202505_01",
    "202511": "202305_01 202311_01 202311_02 202311_03 202405_01 202405_02 202411_01 202411_02"
    " 202505_01 202511_01",
    "202605": "202305_01 202311_01 202311_02 202311_03 202405_01 202405_02 202411_01 202411_02"
    " 202505_01 202511_01 202605_01",
}


@pytest.mark.parametrize("release", sorted(DB_MIGRATOR_STEPS))
def test_each_release_writes_a_version_its_db_migrator_knows(release: str, tmp_path: Path) -> None:
    """Issue 42 item 7: VERSIONS|DATABASE of a config_db.json built for `release` is a step that
    release's db_migrator.py defines - its CURRENT_VERSION, the last one - and the data names
    the branch it was read from."""
    steps = [f"version_{step}" for step in DB_MIGRATOR_STEPS[release].split()]
    data = sonic_release_data()[release]
    assert list(data.known) == steps
    assert data.version == steps[-1]
    assert f"branch {release} at " in data.source and "db_migrator.py" in data.source
    text = (
        (EXAMPLES / "roce-lab.yaml")
        .read_text()
        .replace("    os: sonic\n", f'    os: sonic\n    sonic_release: "{release}"\n')
    )
    dbs = config_dbs(by_path(compile_text(text, tmp_path)[1]))
    assert dbs
    for db in dbs.values():
        assert db["VERSIONS"]["DATABASE"]["VERSION"] in steps
        assert db["VERSIONS"]["DATABASE"]["VERSION"] == steps[-1]


def test_every_network_sonic_cannot_run_is_named_in_one_run(tmp_path: Path) -> None:
    """The GB300 Spectrum-X example's compute and storage networks both run SN5610: with
    os: sonic each is refused at its own `os`, in the same run (one error per network)."""
    text = (EXAMPLES / "gb300-nvl72-spectrum-x.yaml").read_text()
    assert text.count("    os: cumulus\n") == 2
    with pytest.raises(DesignError) as failure:
        compile_text(text.replace("    os: cumulus\n", "    os: sonic\n"), tmp_path)
    found = [d for d in failure.value.diagnostics if "SONiC cannot run" in d.message]
    assert sorted(d.path for d in found) == ["networks.compute.os", "networks.storage.os"]
