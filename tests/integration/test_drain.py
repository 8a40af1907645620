"""The drain never waits for the disk and is never late (issue 30): the
direct path's pool grows under a storm and gives the memory back after
it, a pool at its bound (lowered here by the test hook
PERFSPILL_TEST_POOL_BOUND) spills through the page cache and the file is
still read whole by perf, and what the kernel lost is counted the same by
status and by perf.

The storm is tests/taskstorm (threads calling getppid) recorded through
raw_syscalls:sys_enter: about 100 MB/s of trace here, far more than a
disk's direct writes of one block at a time keep up with in a burst.
"""
import os
import re
import subprocess
import tempfile
import time

import harness
from harness import Daemon, need_tp, perf, perf_stats, perf_valid, \
    wait_for
from test_direct import need_direct

TP = "raw_syscalls:sys_enter"
TASKSTORM = os.path.join(harness.BUILD, "tests", "taskstorm")
NOPI2 = os.path.join(harness.BUILD, "tests", "nopi2")


def storm(threads, secs):
    p = subprocess.Popen([TASKSTORM, str(threads), str(secs)],
                         stdout=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"ready"
    p.wait()


def read_file(path):
    """The samples perf report --stats finds, and the samples and lost
    events perf script reads to the end (--show-lost-events: each LOST
    and LOST_SAMPLES record's count)."""
    counts, _ = perf_stats(path)
    p = perf("script", "--show-lost-events", "-i", path)
    samples = lost = 0
    for line in p.stdout.splitlines():
        m = re.search(r"PERF_RECORD_LOST(?:_SAMPLES)? lost (\d+)", line)
        if m:
            lost += int(m.group(1))
        elif TP + ":" in line:
            samples += 1
    return counts.get("SAMPLE", 0), samples, lost


def online_cpus():
    """The online CPUs, from "0-3,6" ranges."""
    out = []
    with open("/sys/devices/system/cpu/online") as f:
        for r in f.read().strip().split(","):
            a, _, b = r.partition("-")
            out += range(int(a), int(b or a) + 1)
    return out


def check_file_counts(d, rep):
    """The recording's files against the stop's totals: every sample and every lost
    event status counted, perf counts too, and perf script reads every
    record to the end."""
    tot = rep["data"]["totals"]
    samples = lost = 0
    for path in d.finished_files():
        n = perf_valid(path, allow_lost=True)
        stats, s, l = read_file(path)
        assert n == stats == s, (path, n, stats, s)
        samples += s
        lost += l
    assert samples == tot["samples"], (samples, tot)
    assert lost == tot["lost"] + tot["lost_samples"], (lost, tot)


def test_pool_grows_under_a_storm_and_shrinks_after_it():
    """One block per ring's worth is not enough while the disk writes the
    one before: the pool makes more (status: grown, peak_blocks above
    base_blocks, buffers above the base) up to its bound, never past it,
    and once the storm is over gives them back at the next ticks.

    The disk is made slow on purpose for the storm alone (the hold hook:
    every write is seen finished 500 ms after it was queued while the
    hold file exists), so the pool must grow whatever this machine's disk
    and load: a fast idle disk kept up with five storms and the pool
    never grew (3 runs in 4 on an idle machine). Once the hold is lifted
    the disk is as fast as it is: the machine's other syscalls, recorded
    too, no longer keep the grown blocks busy."""
    need_tp()
    env = dict(os.environ)
    hold = os.path.join(tempfile.mkdtemp(prefix="perfspill-hold."), "on")
    env["PERFSPILL_TEST_WRITE_HOLD_MS"] = "500"
    env["PERFSPILL_TEST_WRITE_HOLD_WHILE"] = hold
    with Daemon(env=env) as d:
        need_direct(d)
        d.ctl("start", "-e", TP, "--no-callgraph", "--cblocks", "1",
              "--rotate-size", "256M")
        st = d.status()
        pool = st["pool"]
        base = pool["base_blocks"]
        assert base == 2 and pool["blocks"] == base, pool
        assert pool["max_blocks"] == 4 * base, pool
        assert st["buffers"] < pool["max_blocks"] * pool["block_bytes"]
        # what the start counted holds the bound (record_memory)
        mem = [s for s in st["sessions"] if s["name"] == "default"][0]
        assert mem["memory"]["pool"] == \
            pool["max_blocks"] * pool["block_bytes"], mem["memory"]
        open(hold, "w").close()
        storm(2, 1)
        pool = d.status()["pool"]
        os.unlink(hold)
        os.rmdir(os.path.dirname(hold))
        assert pool["grown"] > 0, ("the pool never grew under a storm "
                                   "with every write held 500 ms", pool)
        assert base < pool["peak_blocks"] <= pool["max_blocks"], pool
    # the burst is over: back to the base within a few ticks
        wait_for(lambda: d.status()["pool"]["blocks"] == base,
                 timeout=20, what="the pool back to its base")
        pool = d.status()["pool"]
        assert 0 < pool["shrunk"] <= pool["grown"], pool
        text = d.ctl("metrics")[1]["data"]["text"]
        assert 'perfspill_session_buffer_bytes{session="default"}' in text
        rc, rep = d.ctl("stop")
        check_file_counts(d, rep)


def test_spill_at_the_bound_keeps_the_file_whole():
    """A pool of one block (the test hook): every block that fills finds
    no other free, so the drain spills through the page cache instead of
    leaving the ring. The file is whole to perf report --stats and perf
    script, and its samples and lost events are the ones status counted;
    the spills show in status and metrics."""
    need_tp()
    env = dict(os.environ)
    env["PERFSPILL_TEST_POOL_BOUND"] = "1"
    with Daemon(env=env) as d:
        need_direct(d)
        d.ctl("start", "-e", TP, "--no-callgraph", "--cblocks", "2",
              "--rotate-size", "256M")
        pool = d.status()["pool"]
        assert pool["max_blocks"] == 1 and pool["blocks"] == 1, pool
        storm(2, 1)
        st = d.status()
        assert st["write_path"] == "direct", st
        pool = st["pool"]
        assert pool["spills"] > 0, pool
        assert pool["spill_bytes"] > 0, pool
        assert pool["blocks"] == 1 and pool["peak_blocks"] == 1, pool
        text = d.ctl("metrics")[1]["data"]["text"]
        line = [l for l in text.splitlines() if l.startswith(
            'perfspill_session_spills_total{session="default"}')]
        # read after status: the drain thread may have spilled since
        assert line and int(line[0].split()[-1]) >= pool["spills"], line
        # and the text status an operator reads says how near the bound
        # the pool came and that it spilled
        out = subprocess.run([harness.PERFSPILLCTL, "-s", d.sock, "status"],
                             capture_output=True, text=True,
                             check=True).stdout
        pl = [l for l in out.splitlines() if l.startswith("pool:")]
        m = re.match(r"pool: +1 blocks, up to 1 \(peak 1\); spilled \S+ "
                     r"\S+ in (\d+) writes$", pl[0] if pl else "")
        assert m and int(m.group(1)) >= pool["spills"], out
        assert all(len(l) <= 80 for l in out.splitlines()[:8]), out
        rc, rep = d.ctl("stop")
        check_file_counts(d, rep)


def test_many_rings_per_cpu_are_all_drained():
    """The test hook PERFSPILL_TEST_RINGS_PER_CPU=K opens K rings on each
    CPU (bench/drain/rings.py measures one drain thread against 192 of
    them): every ring is drained by the one thread, each sample of a CPU
    is in the file once per ring of it, and the file is whole."""
    need_tp()
    k = 8
    env = dict(os.environ)
    env["PERFSPILL_TEST_RINGS_PER_CPU"] = str(k)
    with Daemon(env=env) as d:
        d.ctl("start", "-e", TP, "--no-callgraph", "-m", "16")
        st = d.status()
        cpus = [c for c in st["cpus"] if c["online"]]
        ids = sorted(c["cpu"] for c in cpus)
        assert ids == sorted(online_cpus() * k), (ids, k)
        storm(2, 1)
        st = d.status()
        assert all(c["bytes"] > 0 for c in st["cpus"] if c["online"]), \
            [c["bytes"] for c in st["cpus"]]
        assert st["drain"]["passes"] > 0, st["drain"]
        rc, rep = d.ctl("stop")
        check_file_counts(d, rep)


def sample_times(path):
    """The times (perf's clock, seconds) of path's samples, as perf
    script reads them."""
    p = perf("script", "-F", "time", "-i", path)
    return [float(m.group(1)) for m in
            re.finditer(r"^\s*(\d+\.\d+):", p.stdout, re.M)]


def rotate_held(var, what, secs, drained):
    """A rotation with the loop held by the test hook var (record-file.c,
    record_test_hold) for secs: cpu-clock at 999 Hz on every CPU (idle
    ones too) into rings of 16 pages, about a second of samples each
    (~56 bytes a sample): a drain stopped for the hold loses the rest of
    it, a drain that runs, woken at a quarter of the ring, would have to
    be late by a quarter of a second to lose anything. Checks that no
    file has a LOST record and that the drain's file (drained: 0 the
    old, 1 the new) has samples in every half second of the hold;
    returns the hold's start and end (CLOCK_MONOTONIC, as perf's clock
    counts here: manifest.c) and that file's sample times."""
    hold = os.path.join(tempfile.mkdtemp(prefix="perfspill-hold."), "h")
    with Daemon(env={var: hold}) as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "999", "--no-callgraph",
              "-m", "16", "--rotate-size", "256M")
        time.sleep(0.5)
        open(hold, "w").close()
        # rotate answers once the old file is finished: after the hold
        rot = subprocess.Popen([harness.PERFSPILLCTL, "-s", d.sock,
                                "rotate"], stdout=subprocess.DEVNULL)
        try:
            wait_for(lambda: what + " held by the test hook" in
                     d.read_log(), 60, what + " held")
            t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
            time.sleep(secs)
            t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
        finally:
            # let it go either way: the loop answers nothing meanwhile
            if os.path.exists(hold):
                os.unlink(hold)
            os.rmdir(os.path.dirname(hold))
        assert rot.wait(timeout=120) == 0
        assert what + " let go by the test hook" in d.read_log()
        time.sleep(0.5)
        rc, rep = d.ctl("stop")
        files = sorted(d.finished_files(),
                       key=lambda f: harness.manifest(f)["seq"])
        assert len(files) == 2, files
        for f in files:
            counts, _ = perf_stats(f)
            assert counts.get("SAMPLE", 0) > 0, (f, counts)
            assert counts.get("LOST", 0) == 0 and \
                counts.get("LOST_SAMPLES", 0) == 0, (
                    "the drain stopped while the loop was held", what, f,
                    counts)
            perf_valid(f)
        assert rep["data"]["totals"]["lost"] == 0, rep["data"]["totals"]
        return t0, t1, samples_each_half_second(files[drained], t0, t1)


def samples_each_half_second(path, t0, t1):
    """The half seconds of [t0, t1) in which path has no sample."""
    times = sample_times(path)
    n = int((t1 - t0) / 0.5)
    empty = [i for i in range(n) if not any(
        t0 + i * 0.5 <= t < t0 + (i + 1) * 0.5 for t in times)]
    assert not empty, ("no samples in these half seconds of the hold",
                       path, empty, t0, t1, times[:1], times[-1:])
    return times


def test_a_long_finish_does_not_stop_the_drain():
    """The loop finishes a closed file (header, features, fsync, rename,
    manifest, hand-off, retention) without the drain's lock (issue 38):
    however long a finish takes, the drain thread goes on draining the
    rings into the new file. The test hook PERFSPILL_TEST_FINISH_HOLD
    holds the loop in the finish of the file a rotation closed while
    its file exists, here for 3 s, so that no timing decides (the
    source: rotate_held). perf reads the new file: no LOST record
    (report --stats) and samples in every half second of the hold
    (script). Before, the loop held the drain's lock through a finish:
    the rings overflowed and the new file had LOST records and no
    samples for the hold's last ~2 s."""
    t0, t1, times = rotate_held("PERFSPILL_TEST_FINISH_HOLD", "finish",
                                3.0, 1)
    assert min(times) < t0 and max(times) > t1, (min(times), t0,
                                                 max(times), t1)


def test_a_slow_file_creation_does_not_stop_the_drain():
    """A rotation creates its new file (openat O_CREAT, then the direct
    descriptor: the file system's journal, 0.15 to 1 ms on an idle disk
    here, up to 8 ms beside a storm) before the switch takes the drain's
    lock (issue 38): the drain thread drains on into the old file while
    the file system works. The test hook PERFSPILL_TEST_CREATE_HOLD
    holds the loop before a new file's creation while its file exists,
    here for 3 s (the source: rotate_held). The old file, which takes
    the data until the switch, has samples in every half second of the
    hold, and no file a LOST record. Before, the file was created under
    the lock: 2 LOST records in the new file, 2 runs of 2."""
    rotate_held("PERFSPILL_TEST_CREATE_HOLD", "creation", 3.0, 0)


def test_a_slow_switch_does_not_stop_the_drain():
    """A rotation's switch is a message (issue 38): the loop asks a drain
    thread to do its data part (the old file's last drain, the new file
    made current, the tasks born during the /proc walk written) with the
    pass it makes under the drain's lock anyway, and waits for the answer
    without the lock; the old file's close, its log and its finish are
    the loop's, unlocked. The test hook PERFSPILL_TEST_SWITCH_HOLD holds
    the loop where the switch closes the old file, here for 3 s (the
    source: rotate_held): the drain goes on into the new file, which has
    samples in every half second of the hold, and no file a LOST
    record. Before, the loop held the lock across the whole switch: the
    new file had LOST records and no samples for the hold's last ~2 s."""
    rotate_held("PERFSPILL_TEST_SWITCH_HOLD", "the old file's close", 3.0,
                1)


def test_status_answers_while_the_drain_holds_its_lock():
    """Status and the metrics read the drain's counters as the drain
    published them at the end of its last pass, without the drain's lock
    (issue 38): however long a pass holds the lock, the loop answers. The
    test hook PERFSPILL_TEST_DRAIN_HOLD holds the drain thread, with the
    lock, at the end of its timed pass (every drain_ms), for as long
    as its file exists; the test takes status and the metrics while it
    does, and only then removes the file. By order, not by time: the
    replies came while the file still existed and before the daemon's
    log said the hold ended. The loop's next look, which takes the lock,
    is half a drain_ms (5 s) after the held pass, the padder's
    direct_tail_ms (60 s). Before, status took the lock and answered only once the hold
    ended (the daemon's own bound, 60 s, when no one removes the file).

    The counters are one publication's: the totals are the CPUs' sums,
    the metrics (no pass between) say what status says, and perf reads
    in the file after the stop as many samples as the stop's totals,
    which are status' and what came after, lost events included (the
    rings may overflow while the drain is held on a loaded machine)."""
    hold = os.path.join(tempfile.mkdtemp(prefix="perfspill-hold."),
                        "drain")
    with Daemon(env={"PERFSPILL_TEST_DRAIN_HOLD": hold}) as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "999", "--no-callgraph",
              "--drain-ms", "10000", "--direct-tail-ms", "60000",
              "--rotate-size", "256M")
        open(hold, "w").close()
        try:
            wait_for(lambda: "drain held by the test hook" in
                     d.read_log(), 60, "the drain held at a tick's pass")
            st = d.ctl("status")[1]["data"]
            text = d.ctl("metrics")[1]["data"]["text"]
            held = os.path.exists(hold) and \
                "drain let go by the test hook" not in d.read_log()
        finally:
            if os.path.exists(hold):
                os.unlink(hold)
            os.rmdir(os.path.dirname(hold))
        assert held, "status and metrics answered only after the hold"
        wait_for(lambda: "drain let go by the test hook" in d.read_log(),
                 60, "the drain let go")
        tot = st["totals"]
        assert tot["samples"] > 0, tot
        for k in ("bytes", "records", "samples", "lost", "lost_samples"):
            assert tot[k] == sum(c[k] for c in st["cpus"]), (k, st)
        assert st["file"]["samples"] == tot["samples"], (st["file"], tot)
        assert st["drain"]["passes"] > 0, st["drain"]
        m = re.search(r"^perfspill_samples_total (\d+)$", text, re.M)
        assert m and int(m.group(1)) == tot["samples"], (m, tot)
        rc, rep = d.ctl("stop")
        files = d.finished_files()
        assert len(files) == 1, files
        assert os.path.basename(files[0]) + ".partial" == \
            st["file"]["name"], (files, st["file"])
        # what the rings lost while the drain was held is counted too
        end = rep["data"]["totals"]
        assert end["samples"] >= tot["samples"] and \
            end["lost"] >= tot["lost"], (end, tot)
        samples, _, lost = read_file(files[0])
        assert samples == end["samples"], (samples, end)
        assert lost == end["lost"] + end["lost_samples"], (lost, end)


def test_lock_waits_on_a_kernel_without_lock_pi2():
    """The drain thread waits for the loop's lock at most 2 ms at a time,
    on a priority-inheriting mutex. A kernel before 5.14 has no
    FUTEX_LOCK_PI2, and glibc refuses such a wait timed on
    CLOCK_MONOTONIC at once (EINVAL): the thread spun at SCHED_FIFO
    while the loop held the lock (47,921 lock waits for 1,679 passes in
    a 3 s storm with status every 10 ms, against 14 with the fix). Here
    tests/nopi2 runs the daemon as on such a kernel (a seccomp filter
    answers that futex operation ENOSYS): the thread waits on the wall
    clock instead and says so once. Each lock wait ends in a pass, or
    after 2 ms of waiting (status' lock_wait_us counts them): more waits
    than that are waits that did not wait."""
    need_tp()
    with Daemon(wrapper=[NOPI2]) as d:
        d.ctl("start", "-e", TP, "--no-callgraph", "-r", "10",
              "--rotate-size", "256M")
        p = subprocess.Popen([TASKSTORM, "2", "60"], stdout=subprocess.PIPE)
        try:
            assert p.stdout.readline().strip() == b"ready"

            def contended():
                # a rotation's switch holds the lock for a last drain
                d.ctl("rotate")
                return d.status()["drain"]["lock_waits"] > 0
            wait_for(contended, 60, "the drain thread waiting for the lock")
            time.sleep(1)
            st = d.status()["drain"]
        finally:
            p.kill()
            p.wait()
        # (one wait may be counted before its pass: status holds the lock)
        assert st["lock_waits"] <= st["passes"] + \
            st["lock_wait_us"] // 2000 + 1, ("waits that did not wait", st)
        assert d.read_log().count("the drain thread's lock is timed on "
                                  "the wall clock") == 1, d.read_log()
        rc, rep = d.ctl("stop")
        check_file_counts(d, rep)


def test_wakeup_watermark_follows_the_events_rate():
    """wakeup_pct 0 (the default) sets the kernel's wakeup watermark by
    the events' rate, as perf evlist -v reads it back from each file: a
    tracepoint (no bound on its rate) keeps half the ring, cpu-clock at
    99 Hz with frame-pointer callchains (at most ~110 KB/s a CPU) is
    woken at 90 %, a frequency too high for 90 % to leave 300 ms keeps
    half, and an explicit wakeup_pct is used as it is."""
    need_tp()
    ring = 128 * os.sysconf("SC_PAGESIZE")
    want = [(["-e", TP, "--no-callgraph"], ring * 50 // 100),
            (["-e", "cpu-clock", "-F", "99", "-g"], ring * 90 // 100),
            (["-e", "cpu-clock", "-F", "4000", "--call-graph", "dwarf"],
             ring * 50 // 100),
            (["-e", "cpu-clock", "-F", "99", "-g", "--wakeup-pct", "30"],
             ring * 30 // 100)]
    with Daemon() as d:
        for args, wake in want:
            before = set(d.finished_files())
            d.ctl("start", "-m", "128", *args)
            d.ctl("stop")
            new = sorted(set(d.finished_files()) - before)
            assert len(new) == 1, (args, new)
            out = perf("evlist", "-v", "-i", new[0]).stdout
            got = set(int(v) for v in re.findall(
                r"wakeup_watermark \}: (\d+)", out))
            assert got == {wake}, (args, got, wake, out)


if __name__ == "__main__":
    harness.main(globals())
