"""The parent's clock on each run of a verify result: the largest excess over its allowance, and
the median excess and fixed cost (ms), over every workload of every run."""
import json
import sys

rows = []


def walk(o):
    if isinstance(o, dict):
        pc = o.get("parent_clock")
        if isinstance(pc, dict) and "excess_ms" in pc:
            rows.append((pc["excess_ms"], pc["allowed_ms"], pc["fixed_ms"], pc["window_ms"], pc["reported_ms"]))
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)


for f in sys.argv[1:]:
    rows.clear()
    walk(json.load(open(f)))
    if rows:
        med = lambda i: sorted(r[i] for r in rows)[len(rows) // 2]  # noqa: E731
        print("  parent clock %s: %d windows, max excess/allowed %.2f, median excess %.3f ms, fixed %.3f ms, "
              "window %.3f ms" % (f.split("/")[-1], len(rows), max(r[0] / r[1] for r in rows), med(0), med(2), med(3)))
