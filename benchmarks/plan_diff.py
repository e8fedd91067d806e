"""The plan `crashlens fix` makes for the first fatal crash of each log, one JSON object (no torch needed).

    cd a-copy-of-samples/repro
    PYTHONPATH=/old/tree/src python /path/to/benchmarks/plan_diff.py old.json LOG...
    PYTHONPATH=/new/tree/src python /path/to/benchmarks/plan_diff.py new.json LOG...

Two trees' outputs on the same logs say which plans a planner change altered (the kind, the title, the
diff), so that only those cases need a torch run of verify_fixes.py to show nothing regressed.
"""

from __future__ import annotations

import json
import sys

from crashlens.cli.scan import run_scan
from crashlens.fixplan import Locator, NoPlan, forget_files, plan_fix
from crashlens.patching import render_diff


def main() -> int:
    out: dict[str, str] = {}
    for log in sys.argv[2:]:
        forget_files()
        try:
            fatal = [d for d in run_scan((log,), (), False).diagnoses if d.fatal]
            if not fatal:
                out[log] = "nothing"
                continue
            p = plan_fix(fatal[0], Locator([], sys.path), None)
            out[log] = f"needs: {p.reason}" if isinstance(p, NoPlan) else f"{p.kind}: {p.title}\n{render_diff(p)}"
        except Exception as e:  # noqa: BLE001 - a tool: record the failure and go on
            out[log] = f"ERROR {type(e).__name__}: {e}"
    with open(sys.argv[1], "w") as fh:
        json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
