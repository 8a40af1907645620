"""Counting what a recording left: perf report --stats, perf script and
tools/perfcount over the trace files, cross-checked against each other
and the daemon's stop reply, and the figures of one run derived from them
(events a second, lost share, recorder CPU, slowdown)."""
import json
import os
import re
import shutil
import subprocess
import time

from .common import run
from .sample import path_bytes


def perf_report_stats(path):
    """Aggregated counts of each record type from perf report --stats (a
    list of paths: the sum over them, ok only if every one read)."""
    if isinstance(path, list):
        parts = [perf_report_stats(p) for p in path]
        agg = {}
        for x in parts:
            for k, v in x["counts"].items():
                agg[k] = agg.get(k, 0) + v
        bad = [x for x in parts if not x["ok"]]
        return {"ok": not bad, "error": bad[0]["error"] if bad else None,
                "counts": agg, "files": len(parts),
                "per_event_lost_samples": sum(
                    x["per_event_lost_samples"] for x in parts),
                "secs": sum(x["secs"] for x in parts)}
    t = time.monotonic()
    p = run(["perf", "report", "--stats", "-i", path], timeout=600)
    agg, per_event_lost = {}, 0
    section = None
    for line in p.stdout.splitlines():
        s = line.strip()
        if s.endswith("stats:"):
            section = "agg" if s.startswith("Aggregated") else s[:-6]
            continue
        if " events:" in s:
            name, rest = s.split(" events:", 1)
            try:
                n = int(rest.split()[0])
            except (ValueError, IndexError):
                continue
            if section == "agg":
                agg[name.strip()] = n
            elif name.strip() == "LOST_SAMPLES":
                per_event_lost += n
    bad = [l for l in p.stderr.splitlines()
           if re.search(r"error|fail|corrupt|warning", l, re.I) and
           not BENIGN.search(l)]
    ok = p.returncode == 0 and "SAMPLE" in agg and not bad
    err = None
    if not ok:
        err = "rc=%d: %s" % (p.returncode, " | ".join(
            (bad or p.stderr.strip().splitlines() or ["no SAMPLE line"])[:3]))
    return {"ok": ok, "error": err, "counts": agg,
            "per_event_lost_samples": per_event_lost,
            "secs": time.monotonic() - t}


# perf 6.1 prints this for files recorded with -B (no build-ids); the
# samples are all there
BENIGN = re.compile(r"assertion failed at util/build-id\.c")


def perf_script_pid_count(path, pid):
    """SAMPLEs whose pid is `pid`, by perf script -F pid (summed over a
    list of paths)."""
    if isinstance(path, list):
        parts = [perf_script_pid_count(p, pid) for p in path]
        bad = [x for x in parts if not x["ok"]]
        return {"ok": not bad, "error": bad[0]["error"] if bad else None,
                "warnings": sorted(set(w for x in parts
                                       for w in x["warnings"])),
                "pid_samples": sum(x["pid_samples"] for x in parts),
                "lines": sum(x["lines"] for x in parts),
                "secs": sum(x["secs"] for x in parts)}
    t = time.monotonic()
    # -G: one line per sample, without its callchain
    p = subprocess.Popen(["perf", "script", "-G", "-F", "pid", "-i", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    want = str(pid).encode()
    n = total = 0
    for line in p.stdout:
        total += 1
        if line.strip() == want:
            n += 1
    err = p.stderr.read().decode(errors="replace")
    p.wait()
    bad = [l for l in err.splitlines()
           if re.search(r"error|fail|corrupt", l, re.I) and
           not BENIGN.search(l)]
    warn = sorted(set(l.strip() for l in err.splitlines()
                      if BENIGN.search(l)))
    ok = p.returncode == 0 and not bad and total > 0
    tail = [l.strip() for l in err.splitlines() if l.strip()][-3:]
    return {"ok": ok,
            "error": None if ok else "rc=%d after %d lines of output%s" % (
                p.returncode, total,
                ": " + " | ".join(bad[:3] or tail) if bad or tail else ""),
            "warnings": warn, "pid_samples": n, "lines": total,
            "secs": time.monotonic() - t}


def probe_perf_pipe(work):
    """Can this perf's report --stats read its own pipe-format output?
    perf 6.1's cannot with a tracepoint (it does not skip the tracing
    data) nor with -z (it has no decompression buffer size in pipe mode).
    A perfspilld file failing the same way fails for perf's reason."""
    probes = {}
    for kind, extra in (("tracepoint", ["-e", "raw_syscalls:sys_enter"]),
                        ("compressed", ["-e", "cpu-clock", "-F", "1000",
                                        "--compression-level=1"])):
        f = os.path.join(work, "probe-pipe.data")
        with open(f, "wb") as out:
            subprocess.run(["perf", "record", "-a"] + extra +
                           ["-o", "-", "--", "sleep", "0.2"], stdout=out,
                           stderr=subprocess.DEVNULL)
        st = perf_report_stats(f)
        os.unlink(f)
        probes[kind] = {"ok": st["ok"], "error": st["error"]}
    return probes


def perfcount(binaries, path, pid, more_pids=()):
    """tools/perfcount of a file, or the sum over a recording's files (a
    list: perfspilld's rotated files); samples of pid (and of each of
    more_pids, in by_pid)."""
    if isinstance(path, list):
        return sum_counts([perfcount(binaries, p, pid, more_pids)
                           for p in path])
    argv = [binaries["perfcount"], "--pid", str(pid)]
    for x in more_pids:
        argv += ["--pid", str(x)]
    p = run(argv + [path], timeout=600)
    if p.returncode != 0:
        return {"error": p.stderr.strip()}
    return json.loads(p.stdout)


def sum_counts(parts):
    """perfcount's figures of several files of one recording, added up
    (the first error wins; span and early losses are per file, left out:
    the files follow one another)."""
    bad = [x for x in parts if "error" in x]
    if bad:
        return bad[0]
    out = {"files": len(parts), "records": {}, "by_pid": {}}
    for x in parts:
        for k in ("bytes", "samples", "lost", "lost_samples", "pid_samples",
                  "bad", "decompressed_bytes"):
            out[k] = out.get(k, 0) + (x.get(k) or 0)
        for d in ("records", "by_pid"):
            for k, v in (x.get(d) or {}).items():
                out[d][k] = out[d].get(k, 0) + v
    return out


def find_key(obj, key):
    """Every value of key anywhere in a JSON document."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key:
                yield v
            else:
                yield from find_key(v, key)
    elif isinstance(obj, list):
        for v in obj:
            yield from find_key(v, key)


def check_write_path(res):
    """A write path asked for and not the one status reported (a fallback
    to buffered, say) is the run's warning, not a silent mislabel."""
    want, seen = res.get("write"), res.get("write_path_seen")
    if want and seen and seen != [want]:
        w = "asked for the %s write path, status reported %s" % (
            want, " and ".join(seen))
        res["warning"] = "; ".join(filter(None, [res.get("warning"), w]))


def analyse(res, binaries, path, pid, self_events, use_perf_tools=True):
    """Fill in a run's figures from its trace file (or the list of a
    rotated recording's files); the caller deletes them. With the load's
    pid in res (load_pid), also the samples of the load in the files."""
    res["file_bytes"] = path_bytes(path)
    lp = res.get("load_pid")
    pc = perfcount(binaries, path, pid, [lp] if lp else ())
    res["perfcount"] = pc
    # the recorder's own samples: pid_samples counts every --pid given
    own = pc.get("by_pid", {}).get(str(pid), pc.get("pid_samples"))
    if lp and "by_pid" in pc:
        res["load_samples"] = pc["by_pid"].get(str(lp), 0)
    sc = None
    if use_perf_tools:
        st = perf_report_stats(path)
        res["report"] = st
        if self_events or not st["ok"]:
            sc = perf_script_pid_count(path, pid)
            res["script"] = sc
    else:
        st = {"ok": False, "error": "not run (sweep)", "counts": {}}
    if st["ok"]:
        res["samples"] = st["counts"].get("SAMPLE", 0)
        res["samples_from"] = "perf report --stats"
    elif sc and sc["ok"]:
        res["samples"] = sc["lines"]
        res["samples_from"] = "perf script"
    else:
        res["samples"] = pc.get("samples")
        res["samples_from"] = "perfcount"
    # lost events: perf's LOST records carry the count the kernel dropped;
    # perf 6.x also writes LOST_SAMPLES at exit with the same count read
    # from the events, so take the larger, never the sum.
    file_lost = max(pc.get("lost", 0) or 0, pc.get("lost_samples", 0) or 0)
    res["file_lost"] = file_lost
    if res["recorder"] == "perfspilld" and res.get("totals"):
        t = res["totals"]
        res["lost"] = t.get("lost", 0) + t.get("lost_samples", 0)
    else:
        res["lost"] = file_lost
    if self_events:
        res["self_samples_perfcount"] = own
        if sc is not None:
            res["self_samples"] = sc["pid_samples"] if sc["ok"] else own
            res["self_from"] = "perf script -F pid" if sc["ok"] else \
                "perfcount"
        else:
            res["self_samples"] = own
            res["self_from"] = "perfcount"
    keep = getattr(analyse, "keep", None)
    sc_bad = res.get("script") and not res["script"]["ok"]
    if keep and sc_bad and analyse.kept < 3 and not isinstance(path, list):
        os.makedirs(keep, exist_ok=True)
        dst = os.path.join(keep, "%s-%d-%s" % (res["recorder"], res["pid"],
                                               os.path.basename(path)))
        shutil.move(path, dst)
        analyse.kept += 1
        res["kept"] = dst
    derive(res)


def derive(res):
    pc = res.get("perfcount") or {}
    if pc.get("lost_timed") and pc.get("lost"):
        # LOST records in the first 0.5 s after the first sample
        res["lost_early_pct"] = 100.0 * pc["lost_early"] / pc["lost"]
    w = res.get("window_s")
    s = res.get("samples")
    lost = res.get("lost")
    if w and s is not None:
        res["events_per_s"] = s / w
        res["mb_per_s"] = res["file_bytes"] / w / 1e6
    if s:
        res["bytes_per_event"] = res["file_bytes"] / s
    if s is not None and lost is not None:
        res["lost_share"] = lost / (s + lost) if s + lost else 0.0
    ev = res.get("load_events")
    if ev and lost is not None:
        # the load's own count: what it did, not what the file holds
        res["lost_of_load"] = lost / ev
    if ev and res.get("load_samples") is not None:
        # cross-check: the load's events that are not in the files (its
        # start-up's few other system calls can make this slightly < 0)
        res["missing_of_load"] = (ev - res["load_samples"]) / ev
    if w and res.get("nvcsw") is not None:
        res["wakeups_per_s"] = res["nvcsw"] / w
    if res.get("self_samples") is not None and s:
        # what the recorder caused: the samples of its pid in the file plus
        # those it dropped itself before writing (perfspilld's
        # exclude_self: the kernel still made them, in the same ring)
        excl = (res.get("totals") or {}).get("self_excluded", 0) or 0
        res["self_excluded"] = excl
        res["self_caused"] = res["self_samples"] + excl
        res["self_share"] = res["self_caused"] / (s + excl)
        res["self_in_file_share"] = res["self_samples"] / s
    if res.get("file_bytes"):
        for k in ("cache_added", "resident"):
            if res.get(k) is not None:
                res[k + "_share"] = res[k] / res["file_bytes"]
    if w and res.get("cpu_s") is not None:
        res["cpu_pct"] = 100.0 * res["cpu_s"] / w
    if w and res.get("steady_cpu_s") is not None:
        res["steady_cpu_pct"] = 100.0 * res["steady_cpu_s"] / w


def finish_run(res, base_s):
    if res.get("load_s") and base_s:
        res["slowdown"] = res["load_s"] / base_s
    kb = res.get("vmhwm_kb") if res["recorder"] == "perfspilld" else \
        res.get("maxrss_kb")
    if kb:
        res["peak_mib"] = kb / 1024.0


def describe_run(r):
    bits = []
    if r.get("error"):
        return "FAILED: " + r["error"]
    for k, spec, scale, unit in (("load_s", ".2f", 1, "s"),
                                 ("events_per_s", ",.0f", 1, " ev/s"),
                                 ("lost_share", ".3f", 100, "% lost"),
                                 ("cpu_s", ".3f", 1, "s CPU"),
                                 ("self_share", ".3f", 100, "% self"),
                                 ("self_in_file_share", ".3f", 100,
                                  "% self in file"),
                                 ("mb_per_s", ".0f", 1, " MB/s")):
        if r.get(k) is not None:
            bits.append(format(r[k] * scale, spec) + unit)
    if r.get("report") and not r["report"]["ok"]:
        bits.append("perf report FAILED")
    if r.get("warning"):
        bits.append("WARNING " + r["warning"])
    return ", ".join(bits)
