"""when.times_in, which mine reads a crash's time and the restarts between crashes with, gives what reading the
whole log line by line gives, however the log is cut into chunks (the fleet generator's SGLang lines, with a
recorded traceback whose lines carry no time)."""

from __future__ import annotations

import io
import itertools
import random
import sys

from conftest import ROOT, SAMPLES

from crashlens import when
from crashlens.read import iter_line_chunks

sys.path.insert(0, str(ROOT / "benchmarks"))
import gen_log  # noqa: E402


def _by_line(lines: list[bytes], wanted: list[int]) -> tuple[dict[int, str | None], list[int]]:
    times = {w: next((t for t in map(when.timestamp, reversed(lines[max(0, w - 1 - when.LOOK_BACK) : w]))
                      if t is not None), None) for w in wanted}
    restarts = [i for i, ln in enumerate(lines, 1) if any(m in ln for m in when.RESTART_MARKERS)]
    return times, [r for r in restarts if wanted[0] < r < wanted[-1]]


def test_times_and_restarts_do_not_depend_on_the_chunks():
    rng = random.Random(3)
    crash = [ln.encode() for ln in gen_log.sample_lines(SAMPLES / "raw" / "print-call.log")]
    restart = [ln.encode() for ln in gen_log.RESTART]
    for _ in range(300):
        traffic = gen_log.traffic(rng)
        lines: list[bytes] = []
        for _ in range(rng.randrange(1, 5)):
            lines += [ln.encode() for ln in itertools.islice(traffic, rng.randrange(0, 300))]
            lines += crash + restart
        wanted = sorted(rng.sample(range(1, len(lines) + 1), rng.randrange(1, 6)))
        data = b"\n".join(lines) + b"\n"
        got_restarts: list[int] = []
        got = when.times_in(iter_line_chunks(io.BytesIO(data), rng.choice((64, 512, 4096, 1 << 20))), wanted,
                            got_restarts)
        times, restarts = _by_line(lines, wanted)
        assert got == times
        # restart lines between the first and the last wanted line are all there (no others matter)
        assert sorted({r for r in got_restarts if wanted[0] < r < wanted[-1]}) == restarts
