"""As-built verification: compare a discovered topology with the cabling plan.

Inputs: the Fabric IR of a spec and discovery output (ibnetdiscover text, `lldpctl -f json0`);
outputs: one finding per planned cable (ok, miswired, missing, wrong speed) and per unplanned
discovered link (unexpected). Modules: plan (planned cables per network), ibnetdiscover and lldp
(parsers), compare (the matching), run (network inference and the entry points the CLI calls).
"""
