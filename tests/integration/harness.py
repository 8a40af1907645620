"""Shared pieces of the integration tests: a private perfspilld on its own
socket and output directory, the real perfspillctl, and the stock perf as
the oracle for trace files.

Each test file defines test_* functions and ends with harness.main(); a
test raises Skip(reason) when the machine cannot run it (the reason is
printed). The closing line is 'N passed, N failed, N skipped'.
"""
import atexit
import collections
import contextlib
import datetime
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request

BUILD = os.environ.get("PERFSPILL_BUILD", os.path.join(
    os.path.dirname(__file__), "..", "..", "build"))
PERFSPILLD = os.path.join(BUILD, "perfspilld")
PERFSPILLCTL = os.path.join(BUILD, "perfspillctl")
SPINNER = os.path.join(BUILD, "tests", "spinner")


def _sanitized():
    """Whether BUILD is the AddressSanitizer build (meson's record of its
    options): tests that repeat a recording to catch a race repeat it
    fewer times there, where it is memory errors that are looked for."""
    try:
        with open(os.path.join(BUILD, "meson-info",
                               "intro-buildoptions.json")) as f:
            opts = json.load(f)
    except (OSError, ValueError):
        return False
    return any(o.get("name") == "b_sanitize" and o.get("value") not in
               ("none", "", [], None) for o in opts)


SANITIZED = _sanitized()


class Skip(Exception):
    pass


def ensure_tracefs():
    if os.path.isdir("/sys/kernel/tracing/events"):
        return
    subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"],
                   check=False, stderr=subprocess.DEVNULL)


def need_tp():
    """The syscall tracepoint: a load whose rate the test sets."""
    ensure_tracefs()
    if not os.path.isdir("/sys/kernel/tracing/events/raw_syscalls"):
        raise Skip("no raw_syscalls tracepoints on this machine")


def syscalls(n, wrapper=()):
    """About 2n cheap syscalls: dd copies one byte at a time (run through
    wrapper, such as Cgroups.wrapper's)."""
    subprocess.run(list(wrapper) + ["dd", "if=/dev/zero", "of=/dev/null",
                                    "bs=1", "count=%d" % n],
                   stderr=subprocess.DEVNULL, check=True)


HANDOFF_USER = "perfspill-handoff"


def handoff_user():
    """The user on_finish programs run as (on_finish_user's default), made
    as the package makes it when this machine does not have it yet."""
    import pwd
    try:
        return pwd.getpwnam(HANDOFF_USER)
    except KeyError:
        pass
    conf = os.path.abspath(os.path.join(os.path.dirname(__file__), "..",
                                        "..", "units",
                                        "perfspill.sysusers.conf"))
    subprocess.run(["systemd-sysusers", conf], check=True,
                   capture_output=True)
    return pwd.getpwnam(HANDOFF_USER)


def wait_for(pred, timeout=20.0, what="condition"):
    """Poll pred until true; a generous bound, never a performance claim."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def workdir(prefix):
    """A test module's own temporary directory, removed when the run
    ends, whoever imported the module (KEEP=1 keeps it for a look): a
    module's files left in /tmp by every run grow the directory, and a
    cold first read of a large /tmp costs a daemon's JIT scan a wait a
    block."""
    path = tempfile.mkdtemp(prefix=prefix)
    if not os.environ.get("KEEP"):
        atexit.register(shutil.rmtree, path, True)
    return path


class Daemon:
    def __init__(self, config=None, extra_args=(), env=None, outdir=None,
                 start=True, wrapper=()):
        self.dir = tempfile.mkdtemp(prefix="perfspill-test-")
        self.sock = os.path.join(self.dir, "control.sock")
        self.out = outdir or os.path.join(self.dir, "out")
        self.log = os.path.join(self.dir, "daemon.log")
        self.config = None
        if config is not None:
            self.config = os.path.join(self.dir, "perfspilld.json")
            with open(self.config, "w") as f:
                json.dump(config, f) if not isinstance(config, str) \
                    else f.write(config)
        self.extra = list(extra_args)
        self.wrapper = list(wrapper)
        self.env = env
        self.proc = None
        if start:
            self.start()

    def argv(self):
        a = self.wrapper + [PERFSPILLD, "-f", "--socket", self.sock,
                            "--output-dir", self.out]
        if self.config:
            a += ["-c", self.config]
        else:
            # never pick up a config installed on this machine
            a += ["-c", os.path.join(os.path.dirname(__file__), "empty.json")]
        return a + self.extra

    def leftovers(self):
        """What the daemon salvages at start: .partial files and finished
        files without their manifest."""
        if not os.path.isdir(self.out):
            return []
        names = os.listdir(self.out)
        return [f for f in names if (f.startswith("perfspill-") and
                                     f.endswith(".data.partial")) or
                (f.endswith(".data") and f + ".json" not in names)]

    def start(self, salvaged=True):
        """Start perfspilld; with leftovers in the output directory and
        salvaged, wait until status says their salvage is done (salvage
        runs on a worker while the socket answers)."""
        env = dict(os.environ)
        env.pop("NOTIFY_SOCKET", None)
        if self.env:
            env.update(self.env)
        leftovers = self.leftovers()
        self.logf = open(self.log, "ab")
        self.proc = subprocess.Popen(self.argv(), stdout=self.logf,
                                     stderr=subprocess.STDOUT, env=env)
        # the socket's name exists from bind(), before listen(): wait
        # until it takes a connection, or a client may be refused
        wait_for(lambda: self.listening() or self.proc.poll() is not None,
                 what="the control socket")
        if self.proc.poll() is not None:
            raise AssertionError("perfspilld exited at start:\n" +
                                 self.read_log())
        if leftovers and salvaged:
            wait_for(lambda: self.status().get("salvaging") == 0, 300,
                     what="the salvage of %s" % leftovers)

    def listening(self):
        """Is our socket in listen state? Read from /proc/net/unix rather
        than by connecting, which would be one client more for the
        daemon to count."""
        with open("/proc/net/unix") as f:
            for line in f:
                p = line.split()
                # Num RefCount Protocol Flags Type St Inode Path
                if len(p) >= 8 and p[7] == self.sock and \
                        int(p[3], 16) & 0x10000:    # __SO_ACCEPTCON
                    return True
        return False

    def read_log(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def ctl(self, *args, check=True, timeout=120, user=None):
        """Run perfspillctl --json ARGS; return (exit code, reply)."""
        argv = [PERFSPILLCTL, "-s", self.sock, "--json"] + list(args)
        if user:
            argv = ["setpriv", "--reuid", user[0], "--regid", user[1],
                    "--clear-groups" if len(user) < 3 else
                    "--groups=" + user[2]] + argv
        p = subprocess.run(argv, capture_output=True, text=True,
                           timeout=timeout)
        reply = None
        if p.stdout.strip():
            reply = json.loads(p.stdout.strip().splitlines()[-1])
        if check and p.returncode != 0:
            raise AssertionError("perfspillctl %s failed (%d): %s %s" % (
                " ".join(args), p.returncode, p.stdout, p.stderr))
        return p.returncode, reply

    def status(self):
        return self.ctl("status")[1]["data"]

    def raw(self, data, read=True, timeout=10):
        """Send raw bytes on a fresh connection; return the reply line(s)."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(self.sock)
        try:
            s.sendall(data)
        except BrokenPipeError:
            # answered and closed before we spoke (busy): the answer
            # is still there to read
            pass
        buf = b""
        if read:
            while not buf.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        s.close()
        return buf

    def request(self, obj):
        line = self.raw((json.dumps(obj) + "\n").encode())
        return json.loads(line)

    def finished_files(self):
        if not os.path.isdir(self.out):
            return []
        return sorted(os.path.join(self.out, f) for f in os.listdir(self.out)
                      if f.endswith(".data"))

    def stop_daemon(self, sig=signal.SIGTERM, timeout=60):
        if self.alive():
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("perfspilld did not exit on signal %d" %
                                     sig)
        return self.proc.returncode

    def cleanup(self):
        """Stops the daemon and removes its directory. Returns the error
        of a daemon that did not exit on SIGTERM within a minute (it was
        killed), or None."""
        err = None
        try:
            self.stop_daemon(signal.SIGKILL if not self.alive() else
                             signal.SIGTERM)
        except AssertionError as e:
            err = e
        shutil.rmtree(self.dir, ignore_errors=True)
        return err

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is not None:
            # its head and its end: a log of many rotations would push
            # the traceback out of what a CI excerpt shows
            lines = self.read_log().splitlines(True)
            if len(lines) > 60:
                lines = lines[:10] + ["[... %d lines ...]\n" % (
                    len(lines) - 50)] + lines[-40:]
            sys.stderr.write("--- daemon log ---\n" + "".join(lines))
        err = self.cleanup()
        # a daemon that hangs at SIGTERM is a failure of the test that
        # made it so (systemd would kill it, and its last file with it)
        if err is not None and exc[0] is None:
            raise err


class Receiver:
    """An HTTP server on 127.0.0.1 storing each PUT under root; the first
    `fail` requests are answered 500, and every one while the file
    fail_while exists."""

    def __init__(self, root, fail=0, fail_while=None, port=0):
        self.root = root
        self.fail = fail
        self.fail_while = fail_while
        self.puts = []
        rcv = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_PUT(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = b""
                while len(body) < n:
                    chunk = self.rfile.read(n - len(body))
                    if not chunk:
                        break
                    body += chunk
                if rcv.fail > 0 or (rcv.fail_while and
                                    os.path.exists(rcv.fail_while)):
                    rcv.fail = max(rcv.fail - 1, 0)
                    self.send_response(500)
                    self.end_headers()
                    return
                path = os.path.join(rcv.root, self.path.lstrip("/"))
                assert ".." not in self.path
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(body)
                rcv.puts.append(self.path)
                self.send_response(201)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", port),
                                                   H)
        self.url = "http://127.0.0.1:%d/up" % self.srv.server_address[1]
        self.th = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.th.start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def need_debuginfod():
    if shutil.which("debuginfod") is None:
        raise Skip("debuginfod not installed (Debian package debuginfod)")


@contextlib.contextmanager
def debuginfod(srv, work):
    """A debuginfod on 127.0.0.1 serving the files under srv (its
    database in work), once it has scanned one: its URL."""
    need_debuginfod()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen(["debuginfod", "-p", str(port), "-d",
                          os.path.join(work, "db.sqlite"), "-F", srv],
                         stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % port

    def scanned():
        try:
            with urllib.request.urlopen(url + "/metrics", timeout=2) as r:
                text = r.read().decode()
        except OSError:
            return False
        return re.search(r'scanned_files_total\{source="file"\} [1-9]',
                         text) is not None
    try:
        wait_for(scanned, 60, "debuginfod's scan")
        yield url
    finally:
        p.terminate()
        p.wait()


def assert_received(files, where):
    """Every file and its manifest arrived in where, byte for byte."""
    for path in files:
        name = os.path.basename(path)
        for ext in ("", ".json"):
            with open(path + ext, "rb") as a, \
                    open(os.path.join(where, name + ext), "rb") as b:
                assert a.read() == b.read(), name + ext


# perf opens /tmp/perf-PID.map, by that literal name (TMPDIR is not
# asked, no option turns it off: tools/perf/util/map.c and symbol.c), for
# every sampled process with anonymous executable memory; a system-wide
# file samples other users' processes, and another user's FIFO there
# made perf script wait 300 s (issue 40). So perf runs in a mount
# namespace of its own whose /tmp is a private tmpfs holding every entry
# of the real one (bind mounts: what perf writes lands there) but the
# perf-PID.map files, save those a test names (a JIT's map it made); and
# in a pid namespace of its own with its own /proc, where no sampled
# process is found alive: perf enters a live process's mount namespace
# to read its files (util/namespaces.c), which would be the real /tmp.
_PRIVATE_TMP = r"""
import ctypes, os, re, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
MS_BIND, MS_REC = 4096, 16384
keep = set(os.environ.pop("PERFSPILL_TMP_KEEP", "").split())
real = os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY)
if libc.mount(b"perfspill-private-tmp", b"/tmp", b"tmpfs", 0,
              b"mode=1777,size=256m") != 0:
    sys.exit("private /tmp: mount: " + os.strerror(ctypes.get_errno()))
for name in os.listdir(real):
    if re.fullmatch(r"perf-\d+\.map", name) and name not in keep:
        continue
    src, dst = "/proc/self/fd/%d/%s" % (real, name), "/tmp/" + name
    try:
        st = os.lstat(src)
        if stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(src), dst)
            continue
        if stat.S_ISDIR(st.st_mode):
            os.mkdir(dst)
        else:
            open(dst, "w").close()
    except OSError:
        continue        # gone meanwhile
    libc.mount(src.encode(), dst.encode(), None, MS_BIND | MS_REC, None)
os.close(real)
os.execvp("perf", ["perf"] + sys.argv[1:])
"""


def perf_argv(args, tmp=()):
    """argv and environment additions that run perf with a private /tmp
    (above); tmp: the perf-PID.map names it may read."""
    if shutil.which("unshare") is None:
        return ["perf"] + list(args), {}
    return (["unshare", "--mount", "--propagation", "private", "--pid",
             "--fork", "--mount-proc", "--kill-child",
             sys.executable, "-I", "-S", "-c", _PRIVATE_TMP] + list(args),
            {"PERFSPILL_TMP_KEEP": " ".join(tmp)})


def perf(*args, check=True, env=None, tmp=()):
    """Run the stock perf (with a private /tmp: perf_argv); fail on a
    non-zero exit. tmp: the perf-PID.map names in /tmp perf may read."""
    argv, extra = perf_argv(args, tmp)
    e = dict(os.environ)
    e.update(env or {})
    e.update(extra)
    # a system-wide file names other users' processes: their names may
    # be any bytes (a test of another suite makes such names on purpose)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300,
                       env=e, errors="replace")
    if check and p.returncode != 0:
        raise AssertionError("perf %s failed (%d): %s" % (
            " ".join(args), p.returncode, p.stderr[-2000:]))
    return p


def report_of_pid(path, pid, *args):
    """The lines of `perf report --stdio --sort pid,sym ARGS` that are
    PID's, with the pid column taken out: "  12.50%  [.] name" (two
    percentages with --children). perf report's --pid and --comm filter
    the entries after merging them by the sort keys, so an entry of a
    name that another process has too (main, a libc function) keeps the
    pid of whichever came first and may be dropped from PID's report;
    with the pid a sort key nothing is merged across processes, and
    --pid then keeps what it should (and spares perf the others'
    unwinding)."""
    out = perf("report", "-i", path, "--stdio", "--pid", str(pid),
               "--sort", "pid,sym", *args).stdout
    keep = []
    for line in out.splitlines():
        m = re.match(r"^(\s+[\d.]+%(?:\s+[\d.]+%)?)\s+(\d+):\S*\s+"
                     r"(\[.\].*)$", line)
        if m and int(m.group(2)) == int(pid):
            keep.append(m.group(1) + "  " + m.group(3))
    return "\n".join(keep)


def _parse_stats(text):
    counts = {}
    seen_header = False
    for line in text.splitlines():
        line = line.strip()
        if line.endswith("stats:"):
            if seen_header:
                break       # per-event sections follow the totals
            seen_header = True
            continue
        if seen_header and " events:" in line:
            name, rest = line.split(" events:", 1)
            counts[name.strip()] = int(rest.split()[0])
    return counts


def perf_stats(path):
    """Counts of each record type as perf sees them: perf report --stats.

    perf 6.1's --stats fails on pipe-format files holding tracepoint
    samples or compressed records, perf record's own included ("failed to
    process type", "Couldn't decompress data"); perf report -D reads them
    and ends with the same totals, so for those it is the oracle. Our
    perf.data files need no fallback (test_readers.py checks that)."""
    p = perf("report", "--stats", "-i", path, check=False)
    if p.returncode == 0 and "failed to process" not in p.stderr:
        return _parse_stats(p.stdout), p.stderr
    d = perf("report", "-D", "-i", path)
    tail = d.stdout[d.stdout.rfind("Aggregated stats:"):]
    return _parse_stats(tail), d.stderr


LOST_LINES = ("Warning:", "lost", "Check IO/CPU overload")


def assert_perf_clean(stderr, what, allow_lost=False):
    """perf must not complain. With allow_lost, its note that the file
    holds LOST records is accepted: that is loss counted, not hidden."""
    bad = []
    lines = stderr.splitlines()
    for i, l in enumerate(lines):
        low = l.lower()
        if not ("warning" in low or "error" in low or "failed" in low or
                "corrupt" in low or "lost" in low):
            continue
        if allow_lost and (l.strip() == "Warning:" or
                           ("Processed" in l and "lost" in l)):
            continue
        # perf prints a bare "Warning:" and its message on the next line
        if l.strip() == "Warning:" and i + 1 < len(lines):
            l += " " + lines[i + 1].strip()
        bad.append(l)
    assert not bad, "%s: perf complained: %s" % (what, bad)


def perf_valid(path, allow_lost=False):
    """Every finished file must be read by perf report and perf script
    without complaint. Returns the SAMPLE count."""
    counts, err = perf_stats(path)
    assert_perf_clean(err, "perf report --stats -i " + path, allow_lost)
    if not allow_lost:
        assert counts.get("LOST", 0) == 0, (path, counts)
    p = perf("script", "-i", path)
    assert_perf_clean(p.stderr, "perf script -i " + path, allow_lost)
    return counts.get("SAMPLE", 0)


def spinner(secs):
    return subprocess.Popen([SPINNER, str(secs)], stdout=subprocess.PIPE)


def flame(*args, env=None, check=True, timeout=300):
    """Run perfspill-flame; fail on a non-zero exit when check. Its
    output is read with surrogateescape: a whole-machine recording holds
    the names other programs gave themselves, which need not be UTF-8
    (names are data: perfspill-flame passes them on as they are)."""
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([os.path.join(BUILD, "perfspill-flame")] +
                       list(args), capture_output=True, text=True, env=e,
                       errors="surrogateescape", timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("perfspill-flame %s failed (%d): %s" % (
            " ".join(args), p.returncode, p.stderr))
    return p


def folded(text):
    """{stack: count} of folded lines."""
    c = collections.Counter()
    for line in text.splitlines():
        stack, n = line.rsplit(" ", 1)
        c[stack] += int(n)
    return c


def manifest(path):
    """The manifest NAME.data.json of a trace file."""
    with open(path + ".json") as f:
        return json.load(f)


def utc_ns(s):
    """'2026-12-03T17:08:49.495407072Z' to ns since the epoch."""
    secs, frac = s.rstrip("Z").split(".")
    t = datetime.datetime.strptime(secs, "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 10**9 + int(frac.ljust(9, "0"))


def iso(ns):
    """ns since the epoch to the UTC time perfspill-flame takes."""
    t = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % (ns % 10**9)


def main(glob):
    ensure_tracefs()
    tests = [(n, f) for n, f in sorted(glob.items())
             if n.startswith("test_") and callable(f)]
    only = sys.argv[1:]
    passed = failed = skipped = 0
    for name, fn in tests:
        if only and name not in only:
            continue
        t0 = time.monotonic()
        try:
            fn()
        except Skip as e:
            skipped += 1
            print("SKIP %s: %s" % (name, e), flush=True)
            continue
        except Exception:
            failed += 1
            # the reason on the FAIL line itself: a CI excerpt may cut
            # the traceback, which comes after a long daemon log
            why = " ".join(traceback.format_exception_only(
                *sys.exc_info()[:2])).strip().replace("\n", " ")
            print("FAIL %s: %s" % (name, why[:600]), flush=True)
            traceback.print_exc()
            continue
        passed += 1
        print("ok   %s (%.1fs)" % (name, time.monotonic() - t0), flush=True)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    sys.exit(1 if failed else 0)
