#!/usr/bin/env python3
"""Prints the catalog table of docs/detectors.md from data/detectors/*.yaml (the same files compiled into rldk).

    python3 scripts/detector_catalog.py            # the Markdown table
    python3 scripts/detector_catalog.py --update   # rewrite the table between the markers in docs/detectors.md

tests/python/test_docs_current.py fails when the table in the docs differs from the catalog.
"""
import argparse
import glob
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "detectors.md")
BEGIN, END = "<!-- catalog:begin -->", "<!-- catalog:end -->"
OPTIONS = ("direction", "transform", "other_direction", "progress")


def _inputs(d):
    if "metric" in d:
        text = "value: " + ", ".join(d["metric"])
    else:
        text = "; ".join("%s: %s" % (role, ", ".join(names)) for role, names in d["inputs"].items())
    # Context inputs are read when the run logs them; they never make a detector skip.
    for role, names in d.get("context", {}).items():
        text += "; %s (if logged): %s" % (role, ", ".join(names if isinstance(names, list) else [names]))
    # A setting the run may print: one severity lower when it is above 0.
    if "eased_by" in d:
        text += "; eased by setting %s > 0" % d["eased_by"]["setting"]
    return text


def _condition(c):
    return "{" + ", ".join("%s: %s" % (k, str(v).lower() if isinstance(v, bool) else v) for k, v in c.items()) + "}"


def _parameters(d):
    parts = ["%s=%s" % (k, v) for k, v in (d.get("params") or {}).items()]
    parts += ["%s=%s" % (k, d[k]) for k in OPTIONS if k in d]
    if "levels" in d:
        parts.append("levels=%s" % ", ".join("%s %s" % (k, v) for k, v in d["levels"].items()))
    if "when" in d:
        parts.append("when=[%s]" % ", ".join(_condition(c) for c in d["when"]))
    if "contradicted_when" in d:
        parts.append("contradicted_when=[%s]" % ", ".join(_condition(c) for c in d["contradicted_when"]))
    return ", ".join(parts)


def table():
    rows = ["| id | fault | area | severity | kind | inputs | parameters |", "|---|---|---|---|---|---|---|"]
    for path in sorted(glob.glob(os.path.join(ROOT, "data", "detectors", "*.yaml"))):
        with open(path) as f:
            for d in yaml.safe_load(f)["detectors"]:
                rows.append("| `%s` | %s | %s | %s | %s | %s | %s |" % (
                    d["id"], d["fault"], d["area"], d["severity"], d["kind"], _inputs(d), _parameters(d)))
    return "\n".join(rows) + "\n"


def documented():
    with open(DOC) as f:
        text = f.read()
    start, end = text.index(BEGIN) + len(BEGIN) + 1, text.index(END)
    return text, start, end


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--update", action="store_true", help="rewrite the table in docs/detectors.md")
    args = p.parse_args()
    if not args.update:
        sys.stdout.write(table())
        return 0
    text, start, end = documented()
    with open(DOC, "w") as f:
        f.write(text[:start] + table() + text[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
