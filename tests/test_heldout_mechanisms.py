"""General mechanisms found missing on the real pastes of samples/pastes-heldout, each tested on the paste that
showed it (read by path, verbatim) and, where the mechanism is wider than that paste, on a second real log."""

from __future__ import annotations

from pathlib import Path

from crashlens.catalog import get_catalog
from crashlens.pipeline import combine, scan_lines

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "samples" / "pastes-heldout"


def _scan(lines: list[str]):
    n, diags = scan_lines("paste", lines, get_catalog([]))
    return [d for d in combine([("paste", n, diags)]).diagnoses if d.family == "dynamo"]


def _paste(name: str) -> list[str]:
    return (HELDOUT / name).read_text(encoding="utf-8").splitlines()


def _where(d) -> tuple[str, int] | None:
    c = d.culprit
    return None if c is None else ("/".join(c.file.split("/")[-2:]), c.line)


# -- explain(): each break reason its own finding, at the frame that broke ------------------------------------

def test_explain_report_gives_each_break_at_its_own_frame():
    """torch 2.0's explain() (fairseq, case 009): reasons 1-3 are one data-dependent jump reported once per
    enclosing frame (the call at transformer_encoder.py:207, the call at :127, the `if` at
    sinusoidal_positional_embedding.py:71); reason 4 is another jump (`if has_pads:` at :210)."""
    diags = _scan(_paste("case-009.log"))
    where = [_where(d) for d in diags]
    assert ("modules/sinusoidal_positional_embedding.py", 71) in where
    assert ("transformer/transformer_encoder.py", 210) in where
    # the callers of the first break are its chain, not findings of their own
    assert ("transformer/transformer_encoder.py", 207) not in where
    assert ("transformer/transformer_encoder.py", 127) not in where
    first = next(d for d in diags if _where(d) == ("modules/sinusoidal_positional_embedding.py", 71))
    assert [f.line for f in first.chain] == [207, 127, 71]
    assert not any(d.fatal for d in diags)  # explain() is a report of a run that went on


def test_explain_report_cut_at_the_end_of_input_is_complete_past_its_reasons():
    """A 2.13 explain() report (samples/raw/explain-print.log) ends in its ops, guards and compile times:
    followed by nothing, or by another rank's lines, it is the same complete finding."""
    lines = (ROOT / "samples" / "raw" / "explain-print.log").read_text(encoding="utf-8").splitlines()[1:]
    alone = _scan(lines)
    cut = _scan(lines[: next(i for i, ln in enumerate(lines) if ln.startswith("Compile Times:")) + 1])
    followed = _scan(["[2025-06-01 08:00:00 TP7] Load weight begin.", *lines,
                      "[2025-06-01 08:00:05 TP7] Init torch distributed begin."])
    assert len(alone) == len(cut) == len(followed) == 1
    assert alone[0].confidence == cut[0].confidence == followed[0].confidence
    assert alone[0].id == cut[0].id == followed[0].id


# -- the fingerprint: one finding per culprit line --------------------------------------------------------

def test_two_breaks_in_two_forwards_of_one_file_are_two_findings():
    """torch 2.0 cache_size_limit warnings (case 040): whisper's decoder `forward` (modeling_whisper.py:861)
    and its attention `forward` (:396) are two functions that hit the limit; both are named."""
    diags = _scan(_paste("case-040.log"))
    where = {_where(d) for d in diags}
    assert {("whisper/modeling_whisper.py", 861), ("whisper/modeling_whisper.py", 396)} <= where
    assert len({d.id for d in diags}) == len(diags)


def test_one_crash_printed_by_eight_ranks_is_still_one_finding():
    """The line in the fingerprint is the culprit's: every rank's copy of one crash names the same line."""
    lines = (ROOT / "samples" / "sglang-8rank-pcg-fp4.log").read_text(encoding="utf-8").splitlines()
    fatal = [d for d in _scan(lines) if d.fatal]
    assert len(fatal) == 1
    assert {o.rank for o in fatal[0].occurrences if o.rank} == {f"TP{i}" for i in range(8)}
