"""Config helpers over links (fabricc.emit.configs.index): point_to_point gives what ipaddress
gives for every IPv4 and IPv6 address (hypothesis); LinkIndex holds every Ethernet link from
both ends and nothing else."""

from __future__ import annotations

import ipaddress
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from fabricc.catalog.ports import port_key
from fabricc.emit.configs.index import LinkIndex, point_to_point
from tests.support import compiled


@given(st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)))
def test_point_to_point_is_the_slash_31_of_ipaddress(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    interface = ipaddress.ip_interface(f"{address}/31")
    assert point_to_point(str(address)) == (str(interface), str(interface.network))


def test_link_index_holds_each_ethernet_link_from_both_ends_and_no_other_link() -> None:
    """Only the Ethernet links are indexed (the configs read nothing else); each from its two
    ends, with ports, far ends and addresses swapped, every device's ends in port order."""
    fabric, _ = compiled("superpod-h100-4su")
    index = LinkIndex(fabric)
    ethernet = {n for n, net in fabric.loaded.networks.items() if net.fabric == "ethernet"}
    assert ethernet and set(fabric.networks) - ethernet  # the example has both fabrics
    seen: Counter[int] = Counter()
    for name in fabric.devices:
        ends = index.ends(name)
        assert [e.port for e in ends] == sorted((e.port for e in ends), key=port_key)
        for end in ends:
            link = end.link
            assert link.network in ethernet
            seen[id(link)] += 1
            if end.upward:
                assert (name, end.port, end.far, end.far_port) == (
                    link.a,
                    link.a_port,
                    link.b,
                    link.b_port,
                )
                assert (end.local_ip, end.far_ip) == (link.a_ip, link.b_ip)
            else:
                assert (name, end.port, end.far, end.far_port) == (
                    link.b,
                    link.b_port,
                    link.a,
                    link.a_port,
                )
                assert (end.local_ip, end.far_ip) == (link.b_ip, link.a_ip)
    wanted = {id(link) for link in fabric.links if link.network in ethernet}
    assert set(seen) == wanted
    assert set(seen.values()) == {2}
