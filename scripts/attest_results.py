"""The files a benchmark job attests, and its Sigstore bundle placed beside each result.

    python scripts/attest_results.py subjects --checksums FILE
    python scripts/attest_results.py place BUNDLE --checksums FILE [--out DIR]

Run from the checkout `epbench submit` filed the results into. `subjects` lists every result
under results/ that git sees as new or changed (what this job's `epbench submit` wrote), with
its journal, as `sha256  path` lines (sha256sum's format, which `actions/attest-build-provenance`
reads as `subject-checksums`); it prints `any=true` or `any=false` for $GITHUB_OUTPUT. A result
without its journal stops it: an attestation must cover both. `place` copies the bundle the
action wrote to `<stem>.sigstore.json` beside each listed result (and, with --out, copies each
result, journal and bundle under DIR/results/... for an artifact).

Exit 0 on success, 1 when a result has no journal or the list is unreadable, 2 for bad
arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

JOURNAL = ".events.jsonl.gz"
BUNDLE = ".sigstore.json"
LINE = re.compile(r"([0-9a-f]{64})  (results(?:/[A-Za-z0-9_-][A-Za-z0-9._-]*)+)")
"""One checksums line; each path segment starts with no dot (no `..`, nothing hidden)."""


def changed_results(root: Path) -> list[Path]:
    """Results (`results/**/<stem>.json`, bundles excluded) git sees as new or modified."""
    done = subprocess.run(["git", "status", "--porcelain", "-z", "--untracked-files=all",
                           "--", "results"], cwd=root, capture_output=True, check=True)
    out = []
    for entry in done.stdout.split(b"\0"):
        if len(entry) < 4 or entry[:2] in (b" D", b"D "):
            continue
        name = entry[3:].decode("utf-8", "surrogateescape")
        if name.endswith(".json") and not name.endswith(BUNDLE):
            out.append(Path(name))
    return sorted(out)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def subjects(root: Path, checksums: Path) -> int:
    lines = []
    for result in changed_results(root):
        journal = result.with_name(result.name.removesuffix(".json") + JOURNAL)
        if not (root / journal).is_file():
            print(f"{result}: no journal beside it ({journal.name}); nothing is attested",
                  file=sys.stderr)
            return 1
        for path in (result, journal):
            if not LINE.fullmatch(f"{'0' * 64}  {path.as_posix()}"):
                print(f"{path}: a name the checksums file cannot hold", file=sys.stderr)
                return 1
            lines.append(f"{sha256(root / path)}  {path.as_posix()}")
    checksums.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"any={'true' if lines else 'false'}")
    return 0


def place(root: Path, bundle: Path, checksums: Path, out: Path | None) -> int:
    listed = []
    for line in checksums.read_text(encoding="utf-8").splitlines():
        match = LINE.fullmatch(line)
        if match is None:
            print(f"{checksums}: not a `sha256  results/...` line: {line[:80]!r}",
                  file=sys.stderr)
            return 1
        listed.append(Path(match.group(2)))
    for path in listed:
        if path.name.endswith(JOURNAL):
            continue
        target = path.with_name(path.name.removesuffix(".json") + BUNDLE)
        shutil.copyfile(bundle, root / target)
        print(f"attested: {path} -> {target.name}")
        if out is not None:
            journal = path.with_name(path.name.removesuffix(".json") + JOURNAL)
            for name in (path, journal, target):
                (out / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(root / name, out / name)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("subjects")
    listing.add_argument("--checksums", type=Path, required=True)
    placing = commands.add_parser("place")
    placing.add_argument("bundle", type=Path)
    placing.add_argument("--checksums", type=Path, required=True)
    placing.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    root = Path.cwd()
    if args.command == "subjects":
        return subjects(root, args.checksums)
    if not args.bundle.is_file():
        print(f"{args.bundle}: no bundle (did the attest step run?)", file=sys.stderr)
        return 1
    return place(root, args.bundle, args.checksums, args.out)


if __name__ == "__main__":
    sys.exit(main())
