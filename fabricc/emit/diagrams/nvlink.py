"""Diagram `nvlink-<model>`: the NVLink domain of each GPU system model in the design.

Consumes the Fabric IR and the catalog; produces one Diagram per model. A node-scope domain
(DGX, HGX) is small and laid out by `dot`: NVSwitch chips, the GPUs wired to every chip, and
under each GPU its NIC (port name, RDMA device, rail colour). A rack-scale domain (GB200 NVL72)
is pinned: the compute trays over the NVLink switch trays, every tray wired to every switch tray.
Link counts follow from the catalog: NVLinks per GPU spread evenly over the switch chips.
"""

from __future__ import annotations

from itertools import pairwise

from fabricc.catalog.models import NodeModel
from fabricc.emit.diagrams import style
from fabricc.emit.diagrams.dot import Html
from fabricc.emit.diagrams.layout import Box, Scene
from fabricc.emit.diagrams.model import PINNED, RANKED, Diagram
from fabricc.emit.diagrams.ranked import cell, ranked_graph
from fabricc.ir import Fabric, NvlinkDomain


def spread(links: int, chips: int) -> list[int]:
    """NVLinks of one GPU per switch chip; the remainder goes to the outermost chips first
    (DGX H100: 18 links over 4 NVSwitch chips gives 5, 4, 4, 5)."""
    base, extra = divmod(links, chips)
    order = [i for pair in zip(range(chips), reversed(range(chips)), strict=True) for i in pair]
    favoured = list(dict.fromkeys(order))[:extra]
    return [base + (1 if chip in favoured else 0) for chip in range(chips)]


def node_domain(model_key: str, model: NodeModel, example: str, count: int) -> Diagram:
    assert model.nvlink is not None and model.gpu is not None
    chips = model.nvlink.switch_chips
    gpus = model.gpus
    per_chip = spread(model.gpu.nvlink_links, chips) if chips else []
    name = f"nvlink-{model_key}"
    graph = ranked_graph(name, f"NVLink domain · {model_key}", model.description)
    graph.edge_defaults["color"] = style.NODE["nvlink-switch"].stroke
    switch_tone = style.NODE["nvlink-switch"]
    for chip in range(chips):
        graph.node(
            f"nvs{chip}",
            label=Html(cell(f"NVSwitch {chip + 1}", 9, bold=True)),
            fillcolor=switch_tone.fill,
            color=switch_tone.stroke,
            width="1.3",
        )
    nic_of: dict[int, list[str]] = {}
    for port in model.ports:
        if port.gpu is not None:
            nic_of.setdefault(port.gpu, []).append(port.name)
    rdma = {p.name: p.rdma_device for p in model.ports}
    for gpu in range(gpus):
        graph.node(
            f"gpu{gpu}",
            label=Html(
                f"{cell(f'GPU {gpu}', 9, bold=True)}<BR/>{cell(model.gpu.model, 7, style.MUTED)}"
            ),
            fillcolor=style.GPU.fill,
            color=style.GPU.stroke,
        )
        for nic in nic_of.get(gpu, []):
            device = rdma.get(nic)
            text = f"{cell(nic, 8, bold=True)}"
            if device:
                text += f"<BR/>{cell(device, 7, style.MUTED)}"
            text += f"<BR/>{cell(f'rail {gpu + 1}', 7, style.rail_text(gpu))}"
            graph.node(
                f"nic-{nic}",
                label=Html(text),
                fillcolor=style.rail_tint(gpu),
                color=style.rail_hex(gpu),
            )
    others: dict[str, list[str]] = {}
    for port in model.ports:
        if port.gpu is None:
            others.setdefault(port.role, []).append(port.name)
    if others:
        rows = "".join(
            f'<TR><TD ALIGN="LEFT">{cell(role, 8, style.network_tone(role).stroke, True)}</TD>'
            f'<TD ALIGN="LEFT">{cell(", ".join(names), 8)}</TD></TR>'
            for role, names in others.items()
        )
        graph.node(
            "other-ports",
            label=Html(
                f'<TABLE BORDER="0" CELLSPACING="2" CELLPADDING="1"><TR><TD COLSPAN="2" '
                f'ALIGN="LEFT">{cell("Other ports", 8, style.MUTED, True)}</TD></TR>{rows}'
                "</TABLE>"
            ),
            shape="box",
            style="rounded,filled",
            fillcolor=style.PAPER,
            color=style.HAIRLINE,
        )
    for gpu in range(gpus):
        for chip, links in enumerate(per_chip):
            graph.edge(
                f"nvs{chip}",
                f"gpu{gpu}",
                penwidth=f"{0.5 + 0.25 * links:g}",
                tooltip=f"GPU {gpu} – NVSwitch {chip + 1}: {links} NVLinks",
            )
        for nic in nic_of.get(gpu, []):
            graph.edge(
                f"gpu{gpu}",
                f"nic-{nic}",
                color=style.FAINT,
                style="dashed",
                tooltip=f"GPU {gpu} – {nic}: PCIe",
            )
    # Rows in order: flat invisible edges keep the chips, GPUs and NICs left to right.
    rank_rows = [
        [f"nvs{c}" for c in range(chips)],
        [f"gpu{g}" for g in range(gpus)],
        [f"nic-{p}" for g in range(gpus) for p in nic_of.get(g, [])]
        + (["other-ports"] if others else []),
    ]
    for row in rank_rows:
        for a, b in pairwise(row):
            graph.edge(a, b, style="invis")
        graph.same_rank(row)
    links_text = ", ".join(str(n) for n in per_chip)
    caption = (
        f"One {model_key} ({style.plural(count, 'system')} in this design, e.g. {example}): "
        f"{gpus} GPUs with {model.gpu.nvlink_links} NVLinks each, spread over {chips} NVSwitch "
        f"chips ({links_text} links per GPU; line width shows the count); under each GPU its "
        "NIC, coloured by rail."
    )
    labels = (
        *(f"NVSwitch {c + 1}" for c in range(chips)),
        *(f"GPU {g}" for g in range(gpus)),
        *(nic for g in range(gpus) for nic in nic_of.get(g, [])),
    )
    return Diagram(
        name, f"NVLink domain · {model_key}", caption, "nvlink", RANKED, graph.source(), labels
    )


def rack_domain(model_key: str, model: NodeModel, domain: NvlinkDomain, count: int) -> Diagram:
    assert model.nvlink is not None
    nvlink = model.nvlink
    trays = domain.members
    switches = domain.switch_trays
    chips_per_tray = nvlink.switch_chips // max(len(switches), 1)
    gpus_per_tray = nvlink.gpus // max(len(trays), 1)
    links_per_gpu = domain.links_per_gpu
    per_chip = links_per_gpu // max(nvlink.switch_chips, 1)
    per_pair = gpus_per_tray * chips_per_tray * per_chip
    name = f"nvlink-{model_key}"
    scene = Scene(
        name,
        f"NVLink domain · {model_key}",
        f"{len(trays)} compute trays × {gpus_per_tray} GPUs = {nvlink.gpus} GPUs · "
        f"{len(switches)} NVLink switch trays × {chips_per_tray} NVSwitch chips",
    )
    tray_tone = style.NODE["compute-tray"]
    switch_tone = style.NODE["nvlink-switch"]
    tray_boxes = [
        Box(
            tray,
            tray.removeprefix(f"{domain.name}-"),
            tray_tone,
            (f"{gpus_per_tray} GPU",),
            pips=tuple(style.GPU.stroke for _ in range(gpus_per_tray)),
            width=50,
            tooltip=tray,
        )
        for tray in trays
    ]
    switch_boxes = [
        Box(
            tray,
            tray.removeprefix(f"{domain.name}-"),
            switch_tone,
            (f"{chips_per_tray} × NVSwitch",),
            pips=tuple(switch_tone.stroke for _ in range(chips_per_tray)),
            width=78,
            tooltip=tray,
        )
        for tray in switches
    ]
    top = scene.add_row("COMPUTE", f"{len(trays)} trays", tray_boxes)
    bottom = scene.add_row("NVLINK", f"{len(switches)} switch trays", switch_boxes)
    scene.gap = 8.0
    scene.place(row_gaps=[150.0])
    scene.draw_boxes()
    for tray in trays:
        for switch in switches:
            scene.link(
                tray,
                switch,
                colour=switch_tone.stroke + "80",
                width=0.5,
                tooltip=f"{tray} – {switch}: {per_pair} NVLinks",
            )
    scene.gutter(
        [
            (
                (top.y + bottom.y) / 2,
                [f"each line: {per_pair} NVLinks", f"{nvlink.gpus * links_per_gpu:,} in all"],
            )
        ]
    )
    caption = (
        f"One {model_key} rack ({style.plural(count, 'rack')} in this design, e.g. "
        f"{domain.name}): {len(trays)} compute trays of {gpus_per_tray} GPUs and "
        f"{len(switches)} NVLink switch trays of {chips_per_tray} NVSwitch chips form one "
        f"{nvlink.gpus}-GPU NVLink domain. Every GPU has {links_per_gpu} NVLinks, one to each "
        f"chip, so every compute tray has {per_pair} links to every switch tray."
    )
    labels = (*trays, *switches)
    return Diagram(name, scene.title, caption, "nvlink", PINNED, scene.source(), tuple(labels))


def nvlink_diagrams(fabric: Fabric) -> list[Diagram]:
    catalog = fabric.loaded.catalog.catalog
    spec = fabric.loaded.spec
    seen: dict[str, tuple[NvlinkDomain, int]] = {}
    for domain in fabric.nvlink_domains:
        device = fabric.devices[domain.members[0]]
        key = (
            spec.nodes[device.group].model
            if domain.scope == "rack" and device.group is not None
            else device.model
        )
        first, count = seen.get(key, (domain, 0))
        seen[key] = (first, count + 1)
    diagrams = []
    for key, (domain, count) in seen.items():
        model = catalog.nodes[key]
        if model.nvlink is None:
            continue
        if domain.scope == "rack":
            diagrams.append(rack_domain(key, model, domain, count))
        elif model.gpu is not None:
            diagrams.append(node_domain(key, model, domain.name, count))
    return diagrams
