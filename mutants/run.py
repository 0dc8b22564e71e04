"""``make mutants``: apply each planted bug in a temporary copy of the tree and run the tests that guard it.

Usage::

    python -m mutants.run                 # every mutation, one at a time
    python -m mutants.run --list          # names, guarantees and guarding tests
    python -m mutants.run --name NAME ... # only these (repeatable)
    python -m mutants.run --baseline      # the guards on the unmutated tree (they must pass)
    python -m mutants.run --jobs 2        # mutations in parallel (default 1: the machine is shared)

For each mutation the tracked (and untracked, not ignored) files of the repository are copied to a
temporary directory, the mutation's exact search/replace is applied (a search text not found
exactly once fails the run: the list cannot rot silently), and ``pytest -x`` runs the mutation's
node ids there with ``PYTHONPATH`` set to the copy (so Spark's Python workers import the copy too).

Outcomes: ``caught`` (the guard failed), ``survived`` (it passed), ``hung`` (still running after the
mutation's ``timeout_s``: killed and counted as survived, since a hang is caught only when the
suite's own pytest-timeout fails the test), ``error`` (pytest could not run the guard: collection
error, no tests; not counted). The score is caught / (caught + survived + hung). The exit status is
non-zero when the score is below ``--min-score`` or a mutation does not apply.

Written here rather than taken from mutmut / cosmic-ray: those generate mutants from operators over
the whole code base; this list is hand-written bugs in specific guarantees, each with its own
small guard (some on real brokers), which neither tool runs.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mutants.mutation import Mutation, MutationError
from mutants.mutations import MUTATIONS
from sparkflow_testing.jvm import use_test_jvm_flags_for_spark
from sparkflow_testing.processes import popen_guarded

__all__ = ["Result", "copy_tree", "main", "run_one"]

ROOT = Path(__file__).resolve().parents[1]
LINKED = (".kinesalite",)
"""Ignored directories the tests use from the repository root (kinesalite's npm install)."""


@dataclass(frozen=True, slots=True)
class Result:
    """How one mutation's guard ended."""

    mutation: Mutation
    outcome: str
    seconds: float
    summary: str
    log: Path


def tracked_files(root: Path) -> list[str]:
    """Files git knows of or would add (tracked, plus untracked ones not ignored)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [p for p in out.split("\0") if p]


def copy_tree(root: Path, dest: Path) -> None:
    """Copy the repository's files (see ``tracked_files``) to ``dest``; link ``LINKED`` directories."""
    for rel in tracked_files(root):
        src = root / rel
        if not src.is_file():  # deleted in the work tree
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    for name in LINKED:
        if (root / name).exists():
            (dest / name).symlink_to(root / name)


_PYTEST_SUMMARY = re.compile(
    r"^=*\s*(\d+ (failed|passed|errors?|skipped|deselected|xfailed|xpassed|warnings?)\b.*|no tests ran)"
    r" in [\d.]+s\b"
)


def _summary(log: Path) -> str:
    lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    for line in reversed(lines):
        if _PYTEST_SUMMARY.match(line):
            return line.strip("= ")
    return lines[-1][:200] if lines else "(no output)"


def _classify(code: int | None) -> str:
    if code is None:
        return "hung"
    if code == 0:
        return "survived"
    if code == 1:
        return "caught"
    return "error"  # 2 interrupted / collection error, 3 internal, 4 usage, 5 no tests


def run_one(mutation: Mutation, log_dir: Path, baseline: bool = False, keep: bool = False) -> Result:
    """Copy the tree, apply ``mutation`` (unless ``baseline``), run its guard, classify the ending."""
    began = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix=f"mutant-{mutation.name}-"))
    log = log_dir / f"{mutation.name}{'.baseline' if baseline else ''}.log"
    try:
        copy_tree(ROOT, work)
        if not baseline:
            mutation.apply(work)
            compile((work / mutation.path).read_text(), mutation.path, "exec")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **mutation.env)
        # the copy first (and its test-infrastructure distribution), before the editable installs
        paths = [str(work), *([str(work / "testing")] if (work / "testing").is_dir() else [])]
        env["PYTHONPATH"] = os.pathsep.join(p for p in (*paths, os.environ.get("PYTHONPATH", "")) if p)
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *mutation.tests]
        with open(log, "w") as out:
            out.write(f"$ {' '.join(cmd)}\n# in {work}\n\n")
            out.flush()
            # its own process group, which dies with this process however it ends
            proc = popen_guarded(cmd, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT)
            try:
                code: int | None = proc.wait(timeout=mutation.timeout_s)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                try:  # the guard's brokers and Spark are in its process group
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        summary = _summary(log)
        outcome = _classify(code)
        if baseline:
            outcome = {"survived": "passes", "caught": "FAILS"}.get(outcome, outcome)
        return Result(mutation, outcome, time.monotonic() - began, summary, log)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def _table(results: list[Result]) -> str:
    rows = ["| # | mutation | guarantee | outcome | seconds | guard's summary |", "|---|---|---|---|---|---|"]
    for i, r in enumerate(results, 1):
        m = r.mutation
        rows.append(f"| {i} | `{m.name}` | {m.guarantee} | {r.outcome} | {r.seconds:.0f} | {r.summary} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Run the mutations chosen on the command line; see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m mutants.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--name", action="append", default=[], help="run only this mutation (repeatable)")
    parser.add_argument("--jobs", type=int, default=1, help="mutations run at once (default 1)")
    parser.add_argument("--baseline", action="store_true", help="run the guards on the unmutated tree")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copies")
    parser.add_argument(
        "--log-dir", type=Path, default=ROOT / ".mutants", help="guard logs (default .mutants/)"
    )
    parser.add_argument("--report", type=Path, help="also write the result table (markdown) here")
    parser.add_argument("--min-score", type=float, default=90.0, help="exit non-zero below this score (%%)")
    args = parser.parse_args(argv)
    use_test_jvm_flags_for_spark()

    names = {m.name for m in MUTATIONS}
    if len(names) != len(MUTATIONS):
        parser.error("two mutations share a name")
    unknown = [n for n in args.name if n not in names]
    if unknown:
        parser.error(f"no mutation named {', '.join(unknown)}; --list shows them")
    chosen = [m for m in MUTATIONS if not args.name or m.name in args.name]
    if args.list:
        for m in chosen:
            print(f"{m.name}  [{m.guarantee}]  {m.path}\n    guard: {' '.join(m.tests)}")
        return 0
    broken = []
    for m in chosen:
        try:
            m.mutated_text(ROOT)
        except MutationError as e:
            broken.append(str(e))
    if broken:
        print("\n".join(broken), file=sys.stderr)
        return 2

    args.log_dir.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    results: list[Result] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_one, m, args.log_dir, args.baseline, args.keep): m for m in chosen}
        for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
            r = future.result()
            results.append(r)
            print(
                f"[{n}/{len(chosen)}] {r.outcome:8} {r.mutation.name} ({r.seconds:.0f} s): {r.summary}",
                flush=True,
            )
    order = {m.name: i for i, m in enumerate(chosen)}
    results.sort(key=lambda r: order[r.mutation.name])
    wall = time.monotonic() - began
    table = _table(results)
    print("\n" + table)
    if args.baseline:
        failing = [r.mutation.name for r in results if r.outcome != "passes"]
        print(f"\nbaseline: {len(results) - len(failing)}/{len(results)} guards pass; wall time {wall:.0f} s")
        if failing:
            print(f"not passing: {', '.join(failing)}")
        return 1 if failing else 0
    counted = [r for r in results if r.outcome in ("caught", "survived", "hung")]
    caught = sum(r.outcome == "caught" for r in counted)
    score = 100.0 * caught / len(counted) if counted else 0.0
    errors = [r.mutation.name for r in results if r.outcome == "error"]
    line = f"score: {caught}/{len(counted)} caught ({score:.1f}%); wall time {wall:.0f} s"
    if errors:
        line += f"; guard errors (not counted): {', '.join(errors)}"
    print("\n" + line)
    survivors = [r.mutation.name for r in counted if r.outcome != "caught"]
    if survivors:
        print(f"survived: {', '.join(survivors)}")
    if args.report is not None:
        args.report.write_text(table + "\n\n" + line + "\n")
    return 0 if score >= args.min_score and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
