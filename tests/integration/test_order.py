"""Every sample attributed to the right task (issue 11).

perf sorts a file by rounds: at each FINISHED_ROUND it flushes what is
older than the newest event it had seen at the previous one. A round
closed while a ring still held older events makes perf see them late: a
FORK or COMM after the samples that need it, which perf then shows as
":TID", and perf warns "N out of order events recorded". The files must
give neither, for a program born after the start, for threads born
during a start or a rotation's /proc walk, with any cblock count, with
compression, and across size rotations. Each scenario records several
times: the old failures came in one recording out of four or so.
"""
import os
import re
import subprocess

import harness
from harness import Daemon, perf, Skip

TASKSTORM = os.environ.get("PERFSPILL_TASKSTORM",
                           os.path.join(harness.BUILD, "tests", "taskstorm"))
# 8 recordings catch a failure of one recording in four 9 times in 10;
# the sanitizer build looks for memory errors on the same paths, not for
# the race, and is several times slower
ROUNDS = int(os.environ.get("PERFSPILL_ORDER_ROUNDS",
                            3 if harness.SANITIZED else 8))
with open("/proc/self/comm") as _f:
    OURS = _f.read().strip()
# ring size: room for the storm on a loaded machine, so that a lost
# FORK record does not pass for an ordering fault
PAGES = "512"


def need_tp(system, name):
    harness.ensure_tracefs()
    if not os.path.isdir("/sys/kernel/tracing/events/%s/%s" % (system,
                                                              name)):
        raise Skip("no %s:%s tracepoint on this machine" % (system, name))


def taskstorm(threads, secs, life_ms=None, mode=None):
    argv = [TASKSTORM, str(threads), str(secs)]
    if life_ms is not None:
        argv.append(str(life_ms))
    if mode:
        argv.append(mode)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"ready"
    return p


FORK = re.compile(r"(\d+\.\d+): PERF_RECORD_FORK\((\d+):(\d+)\)")
SAMPLE = re.compile(r"\s*(.*?)\s*(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s*$")


class Attribution:
    """perf's view of a file, for the tasks of one pid: out-of-order
    events perf reported, samples of pid, the misnamed ones by tid, the
    FORK times in the data, and how many LOST records it holds."""

    def __init__(self, path, pid):
        p = perf("script", "-G", "--show-task-events", "--show-lost-events",
                 "-F",
                 "comm,pid,tid,cpu,time", "-i", path)
        m = re.search(r"(\d+) out of order events", p.stderr)
        self.ooo = int(m.group(1)) if m else 0
        # nothing else to complain of: the records a rotation repeats in
        # the next file are no damage to perf
        harness.assert_perf_clean("\n".join(
            l for l in p.stderr.splitlines()
            if not l.strip().endswith("out of order events recorded.")),
            "perf script -i " + path, allow_lost=True)
        self.samples = 0
        self.wrong = {}
        self.fork = {}
        self.lost = 0
        for line in p.stdout.splitlines():
            if "PERF_RECORD_LOST" in line:
                self.lost += 1
                continue
            if "PERF_RECORD_" in line:
                m = FORK.search(line)
                if m and int(m.group(2)) == pid:
                    self.fork[int(m.group(3))] = float(m.group(1))
                continue
            m = SAMPLE.match(line)
            if m is None:
                continue
            if int(m.group(2)) != pid:
                continue
            self.samples += 1
            # before its exec the child of fork is rightly named as we are
            if m.group(1) not in ("taskstorm", OURS):
                self.wrong.setdefault(int(m.group(3)), []).append(
                    line.strip())

    def maybe_lost(self, tid):
        """The file says records were lost, and this thread's FORK is not
        in it: it may be among them. (Late FORKs are caught as out of
        order events, whatever was lost.)"""
        return self.lost > 0 and tid not in self.fork


def check_files(files, pid, what, need_all=True):
    """No out-of-order event in any file; every sample of pid named
    taskstorm, unless the file says records were lost. The kernel writes
    a LOST record only when it next writes to a ring it had to drop
    records from: a ring found full at a rotation is drained once more
    into the old file, which holds the damage (samples of a thread whose
    FORK was dropped), so that its misnamed samples are excused by a
    LOST record of its own. (Not asserted: that a LOST record a CPU's
    data in a file begins with is in the file before too. The daemon
    waits a few milliseconds for the kernel's next write; on a loaded
    machine it may come later, or the ring may overflow after the last
    drain, and then the loss belongs to the new file. What is asserted
    is what matters: no file has unexcused misnamed samples.) Returns
    pid's samples over all files."""
    assert files, what
    total = 0
    for f in files:
        a = Attribution(f, pid)
        assert a.ooo == 0, "%s: %s: perf saw %d out of order events" % (
            what, f, a.ooo)
        wrong = [l for tid, ls in a.wrong.items()
                 if not a.maybe_lost(tid) for l in ls]
        assert not wrong, "%s: %s: %d of %d samples of pid %d misnamed " \
            "(%d LOST records): %s" % (what, f, len(wrong), a.samples, pid,
                                       a.lost, wrong[:3])
        if need_all:
            assert a.samples > 0, (what, f, "no samples of the load")
        total += a.samples
    return total


def daemon(env=None):
    """A private perfspilld that answers. The socket's file exists from
    its bind, a moment before its listen: a loaded machine can connect
    in between and be refused."""
    d = Daemon(env=env)
    harness.wait_for(lambda: d.ctl("ping", check=False)[0] == 0,
                     what="perfspilld to answer a ping")
    return d


VARIANTS = [
    ("cblocks 2", ()),
    ("cblocks 1", ("--cblocks", "1")),
    ("cblocks 4", ("--cblocks", "4")),
    ("-z 1", ("-z", "1")),
    ("serial", ("--cblocks", "0")),
]


def record_rounds(events, load, extra=(), rotate=None, pages=PAGES,
                  env=None, rounds=ROUNDS):
    """rounds recordings of load() (which returns a started Popen),
    cycling through VARIANTS; every file of each is checked."""
    for i in range(rounds):
        name, args = VARIANTS[i % len(VARIANTS)]
        what = "recording %d (%s)" % (i, name)
        with daemon(env) as d:
            argv = ["start", "-m", pages, "--realtime", "1"]
            for e in events:
                argv += ["-e", e]
            if rotate:
                # compressed files grow a tenth as fast
                argv += ["--rotate-size", rotate[1] if "-z" in args else
                         rotate[0]]
            d.ctl(*(argv + list(args) + list(extra)))
            pids = []
            # a busy machine storms slower: again until a file rotated
            for _ in range(4 if rotate else 1):
                p = load()
                assert p.wait() == 0
                pids.append(p.pid)
                if d.finished_files():
                    break
            d.ctl("stop")
            files = d.finished_files()
            if rotate:
                assert len(files) >= 2, (what, files)
            # with rotation a file may hold only the other tasks; so may
            # one of a recording the system calls of a busy shared
            # machine rotated by the default rotate_size
            n = sum(check_files(files, pid, what,
                                need_all=not rotate and len(files) == 1)
                    for pid in pids)
            assert n > 0, (what, "no samples of the load")


def test_syscall_storm_of_a_program_born_after_start():
    """The issue's case: raw_syscalls:sys_enter with callchains, then a
    program whose 2 threads storm getppid for 1 s."""
    need_tp("raw_syscalls", "sys_enter")
    record_rounds(["raw_syscalls:sys_enter"], lambda: taskstorm(2, 1))


def test_sched_switch_under_a_second_busy_process():
    """sched_switch while another process keeps the CPUs busy, and the
    program's threads, born every 20 ms, yield the CPU in a loop."""
    need_tp("sched", "sched_switch")

    def load():
        busy = harness.spinner(1.5)
        assert busy.stdout.readline().strip() == b"ready"
        p = taskstorm(2, 1, 20, "yield")
        p.wait()
        busy.wait()
        return p
    # the default ring: its watermark and mmap_flush as users get them
    record_rounds(["sched:sched_switch"], load, pages="128")


def test_threads_born_during_a_size_rotation_keep_their_name():
    """Threads born all along, files rotated every few megabytes: a thread
    born while the next file's preamble walks /proc is named in the next
    file too."""
    need_tp("raw_syscalls", "sys_enter")
    # half a second of storm: about as many rotations as the 1 s storm
    # of the other tests would give with 8M files, for half the reading
    record_rounds(["raw_syscalls:sys_enter"],
                  lambda: taskstorm(2, 0.5, 10),
                  extra=("--no-callgraph",), rotate=("4M", "1M"))


def test_a_slow_ring_in_the_last_pass_splits_no_task():
    """A file's last pass pushes the rings one after the other; the test
    hook PERFSPILL_TEST_RING_GAP makes it 20 ms between two, as a ring
    of a storm takes a millisecond or more under load or the sanitizer.
    A thread born meanwhile must not have its samples in the old file and
    its FORK in the next: the pass takes every ring's head before it
    reads any (with the heads read one by one it failed 3 runs of 3
    here, each in its first recording; and the size rotation above, 10
    recordings a run, failed 2 runs of 11 under ASan)."""
    need_tp("raw_syscalls", "sys_enter")
    env = {"PERFSPILL_TEST_RING_GAP": "20000"}
    record_rounds(["raw_syscalls:sys_enter"],
                  lambda: taskstorm(2, 0.5, 10),
                  extra=("--no-callgraph",), rotate=("4M", "1M"), env=env,
                  rounds=3)


def test_a_ring_full_at_a_rotation_says_so_in_the_old_file():
    """Rings small enough to overflow under the storm on a busy machine,
    files rotated every megabyte: a ring that a rotation's last drain
    found full has its LOST record in the old file, with the samples of
    the threads whose FORK the kernel dropped (3 recordings: most files
    failed so before)."""
    need_tp("raw_syscalls", "sys_enter")
    for i, args in enumerate((("--cblocks", "1"), ("--cblocks", "2"),
                              ("--cblocks", "0"))):
        what = "recording %d (%s)" % (i, " ".join(args))
        with daemon() as d:
            busy = harness.spinner(1.5)
            assert busy.stdout.readline().strip() == b"ready"
            d.ctl("start", "-m", "64", "--realtime", "1", "-e",
                  "raw_syscalls:sys_enter", "--no-callgraph",
                  "--rotate-size", "1M", *args)
            p = taskstorm(2, 1, 10)
            assert p.wait() == 0
            # the storm asked for a rotation; its /proc walk may take
            # longer than the storm on a loaded machine: the stop waits
            # for it, rather than dropping it
            harness.wait_for(
                lambda: d.status()["totals"]["files_finished"] >= 1, 120,
                "the rotation the storm asked for (%s)" % what)
            d.ctl("stop")
            busy.wait()
            files = d.finished_files()
            assert len(files) >= 2, (what, files)
            check_files(files, p.pid, what, need_all=False)


def test_threads_born_during_the_start_keep_their_name():
    """A program already running whose threads come and go every 5 ms:
    a thread born while the first file's preamble walks /proc must be
    named in that file, and a thread that ended before the walk reached
    its process has no samples (sampling begins after the walk)."""
    need_tp("raw_syscalls", "sys_enter")
    for i in range(ROUNDS):
        name, args = VARIANTS[i % len(VARIANTS)]
        what = "recording %d (%s)" % (i, name)
        with daemon() as d:
            p = taskstorm(2, 30, 0.5, "idle")
            try:
                d.ctl("start", "-m", PAGES, "--realtime", "1", "-e",
                      "raw_syscalls:sys_enter", "--no-callgraph", *args)
                harness.spinner(0.5).wait()
                d.ctl("stop")
            finally:
                p.kill()
                p.wait()
            check_files(d.finished_files(), p.pid, what)


UNNAMED = re.compile(r"^\s*:(\d+)\s+(\d+)/(\d+)\s")
BURST_VARIANTS = [
    ("a tracepoint", ("-e", "raw_syscalls:sys_enter", "--no-callgraph")),
    ("cpu-clock -g", ("-e", "cpu-clock", "-F", "999", "-g")),
    ("-z 1", ("-e", "raw_syscalls:sys_enter", "--no-callgraph", "-z", "1")),
    ("rotations", ("-e", "raw_syscalls:sys_enter", "--no-callgraph",
                   "--rotate-size", "1M")),
]


def unnamed_samples(path):
    """Samples perf names only by pid (":PID", no COMM of the task in the
    file), and the LOST records that may excuse them."""
    p = perf("script", "--show-lost-events", "-F", "comm,pid,tid", "-i",
             path)
    lines = p.stdout.splitlines()
    return [l for l in lines if UNNAMED.match(l)], \
        sum("PERF_RECORD_LOST" in l for l in lines)


def test_a_burst_of_short_lived_processes_across_start_is_named():
    """Processes that live a millisecond, started all along, across the
    start: a sample of one that the file cannot name (":PID") means the
    sampling began before the /proc walk could see it. Task tracking is
    an event of its own, enabled before the walk; sampling only after it
    (issue 23: before, 12 of 20 recordings of the tracepoint held such
    samples). The only excuse: a LOST record in the same file."""
    need_tp("raw_syscalls", "sys_enter")
    rounds = max(1, ROUNDS // 2)
    for i in range(rounds * len(BURST_VARIANTS)):
        name, args = BURST_VARIANTS[i % len(BURST_VARIANTS)]
        what = "recording %d (%s)" % (i, name)
        burst = subprocess.Popen(
            ["sh", "-c", "while :; do for i in 1 2 3 4 5 6 7 8 9 10; do "
             "/bin/true; done; done"])
        with daemon() as d:
            try:
                d.ctl("start", "-m", PAGES, *args)
                harness.spinner(0.4).wait()
                d.ctl("stop")
            finally:
                burst.kill()
                burst.wait()
            files = d.finished_files()
            assert files, what
            for f in files:
                bad, lost = unnamed_samples(f)
                assert not bad or lost, "%s: %s: %d unnamed samples, " \
                    "no LOST record: %s" % (what, f, len(bad), bad[:3])


if __name__ == "__main__":
    harness.main(globals())
