"""The digital twin: a build folder booted in Linux network namespaces (`fabricc twin OUT`).

Reads the files a build wrote (never the IR, so a hand edit shows), boots them with the real
daemons (FRR, Kea, isc-dhcp-relay, dhclient) and reports what comes up in OUT/twin/report.json.
"""
