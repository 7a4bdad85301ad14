"""The suite's results: the table of bugs and catches (Markdown, printed and in results.md), results.json for
machines, and index.html linking every card the checks wrote."""
from __future__ import annotations

import html
import json
import os
import platform
from typing import Dict, List

COLUMNS = ("run", "bug", "check", "expected", "result", "found", "step", "s")


def cells(row: Dict) -> List[str]:
    return [row["run"], row["bug"], row["check"], row["expected"], "caught" if row["ok"] and row["bug"] != "(healthy)"
            else "quiet" if row["ok"] else "MISSED" if row["bug"] != "(healthy)" else "FALSE ALARM",
            row["found"], "" if row["step"] is None else str(row["step"]), "%.1f" % row["seconds"]]


def table(rows: List[Dict]) -> str:
    def md(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(md(c) for c in cells(row)) + " |")
    return "\n".join(lines)


def write(out: str, rows: List[Dict], seconds: float, full: bool) -> None:
    mode = "full" if full else "quick"
    met = sum(r["ok"] for r in rows)
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"schema": "rldk.reference/v1", "mode": mode, "seconds": round(seconds, 1),
                   "expectations": len(rows), "met": met, "machine": platform.machine(),
                   "cores": os.cpu_count(), "rows": rows}, f, indent=1)
    with open(os.path.join(out, "results.md"), "w", encoding="utf-8") as f:
        f.write("# rldk reference suite (%s)\n\n%d of %d expectations met in %.0f s on %d cores.\n\n%s\n"
                % (mode, met, len(rows), seconds, os.cpu_count() or 0, table(rows)))
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write(index_html(out, rows, seconds, mode, met))


def card_links(out: str, card: str) -> List[str]:
    """The HTML pages (else Markdown, else JSON) in a check's card folder, relative to out."""
    if not card or not os.path.isdir(card):
        return []
    names = sorted(os.listdir(card))
    for ext in (".html", ".md", ".json"):
        found = [n for n in names if n.endswith(ext)]
        if found:
            return [os.path.relpath(os.path.join(card, n), out) for n in found]
    return []


def index_html(out: str, rows: List[Dict], seconds: float, mode: str, met: int) -> str:
    e = html.escape
    body = []
    for row in rows:
        c = cells(row)
        tone = "ok" if row["ok"] else "bad"
        links = " ".join('<a href="%s">%s</a>' % (e(p), e(os.path.basename(p))) for p in card_links(out, row["card"]))
        body.append("<tr class=%s>%s<td>%s</td></tr>" % (tone, "".join("<td>%s</td>" % e(x) for x in c), links))
    return """<!doctype html><html lang=en><head><meta charset=utf-8><title>rldk reference suite</title>
<meta name=viewport content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1400px;color:#1f2328;padding:0 1rem}
h1{font-size:1.5rem;margin:0 0 .25rem}p.lede{color:#57606a;margin:0 0 1.25rem}
table{border-collapse:collapse;width:100%%}th,td{text-align:left;vertical-align:top;padding:.4rem .55rem;border-bottom:1px solid #d8dee4}
th{background:#f6f8fa;font-weight:600;position:sticky;top:0}td:nth-child(5){font-weight:600;white-space:nowrap}
tr.ok td:nth-child(5){color:#1a7f37}tr.bad td:nth-child(5){color:#cf222e}tr.bad{background:#fff5f5}
td:nth-child(6){max-width:34rem;color:#424a53}td:nth-child(7),td:nth-child(8){text-align:right;font-variant-numeric:tabular-nums}
a{color:#0969da}
</style></head><body>
<h1>rldk reference suite</h1>
<p class=lede>%s mode: %d of %d expectations met in %.0f s. Each bug is a real mis-configuration of a TRL run on a tiny
model; each row says which rldk capability had to catch it, what it reported, and links its card. Healthy runs must
stay quiet.</p>
<table><thead><tr>%s<th>cards</th></tr></thead><tbody>
%s
</tbody></table></body></html>
""" % (e(mode), met, len(rows), seconds, "".join("<th>%s</th>" % e(c) for c in COLUMNS), "\n".join(body))


BEGIN, END = "<!-- reference:begin -->", "<!-- reference:end -->"


def update_docs(path: str, out: str) -> None:
    """Replaces the block between BEGIN and END in a Markdown file with this run's results.md (minus its title)."""
    with open(os.path.join(out, "results.md"), encoding="utf-8") as f:
        body = f.read().split("\n", 2)[2].strip()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        raise SystemExit("rldk reference: %s has no %s ... %s block for the table" % (path, BEGIN, END))
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + BEGIN + "\n" + body + "\n" + END + tail)
