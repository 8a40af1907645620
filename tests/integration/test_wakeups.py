"""What wakes the always-on recorder (issue 38, item 6): counted, not
timed. The loop wakes once a tick (drain_ms), not again because its
event loop's clock had not reached the deadline (libevent's coarse clock
made it wait 1 ms more, 1-3 times, after half of the ticks); a stop's
build-id flush waits once for the reader's queue, not once per file
read. Wakeups are voluntary context switches, which a busy machine does
not add to (it adds involuntary ones); ticks are counted by the drain
passes they ask for (a pass at a ring's watermark only adds to them)."""
import time

import harness
from harness import Daemon, perf_valid


def wakeups(pid, tid):
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches for %d" % tid)


def test_the_loop_wakes_once_a_tick():
    """10 s of frame-pointer stacks at 99 Hz (the rings never reach their
    watermark): the loop's wakeups are the ticks' (the passes), with 2 to
    spare; the file is read whole by perf with the samples status
    counted."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99", "-g",
              "--drain-ms", "1000")
        pid = d.proc.pid
        time.sleep(1.5)
        p0 = d.status()["drain"]["passes"]
        w0 = wakeups(pid, pid)
        time.sleep(10)
        w1 = wakeups(pid, pid)
        st = d.status()
        p1 = st["drain"]["passes"]
        assert p1 - p0 >= 8, (p0, p1)
        assert w1 - w0 <= p1 - p0 + 2, \
            "the loop woke %d times for %d ticks" % (w1 - w0, p1 - p0)
        d.ctl("stop")
        files = d.finished_files()
        assert len(files) == 1, files
        assert perf_valid(files[0]) > 0


if __name__ == "__main__":
    harness.main(globals())
