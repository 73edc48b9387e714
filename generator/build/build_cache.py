"""The incremental build's cache: each result file's findings and table rows, so that a file
whose bytes did not change is not validated again.

The cache lives outside the checkout (`epbench.core.paths.user_cache_dir()/build/<digest of the
results folder's path>/`: `$XDG_CACHE_HOME/epbench`, `~/.cache/epbench`, or the job's own
`$RUNNER_TEMP` on GitHub Actions), never in a folder a pull request can fill: a committed
`.cache/` is data the build never reads (and `epbench validate` rejects it,
`epbench.generator.checks.file.build_state`). `epbench build --no-cache` uses none.

An entry belongs to one file path and is keyed by content: the sha256 of the file's bytes (and
of its journal's, which the checks read), and an entry is reused only when both digests match.
A build hashes a file again unless its inode's stat (size, mtime, ctime, inode number) is the
one the entry recorded and that stat was *settled* when recorded: its ctime more than a second
before that build began, so no write within the same clock tick can hide behind it (git's
index does the same, for the same reason: 1.4 s of a 100,000-result rebuild was hashing files
nothing had touched). No system call sets a ctime: a file edited at the same size and mtime
(`os.utime` puts the mtime back, and moves the ctime), or restored from another clone (a new
inode), is hashed and checked again. Every entry also depends on a *context*: the cache
format, the epbench version and the source of `epbench.core` and `epbench.generator`
(`code_files`), the schemas and the site's templates, and every file under the project's
`workloads/` and `endpoints/` (the checks and today's prices read them). A cache written in
another context is ignored as a whole.

The cache is data, never code: JSON and Arrow (no pickle), in 64 shards so that one new result
rewrites one shard. A shard is three parts: `shard-NN.json`, each file's digests, findings and
identity (read on every build); `shard-NN.rows.json`, each file's table rows as the checks made
them (read only when a file of the shard changed); and the shard's rows as column-wise frames
(`epbench.generator.build.row_store`, read on every build instead of the rows). Each part
carries the sha256 of its body, so a part that was truncated, half-written or damaged is ignored and
rebuilt. No key signs them: a key kept in the cache folder protects nothing from whoever can
write that folder (the same user), so it is a plain digest, honest about what it checks; the
cache is trusted because of where it is. Findings that depend on the clock (`date.future`) are
never cached.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from epbench.core import __version__
from epbench.core.digests import sha256_file
from epbench.core.findings import Finding
from epbench.core.journal_records import SUFFIX as JOURNAL_SUFFIX
from epbench.core.paths import shipped, user_cache_dir
from epbench.core.provenance import BUNDLE_SUFFIX

log = logging.getLogger(__name__)

FORMAT = 5
SETTLED_NS = 1_000_000_000
"""How long before a build began a file's ctime must lie for its stat to stand for its bytes
in a later build."""
SHARDS = 64
_CLOCK_CHECKS = frozenset({"date.future"})
CODE_PACKAGES = ("core", "generator")
"""The subpackages of `epbench` whose source is part of the build context (`code_files`)."""


def code_files() -> list[tuple[str, Path]]:
    """Every source file of `epbench.core` and `epbench.generator` (`epcore/` and `generator/`
    in a checkout, linked from `epbench/`), named by its module path, in a stable order."""
    root = Path(__file__).absolute().parents[2]  # epbench/, as imported: links not followed
    out = []
    for package in CODE_PACKAGES:
        folder = (root / package).resolve()
        out += [(f"epbench/{package}/{path.relative_to(folder).as_posix()}", path)
                for path in sorted(folder.rglob("*.py"))]
    if not any(name.startswith("epbench/core/") for name, _ in out) \
            or not any(name.startswith("epbench/generator/") for name, _ in out):
        raise RuntimeError(f"no source of epbench.core or epbench.generator under {root}")
    return out


def default_folder(project: Path, results_dir: Path) -> Path | None:
    """Where `epbench build` keeps the cache of one results tree:
    `user_cache_dir()/build/<digest of the tree's absolute path>/`; None (build without a
    cache) when that folder would lie inside the project, where a commit could put it."""
    tree = hashlib.sha256(os.path.abspath(results_dir).encode()).hexdigest()[:16]
    folder = user_cache_dir() / "build" / tree
    inside = os.path.realpath(folder), os.path.realpath(project)
    if inside[0] == inside[1] or inside[0].startswith(inside[1].rstrip(os.sep) + os.sep):
        log.warning("build cache: %s lies inside the project %s; building without a cache "
                    "(set XDG_CACHE_HOME or EPBENCH_CACHE_DIR elsewhere)", folder, project)
        return None
    return folder


def body_digest(body: bytes) -> str:
    """What each cache part carries of its body: its sha256 (integrity, not authenticity)."""
    return hashlib.sha256(body).hexdigest()


def _stat(path: Path | str) -> list[int] | None:
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return stat_key(info)


def stat_key(info: os.stat_result) -> list[int]:
    """What a stamp keeps of a file's stat: size, mtime, ctime and inode number."""
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


def _settled(stat: list[int] | None, began_ns: int) -> bool:
    """Whether `stat` (a `stat_key`) can stand for the file's bytes in a later build: its
    ctime lies more than SETTLED_NS before the build began, so a write after the build read
    the file moves it (a write within the same clock tick could leave it as it was)."""
    return stat is not None and len(stat) == 4 and stat[2] < began_ns - SETTLED_NS


def _tree_digest(digest: Any, folder: Path, label: str) -> None:
    if not folder.is_dir():
        return
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(f"{label}/{path.relative_to(folder).as_posix()}\0".encode())
            digest.update(path.read_bytes())


def context_digest(project: Path) -> str:
    """What every entry depends on besides its own file (see the module docstring)."""
    digest = hashlib.sha256(f"epbench-build-cache {FORMAT} {__version__}\0".encode())
    for name, path in code_files():
        digest.update(f"{name}\0".encode())
        digest.update(path.read_bytes())
    _tree_digest(digest, shipped("schemas"), "schemas")
    # the templates too: a kept result page is made from its row, its file and these
    _tree_digest(digest, shipped("site") / "templates", "templates")
    _tree_digest(digest, project / "workloads", "workloads")
    _tree_digest(digest, project / "endpoints", "endpoints")
    return digest.hexdigest()


@dataclass
class Stamp:
    """A file's identity now: stat and sha256 of the result and of its journal."""

    stat: list[int] | None
    sha: str | None = None
    journal_stat: list[int] | None = None
    journal_sha: str | None = None
    bundle_sha: str | None = None
    """The attestation bundle beside the result (`<stem>.sigstore.json`): its tier depends on it."""
    settled: bool = False
    """Whether `stat` and `journal_stat` can stand for the bytes in a later build (`_settled`)."""

    @classmethod
    def of_entry(cls, entry: dict[str, Any]) -> Stamp:
        """The stamp of a file whose settled entry stands untouched: the entry's own (same
        stat and journal stat, no bundle)."""
        return cls(entry["stat"], entry["sha"], entry.get("journal_stat"),
                   entry.get("journal_sha"), None, settled=True)


@dataclass
class BuildCache:
    """Entries of one results tree in one context."""

    folder: Path
    context: str
    shards: dict[int, dict[str, Any]] = field(default_factory=dict)
    rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    dirty: set[int] = field(default_factory=set)
    rows_dirty: set[int] = field(default_factory=set)
    """Shards whose rows changed (a file stored or dropped), not only a stat."""
    frames: dict[int, Any] = field(default_factory=dict)
    """Shard -> where its row frames are and their digests (`epbench.generator.build.row_store`)."""
    seen: set[str] = field(default_factory=set)
    began_ns: int = field(default_factory=time.time_ns)
    """When this build began (before any stat it takes): what `_settled` measures from."""

    @classmethod
    def open(cls, folder: Path, project: Path) -> BuildCache:
        cache = cls(folder, context_digest(project))
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return cache

    @classmethod
    def view(cls, folder: Path, context: str, number: int) -> BuildCache:
        """This cache as one shard that holds nothing yet (a worker writing a new shard:
        `epbench.generator.build.cold_shards`)."""
        cache = cls(folder, context)
        cache.shards[number], cache.rows[number] = {}, {}
        return cache

    def _shard_of(self, rel: str) -> int:
        return shard_of(rel)

    def _shard(self, number: int) -> dict[str, Any]:
        if number not in self.shards:
            self.shards[number] = self._read(number)
        return self.shards[number]

    def rows_of(self, number: int) -> dict[str, Any]:
        """File -> its packed rows, for the files of one shard that have rows."""
        if number not in self.rows:
            self.rows[number] = self._read(number, ".rows")
        return self.rows[number]

    def forget(self) -> None:
        """Ignore every entry (the row frames are gone or altered: check every file again)."""
        self.shards = {n: {} for n in range(SHARDS)}
        self.rows = {n: {} for n in range(SHARDS)}
        self.frames = {}
        self.dirty = set(range(SHARDS))
        self.rows_dirty = set(range(SHARDS))

    def _read(self, number: int, part: str = "") -> dict[str, Any]:
        path = self.folder / f"shard-{number:02d}{part}.json"
        try:
            raw = path.read_bytes()
        except OSError:
            return {}
        mac, _, body = raw.partition(b"\n")
        if mac != body_digest(body).encode():
            log.warning("build cache: %s does not match its digest; ignored", path.name)
            self.dirty.add(number)
            self.rows_dirty.add(number)
            if not part:  # its rows file may hold rows of files whose entries are gone
                self.rows[number] = {}
            return {}
        try:
            data = orjson.loads(body)  # the same values as json.loads, in a third of the time
        except ValueError:
            return {}
        if not isinstance(data, dict) or data.get("context") != self.context \
                or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
            self.dirty.add(number)
            self.rows_dirty.add(number)
            return {}
        entries: dict[str, Any] = data["entries"]
        if not part:
            self.frames[number] = data.get("frames")
        return entries

    def stamp(self, path: Path, rel: str, stat: list[int] | None = None,
              journal: bool | None = None,
              number: int | None = None,
              bundle: bool | None = None) -> tuple[Stamp, dict[str, Any] | None]:
        """The file's stamp and its entry when the entry still describes it (else None): the
        sha256 of the file's bytes and of its journal's are the entry's (hashed again unless the
        entry's settled stat is the file's, see the module docstring). `stat` is the file's
        `stat_key` when the caller has it already,
        `journal` and `bundle` whether a journal and an attestation bundle lie beside it when
        the caller listed the folder (False: none), `number` its shard when the caller knows
        it."""
        number = self._shard_of(rel) if number is None else number
        now, verdict = self.look(path, rel, stat, journal, number, bundle)
        return now, self.take(rel, number, now, verdict)

    def look(self, path: Path, rel: str, stat: list[int] | None, journal: bool | None,
             number: int, bundle: bool | None) -> tuple[Stamp, str]:
        """`stamp`'s reading of the file against its entry, recording nothing (so a forked
        process can do it for this one: `take` records it): the file's stamp, and whether the
        entry stands as it is ("same"), stands with a new stat to record ("moved", the same
        bytes: a fresh clone, a file settled since), or does not ("miss")."""
        entry = self._shard(number).get(rel)
        if bundle is False and stat is not None and isinstance(entry, dict):
            untouched = self._untouched(path, entry, stat, journal)
            if untouched is not None:
                return untouched, "same"
        journal_path = os.fspath(path).removesuffix(".json") + JOURNAL_SUFFIX
        journal_stat = None if journal is False else _stat(journal_path)
        now = Stamp(stat or _stat(path), journal_stat=journal_stat)
        now.settled = _settled(now.stat, self.began_ns) and (
            journal_stat is None or _settled(journal_stat, self.began_ns))
        bundle_path = os.fspath(path).removesuffix(".json") + BUNDLE_SUFFIX
        try:
            now.bundle_sha = sha256_file(bundle_path) \
                if bundle is not False and _stat(bundle_path) else None
        except OSError:
            now.bundle_sha = None
        if isinstance(entry, dict) and entry.get("settled") is True and now.stat is not None \
                and entry.get("stat") == now.stat and entry.get("journal_stat") == journal_stat:
            now.sha, now.journal_sha = entry.get("sha"), entry.get("journal_sha")  # untouched
        elif now.stat is not None and isinstance(entry, dict):  # else the checker hashes it
            try:
                now.sha = sha256_file(path)
                if now.journal_stat is not None:
                    now.journal_sha = sha256_file(journal_path)
            except OSError:
                now.sha = now.journal_sha = None
        if isinstance(entry, dict) and now.sha is not None and entry.get("sha") == now.sha \
                and entry.get("journal_sha") == now.journal_sha \
                and entry.get("bundle_sha") == now.bundle_sha:
            if now.settled and (entry.get("settled") is not True or entry.get("stat") != now.stat
                                or entry.get("journal_stat") != journal_stat):
                return now, "moved"
            return now, "same"
        return now, "miss"

    def take(self, rel: str, number: int, now: Stamp | None,
             verdict: str) -> dict[str, Any] | None:
        """Record what `look` found (the file seen; an entry's new stat, so that the next build
        need not hash it) and give the entry that still describes the file, else None. `now`
        may be None for "same" (the stamp is then the entry's: `Stamp.of_entry`)."""
        self.seen.add(rel)
        entry = self._shard(number).get(rel) if verdict != "miss" else None
        if not isinstance(entry, dict):
            return None
        if verdict == "moved":
            assert now is not None, "a moved entry is recorded with its new stamp"
            entry.update(stat=now.stat, journal_stat=now.journal_stat, settled=True)
            self.dirty.add(number)
        return entry

    def read_shards(self) -> None:
        """Every shard's entries read now (before a fork that looks at them)."""
        for number in range(SHARDS):
            self._shard(number)

    def _untouched(self, path: Path, entry: dict[str, Any], stat: list[int],
                   journal: bool | None) -> Stamp | None:
        """`stamp`'s answer for a file with no bundle beside it whose settled entry stands
        as it is (same stat, and the same journal stat: nothing hashed, nothing to record),
        without the rest of `stamp`'s work (a third of a rebuild's split at 100,000 results);
        None when any of that does not hold, and `stamp` decides."""
        if entry.get("settled") is not True or entry.get("stat") != stat \
                or entry.get("sha") is None or entry.get("bundle_sha") is not None \
                or not _settled(stat, self.began_ns):
            return None
        journal_stat = None if journal is False else _stat(
            os.fspath(path).removesuffix(".json") + JOURNAL_SUFFIX)
        if entry.get("journal_stat") != journal_stat or (
                journal_stat is not None and (entry.get("journal_sha") is None
                                              or not _settled(journal_stat, self.began_ns))):
            return None
        return Stamp.of_entry(entry)

    def store(self, rel: str, stamp: Stamp, kind: str | None, findings: list[Finding],
              run_id: str | None, identity: dict[str, Any], rows: Any) -> bool:
        """Keep one checked file's outcome (not when a finding depends on the clock); False
        when it was not kept (its old entry and rows are dropped)."""
        number = self._shard_of(rel)
        if stamp.sha is None or any(f.check in _CLOCK_CHECKS for f in findings):
            return self._drop(number, rel)
        entry = {
            "stat": stamp.stat, "sha": stamp.sha,
            "journal_stat": stamp.journal_stat, "journal_sha": stamp.journal_sha,
            "bundle_sha": stamp.bundle_sha, "settled": stamp.settled,
            "kind": kind, "run_id": run_id, "identity": identity, "rows": rows is not None,
            "findings": [[f.file, f.pointer, f.check, f.severity, f.message, f.fix, f.extra]
                         for f in findings],
        }
        self._shard(number)[rel] = entry  # one JSON cannot carry exactly is dropped at save
        kept = self.rows_of(number)
        if rows is not None:
            kept[rel] = rows
        else:
            kept.pop(rel, None)
        self.dirty.add(number)
        self.rows_dirty.add(number)
        return True

    def _drop(self, number: int, rel: str) -> bool:
        self._shard(number).pop(rel, None)
        self.rows_of(number).pop(rel, None)
        self.dirty.add(number)
        self.rows_dirty.add(number)
        return False

    def drop_gone(self) -> None:
        """Drop the entries (and rows) of files not looked up in this build."""
        for number in range(SHARDS):
            shard = self._shard(number) if (self.folder / f"shard-{number:02d}.json").exists() \
                or number in self.shards else {}
            gone = [rel for rel in shard if rel not in self.seen]
            for rel in gone:
                del shard[rel]
                self.rows_of(number).pop(rel, None)
            if gone:
                self.dirty.add(number)
                self.rows_dirty.add(number)

    def save(self) -> None:
        """Write the shards that changed (after `drop_gone`). An entry or rows that JSON cannot
        carry exactly (NaN, a type of its own) are dropped: that file is checked again."""
        for number in sorted(self.dirty | self.rows_dirty):
            bodies = self._bodies(number)
            if bodies is None:
                for rel in [rel for rel, entry in self.shards.get(number, {}).items()
                            if not _exact([entry, self.rows_of(number).get(rel)])]:
                    self._drop(number, rel)
                bodies = self._bodies(number)
            assert bodies is not None  # every entry left is exact
            self._write(number, "", bodies[0])
            if number in self.rows_dirty:
                self._write(number, ".rows", bodies[1])
        self.dirty.clear()
        self.rows_dirty.clear()

    def _bodies(self, number: int) -> tuple[bytes, bytes] | None:
        """A shard's entry file and rows file as JSON, None when JSON cannot carry one."""
        try:
            entries = _dumps({"format": FORMAT, "context": self.context,
                              "entries": self.shards.get(number, {}),
                              "frames": self.frames.get(number)})
            rows = _dumps({"format": FORMAT, "context": self.context,
                           "entries": self.rows_of(number)}) \
                if number in self.rows_dirty else b""
        except (TypeError, ValueError):
            return None
        return entries, rows

    def _write(self, number: int, part: str, body: bytes) -> None:
        mac = body_digest(body).encode()
        path = self.folder / f"shard-{number:02d}{part}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(mac + b"\n" + body)
        tmp.replace(path)


def _dumps(value: Any) -> bytes:
    """Compact JSON; ValueError or TypeError when JSON cannot carry the value exactly.

    orjson writes the same bytes as the standard encoder (compact, UTF-8) at a tenth of its
    time, but writes NaN and infinities as null and also takes dates, enums and dataclasses:
    a value holding anything but plain JSON types and finite floats goes to the standard
    encoder, which decides as it always did, as does anything orjson refuses (integers past
    64 bits, keys that are not strings, lone surrogates)."""
    if _plain(value):
        try:
            return orjson.dumps(value)
        except TypeError:  # orjson.JSONEncodeError
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode()


_INF = float("inf")
_SCALARS = (str, int, bool, type(None))


def _plain(value: Any) -> bool:
    """The value holds only dicts, lists, strings, integers, booleans, None and finite
    floats (exactly these types, not subclasses)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is list:
            for inner in item:
                inner_kind = type(inner)
                if inner_kind is float:
                    if inner != inner or inner == _INF or inner == -_INF:
                        return False
                elif inner_kind not in _SCALARS:
                    stack.append(inner)
        elif kind is dict:
            stack.extend(item.values())
        elif kind is float:
            if item != item or item in (_INF, -_INF):
                return False
        elif kind not in _SCALARS:
            return False
    return True


def _exact(value: Any) -> bool:
    try:
        _dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def shard_of(rel: str) -> int:
    """The shard of a file (its path relative to the results folder)."""
    return int(hashlib.sha256(rel.encode()).hexdigest()[:8], 16) % SHARDS


def findings_of(entry: dict[str, Any]) -> list[Finding]:
    return [Finding(str(f[0]), str(f[1]), str(f[2]), f[3], str(f[4]), str(f[5]), dict(f[6]))
            for f in entry["findings"]]
