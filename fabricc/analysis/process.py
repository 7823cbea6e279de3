"""Analysis helper: the entry point of the analysis worker's process (fabricc.analysis.worker
starts it).

Consumes the process's stdin: the pickled plane graphs, which may come while the process still
imports; produces, through fabricc.analysis.worker.serve, the figures pickled to stdout. A thread
reads stdin from the first instant, before anything heavy is imported, so a build that started
the process early (before synthesis) and writes the graphs into a pipe never waits on these
imports; networkx, which the max-flows import on first use, loads while the graphs come.
"""

from __future__ import annotations

import sys
import threading


def main() -> None:
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(sys.stdin.buffer.read()))
    reader.start()
    import networkx  # noqa: F401

    from fabricc.analysis.worker import serve

    reader.join()
    serve(received[0] if received else b"")
