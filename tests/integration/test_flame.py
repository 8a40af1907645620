"""perfspill-flame on files the real daemon recorded: tests/flametarget
(two threads, leaf_seventy and leaf_thirty at 70/30 of the CPU) sampled
with cpu-clock at 999 Hz and callchains; the stock perf script is the
oracle for what the folded stacks count (perfspill-flame reads the files
itself). The SVG is opened in a headless
Chromium (skipped without it), and ship-pyroscope.sh uploads to a local
receiver."""
import collections
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import urllib.parse
import xml.dom.minidom

import harness
from harness import (Daemon, flame, folded, iso, manifest, perf, utc_ns,
                     wait_for)

FLAME = os.path.join(harness.BUILD, "perfspill-flame")
TARGET = os.path.join(harness.BUILD, "tests", "flametarget")
DEEP = os.path.join(harness.BUILD, "tests", "deepstack")
SRC = os.path.join(os.path.dirname(__file__), "..", "..")
SHIP = os.path.join(SRC, "conf", "ship-pyroscope.sh")
ARTIFACTS = os.path.join(harness.BUILD, "meson-logs")

_work = harness.workdir("perfspill-flame-test-")
_cache = {}


def record(d, secs, rotate_at_half=False, start_args=()):
    """flametarget recorded by d: cpu-clock at 999 Hz with callchains."""
    d.ctl("start", "-e", "cpu-clock", "-F", "999", "-g", *start_args)
    p = subprocess.Popen([TARGET, str(secs), "0.3" if rotate_at_half
                          else "0"], stdout=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"ready"
    if rotate_at_half:
        # flametarget pauses after "half": the rotation falls in between
        assert p.stdout.readline().strip() == b"half"
        d.ctl("rotate")
    assert p.wait() == 0
    d.ctl("stop")
    _cache["pid %s" % d.out] = p.pid
    return d.finished_files()


def keep(files, name):
    """Copies of the finished files and their manifests, kept for the
    tests of this module (the daemon's directory goes with it)."""
    dst = os.path.join(_work, name)
    os.makedirs(dst)
    out = []
    for f in files:
        for p in (f, f + ".json"):
            shutil.copy2(p, dst)
        out.append(os.path.join(dst, os.path.basename(f)))
    return out


def recording():
    """One recording of 3 s of flametarget's CPU, made once."""
    if "one" not in _cache:
        with Daemon() as d:
            files = record(d, 3.0)
            assert len(files) == 1, files
            _cache["one"] = keep(files, "one")[0]
            _cache["one pid"] = _cache["pid %s" % d.out]
    return _cache["one"]


def rotated():
    """Two files: the first and the second half of one run."""
    if "two" not in _cache:
        with Daemon() as d:
            files = record(d, 2.0, rotate_at_half=True)
            assert len(files) == 2, files
            _cache["two"] = keep(files, "two")
            _cache["two pid"] = _cache["pid %s" % d.out]
    return _cache["two"]


def machine():
    """The whole machine for 2 s of deepstack's CPU (a real 80-frame
    stack, and 127-frame chains of [unknown] from a made-up frame
    pointer) and of dd's system calls (kernel frames), with whatever else
    runs here; recorded once. dd runs as long as deepstack and is then
    ended, so that both halves of the recording hold its kernel samples
    (test_otlp cuts it in the middle: with a count of 3 M bytes, dd
    ended in the first half on a fast machine)."""
    if "machine" not in _cache:
        with Daemon() as d:
            d.ctl("start", "-e", "cpu-clock", "-F", "999", "-g")
            p = subprocess.Popen([DEEP, "2"], stdout=subprocess.PIPE)
            assert p.stdout.readline().strip() == b"ready"
            dd = subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null",
                                   "bs=1"], stderr=subprocess.DEVNULL)
            assert p.wait() == 0
            dd.terminate()
            assert dd.wait() == -signal.SIGTERM
            d.ctl("stop")
            files = d.finished_files()
            assert len(files) == 1, files
            _cache["machine"] = keep(files, "machine")[0]
            _cache["machine pids"] = (p.pid, dd.pid)
    return _cache["machine"]


def frames_of(svg):
    """{name: [(depth, fill, class)]} of an SVG's frames."""
    out = collections.defaultdict(list)
    for g in xml.dom.minidom.parse(svg).getElementsByTagName("g"):
        if g.getAttribute("class").split()[:1] == ["f"]:
            name = g.getElementsByTagName("title")[0].firstChild.data
            out[name.rsplit(" (", 1)[0]].append((
                int(g.getAttribute("data-d")), g.getElementsByTagName(
                    "rect")[0].getAttribute("fill"), g.getAttribute("class")))
    return out


def rgb(fill):
    return tuple(int(x) for x in fill[4:-1].split(","))


def ship(name, hosts, exts=()):
    """A fleet store NAME/HOST/: each (host, file) copied there (and its
    files with exts) with its manifest saying that host."""
    fleet = os.path.join(_work, name)
    for host, src in hosts:
        os.makedirs(os.path.join(fleet, host))
        dst = os.path.join(fleet, host, os.path.basename(src))
        for ext in ("",) + tuple(exts):
            shutil.copy2(src + ext, dst + ext)
        m = manifest(src)
        m["host"] = host
        with open(dst + ".json", "w") as f:
            json.dump(m, f)
    return fleet


def perf_times(path):
    """Every sample's time (ns of perf's clock), as perf script prints."""
    out = perf("script", "-i", path, "--ns", "-F", "time").stdout
    return [int(l.strip().rstrip(":").replace(".", ""))
            for l in out.splitlines() if l.strip()]


def perf_pid_samples(path, pid, comm=None):
    """The samples of pid in path (of those with comm, when given)."""
    out = perf("script", "-i", path, "-F", "comm,pid").stdout
    n = 0
    for l in out.splitlines():
        f = l.split()
        n += len(f) >= 2 and f[-1] == str(pid) and \
            (comm is None or " ".join(f[:-1]) == comm)
    return n


def leaves(stacks):
    seventy = sum(n for s, n in stacks.items()
                  if "leaf_seventy" in s.split(";"))
    thirty = sum(n for s, n in stacks.items()
                 if "leaf_thirty" in s.split(";"))
    return seventy, thirty


def test_shares_and_callchain():
    """The folded stacks give flametarget's 70/30 within 3 points, its
    callchains main -> worker -> leaf, and every one of its samples that
    perf script shows, no more."""
    path = recording()
    pid = str(_cache["one pid"])
    stacks = folded(flame("-q", "--no-companion", "-f", "-", "--pid", pid,
                          path).stdout)
    seventy, thirty = leaves(stacks)
    share = seventy / (seventy + thirty)
    assert abs(share - 0.70) <= 0.03, (seventy, thirty, share)
    assert seventy + thirty > 1000, (seventy, thirty)
    assert any(s.startswith("flametarget;") and
               s.endswith(";main;worker;leaf_seventy") for s in stacks), \
        list(stacks)[:20]
    assert any(s.endswith(";worker_thread;worker;leaf_thirty")
               for s in stacks), list(stacks)[:20]
    assert sum(stacks.values()) == perf_pid_samples(path, pid)


def test_time_range_keeps_only_the_second_half():
    """--from the middle of a recording to its end keeps exactly the
    samples perf script -F time shows in that half; --since covering it
    keeps them all; a range before it is an error that says so."""
    path = recording()
    m = manifest(path)
    first, last = m["first_sample_time"], m["last_sample_time"]
    wall = utc_ns(m["first_sample_utc_approx"]) - first
    mid = (first + last) // 2
    times = perf_times(path)
    want = sum(1 for t in times if mid <= t <= last)
    assert 0 < want < len(times), (want, len(times))
    p = flame("-q", "--no-companion", "--roots", "none", "-f", "-",
              "--from", iso(mid + wall), "--to", iso(last + wall + 1), path)
    assert sum(folded(p.stdout).values()) == want
    # the first half is the rest
    p = flame("-q", "--no-companion", "--roots", "none", "-f", "-",
              "--from", iso(first + wall), "--to", iso(mid + wall), path)
    assert sum(folded(p.stdout).values()) == len(times) - want
    p = flame("-q", "-f", "-", "--since", "1h", path)
    assert sum(folded(p.stdout).values()) == len(times)
    p = flame("-q", "-f", "-", "--from", iso(first + wall - 7200 * 10**9),
              "--to", "-1h", path, check=False)
    assert p.returncode == 1 and "none of the 1 trace files" in p.stderr, \
        p.stderr


def test_rotated_files_merge():
    """Two files of one run, given as their directory: the folded stacks
    are those of each file added up, and both halves are in it."""
    a, b = rotated()
    # flametarget's stacks: its binary stays, so perf names its frames
    # the same in every run (a program that is gone by the next run
    # would get [unknown] frames then)
    pid = str(_cache["two pid"])
    fa = folded(flame("-q", "--pid", pid, "-f", "-", a).stdout)
    fb = folded(flame("-q", "--pid", pid, "-f", "-", b).stdout)
    both = folded(flame("-q", "--pid", pid, "-f", "-",
                        os.path.dirname(a)).stdout)
    assert both == fa + fb
    for f in (fa, fb):
        assert sum(leaves(f)) > 100, leaves(f)
    assert sum(folded(flame("-q", "-f", "-", a).stdout).values()) == \
        len(perf_times(a))


def test_fleet_per_host_and_merged():
    """Files of two hosts (the manifests say which): one graph for both,
    counts added, host roots on request; or one per host, whose subtitle
    gives the rate over the time that host's samples span (each host has
    half of the run: over the whole run's time the rate read less than
    half)."""
    a, b = rotated()
    pid = str(_cache["two pid"])
    fa = folded(flame("-q", "--pid", pid, "-f", "-", a).stdout)
    fb = folded(flame("-q", "--pid", pid, "-f", "-", b).stdout)
    # shipped with their companions: read under the manifest's host
    fleet = ship("fleet", (("alpha", a), ("beta", b)), (".folded",))
    out = os.path.join(_work, "fleet-out")
    os.makedirs(out)
    svg = os.path.join(out, "fleet.svg")
    merged = folded(flame("-q", "--pid", pid, "--roots", "host,comm", "-f",
                          "-", fleet).stdout)
    assert merged == collections.Counter(
        {"alpha;" + s: n for s, n in fa.items()}) + collections.Counter(
        {"beta;" + s: n for s, n in fb.items()})
    flame("-q", "--pid", pid, "--per-host", "-o", svg, "-f",
          os.path.join(out, "%h.folded"), fleet)
    assert folded(open(os.path.join(out, "alpha.folded")).read()) == fa
    assert folded(open(os.path.join(out, "beta.folded")).read()) == fb
    for host, path in (("alpha", a), ("beta", b)):
        doc = xml.dom.minidom.parse(os.path.join(out, "fleet-%s.svg" % host))
        sub = [t for t in doc.getElementsByTagName("text")
               if t.getAttribute("id") == "subtitle"][0]
        assert ("host %s " % host) in sub.firstChild.data, \
            sub.firstChild.data
        # the host's file spans its first to its last sample, as perf
        # script reads them
        times = perf_times(path)
        secs = (max(times) - min(times)) / 1e9
        m = re.search(r" (\d+) samples \((\d+(\.\d)?)/s\)",
                      sub.firstChild.data)
        assert m, sub.firstChild.data
        want = int(m.group(1)) / secs
        assert abs(float(m.group(2)) - want) <= max(1, want / 100), \
            (sub.firstChild.data, want, secs)


def test_companion_made_reused_and_refolded():
    """A whole file is folded once: the next run reads NAME.data.folded;
    a changed data file is folded again (and its companion made anew)."""
    src = recording()
    d = os.path.join(_work, "companion")
    os.makedirs(d)
    path = os.path.join(d, os.path.basename(src))
    shutil.copy2(src, path)
    shutil.copy2(src + ".json", path + ".json")
    pid = str(_cache["one pid"])
    first = flame("-q", "--pid", pid, "-f", "-", path).stdout
    assert os.path.exists(path + ".folded")
    assert os.path.getsize(path + ".folded") < os.path.getsize(path)
    p = flame("-v", "--pid", pid, "-f", "-", path)
    assert p.stdout == first
    assert "from its companion" in p.stderr, p.stderr
    os.utime(path, None)        # another file now, as far as we know
    p = flame("-v", "--pid", pid, "-f", "-", path)
    assert p.stdout == first
    assert "from its companion" not in p.stderr and \
        "another version" in p.stderr, p.stderr


def test_file_without_manifest_placed_by_its_samples():
    """A file without its manifest is placed by the sample times in its
    header and the time in its name: a range around it takes it whole,
    one that ends before it does not, and its host is the header's."""
    src = recording()
    m = manifest(src)
    d = os.path.join(_work, "bare")
    os.makedirs(d)
    path = os.path.join(d, os.path.basename(src))
    shutil.copy2(src, path)
    first = utc_ns(m["first_sample_utc_approx"])
    p = flame("-q", "-v", "--no-companion", "--roots", "host", "-f", "-",
              "--from", iso(first - 60 * 10**9), "--to", "now", path)
    assert "facts from its header" in p.stderr, p.stderr
    stacks = folded(p.stdout)
    assert sum(stacks.values()) == m["samples"]
    assert all(s.split(";")[0] == m["host"] for s in stacks), \
        list(stacks)[:3]
    p = flame("-q", "-f", "-", "--from", iso(first - 3600 * 10**9), "--to",
              iso(first - 60 * 10**9), path, check=False)
    assert p.returncode == 1 and "none of the 1 trace files" in p.stderr, \
        p.stderr


def test_no_perf_needed():
    """The files are read without perf: none on PATH, the same stacks."""
    path = recording()
    want = flame("-q", "--no-companion", "-f", "-", path).stdout
    p = flame("-q", "--no-companion", "-f", "-", path,
              env={"PATH": "/nonexistent"})
    assert p.stdout == want and want, p.stderr


def test_retention_removes_the_companion():
    """The daemon's retention takes NAME.data.folded with NAME.data and
    its manifest (the old code left it behind)."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99", "-g")
        harness.spinner(0.3).wait()
        d.ctl("rotate")
        wait_for(lambda: len(d.finished_files()) == 1, what="rotated file")
        old = d.finished_files()[0]
        flame("-q", "-f", os.devnull, old)
        assert os.path.exists(old + ".folded")
        d.ctl("configure", "max_files=1")
        d.ctl("rotate")
        wait_for(lambda: not os.path.exists(old), what="retention")
        d.ctl("stop")
        for p in (old + ".json", old + ".folded"):
            assert not os.path.exists(p), p


def test_cgroup_roots_and_filter():
    """A file recorded with all_cgroups: flametarget run inside a test
    cgroup is found under it (--roots cgroup,comm), every one of its
    samples that perf script shows, and --cgroup keeps nothing else."""
    import cgroupfs
    with cgroupfs.Cgroups("flame") as cg, Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "999", "-g",
              "--all-cgroups")
        procs = os.path.join(cg.path("flame"), "cgroup.procs")
        p = subprocess.Popen(["sh", "-c", 'echo $$ > "$1" && exec "$2" 1',
                              "sh", procs, TARGET], stdout=subprocess.PIPE)
        assert p.stdout.readline().strip() == b"ready"
        assert p.wait() == 0
        d.ctl("stop")
        path = d.finished_files()[0]
        # flametarget's own: the shell it was exec'd from began in the
        # test's cgroup and may have been sampled before it moved
        want = perf_pid_samples(path, p.pid, "flametarget")
        rel = "/" + cg.rel["flame"]
        stacks = folded(flame("-q", "--cgroup", rel, "--roots",
                              "cgroup,comm", "-f", "-", path).stdout)
        # the process before its exec (python3's child, the shell) is
        # there too: one thread, one cgroup per file (perf script has no
        # sample's cgroup; perf report maps threads)
        assert stacks and all(s.startswith(rel + ";") for s in stacks), \
            list(stacks)[:5]
        mine = sum(folded(flame("-q", "--cgroup", rel, "--pid", str(p.pid),
                                "--comm", "flametarget", "-f", "-",
                                path).stdout).values())
        assert mine == want > 300, (mine, want)
        everything = folded(flame("-q", "--roots", "cgroup", "-f", "-",
                                  path).stdout)
        assert sum(everything.values()) > want


class Receiver:
    """A Pyroscope-like /ingest on 127.0.0.1 that keeps every request."""

    def __init__(self, status=200):
        self.requests = []
        me = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                me.requests.append((self.command, self.path,
                                    dict(self.headers), self.rfile.read(n)))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *a):
                pass
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        self.t = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.t.start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def test_pyroscope_upload_as_on_finish():
    """ship-pyroscope.sh as the daemon's on_finish: one POST to /ingest
    with name, from, until, format=folded and the sample rate, the body
    the file's folded stacks, run as the unprivileged hand-off user (which
    keeps no companion: it may not write in the output directory); a
    receiver's error is a failed run (retried by the daemon)."""
    rcv = Receiver()
    try:
        with Daemon(config={}, start=False) as d:
            # the hand-off runs as on_finish_user (perfspill-handoff): its
            # program where that user may run it
            harness.handoff_user()
            os.chmod(d.dir, 0o755)
            hook = os.path.join(d.dir, "hook")
            with open(hook, "w") as f:
                f.write("#!/bin/sh\nSHIP_PYROSCOPE=%s PERFSPILL_FLAME=%s "
                        "exec %s \"$@\"\n" % (rcv.url, FLAME,
                                              os.path.abspath(SHIP)))
            os.chmod(hook, 0o755)
            with open(d.config, "w") as f:
                json.dump({"on_finish": hook, "on_finish_retry": "1"}, f)
            d.start()
            path = record(d, 1.0)[0]
            wait_for(lambda: d.status()["handoffs"]["ok"] == 1, 120,
                     "the hand-off")
            assert len(rcv.requests) == 1, rcv.requests
            method, url, headers, body = rcv.requests[0]
            u = urllib.parse.urlsplit(url)
            q = urllib.parse.parse_qs(u.query, strict_parsing=True)
            m = manifest(path)
            assert method == "POST" and u.path == "/ingest", url
            assert q["name"] == ["perfspill.cpu{host=%s}" % m["host"]], q
            assert q["format"] == ["folded"] and q["sampleRate"] == ["999"]
            assert q["from"] == [str(utc_ns(m["first_sample_utc_approx"]) //
                                     10**9)], (q, m)
            assert q["until"] == [str(utc_ns(m["last_sample_utc_approx"]) //
                                      10**9 + 1)], (q, m)
            assert q["spyName"] == ["perfspill"] and \
                q["units"] == ["samples"], q
            # the hand-off's user reads the files but may not write in
            # the output directory: no companion from it
            assert not os.path.exists(path + ".folded")
            # what root folds of the same file, but for the symbols an
            # unprivileged perf may not resolve (kernel addresses)
            stacks = folded(body.decode())
            mine = folded(flame("-q", "-f", "-", path).stdout)
            assert sum(stacks.values()) == sum(mine.values())
            assert {k.split(";")[0] for k in stacks} == \
                {k.split(";")[0] for k in mine}
            assert sum(stacks.values()) == m["samples"]
            assert sum(leaves(stacks)) > 300, leaves(stacks)
            keep([path], "shipped")
    finally:
        rcv.close()
    bad = Receiver(status=500)
    try:
        path = os.path.join(_work, "shipped", os.path.basename(path))
        p = subprocess.run([SHIP, path, path + ".json"], capture_output=True,
                           text=True, env=dict(os.environ,
                                               SHIP_PYROSCOPE=bad.url,
                                               PERFSPILL_FLAME=FLAME))
        assert p.returncode != 0 and len(bad.requests) == 1, p
    finally:
        bad.close()


def test_icicle_and_reversed():
    """-I (--icicle) hangs the frames from the root at the top, -i FILE
    reads FILE (perf's -i) and draws a flame graph; -r puts the hot
    functions under the roots, their callers above them."""
    path = recording()
    pid = str(_cache["one pid"])

    def ys(*args):
        svg = os.path.join(_work, "shape.svg")
        flame("-q", "--pid", pid, "-o", svg, *args, path)
        y = {}
        for g in xml.dom.minidom.parse(svg).getElementsByTagName("g"):
            if g.getAttribute("class").startswith("f"):
                name = g.getElementsByTagName("title")[0].firstChild.data
                y.setdefault(name.rsplit(" (", 1)[0], float(
                    g.getElementsByTagName("rect")[0].getAttribute("y")))
        return y
    flat, icicle = ys(), ys("-I")
    assert flat["all"] > flat["main"] > flat["leaf_seventy"], flat
    assert icicle["all"] < icicle["main"] < icicle["leaf_seventy"], icicle
    assert ys("--icicle") == icicle and ys("--inverted") == icicle
    # perf's -i: the input, and the flame graph it always drew (-i drew
    # an icicle before, of the FILE named after it all the same)
    assert ys("-i") == flat
    # given twice, read once; -i with a directory reads the files below
    assert folded(flame("-q", "--pid", pid, "-f", "-", "-i", path,
                        path).stdout) == folded(flame(
        "-q", "--pid", pid, "-f", "-", "-i", os.path.dirname(path)).stdout)
    p = flame("-q", "-i", check=False)
    assert p.returncode == 2 and "requires an argument" in p.stderr, p.stderr
    helptext = flame("--help").stdout
    assert "-i, --input FILE|DIR" in helptext and \
        "-I, --icicle" in helptext, helptext
    page = open(os.path.join(SRC, "man", "perfspill-flame.1.in")).read()
    assert "\\fB\\-i\\fP, \\fB\\-\\-input\\fP" in page and \
        "\\fB\\-I\\fP, \\fB\\-\\-icicle\\fP" in page
    stacks = folded(flame("-q", "--pid", pid, "--reverse", "-f", "-",
                          path).stdout)
    assert any(s.startswith("flametarget;leaf_seventy;worker;main;")
               for s in stacks), list(stacks)[:5]


def test_svg_renders_zooms_and_searches_in_chromium():
    """The SVG is XML; in headless Chromium its frames show (screenshot
    kept in meson-logs/), a real click on leaf_thirty zooms it to the full
    width and hides its neighbour, Back undoes it, hovering names a frame
    and its share, and a search gives the share of what it matched."""
    import cdp
    path = recording()
    svg = os.path.join(_work, "flametarget.svg")
    flame("-q", "--comm", "flametarget", "-o", svg, path)
    doc = xml.dom.minidom.parse(svg)
    titles = [t.firstChild.data for t in doc.getElementsByTagName("title")]
    assert any(t.startswith("leaf_seventy (") for t in titles), titles[:10]
    stacks = folded(flame("-q", "--comm", "flametarget", "-f", "-",
                          path).stdout)
    total = sum(stacks.values())
    # the frames of the main paths (a broken unwind may put a leaf
    # elsewhere too, in a narrow frame of its own)
    seventy = sum(n for s, n in stacks.items()
                  if ";main;worker;leaf_seventy" in s)
    thirty = sum(n for s, n in stacks.items()
                 if ";worker_thread;worker;leaf_thirty" in s)
    leaf_share = 100.0 * sum(leaves(stacks)) / total
    height = int(doc.documentElement.getAttribute("height"))
    with cdp.Chromium("file://" + svg, 1200, height + 250) as c:
        os.makedirs(ARTIFACTS, exist_ok=True)
        shot = os.path.join(ARTIFACTS, "test_flame-flametarget.png")
        w, h, rows = cdp.png_pixels(c.screenshot(shot))
        print("screenshot: " + shot)
        # frames drawn: rows of the picture where warm (user code)
        # pixels span a third of the width: main, worker, the leaves...
        def warm(p):
            return p[0] > 190 and p[2] < 110 and p[1] < 235
        wide = sum(1 for r in rows if sum(1 for p in r if warm(p)) > w / 3)
        assert wide >= 3 * 12, (wide, w, h)

        def frame(name):
            return c.eval("""(function () {
                var g = flame.frames.filter(function (g) {
                    return g.fname === %s; }).sort(function (a, b) {
                    return b.fn - a.fn; })[0];
                var r = g.frect.getBoundingClientRect();
                return {x: r.x, y: r.y, w: r.width, h: r.height,
                        hidden: g.classList.contains('hide')};
            })()""" % json.dumps(name))
        t0 = frame("leaf_thirty")
        s0 = frame("leaf_seventy")
        assert abs(t0["w"] / (t0["w"] + s0["w"]) - thirty /
                   (seventy + thirty)) < 0.02, (t0, s0)
        c.mouse("move", s0["x"] + s0["w"] / 2, s0["y"] + s0["h"] / 2)
        details = c.eval("document.getElementById('details').textContent")
        assert details.startswith("leaf_seventy (%d samples, " % seventy), \
            details
        c.mouse("click", t0["x"] + t0["w"] / 2, t0["y"] + t0["h"] / 2)
        t1 = frame("leaf_thirty")
        assert t1["w"] > 1170 and not t1["hidden"], t1
        assert frame("leaf_seventy")["hidden"]
        assert frame("worker_thread")["w"] > 1170
        back = c.eval("""(function () {
            var r = document.getElementById('back').getBoundingClientRect();
            return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()""")
        c.mouse("click", back["x"], back["y"])
        t2 = frame("leaf_thirty")
        assert abs(t2["w"] - t0["w"]) < 1 and not frame(
            "leaf_seventy")["hidden"], (t0, t2)
        c.eval("""(function () {
            var s = document.getElementById('search');
            s.value = '^leaf_';
            s.dispatchEvent(new Event('input')); })()""")
        matched = c.eval("document.getElementById('matched').textContent")
        assert matched.startswith("Matched: ") and abs(
            float(matched.split()[1].rstrip("%")) - leaf_share) < 0.1, \
            (matched, leaf_share)


def test_svg_is_as_wide_as_the_window_with_the_rate():
    """Without --width a browser draws the graph as wide as its window:
    in a 1900-pixel Chromium window the root spans it and a label the file
    cut at 1200 pixels shows more of its name; --width keeps its width.
    The subtitle gives the samples' rate over the range it shows."""
    import cdp
    path = machine()
    svg = os.path.join(_work, "wide.svg")
    flame("-q", "-o", svg, path)
    doc = xml.dom.minidom.parse(svg)
    sub = [t for t in doc.getElementsByTagName("text")
           if t.getAttribute("id") == "subtitle"][0].firstChild.data
    m = re.search(r" (\d+) samples \((\d+(\.\d)?)/s\)", sub)
    assert m and float(m.group(2)) > 0, sub
    assert doc.documentElement.getAttribute("width") == "1200"
    # a cut label keeps at least 4 characters of its name: "s.." names
    # nothing (72 of the 88 cut labels of this graph were such)
    labels = [t.firstChild.data for g in doc.getElementsByTagName("g")
              if "f" in g.getAttribute("class").split()
              for t in g.getElementsByTagName("text") if t.firstChild]
    cut = [x for x in labels if x.endswith("..")]
    assert cut and all(len(x) >= 6 for x in cut), cut
    fixed = os.path.join(_work, "fixed.svg")
    flame("-q", "--width", "1300", "-o", fixed, path)
    probe = """(function () {
        var root = flame.frames.filter(function (g) {
            return g.fd === 0; })[0].frect.getBoundingClientRect();
        var cut = 0, whole = 0, short = 0;
        flame.frames.forEach(function (g) {
            var t = g.ftext.textContent;
            if (t.length > 2 && t.slice(-2) === "..") cut++;
            if (t.length > 2 && t.slice(-2) === ".." && t.length < 6)
                short++;
            else if (t.length > 0) whole++;
        });
        var ti = document.getElementById("title").getBoundingClientRect();
        return {root: root.width, cut: cut, whole: whole, short: short,
                title: ti.x + ti.width / 2,
                vw: document.documentElement.getBoundingClientRect().width};
        })()"""
    with cdp.Chromium("file://" + svg, 1200, 900) as c:
        narrow = c.eval(probe)
    with cdp.Chromium("file://" + svg, 1900, 900) as c:
        wide = c.eval(probe)
    with cdp.Chromium("file://" + fixed, 1900, 900) as c:
        kept = c.eval(probe)
    assert wide["root"] > 1800 and wide["root"] > narrow["root"] + 500, \
        (narrow, wide)
    assert abs(wide["title"] - wide["vw"] / 2) < 30, wide
    # more whole labels than at 1200 pixels, and the script cuts as the
    # file does
    assert wide["whole"] > narrow["whole"], (narrow, wide)
    assert wide["short"] == 0 and narrow["short"] == 0, (narrow, wide)
    assert abs(kept["root"] - 1280) < 2, kept


def test_deep_graph_opens_on_its_root():
    """A whole machine's graph, with 127-frame chains of [unknown] (perf
    script shows them) and a real 80-frame recursion: the [unknown] run
    is one frame, the recursion is whole in the folded stacks and cut to
    --max-depth in the graph ([...] between its top and its leaf), and a
    1400x1000 Chromium window shows the root, the commands on it and the
    title without scrolling (the old graph was 2,168 px tall and the
    root 1,200 px below the window)."""
    import cdp
    path = machine()
    deep_pid, _ = _cache["machine pids"]
    # the input really is deep: perf script's chains of the lost thread
    # by pid, as perfspill-flame's --pid selects: under ASan, LeakSanitizer's
    # tracer at exit is another process of the same comm (issue 40)
    chains = perf("script", "-i", path, "--pid", str(deep_pid)).stdout.split(
        "\n\n")
    lost = [c for c in chains if " lost+" in c]
    assert lost and max(c.count("[unknown] ([unknown])") for c in lost) \
        >= 100, lost[:1]
    stacks = folded(flame("-q", "--pid", str(deep_pid), "-f", "-",
                          path).stdout)
    # the frame lost, as " lost+" is in perf's chain (not lost_thread,
    # the thread's start, in a sample taken as ASan's runtime joins it)
    lost_stacks = {s: n for s, n in stacks.items()
                   if "lost" in s.split(";")}
    assert sum(lost_stacks.values()) == len(lost), (lost_stacks, len(lost))
    assert all(";[unknown];[unknown]" not in s for s in stacks), \
        [s for s in stacks if ";[unknown];[unknown]" in s][:1]
    assert "deepstack;[unknown];lost" in lost_stacks, list(lost_stacks)
    assert max(s.split(";").count("descend") for s in stacks) == 81
    # the graph: bounded, the leaf kept beyond [...]
    svg = os.path.join(_work, "machine.svg")
    flame("-q", "--width", "1400", "-o", svg, path)
    fr = frames_of(svg)
    assert max(d for v in fr.values() for d, _, _ in v) <= 64, \
        max(d for v in fr.values() for d, _, _ in v)
    assert fr["[...]"] and fr["bottom"] and \
        min(d for d, _, _ in fr["bottom"]) == 64, (fr["[...]"], fr["bottom"])
    doc = xml.dom.minidom.parse(svg)
    sub = [t for t in doc.getElementsByTagName("text")
           if t.getAttribute("id") == "subtitle"][0].firstChild.data
    assert "stacks over 64 frames cut" in sub, sub
    full = os.path.join(_work, "machine-full.svg")
    flame("-q", "--max-depth", "0", "-o", full, path)
    assert max(d for d, _, _ in frames_of(full)["bottom"]) >= 84
    height = int(doc.documentElement.getAttribute("height"))
    assert height > 1000, height    # taller than the window: it scrolls
    with cdp.Chromium("file://" + svg, 1400, 1000) as c:
        def boxes():
            return c.eval("""(function () {
                var out = {vh: window.visualViewport.height,
                           y: window.scrollY};
                function box(el) {
                    var r = el.getBoundingClientRect();
                    return {top: r.top, bottom: r.bottom, w: r.width};
                }
                var top = flame.frames.filter(function (g) {
                    return g.fd <= 1; });
                out.root = box(top.filter(function (g) {
                    return g.fd === 0; })[0].frect);
                out.comm = box(top.filter(function (g) {
                    return g.fname === "deepstack"; })[0].frect);
                out.title = box(document.getElementById("title"));
                out.search = box(document.getElementById("search"));
                out.legend = box(document.getElementById("legend"));
                return out; })()""")

        def on_screen(b, vh):
            return 0 <= b["top"] and b["bottom"] <= vh
        # the page settles (a headless window sizes its viewport after
        # the load): then the root is in it, never scrolled by the test
        wait_for(lambda: on_screen(boxes()["root"], boxes()["vh"]), 20,
                 "the root on the first screen: " + json.dumps(boxes()))
        seen = boxes()
        shot = os.path.join(ARTIFACTS, "test_flame-first-screen.png")
        os.makedirs(ARTIFACTS, exist_ok=True)
        c.screenshot(shot)
        print("screenshot: " + shot)
        for what in ("root", "comm", "title", "search", "legend"):
            assert on_screen(seen[what], seen["vh"]), (what, seen)
        assert seen["root"]["w"] > 1300, seen
        # the header floats above the frames, clear of the root
        assert seen["title"]["bottom"] < seen["root"]["top"], seen
        # the reader's scroll is theirs: back at the top, the header
        # is where it was written
        # (the header follows on the scroll event, which comes after
        # scrollTo returns: wait for it, or the header is read where
        # it floated a moment ago)
        c.eval("window.scrollTo(0, 0)")
        wait_for(lambda: boxes()["y"] == 0 and
                 abs(boxes()["title"]["top"] - seen["title"]["top"]) < 1,
                 20, "the header where it was written, at the top: " +
                 json.dumps(boxes()))


def test_kernel_and_user_frames_apart_and_a_legend():
    """Kernel frames are blue, user code warm (red to yellow), the roots
    grey: apart in hue (kernel frames were rgb(243,138,41) beside user
    ones of rgb(225,146,24)); the legend names each with its colour, and
    the man page says what the graph draws."""
    path = machine()
    svg = os.path.join(_work, "colours.svg")
    flame("-q", "-o", svg, path)
    fr = frames_of(svg)
    kernel = [rgb(f) for v in fr.values() for _, f, c in v if c == "f k"]
    user = [rgb(f) for n, v in fr.items() for d, f, c in v
            if c == "f" and d >= 2 and n != "[...]"]
    assert len(kernel) > 20 and len(user) > 20, (len(kernel), len(user))
    # blue: its blue well above its red; warm: the other way round
    assert all(b - r >= 80 for r, g, b in kernel), [
        k for k in kernel if k[2] - k[0] < 80][:5]
    assert all(r - b >= 150 for r, g, b in user), [
        u for u in user if u[0] - u[2] < 150][:5]
    roots = [rgb(f) for d, f, c in fr["dd"] + fr["deepstack"] if d == 1]
    assert roots and all(max(c) - min(c) <= 40 for c in roots), roots
    doc = xml.dom.minidom.parse(svg)
    legend = [g for g in doc.getElementsByTagName("g")
              if g.getAttribute("id") == "legend"][0]
    keys = {t.firstChild.data: rgb(r.getAttribute("fill")) for r, t in zip(
        legend.getElementsByTagName("rect"),
        legend.getElementsByTagName("text"))}
    assert set(keys) == {"user code", "kernel", "roots, [...]"}, keys
    r, g, b = keys["kernel"]
    assert b - r >= 80, keys
    r, g, b = keys["user code"]
    assert r - b >= 150, keys
    page = open(os.path.join(SRC, "man", "perfspill-flame.1.in")).read()
    page = " ".join(page.split()).lower()
    assert "user code in warm colours (red to yellow), kernel code in " \
        "blue, the roots in grey" in page, page[page.find("colour") - 200:
                                                 page.find("colour") + 200]


def subtitle(svg):
    doc = xml.dom.minidom.parse(svg)
    return [t for t in doc.getElementsByTagName("text")
            if t.getAttribute("id") == "subtitle"][0].firstChild.data


def test_sessions_are_not_added_together():
    """A 999 Hz session beside the 99 Hz default: a directory's graph is
    the default session's alone (it added both: the same CPU time twice,
    weighted by rate), --session deep the other's, --session all both,
    and the title says which; a file without its manifest is placed by
    its name; a file named is read whatever its session."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99", "-g")
        d.ctl("start", "--session", "deep", "-e", "cpu-clock", "-F", "999",
              "-g", "-m", "64", "--cblocks", "1")
        p = subprocess.Popen([TARGET, "1"], stdout=subprocess.PIPE)
        assert p.stdout.readline().strip() == b"ready"
        assert p.wait() == 0
        d.ctl("stop", "--session", "deep")
        d.ctl("stop")
        files = keep(d.finished_files(), "sessions")
    deep = [f for f in files if "-deep-" in os.path.basename(f)]
    dflt = [f for f in files if f not in deep]
    assert len(deep) == 1 and len(dflt) == 1, files
    assert manifest(deep[0])["session"] == "deep"
    pid = str(p.pid)
    want_d = perf_pid_samples(dflt[0], pid)
    want_x = perf_pid_samples(deep[0], pid)
    assert want_x > 5 * want_d > 0, (want_x, want_d)
    where = os.path.dirname(dflt[0])

    def count(*args):
        return sum(folded(flame("-q", "--pid", pid, "-f", "-", *args,
                                where).stdout).values())
    assert count() == want_d
    assert count("--session", "default") == want_d
    assert count("--session", "deep") == want_x
    assert count("--session", "all") == want_d + want_x
    assert count("--session", "deep", "--session", "default") == \
        want_d + want_x
    svg = os.path.join(_work, "sessions.svg")
    flame("-q", "-o", svg, where)
    assert subtitle(svg).startswith("session default \u00b7 "), \
        subtitle(svg)
    flame("-q", "-o", svg, "--session", "all", where)
    assert subtitle(svg).startswith("sessions default, deep \u00b7 ") or \
        subtitle(svg).startswith("sessions deep, default \u00b7 "), \
        subtitle(svg)
    # without manifests: the session is in the file's name
    bare = os.path.join(_work, "sessions-bare")
    os.makedirs(bare)
    for f in files:
        shutil.copy2(f, bare)
    n = lambda *a: sum(folded(flame(
        "-q", "--no-companion", "--pid", pid, "-f", "-", *a).stdout).values())
    assert n(bare) == want_d and n("--session", "deep", bare) == want_x
    # a file named is read, whatever its session; given with --session,
    # that decides
    assert n(deep[0]) == want_x and n("-i", deep[0], "-i", dflt[0]) == \
        want_x + want_d
    assert n("--session", "default", deep[0], dflt[0]) == want_d
    # only other sessions' files: an error that names them
    only = os.path.join(_work, "sessions-deep")
    os.makedirs(only)
    shutil.copy2(deep[0], only)
    shutil.copy2(deep[0] + ".json", only)
    p = flame("-q", "-f", "-", only, check=False)
    assert p.returncode == 1 and "none of the 1 trace files is of session " \
        "default: they are of deep (--session NAME, or --session all)" in \
        p.stderr, p.stderr


def test_empty_filter_is_an_error():
    """Filters that keep nothing are exit 1 with a message of the same
    kind as an empty range's, and no file (it wrote an empty graph and
    exited 0); a --comm longer than the kernel keeps says how it is cut;
    --help and the man page say it."""
    path = recording()
    svg = os.path.join(_work, "nothing.svg")
    total = len(perf_times(path))
    p = flame("-q", "--comm", "nosuchcommand", "-o", svg, path, check=False)
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert "none of the %d samples of the 1 trace files read matches the " \
        "filters (comm nosuchcommand)" % total in p.stderr, p.stderr
    assert not os.path.exists(svg)
    p = flame("-q", "--comm", "flametarget", "--pid", "1", "--kernel-only",
              "-f", "-", path, check=False)
    assert p.returncode == 1 and p.stdout == "" and \
        "(comm flametarget, pid 1, kernel frames)" in p.stderr, p.stderr
    # the range's message, for comparison
    p = flame("-q", "-f", "-", "--from", "@1", "--to", "@2", path,
              check=False)
    assert p.returncode == 1 and "none of the 1 trace files has samples " \
        "from" in p.stderr, p.stderr
    # a name the kernel cut: the hint gives the form that matches
    p = flame("-q", "--comm", "flametarget-and-more", "-f", "-", path,
              check=False)
    assert p.returncode == 1 and "--comm flametarget-and" in p.stderr and \
        "first 15 characters" in p.stderr, p.stderr
    helptext = " ".join(flame("--help").stdout.split())
    assert "first 15 characters" in helptext, helptext
    page = " ".join(open(os.path.join(
        SRC, "man", "perfspill-flame.1.in")).read().split())
    assert "its first 15 characters" in page
    # per host: a host the filters leave empty gets no file, the others
    # theirs; none at all is the error
    fleet = ship("fleet-filter", (("alpha", path), ("beta", path)))
    out = os.path.join(_work, "fleet-filter-out")
    os.makedirs(out)
    p = flame("-q", "--host", "alpha", "--per-host", "-f",
              os.path.join(out, "%h.folded"), fleet)
    assert os.listdir(out) == ["alpha.folded"], os.listdir(out)
    assert "beta: none of the" in p.stderr, p.stderr


def test_denied_directory_names_its_group():
    """A user who may not read the output directory (0750, as perfspilld
    keeps it) is told which group reads it (it said "Permission denied"
    alone); as a member of that group the same command reads it."""
    import grp
    import pwd
    src = recording()
    gid = harness.handoff_user().pw_gid
    group = grp.getgrgid(gid).gr_name
    nobody = pwd.getpwnam("nobody")
    store = tempfile.mkdtemp(prefix="perfspill-flame-denied-")
    try:
        os.chmod(store, 0o755)
        out = os.path.join(store, "out")
        os.makedirs(out)
        dst = os.path.join(out, os.path.basename(src))
        shutil.copy2(src, dst)
        shutil.copy2(src + ".json", dst + ".json")
        for f in (dst, dst + ".json"):
            os.chown(f, 0, gid)
            os.chmod(f, 0o640)
        os.chown(out, 0, gid)
        os.chmod(out, 0o750)

        def run(groups, *args):
            return subprocess.run(
                ["setpriv", "--reuid", str(nobody.pw_uid), "--regid",
                 str(nobody.pw_gid)] + groups + [FLAME, "-q",
                                                 "--no-companion", "-f", "-"]
                + list(args), capture_output=True, text=True, timeout=300,
                env=dict(os.environ, HOME="/nonexistent"))
        for what in (out, dst):
            p = run(["--clear-groups"], what)
            assert p.returncode == 1, (p.returncode, p.stderr)
            assert "Permission denied" in p.stderr and \
                "the group %s" % group in p.stderr and out in p.stderr, \
                p.stderr
        p = run(["--groups=%d" % gid], out)
        assert p.returncode == 0, p.stderr
        assert sum(folded(p.stdout).values()) == len(perf_times(src))
    finally:
        shutil.rmtree(store, ignore_errors=True)


if __name__ == "__main__":
    harness.main(globals())
