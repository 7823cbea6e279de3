"""Change management: what it takes to go from one design to another.

Inputs: two designs, each a spec (compiled in memory) or a folder `fabricc build` wrote; outputs:
device, cable, config and BOM differences, the topology changes among them, and a rack-by-rack
work order. Modules: snapshot (load either side as its output files), compare (the differences),
workorder (ordered steps per rack, CSV and HTML).
"""
