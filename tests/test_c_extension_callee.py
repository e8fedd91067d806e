"""torch 2.1 names every C function it cannot call by its bare name (`call_method
UserDefinedObjectVariable(crc32) __call__ [...]`); the statement dynamo stopped at shows its module
(`zlib.crc32(token_ids)`). A third-party C function gets the C-extension diagnosis and its first fix, an opaque
custom op at the call, as on 2.4+ where the message itself says "third-party C/C++ Python extension"; the
standard library's C functions keep their own families.

Fixtures: recorded-corpus cases read by path (real torch runs, see samples/corpus/README.md).
"""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLES

from crashlens.cli.scan import run_scan
from crashlens.render.json import document

CASES = SAMPLES / "corpus" / "cases"


def _top(case: str) -> tuple[dict, dict]:
    label = json.loads((CASES / f"{case}.json").read_text())
    doc = document(run_scan((str(CASES / f"{case}.log.gz"),), (), audit=False, jobs=1))
    dyn = [d for d in doc["diagnoses"] if d["family"] == "dynamo"]
    assert dyn, "not detected"
    return label, dyn[0]


@pytest.mark.parametrize("case", ["case-0019", "case-0020", "case-0021"])  # plain, docker, docker head-cut
def test_a_c_extension_call_on_torch_2_1_gets_the_opaque_op_first(case):
    label, d = _top(case)
    assert label["torch_version"].startswith("2.1."), label["torch_version"]
    assert d["signature"] == "c-extension-call"
    assert d["callee"] == "zlib.crc32"
    first = d["fixes"][0]
    assert first["kind"] == "custom-op", first["title"]
    text = " ".join(str(first.get(k) or "") for k in ("title", "detail")).lower()
    assert any(k.lower() in text for k in label["accepted_fix_keywords"]), first["title"]


@pytest.mark.parametrize("case, signature", [
    ("case-0241", "time-call"),          # time.time()        -> UserDefinedObjectVariable(time)
    ("case-0256", "warnings-warn"),      # warnings.warn(...) -> UserDefinedObjectVariable(warn)
    ("case-0013", "skipped-function"),   # open(path)         -> UserDefinedObjectVariable(fspath)
])
def test_the_standard_librarys_c_functions_on_torch_2_1_keep_their_own_family(case, signature):
    label, d = _top(case)
    assert label["torch_version"].startswith("2.1.")
    assert d["signature"] == signature, (d["signature"], d["callee"])


def test_qualified_in_reads_the_module_of_a_bare_name_off_the_call():
    from crashlens.match import qualified_in

    assert qualified_in("return zlib.crc32(token_ids)  # expect: c-extension", "crc32") == "zlib.crc32"
    assert qualified_in("h = fused_ops_cpp.rms_norm(x, w)", "rms_norm") == "fused_ops_cpp.rms_norm"
    assert qualified_in("out = self.kernel.rms_norm(x)", "rms_norm") == ""  # an attribute of the object: no module
    assert qualified_in("with open(path) as f:", "fspath") == ""
