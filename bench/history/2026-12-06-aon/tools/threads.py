"""Per-thread differences between two snapshots of a process's threads,
{tid: (comm, run time in ns, voluntary context switches)}: what aon.sh
and perfaon.sh print for each phase (start, steady, stop)."""


def span(a, b):
    """The threads of b that ran or woke since a (a thread new in b from
    zero): their 'comm/tid:wakeups,ms' parts, the wakeups and the run
    time (ns) in all."""
    parts, sw, ct = [], 0, 0
    for k, (n, t, v) in sorted(b.items(), key=lambda kv: int(kv[0])):
        n0, t0, v0 = a.get(k, (n, 0, 0))
        sw += v - v0
        ct += t - t0
        if v - v0 or t - t0:
            parts.append('%s/%s:%d,%.1fms' % (n, k, v - v0, (t - t0) / 1e6))
    return parts, sw, ct


def report(name, a, b, secs):
    """One phase's line: wakeups, per second over secs, run time, parts."""
    parts, sw, ct = span(a, b)
    print('  %-6s %4d wakeups (%.1f/s) %5.1f ms  [%s]' % (
        name, sw, sw / secs, ct / 1e6, ' '.join(parts)))
