"""What a run found: the targets checked one by one (met, not met, n/a)
and the anomalies (failed runs, cross-checks that disagree, noise from
other users of the machine)."""
import re

from .common import CLK_TCK
from .matrix import matrix_targets
from .stats import fmt_med, fmt_num, fmt_ratio, ratio
from .table import by_recorder, med_of
from .writepath import write_path_targets


def targets(results):
    """Each target: (what, measured, met: True/False/None)."""
    T = []
    Ls = results["loads"]

    def verdict(ok):
        return None if ok is None else bool(ok)

    if "storm" in Ls:
        L = Ls["storm"]
        T.append(no_loss_target("storm, default ring", L))
        a = med_of(L, "perfspilld", "cpu_s")
        b = med_of(L, "perf-aio", "cpu_s")
        T.append(("storm, default ring: recorder CPU <= 1/2 of perf "
                  "--aio=%d" % L["n"],
                  "%s s vs %s s: ratio %s" % (fmt_num(a, ".3f"),
                                              fmt_num(b, ".3f"),
                                              fmt_ratio(ratio(a, b))),
                  verdict(None if a is None or b is None else a <= 0.5 * b)))
        s = med_of(L, "perfspilld", "self_share")
        sf = med_of(L, "perfspilld", "self_in_file_share")
        sp = med_of(L, "perf-aio", "self_share")
        T.append(("storm, default ring: recorder's own events < 0.1 %",
                  "perfspilld caused %s %% of the events (left in its file: "
                  "%s %%, the rest dropped by exclude_self after the kernel "
                  "recorded them); perf --aio %s %%" % (
                      fmt_num(None if s is None else s * 100, ".3f"),
                      fmt_num(None if sf is None else sf * 100, ".3f"),
                      fmt_num(None if sp is None else sp * 100, ".3f")),
                  verdict(None if s is None else s < 0.001)))
        a = med_of(L, "perfspilld", "slowdown")
        b = med_of(L, "perf-aio", "slowdown")
        c = med_of(L, "perf-serial", "slowdown")
        T.append(("storm, default ring: load slowdown no worse than "
                  "under perf",
                  "x%s vs x%s (--aio) / x%s (serial)" % (
                      fmt_num(a, ".3f"), fmt_num(b, ".3f"),
                      fmt_num(c, ".3f")),
                  verdict(None if a is None or b is None else a <= b)))
    if "storm-m64" in Ls:
        T.append(tenth_target("storm, 256 KiB ring", Ls["storm-m64"]))
    if "storm-rt" in Ls:
        T.append(no_loss_target("storm, default ring, both SCHED_FIFO 1",
                                Ls["storm-rt"]))
    if "storm-m64-rt" in Ls:
        T.append(tenth_target("storm, 256 KiB ring, both SCHED_FIFO 1",
                              Ls["storm-m64-rt"]))
    if "sched" in Ls:
        L = Ls["sched"]
        T.append(no_loss_target("sched_switch", L))
        a = med_of(L, "perfspilld", "cpu_s")
        b = med_of(L, "perf-aio", "cpu_s")
        c = med_of(L, "perf-serial", "cpu_s")
        T.append(("sched_switch: recorder CPU <= perf's",
                  "%s s vs %s s (--aio) / %s s (serial)" % (
                      fmt_num(a, ".3f"), fmt_num(b, ".3f"),
                      fmt_num(c, ".3f")),
                  verdict(None if a is None or b is None else a <= b)))
    if "always-on" in Ls:
        L = Ls["always-on"]
        g = by_recorder(L["runs"])
        rs = g["perfspilld"]
        st = sum(r.get("steady_cpu_s") or 0 for r in rs)
        tot = sum(r.get("cpu_s") or 0 for r in rs)
        win = sum(r.get("window_s") or 0 for r in rs)
        pooled = 100 * st / win if win else None
        pooled_tot = 100 * tot / win if win else None
        T.append(("always-on default: recorder CPU < 0.1 % of one core",
                  "perfspilld while recording %s %% (pooled over %d runs, "
                  "%.0f s, resolution %.3f %%); including start and stop "
                  "%s %%" % (fmt_num(pooled, ".3f"), len(rs), win,
                             100.0 / CLK_TCK / win if win else 0,
                             fmt_num(pooled_tot, ".3f")),
                  # a window too short to resolve 0.1 % decides nothing
                  verdict(None if pooled is None or not win or
                          100.0 / CLK_TCK / win >= 0.1 else pooled < 0.1)))
    for key in ("storm-z", "sched-z", "cpu-z"):
        if key in Ls:
            T.append(compression_target(key, Ls[key], Ls.get(key[:-2])))
    T += matrix_targets(results, results.get("shipped_cblocks", 2))
    T += write_path_targets(results)
    return T


def no_loss_target(what, L):
    g = by_recorder(L["runs"])
    lost = [r.get("lost") for r in g["perfspilld"]]
    lost = [x for x in lost if x is not None]
    return ("%s: no lost events" % what,
            "perfspilld lost per run: %s (share %s %%); perf --aio: %s" % (
                ", ".join("%d" % x for x in lost),
                fmt_med([r.get("lost_share") for r in g["perfspilld"]],
                        ".3f", 100),
                ", ".join("%d" % r["lost"] for r in g["perf-aio"]
                          if r.get("lost") is not None)),
            all(x == 0 for x in lost) if lost else None)


def tenth_target(what, L):
    a = med_of(L, "perfspilld", "lost_share")
    b = med_of(L, "perf-aio", "lost_share")
    c = med_of(L, "perf-serial", "lost_share")
    return ("%s: lost share <= 1/10 of perf's" % what,
            "%s %% vs %s %% (--aio) / %s %% (serial): ratio %s" % (
                fmt_num(None if a is None else a * 100, ".3f"),
                fmt_num(None if b is None else b * 100, ".3f"),
                fmt_num(None if c is None else c * 100, ".3f"),
                fmt_ratio(ratio(a, b))),
            None if a is None or b is None else a <= 0.1 * b)


def compression_target(key, L, plain):
    """Compressed bytes per event no more than perf -z's (the ratio at
    least perf's: both compress the same events), at no more CPU. The
    ratio against each recorder's own uncompressed file is shown when the
    uncompressed twin ran."""
    bp = med_of(L, "perfspilld", "bytes_per_event")
    bf = med_of(L, "perf-aio", "bytes_per_event")
    cp = med_of(L, "perfspilld", "cpu_s")
    cf = med_of(L, "perf-aio", "cpu_s")
    own = ""
    if plain:
        up = med_of(plain, "perfspilld", "bytes_per_event")
        uf = med_of(plain, "perf-aio", "bytes_per_event")
        own = "; ratio to its own uncompressed file %sx vs %sx" % (
            fmt_num(ratio(up, bp), ".1f"), fmt_num(ratio(uf, bf), ".1f"))
    ok = None
    if None not in (bp, bf, cp, cf):
        ok = bp <= bf and cp <= cf
    return ("%s: zstd ratio >= perf -z's (bytes per event <=) at CPU "
            "<= perf -z --aio=%d's" % (key[:-2], L["n"]),
            "%s vs %s bytes per event%s; CPU %s s vs %s s" % (
                fmt_num(bp, ".1f"), fmt_num(bf, ".1f"), own,
                fmt_num(cp, ".3f"), fmt_num(cf, ".3f")), ok)


def strip_off(err):
    """What identifies a perf report error, to compare two of them: the
    record type perf gave up on (81 is COMPRESSED; tracing data read as
    a record gives a garbage type, the same for every file), else the
    message without its offsets."""
    m = re.search(r"failed to process type: \d+", err or "")
    return m.group(0) if m else re.sub(r"0x[0-9a-f]+ ", "", err or "")


def anomalies(results):
    """Things that look wrong, found mechanically in the runs."""
    notes = []

    def all_runs():
        for k, L in results["loads"].items():
            for r in L["runs"]:
                yield k, r
        if results.get("sweep"):
            for r in results["sweep"]["runs"]:
                yield "sweep m%s %s" % (r.get("pages"), r.get("config")), r
        for k, M in (results.get("matrix") or {}).items():
            for r in M["runs"]:
                yield "matrix %s %s" % (k, r.get("config")), r

    failed_report = {}
    for k, r in all_runs():
        if r.get("error"):
            notes.append("%s, %s: run failed: %s" % (k, r["recorder"],
                                                    r["error"]))
            continue
        if r.get("warning"):
            notes.append("%s, %s: %s" % (k, r["recorder"], r["warning"]))
        rep = r.get("report")
        if rep and not rep["ok"]:
            failed_report.setdefault((r["recorder"], rep["error"]),
                                     []).append(k)
        sc = r.get("script")
        if sc and not sc["ok"]:
            notes.append("%s, %s: perf script failed on the file: %s" % (
                k, r["recorder"], sc["error"]))
        pc = r.get("perfcount") or {}
        if r.get("samples_from") in ("perf report --stats", "perf script") \
                and pc.get("samples") is not None and \
                r.get("samples") != pc["samples"]:
            notes.append("%s, %s: %s counts %s samples, the file's records "
                         "are %d (perfcount)" % (k, r["recorder"],
                                                 r["samples_from"],
                                                 r.get("samples"),
                                                 pc["samples"]))
        if r.get("self_from") == "perf script -F pid" and \
                r.get("self_samples") != r.get("self_samples_perfcount"):
            notes.append("%s, %s: perf script sees %s own events, "
                         "perfcount %s" % (k, r["recorder"],
                                           r.get("self_samples"),
                                           r.get("self_samples_perfcount")))
        if r["recorder"] == "perfspilld" and r.get("totals"):
            t = r["totals"]
            pc = r.get("perfcount") or {}
            if pc.get("samples") is not None and \
                    pc["samples"] != t.get("samples"):
                notes.append("%s, perfspilld: stop reply says %d samples, "
                             "the file holds %d" % (k, t.get("samples"),
                                                    pc["samples"]))
            fl = (pc.get("lost") or 0) + (pc.get("lost_samples") or 0)
            if pc and fl != t.get("lost", 0) + t.get("lost_samples", 0):
                notes.append("%s, perfspilld: stop reply says %d lost, the "
                             "file's LOST records say %d" % (
                                 k, t.get("lost", 0) +
                                 t.get("lost_samples", 0), fl))
            if t.get("bytes_dropped"):
                notes.append("%s, perfspilld: %d bytes dropped" % (
                    k, t["bytes_dropped"]))
            if pc.get("bad"):
                notes.append("%s, perfspilld: the file has a broken record "
                             "(perfcount)" % k)
        if r.get("exit") not in (None, 0) and r["recorder"] == "perfspilld":
            notes.append("%s, perfspilld exited %s on SIGTERM" % (
                k, r["exit"]))
        for w in r.get("daemon_warnings", []):
            notes.append("%s, perfspilld log: %s" % (k, w))
    # where the losses are: at the start of a recording, or throughout;
    # with rings of 256 pages and more, where a steady drain keeps up
    early = {}
    for k, r in all_runs():
        if r.get("lost_early_pct") is not None and r.get("lost") and \
                (r.get("pages") or 0) >= 256:
            e = early.setdefault(r["recorder"].split("-")[0], [0, 0, 0])
            e[0] += 1
            e[1] += r["lost"]
            e[2] += r["lost"] * r["lost_early_pct"] / 100.0
    for rec, (n, lost, lost_e) in sorted(early.items()):
        if lost and lost_e / lost >= 0.5:
            notes.append("%s, rings of 256 pages or more: %.0f %% of its "
                         "lost events (%d in %d runs with loss) were lost "
                         "in the first 0.5 s after the first sample of a "
                         "recording" % (rec, 100.0 * lost_e / lost, lost, n))
    probes = results.get("perf_pipe_probe") or {}
    if "ok" in probes:      # results.json of an older run: one probe
        probes = {"tracepoint": probes}
    for (rec, err), where in failed_report.items():
        why = ""
        for kind, pr in probes.items():
            if rec == "perfspilld" and not pr.get("ok", True) and \
                    strip_off(err) == strip_off(pr.get("error")):
                why = (" -- the same error as on perf's own `perf record "
                       "-o -` pipe output (%s): a limitation of this perf's "
                       "report --stats in pipe mode, not of the file; "
                       "counted with perf script instead" % kind)
        notes.append("%s: perf report --stats could not read the file in %d "
                     "run(s) (%s): %s%s" % (rec, len(where),
                                          ", ".join(sorted(set(where))),
                                          err, why))
    # de-duplicate, keep order
    seen, out = set(), []
    for n in notes:
        if n not in seen:
            seen.add(n)
            out.append(n)
    return out


def noisy_runs(results):
    n = tot = 0
    runs = [r for L in results["loads"].values() for r in L["runs"]]
    if results.get("sweep"):
        runs += results["sweep"]["runs"]
    for M in (results.get("matrix") or {}).values():
        runs += M["runs"]
    for r in runs:
        tot += 1
        if r.get("other_recorders"):
            n += 1
    return n, tot
