"""NetBox feed: the import set is complete and importable in file order - every object a row
names (site, rack, manufacturer, role, device type, device, interface) is created by an earlier
file or earlier in the same file - and it holds the whole design: every device (PDUs included),
every cabled port, every address, every cable; racked devices fit their rack without overlap.

NetBox is not packaged for Debian, so the check is against its import forms: required columns,
and choice values copied from NetBox's dcim/ipam choices. The release pinned is NetBox v4.6.8
(netbox/dcim/forms/bulk_import.py, netbox/dcim/choices.py); a real NetBox 4.6.8 loads the
files whole in file order (docs/netbox.md).
"""

from __future__ import annotations

import csv
import io
import ipaddress
import re

import pytest

from fabricc.emit.provisioning import netbox
from fabricc.emit.provisioning.netbox import FILES
from fabricc.emit.tables import csv_text
from fabricc.ir import EXTERNAL
from tests.provisioning_support import provisioning
from tests.support import EXAMPLE_NAMES, compiled

# From NetBox 4.6.8's import forms (dcim/forms/bulk_import.py, ipam/forms/bulk_import.py):
# columns each object needs. A rack without a rack type needs its width and height
# (RackImportForm.clean, since v4.1.8: "Width must be set if not specifying a rack type.").
REQUIRED = {
    "01-sites.csv": {"name", "slug", "status"},
    "02-racks.csv": {"site", "name", "status", "width", "u_height"},
    "03-manufacturers.csv": {"name", "slug"},
    "04-device-roles.csv": {"name", "slug"},
    "05-device-types.csv": {"manufacturer", "model", "slug"},
    "06-devices.csv": {"role", "manufacturer", "device_type", "site", "status"},
    "07-interfaces.csv": {"device", "name", "type"},
    "08-ip-addresses.csv": {"address", "status"},
    "09-cables.csv": {
        "side_a_device",
        "side_a_type",
        "side_a_name",
        "side_b_device",
        "side_b_type",
        "side_b_name",
    },
}
STATUSES = {
    "01-sites.csv": {"planned", "staging", "active", "decommissioning", "retired"},
    "02-racks.csv": {"reserved", "available", "planned", "active", "deprecated"},
    "06-devices.csv": {"offline", "active", "planned", "staged", "failed", "inventory"},
    "08-ip-addresses.csv": {"active", "reserved", "deprecated", "dhcp", "slaac"},
    "09-cables.csv": {"connected", "planned", "decommissioning"},
}
INTERFACE_TYPES = {
    "virtual", "lag", "1000base-t", "10gbase-x-sfpp", "25gbase-x-sfp28", "100gbase-x-qsfp28",
    "200gbase-x-qsfp56", "400gbase-x-osfp", "800gbase-x-osfp", "infiniband-edr",
    "infiniband-hdr", "infiniband-ndr", "infiniband-xdr", "other",
}  # fmt: skip
CABLE_TYPES = {"dac-passive", "dac-active", "aoc", "mmf-om4", "smf-os2", "cat6"}  # dcim.choices
RACK_WIDTHS = {"10", "19", "21", "23"}  # dcim.choices.RackWidthChoices (inches)
SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")


def tables(example: str) -> dict[str, list[dict[str, str]]]:
    files = provisioning(example)
    assert sorted(p for p in files if p.startswith("netbox/")) == [f"netbox/{f}" for f in FILES]
    return {name: list(csv.DictReader(io.StringIO(files[f"netbox/{name}"]))) for name in FILES}


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_netbox_import_set_is_complete_and_ordered(example: str) -> None:
    fabric, _ = compiled(example)
    t = tables(example)
    for name, rows in t.items():
        assert rows, name
        assert REQUIRED[name] <= set(rows[0]), name
        for row in rows:
            assert all(row[c] for c in REQUIRED[name]), (name, row)
            if name in STATUSES:
                assert row["status"] in STATUSES[name], (name, row)
            if "slug" in row:
                assert SLUG.match(row["slug"]), row
            if name == "02-racks.csv":
                assert row["width"] in RACK_WIDTHS and int(row["u_height"]) > 0, row
    sites = {r["name"] for r in t["01-sites.csv"]}
    racks = {r["name"]: int(r["u_height"]) for r in t["02-racks.csv"] if r["site"] in sites}
    makers = {r["name"] for r in t["03-manufacturers.csv"]}
    roles = {r["name"] for r in t["04-device-roles.csv"]}
    types = {r["model"]: r for r in t["05-device-types.csv"] if r["manufacturer"] in makers}
    # every device of the design, PDUs included, on objects created before it
    devices = {r["name"]: r for r in t["06-devices.csv"]}
    assert sorted(devices) == sorted(fabric.devices)
    occupied: dict[str, dict[int, str]] = {}
    for name, row in devices.items():
        assert row["role"] in roles and row["device_type"] in types and row["site"] in sites
        assert types[row["device_type"]]["manufacturer"] == row["manufacturer"]
        if fabric.devices[name].kind == EXTERNAL:  # the site network: at the site, unracked
            assert not row["rack"] and not row["position"], row
            continue
        assert row["rack"] in racks
        if row["position"]:
            height = int(types[row["device_type"]]["u_height"])
            units = range(int(row["position"]), int(row["position"]) + height)
            assert units.stop - 1 <= racks[row["rack"]], name
            for u in units:
                assert occupied.setdefault(row["rack"], {}).setdefault(u, name) == name, (name, u)
            assert row["face"] in ("front", "rear")
    assert any(d.kind == "pdu" for d in fabric.devices.values())
    # interfaces on devices; LAG members name a LAG of their device
    interfaces = {(r["device"], r["name"]): r for r in t["07-interfaces.csv"]}
    assert len(interfaces) == len(t["07-interfaces.csv"])
    for (device, _), row in interfaces.items():
        assert device in devices and row["type"] in INTERFACE_TYPES, row
        if row["lag"]:
            assert interfaces[(device, row["lag"])]["type"] == "lag"
    # every cable of the design between two imported interfaces
    cabled = [link for link in fabric.links if link.cable is not None]
    assert len(t["09-cables.csv"]) == len(cabled)
    for row, link in zip(t["09-cables.csv"], cabled, strict=True):
        assert (row["side_a_device"], row["side_a_name"]) == (link.a, link.a_port)
        assert (row["side_b_device"], row["side_b_name"]) == (link.b, link.b_port)
        assert (link.a, link.a_port) in interfaces and (link.b, link.b_port) in interfaces
        assert row["type"] in CABLE_TYPES
    # every address of the design on an imported interface, none twice
    addresses = [r["address"] for r in t["08-ip-addresses.csv"]]
    assert len(set(addresses)) == len(addresses)
    for row in t["08-ip-addresses.csv"]:
        ipaddress.ip_interface(row["address"])
        assert (row["device"], row["interface"]) in interfaces, row
    hosts = {a.split("/")[0] for a in addresses}
    for d in fabric.devices.values():
        assert {ip for ip in (d.mgmt_ip, d.loopback) if ip} <= hosts, d.name
    for link in fabric.links:
        assert {ip for ip in (link.a_ip, link.b_ip) if ip} <= hosts
    primaries = [r["device"] for r in t["08-ip-addresses.csv"] if r["is_primary"] == "true"]
    assert len(primaries) == len(set(primaries))


def test_dual_homed_hosts_get_an_inband_bond() -> None:
    fabric, _ = compiled("superpod-h100-4su")
    t = tables("superpod-h100-4su")
    dgx = {r["name"]: r for r in t["07-interfaces.csv"] if r["device"] == "dgx001"}
    assert dgx["bond0"]["type"] == "lag"
    members = [n for n, r in dgx.items() if r["lag"] == "bond0"]
    assert len(members) == 2
    address = next(
        r for r in t["08-ip-addresses.csv"] if r["device"] == "dgx001" and r["interface"] == "bond0"
    )
    assert address["address"].split("/")[0] == fabric.devices["dgx001"].inband_ip


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_interfaces_text_is_the_csv_of_the_interface_rows(example: str) -> None:
    """07-interfaces.csv is written from lines spelled at once (netbox._interface_lines): the
    same bytes as the csv writer's table of interfaces()'s rows."""
    fabric, _ = compiled(example)
    header = netbox.HEADERS["07-interfaces.csv"]
    rows = netbox.interfaces(fabric)
    assert netbox._interface_lines(fabric) == list(map(",".join, rows))  # type: ignore[arg-type]
    assert netbox.interfaces_text(fabric) == csv_text(header, rows)


def test_interfaces_text_quotes_a_cell_that_is_not_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cell with a comma or like a formula (here the management SVI's name) takes the csv
    writer's quotes and apostrophe, as every table does (emit/tables.csv_text)."""
    fabric, _ = compiled("roce-lab")
    monkeypatch.setattr(netbox, "_svi", lambda _fabric: "=vlan,1")
    text = netbox.interfaces_text(fabric)
    assert text == csv_text(netbox.HEADERS["07-interfaces.csv"], netbox.interfaces(fabric))
    assert ',"\'=vlan,1",virtual,true,,management SVI\n' in text
