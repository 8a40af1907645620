#!/usr/bin/env python3
"""plot.py RESULTS.json OUT.png: lost share against ring size, both
recorders, from the sweep of bench/run (needs matplotlib).

plot.py --bandwidth OUT.png RESULTS.json...: lost share against the slow
storage's bandwidth, one line per configuration and a panel per load,
from several `bench/run --matrix --slow-storage BW,...` runs.

plot.py --cpu OUT.png RESULTS.json: recorder CPU per recorder and load,
a group of bars per load, from a `bench/run --write-path` run."""
import json
import statistics
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt     # noqa: E402


def spread(ax, xs, samples, color, linestyle="-", label=None):
    """A line through the medians, a bar from min to max at each point:
    the runs' spread, so that a difference smaller than it reads as
    none."""
    ys = [statistics.median(samples[x]) for x in xs]
    lo = [y - min(samples[x]) for x, y in zip(xs, ys)]
    hi = [max(samples[x]) - y for x, y in zip(xs, ys)]
    ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", color=color,
                linestyle=linestyle, label=label, capsize=3)
    return ys + [max(samples[x]) for x in xs]


def bandwidth(out, paths):
    cells = {}      # load -> config -> bandwidth -> [lost %]
    titles = {}
    for p in paths:
        res = json.load(open(p))
        bw = res["args"]["slow_storage"][0] / 1e6
        for key, M in res.get("matrix", {}).items():
            titles[key] = M["title"]
            for r in M["runs"]:
                if r["recorder"] == "none" or r.get("error") or \
                        r.get("lost_share") is None:
                    continue
                cells.setdefault(key, {}).setdefault(
                    r["config"], {}).setdefault(bw, []).append(
                        100.0 * r["lost_share"])
    keys = sorted(cells)
    fig, axes = plt.subplots(1, len(keys), figsize=(6 * len(keys), 5),
                             squeeze=False)
    for ax, key in zip(axes[0], keys):
        confs = sorted(cells[key])
        cmap = plt.get_cmap("tab10")
        for i, c in enumerate(confs):
            xs = sorted(cells[key][c])
            spread(ax, xs, cells[key][c], cmap(i % 10),
                   "-" if c.startswith("perfspilld") else "--", c)
        ax.set_xscale("log", base=2)
        bws = sorted({b for c in confs for b in cells[key][c]})
        ax.set_xticks(bws)
        ax.set_xticklabels(["%.0f" % b for b in bws])
        ax.minorticks_off()
        ax.set_xlabel("slowfs bandwidth, MB/s (10^6 bytes)")
        ax.set_title(titles[key], fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("lost events, % of all (median, min..max)")
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def cpu(out, path):
    """Median recorder CPU seconds (bar) and min..max (whisker) of every
    configuration, a panel per load of a write-path matrix, each on its
    own linear scale from 0 (the storm costs a hundred times the
    always-on load)."""
    res = json.load(open(path))
    mats = [M for M in res.get("matrix", {}).values()
            if M.get("kind") == "write-path"]
    confs = []
    for M in mats:
        confs += [c for c in M["configs"] if c not in confs]
    cmap = plt.get_cmap("tab10")
    fig, axes = plt.subplots(1, len(mats), figsize=(2.6 * len(mats) + 1, 4.5),
                             squeeze=False)
    for ax, M in zip(axes[0], mats):
        for i, c in enumerate(confs):
            v = [r["cpu_s"] for r in M["runs"] if r.get("config") == c and
                 not r.get("error") and r.get("cpu_s") is not None]
            if not v:
                continue
            m = statistics.median(v)
            ax.bar(i, m, 0.8, yerr=[[m - min(v)], [max(v) - m]], capsize=3,
                   color=cmap(i % 10), label=c,
                   hatch="" if c.startswith("perfspilld") else "//")
        ax.set_xticks([])
        ax.set_title(M.get("key", M["title"]), fontsize=10)
        ax.set_ylim(bottom=0)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][0].set_ylabel("recorder CPU, s (user+system, every thread)")
    handles = {}
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend([handles[c] for c in confs if c in handles],
               [c for c in confs if c in handles], loc="lower center",
               ncol=len(confs), fontsize=8)
    m = res["machine"]
    fig.suptitle("recorder CPU per recorder and load (median, bars "
                 "min..max of %d round(s)): %s, %d CPUs" % (
                     res["args"]["runs"], m["kernel"], m["nproc"]),
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(out, dpi=100)


def main():
    if sys.argv[1] == "--bandwidth":
        bandwidth(sys.argv[2], sys.argv[3:])
        return
    if sys.argv[1] == "--cpu":
        cpu(sys.argv[2], sys.argv[3])
        return
    res = json.load(open(sys.argv[1]))
    S = res["sweep"]
    cells = {}
    for r in S["runs"]:
        if r["recorder"] == "none" or r.get("error") or \
                r.get("lost_share") is None:
            continue
        cells.setdefault(r["config"], {}).setdefault(r["pages"], []).append(
            100.0 * r["lost_share"])
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
    groups = [("perfspilld", [c for c in cells if c.startswith("perfspilld")]),
              ("perf record", [c for c in cells if c.startswith("perf ")])]

    def order(c):
        if c.endswith("serial"):
            return -1
        return int(c.rsplit("c", 1)[1]) if c.startswith("perfspilld") \
            else int(c.rsplit("=", 1)[1])
    allv = []
    for ax, (title, confs) in zip(axes, groups):
        confs.sort(key=order)
        cmap = plt.get_cmap("viridis", max(len(confs), 2))
        for i, c in enumerate(confs):
            xs = sorted(cells[c])
            lab = c
            if c.startswith("perfspilld c"):
                n = int(c.rsplit("c", 1)[1])
                lab = "cblocks %d%s" % (n, " (serial pwrite)" if n == 0
                                        else "")
            allv += spread(ax, xs, cells[c], cmap(i), label=lab)
        ax.set_xscale("log", base=2)
        ax.set_xticks(S["rings"])
        ax.set_xticklabels(["%d\n(%s KiB)" % (p, p * 4) for p in S["rings"]])
        ax.set_xlabel("ring size per CPU, pages (-m / mmap_pages)")
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper right",
                  ncol=2 if len(confs) > 5 else 1)
    axes[0].set_ylabel("lost events, % of all events (linear below 0.01 %)")
    # small losses matter too: a log scale above 0.01 %, linear below
    for ax in axes:
        ax.set_yscale("symlog", linthresh=0.01)
    if allv and max(allv) > 0:
        axes[0].set_ylim(bottom=0, top=max(allv) * 1.5)
    m = res["machine"]
    fig.suptitle("syscall storm (raw_syscalls:sys_enter, %s x %d), %s, %d "
                 "CPUs; median of %d run(s) per point, bars min..max" % (
                     S["unit"], S["batch"], m["kernel"], m["nproc"],
                     res["args"]["sweep_runs"]), fontsize=10)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)


if __name__ == "__main__":
    main()
