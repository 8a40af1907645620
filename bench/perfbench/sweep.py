"""The sweep of cblocks x ring size on the syscall storm: its runs, its
tables on the terminal and its section of the report."""
from .common import log
from .count import describe_run, finish_run
from .recorder import Spec
from .results import save
from .stats import fmt_med, median
from .table import label_conf, md_table, print_table


def run_sweep(args, bench, loads, results):
    load = loads["sweep"]
    log("== sweep: syscall storm, %s x %d, %d run(s) each" % (
        load.unit, load.batch, args.sweep_runs))
    rings = args.sweep_rings
    psd_cbs = args.sweep_cblocks
    perf_aios = args.sweep_aio
    runs = []
    for r in range(args.sweep_runs):
        for pages in rings:
            spec = Spec("raw_syscalls:sys_enter", pages=pages)
            base = bench.run_none(load)
            base.update(round=r, pages=pages)
            runs.append(base)
            confs = [("perfspilld", c) for c in psd_cbs] + \
                [("perf", a) for a in perf_aios]
            # interleave the recorders
            mixed = []
            a, b = [c for c in confs if c[0] == "perfspilld"], \
                [c for c in confs if c[0] == "perf"]
            while a or b:
                if a:
                    mixed.append(a.pop(0))
                if b:
                    mixed.append(b.pop(0))
            for kind, n in mixed:
                try:
                    if kind == "perfspilld":
                        res = bench.run_psd(load, spec, n,
                                            analyse_tools=False)
                    else:
                        res = bench.run_perf(load, spec, n,
                                             analyse_tools=False)
                except Exception as e:
                    res = {"recorder": kind, "error": str(e)[-600:]}
                res.update(round=r, pages=pages,
                           config=label_conf(kind, n))
                runs.append(res)
                log("  m=%-4d %-14s %s" % (pages, label_conf(kind, n),
                                            describe_run(res)))
    base = median([x.get("load_s") for x in runs if x["recorder"] == "none"])
    for x in runs:
        finish_run(x, base)
    results["sweep"] = {"batch": load.batch, "unit": load.unit,
                        "rings": rings, "cblocks": psd_cbs,
                        "aio": perf_aios, "runs": runs, "baseline_s": base}
    print_sweep(results["sweep"])
    save(args, results)


def sweep_cells(S, key, scale, spec):
    cells = {}
    for r in S["runs"]:
        if r["recorder"] == "none" or r.get("error"):
            continue
        cells.setdefault((r["config"], r["pages"]), []).append(r.get(key))
    confs = ["perfspilld c%d" % c for c in S["cblocks"]] + \
        [label_conf("perf", a) for a in S["aio"]]
    rows = []
    for c in confs:
        rows.append([c] + [fmt_med(cells.get((c, p), []), spec, scale)
                           for p in S["rings"]])
    return rows


SWEEP_FIGURES = [
    ("lost_share", "lost events, % of all", ".3f", 100),
    ("lost_early_pct", "lost in the first 0.5 s of the recording, % of the "
     "lost (cells with loss)", ".0f", 1),
    ("cpu_pct", "recorder CPU, % of one core", ".1f", 1),
    ("slowdown", "load slowdown (x unprofiled)", ".2f", 1),
    ("events_per_s", "events recorded /s", ",.0f", 1),
]


def print_sweep(S):
    for key, label, spec, scale in (SWEEP_FIGURES[0], SWEEP_FIGURES[2]):
        print()
        print_table(["%s \\ ring pages" % label] +
                    [str(p) for p in S["rings"]],
                    sweep_cells(S, key, scale, spec))
    print()


def report_sweep(args, results, png_ok):
    S = results.get("sweep")
    if not S:
        return []
    L = ["## Sweep: syscall storm, cblocks x ring size", ""]
    L.append("raw_syscalls:sys_enter without callchains; the storm is "
             "%s x %d (unprofiled %.2f s); %d run(s) per cell, medians. "
             "perfspilld with cblocks 0 (serial pwrite) to 8; perf serial "
             "and --aio=1..4. Counts from bench/tools/perfcount (perf "
             "report is too slow for every cell)." % (
                 S["unit"], S["batch"], S["baseline_s"] or 0,
                 args.sweep_runs))
    L.append("")
    if png_ok.get("sweep"):
        L.append("![lost share against ring size](lost-vs-ring.png)")
        L.append("")
    for key, label, spec, scale in SWEEP_FIGURES:
        L.append("### %s" % label)
        L.append("")
        L.append(md_table(["recorder \\ ring pages"] +
                          [str(p) for p in S["rings"]],
                          sweep_cells(S, key, scale, spec)))
        L.append("")
    return L
