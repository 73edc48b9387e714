"""Libraries against the hand-written code they could replace, side by side in one process.

    PYTHONPATH=$PWD nice -n 10 python bench/libraries.py [--shapes 10000 100000] [--reps 3]
        [--base 1000]

(a) Schema validation of N result documents (tests/browser/site_data.py's synthetic results:
8 endpoints, serving sweeps of 6 points, one in five agentic; each document distinct), with
the hand-written `certainly_valid` (commit `HAND`'s `generator/checks/fast_schema.py`, the
validator's hot path until jsonschema-rs replaced it, loaded from git) and with
jsonschema-rs (`validator_for` on result.schema.json with the other schemas in its
`Registry`, `is_valid`), the documents already parsed, as the validator holds them. At most
`--distinct` documents are held at once (each ~80 kB of Python objects), cycled to N; neither
validator caches anything between documents.

(b) The downloads (CSV and JSON records) of the same shapes: the tables that `build_tables`
makes of `--base` results, every dated table's rows repeated N / base times (as
bench/downloads_speed.py's `--times`), both formats of every row in memory, with the
hand-written `download_formats` (commit `HAND_DOWNLOADS`, loaded from git: `rows(frame)` makes
both formats in one pass; polars replaced it), with the writer adopted
(`epbench.generator.downloads.formats`, then polars' `write_json` and `write_csv` quoting only
where needed, as `write_tables` writes a part), and with the two bare library writers measured
before the decision: pyarrow.csv.write_csv and polars' write_csv, each with polars'
`write_json`, after turning list and dict columns into their JSON text (orjson, cell by cell)
and nothing else (no formula prefix, no `unranked_reasons` join: lower bounds).

And the CPU of `build_tables` on the `--base` results (validation and aggregation, the
largest part of `epbench build`), to scale each difference against the build it sits in.

Each figure is the CPU seconds (user + system) of this process, best of `--reps`, the
candidates interleaved within each repetition (the machine is shared); ratios are library /
hand-written, so under 1 means the library is cheaper.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jsonschema_rs  # noqa: E402
import orjson  # noqa: E402
import pandas as pd  # noqa: E402
import polars as pl  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.csv as pacsv  # noqa: E402

from epbench.core.paths import schemas_dir  # noqa: E402
from epbench.generator import downloads  # noqa: E402
from tests.browser.site_data import (  # noqa: E402
    CLIENT_REGIONS,
    ENDPOINTS,
    SUBMITTERS,
    agentic_result,
    serving_result,
    write_project_files,
    write_results,
)

TABLES = ("runs", "points", "agentic", "history")
HAND = "955f12f"
"""The last commit with the hand-written schema compiler (`generator/checks/fast_schema.py`,
closures answering "certainly valid?"), loaded from git: jsonschema-rs replaced it."""
HAND_DOWNLOADS = "227eae5"
"""The last commit with the hand-written download writer (`generator/download_formats.py`,
Arrow joins of orjson tokens), loaded from git: polars replaced it."""


def from_git(ref: str, path: str, name: str) -> types.ModuleType:
    """The module at `path` as of commit `ref`, as module `name`."""
    text = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"],
                          check=True, capture_output=True, text=True).stdout
    module = types.ModuleType(name)
    sys.modules[module.__name__] = module
    exec(compile(text, f"{name}.py", "exec"), module.__dict__)
    return module


def hand_schema(ref: str = HAND) -> types.ModuleType:
    """The hand-written `fast_schema` module as of commit `ref`."""
    return from_git(ref, "generator/checks/fast_schema.py", "hand_fast_schema")


def hand_downloads(ref: str = HAND_DOWNLOADS) -> types.ModuleType:
    """The hand-written `download_formats` module as of commit `ref`."""
    return from_git(ref, "generator/download_formats.py", "hand_download_formats")


def cpu(work: Callable[[], Any]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def documents(count: int) -> list[dict[str, Any]]:
    """`count` distinct synthetic results, as write_results makes them, in memory."""
    import random

    rng = random.Random(1)
    out = []
    for i in range(count):
        ep = ENDPOINTS[i % len(ENDPOINTS)]
        day = date(2026, 8, 1) + timedelta(days=i * 7 % 100)
        region = CLIENT_REGIONS[i % len(CLIENT_REGIONS)]
        submitter = SUBMITTERS[i % len(SUBMITTERS)]
        if i % 5 == 4 and ep.division != "self-hosted":
            out.append(agentic_result(i, ep, day, region, submitter))
        else:
            out.append(serving_result(i, ep, day, region, submitter, rng))
    return out


def rs_validator() -> Any:
    schemas = {p.name: json.loads(p.read_text(encoding="utf-8"))
               for p in schemas_dir().glob("*.schema.json")}
    registry = jsonschema_rs.Registry([(s["$id"], s) for s in schemas.values()])
    return jsonschema_rs.validator_for(schemas["result.schema.json"], registry=registry,
                                       validate_formats=True)


def library_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every list or dict column as its JSON text (the libraries write none)."""
    out = frame.copy()
    for name in frame.columns:
        if frame[name].dtype == object:
            values = frame[name].to_numpy()
            if any(isinstance(v, list | dict) for v in values):
                out[name] = [None if v is None else orjson.dumps(
                    v, option=orjson.OPT_SERIALIZE_NUMPY).decode() if isinstance(
                    v, list | dict) else str(v) for v in values]
    return out


def hand_csv(frames: dict[str, pd.DataFrame], download_formats: types.ModuleType) -> int:
    """CSV and JSON records by the hand-written `download_formats` (one pass makes both)."""
    size = 0
    for frame in frames.values():
        rows = download_formats.rows(frame)
        size += sum(len(piece) for piece in rows.csv_part(0, len(frame)))
        size += sum(len(piece) for piece in rows.json_part(0, len(frame)))
    return size


def arrow_csv(frames: dict[str, pd.DataFrame]) -> int:
    """CSV by pyarrow.csv; JSON records by polars (pyarrow writes no JSON)."""
    size = 0
    for frame in frames.values():
        ready = library_frame(frame)
        table = pa.Table.from_pandas(ready, preserve_index=False)
        sink = io.BytesIO()
        pacsv.write_csv(table, sink, pacsv.WriteOptions(quoting_style="needed"))
        size += sink.tell() + len(pl.from_arrow(table).write_json())  # type: ignore[union-attr]
    return size


def adopted(frames: dict[str, pd.DataFrame]) -> int:
    """CSV and JSON records as `downloads.write_tables` writes a part (into memory here)."""
    size = 0
    for frame in frames.values():
        records, cells = downloads.formats(frame)
        sink = io.BytesIO()
        records.write_json(sink)
        cells.write_csv(sink, quote_style="necessary")
        size += sink.tell()
    return size


def polars_csv(frames: dict[str, pd.DataFrame]) -> int:
    """CSV and JSON records by polars."""
    size = 0
    for frame in frames.values():
        table = pl.from_pandas(library_frame(frame))
        size += len(table.write_csv(quote_style="necessary")) + len(table.write_json())
    return size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--distinct", type=int, default=10_000,
                        help="distinct documents held at once (100,000 would take ~8 GB)")
    parser.add_argument("--base", type=int, default=1000, help="results built into tables")
    args = parser.parse_args()
    from importlib.metadata import version

    print(f"jsonschema-rs {version('jsonschema-rs')}, pyarrow {pa.__version__}, "
          f"polars {pl.__version__}")

    from epbench.generator.tables import build_tables

    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        write_project_files(project)
        write_results(project / "results", args.base)
        build_cpu = min(cpu(lambda: build_tables(project / "results", project))
                        for _ in range(2))
        tables = build_tables(project / "results", project)
    print(f"build_tables on {args.base} results: {build_cpu:.2f} s CPU "
          f"({build_cpu / args.base * 1000:.2f} ms a result)")

    validator = rs_validator()
    certainly_valid = hand_schema().certainly_valid
    download_formats = hand_downloads()
    sample = documents(200)
    disagree = sum(certainly_valid(d, "result") != validator.is_valid(d) for d in sample)
    print(f"(a) verdicts on 200 valid results: fast_schema and jsonschema-rs disagree on "
          f"{disagree}")
    broken = documents(50)
    for i, d in enumerate(broken):
        d["points"] = "x" if i % 2 else d.get("points")
        d.pop("run_id", None)
    paths = {"/" + "/".join(map(str, e.instance_path)) for d in broken
             for e in validator.iter_errors(d)}
    print(f"    on 50 broken results: fast_schema says valid to "
          f"{sum(certainly_valid(d, 'result') for d in broken)}, jsonschema-rs to "
          f"{sum(validator.is_valid(d) for d in broken)}; jsonschema-rs instance paths e.g. "
          f"{sorted(paths)[:3]}")

    for shape in args.shapes:
        distinct = documents(min(shape, args.distinct))
        docs = (distinct * (shape // len(distinct) + 1))[:shape]
        times = max(1, shape // args.base)
        frames = {n: pd.concat([getattr(tables, n)] * times, ignore_index=True)
                  for n in TABLES}
        runs: dict[str, list[float]] = {}
        for rep in range(args.reps):
            line = []
            for name, work in (
                ("fast_schema", lambda d=docs: [certainly_valid(x, "result") for x in d]),
                ("jsonschema-rs", lambda d=docs: [validator.is_valid(x) for x in d]),
                ("download_formats", lambda f=frames: hand_csv(f, download_formats)),
                ("polars (adopted)", lambda f=frames: adopted(f)),
                ("pyarrow.csv+polars.json", lambda f=frames: arrow_csv(f)),
                ("polars csv+json", lambda f=frames: polars_csv(f)),
            ):
                seconds = cpu(work)
                runs.setdefault(name, []).append(seconds)
                line.append(f"{name} {seconds:.2f}")
            print(f"  {shape} results, rep {rep + 1} (s CPU): " + ", ".join(line))
        best = {name: min(values) for name, values in runs.items()}
        rows = ", ".join(f"{n} {len(f)}" for n, f in frames.items())
        build = build_cpu * shape / args.base
        print(f"{shape} results, best of {args.reps}, s CPU (build_tables scaled from "
              f"{args.base}: ~{build:.0f} s):")
        for hand, libs in (("fast_schema", ("jsonschema-rs",)),
                           ("download_formats", ("polars (adopted)", "pyarrow.csv+polars.json",
                                                 "polars csv+json"))):
            for lib in libs:
                print(f"  {hand} {best[hand]:.2f} vs {lib} {best[lib]:.2f}: "
                      f"{best[lib] / best[hand]:.2f}x; difference "
                      f"{best[lib] - best[hand]:+.2f} s, "
                      f"{(best[lib] - best[hand]) / build * 100:+.1f}% of build_tables")
        print(f"  CSV rows: {rows}")
    print("load average: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
