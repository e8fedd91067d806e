"""Atheris target over the whole pipeline (bytes -> lines -> records -> diagnoses -> renderers).

Outside the default tests; run for a fixed time from a scratch venv with atheris installed:

    python fuzz/atheris_fuzz.py -max_total_time=60
    python fuzz/atheris_fuzz.py -max_total_time=60 -max_len=65536 /tmp/corpus-copy   # seeded

libFuzzer adds inputs to a corpus directory it is given: seed it with a copy of real logs, never ../shared.
Any exception that escapes, or a run that hangs (libFuzzer's -timeout, default 1200 s), is a bug.
"""

from __future__ import annotations

import io
import json
import sys

import atheris

with atheris.instrument_imports():
    from crashlens.catalog import get_catalog
    from crashlens.pipeline import SourceSession, combine
    from crashlens.read import iter_lines
    from crashlens.render.json import render as render_json
    from crashlens.render.terminal import render as render_terminal

CAT = get_catalog()


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    flush_every = fdp.ConsumeIntInRange(0, 16)
    body = fdp.ConsumeBytes(fdp.remaining_bytes())
    session = SourceSession("fuzz.log", CAT)
    early = []
    for i, line in enumerate(iter_lines(io.BytesIO(body))):
        early.extend(session.feed(line))
        if flush_every and i % flush_every == 0:  # watch mode's idle flush
            for key in list(session.extractor.active_streams()):
                early.extend(session.flush_stream(key))
    early.extend(session.finish())
    result = combine([("fuzz.log", session.lines, session.final_diagnoses(early))])
    json.loads(render_json(result))
    render_terminal(result, io.StringIO(), color=True, width=100)


def main() -> None:
    args = list(sys.argv)
    if not any(a.startswith("-max_total_time") or a.startswith("-runs") for a in args[1:]):
        args.append("-max_total_time=60")
    atheris.Setup(args, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
