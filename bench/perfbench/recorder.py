"""Running a recorder on a load: a Spec says what to record, Bench runs
perfspilld (a fresh daemon through perfspillctl) or perf record around
one run of a load, after the wait for a quiet machine, with the slow
storage, dirty pressure and status probe the options ask for."""
import errno
import json
import os
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

from .common import NPROC, ROOT, kill_pid, log, run, rusage_cpu
from .count import analyse, check_write_path, find_key
from .sample import (meminfo_bytes, other_recorders, page_cache, proc_cpu,
                     proc_status_kb, sys_cpu)


class Spec:
    """What to record: the same settings for both recorders."""

    def __init__(self, event, freq=None, callgraph=False, pages=128,
                 cblocks=4, self_events=False, shipped=False, compress=0,
                 realtime=0, pressure=None, shipped_daemon=False,
                 perf_callgraph=None, psd_callgraph=None):
        self.event = event
        # perfspilld's --call-graph MODE at the start (None: as the
        # config says): the shipped config's compact stacks, or "fp" to
        # set it against perf -g like for like
        self.psd_callgraph = psd_callgraph
        # perf's call graph when callgraph is set: None is -g (frame
        # pointers), "dwarf" is --call-graph dwarf (perfspilld's compact
        # config records the same DWARF stacks)
        self.perf_callgraph = perf_callgraph
        # perfspilld: the daemon runs the shipped config (its rotation
        # included), the start still gives the settings above
        self.shipped_daemon = shipped or shipped_daemon
        # bytes another process writes to the same disk while recording
        # (None: --dirty-pressure's, if given)
        self.pressure = pressure
        self.compress = compress    # zstd level, 0: off
        self.realtime = realtime    # SCHED_FIFO priority, 0: off
        self.freq = freq
        self.callgraph = callgraph
        self.pages = pages
        self.cblocks = cblocks
        self.self_events = self_events
        self.shipped = shipped  # perfspilld: the shipped config as is

    def perf_args(self, aio):
        a = ["-a", "-B"]
        if aio == "threads":
            # one writer thread per CPU, a data file each (perf 5.17+)
            a.append("--threads")
        elif aio:
            a.append("--aio=%d" % aio)
        a += ["-m", str(self.pages), "-e", self.event]
        if self.freq:
            a += ["-F", str(self.freq)]
        if self.callgraph and self.perf_callgraph:
            a += ["--call-graph", self.perf_callgraph]
        elif self.callgraph:
            a.append("-g")
        if self.compress:
            # perf's -z takes its level only attached (-z1): a separate
            # "-z 1" makes "1" the workload
            a.append("--compression-level=%d" % self.compress)
        if self.realtime:
            a += ["-r", str(self.realtime)]
        return a

    def psd_args(self, cblocks):
        if self.shipped:
            # the config file says it all, but for the stacks asked
            return ["--call-graph", self.psd_callgraph] \
                if self.psd_callgraph else []
        a = ["-e", self.event, "-m", str(self.pages), "--cblocks",
             str(cblocks)]
        if self.freq:
            a += ["-F", str(self.freq)]
        a.append("-g" if self.callgraph else "--no-callgraph")
        if self.callgraph and self.psd_callgraph:
            a += ["--call-graph", self.psd_callgraph]
        if self.compress:
            a += ["-z", str(self.compress)]
        if self.realtime:
            a += ["-r", str(self.realtime)]
        return a

    def describe(self):
        s = "%s, %s, ring %d pages (%d KiB) per CPU" % (
            self.event, "%d Hz" % self.freq if self.freq else "every hit",
            self.pages, self.pages * 4)
        s += ", callchains (-g)" if self.callgraph else ", no callchains"
        if self.realtime:
            s += ", SCHED_FIFO %d (-r)" % self.realtime
        if self.compress:
            s += ", zstd level %d" % self.compress
        if self.pressure:
            s += "; meanwhile dd writes %g GiB to the same disk" % (
                self.pressure / 2**30)
        return s


class SlowStorage:
    """bench/tools/slowfs mounted in the work directory: the trace files of
    both recorders go through a device of --slow-storage bandwidth and
    per-write latency."""

    def __init__(self, args, binaries, workdir):
        self.back = os.path.join(workdir, "slow-backing")
        self.mnt = os.path.join(workdir, "slow")
        os.mkdir(self.back)
        os.mkdir(self.mnt)
        bw, lat = args.slow_storage
        self.proc = subprocess.Popen(
            [binaries["slowfs"], self.back, self.mnt, "-f", "-o",
             "bw=%d,lat_us=%d,max_threads=16" % (bw, lat)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        end = time.monotonic() + 10
        while not os.path.ismount(self.mnt):
            if self.proc.poll() is not None or time.monotonic() > end:
                sys.exit("bench: slowfs did not mount: " +
                         self.proc.stderr.read().decode()[-400:])
            time.sleep(0.05)
        log("slow storage: %s (%.0f MB/s, %d us a write)" % (
            self.mnt, bw / 1e6, lat))

    def close(self):
        """Unmounted at the end of every run, failed or not: a file still
        open (a recorder killed mid-run) makes a plain unmount fail, so
        then a lazy one, which detaches it at once."""
        if run(["fusermount3", "-u", self.mnt]).returncode != 0:
            run(["fusermount3", "-u", "-z", self.mnt])
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            kill_pid(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if os.path.ismount(self.mnt):
            run(["umount", "-l", self.mnt])


class StatusProbe:
    """Asks perfspilld for its status every 0.2 s on a connection of its
    own while the load runs: is the daemon responsive when the disk is
    not? Records the slowest and the median answer."""

    def __init__(self, sock):
        import threading
        self.sock = sock
        self.times = []
        self.errors = 0
        self.paths = set()      # "write_path" values status reported
        self.done = threading.Event()
        self.th = threading.Thread(target=self.loop, daemon=True)
        self.th.start()

    def ask(self):
        t = time.monotonic()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
            c.settimeout(10)
            c.connect(self.sock)
            c.sendall(b'{"v":1,"cmd":"status"}\n')
            got = b""
            while not got.endswith(b"\n"):
                chunk = c.recv(65536)
                if not chunk:
                    break
                got += chunk
        if not got.endswith(b"\n"):
            raise OSError("no reply")
        dt = time.monotonic() - t
        try:
            self.paths.update(find_key(json.loads(got), "write_path"))
        except ValueError:
            pass
        return dt

    def loop(self):
        while not self.done.wait(0.2):
            try:
                self.times.append(self.ask())
            except OSError:
                self.errors += 1

    def stop(self):
        self.done.set()
        self.th.join()
        paths = {"write_path_seen": sorted(self.paths)}
        if not self.times:
            return dict(paths, status_errors=self.errors)
        return dict(paths, status_ms_max=1000 * max(self.times),
                    status_ms_median=1000 * statistics.median(self.times),
                    status_asked=len(self.times),
                    status_errors=self.errors)


class Bench:
    def __init__(self, args, binaries, workdir):
        self.args = args
        self.b = binaries
        self.work = workdir
        p = run([binaries["perfspilld"], "-n", "-c",
                 os.path.join(ROOT, "conf", "perfspilld.json")])
        if p.returncode != 0:
            sys.exit("bench: perfspilld -n -c conf/perfspilld.json failed: "
                     + p.stderr)
        self.shipped = json.loads(p.stdout)
        # issue 21's key: a daemon without it writes buffered, and only so
        self.has_direct_io = "direct_io" in self.shipped
        self.configs = {}
        self.seq = 0
        self.slow = SlowStorage(args, binaries, workdir) \
            if args.slow_storage else None
        self.pressure = None
        self.waited = 0.0
        # ask status every 0.2 s while perfspilld records (issue 16's
        # responsiveness check); off: once, after the start
        self.status_probe = True

    def config(self, shipped, write=None):
        """The config file of a run: the shipped one (always-on; its
        rotation kept, its retention off, so that nothing recorded is
        removed before it is counted) or the benchmark's (one file per
        recording, nothing removed, nothing paused), record_on_start off
        (the benchmark says when), and with write "direct" or "buffered"
        the key direct_io."""
        key = (shipped, write)
        if key not in self.configs:
            if shipped:
                cfg = dict(self.shipped)
                cfg.update(max_files=0, max_size=0, min_free=0)
            else:
                cfg = {"rotate_size": 0, "rotate_interval": 0,
                       "max_files": 0, "max_size": 0, "min_free": 0}
            cfg["record_on_start"] = False
            if write is not None:
                cfg["direct_io"] = write == "direct"
            path = os.path.join(self.work, "%s%s.json" % (
                "shipped" if shipped else "bench",
                "-" + write if write else ""))
            with open(path, "w") as f:
                json.dump(cfg, f)
            self.configs[key] = path
        return self.configs[key]

    def rundir(self):
        self.seq += 1
        d = os.path.join(self.work, "run%04d" % self.seq)
        os.mkdir(d)
        return d

    def pressure_start(self, spec):
        """--dirty-pressure (or the load's own): another process writes
        SIZE to the disk the trace files go to while the recorder records
        (page cache full of dirty pages, writeback competing with the
        recorder's)."""
        size = spec.pressure or self.args.dirty_pressure
        if not size:
            return
        where = self.slow.back if self.slow else self.work
        self.pressure = subprocess.Popen(
            ["dd", "if=/dev/zero", "of=" + os.path.join(where, "pressure"),
             "bs=1M", "count=%d" % (size >> 20)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def pressure_stop(self, res):
        """Ends the pressure and removes its file (its pages leave the
        page cache with it): right after the recording's stop, so that the
        page cache measured next is the recorder's."""
        if self.pressure is None:
            return
        res["pressure_done"] = self.pressure.poll() is not None
        kill_pid(self.pressure.pid, signal.SIGKILL)
        self.pressure.wait()
        self.pressure = None
        where = self.slow.back if self.slow else self.work
        try:
            os.unlink(os.path.join(where, "pressure"))
        except OSError:
            pass

    def close(self):
        if self.slow is not None:
            self.slow.close()

    def tracepath(self, d, name):
        """Where a run's trace output goes: beside its socket, or on the
        slow file system (which takes no sockets or fifos)."""
        if self.slow is None:
            return os.path.join(d, name)
        return os.path.join(self.slow.mnt, os.path.basename(d) + "-" + name)

    def drop_trace(self, d, name):
        p = self.tracepath(d, name)
        if os.path.isdir(p):
            shutil.rmtree(p, ignore_errors=True)
        elif os.path.exists(p):
            os.unlink(p)

    def quiet(self, mine=()):
        """Other engineers share this machine: before each run wait (a
        bounded time, and a bounded total) until it is nearly idle and no
        other perf or perfspilld runs; say how it was. Each run starts
        with no dirty pages of the one before (sync): the writeback of one
        recorder's file is never charged to the next."""
        os.sync()
        if self.args.drop_caches:
            # a clean page cache: nobody's cached pages (a previous
            # recorder's file, the pressure file) help or hinder the next
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("%d\n" % getattr(self.args, "drop_level", 1))
        budget = max(0.0, self.args.quiet_budget - self.waited)
        end = time.monotonic() + min(self.args.max_quiet_wait, budget)
        t = time.monotonic()
        while True:
            others = other_recorders(mine)
            b0 = sys_cpu()
            time.sleep(0.3)
            b1 = sys_cpu()
            busy = 100.0 * (b1[0] - b0[0]) / (0.3 * NPROC)
            if (busy <= self.args.quiet_pct and not others) or \
                    time.monotonic() >= end:
                w = max(0.0, time.monotonic() - t - 0.3)
                self.waited += w
                return {"pre_busy_pct": busy, "waited_s": w,
                        "other_recorders": others}

    # -- unprofiled
    def run_none(self, load, batch=None):
        q = self.quiet()
        b0 = sys_cpu()
        t0 = time.monotonic()
        wall, cpu = load.run(batch)
        t1 = time.monotonic()
        b1 = sys_cpu()
        res = {"recorder": "none", "load_s": wall, "load_cpu_s": cpu,
               "window_s": t1 - t0}
        res.update(q)
        self.noise(res, b0, b1, cpu, 0.0)
        return res

    def noise(self, res, b0, b1, load_cpu, rec_cpu):
        w = res["window_s"]
        other = (b1[0] - b0[0]) - load_cpu - (rec_cpu or 0.0)
        res["other_cpu_pct"] = max(0.0, 100.0 * other / (w * NPROC))
        res["steal_pct"] = 100.0 * (b1[1] - b0[1]) / (w * NPROC)

    # -- perfspilld
    def ctl(self, sock, *args, timeout=300):
        p = run([self.b["perfspillctl"], "-s", sock, "--json"] + list(args),
                timeout=timeout)
        reply = None
        if p.stdout.strip():
            reply = json.loads(p.stdout.strip().splitlines()[-1])
        if p.returncode != 0 or not reply or not reply.get("ok"):
            raise RuntimeError("perfspillctl %s: rc=%d %s %s" % (
                " ".join(args), p.returncode, p.stdout.strip()[-400:],
                p.stderr.strip()[-400:]))
        return reply["data"]

    def run_psd(self, load, spec, cblocks, batch=None, analyse_tools=True,
                daemon="perfspilld", write=None):
        """write: "direct" or "buffered" sets the config key direct_io;
        None leaves the daemon's default."""
        q = self.quiet()        # before the recorder starts: its start-up
        d = self.rundir()       # is not someone else's noise
        sock, out = os.path.join(d, "s"), self.tracepath(d, "out")
        logf = open(os.path.join(d, "daemon.log"), "wb")
        cfg = self.config(spec.shipped_daemon, write)
        env = dict(os.environ)
        env.pop("NOTIFY_SOCKET", None)
        proc = subprocess.Popen([self.b[daemon], "-f", "--socket", sock,
                                 "--output-dir", out, "-c", cfg],
                                stdout=logf, stderr=subprocess.STDOUT, env=env)
        res = {"recorder": "perfspilld", "cblocks": cblocks,
               "pages": spec.pages, "pid": proc.pid, "write": write}
        res.update(q)
        reaped = False
        try:
            end = time.monotonic() + 20
            while not os.path.exists(sock):
                if proc.poll() is not None or time.monotonic() > end:
                    raise RuntimeError("perfspilld did not come up: " +
                                       open(logf.name).read()[-800:])
                time.sleep(0.01)
            cpu_before = proc_cpu(proc.pid)
            b0 = sys_cpu()
            cached0 = meminfo_bytes("Cached")
            self.ctl(sock, "start", *spec.psd_args(cblocks))
            self.pressure_start(spec)
            if self.status_probe:
                probe = StatusProbe(sock)
            else:
                # one question, not one each 0.2 s: a run that counts the
                # daemon's wakeups and CPU is not woken by the benchmark
                st = self.ctl(sock, "status")
                res["write_path_seen"] = sorted(set(find_key(
                    st, "write_path")))
            t0 = time.monotonic()
            cpu_a = proc_cpu(proc.pid)
            wall, lcpu = load.run(batch)
            t1 = time.monotonic()
            if self.status_probe:
                res.update(probe.stop())
            cpu_b = proc_cpu(proc.pid)
            b1 = sys_cpu()
            data = self.ctl(sock, "stop")
            t2 = time.monotonic()
            cpu_after = proc_cpu(proc.pid)
            self.pressure_stop(res)
            res["vmhwm_kb"] = proc_status_kb(proc.pid, "VmHWM")
            proc.send_signal(signal.SIGTERM)
            _, status, ru = os.wait4(proc.pid, 0)
            reaped = True
            proc.returncode = os.waitstatus_to_exitcode(status)
            res.update({
                "load_s": wall, "load_cpu_s": lcpu, "window_s": t1 - t0,
                "stop_s": t2 - t1,
                "cpu_s": cpu_after - cpu_before,     # /proc, start..stop
                "steady_cpu_s": cpu_b - cpu_a,
                "lifetime_cpu_s": rusage_cpu(ru),    # wait4, whole daemon
                "maxrss_kb": ru.ru_maxrss,
                "nvcsw": ru.ru_nvcsw, "nivcsw": ru.ru_nivcsw,
                "load_pid": load.last_pid,
                "load_events": load.events(batch),
                "totals": data.get("totals"), "exit": proc.returncode})
            self.noise(res, b0, b1, lcpu, cpu_b - cpu_a)
            files = sorted(os.path.join(out, f) for f in os.listdir(out)
                           if f.endswith(".data"))
            res["files"] = len(files)
            path = data.get("path")
            if not path or not os.path.exists(path) or \
                    (len(files) != 1 and not spec.shipped_daemon):
                res["warning"] = "expected one finished file, found %s" % (
                    [os.path.basename(f) for f in files],)
            if path and os.path.exists(path):
                # the shipped config rotates: every file of the recording
                whole = files if spec.shipped_daemon and len(files) > 1 \
                    else path
                page_cache(res, cached0, whole)
                check_write_path(res)
                analyse(res, self.b, whole, proc.pid, spec.self_events,
                        analyse_tools)
            partial = [f for f in os.listdir(out) if f.endswith(".partial")]
            if partial:
                res["warning"] = "left .partial files: %s" % partial
        finally:
            if not reaped:
                kill_pid(proc.pid, signal.SIGKILL)
                proc.wait()
            logf.close()
            try:
                with open(logf.name, errors="replace") as f:
                    warn = [l.strip() for l in f if l.startswith(("<3>",
                                                                  "<4>"))
                            and "does not exist" not in l]
                if warn:
                    res["daemon_warnings"] = warn[:5]
            except OSError:
                pass
            self.pressure_stop(res)
            self.drop_trace(d, "out")
            shutil.rmtree(d, ignore_errors=True)
        return res

    # -- perf record
    def run_perf(self, load, spec, aio, batch=None, analyse_tools=True):
        q = self.quiet()
        d = self.rundir()
        ctl, ack = os.path.join(d, "ctl"), os.path.join(d, "ack")
        os.mkfifo(ctl)
        os.mkfifo(ack)
        out = self.tracepath(d, "perf.data")
        errf = open(os.path.join(d, "perf.err"), "wb")
        argv = ["perf", "record"] + spec.perf_args(aio) + [
            "-o", out, "-D", "-1", "--control", "fifo:%s,%s" % (ctl, ack)]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=errf,
                                stderr=subprocess.STDOUT)
        res = {"recorder": "perf-threads" if aio == "threads" else
               "perf-aio" if aio else "perf-serial", "aio": aio,
               "pages": spec.pages, "pid": proc.pid,
               "argv": " ".join(["perf", "record"] + spec.perf_args(aio))}
        res.update(q)
        cfd = afd = None
        reaped = False
        try:
            end = time.monotonic() + 30
            while cfd is None:
                try:
                    cfd = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
                except OSError as e:
                    if e.errno != errno.ENXIO:
                        raise
                    if proc.poll() is not None or time.monotonic() > end:
                        raise RuntimeError("perf record did not come up: " +
                                           open(errf.name).read()[-800:])
                    time.sleep(0.01)
            afd = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
            self.pressure_start(spec)
            b0 = sys_cpu()
            cached0 = meminfo_bytes("Cached")
            os.write(cfd, b"enable\n")
            got = b""
            while b"ack" not in got:
                if proc.poll() is not None or time.monotonic() > end:
                    raise RuntimeError("perf record never acknowledged "
                                       "'enable': " +
                                       open(errf.name).read()[-800:])
                r, _, _ = select.select([afd], [], [], 0.05)
                if r:
                    try:
                        chunk = os.read(afd, 64)
                    except BlockingIOError:
                        chunk = b""
                    if chunk:
                        got += chunk
                    else:
                        time.sleep(0.005)   # no writer yet
            t0 = time.monotonic()
            cpu_a = proc_cpu(proc.pid)
            wall, lcpu = load.run(batch)
            t1 = time.monotonic()
            cpu_b = proc_cpu(proc.pid)
            b1 = sys_cpu()
            if proc.returncode is not None:
                raise RuntimeError("perf record ended during the load "
                                   "(exit %d): %s" % (
                                       proc.returncode,
                                       open(errf.name).read()[-300:]))
            proc.send_signal(signal.SIGINT)
            _, status, ru = os.wait4(proc.pid, 0)
            reaped = True
            t2 = time.monotonic()
            self.pressure_stop(res)
            proc.returncode = os.waitstatus_to_exitcode(status)
            res.update({
                "load_s": wall, "load_cpu_s": lcpu, "window_s": t1 - t0,
                "stop_s": t2 - t1,
                "cpu_s": rusage_cpu(ru),             # wait4, whole perf
                "steady_cpu_s": cpu_b - cpu_a,
                "startup_cpu_s": cpu_a,
                "lifetime_cpu_s": rusage_cpu(ru),
                "nvcsw": ru.ru_nvcsw, "nivcsw": ru.ru_nivcsw,
                "load_pid": load.last_pid,
                "load_events": load.events(batch),
                "maxrss_kb": ru.ru_maxrss, "exit": proc.returncode})
            self.noise(res, b0, b1, lcpu, cpu_b - cpu_a)
            if proc.returncode not in (0, -signal.SIGINT, 130):
                res["warning"] = "perf record exited %d" % proc.returncode
            if os.path.exists(out):
                page_cache(res, cached0, out)
                analyse(res, self.b, out, proc.pid, spec.self_events,
                        analyse_tools)
            else:
                res["warning"] = "perf wrote no file: " + \
                    open(errf.name).read()[-500:]
        finally:
            for fd in (cfd, afd):
                if fd is not None:
                    os.close(fd)
            if not reaped:
                kill_pid(proc.pid, signal.SIGKILL)
                proc.wait()
            errf.close()
            self.pressure_stop(res)
            self.drop_trace(d, "perf.data")
            shutil.rmtree(d, ignore_errors=True)
        return res
