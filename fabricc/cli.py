"""The `fabricc` command: the only place that prints and picks exit codes.

Verbs: validate, build, analyze, compare, catalog, schema, check-nccl, diff, verify, twin. Exit
codes: 0 ok, 1 spec or design error (twin: anything fails), 2 usage error (twin: a requirement
missing). Diagnostics go to stderr, coloured on a terminal only.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from fabricc import __version__
from fabricc.errors import (
    Diagnostic,
    FabriccError,
    Location,
    Severity,
    SpecError,
    error,
    group_alike,
    printable,
)

if TYPE_CHECKING:  # the library loads on demand, so --help and schema stay fast
    from fabricc.ir import Fabric
    from fabricc.spec.loader import KeptPlace

EXIT_OK = 0
EXIT_ERROR = 1

# The designs a run of the program made, held to its end: main() ends the process without
# freeing them object by object (0.2 s after a 65k-GPU design). None outside main() (tests that
# invoke `cli` free theirs as usual).
_held: list[object] | None = None


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


# Wide enough for any table's whole cells: a pipe or a file has no width to fit, and a name cut
# to `compute-...` is no use to the script or the reader at the other end.
_UNBOUNDED = 100_000


def _stdout() -> Console:
    """Tables on stdout: fitted to a terminal, whole cells (no wrapping, no ellipses) when the
    output is not one."""
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=_UNBOUNDED)
    return console


@contextlib.contextmanager
def _reported() -> Iterator[None]:
    """What every verb does with a FabriccError: print its diagnostics, exit 1."""
    try:
        yield
    except FabriccError as exc:
        print_diagnostics(exc.diagnostics)
        sys.exit(EXIT_ERROR)


def _design(spec: Path) -> Fabric:
    """Load SPEC and design it with every rule (what validate, analyze and compare start from);
    errors are printed and exit 1, warnings are printed."""
    from fabricc.build import design
    from fabricc.spec.loader import load_spec

    with _reported():
        fabric = design(load_spec(spec, spec.as_posix()))
    print_diagnostics([*fabric.loaded.warnings, *fabric.warnings])
    if _held is not None:
        _held.append(fabric)
    return fabric


def print_diagnostics(diagnostics: Sequence[Diagnostic]) -> None:
    console = _stderr()
    diagnostics = group_alike(diagnostics)
    for diagnostic in diagnostics:
        style = "bold red" if diagnostic.severity is Severity.ERROR else "bold yellow"
        head, _, hint = diagnostic.render().partition("\n")
        console.print(head, style=style if console.is_terminal else None, markup=False)
        if hint:
            console.print(hint, style="cyan" if console.is_terminal else None, markup=False)
    errors = sum(d.severity is Severity.ERROR for d in diagnostics)
    warnings = len(diagnostics) - errors
    if errors:
        noun = "error" if errors == 1 else "errors"
        extra = f", {warnings} warning{'s' if warnings != 1 else ''}" if warnings else ""
        console.print(f"{errors} {noun}{extra}", markup=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="fabricc")
def cli() -> None:
    """fabricc compiles a YAML spec of an AI factory into a bill of materials, a cabling plan,
    switch configs, NCCL topology files, diagrams and a review report."""


@cli.command()
@click.argument("spec", type=click.Path(path_type=Path))
def validate(spec: Path) -> None:
    """Check SPEC - syntax, types, catalog references and every design rule - and report each
    problem with its file:line:col. Writes nothing."""
    fabric = _design(spec)
    click.echo(
        f"{fabric.loaded.display}: ok ({fabric.gpus()} GPUs, {len(fabric.links)} links, {len(fabric.racks)} racks)"
    )


@cli.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="output folder (default: out/<metadata.name>)",
)
@click.option(
    "--keep",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="an earlier build (folder or spec) whose central racks stay as built: its devices "
    "keep their rack and unit, and what the spec adds goes to free room or new racks "
    "(default: the output folder, when it holds a build of the same design)",
)
@click.option(
    "--fresh",
    is_flag=True,
    help="lay the design out anew, ignoring an earlier build in the output folder (which it "
    "replaces, even one of another design)",
)
def build(spec: Path, out: Path | None, keep: Path | None, fresh: bool) -> None:
    """Compile SPEC into the output folder (written atomically). When the folder holds an
    earlier build of the same design, that build's devices keep their places, as with --keep:
    growth moves nothing installed."""
    from fabricc.collector import fewer_collections

    with fewer_collections():  # (thousands of classes and schemas: 0.02 s of collections)
        from fabricc.build import build as run_build

    if keep is not None and fresh:
        raise click.UsageError("--keep and --fresh exclude each other")
    console = _stderr()
    with _reported():
        kept = _kept(keep)
        if console.is_terminal:
            with console.status("building", spinner="dots") as status:
                result = run_build(
                    spec, out, lambda name: status.update(f"building: {name}"), kept, fresh
                )
        else:
            result = run_build(spec, out, kept=kept, fresh=fresh)
    print_diagnostics(result.warnings)
    click.echo(printable(f"wrote {result.file_count} files to {result.out.as_posix()}"))
    for line in result.notices:
        click.echo(printable(line))


def _kept(earlier: Path | None) -> dict[str, KeptPlace] | None:
    """The device places of an earlier build (a build folder, or a spec compiled now)."""
    if earlier is None:
        return None
    from fabricc.change.snapshot import kept_places, load

    return kept_places(load(earlier))


def _analysis(
    spec: Path, prices: Path | None, message_gb: float, gpus: int | None
) -> dict[str, Any]:
    """Load, synthesize and analyse SPEC; prints diagnostics and exits 1 on a spec error."""
    from fabricc.analysis.cost import load_prices
    from fabricc.analysis.design import Options, analyze

    with _reported():
        price_list = load_prices(prices, prices.as_posix()) if prices is not None else None
    fabric = _design(spec)
    data = analyze(fabric, Options(message_gb, gpus, price_list))
    reduce = data["all_reduce"]
    if gpus is not None and reduce and reduce["gpus"] < gpus:
        _stderr().print(
            f"{spec.as_posix()}: warning: only {reduce['gpus']:,} GPUs on {reduce['network']}; "
            f"the all-reduce runs over {reduce['gpus']:,}\n    hint: give --gpus "
            f"{reduce['gpus']} or fewer",
            markup=False,
        )
    return data


_PRICES = click.option(
    "--prices",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="YAML price file (part number: unit price) for a cost roll-up",
)
_MESSAGE = click.option(
    "--message-gb",
    type=click.FloatRange(min=0, min_open=True),
    default=140.0,
    show_default=True,
    help="all-reduce message size in GB (default: fp16 gradient of a 70B model)",
)
_GPUS = click.option(
    "--gpus",
    type=click.IntRange(min=2),
    default=None,
    help="all-reduce over this many GPUs (default: every GPU of the compute network)",
)


@cli.command()
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    default=None,
    help="write the analysis as JSON to FILE ('-': to stdout instead of the tables)",
)
@_PRICES
@_MESSAGE
@_GPUS
def analyze(
    spec: Path, json_path: Path | None, prices: Path | None, message_gb: float, gpus: int | None
) -> None:
    """Analyse SPEC: bisection, oversubscription, hops, ECMP, single failures, all-reduce time,
    power, capacity and (with --prices) cost. The same numbers as OUT/analysis/analysis.json."""
    from fabricc.analysis.tables import renderables

    data = _analysis(spec, prices, message_gb, gpus)
    if _json_written(data, json_path):
        return
    console = _stdout()
    for table in renderables(data):
        console.print(table)


def _json_written(data: object, json_path: Path | None) -> bool:
    """Write `data` as JSON to json_path ('-': stdout); True when stdout took it instead of the
    tables. A file that cannot be written: error, exit 1."""
    from fabricc.emit.tables import json_text

    if json_path is None:
        return False
    if json_path.as_posix() == "-":
        click.echo(json_text(data), nl=False)
        return True
    try:
        json_path.write_text(json_text(data))
    except OSError as exc:
        _stderr().print(
            f"{json_path.as_posix()}: error: cannot write: {exc.strerror}", markup=False
        )
        sys.exit(EXIT_ERROR)
    return False


@cli.command()
@click.argument("first", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("second", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    default=None,
    help="write the side-by-side figures as JSON to FILE ('-': to stdout instead of the table)",
)
@_PRICES
@_MESSAGE
@_GPUS
def compare(
    first: Path,
    second: Path,
    json_path: Path | None,
    prices: Path | None,
    message_gb: float,
    gpus: int | None,
) -> None:
    """Analyse two specs and print their figures side by side (e.g. 1:1 against 2:1, 2 against
    3 tiers, InfiniBand against RoCE)."""
    from fabricc.analysis.tables import comparison, comparison_data

    a = _analysis(first, prices, message_gb, gpus)
    b = _analysis(second, prices, message_gb, gpus)
    names = (first.as_posix(), second.as_posix())
    if _json_written(comparison_data(a, b, names), json_path):
        return
    _stdout().print(comparison(a, b, (first.name, second.name)))


@cli.command("catalog")
@click.argument("model", required=False)
@click.option(
    "-c",
    "--catalog",
    "files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="a site catalog file to merge over the built-in one, as a spec's `catalog:` list does "
    "(repeatable)",
)
def catalog_command(model: str | None, files: tuple[Path, ...]) -> None:
    """List the hardware the catalog holds: every model by kind with its GPUs, ports and
    speeds, height, power and source. With MODEL, print that entry in full, in the format a
    site catalog file takes (docs/catalog.md)."""
    from rich.table import Table

    from fabricc.catalog.listing import COLUMNS, entry_yaml, rows, suggestion
    from fabricc.catalog.loader import load_catalog

    with _reported():
        loaded = load_catalog([(path, path.as_posix()) for path in files])
    if model is not None:
        text = entry_yaml(loaded, model)
        if text is None:
            missing = error(
                f"no model {model!r} in the catalog", hint=suggestion(model, loaded, "nodes")
            )
            _stderr().print(missing.render(), markup=False)
            sys.exit(EXIT_ERROR)
        click.echo(text, nl=False)
        return
    console = _stdout()
    for section, entries in rows(loaded).items():
        console.print(section, markup=False)
        table = Table()
        for column in COLUMNS:
            table.add_column(column, justify="right" if column in ("U", "kW") else "left")
        for row in entries:
            table.add_row(*row)
        console.print(table)


@cli.command("check-nccl")
@click.argument(
    "files",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path),
)
def check_nccl(files: tuple[Path, ...]) -> None:
    """Check NCCL topology XML FILES against the rules of NCCL's own parser.

    Prints FILE:LINE:COL: error|warning: RULE: MESSAGE for every problem; exits 1 when any
    file has an error."""
    from fabricc.inputs import InputError
    from fabricc.nccl.check import check_file, has_errors

    console = _stderr()
    failed = False
    for path in files:
        shown = path.as_posix()
        try:
            findings = check_file(path)
        except InputError as exc:
            console.print(printable(f"{shown}: error: {exc}"), markup=False)
            failed = True
            continue
        for finding in findings:
            console.print(finding.render(shown), markup=False)
        if has_errors(findings):
            failed = True
        else:
            click.echo(printable(f"{shown}: ok"))
    sys.exit(EXIT_ERROR if failed else EXIT_OK)


@cli.command("diff")
@click.argument("old", type=click.Path(exists=True, path_type=Path))
@click.argument("new", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="write the work order (CSV, HTML), device, cable and BOM deltas and config diffs here",
)
@click.option(
    "--keep",
    is_flag=True,
    help="compile NEW (a spec) with OLD's central devices kept where they stand, as "
    "`fabricc build NEW --keep OLD` would",
)
def diff_command(old: Path, new: Path, out: Path | None, keep: bool) -> None:
    """Compare two designs (each a spec or a build folder): devices, cables added, removed or
    re-terminated, config diffs, parts to order and the rack-by-rack work order. Prints a
    summary, naming every topology change (tiers, spine counts, rewired cables)."""
    from fabricc.change.compare import diff, moves
    from fabricc.change.snapshot import kept_places, load
    from fabricc.change.workorder import files, summary_text
    from fabricc.writer import write_tree

    with _reported():
        if keep and new.is_dir():
            raise SpecError(
                [
                    error(
                        "--keep compiles NEW with OLD's places, but NEW is a build folder",
                        location=Location(new.as_posix(), 1, 1),
                        hint="give NEW as a spec, or build it with `fabricc build --keep OLD`",
                    )
                ]
            )
        before = load(old)
        result = diff(before, load(new, kept_places(before) if keep else None))
        advice = None
        if not keep and not new.is_dir() and (moved := moves(result)):
            # would the earlier places have kept them? (compiles NEW a second time, only here)
            kept = moves(diff(before, load(new, kept_places(before))))
            if kept < moved:
                advice = (
                    f"note: {moved:,} existing devices move; with OLD's places kept, "
                    f"{kept:,} would: `fabricc diff --keep` shows that plan, and `fabricc build` "
                    "into OLD's folder (or with --keep OLD) builds it"
                )
        if out is not None:
            write_tree(out, files(result))
    click.echo(summary_text(result), nl=False)
    if advice is not None:
        click.echo(advice)
    if out is not None:
        click.echo(printable(f"work order: {(out / 'work-order.html').as_posix()}"))


@cli.command()
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--ibnetdiscover",
    "ibnet",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="ibnetdiscover output of one InfiniBand subnet",
)
@click.option(
    "--lldp",
    "lldp_paths",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="`lldpctl -f json0` output named <device>.json, or a folder of them (repeatable)",
)
@click.option("--network", default=None, help="network (or network-planeN) the discovery is of")
@click.option(
    "--ignore-speed", is_flag=True, help="do not compare link speeds (InfiniBand widths still are)"
)
@click.option(
    "--csv",
    "csv_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="also write every cable's finding to this CSV file",
)
def verify(
    spec: Path,
    ibnet: Path | None,
    lldp_paths: tuple[Path, ...],
    network: str | None,
    ignore_speed: bool,
    csv_out: Path | None,
) -> None:
    """Compare a discovered topology with the cabling plan of SPEC: every cable ok, miswired
    (with the swap that fixes it), missing, wrong speed, and unexpected links. Exits 1 on any
    mismatch."""
    from fabricc.verify.output import findings_csv, findings_text, lldp_files
    from fabricc.verify.run import verify_ibnetdiscover, verify_lldp

    if (ibnet is None) == (not lldp_paths):
        raise click.UsageError("give exactly one of --ibnetdiscover FILE or --lldp FILE")
    from fabricc.build import design
    from fabricc.spec.loader import load_spec

    with _reported():
        fabric = design(load_spec(spec, spec.as_posix()))
        if ibnet is not None:
            verdict = verify_ibnetdiscover(
                fabric, _read(ibnet), ibnet.as_posix(), network, not ignore_speed
            )
        else:
            files = {name: (_read(path), path.as_posix()) for name, path in lldp_files(lldp_paths)}
            verdict = verify_lldp(fabric, files, network, not ignore_speed)
    click.echo(findings_text(verdict), nl=False)
    if csv_out is not None:
        try:
            csv_out.write_text(findings_csv(verdict.findings))
        except OSError as exc:
            where = Location(csv_out.as_posix())
            print_diagnostics([error(f"cannot write file: {exc.strerror}", location=where)])
            sys.exit(EXIT_ERROR)
    sys.exit(EXIT_ERROR if verdict.failed else EXIT_OK)


EXIT_USAGE = 2


@cli.command()
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--timeout",
    "seconds",
    type=click.IntRange(10, 86400),
    default=900,
    show_default=True,
    help="bound on the whole run in seconds; everything is removed when it is reached",
)
@click.option("--no-drills", is_flag=True, help="skip the failure drills")
@click.option(
    "--su",
    default=None,
    help="boot this scalable unit with every spine and core, or `whole` (default: the whole "
    "design, or a slice of its first SU when it is larger than the machine boots)",
)
def twin(out: Path, seconds: int, no_drills: bool, su: str | None) -> None:
    """Boot the build folder OUT in network namespaces, as it would be deployed (the files on
    disk), and report what comes up in OUT/twin/report.json. Exits 1 when anything fails, 2
    when a requirement (root, FRR, Kea, isc-dhcp-relay/client; ibsim and OpenSM when the build
    has InfiniBand subnets; netplan when it has netplan files) is missing. Needs root."""
    from fabricc.twin.html import write_page
    from fabricc.twin.ib import has_infiniband
    from fabricc.twin.lab import Interrupted, TwinTimeout
    from fabricc.twin.netplan import has_files
    from fabricc.twin.requirements import missing
    from fabricc.twin.run import export
    from fabricc.twin.run import twin as run_twin
    from fabricc.twin.summary import summary_text, write_report

    lacking = missing(infiniband=has_infiniband(out), netplan=has_files(out))
    if lacking:
        for line in lacking:
            click.echo(f"fabricc twin: {line}", err=True)
        sys.exit(EXIT_USAGE)
    with _reported():
        try:
            report = run_twin(out, seconds, drill=not no_drills, su=su)
        except (KeyboardInterrupt, Interrupted, TwinTimeout) as exc:
            reason = "interrupted" if not isinstance(exc, TwinTimeout) else str(exc)
            click.echo(f"fabricc twin: {reason}; everything it started is removed", err=True)
            sys.exit(EXIT_ERROR)
        write_report(out, report)
        write_page(out, report)
        exported = export(out)
    click.echo(summary_text(report), nl=False)
    for path in exported:
        click.echo(printable(f"containerlab: {path.as_posix()}"))
    sys.exit(EXIT_OK if report.holds else EXIT_ERROR)


# ibnetdiscover of a 100k-GPU fabric is some tens of MB; the bound keeps a wrong file (a disk
# image, /dev/zero) from exhausting memory.
MAX_DISCOVERY_BYTES = 256 * 1024 * 1024


def _read(path: Path) -> str:
    from fabricc.inputs import read_input

    raw = read_input(path, MAX_DISCOVERY_BYTES, what="discovery files")
    return raw.decode("utf-8", errors="replace")


@cli.command()
def schema() -> None:
    """Print the JSON Schema of the spec language (for editors)."""
    from fabricc.spec.schema import schema_text

    click.echo(schema_text(), nl=False)


def main() -> None:
    """The program: the command, then the exit without the interpreter's teardown (the output
    flushed first): freeing a large design's millions of objects one by one is time the user
    waits for and nothing needs. fabricc starts no work that outlives a command (the writer and
    analysis processes are waited for, its threads joined) and registers no exit handlers."""
    global _held
    _held = []
    try:
        cli(prog_name="fabricc")
        status = EXIT_OK
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            status = done.code or EXIT_OK
        else:
            print(done.code, file=sys.stderr)
            status = EXIT_ERROR
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: what Python's own exit would report
        raise SystemExit(status) from None
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    main()
