"""Per-function inclusive and self shares, the form `perf report
--children` gives them: ours from folded stacks, perf's read from its
output. test_unwind.py checks the two against each other on a raw DWARF
file; bench/dwarf/report.py measures the gap."""
import collections


def stack_shares(stacks):
    """{function: (inclusive %, self %)} of {(frames, root first):
    count}: a function counts once a stack however often it recurs."""
    total = sum(stacks.values())
    inc, slf = collections.Counter(), collections.Counter()
    for s, n in stacks.items():
        for f in set(s):
            inc[f] += n
        slf[s[-1]] += n
    return {f: (100.0 * inc[f] / total, 100.0 * slf[f] / total)
            for f in inc}


def perf_report_shares(text):
    """{function: (inclusive %, self %)} of the lines of `perf report
    --stdio --children --sort sym -q -g none` (or --sort pid,sym: the
    columns before the symbol's [.] or [k] are left aside). One name in
    two binaries (ld.so's _start and the program's) is two lines: added
    up, as a name's stacks are in stack_shares (the second line replaced
    the first before, and ld.so's 0.4 % of _start hid the program's
    99 %)."""
    shares = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 4 or not f[0].endswith("%") or not f[1].endswith("%"):
            continue
        for i in range(2, len(f) - 1):
            if f[i] in ("[.]", "[k]"):
                name = line.split(None, i + 1)[i + 1].strip()
                o = shares.get(name, (0.0, 0.0))
                shares[name] = (o[0] + float(f[0][:-1]),
                                o[1] + float(f[1][:-1]))
                break
    return shares
