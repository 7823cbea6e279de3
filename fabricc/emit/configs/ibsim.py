"""Emit stage, configs: the ibsim topology file of one InfiniBand subnet.

Consumes an IbSubnet; produces configs/<subnet>/ibsim.net in ibsim's net format (a superset of
ibnetdiscover output): every node preceded by its explicit switchguid=/caguid= line, every link
written on both ends with IB port numbers, CAs first - a subnet-manager node's CA at the very top,
because ibsim attaches the SM and the diagnostic tools to the first node in the file.
"""

from __future__ import annotations

from fabricc.checks.guids import guid_text
from fabricc.emit import Artifact
from fabricc.emit.configs.ibfabric import IbNode, IbSubnet
from fabricc.emit.templating import render


def ibsim_file(design: str, subnet: IbSubnet) -> Artifact:
    """templates/ibsim/ibsim.net.j2 around the node records, formatted here in one pass (one
    record per node and port of the subnet: a hundred thousand at 100k GPUs)."""
    records: list[str] = []
    append = records.append
    for node in subnet.nodes.values():
        links = _links(node)
        if node.switch:
            append(
                f"switchguid={guid_text(node.node_guid)}\n"
                f'Switch\t{node.port_count} "{node.name}"\n{links}\n'
            )
        else:
            append(
                f'caguid={guid_text(node.node_guid)}\nCa\t{node.port_count} "{node.name}"\n{links}\n'
            )
    first = next(iter(subnet.nodes.values()))
    text = render(
        "ibsim/ibsim.net.j2", design=design, subnet=subnet, first=first.name, nodes="".join(records)
    )
    return f"configs/{subnet.folder}/ibsim.net", text


def _links(node: IbNode) -> str:
    """The node's links, one line each in port order."""
    if len(node.links) == 1:  # a CA's one link (most nodes): no list and no sort
        [(port, (far, far_port))] = node.links.items()
        return f'[{port}]\t"{far}"[{far_port}]\n'
    # a list, not a generator: join builds one anyway
    return "".join(
        [f'[{port}]\t"{far}"[{far_port}]\n' for port, (far, far_port) in sorted(node.links.items())]
    )
