"""One self-contained HTML page from a crashlens/v1 document (scan, ci or mine): inline CSS and JS, no
network fetch (a Content-Security-Policy forbids one), every piece of log text escaped."""

from __future__ import annotations

import json
from html import escape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
        "connect-src 'none'; form-action 'none'; base-uri 'none'")

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}
header{background:#1b1f24;color:#fff;padding:14px 22px}header h1{margin:0;font-size:19px}
header p{margin:4px 0 0;color:#c9d1d9}
#filters{position:sticky;top:0;background:#fff;border-bottom:1px solid #d0d7de;padding:10px 22px;display:flex;
gap:10px;flex-wrap:wrap;align-items:center;z-index:2}
#filters input,#filters select{font:inherit;padding:4px 6px;border:1px solid #d0d7de;border-radius:6px}
#filters input{min-width:260px}#shown{color:#57606a}
main{padding:14px 22px}
.item{background:#fff;border:1px solid #d0d7de;border-radius:8px;margin:0 0 14px;padding:12px 16px}
.item h2{font-size:16px;margin:0 0 6px}.count{display:inline-block;min-width:28px;text-align:center;
background:#cf222e;color:#fff;border-radius:12px;padding:0 8px;margin-right:8px;font-size:13px}
.count.nonfatal{background:#9a6700}.meta{color:#57606a;font-size:13px;margin:2px 0}
.sig{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;background:#eaeef2;border-radius:4px;padding:0 5px}
.unknown .sig{background:#ffebe9}
pre{background:#f6f8fa;border:1px solid #eaeef2;border-radius:6px;padding:8px;white-space:pre-wrap;
word-break:break-word;margin:6px 0;font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
h3{font-size:13.5px;margin:12px 0 4px}ol.fixes{margin:4px 0;padding-left:22px}ol.fixes li{margin:0 0 6px}
.kind{font-size:12px;color:#57606a}
table.tl{border-collapse:collapse;font-size:12.5px;margin:4px 0}table.tl td,table.tl th{border:1px solid #eaeef2;
padding:2px 8px;text-align:left}table.tl th{background:#f6f8fa}
svg.tl{display:block;margin:6px 0;background:#fbfcfd;border:1px solid #eaeef2;border-radius:6px}
.hidden{display:none}
"""

_JS = """
(function(){
  var items=[].slice.call(document.querySelectorAll('.item'));
  var q=document.getElementById('q'),fs=document.getElementById('f-signature'),
      fr=document.getElementById('f-rank'),fo=document.getElementById('f-source'),
      shown=document.getElementById('shown');
  function apply(){
    var text=q.value.toLowerCase(),n=0;
    items.forEach(function(el){
      var ok=(!text||el.textContent.toLowerCase().indexOf(text)>=0)
        &&(!fs.value||el.getAttribute('data-signature')===fs.value)
        &&(!fr.value||JSON.parse(el.getAttribute('data-ranks')).indexOf(fr.value)>=0)
        &&(!fo.value||JSON.parse(el.getAttribute('data-sources')).indexOf(fo.value)>=0);
      el.classList.toggle('hidden',!ok);if(ok)n++;
    });
    shown.textContent=n+' of '+items.length+' shown';
  }
  [q,fs,fr,fo].forEach(function(el){el.addEventListener('input',apply);el.addEventListener('change',apply);});
  apply();
})();
"""


def _e(value: object) -> str:
    """Escaped text; its newlines as character references, so no line of the page starts with log text
    (a CI runner reading the page on stdout would take `::command::` at a line start for its own)."""
    return escape("" if value is None else str(value), quote=True).replace("\r", "&#13;").replace("\n", "&#10;")


def _attr_json(values: list[str]) -> str:
    return _e(json.dumps(values, ensure_ascii=False))


def _natural(s: str) -> list[Any]:
    import re

    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s)]


def _timeline(occ: list[dict[str, Any]]) -> str:
    """Per rank, when it printed the crash: an SVG strip and the same facts as a table, in the
    document's order (earliest first: by log time, else by position in the logs)."""
    if not occ:
        return ""
    order = list(range(len(occ)))
    pos = {i: k for k, i in enumerate(order)}
    ranks = sorted({o.get("rank") or "(no rank)" for o in occ}, key=_natural)
    row = {r: k for k, r in enumerate(ranks)}
    width, left, step = 640, 110, 16
    height = 12 + step * len(ranks)
    span = max(len(occ) - 1, 1)
    parts = [f'<svg class="tl" width="{width}" height="{height}" role="img" aria-label="timeline per rank">']
    for r, k in row.items():
        y = 12 + step * k
        parts.append(f'<text x="6" y="{y + 4}" font-size="11" fill="#57606a">{_e(r)}</text>'
                     f'<line x1="{left}" y1="{y}" x2="{width - 10}" y2="{y}" stroke="#eaeef2"/>')
    for i, o in enumerate(occ):
        x = left + (width - left - 20) * pos[i] / span if len(occ) > 1 else left
        y = 12 + step * row[o.get("rank") or "(no rank)"]
        when = o.get("time") or "no timestamp"
        rnd = f", round {o['round']}" if o.get("round") is not None else ""
        parts.append(f'<circle class="tick" cx="{x:.1f}" cy="{y}" r="4" fill="#cf222e"><title>'
                     f'{_e(o.get("rank") or "(no rank)")}: {_e(when)} at {_e(o["source"])}:{o["line"]}{_e(rnd)}'
                     f'</title></circle>')
    parts.append("</svg>")
    has_round = any(o.get("round") is not None for o in occ)
    head = "<tr><th>rank</th><th>time</th>" + ("<th>round</th>" if has_round else "") + "<th>where</th></tr>"
    rows = []
    for i in order:
        o = occ[i]
        rows.append(f'<tr class="tl-row"><td>{_e(o.get("rank") or "(no rank)")}</td><td>{_e(o.get("time") or "—")}</td>'
                    + (f'<td>{_e(o.get("round", ""))}</td>' if has_round else "")
                    + f'<td>{_e(o["source"])}:{_e(o["line"])}</td></tr>')
    return "".join(parts) + f'<table class="tl">{head}{"".join(rows)}</table>'


def _item(n: int, d: dict[str, Any], group: dict[str, Any] | None) -> str:
    """One diagnosis (scan, ci) or group (mine, with its diagnosis under `diagnosis`)."""
    occ = group["timeline"] if group is not None else d.get("occurrences", [])
    signature = (group["signature"] if group is not None else d.get("signature")) or "unknown"
    ranks = group["ranks"] if group is not None else d.get("ranks", [])
    sources = group["sources"] if group is not None else sorted({o["source"] for o in occ})
    count = group["count"] if group is not None else len(occ)
    known = group["known"] if group is not None else signature != "unknown"
    cls = "item" + ("" if known else " unknown")
    out = [f'<section class="{cls}" id="item-{n}" data-id="{_e(d.get("id"))}" data-signature="{_e(signature)}" '
           f'data-ranks="{_attr_json(ranks)}" data-sources="{_attr_json(sources)}">']
    fatal = "" if d.get("fatal", True) else " nonfatal"
    out.append(f'<h2><span class="count{fatal}" title="{"times seen" if group else "copies in the log"}">{count}</span>'
               f'{_e(d.get("title"))}</h2>')
    out.append(f'<p class="meta"><span class="sig">{_e(signature)}</span> · id {_e(d.get("id"))}'
               + (f' · {_e(d["family"])}' if d.get("family") else "")
               + ("" if d.get("fatal", True) else " · not fatal") + "</p>")
    c = d.get("culprit")
    if c:
        out.append(f'<p class="meta culprit">culprit: <code>{_e(c["file"])}:{_e(c["line"])} in {_e(c["function"])}</code></p>')
        if d.get("culprit_source"):
            out.append(f"<pre>{_e(d['culprit_source'])}</pre>")
    if d.get("callee"):
        out.append(f'<p class="meta">rejected call: <code>{_e(d["callee"])}</code></p>')
    exc = d.get("exception")
    if exc:
        out.append(f'<pre class="exception">{_e(exc.get("type"))}{": " if exc.get("type") else ""}{_e(exc.get("message"))}</pre>')
    if group is not None:
        out.append(f'<p class="meta">{len(sources)} file{"s" if len(sources) != 1 else ""}'
                   f' · ranks: {_e(", ".join(ranks) or "—")}'
                   f' · first seen {_e(group["first_seen"].get("time") or "")} {_e(group["first_seen"]["source"])}:'
                   f'{_e(group["first_seen"]["line"])}'
                   f' · last seen {_e(group["last_seen"].get("time") or "")} {_e(group["last_seen"]["source"])}:'
                   f'{_e(group["last_seen"]["line"])}</p>')
        out.append(f'<p class="meta">example: {_e(group["example"]["source"])}:{_e(group["example"]["line"])}</p>')
    fixes = d.get("fixes") or []
    out.append("<h3>Fixes, best first</h3>")
    if fixes:
        out.append('<ol class="fixes">')
        for f in fixes:
            where = f' <span class="kind">({_e(f["file"])}{":" + _e(f["line"]) if f.get("line") else ""})</span>' \
                if f.get("file") else ""
            out.append(f'<li><strong>{_e(f["title"])}</strong> <span class="kind">[{_e(f["kind"])}]</span>{where}'
                       + (f'<pre>{_e(f["detail"])}</pre>' if f.get("detail") else "")
                       + (f'<div class="kind">safety: {_e(f["safety"])}</div>' if f.get("safety") else "") + "</li>")
        out.append("</ol>")
    else:
        out.append('<p class="meta">No signature names this crash yet: crashlens signatures new --from '
                   f'{_e(d.get("id"))} drafts one.</p>')
    nxt = list(d.get("warnings") or [])
    nxt += [f'{b.get("file", "")}:{b.get("line", "")} {b.get("what") or b.get("reason") or b.get("callee") or ""}'.strip()
            for b in d.get("next") or [] if isinstance(b, dict)]
    if nxt:
        out.append('<h3>Next in this chain</h3><ul class="next">'
                   + "".join(f"<li>{_e(x)}</li>" for x in nxt) + "</ul>")
    out.append("<h3>Timeline per rank</h3>")
    out.append(_timeline(occ) or '<p class="meta">no occurrence recorded</p>')
    if group is not None and group.get("timeline_truncated"):
        out.append(f'<p class="meta">the first {len(occ)} occurrences are shown</p>')
    out.append("</section>")
    return "".join(out)


def _page(title: str, subtitle: str, items: list[str], signatures: list[str], ranks: list[str],
          sources: list[str]) -> str:
    def options(label: str, values: list[str]) -> str:
        return f'<option value="">all {label}</option>' + "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)

    body = "".join(items) if items else '<p class="meta">No crash found.</p>'
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><p>{_e(subtitle)}</p></header>"
        '<div id="filters"><input id="q" type="search" placeholder="search text, culprit, file…" aria-label="search">'
        f'<select id="f-signature" aria-label="signature">{options("signatures", signatures)}</select>'
        f'<select id="f-rank" aria-label="rank">{options("ranks", ranks)}</select>'
        f'<select id="f-source" aria-label="source">{options("sources", sources)}</select>'
        '<span id="shown"></span></div>'
        f"<main>{body}</main><script>{_JS}</script></body></html>\n"
    )


def render_mine(doc: dict[str, Any]) -> str:
    """The page for a `crashlens mine` document (mine.document)."""
    groups = doc.get("groups", [])
    items = [_item(n, g["diagnosis"], g) for n, g in enumerate(groups, 1)]
    subtitle = (f'{doc.get("crashes", 0)} crashes in {len(groups)} groups shown from {doc.get("files", 0)} files'
                + (f'; {doc["hidden_known"]} known groups hidden (--all shows them)' if doc.get("hidden_known") else ""))
    return _page("crashlens mine", subtitle, items,
                 sorted({g["signature"] for g in groups}), sorted({r for g in groups for r in g["ranks"]}, key=_natural),
                 sorted({s for g in groups for s in g["sources"]}))


def render_scan(doc: dict[str, Any]) -> str:
    """The page for a scan or ci document (render.json.document), occurrences optionally with a `time`."""
    diags = doc.get("diagnoses", [])
    items = [_item(n, d, None) for n, d in enumerate(diags, 1)]
    lines = sum(s.get("lines", 0) for s in doc.get("sources", []))
    subtitle = (f'{len(diags)} distinct crash{"es" if len(diags) != 1 else ""} in '
                f'{len(doc.get("sources", []))} source(s), {lines} lines')
    return _page("crashlens report", subtitle, items,
                 sorted({d.get("signature") or "unknown" for d in diags}),
                 sorted({r for d in diags for r in d.get("ranks", [])}, key=_natural),
                 sorted({o["source"] for d in diags for o in d.get("occurrences", [])}))
