"""Issue 21's write-path comparison (--write-path): its targets, each a
ratio of medians of one matrix, and its headline rows."""
from .stats import fmt_med, fmt_ratio, median, ratio


DIRECT = "perfspilld direct"


def config_values(M, config, key):
    return [r.get(key) for r in M["runs"]
            if r.get("config") == config and not r.get("error") and
            r.get(key) is not None]


def perf_best(M, key):
    """perf's mode with the lowest median of key: (config, median)."""
    best = None
    for c in M["configs"]:
        m = median(config_values(M, c, key)) if c.startswith("perf ") \
            else None
        if m is not None and (best is None or m < best[1]):
            best = (c, m)
    return best


def write_path_matrices(results):
    """The write-path matrices by load key (a joined run's too)."""
    return {M.get("key", k): M for k, M in
            (results.get("matrix") or {}).items()
            if M.get("kind") == "write-path"}


# load, figure key, label, format, scale, what it is set against, bound
WRITE_PATH_TARGETS = [
    ("storm", "cpu_s", "recorder CPU, s", ".3f", 1, "perf --aio=4", 0.5),
    ("storm", "cpu_s", "recorder CPU, s", ".3f", 1, "perfspilld buffered",
     0.6),
    ("storm", "lost_share", "lost events, %", ".3f", 100, "perf best", 0.5),
    ("cpu", "cpu_s", "recorder CPU, s", ".3f", 1, "perf best", 0.6),
    ("sched", "cpu_s", "recorder CPU, s", ".3f", 1, "perf best", 0.6),
    ("storm-dirty", "cpu_s", "recorder CPU, s", ".3f", 1,
     "same without pressure", 1.2),
    ("storm-dirty", "stop_s", "stop time, s", ".2f", 1,
     "same without pressure", 1.2),
]


def write_path_reference(W, load, key, against):
    """The runs a target sets perfspilld direct against, and their
    label: a named configuration, perf's best mode for that figure, or
    perfspilld direct on the load without its dirty pressure."""
    M = W[load]
    if against == "perf best":
        best = perf_best(M, key)
        if best is None:
            return None, None
        return "perf's best, %s" % best[0], config_values(M, best[0], key)
    if against == "same without pressure":
        plain = W.get(load.replace("-dirty", ""))
        if plain is None:
            return None, None
        return "%s, %s" % (DIRECT, plain["key"]), config_values(
            plain, DIRECT, key)
    return against, config_values(M, against, key)


def write_path_rows(results):
    """Issue 21's targets, each a dict: title (the load's), figure,
    mine (perfspilld direct's cell), ref (the reference's cell),
    against (what the reference is), ratio (of medians, formatted),
    bound, ok (True / False / None: not measured)."""
    W = write_path_matrices(results)
    rows = []
    for load, key, label, spec, scale, against, bound in WRITE_PATH_TARGETS:
        if load not in W:
            continue
        mine = config_values(W[load], DIRECT, key)
        ref_label, ref = write_path_reference(W, load, key, against)
        r = ratio(median(mine), median(ref)) if mine and ref else None
        rows.append({"key": load, "title": W[load]["title"],
                     "figure": label, "mine": fmt_med(mine, spec, scale),
                     "ref": fmt_med(ref or [], spec, scale),
                     "against": ref_label or against,
                     "ratio": fmt_ratio(r), "bound": "<= %.1fx" % bound,
                     "ok": None if r is None else r <= bound})
    for load, M in W.items():
        mine = config_values(M, DIRECT, "resident_share")
        m = median(mine)
        rows.append({"key": load, "title": M["title"],
                     "figure": "page cache added, % of the bytes written "
                     "(fincore of the files)",
                     "mine": fmt_med(mine, ".2f", 100),
                     "ref": fmt_med(config_values(M, "perf --aio=4",
                                                  "resident_share"),
                                    ".1f", 100),
                     "against": "perf --aio=4, for scale", "ratio": "-",
                     "bound": "<= 2 %", "ok": None if m is None else
                     m <= 0.02})
    return rows


def write_path_targets(results):
    """The same as targets: (what, measured, met)."""
    T = []
    for w in write_path_rows(results):
        if w["bound"].endswith("%"):    # a share, not a ratio
            T.append(("%s: %s, perfspilld direct %s" % (
                w["key"], w["figure"], w["bound"]),
                "%s %% (%s: %s %%)" % (w["mine"], w["against"], w["ref"]),
                w["ok"]))
            continue
        T.append(("%s: %s, perfspilld direct / %s %s" % (
            w["key"], w["figure"], w["against"], w["bound"]),
            "%s vs %s: ratio %s" % (w["mine"], w["ref"], w["ratio"]),
            w["ok"]))
    return T
