"""Analysis, part 7: how long an all-reduce takes on the design, two levels deep.

Consumes the compute network's endpoint bandwidth per GPU, its rail-aligned bisection, the NVLink
domain size and the NVLink bandwidth of the GPUs; produces all-reduce estimates by the
bandwidth terms of a hierarchical algorithm: reduce-scatter inside each NVLink domain, an
all-reduce of the 1/g shard across domains on the fabric (each GPU on its own NIC), all-gather
inside the domain - the phases one after the other, no overlap, latency ignored (large messages).
algbw = size / time and busbw = algbw x 2(n-1)/n, as nccl-tests define them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

GB = 1e9  # bytes; NCCL and nccl-tests report GB/s in decimal units
DEFAULT_MESSAGE_GB = 140.0  # fp16 gradient of a 70B-parameter model: 70e9 x 2 bytes


@dataclass(frozen=True, slots=True)
class Link:
    """What one GPU has to work with."""

    domain_gpus: int  # GPUs in one NVLink domain (1: no NVLink)
    nvlink_gbs: float  # NVLink GB/s per GPU and direction
    fabric_gbs: float  # fabric GB/s per GPU and direction, after the bisection factor


@dataclass(frozen=True, slots=True)
class AllReduce:
    gpus: int
    message_gb: float
    nvlink_s: float
    fabric_s: float
    time_s: float
    algbw_gbs: float
    busbw_gbs: float


def all_reduce(link: Link, gpus: int, message_gb: float) -> AllReduce:
    size = message_gb * GB
    g = max(1, min(link.domain_gpus, gpus))
    domains = math.ceil(gpus / g)
    nvlink_s = 0.0
    if g > 1:
        # Reduce-scatter and all-gather (or, in one domain, the all-reduce itself): each moves
        # (g-1)/g of the message through every GPU's NVLink.
        nvlink_s = 2 * (g - 1) / g * size / (link.nvlink_gbs * GB)
    fabric_s = 0.0
    if domains > 1:
        fabric_s = 2 * (domains - 1) / domains * (size / g) / (link.fabric_gbs * GB)
    time_s = nvlink_s + fabric_s
    algbw = size / time_s / GB if time_s else 0.0
    busbw = algbw * 2 * (gpus - 1) / gpus if gpus else 0.0
    return AllReduce(gpus, message_gb, nvlink_s, fabric_s, time_s, algbw, busbw)


def gpu_counts(total: int) -> list[int]:
    """Powers of two from 2 up to the total, and the total: the points of the curve."""
    counts = []
    n = 2
    while n < total:
        counts.append(n)
        n *= 2
    if total >= 2:
        counts.append(total)
    return counts
