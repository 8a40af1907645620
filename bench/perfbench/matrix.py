"""Issue 16's matrix (--matrix): each load recorded by perfspilld at every
cblocks count and by perf in every mode, perfspilld's runs checked (LOST
records against status, status answers in time); its tables, best modes,
targets and report section."""
import re

from .common import STATUS_MS_MAX, log
from .count import describe_run, finish_run
from .load import experiments
from .results import save
from .stats import fmt_med, fmt_num, fmt_ratio, median, ratio
from .table import label_conf, md_table, print_table


def parse_perf_mode(m):
    """serial -> 0, aioN -> N, threads -> "threads"."""
    if m == "serial":
        return 0
    if m == "threads":
        return "threads"
    if re.fullmatch(r"aio[1-4]", m):
        return int(m[3:])
    return None


def matrix_conf(kind, n, write=None):
    if kind == "perfspilld-B":
        return "perfspilld-B c%d" % n
    if kind == "perfspilld" and write:
        return "perfspilld " + write
    return label_conf(kind, n) if kind != "none" else "unprofiled"


def matrix_configs(args, bench):
    """(kind, n, write) of every configuration of a matrix round, the
    unprofiled run first, then the two recorders interleaved; and the
    notes on configurations this perfspilld cannot run."""
    notes = []
    if args.write_path:
        if bench.has_direct_io:
            confs = [("perfspilld", args.cblocks, w)
                     for w in ("direct", "buffered")]
        else:
            # before issue 21 the daemon writes through the page cache,
            # and only so: that is its buffered path
            confs = [("perfspilld", args.cblocks, "buffered")]
            notes.append("perfspilld direct not run: this perfspilld has "
                         "no config key direct_io (perfspilld -n shows "
                         "none); perfspilld buffered is the daemon as it "
                         "is, without the key")
    else:
        confs = [("perfspilld", c, None) for c in args.psd_cblocks]
        if args.build_b:    # A/B: each cblocks count with both binaries
            confs = [x for c in args.psd_cblocks
                     for x in (("perfspilld", c, None),
                               ("perfspilld-B", c, None))]
    perf = [("perf", parse_perf_mode(m), None) for m in args.perf_modes]
    mixed = [("none", None, None)]
    while confs or perf:        # interleave the two recorders
        if confs:
            mixed.append(confs.pop(0))
        if perf:
            mixed.append(perf.pop(0))
    return mixed, notes


def psd_checks(res):
    """The per-run checks of a perfspilld run: the LOST records in its
    file carry exactly the losses its stop reply counts, and every status
    question was answered within 100 ms."""
    t = res.get("totals") or {}
    pc = res.get("perfcount") or {}
    if t and "lost" in pc:
        res["lost_match"] = (pc.get("lost", 0) or 0) + \
            (pc.get("lost_samples", 0) or 0) == \
            t.get("lost", 0) + t.get("lost_samples", 0)
    if res.get("status_ms_max") is not None or res.get("status_errors"):
        res["status_ok"] = not res.get("status_errors") and \
            res.get("status_ms_max", 1e9) <= STATUS_MS_MAX


def check_word(v):
    return "-" if v is None else ("pass" if v else "FAIL")


def run_matrix(args, bench, loads, results):
    exps = {e[0]: e for e in experiments(args, bench)}
    mixed, notes = matrix_configs(args, bench)
    for n in notes:
        log("note: " + n)
    results["matrix_notes"] = notes
    results["matrix"] = {}
    for key in args.loads:
        _, title, lkey, spec, _ = exps[key]
        load = loads[lkey]
        log("== matrix %s: %s; %s x %d, %d round(s)" % (
            key, title, load.unit, load.batch, args.runs))
        runs = []
        for r in range(args.runs):
            # rotated each round and reversed every other one: no
            # configuration always runs first or after the same neighbour
            k = (r * 3) % len(mixed)
            order = mixed[k:] + mixed[:k]
            if r % 2:
                order.reverse()
            for kind, n, write in order:
                try:
                    if kind == "none":
                        res = bench.run_none(load)
                    elif kind.startswith("perfspilld"):
                        res = bench.run_psd(load, spec, n,
                                            analyse_tools=False, daemon=kind,
                                            write=write if
                                            bench.has_direct_io else None)
                        psd_checks(res)
                    else:
                        res = bench.run_perf(load, spec, n,
                                             analyse_tools=False)
                except Exception as e:      # keep going; report it
                    res = {"recorder": kind, "error": str(e)[-600:]}
                res.update(round=r, config=matrix_conf(kind, n, write))
                runs.append(res)
                extra = ""
                if kind.startswith("perfspilld") and not res.get("error"):
                    extra = "; LOST==status %s; status max %s ms %s" % (
                        check_word(res.get("lost_match")),
                        fmt_num(res.get("status_ms_max"), ".1f"),
                        check_word(res.get("status_ok")))
                    if res.get("write_path_seen"):
                        extra += "; write path %s" % "/".join(
                            res["write_path_seen"])
                if res.get("resident_share") is not None:
                    extra += "; page cache +%.1f %% of the file" % (
                        100 * res["resident_share"])
                log("  round %d %-16s %s%s" % (r, res["config"],
                                               describe_run(res), extra))
        base = median([x.get("load_s") for x in runs
                       if x["recorder"] == "none"])
        for x in runs:
            finish_run(x, base)
        results["matrix"][key] = {
            "title": title, "load": load.title, "batch": load.batch,
            "unit": load.unit, "spec": spec.describe(), "baseline_s": base,
            "kind": "write-path" if args.write_path else "matrix",
            "key": key, "rounds": args.runs,
            "configs": [matrix_conf(k, n, w) for k, n, w in mixed[1:]],
            "perf_argv": {matrix_conf("perf", parse_perf_mode(m)):
                          " ".join(["perf", "record"] +
                                   spec.perf_args(parse_perf_mode(m)))
                          for m in args.perf_modes},
            "psd_args": " ".join(["perfspillctl", "start"] +
                                 spec.psd_args(mixed[1][1])) +
            ("  (conf/perfspilld.json as shipped)" if spec.shipped else ""),
            "runs": runs}
        print_matrix(results["matrix"][key])
        save(args, results)


MATRIX_FIGURES = [
    ("lost_share", "lost, %", ".3f", 100),
    ("cpu_s", "CPU, s", ".3f", 1),
    ("steady_cpu_pct", "CPU while recording, % core", ".1f", 1),
    ("slowdown", "slowdown", ".2f", 1),
    ("mb_per_s", "MB/s", ".1f", 1),
    ("stop_s", "stop, s", ".2f", 1),
    ("status_ms_max", "status max, ms", ".1f", 1),
    ("cache_added_share", "Cached added, % of file", ".1f", 100),
    ("resident_share", "file in page cache, %", ".1f", 100),
]


def matrix_table(M):
    """(header, rows) of a matrix load, a row per configuration; the
    columns no run has a figure for (page cache in older runs, status for
    perf alone...) left out."""
    cells = {}
    for r in M["runs"]:
        if r["recorder"] != "none" and not r.get("error"):
            cells.setdefault(r["config"], []).append(r)
    hdr = ["configuration", "runs"] + [f[1] for f in MATRIX_FIGURES] + \
        ["LOST==status", "status<=100ms", "write path (status)"]
    rows = []
    for c in M["configs"]:
        rs = cells.get(c, [])
        row = [c, str(len(rs))]
        for key, _, spec, scale in MATRIX_FIGURES:
            row.append(fmt_med([x.get(key) for x in rs], spec, scale))
        for key in ("lost_match", "status_ok"):
            v = [x.get(key) for x in rs if x.get(key) is not None]
            row.append("%d/%d" % (sum(v), len(v)) if v else "-")
        seen = ["/".join(x["write_path_seen"]) for x in rs
                if x.get("write_path_seen")]
        row.append(", ".join("%s %d/%d" % (p, seen.count(p), len(rs))
                             for p in sorted(set(seen))) or "-")
        rows.append(row)
    keep = [i for i in range(len(hdr))
            if i < 2 or any(r[i] != "-" for r in rows)]
    return ([hdr[i] for i in keep],
            [[r[i] for i in keep] for r in rows])


def print_matrix(M):
    print()
    print("  %s  [%s; unprofiled %.2f s]" % (M["title"], M["spec"],
                                              M["baseline_s"] or 0))
    print_table(*matrix_table(M))
    print()


def matrix_best(M, prefix):
    """The configuration of one recorder with the lowest median lost
    share (then the lowest median CPU): (config, lost share, CPU s)."""
    best = None
    for c in M["configs"]:
        if not c.startswith(prefix):
            continue
        rs = [r for r in M["runs"] if r.get("config") == c and
              not r.get("error")]
        lost = median([r.get("lost_share") for r in rs])
        cpu = median([r.get("cpu_s") for r in rs])
        if lost is None:
            continue
        if best is None or (lost, cpu or 0) < (best[1], best[2] or 0):
            best = (c, lost, cpu)
    return best


def matrix_targets(results, default_cblocks):
    """Issue 16's targets on each matrix load (a write-path matrix has
    issue 21's instead, write_path_rows) and every matrix's run checks."""
    T = []
    for key, M in (results.get("matrix") or {}).items():
        if M.get("kind") != "write-path":
            T += best_mode_targets(key, M, default_cblocks)
        T += run_check_targets(key, M)
    return T


def best_mode_targets(key, M, default_cblocks):
    """perfspilld (its best configuration, and the shipped default)
    against perf's best mode: lost share at most half, CPU at most."""
    T = []
    bp = matrix_best(M, "perf ")
    if bp is None:
        return T
    cands = [matrix_best(M, "perfspilld ")]
    dflt = "perfspilld c%d" % default_cblocks
    if dflt in M["configs"] and cands[0] and cands[0][0] != dflt:
        rs = [r for r in M["runs"] if r.get("config") == dflt and
              not r.get("error")]
        cands.append((dflt, median([r.get("lost_share") for r in rs]),
                      median([r.get("cpu_s") for r in rs])))
    for c in cands:
        if c is None or c[1] is None:
            continue
        T.append(("%s: %s lost share <= 0.5 x perf's best (%s)" % (
            key, c[0], bp[0]),
            "%.3f %% vs %.3f %%: ratio %s" % (
                100 * c[1], 100 * bp[1], fmt_ratio(ratio(c[1], bp[1]))),
            c[1] <= 0.5 * bp[1]))
        T.append(("%s: %s recorder CPU <= perf's best (%s)" % (
            key, c[0], bp[0]),
            "%s s vs %s s" % (fmt_num(c[2], ".3f"), fmt_num(bp[2], ".3f")),
            None if c[2] is None or bp[2] is None else c[2] <= bp[2]))
    return T


def run_check_targets(key, M):
    """Every perfspilld run's own checks: its file's LOST records equal
    its stop reply; status answered within STATUS_MS_MAX."""
    T = []
    psd = [r for r in M["runs"] if r["recorder"] == "perfspilld" and
           not r.get("error")]
    # cblocks 0 is the serial mode: the loop itself writes, so on a
    # slow disk status waits for the write by design; the
    # responsiveness target is the AIO modes' (c0 is shown apart)
    aio = [r for r in psd if not re.search(r" c0$", r["config"])]
    serial = [r.get("status_ms_max") for r in psd
              if re.search(r" c0$", r["config"]) and
              r.get("status_ms_max") is not None]
    for what, k, runs, scope in (
            ("LOST records in the file == status", "lost_match", psd,
             "every perfspilld run"),
            ("status answered within %d ms" % STATUS_MS_MAX,
             "status_ok", aio, "every perfspilld run with cblocks >= 1")):
        v = [r.get(k) for r in runs if r.get(k) is not None]
        bad = ["%s round %d" % (r["config"], r["round"]) for r in runs
               if r.get(k) is False]
        note = ""
        if k == "status_ok" and serial:
            note = " (cblocks 0, the loop writing: slowest %.0f ms)" % (
                max(serial))
        T.append(("%s: %s, %s" % (key, what, scope),
                  "%d of %d runs%s%s" % (sum(v), len(v),
                                         "; failed: " + ", ".join(bad)
                                         if bad else "", note),
                  None if not v else all(v)))
    return T


def matrix_report(results):
    L = []
    for key, M in (results.get("matrix") or {}).items():
        L.append("## Matrix: %s" % M["title"])
        L.append("")
        L.append("- events: %s" % M["spec"])
        L.append("- load: %s, %s x %d; unprofiled %s s" % (
            M["load"], M["unit"], M["batch"],
            fmt_med([r.get("load_s") for r in M["runs"]
                     if r["recorder"] == "none"], ".3f")))
        L.append("- perfspilld: `%s` (cblocks varied)" % M["psd_args"])
        for c, a in M["perf_argv"].items():
            L.append("- %s: `%s -o FILE`" % (c, a))
        L.append("")
        L.append("Medians (min..max); counts from bench/tools/perfcount. "
                 "LOST==status: runs whose file's LOST records sum to the "
                 "stop reply's lost count; status<=100ms: runs whose every "
                 "status answer (asked each 0.2 s while recording) came "
                 "within 100 ms.")
        L.append("")
        L.append(md_table(*matrix_table(M)))
        L.append("")
    return L
