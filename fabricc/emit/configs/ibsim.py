"""Emit stage, configs: the ibsim topology file of one InfiniBand subnet.

Consumes an IbSubnet; produces configs/<subnet>/ibsim.net in ibsim's net format (a superset of
ibnetdiscover output): every node preceded by its explicit switchguid=/caguid= line, every link
written on both ends with IB port numbers, CAs first - a subnet-manager node's CA at the very top,
because ibsim attaches the SM and the diagnostic tools to the first node in the file.
"""

from __future__ import annotations

from fabricc.emit import Artifact
from fabricc.emit.configs.guids import guid_text
from fabricc.emit.configs.ibfabric import IbSubnet
from fabricc.emit.templating import render


def ibsim_file(design: str, subnet: IbSubnet) -> Artifact:
    records = [
        (
            "switchguid" if node.switch else "caguid",
            guid_text(node.node_guid),
            "Switch" if node.switch else "Ca",
            node.port_count,
            node.name,
            "".join(  # a list, not a generator: join builds one anyway
                [
                    f'[{port}]\t"{far}"[{far_port}]\n'
                    for port, (far, far_port) in sorted(node.links.items())
                ]
            ),
        )
        for node in subnet.nodes.values()
    ]
    text = render("ibsim/ibsim.net.j2", design=design, subnet=subnet, records=records)
    return f"configs/{subnet.folder}/ibsim.net", text
