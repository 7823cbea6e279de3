"""Config helpers over link addresses (fabricc.emit.configs.index): point_to_point gives what
ipaddress gives for every IPv4 and IPv6 address (hypothesis)."""

from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from fabricc.emit.configs.index import point_to_point


@given(st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)))
def test_point_to_point_is_the_slash_31_of_ipaddress(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    interface = ipaddress.ip_interface(f"{address}/31")
    assert point_to_point(str(address)) == (str(interface), str(interface.network))
