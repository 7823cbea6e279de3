"""Emit helper (configs): the lossless RoCE plan of one ethernet network, from network.qos.

Consumes the network's RoceQos (defaults: NVIDIA `nv set qos roce`, Cumulus Linux user guide: RoCE);
produces the numbers every switch OS and every host NIC is configured with, so that switch and NIC
agree by construction: DSCP -> switch priority -> traffic class (RoCE and CNP get their own class,
everything else class 0), PFC on the RoCE priority, ECN thresholds in bytes, DWRR weights, and the
NCCL traffic class byte (DSCP << 2).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.errors import SpecError, error
from fabricc.ir import Fabric
from fabricc.spec.yamlsource import format_path

KIB = 1024  # ECN thresholds are given in KB; switch ASICs count bytes (SONiC's AZURE_LOSSLESS
# 1,048,576 is 1 MiB), so KB is read as KiB.
PRIORITIES = range(8)
DSCPS = range(64)


@dataclass(frozen=True, slots=True)
class QosPlan:
    roce_dscp: int
    roce_priority: int
    cnp_dscp: int
    cnp_priority: int
    pfc_priority: int
    ecn_min_bytes: int
    ecn_max_bytes: int
    ecn_probability: int
    roce_weight: int  # DWRR share of the RoCE class, percent
    default_weight: int  # DWRR share of class 0

    @property
    def ecn_min_kb(self) -> int:
        """The spec's ECN minimum threshold in KB."""
        return self.ecn_min_bytes // KIB

    @property
    def ecn_max_kb(self) -> int:
        return self.ecn_max_bytes // KIB

    @property
    def default_class(self) -> int:
        return 0

    def traffic_class(self, priority: int) -> int:
        """Switch priority -> traffic class: RoCE and CNP keep their own, the rest share 0."""
        return priority if priority in (self.roce_priority, self.cnp_priority) else 0

    def dscp_priority(self, dscp: int) -> int:
        if dscp == self.roce_dscp:
            return self.roce_priority
        if dscp == self.cnp_dscp:
            return self.cnp_priority
        return 0

    @property
    def pfc_vector(self) -> str:
        """mlnx_qos --pfc argument: one 0/1 per priority."""
        return ",".join("1" if p == self.pfc_priority else "0" for p in PRIORITIES)

    @property
    def roce_tos(self) -> int:
        """The IP ToS byte of RoCE packets (NCCL_IB_TC, RDMA-CM ToS): DSCP << 2."""
        return self.roce_dscp << 2


def qos_plan(fabric: Fabric, network: str) -> QosPlan:
    resolved = fabric.loaded.networks[network]
    qos = resolved.spec.qos
    path = (*resolved.path, "qos")
    problems = []

    def fail(message: str, key: str, hint: str | None = None) -> None:
        at = (*path, key)
        problems.append(
            error(
                message,
                path=format_path(at),
                location=fabric.loaded.source.value(at),
                hint=hint,
            )
        )

    if qos.roce_dscp == qos.cnp_dscp:
        fail("RoCE data and CNPs need different DSCPs", "cnp_dscp")
    if qos.roce_priority == qos.cnp_priority:
        fail("RoCE data and CNPs need different priorities (queues)", "cnp_priority")
    if qos.pfc_priority != qos.roce_priority:
        fail(
            f"PFC is on priority {qos.pfc_priority} but RoCE runs on {qos.roce_priority}, so RoCE "
            "would not be lossless",
            "pfc_priority",
            f"set pfc_priority to {qos.roce_priority}",
        )
    if qos.ecn_min_kb >= qos.ecn_max_kb:
        fail("the ECN minimum threshold must be below the maximum", "ecn_min_kb")
    if problems:
        raise SpecError(problems)
    return QosPlan(
        roce_dscp=qos.roce_dscp,
        roce_priority=qos.roce_priority,
        cnp_dscp=qos.cnp_dscp,
        cnp_priority=qos.cnp_priority,
        pfc_priority=qos.pfc_priority,
        ecn_min_bytes=qos.ecn_min_kb * KIB,
        ecn_max_bytes=qos.ecn_max_kb * KIB,
        ecn_probability=qos.ecn_probability,
        roce_weight=qos.roce_bandwidth_percent,
        default_weight=100 - qos.roce_bandwidth_percent,
    )
