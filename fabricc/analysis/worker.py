"""Analysis helper: the plane figures of a large design, computed in a process of its own.

Consumes a finished Fabric: the plane graphs and tier switch names of each network are built here
(they read the links); produces fabricc.analysis.network.plane_figures of each network, computed
in a spawned Python process while the build's process runs the emitters before the analysis.
Max-flows, path searches and failure impacts are most of the analysis (about 2 s at 100k GPUs)
and read nothing but the graphs, which are small (a few thousand switches; endpoints are
attachments). The graphs travel pickled with their attachments as plain tuples (a named tuple
pickles through a Python call each), sent by a thread so that the build never waits for the
process to start. The figures are the same data as in-process (tests/test_analysis.py).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import threading
import traceback
from multiprocessing.connection import Connection
from typing import Any

from fabricc.analysis.graph import Attachment, PlaneGraph, plane_graphs
from fabricc.analysis.network import plane_figures, tier_switches
from fabricc.ir import Fabric

# From about this size the analysis repays a process's start (about 0.6 s of imports, on the
# other core): the 65k- and 100k-GPU designs, not the published SuperPODs.
ANALYSIS_PROCESS_LINKS = 100_000
MEMO_KEY = "analysis.worker"  # Fabric.memo: the worker of a build that started one

_Packed = tuple[
    str, int, list[str], list[str], list[dict[int, tuple[int, int]]], list[tuple[Any, ...]]
]
Jobs = dict[str, tuple[list[PlaneGraph], dict[str, list[str]]]]


class PlaneWorker:
    """A spawned process computing plane_figures of each job; figures() waits for them."""

    def __init__(self, jobs: Jobs) -> None:
        context = multiprocessing.get_context("spawn")
        jobs_in, self._jobs = context.Pipe(duplex=False)
        self._results, results_out = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_serve, args=(jobs_in, results_out), name="fabricc-analysis", daemon=True
        )
        self._process.start()
        jobs_in.close()
        results_out.close()
        payload = pickle.dumps(
            {
                name: ([_pack(graph) for graph in graphs], tiers)
                for name, (graphs, tiers) in jobs.items()
            },
            protocol=pickle.HIGHEST_PROTOCOL,
        )
        self._sender = threading.Thread(target=self._send, args=(payload,), daemon=True)
        self._sender.start()

    def _send(self, payload: bytes) -> None:
        with contextlib.suppress(OSError):  # the process died first: figures() says so
            self._jobs.send_bytes(payload)

    def figures(self) -> dict[str, dict[str, Any]]:
        """Per network, its plane figures; RuntimeError (with the process's traceback) when the
        process failed or ended without them."""
        try:
            status, value = self._results.recv()
        except EOFError:
            self._process.join()
            raise RuntimeError(
                f"the analysis process ended without a result (exit code {self._process.exitcode})"
            ) from None
        finally:
            self.close()
        if status != "ok":
            raise RuntimeError(f"the analysis process failed:\n{value}")
        return value  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop the process if it still runs (a build that failed) and release the pipes."""
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._jobs.close()  # a sender still writing gets OSError and ends
        self._sender.join()
        self._results.close()

    def __enter__(self) -> PlaneWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start(fabric: Fabric) -> PlaneWorker:
    """Build the plane graphs of every network and hand them to a new worker, which
    analysis.design.analyze then asks for the figures (through Fabric.memo)."""
    jobs = {
        name: (plane_graphs(fabric, name), tier_switches(topology))
        for name, topology in fabric.networks.items()
    }
    worker = PlaneWorker(jobs)
    fabric.memo[MEMO_KEY] = worker
    return worker


def taken_figures(fabric: Fabric) -> dict[str, dict[str, Any]]:
    """The figures of the build's worker, if it started one (once: the worker is closed)."""
    worker = fabric.memo.pop(MEMO_KEY, None)
    return worker.figures() if isinstance(worker, PlaneWorker) else {}


def _pack(graph: PlaneGraph) -> _Packed:
    return (
        graph.network,
        graph.plane,
        graph.names,
        graph.roles,
        graph.adjacency,
        list(map(tuple, graph.attachments)),
    )


def _unpack(packed: _Packed) -> PlaneGraph:
    network, plane, names, roles, adjacency, attachments = packed
    return PlaneGraph(
        network, plane, names, roles, adjacency, list(map(Attachment._make, attachments))
    )


def _serve(jobs: Connection, results: Connection) -> None:
    """The process: figures of each network of the one job batch, or the traceback."""
    try:
        packed: dict[str, tuple[list[_Packed], dict[str, list[str]]]] = pickle.loads(
            jobs.recv_bytes()
        )
        figures = {
            name: plane_figures([_unpack(graph) for graph in graphs], tiers)
            for name, (graphs, tiers) in packed.items()
        }
        results.send(("ok", figures))
    except BaseException:
        results.send(("error", traceback.format_exc()))
