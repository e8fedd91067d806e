#!/usr/bin/env python3
"""Which signature crashlens gives each graph break torch can raise: a coverage table over torch's own list.

    .venv/bin/python benchmarks/gb_coverage.py                       # 2.13 registry + 2.7.1 call sites
    .venv/bin/python benchmarks/gb_coverage.py --source 2.13 -v      # one source, every row
    .venv/bin/python benchmarks/gb_coverage.py --json out.json       # rows as JSON, to compare two trees

Sources (read from the torch venvs' site-packages; torch itself is not imported):
- `2.13` (`--registry`): torch/_dynamo/graph_break_registry.json, one entry per GB id (its first, current
  gb_type), rendered exactly as exc.format_graph_break_message prints it in 2.9+ (with the documentation link).
- `2.7` (`--v2-src`): torch 2.7 ships no registry; its structured breaks are the `unimplemented_v2(...)` call
  sites in torch/_dynamo, read with `ast`, rendered as 2.7's format_graph_break_message does (no link).
- `2.4` (`--v1-src`): the free-form `unimplemented("...")` one-liners of 2.1-2.6 (string-literal messages).

Each message replaces the message of a real recorded traceback (`--frame-*`: a torch.compile(fullgraph=True)
failure of that release, from samples/corpus/raw/), so crashlens reads it as it would read a user's log.
Template fields (`{fn}`) become their own names. The text is generated for this measurement only: it is NOT a
recording, and must never be committed as a sample or a test fixture.

Classes: `specific` (an exact catalog signature), `fuzzy` (the nearest signature by wording, not an exact rule:
often the wrong family), `generic-hint` (no family names it; the first fix is dynamo's own Hint for it),
`generic` (dynamo-generic or an internal-error signature with the general fixes), `none` (no diagnosis).
`wrong`: `--judged FILE` (TOML `[wrong."2.13"] GB0001 = ["signature", "why"]`, default gb_coverage_judged.toml)
marks rows a person found routed to the wrong family, while they still get that signature.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import os
import re
import sys
import tempfile
import textwrap
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "samples" / "corpus" / "raw"
SITE = "lib/python3.11/site-packages/torch/_dynamo"
GENERIC = {"dynamo-generic", "internal-dynamo-error", "dynamo-internal-assertion", "compile-error-out-of-view",
           "variable-has-no-type"}


# ---------------------------------------------------------------- the messages torch prints

def format_v2(gb_type: str, context: str, explanation: str, hints: list[str], link: str | None) -> str:
    """torch/_dynamo/exc.py format_graph_break_message (2.7-2.13; the link line is 2.9+)."""
    explanation = textwrap.indent(explanation, "    ").lstrip()
    hints_str = "\n".join("  Hint: " + textwrap.indent(h, "    ").lstrip() for h in hints)
    context = textwrap.indent(context, "    ").lstrip()
    msg = f"{gb_type}\n  Explanation: {explanation}\n{hints_str}\n\n  Developer debug context: {context}"
    if link:
        msg += f"\n\n For more details about this graph break, please visit: {link}"
    else:
        msg += "\n"  # 2.7/2.8 end the message with a newline
    return msg


_FIELD = re.compile(r"\{([^{}]*)\}")


def fill(template: str) -> str:
    """`{fn.__name__}` -> `fn.__name__`: the field's own expression, a neutral stand-in for its value."""
    return _FIELD.sub(lambda m: m.group(1).split("!")[0].split(":")[0].strip() or "value", template)


def registry_entries(path: Path) -> list[dict]:
    reg = json.loads(path.read_text())
    out = []
    for gb_id, entries in sorted(reg.items()):
        e = entries[0]
        link = f"https://meta-pytorch.github.io/compile-graph-break-site/gb/gb{gb_id[2:]}.html"
        msg = format_v2(e["Gb_type"], fill(e["Context"]), fill(e["Explanation"]), [fill(h) for h in e["Hints"]], link)
        out.append({"id": gb_id, "gb_type": e["Gb_type"], "message": msg, "hints": e["Hints"]})
    return out


def _hint_lists(dynamo_dir: Path) -> dict[str, list[str]]:
    tree = ast.parse((dynamo_dir / "graph_break_hints.py").read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            try:
                out[node.targets[0].id] = [ast.literal_eval(x) for x in node.value.elts]  # type: ignore[attr-defined]
            except (ValueError, AttributeError):
                pass
    return out


def _template(node: ast.AST | None) -> str | None:
    """A str constant or f-string as a template (`{expr}` for each field); None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                parts.append("{" + ast.unparse(v.value) + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _template(node.left), _template(node.right)
        return a + b if a is not None and b is not None else None
    return None


def _called(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def v2_call_sites(dynamo_dir: Path) -> list[dict]:
    """torch 2.7's `unimplemented_v2(gb_type=..., context=..., explanation=..., hints=[...])` calls."""
    lists = _hint_lists(dynamo_dir)
    seen: dict[str, dict] = {}
    for py in sorted(dynamo_dir.rglob("*.py")):
        for node in ast.walk(ast.parse(py.read_text())):
            if not (isinstance(node, ast.Call) and _called(node) in ("unimplemented_v2", "unimplemented_v2_with_warning")):
                continue
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            pos = node.args[1:] if _called(node) == "unimplemented_v2_with_warning" else node.args
            pos = pos[2:] if _called(node) == "unimplemented_v2_with_warning" else pos
            names = ("gb_type", "context", "explanation", "hints")
            for name, value in zip(names, pos):
                kw.setdefault(name, value)
            gb_type = _template(kw.get("gb_type"))
            if gb_type is None or gb_type in seen:
                continue
            hints: list[str] = []
            hn = kw.get("hints")
            if isinstance(hn, ast.List):
                for el in hn.elts:
                    if isinstance(el, ast.Starred) and isinstance(el.value, ast.Attribute):
                        hints.extend(lists.get(el.value.attr, []))
                    else:
                        t = _template(el)
                        if t is not None:
                            hints.append(t)
            elif isinstance(hn, ast.Attribute):
                hints.extend(lists.get(hn.attr, []))
            ctx = _template(kw.get("context")) or ""
            expl = _template(kw.get("explanation")) or ""
            msg = format_v2(gb_type, fill(ctx), fill(expl), [fill(h) for h in hints], None)
            seen[gb_type] = {"id": f"{py.relative_to(dynamo_dir)}:{node.lineno}", "gb_type": gb_type,
                             "message": msg, "hints": hints}
    return list(seen.values())


def v1_call_sites(dynamo_dir: Path) -> list[dict]:
    """torch 2.1-2.6's `unimplemented("...")` one-liners whose message is a string or f-string."""
    seen: dict[str, dict] = {}
    for py in sorted(dynamo_dir.rglob("*.py")):
        for node in ast.walk(ast.parse(py.read_text())):
            if not (isinstance(node, ast.Call) and _called(node) == "unimplemented" and node.args):
                continue
            t = _template(node.args[0])
            if t is None:
                continue
            msg = fill(t)
            if msg not in seen:
                seen[msg] = {"id": f"{py.relative_to(dynamo_dir)}:{node.lineno}", "gb_type": msg, "message": msg,
                             "hints": []}
    return list(seen.values())


# ---------------------------------------------------------------- framing: a real recorded traceback

_EXC = "torch._dynamo.exc.Unsupported: "


def load_frame(path: Path) -> tuple[str, str]:
    """(text before the message, text from `from user code:` on) of a recorded Unsupported traceback."""
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    lines = text.splitlines(keepends=True)
    lines = [ln for ln in lines if not ln.startswith("# crashlens")]  # the recorder's own header
    text = "".join(lines)
    i = text.index(_EXC) + len(_EXC)
    j = text.index("\nfrom user code:", i)
    head, tail = text[:i], text[j:]
    return head, tail


def frame_message(frame: tuple[str, str], message: str, v2: bool) -> str:
    head, tail = frame
    # 2.7+: "<msg>\n" + augment's "\nfrom user code:"; 2.1-2.6 the same with a one-line message
    return head + message.rstrip("\n") + ("\n\n" if v2 else "\n") + tail.lstrip("\n")


# ---------------------------------------------------------------- routing

def route(texts: list[str], src: Path = ROOT / "src") -> list[dict]:
    sys.path.insert(0, str(src))
    from crashlens.cli.scan import run_scan
    from crashlens.render.json import document

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, text in enumerate(texts):
            p = Path(tmp) / f"m{n}.log"
            p.write_text(text)
            diags = [d for d in document(run_scan((str(p),), (), audit=False, jobs=1))["diagnoses"]
                     if d.get("fatal", True)]
            if not diags:
                out.append({"signature": None, "exact": None, "fix": None})
                continue
            d = diags[0]
            fixes = d.get("fixes") or [{}]
            out.append({"signature": d.get("signature"), "exact": d.get("near_match") is None, "near": d.get("near_match"),
                        "fix": fixes[0].get("title"), "fix_kind": fixes[0].get("kind")})
    return out


def classify(row: dict, wrong: dict[str, list[str]]) -> str:
    sig = row["signature"]
    if sig is None:
        return "none"
    if sig in GENERIC:
        return "generic-hint" if str(row.get("fix") or "").startswith("Do what dynamo's own hint") else "generic"
    if wrong.get(row["id"], [None])[0] == sig:
        return "wrong"  # a person's judgement, fuzzy or exact
    if row.get("exact") is False:
        return "fuzzy"
    return "specific"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--source", action="append", choices=("2.13", "2.7", "2.4"))
    ap.add_argument("--registry", type=Path, default=Path(f"/work/venvs/t2.13.0/{SITE}/graph_break_registry.json"))
    ap.add_argument("--v2-src", type=Path, default=Path(f"/work/venvs/t2.7.1/{SITE}"))
    ap.add_argument("--v1-src", type=Path, default=Path(f"/work/venvs/t2.4.1/{SITE}"))
    ap.add_argument("--frame-2.13", dest="f213", type=Path, default=RAW / "t2.13.0" / "dynamo-generic.log.gz")
    ap.add_argument("--frame-2.7", dest="f27", type=Path, default=RAW / "t2.7.1" / "dynamo-generic.log.gz")
    ap.add_argument("--frame-2.4", dest="f24", type=Path, default=RAW / "t2.4.1" / "dynamo-generic.log.gz")
    ap.add_argument("--judged", type=Path, default=Path(__file__).with_name("gb_coverage_judged.toml"))
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="the crashlens sources to measure (another tree's src/)")
    ap.add_argument("--json", type=Path, help="write every row here")
    ap.add_argument("--dump", type=Path, help="write each framed message under this folder (for reading only)")
    ap.add_argument("-v", action="store_true", help="print every row that is not `specific`")
    args = ap.parse_args()
    sources = args.source or ["2.13", "2.7", "2.4"]
    judged: dict[str, dict[str, list[str]]] = {}
    if args.judged.exists():
        import tomllib

        judged = tomllib.loads(args.judged.read_text()).get("wrong", {})
    all_rows = []
    for src in sources:
        if src == "2.13":
            entries, frame, v2 = registry_entries(args.registry), load_frame(args.f213), True
        elif src == "2.7":
            entries, frame, v2 = v2_call_sites(args.v2_src), load_frame(args.f27), True
        else:
            entries, frame, v2 = v1_call_sites(args.v1_src), load_frame(args.f24), False
        texts = [frame_message(frame, e["message"], v2) for e in entries]
        if args.dump:
            d = args.dump / src
            d.mkdir(parents=True, exist_ok=True)
            for e, t in zip(entries, texts):
                (d / (re.sub(r"[^\w.-]", "_", e["id"]) + ".txt")).write_text(t)
        for e, r in zip(entries, route(texts, args.src)):
            row = {"source": src, "id": e["id"], "gb_type": e["gb_type"], **r}
            row["class"] = classify(row, judged.get(src, {}))
            all_rows.append(row)
        counts = Counter(r["class"] for r in all_rows if r["source"] == src)
        total = sum(counts.values())
        print(f"{src}: {total} entries  " + "  ".join(f"{k} {counts.get(k, 0)}" for k in
                                                       ("specific", "fuzzy", "wrong", "generic-hint", "generic", "none")))
        sigs = Counter(r["signature"] for r in all_rows if r["source"] == src)
        print("   signatures: " + ", ".join(f"{s} {n}" for s, n in sigs.most_common()))
        if args.v:
            for r in all_rows:
                if r["source"] == src and r["class"] != "specific":
                    print(f"   {r['class']:8} {r['id']:>28} {r['gb_type'][:70]!r:72} -> {r['signature']}"
                          f" | {str(r['fix'])[:70]}")
    if args.json:
        args.json.write_text(json.dumps(all_rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
