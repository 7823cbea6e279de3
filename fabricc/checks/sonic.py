"""Check stage: every switch of an os: sonic network runs on a SONiC SKU.

Consumes the Fabric IR; raises DesignError naming, for each os: sonic network, the first routed
switch (by name) whose model or port plan no SONiC SKU runs - every such network in one run
(what validate checks; build would fail on it writing the switch's config_db). The SONiC
switches it resolves stay on the fabric for the emitter (fabricc/synth/portplan.py).
"""

from __future__ import annotations

from fabricc.ir import Fabric
from fabricc.synth.portplan import sonic_switches


def check_sonic_switches(fabric: Fabric) -> None:
    sonic_switches(fabric)
