"""General mechanisms that real bug-report pastes (samples/pastes-heldout3, read by path) exposed.

Each test names the mechanism, not the case: the paste is only the real text that shows it.
"""

from __future__ import annotations

import pytest

from conftest import paste_scanner

from crashlens.cli.scan import run_scan
from crashlens.frame import frame_line

_scan = paste_scanner("pastes-heldout3")


# -- line prefixes: torchelastic's worker tag and a bracketed time of day come off ------------------

def test_torchelastic_worker_prefix_comes_off_and_a_global_rank_wins():
    line = frame_line("x", 1, '[default0]:[rank8]:   File "/a/b.py", line 3, in f')
    assert (line.text, line.rank) == ('  File "/a/b.py", line 3, in f', "rank8")
    alone = frame_line("x", 1, "[trainer1]:Traceback (most recent call last):")
    assert (alone.text, alone.rank) == ("Traceback (most recent call last):", "rank1")


def test_bracketed_clock_prefix_comes_off_before_glog():
    line = frame_line("x", 1, "[01:17:10.938]: W1024 01:17:10.936000 1 torch/_dynamo/convert_frame.py:1009] Traceback "
                              "(most recent call last):")
    assert (line.text, line.level, line.logged_at) == ("Traceback (most recent call last):", "WARNING",
                                                       "torch/_dynamo/convert_frame.py")


@pytest.mark.parametrize("name, fatal", [("case-035.log", True), ("case-001.log", False)])
def test_compile_machinery_under_those_prefixes_is_a_compile_failure(name, fatal):
    # torchrun --tee's `[default0]:[rank0]:` on convert_frame frames; `[hh:mm:ss.mmm]: ` before glog W-lines
    # of a suppressed compile failure (a run that goes on: non-fatal)
    diags = _scan(name)
    assert [d.signature for d in diags] == ["compile-error-out-of-view"]
    assert diags[0].fatal is fatal


# -- a paste copied from a rendered page loses markdown's backticks around code in dynamo's words -----

def test_item_graph_break_without_its_backticks_gets_capture_scalar_outputs_first():
    # `Graph break from `Tensor.item()`, consider setting:` pasted as `Graph break from Tensor.item(), ...`
    diags = _scan("case-034.log")
    assert [d.signature for d in diags] == ["item-scalar"]
    assert "capture_scalar_outputs" in diags[0].fixes[0].title


def test_every_backtick_in_a_catalog_message_pattern_is_optional():
    from crashlens.catalog import get_catalog

    for sig in get_catalog().signatures:
        for field, pats in sig.matcher.all_rules():
            for text in (p.source for p in pats if field in ("message", "text")):
                for i, c in enumerate(text):
                    if c == "`":
                        assert text[i + 1 : i + 2] == "?", f"{sig.id}: {text!r}: a rendered paste drops it"


# -- a Windows path (drive letter, backslashes) in dynamo's headers still locates the culprit -------------

def test_recompile_limit_function_line_with_a_windows_path_gives_the_culprit():
    # `   function: 'forward' (G:\...\joint_model\asymm_models_joint.py:320)`
    diags = _scan("case-009.log")
    assert [d.signature for d in diags] == ["recompile-limit"]
    c = diags[0].culprit
    assert c is not None and c.file.replace("\\", "/").endswith("joint_model/asymm_models_joint.py")
    assert (c.line, c.function) == (320, "forward")


# -- a warning of dynamo's finding loggers (exc, higher_order_ops), in any log format, is a finding ----------

@pytest.mark.parametrize("name", ["case-010.log", "case-019.log"])
def test_warning_of_a_dynamo_finding_logger_is_a_non_fatal_finding(name):
    # glog W-lines from torch/_dynamo/exc.py that start inside the record (its FX node dump);
    # torch 2.2's `[date] [2/1] torch._dynamo.variables.higher_order_ops: [WARNING] speculate_subgraph: ...`
    diags = _scan(name)
    assert len(diags) == 1 and diags[0].family == "dynamo" and diags[0].fatal is False


def test_warning_of_another_torch_logger_is_nothing(tmp_path):
    # the same glog shape from a module that also warns in healthy runs is no finding
    log = tmp_path / "x.log"
    log.write_text("W0923 22:43:08.375000 183294 torch/_inductor/utils.py:1250] [0/0] not enough SMs to use "
                   "max_autotune_gemm mode\n"
                   "[2023-10-27 09:36:36,705] [2/1] torch._dynamo.variables.torch: [WARNING] Profiler function "
                   "<class 'torch.autograd.profiler.record_function'> will be ignored\n")
    assert not run_scan((str(log),), (), audit=False).diagnoses


# -- the FX graph dump under a failing node names the source line through its `# File:` comment --------------

def test_failing_fx_nodes_source_comment_is_the_culprit():
    # `While executing %item ...`, then `# File: .../moe.py:76 in _run_experts_for_loop, code: ... .tolist()`
    # above `item: "Sym(u0)" = getitem.item()`
    diags = _scan("case-010.log")
    c = diags[0].culprit
    assert c is not None and c.file.endswith("prime_rl/trainer/custom_models/layers/moe.py")
    assert (c.line, c.function) == (76, "_run_experts_for_loop")


def test_a_source_comment_of_another_node_is_not_the_culprit():
    from crashlens.diagnose import fx_node_source

    dump = ["While executing %mul : [num_users=1] = call_function[target=operator.mul](args = (%x, 2))",
            "    # File: /p/a.py:3 in f, code: y = x.tolist()",
            "    item = x.item()",
            "    # File: /p/a.py:5 in f, code: z = x * 2",
            "    mul = x * 2"]
    got = fx_node_source(dump)
    assert (got.file, got.line) == ("/p/a.py", 5)
    assert fx_node_source(dump[:3]) is None  # the failing node's own line is out of view
