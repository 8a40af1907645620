"""The figures a load's table shows and the tables themselves: rows of
median (min..max) per recorder with their ratios, on the terminal and in
markdown."""
from .stats import fmt_med, fmt_ratio, median, ratio


FIGURES = [
    # key, label, format, scale, lower is better?
    ("events_per_s", "events recorded /s", ",.0f", 1, False),
    ("lost_share", "lost events, % of all", ".3f", 100, True),
    ("lost", "lost events", ",.0f", 1, True),
    ("lost_early_pct", "  of which in the first 0.5 s, % (runs with loss)",
     ".0f", 1, "noise"),
    ("cpu_s", "recorder CPU, s", ".3f", 1, True),
    ("cpu_pct", "recorder CPU, % of one core", ".2f", 1, True),
    ("steady_cpu_pct", "  while recording only, % of a core", ".2f", 1,
     True),
    ("self_share", "recorder's own events, % of events", ".3f", 100, True),
    ("self_in_file_share", "  of which left in the file, % of its events",
     ".3f", 100, True),
    ("mb_per_s", "bytes written, MB/s", ".1f", 1, None),
    ("bytes_per_event", "file bytes per recorded event", ".1f", 1, True),
    ("slowdown", "load slowdown (x unprofiled)", ".3f", 1, True),
    ("load_s", "load wall time, s", ".2f", 1, True),
    ("peak_mib", "peak memory, MiB", ".1f", 1, True),
    ("stop_s", "stop latency, s", ".2f", 1, True),
    ("cache_added_share", "page cache added (Cached), % of the file",
     ".1f", 100, True),
    ("resident_share", "file in the page cache after the run (fincore), %",
     ".1f", 100, True),
    ("status_ms_max", "slowest status answer while recording, ms", ".1f",
     1, True),
    ("other_cpu_pct", "other processes' CPU during the run, % of machine",
     ".1f", 1, "noise"),
    ("pre_busy_pct", "machine busy just before the run, %", ".0f", 1,
     "noise"),
]


def print_table(hdr, rows):
    w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(len(hdr))]
    for r in [hdr] + rows:
        print("  " + "  ".join(str(c).ljust(w[i]) for i, c in enumerate(r)))


def label_conf(kind, n):
    if kind == "perfspilld":
        return "perfspilld c%d" % n
    if n == "threads":
        return "perf --threads"
    return "perf --aio=%d" % n if n else "perf serial"


def by_recorder(runs):
    out = {"perfspilld": [], "perf-aio": [], "perf-serial": [], "none": []}
    for r in runs:
        if not r.get("error"):
            out.setdefault(r["recorder"], []).append(r)
    return out


def load_rows(L):
    """Rows of (label, psd, aio, serial, psd/aio, psd/serial) strings."""
    g = by_recorder(L["runs"])
    rows = []
    for key, label, spec, scale, kind in FIGURES:
        cols = []
        meds = []
        for rec in ("perfspilld", "perf-aio", "perf-serial"):
            xs = [r.get(key) for r in g[rec]]
            cols.append(fmt_med(xs, spec, scale))
            meds.append(median(xs))
        if all(c == "-" for c in cols):
            continue
        if kind == "noise":     # not a property of the recorder
            rows.append([label] + cols + ["", ""])
            continue
        rows.append([label] + cols +
                    [fmt_ratio(ratio(meds[0], meds[1])),
                     fmt_ratio(ratio(meds[0], meds[2]))])
    return rows


def print_load_table(L):
    n = L["n"]
    hdr = ["figure", "perfspilld c%d" % n, "perf --aio=%d" % n,
           "perf serial", "psd/aio", "psd/serial"]
    print()
    print("  %s  [%s; unprofiled %.2f s]" % (L["title"], L["spec"],
                                              L["baseline_s"] or 0))
    print_table(hdr, load_rows(L))
    print()


def md_table(hdr, rows):
    out = ["| " + " | ".join(hdr) + " |",
           "|" + "|".join("---" for _ in hdr) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def med_of(L, rec, key):
    return median([r.get(key) for r in by_recorder(L["runs"])[rec]])
