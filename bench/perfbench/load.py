"""The loads: a Load is a fixed batch of work run and timed in a process
group of its own; load_defs() builds bench/run's loads and experiments()
the comparisons each is recorded in (event, ring, cblocks / --aio)."""
import os
import signal
import subprocess
import tempfile

from .common import BENCH, DIRTY_LOAD_BYTES, MAX_CPU_CLOCK_HZ, rusage_cpu
from .recorder import Spec


class Load:
    """A fixed batch of work; run() returns (wall seconds, CPU seconds).
    events_fn(batch), when given, is how many events of the recorded kind
    the batch makes itself (the storm's system calls): the count a
    recorder's loss is set against. last_pid: the pid of the last run,
    whose samples the files are searched for."""
    own_session = False

    def __init__(self, key, title, argv_fn, unit, target_s, events_fn=None):
        self.key = key
        self.title = title
        self.argv_fn = argv_fn
        self.unit = unit
        self.target_s = target_s
        self.events_fn = events_fn
        self.batch = None
        self.last_pid = None

    def events(self, batch=None):
        if self.events_fn is None:
            return None
        return self.events_fn(self.batch if batch is None else batch)

    def argv(self, batch=None):
        return self.argv_fn(self.batch if batch is None else batch)

    def run(self, batch=None):
        with tempfile.TemporaryFile() as errf:
            # its own process group, so that an interrupted benchmark ends
            # the load and every process it started; but the recorders'
            # session: a session of its own is an autogroup of its own for
            # the scheduler, and then (kernel.sched_autogroup_enabled=1)
            # the recorders are woken late (see --load-session)
            kw = {"start_new_session": True} if Load.own_session else \
                {"process_group": 0}
            p = subprocess.Popen(self.argv(batch), stdout=subprocess.PIPE,
                                 stderr=errf, **kw)
            self.last_pid = p.pid
            try:
                out = p.stdout.read().decode()
                p.stdout.close()
                # wait4: the load's CPU time, its waited-for children too
                _, status, ru = os.wait4(p.pid, 0)
            except BaseException:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
                raise
            p.returncode = os.waitstatus_to_exitcode(status)
            if p.returncode != 0:
                errf.seek(0)
                raise RuntimeError("load %s failed (%d): %s" % (
                    self.key, p.returncode,
                    errf.read().decode(errors="replace").strip()[-500:]))
        return float(out.strip().splitlines()[-1]), rusage_cpu(ru)

    def calibrate(self, small):
        """Scale the batch so that one unprofiled run takes target_s: the
        fastest of three timed runs, so that a moment of noise from other
        users of the machine does not shrink the batch."""
        self.run(small)                 # warm caches, page in
        t = min(self.run(small)[0] for _ in range(3))
        scale = self.target_s / max(t, 1e-3)
        self.batch = max(1, int(round(small * scale)))
        return self.batch


def load_defs(args, b, workdir):
    srcs = [os.path.join(BENCH, "loads", f) for f in
            ("storm.c", "pingpong.c", "cpu.c", "mixed.c")]
    mixdir = os.path.join(workdir, "mixed-out")
    os.makedirs(mixdir, exist_ok=True)
    q = args.quick
    storm = Load("storm", "syscall storm",
                 lambda n: [b["storm"], "2", str(n)], "calls per thread",
                 1.0 if q else 2.5)
    sched = Load("sched", "pipe ping-pong",
                 lambda n: [b["pingpong"], "2", str(n)],
                 "round trips per pair", 1.0 if q else 2.5)
    cpu = Load("cpu", "CPU-bound",
               lambda n: [b["cpu"], "2", str(n)], "work units per thread",
               1.5 if q else 4.0)
    mixed = Load("mixed", "compiles + slow ping-pong",
                 lambda n: [b["mixed"], "gcc", mixdir, str(n), "200"] + srcs,
                 "compile rounds (4 files each)",
                 args.always_on_secs or (8.0 if q else 30.0))
    sweep = Load("sweep", "syscall storm (sweep)",
                 lambda n: [b["storm"], "2", str(n)], "calls per thread",
                 0.6 if q else 1.0)
    return {"storm": storm, "sched": sched, "cpu": cpu, "mixed": mixed,
            "sweep": sweep}


def experiments(args, bench):
    """The comparisons: (key, title, load key, Spec, N for cblocks/--aio)."""
    n = args.cblocks
    sh = bench.shipped
    cpu_hz = min(args.cpu_freq, MAX_CPU_CLOCK_HZ)
    z = args.compression_level
    dirty = args.dirty_pressure or DIRTY_LOAD_BYTES
    return [
        ("storm", "syscall storm, default ring (128 pages = 512 KiB)",
         "storm", Spec("raw_syscalls:sys_enter", pages=128, cblocks=n,
                       self_events=True), n),
        ("storm-m64", "syscall storm, 256 KiB ring (-m 64)", "storm",
         Spec("raw_syscalls:sys_enter", pages=64, cblocks=n,
              self_events=True), n),
        ("sched", "sched_switch, two ping-pong pairs", "sched",
         Spec("sched:sched_switch", pages=128, cblocks=n), n),
        ("cpu", "CPU-bound, cpu-clock %d Hz with callchains" % cpu_hz, "cpu",
         Spec("cpu-clock", freq=cpu_hz, callgraph=True, pages=128,
              cblocks=n), n),
        ("always-on", "always-on default (conf/perfspilld.json) on a "
         "mixed load", "mixed",
         Spec(",".join(sh["events"]), freq=sh.get("freq"),
              callgraph=sh.get("callgraph", False),
              pages=sh["mmap_pages"], cblocks=sh["cblocks"], shipped=True),
         sh["cblocks"]),
        # the same storms with both recorders at SCHED_FIFO 1 (perf -r 1,
        # perfspilld realtime 1): a late wakeup is what loses events here
        ("storm-rt", "syscall storm, default ring, both at SCHED_FIFO 1",
         "storm", Spec("raw_syscalls:sys_enter", pages=128, cblocks=n,
                       self_events=True, realtime=1), n),
        ("storm-m64-rt", "syscall storm, 256 KiB ring, both at SCHED_FIFO 1",
         "storm", Spec("raw_syscalls:sys_enter", pages=64, cblocks=n,
                       self_events=True, realtime=1), n),
        # the same loads compressed: the ratio is set against the
        # uncompressed experiment of the same load in the same run
        ("storm-z", "syscall storm, default ring, zstd -z %d" % z, "storm",
         Spec("raw_syscalls:sys_enter", pages=128, cblocks=n,
              compress=z), n),
        ("sched-z", "sched_switch, two ping-pong pairs, zstd -z %d" % z,
         "sched", Spec("sched:sched_switch", pages=128, cblocks=n,
                       compress=z), n),
        ("cpu-z", "CPU-bound, cpu-clock %d Hz with callchains, zstd -z %d" % (
            cpu_hz, z), "cpu",
         Spec("cpu-clock", freq=cpu_hz, callgraph=True, pages=128,
              cblocks=n, compress=z), n),
        # the storm again while another writer fills the page cache with
        # dirty pages of the same disk: set against "storm" of the same run
        ("storm-dirty", "syscall storm, default ring, under %g GiB of "
         "another writer's dirty pages" % (dirty / 2**30), "storm",
         Spec("raw_syscalls:sys_enter", pages=128, cblocks=n,
              pressure=dirty), n),
    ]
