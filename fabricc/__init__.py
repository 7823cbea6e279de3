"""fabricc: a declarative AI-factory design compiler.

Pipeline: spec (YAML) -> Spec (pydantic) -> Fabric IR -> design-rule checks -> emitters -> out/.
The library raises typed errors (fabricc.errors); only fabricc.cli prints.
"""

__version__ = "0.1.0"
