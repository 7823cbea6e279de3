"""Loopbacks and ASNs of routed fabrics: where each tier takes its values from its network's
share of the pools, and the error when a share runs out."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricc.errors import FabriccError
from fabricc.ir import LEAF_SPINE, Fabric
from fabricc.synth.addressing import _Pool, halving_part
from tests.support import EXAMPLES, compile_text, compiled


def switches(fabric: Fabric, network: str, role: str) -> list[tuple[str, int]]:
    return [
        (str(d.loopback), int(d.asn or 0))
        for d in fabric.devices.values()
        if d.kind == "switch" and d.network == network and d.role == role
    ]


def test_leaves_count_up_and_spines_down_within_one_network() -> None:
    fabric, _ = compiled("roce-lab")
    spec = fabric.loaded.spec.addressing
    pool = ipaddress.ip_network(spec.loopbacks)
    leaves = switches(fabric, "fabric", "leaf")
    spines = switches(fabric, "fabric", "spine")
    # one routed network: the whole pool is its share; first and last addresses skipped
    assert [lo for lo, _ in leaves] == [str(pool[1 + i]) for i in range(len(leaves))]
    assert [lo for lo, _ in spines] == [str(pool[-2 - i]) for i in range(len(spines))]
    assert [asn for _, asn in leaves] == [spec.asn.first + i for i in range(len(leaves))]
    # the spines of one plane and pod share the last ASN (RFC 7938)
    assert {asn for _, asn in spines} == {spec.asn.last}


def test_each_routed_network_has_its_own_share() -> None:
    fabric, _ = compiled("gb300-nvl72-spectrum-x")
    spec = fabric.loaded.spec.addressing
    routed = sorted({str(d.network) for d in fabric.devices.values() if d.asn is not None})
    assert routed == ["compute", "storage"]
    # two networks: the pools split in halves, in spec order (compute first)
    half = (spec.asn.last - spec.asn.first + 1) // 2
    low, high = ipaddress.ip_network(spec.loopbacks).subnets(1)
    for network, block, first in (("compute", low, spec.asn.first), ("storage", high, None)):
        first = spec.asn.first + half if first is None else first
        leaves = switches(fabric, network, "leaf")
        assert min(asn for _, asn in leaves) == first
        assert max(asn for _, asn in switches(fabric, network, "spine")) == first + half - 1
        assert all(ipaddress.ip_address(lo) in block for lo, _ in leaves)


def test_asn_share_exhausted_is_an_error(tmp_path: Path) -> None:
    text = (EXAMPLES / "roce-lab.yaml").read_text()
    fabric, _ = compiled("roce-lab")
    asn = fabric.loaded.spec.addressing.asn
    leaves = len(switches(fabric, "fabric", "leaf"))
    # the leaves fit, the spines' shared ASN does not
    assert "\naddressing:" not in text
    text += f"addressing:\n  asn: {{first: {asn.first}, last: {asn.first + leaves - 1}}}\n"
    with pytest.raises(FabriccError) as caught:
        compile_text(text, tmp_path)
    message = str(caught.value)
    assert f"the switches of fabric need {leaves + 1} ASNs" in message
    assert f"its share of the pool has {leaves}" in message


def test_halving_parts_keep_their_place_whatever_follows() -> None:
    parts = [halving_part(1024, k) for k in range(4)]
    assert parts == [range(512), range(512, 768), range(768, 896), range(896, 960)]


STORAGE_FABRIC = """\
metadata: {{name: two-classes}}
site: {{racks_per_row: 12, rack: {{power_kw: 140}}}}
nodes:
  dgx: {{model: dgx-h100, count: {dgx}, nodes_per_rack: 4}}
  array: {{model: storage-node, count: {arrays}}}
networks:
  storage:
    role: storage
    fabric: ethernet
    rail_optimized: true
    endpoints: {{dgx: {{}}, array: {{leaf_downlinks: 16, oversubscription: '1:1'}}}}
"""


def test_a_later_leaf_class_counts_from_its_own_part(tmp_path: Path) -> None:
    """The storage arrays' leaves are a class of their own: their names, loopbacks and ASNs
    come from their own series and part of the share, so more DGX leave them as they were."""

    def leaves(dgx: int) -> dict[str, tuple[str | None, int | None]]:
        fabric, _ = compile_text(STORAGE_FABRIC.format(dgx=dgx, arrays=20), tmp_path)
        return {
            d.name: (d.loopback, d.asn)
            for d in fabric.devices.values()
            if d.kind == "switch" and d.role == "leaf" and d.series == "array"
        }

    small, large = leaves(32), leaves(64)
    assert sorted(small) == [f"storage-array-leaf{n:03d}" for n in range(1, len(small) + 1)]
    assert small == {name: large[name] for name in small}
    pool = ipaddress.ip_network("10.0.0.0/20")  # the default pool, one routed network
    # the share skips the pool's first address; the second class starts at its middle
    assert min(ipaddress.ip_address(lo) for lo, _ in small.values() if lo) == pool[1 + 4094 // 2]


@given(st.integers(0, 2**32 - 1))
def test_pool_text_is_the_dotted_quad_of_ipaddress(value: int) -> None:
    assert _Pool("0.0.0.0/0").text(value) == str(ipaddress.IPv4Address(value))


def test_leaf_uplink_p2p_addresses_stay_when_a_class_grows(tmp_path: Path) -> None:
    """With addressing.p2p, a leaf's uplink /31s come from its leaf slot: more DGX (leaves of
    the first class) leave every existing leaf's uplink addresses as they were."""

    def uplinks(dgx: int) -> dict[tuple[str, str], tuple[str | None, str | None]]:
        text = STORAGE_FABRIC.format(dgx=dgx, arrays=20) + "addressing: {p2p: 10.96.0.0/16}\n"
        fabric, _ = compile_text(text, tmp_path)
        return {
            (link.a, link.a_port): (link.a_ip, link.b_ip)
            for link in fabric.links
            if link.kind == LEAF_SPINE
        }

    small, large = uplinks(32), uplinks(64)
    assert small and all(a and b for a, b in small.values())
    assert small == {key: large[key] for key in small}
    assert len({a for a, _ in large.values()}) == len(large)  # no /31 given twice
