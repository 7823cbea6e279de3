"""Analysis stage: what a finished design delivers, computed from the Fabric IR alone.

Consumes a Fabric (after synthesis and the design rules); produces plain data (dicts of numbers)
for `fabricc analyze`, `fabricc compare`, OUT/analysis/analysis.json and the report: bisection
bandwidth, oversubscription, switch hops and ECMP paths, single-failure impact, collective
estimates, power, capacity and cost. Every function here is pure; nothing prints or writes.
"""
