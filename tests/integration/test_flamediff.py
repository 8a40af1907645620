"""Differential flame graphs: tests/flametarget runs at 70/30
(leaf_seventy/leaf_thirty), then at 30/70, recorded by the real daemon
into two files. Compared as two sets of files and as two time ranges,
the folded pairs ("stack A B") give each side the counts its own folded
output gives; in headless Chromium the graph's leaf_thirty is red and
leaf_seventy blue, hovering gives both counts and the change, a process
on one side only is dashed, and the title names both sides."""
import json
import os
import shutil
import subprocess
import time
import xml.dom.minidom

import harness
from harness import Daemon
import test_flame
from test_flame import flame, folded, manifest, utc_ns, iso, TARGET

_work = harness.workdir("perfspill-flamediff-test-")
_cache = {}


def run_target(split):
    p = subprocess.Popen([TARGET, "1.5", "0", str(split)],
                         stdout=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"ready"
    assert p.wait() == 0
    return p.pid


def recordings():
    """Two files: flametarget at 70/30, then (after a rotation) at
    30/70."""
    if "files" not in _cache:
        with Daemon() as d:
            d.ctl("start", "-e", "cpu-clock", "-F", "999", "-g")
            pa = run_target(70)
            # a gap without flametarget's samples for the time ranges
            time.sleep(0.3)
            _cache["mid"] = time.time_ns()
            d.ctl("rotate")
            harness.wait_for(lambda: len(d.finished_files()) == 1,
                             what="the rotation")
            time.sleep(0.3)
            pb = run_target(30)
            d.ctl("stop")
            files = d.finished_files()
            assert len(files) == 2, files
            out = []
            for f in files:
                for p in (f, f + ".json"):
                    shutil.copy2(p, _work)
                out.append(os.path.join(_work, os.path.basename(f)))
        _cache["files"] = out
        _cache["pids"] = (pa, pb)
    return _cache["files"]


def ours():
    """The filter to flametarget's two runs (another flametarget may run
    beside them on a shared machine)."""
    recordings()
    pa, pb = _cache["pids"]
    return ["--pid", str(pa), "--pid", str(pb)]


def pairs(text):
    """{stack: (A, B)} of folded pairs."""
    d = {}
    for line in text.splitlines():
        stack, a, b = line.rsplit(" ", 2)
        assert stack not in d, stack
        d[stack] = (int(a), int(b))
    return d


def side(pairs_, i):
    return {s: c[i] for s, c in pairs_.items() if c[i] > 0}


def test_folded_pairs_of_two_file_sets():
    """--base FILE against FILE: A's counts are those of A's folded
    output, B's those of B's, every stack of either appears once, and the
    leaves' shares move from about 70/30 to about 30/70. (System-wide
    cpu-clock samples CPUs by the wall clock: on a loaded VM, whose vCPUs
    are stolen from, a thread's samples stray from its CPU time, by 12
    points seen here with a load average of 6; the direction holds.)"""
    fa, fb = recordings()
    p = pairs(flame("-q", *ours(), "--base", fa, "-f", "-",
                    fb).stdout)
    a = folded(flame("-q", *ours(), "-f", "-", fa).stdout)
    b = folded(flame("-q", *ours(), "-f", "-", fb).stdout)
    assert side(p, 0) == dict(a) and side(p, 1) == dict(b)
    assert set(p) == set(a) | set(b)
    sa, ta = test_flame.leaves(a)
    sb, tb = test_flame.leaves(b)
    print("leaf_seventy's share: A %.3f, B %.3f" % (sa / (sa + ta),
                                                    sb / (sb + tb)))
    assert sa / (sa + ta) > 0.55 and sb / (sb + tb) < 0.45, (sa, ta, sb, tb)


def test_time_ranges_give_the_same_pairs():
    """The same two sides as two time ranges over both files
    (--base-from/--base-to against --from/--to) give the same pairs."""
    fa, fb = recordings()
    # the files' samples of other processes may overlap at the rotation:
    # the ranges meet in the gap between the two runs of flametarget
    mid = _cache["mid"]
    a0 = utc_ns(manifest(fa)["first_sample_utc_approx"])
    b1 = utc_ns(manifest(fb)["last_sample_utc_approx"]) + 1
    by_files = flame("-q", *ours(), "--base", fa, "-f",
                     "-", fb).stdout
    by_time = flame("-q", *ours(), "--base-from", iso(a0),
                    "--base-to", iso(mid), "--from", iso(mid), "--to", iso(b1),
                    "-f", "-", fa, fb).stdout
    assert pairs(by_time) == pairs(by_files)


def test_base_options_refused_where_they_mean_nothing():
    fa, fb = recordings()
    for extra in (["--per-host", "-o", os.path.join(_work, "x.svg")],
                  ["-P", os.path.join(_work, "x.pb.gz")]):
        p = flame("-q", "--base", fa, *extra, fb, check=False)
        assert p.returncode == 2 and "differential" in p.stderr, p.stderr
    p = flame("-q", "--base-from", "now", "--base-to", "-1h", "-f", "-",
              fb, check=False)
    assert p.returncode == 2 and "--base-from" in p.stderr, p.stderr


def test_max_depth_bounds_both_sides():
    """--max-depth draws a differential graph as it draws a plain one:
    each side's stacks cut alike ([...] between the roots and the leaf),
    the subtitle says so, and the leaves keep their counts."""
    fa, fb = recordings()
    svg = os.path.join(_work, "diff-bound.svg")
    flame("-q", *ours(), "--max-depth", "4", "--base", fa, "-o", svg, fb)
    doc = xml.dom.minidom.parse(svg)
    sub = [t for t in doc.getElementsByTagName("text")
           if t.getAttribute("id") == "subtitle"][0].firstChild.data
    assert "stacks over 4 frames cut" in sub, sub
    frames = {}
    for g in doc.getElementsByTagName("g"):
        if "f" in g.getAttribute("class").split():
            name = g.getElementsByTagName("title")[0].firstChild.data
            name = name[:name.rindex(" (A ")]
            frames.setdefault(name, []).append(
                (int(g.getAttribute("data-a")), int(g.getAttribute("data-b")),
                 int(g.getAttribute("data-d"))))
    assert "[...]" in frames, list(frames)
    p = pairs(flame("-q", *ours(), "--base", fa, "-f", "-", fb).stdout)
    for leaf in ("leaf_seventy", "leaf_thirty"):
        assert max(d for _, _, d in frames[leaf]) <= 4
        assert sum(a for a, _, _ in frames[leaf]) == sum(
            c[0] for s_, c in p.items() if s_.endswith(";" + leaf))


def test_legend_says_grew_and_shrank():
    """A differential graph's legend names its colours: red grew, blue
    shrank; never a plain graph's "kernel" for blue."""
    fa, fb = recordings()
    svg = os.path.join(_work, "diff-legend.svg")
    flame("-q", *ours(), "--base", fa, "-o", svg, fb)
    doc = xml.dom.minidom.parse(svg)
    legend = [g for g in doc.getElementsByTagName("g")
              if g.getAttribute("id") == "legend"][0]
    keys = {t.firstChild.data: r.getAttribute("fill") for r, t in zip(
        legend.getElementsByTagName("rect"),
        legend.getElementsByTagName("text"))}
    grew = [k for k in keys if k.startswith("grew")][0]
    assert rgb(keys[grew])[0] == 255 and rgb(keys[grew])[2] < 255, keys
    assert rgb(keys["shrank"])[2] == 255 and rgb(keys["shrank"])[0] < 255
    assert "kernel" not in keys, keys


def rgb(s):
    return tuple(int(x) for x in s[s.index("(") + 1:-1].split(","))


def test_differential_graph_in_chromium():
    """In headless Chromium: leaf_thirty (grew) is red, leaf_seventy
    (shrank) blue, each frame's A and B counts those of the folded pairs,
    hovering names both counts and the change, a process of one side only
    (--roots pid) is dashed and says so, and the title names both
    sides."""
    import cdp
    fa, fb = recordings()
    pa, pb = _cache["pids"]
    svg = os.path.join(_work, "diff.svg")
    flame("-q", *ours(), "--base", fa, "-o", svg, fb)
    p = pairs(flame("-q", *ours(), "--base", fa, "-f", "-",
                    fb).stdout)
    ta = sum(c[0] for c in p.values())
    tb = sum(c[1] for c in p.values())

    def counts(leaf):
        """Samples with a frame of leaf (a sample taken in the kernel has
        kernel frames below it)."""
        return (sum(c[0] for s, c in p.items() if leaf in s.split(";")),
                sum(c[1] for s, c in p.items() if leaf in s.split(";")))
    doc = xml.dom.minidom.parse(svg)
    title = doc.getElementsByTagName("text")[0].firstChild.data
    host = manifest(fa)["host"]
    assert title.startswith("Differential: A (host %s, " % host), title
    assert " against B (host %s, " % host in title and \
        title.count(", 1 file)") == 2 and title.endswith(" UTC"), title
    height = int(doc.documentElement.getAttribute("height"))
    with cdp.Chromium("file://" + svg, 1200, height + 250) as c:
        os.makedirs(test_flame.ARTIFACTS, exist_ok=True)
        shot = os.path.join(test_flame.ARTIFACTS,
                            "test_flamediff-flametarget.png")
        c.screenshot(shot)
        print("screenshot: " + shot)
        maxd = c.eval("""Math.max.apply(null, flame.frames.map(function (g) {
            return Math.abs(+g.getAttribute('data-c')); }))""")

        def frames(name):
            return c.eval("""flame.frames.filter(function (g) {
                return g.fname === %s; }).map(function (g) {
                var r = g.frect.getBoundingClientRect();
                return {a: +g.getAttribute('data-a'),
                        b: +g.getAttribute('data-b'),
                        c: +g.getAttribute('data-c'),
                        cls: g.getAttribute('class'),
                        fill: getComputedStyle(g.frect).fill,
                        dash: g.frect.getAttribute('stroke-dasharray'),
                        x: r.x, y: r.y, w: r.width, h: r.height}; })"""
                          % json.dumps(name))
        for leaf, grew in (("leaf_thirty", True), ("leaf_seventy", False)):
            fs = frames(leaf)
            assert len(fs) >= 1, leaf
            # the main path's frame: the widest
            f = max(fs, key=lambda f: f["w"])
            a, b = counts(leaf)
            assert sum(x["a"] for x in fs) == a and \
                sum(x["b"] for x in fs) == b, (leaf, fs, a, b)
            change = 100.0 * (f["b"] / tb - f["a"] / ta)
            assert abs(f["c"] - change) < 0.01, (f, change)
            assert (change > 0) == grew, (leaf, change)
            # as deep as the change against the largest one
            v = 255 - round(210 * abs(change) / maxd)
            r, g, bl = rgb(f["fill"])
            if grew:
                assert r == 255 and abs(g - v) <= 1 and g == bl, \
                    (f["fill"], v)
            else:
                assert bl == 255 and abs(r - v) <= 1 and r == g, \
                    (f["fill"], v)
            assert f["dash"] is None, f
            c.mouse("move", f["x"] + f["w"] / 2, f["y"] + f["h"] / 2)
            details = c.eval(
                "document.getElementById('details').textContent")
            assert details.startswith("%s (A %d samples %.2f%%, B %d "
                                      "samples %.2f%%, %+.2f points)" % (
                                          leaf, f["a"], 100.0 * f["a"] / ta,
                                          f["b"], 100.0 * f["b"] / tb,
                                          change)), details
    # by process: each run's is on one side only
    svg = os.path.join(_work, "diff-pid.svg")
    flame("-q", *ours(), "--roots", "comm,pid", "--base", fa,
          "-o", svg, fb)
    height = int(xml.dom.minidom.parse(svg).documentElement.getAttribute(
        "height"))
    with cdp.Chromium("file://" + svg, 1200, height + 250) as c:
        for pid, only in ((pa, "only-a"), (pb, "only-b")):
            f = frames("flametarget [%d]" % pid)
            assert len(f) == 1, (pid, f)
            assert only in f[0]["cls"].split() and f[0]["dash"], f
            assert (f[0]["a"] == 0) == (only == "only-b") and \
                (f[0]["b"] == 0) == (only == "only-a"), f
            c.mouse("move", f[0]["x"] + f[0]["w"] / 2,
                    f[0]["y"] + f[0]["h"] / 2)
            details = c.eval(
                "document.getElementById('details').textContent")
            assert details.endswith(", only in %s)" % only[-1].upper()), \
                details


if __name__ == "__main__":
    harness.main(globals())
