"""Analysis helper: the entry point of the analysis worker's process (fabricc.analysis.worker
starts it).

Consumes the process's stdin: frames of pickled plane graphs, which may come while the process
still imports or computes the frames before; produces, through fabricc.analysis.worker.serve,
the figures of every frame pickled to stdout once stdin ends. A thread reads stdin from the
first instant, before anything heavy is imported, so a build that started the process early
(before synthesis) and writes the graphs into a pipe never waits on these imports; networkx,
which the max-flows import on first use, loads while the graphs come. The
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
import queue
import sys
import threading
from typing import BinaryIO

FRAME_HEAD = 8  # bytes of a frame's length, big-endian (fabricc.analysis.worker writes frames)


def main() -> None:
    gc.disable()
    frames: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    threading.Thread(target=_read, args=(sys.stdin.buffer, frames), daemon=True).start()
    import networkx  # noqa: F401

    from fabricc.analysis.worker import serve

    serve(iter(frames.get, None))  # the answer written and flushed
    os._exit(0)


def _read(stream: BinaryIO, frames: queue.SimpleQueue[bytes | None]) -> None:
    """Each frame of `stream` (an 8-byte length, then that many bytes: fabricc.analysis.worker
    writes them) as it comes, then None at its end."""
    try:
        while len(head := stream.read(FRAME_HEAD)) == FRAME_HEAD:
            frames.put(stream.read(int.from_bytes(head, "big")))
    finally:
        frames.put(None)
