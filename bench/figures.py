"""Write a bench's printed figures into docs/benchmarks/<bench>.md: nobody edits them by hand.

Every bench script ends with `run_main(main)`. Run as usual, a bench only prints. With
`--write-docs` it also records what it printed, under a header naming the command, the date and
the machine, between the markers of the "Latest run" section of `docs/benchmarks/<bench>.md`
(`bench_ingest.py` writes `ingest.md`); the rest of the page is left as it is. A run that fails
writes nothing. `bench/loaded_suite.sh --write-docs` records the shell script the same way,
through `python bench/figures.py --stdin <bench> <command>`.
"""

from __future__ import annotations

import datetime
import io
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "benchmarks"
WRITE_DOCS = "--write-docs"
BEGIN = "<!-- figures:begin{section}: written by bench/figures.py --write-docs, do not edit -->"
END = "<!-- figures:end{section} -->"


def markers(section: str = "") -> tuple[str, str]:
    """The comments around a section's figures: one section per mode of a bench (a subcommand
    such as `bench_search.py recall`, or a mode flag the script names), "" for the default."""
    suffix = f" {section}" if section else ""
    return BEGIN.format(section=suffix), END.format(section=suffix)


class _Tee(io.TextIOBase):
    """Writes through to a stream and keeps a copy of everything written."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.stream.write(text)
        self.copy.write(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding


def run_main(main: Callable[[], object], modes: tuple[str, ...] = ()) -> None:
    """Run a bench's `main`; with `--write-docs` on the command line, record what it printed.

    The flag is taken off `sys.argv` before `main` parses its own arguments. The figures go to
    the section of the page named by the command's first word if it has one (a subcommand),
    else by the first of `modes` (flags that switch the bench to another question) on the
    command line, else to the default section. The exit code is what `main` returned (None: 0),
    as `raise SystemExit(main())` would give.
    """
    script = Path(main.__code__.co_filename)
    write = WRITE_DOCS in sys.argv[1:]
    if not write:
        raise SystemExit(main())
    sys.argv.remove(WRITE_DOCS)
    command = shlex.join(["python", f"bench/{script.name}", *sys.argv[1:]])
    started = datetime.datetime.now(datetime.UTC)
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    try:
        code = main()
    finally:
        sys.stdout = tee.stream
    if code not in (None, 0):
        print(f"{script.name} exited with {code}: figures not written", file=sys.stderr)
        raise SystemExit(code)
    args = sys.argv[1:]
    if args and not args[0].startswith("-"):
        section = args[0]
    else:
        section = next((mode.lstrip("-") for mode in modes if mode in args), "")
    page = write_figures(bench_name(script), command, tee.copy.getvalue(), started, section)
    print(f"figures written to {page.relative_to(REPO)}", file=sys.stderr)


def bench_name(script: Path) -> str:
    """`bench_ingest.py` -> `ingest`: the page a script writes is docs/benchmarks/<name>.md."""
    return script.stem.removeprefix("bench_")


def machine() -> str:
    """One line about where the figures were taken: cores, CPU, OS, Python, load."""
    cores = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{cores} cores ({usable} usable by this process), {_cpu_model()}, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}, "
        f"load average {load} at the end"
    )


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass  # not Linux: the architecture below says enough
    return platform.machine() or "unknown CPU"


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, timeout=10, check=True,
        )
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    # Figures taken with uncommitted changes say so: the commit alone did not produce them.
    return done.stdout.strip() + (" with uncommitted changes" if dirty else "")


def figures_block(
    command: str, output: str, started: datetime.datetime, section: str = ""
) -> str:
    """The generated section: header lines, then the printed output as a text block."""
    begin, end = markers(section)
    fence = "````" if "```" in output else "```"
    return "\n".join([
        begin,
        f"Command: `{command}`  ",
        f"Date: {started:%Y-%m-%d %H:%M} UTC, commit {_commit()}  ",
        f"Machine: {machine()}",
        "",
        f"{fence}text",
        output.rstrip("\n"),
        fence,
        end,
    ])


def write_figures(
    bench: str,
    command: str,
    output: str,
    started: datetime.datetime,
    section: str = "",
    docs: Path = DOCS,
) -> Path:
    """Replace the figures between the section's markers in docs/benchmarks/<bench>.md (a page
    without them gets a "Latest run" section at its end; a missing page is created)."""
    page = docs / f"{bench}.md"
    begin, end = markers(section)
    block = figures_block(command, output, started, section)
    if page.exists():
        text = page.read_text(encoding="utf-8")
    else:
        text = f"# {bench}\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + block + tail
    else:
        title = f"Latest run: {section}" if section else "Latest run"
        text = text.rstrip("\n") + f"\n\n## {title}\n\n" + block + "\n"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text, encoding="utf-8")
    return page


def _record_stdin(bench: str, command: str) -> None:
    """Echo standard input and record it as the figures of `bench` (for shell benches)."""
    started = datetime.datetime.now(datetime.UTC)
    copy = io.StringIO()
    for line in sys.stdin:
        sys.stdout.write(line)
        sys.stdout.flush()
        copy.write(line)
    page = write_figures(bench, command, copy.getvalue(), started)
    print(f"figures written to {page.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "--stdin":
        raise SystemExit("usage: python bench/figures.py --stdin <bench> <command>")
    _record_stdin(sys.argv[2], sys.argv[3])
