"""What wakes the always-on recorder (issue 38, item 6): counted, not
timed. The drain thread reads every ring every drain_ms by itself (the
timeout of the wait it sleeps in anyway), so the loop does not wake to
wake it; the loop looks at its own duties (CPUs online, free space, the
output directory, the pool) every 5 s, and comes at a file's age when a
rotation is due sooner. A stop's build-id flush waits once for the
reader's queue, not once per file read. Wakeups are voluntary context
switches, which a busy machine does not add to (it adds involuntary
ones); time is counted by the drain passes (a pass at a ring's
watermark only adds to them)."""
import os
import time

import harness
from harness import Daemon, perf_valid, wait_for

# drain_ms 1000 against the loop's look every 5 s (record.c,
# RECORD_LOOK_MS): the passes a look may come at most once in
PASSES_PER_LOOK = 5


def wakeups(pid, tid):
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches for %d" % tid)


def drain_tids(pid):
    tids = []
    for t in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
            if f.read().strip() == "drain":
                tids.append(int(t))
    return tids


def test_the_drain_thread_times_its_own_pass():
    """12 s of frame-pointer stacks at 99 Hz (the rings rarely reach
    their watermark): the drain passes go on every drain_ms, while the
    loop wakes once every PASSES_PER_LOOK of them, with 2 to spare (it
    woke once a pass when its tick woke the drain thread); the drain
    threads wake no more than their passes, with 2 to spare (their own
    timer costs no second wakeup). The file is read whole by perf."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99", "-g",
              "--drain-ms", "1000", "--rotate-interval", "0")
        pid = d.proc.pid
        time.sleep(1.5)
        drains = drain_tids(pid)
        assert drains, "no drain thread"
        p0 = d.status()["drain"]["passes"]
        w0 = wakeups(pid, pid)
        dw0 = sum(wakeups(pid, t) for t in drains)
        time.sleep(12)
        w1 = wakeups(pid, pid)
        dw1 = sum(wakeups(pid, t) for t in drains)
        p1 = d.status()["drain"]["passes"]
        passes = p1 - p0
        assert passes >= 8, (p0, p1)
        assert w1 - w0 <= passes // PASSES_PER_LOOK + 2, \
            "the loop woke %d times in %d passes" % (w1 - w0, passes)
        assert dw1 - dw0 <= passes + 2, \
            "the drain threads woke %d times for %d passes" % (dw1 - dw0,
                                                              passes)
        d.ctl("stop")
        files = d.finished_files()
        assert len(files) == 1, files
        assert perf_valid(files[0]) > 0


def test_age_rotation_comes_at_the_age_not_at_the_look():
    """rotate_interval 1 s: the tick comes at each file's age, not at the
    loop's next look (5 s), so files are finished at least one every
    third drain pass (about one a pass; at the look's pace it would be
    one in five); each is read whole by perf."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99",
              "--drain-ms", "1000", "--rotate-interval", "1")
        wait_for(lambda: d.status()["totals"]["files_finished"] >= 1,
                 what="the first age rotation")
        st = d.status()
        p0, f0 = st["drain"]["passes"], st["totals"]["files_finished"]
        time.sleep(12)
        st = d.status()
        passes = st["drain"]["passes"] - p0
        files = st["totals"]["files_finished"] - f0
        assert passes >= 8, passes
        assert 3 * files >= passes, \
            "%d age rotations in %d drain passes" % (files, passes)
        d.ctl("stop")
        for f in d.finished_files():
            perf_valid(f)


if __name__ == "__main__":
    harness.main(globals())
