"""The statistics of the figures: medians of runs that may lack a value,
median (min..max) as text, ratios of medians (a zero divisor made
explicit) and the ahead / behind / level verdict of two sets of runs."""
import statistics


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_num(v, spec):
    if v is None:
        return "-"
    return format(v, spec)


def fmt_med(xs, spec, scale=1.0):
    xs = [x * scale for x in xs if x is not None]
    if not xs:
        return "-"
    m = statistics.median(xs)
    if len(xs) == 1:
        return format(m, spec)
    return "%s (%s..%s)" % (format(m, spec), format(min(xs), spec),
                            format(max(xs), spec))


def ratio(a, b):
    if a is None or b is None:
        return None
    if b == 0:
        return 0.0 if a == 0 else float("inf")
    return a / b


def fmt_ratio(r):
    if r is None:
        return "-"
    if r == float("inf"):
        return "inf (perf 0)"
    if r == 0:
        return "0"
    if r >= 100 or r < 0.01:
        return "%.2g" % r
    return "%.2f" % r


def judge(ps, pf, lower_better=True):
    """ahead / behind / level of perfspilld's runs ps against perf's pf:
    level when their min..max ranges overlap (the runs cannot tell them
    apart), else by how much the medians differ."""
    ps = [x for x in ps if x is not None]
    pf = [x for x in pf if x is not None]
    if not ps or not pf:
        return "-"
    a, b = statistics.median(ps), statistics.median(pf)
    if max(ps) >= min(pf) and max(pf) >= min(ps):
        return "level (ranges overlap)"
    better = a < b if lower_better else a > b
    if b == 0 or a == 0:
        return "**ahead** (perf %s, perfspilld %s)" % (
            "0" if b == 0 else "> 0", "0" if a == 0 else "> 0") \
            if better else "**behind** (perfspilld %s, perf %s)" % (
                "> 0", "0")
    r = a / b
    pct = abs(1 - r) * 100
    if better:
        return "**ahead**: %.0f %% %s" % (pct, "less" if lower_better
                                          else "more")
    return "**behind**: %.0f %% %s" % (pct, "more" if lower_better
                                       else "less")
