"""Analysis helper: the entry point of the analysis worker's process (fabricc.analysis.worker
starts it).

Consumes the process's stdin: the pickled plane graphs, which may come while the process still
imports; produces, through fabricc.analysis.worker.serve, the figures pickled to stdout. A thread
reads stdin from the first instant, before anything heavy is imported, so a build that started
the process early (before synthesis) and writes the graphs into a pipe never waits on these
imports; networkx, which the max-flows import on first use, loads while the graphs come. The
process runs without cyclic garbage collection, as a build does (fabricc.collector): the graphs
and figures make next to no cycles, and the collector walking the graphs again and again as the
max-flows allocate was a fifth of the process (0.3 s of 1.5 s at nvl72-512 in bench/bench.py,
for 15 MB more at its peak). It ends as the fabricc command does (fabricc.cli.main), without the
interpreter's teardown: freeing the graphs one by one took 0.1 s more of a core the build's
emitters share.
"""

from __future__ import annotations

import gc
import os
import sys
import threading


def main() -> None:
    gc.disable()
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(sys.stdin.buffer.read()))
    reader.start()
    import networkx  # noqa: F401

    from fabricc.analysis.worker import serve

    reader.join()
    serve(received[0] if received else b"")  # the answer written and flushed
    os._exit(0)
