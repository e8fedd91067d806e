"""Loaded by the recorded interpreter (samples/corpus/record.py puts this folder on PYTHONPATH).

When CRASHLENS_OUTCOME names a file, the uncaught exception's chain (outermost first, as
module.qualname) is written there as JSON before Python prints the traceback as usual, so the
label of a recording comes from the run itself.  The printed output is unchanged.
"""

import json
import os
import sys

_OUTCOME = os.environ.get("CRASHLENS_OUTCOME")

if _OUTCOME:
    def _record_outcome(exc_type, exc, tb, _previous=sys.excepthook):
        chain, seen, cur = [], set(), exc
        while cur is not None and id(cur) not in seen:
            seen.add(id(cur))
            chain.append(f"{type(cur).__module__}.{type(cur).__qualname__}")
            cur = cur.__cause__ or (None if cur.__suppress_context__ else cur.__context__)
        with open(_OUTCOME, "w") as fh:
            json.dump({"exception_chain": chain}, fh)
        _previous(exc_type, exc, tb)

    sys.excepthook = _record_outcome
