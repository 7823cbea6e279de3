"""Process helper: no cyclic garbage collection while a design is built and emitted.

A 100,000-GPU design allocates millions of small objects (devices, links, cables, modules, the
tuples and lists of the passes) that all live until the build ends, and synthesis makes no
reference cycles (none are left to collect after a design). CPython's collector, run by
allocation counts, would still walk the growing heap again and again: about a fifth of the time
of `fabricc validate` at 65k GPUs. The emitters and the write that follow (millions of rows and
strings) make next to no cycles either: a few thousand objects of the analysis' networkx graphs.
`fewer_collections` turns it off for the duration of a build (design, emit, write) and back on
after (reference counting still frees everything as usual). What was made meanwhile and lives on
joins the oldest generation as it is (gc.freeze, then gc.unfreeze: a list splice, no walk):
left in the young generation, millions of objects would be walked by the first collection after
(0.13 s after a 65k-GPU design), and would still be by every full one, as now.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():  # (a caller's frozen objects stay frozen)
                # freeze moves every tracked object to the permanent generation, unfreeze moves
                # them all to the oldest one; the allocation count starts again from zero
                gc.freeze()
                gc.unfreeze()
            gc.enable()
