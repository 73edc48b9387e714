"""CPU per request line of the runner's journal writing: `make_record` and `Journal.append`
(serialize, redact, one os.write) of realistic request lines into a temporary journal.

    python bench/journal_write.py                   # this tree
    python bench/journal_write.py --null            # make_record + serialize, no file
    cd /work/main && python /path/to/bench/journal_write.py   # another tree, for before/after

Each line is a 128-token streamed answer (128 inter-token gaps, the server's headers, an
error text on one line in ten, the run's key among the secrets). It prints the median of
--reps timings of --lines lines, in microseconds per line. It uses only `make_record` and
`Journal` (found where each tree has it), so the same script times any tree: the tree it
times is the one whose root is the working directory (the editable install's rule).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))  # a script's own folder comes first, not the tree's root

from epbench.runner.plan import PlannedRequest
from epbench.runner.response import ChatResponse
from epbench.runner.runner import make_record

try:  # the journal's writer moved to the base layer; older trees have it in the runner
    from epbench.core.journal_file import Journal
except ImportError:
    from epbench.runner.journal import Journal  # type: ignore[import-not-found,no-redef]

KEY = "sk-bench-" + "k" * 40


def answers(count: int) -> list[tuple[PlannedRequest, ChatResponse]]:
    out = []
    for i in range(count):
        req = PlannedRequest(f"c8-{i:05d}", "c8", i, False, 128)
        res = ChatResponse()
        res.t_send_ns, res.t_first_ns, res.t_first_answer_ns = 10_000 + i, 60_000 + i, 60_000 + i
        res.t_last_ns, res.t_done_ns = 700_000 + i, 701_000 + i
        res.input_tokens, res.input_source, res.output_tokens = 131, "usage", 128
        res.token_source, res.status = "usage", 200
        res.itl_us = [4980 + (j * 7919 + i) % 60 for j in range(127)]
        res.response_id = f"chatcmpl-{i:024d}"
        res.server_headers = {"date": "Tue, 01 Dec 2026 21:41:39 GMT", "x-request-id": f"r{i}"}
        res.content_bytes, res.tool_calls, res.sse_events = 512, 0, 131
        if i % 10 == 0:
            res.error_class, res.error = "http_5xx", f"upstream said no to {KEY}"
        out.append((req, res))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--null", action="store_true",
                        help="write to /dev/null: make_record and serializing alone")
    args = parser.parse_args()
    pairs = answers(args.lines)
    timings = []
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            path = Path("/dev/null") if args.null else Path(tmp) / f"events-{rep}.jsonl"
            with Journal(path, [KEY]) as journal:
                start = time.process_time_ns()
                for req, res in pairs:
                    journal.append(make_record(req, res, None, 1, 0.0, 0))
                timings.append((time.process_time_ns() - start) / args.lines / 1000)
            size = 0 if args.null else path.stat().st_size
    print(f"{Path.cwd()}: {statistics.median(timings):.2f} us per request line "
          f"(median of {args.reps} x {args.lines} lines, {size / args.lines:.0f} bytes each"
          f"{' to /dev/null' if args.null else ''}; "
          f"all: {', '.join(f'{t:.2f}' for t in timings)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
