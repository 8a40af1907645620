"""Trace data past the page cache (issue 21): O_DIRECT through the
multi-block AIO where the output directory's file system takes it, the
page cache otherwise, and the same whole perf.data files either way.

What runs on the direct path here needs a file system that takes
O_DIRECT (ext4, xfs, btrfs); a test whose directory refuses it skips with
the reason. The disk-full test makes its own small ext4 on a loop device.
"""
import errno
import os
import re
import signal
import subprocess
import tempfile
import time

import harness
from cgroupfs import Cgroups
from harness import (Daemon, Skip, need_tp, perf_stats, perf_valid,
                     syscalls, wait_for)

TP = "raw_syscalls:sys_enter"


def takes_direct(path):
    """Whether the file system of directory path takes O_DIRECT."""
    probe = os.path.join(path, ".direct-probe")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
    except OSError as e:
        if e.errno == errno.EINVAL:
            return False
        raise
    os.close(fd)
    os.unlink(probe)
    return True


def need_direct(d):
    if not takes_direct(os.path.dirname(d.out) or "/"):
        raise Skip("the file system of %s takes no O_DIRECT" % d.out)


def resident_pages(path):
    """Pages of path in the page cache, and its size in pages (fincore,
    util-linux)."""
    p = subprocess.run(["fincore", "--bytes", "--noheadings", "--raw",
                        "--output", "PAGES,SIZE", path],
                       capture_output=True, text=True, check=True)
    pages, size = p.stdout.split()
    return int(pages), (int(size) + 4095) // 4096


class CacheAdds:
    """The pages each file puts into the page cache while it runs, by
    (device, inode): the filemap:mm_filemap_add_to_page_cache tracepoint,
    system-wide, 2^order pages an event. A residency count after the fact
    (fincore) cannot tell a file that never entered the page cache from
    one that proactive reclaim took out again: this VM's kernel runs
    DAMON with a pageout scheme, which took 198 of a fresh buffered
    file's 330 pages under load. perf starts disabled and is enabled
    through its control fifo, whose ack says the events are on: no
    sleep. -N: what ran meanwhile is not copied into perf's build-id
    cache, where another test would find it."""

    def __init__(self, top):
        self.top = top
        self.out = os.path.join(top, "cache-adds.data")
        ctl, ack = (os.path.join(top, n) for n in ("ctl", "ack"))
        for f in (ctl, ack):
            os.mkfifo(f)
        self.perf = subprocess.Popen(
            ["perf", "record", "-a", "-q", "-N", "-e",
             "filemap:mm_filemap_add_to_page_cache", "-D", "-1",
             "--control", "fifo:%s,%s" % (ctl, ack), "-o", self.out],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        with open(ctl, "w") as c, open(ack) as a:
            c.write("enable\n")
            c.flush()
            assert a.readline().strip() == "ack", "perf gave no ack"

    def pages(self, path):
        """Stops perf; the pages path put into the page cache."""
        self.perf.send_signal(signal.SIGINT)
        err = self.perf.communicate(timeout=300)[1]
        # perf record ends by raising the SIGINT it caught again
        assert self.perf.returncode in (0, -signal.SIGINT), \
            (self.perf.returncode, err[-2000:])
        st = os.stat(path)
        key = "dev %d:%d ino %x " % (os.major(st.st_dev),
                                     os.minor(st.st_dev), st.st_ino)
        out = harness.perf("script", "-i", self.out, "-F", "trace").stdout
        n = 0
        for line in out.splitlines():
            if key in line + " ":
                m = re.search(r"order=(\d+)", line)
                n += 1 << int(m.group(1)) if m else 1
        return n


def samples_in(files):
    return sum(perf_stats(f)[0].get("SAMPLE", 0) for f in files)


def buffers_need(st, direct):
    """The drain's buffers by docs/file-format.md's formula (no -z):
    a direct recording's pool does not grow with the CPUs."""
    r = st["settings"]["mmap_pages"] * 4096
    n = sum(1 for c in st["cpus"] if c["online"])
    k = st["settings"]["cblocks"]
    if not direct:
        return n * k * (r + 8) + r
    b = max(1 << 20, 2 * (r + 8)) + 4096 + 16 + 8192
    return min(max(2 * k, 2), 16) * ((b + 4095) // 4096 * 4096) + r


def session_spills(d):
    """The default session's drains spilled through the page cache, over
    the daemon's life (metrics)."""
    text = d.ctl("metrics")[1]["data"]["text"]
    m = re.search(r'^perfspill_session_spills_total\{session="default"\} '
                  r'(\d+)$', text, re.M)
    assert m, text[-2000:]
    return int(m.group(1))


def test_direct_file_is_whole_and_not_in_the_page_cache():
    """The default path: status says direct, and its buffers are the
    pool's (cblocks per ring on the buffered path), the finished file
    holds what status counted, perf reads it, and it is not in the page
    cache (a buffered file of the same recording is, the control)."""
    with Daemon() as d:
        need_direct(d)
        for direct in (True, False):
            args = ["start", "-F", "999", "-g", "--cblocks", "3"]
            if not direct:
                args.append("--no-direct-io")
            d.ctl(*args)
            st = d.status()
            assert st["write_path"] == ("direct" if direct else "buffered"), st
            assert st["buffers"] == buffers_need(st, direct), st
            # and the metrics, for a fleet's dashboards
            text = d.ctl("metrics")[1]["data"]["text"]
            assert 'perfspill_session_direct_io{session="default"} %d' % \
                direct in text.splitlines(), text[-2000:]
            spills0 = session_spills(d)
            adds = None if direct else CacheAdds(harness.workdir(
                "perfspill-cache-adds-"))
            harness.spinner(1.0).wait()
            rc, rep = d.ctl("stop")
            path = rep["data"]["path"]
            # before anything reads it
            res, size = resident_pages(path)
            spilled = session_spills(d) - spills0
            if direct and spilled:
                # the pool was at its bound with every block in flight (a
                # loaded machine's AIO threads wait for a CPU): those
                # drains went through the page cache, as they must
                print("%d drains spilled through the page cache: %d of "
                      "%d pages resident, not checked" % (spilled, res, size))
            elif direct:
                # the head, the tail and the features went through the
                # page cache and were dropped after the fsync
                assert res <= max(1, size // 50), (res, size)
            else:
                # the control: a buffered recording goes through the page
                # cache (where it may not stay: see CacheAdds)
                added = adds.pages(path)
                assert added > size // 2, ("control", added, res, size)
            n = perf_valid(path)
            assert n == d.status()["last_totals"]["samples"], n


def test_a_file_system_without_o_direct_falls_back_and_says_so_once():
    """A file system that refuses O_DIRECT (ramfs; tmpfs before Linux
    6.6, some FUSE and network file systems): the recording goes through
    the page cache, status says why, the log says so once however many
    files follow."""
    need_tp()
    top = tempfile.mkdtemp(prefix="perfspill-ramfs-")
    if subprocess.run(["mount", "-t", "ramfs", "ramfs", top]).returncode \
            != 0:
        raise Skip("cannot mount a ramfs here")
    try:
        if takes_direct(top):
            raise Skip("this kernel's ramfs takes O_DIRECT")
        with Daemon(outdir=os.path.join(top, "out")) as d:
            # ramfs says it has no free space: no min_free pause here
            d.ctl("start", "-e", TP, "--no-callgraph", "--rotate-size", "1M",
                  "--cblocks", "2", "--min-free", "0")
            for _ in range(20):
                syscalls(20000)
                if len(d.finished_files()) >= 2:
                    break
            st = d.status()
            assert st["write_path"] == "buffered", st
            assert "direct I/O" in st["write_path_why"], st
            d.ctl("stop")
            files = d.finished_files()
            assert len(files) >= 2, files
            for f in files:
                perf_valid(f, allow_lost=True)
            assert d.read_log().count("takes no direct I/O") == 1, \
                d.read_log()
    finally:
        subprocess.run(["umount", "-l", top])
        os.rmdir(top)


def test_cblocks_changed_while_recording_on_the_direct_path():
    """2 -> 4 -> 0 -> 3 while recording: 4 grows the direct file's pool
    (two units a cblock, in the blocks of two units that cblocks 2
    made), cblocks 0 (serial writes from the ring) leaves the direct
    file for a buffered one, 3 goes on in it with cblocks per ring, the
    next file is direct again with 3 blocks, and no sample is lost on
    the way (perf counts what status counted)."""
    need_tp()
    with Cgroups("load") as cg, Daemon() as d:
        need_direct(d)
        # only the test's own syscalls: a foreign storm recorded with
        # them keeps a block past the base in use at every tick, and the
        # pool never comes down to its count (the burst is not over)
        load = cg.wrapper("load")

        d.ctl("start", "-e", TP, "--no-callgraph", "--cblocks", "2",
              "-G", cg.rel["load"])
        st = d.status()
        assert st["write_path"] == "direct"
        # a direct recording has no cblocks per ring
        assert st["pool"]["blocks"] == 2, st
        unit = st["pool"]["block_bytes"] // 2
        assert unit >= 1 << 20, st["pool"]
        assert all(c["cblocks"] == 0 for c in st["cpus"]), st["cpus"]
        syscalls(20000, load)
        for n, path in ((4, "direct"), (0, "buffered"), (3, "buffered")):
            rc, rep = d.ctl("configure", "cblocks=%d" % n)
            assert rep["data"]["applied"] == ["cblocks"], rep
            st = d.status()
            assert st["settings"]["cblocks"] == n
            assert st["write_path"] == path, st
            if n == 4:
                assert st["pool"]["blocks"] == 4, st
                assert st["pool"]["block_bytes"] == 2 * unit, st
            if n == 3:
                assert all(c["cblocks"] == 3 for c in st["cpus"]
                           if c["online"]), st["cpus"]
            syscalls(20000, load)
        rc, rep = d.ctl("rotate")
        assert d.status()["write_path"] == "direct"
        syscalls(20000, load)
        # blocks past the count go once their slices have landed
        wait_for(lambda: d.status()["pool"]["blocks"] == 3,
                 what="the pool down to 3 blocks")
        d.ctl("stop")
        files = d.finished_files()
        assert len(files) >= 3, files
        for f in files:
            perf_valid(f, allow_lost=True)
        total = d.status()["last_totals"]
        assert samples_in(files) == total["samples"], total
        # the cgroup's five loads of 40000 syscalls are in them
        assert total["samples"] >= 5 * 20000, total


def test_compression_and_rotation_on_the_direct_path():
    """-z and size rotation through the direct stream: every file whole,
    the samples perf counts those status counted."""
    need_tp()
    with Daemon() as d:
        need_direct(d)
        d.ctl("start", "-e", TP, "--no-callgraph", "-z", "1",
              "--rotate-size", "1M", "-m", "256")
        assert d.status()["write_path"] == "direct"
        for _ in range(40):
            syscalls(40000)
            if len(d.finished_files()) >= 2:
                break
        d.ctl("stop")
        files = d.finished_files()
        assert len(files) >= 2, files
        for f in files:
            perf_valid(f, allow_lost=True)
        assert samples_in(files) == d.status()["last_totals"]["samples"]


def spin_kill9_salvage(d, aligned=False):
    """A spinner's second recorded, then the daemon killed (-9) a while
    later: every byte drained a few pads before the kill is in the
    partial file (a small recording's data never fills a slice:
    only the pads put it there), salvage recovers it at the next start,
    and the spinner's samples are in it. aligned: the pads are requests,
    so the file is whole blocks."""
    harness.spinner(1.0).wait()
    time.sleep(1.3)     # a tick drained it, the tail was padded
    drained = d.status()["file"]["bytes"]
    time.sleep(0.4)     # the pads of what came since
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    partial = [f for f in os.listdir(d.out) if f.endswith(".partial")]
    assert len(partial) == 1, os.listdir(d.out)
    size = os.path.getsize(os.path.join(d.out, partial[0]))
    assert size >= drained, (size, drained)
    if aligned:
        assert size % 512 == 0, size
    os.unlink(d.sock)
    d.start()
    assert "salvage: recovered" in d.read_log(), d.read_log()
    files = d.finished_files()
    assert len(files) == 1, files
    assert perf_valid(files[0]) > 0
    out = harness.perf("script", "-F", "comm", "-i", files[0]).stdout
    assert "spinner" in out


def test_kill9_direct_partial_is_salvaged():
    """A crash leaves the direct stream's blocks, the tail padded with
    zeros (direct_tail_ms): salvage cuts at the last whole record and
    the samples of the time before the crash are there."""
    with Daemon() as d:
        need_direct(d)
        d.ctl("start", "-F", "499", "--cblocks", "2", "--direct-tail-ms",
              "100")
        spin_kill9_salvage(d)


def test_kill9_tail_padded_by_requests():
    """The pad by a request (a file system whose alignment is under a
    page, or a padded tail in flight that this block's next slice
    rewrites; the test hook PERFSPILL_TEST_PAD_REQUESTS takes it always):
    the tail padded with zeros, salvage stops at them."""
    with Daemon(env={"PERFSPILL_TEST_PAD_REQUESTS": "1"}) as d:
        need_direct(d)
        d.ctl("start", "-F", "499", "--cblocks", "2", "--direct-tail-ms",
              "100")
        spin_kill9_salvage(d, aligned=True)


def test_kill9_tail_padded_by_the_tick():
    """The padder rides on the drain's tick when the tick comes at least
    as often (record.c, record_tick_drain: one wakeup a period, not two):
    drain_ms 50 and direct_tail_ms 100 pad at every second tick, with no
    timer of the padder's own. A crash then still leaves the tail on
    disk, padded: salvage finds the samples of the time before it (a
    small recording's data never fills a slice, so only the pads
    put it on disk)."""
    with Daemon() as d:
        need_direct(d)
        d.ctl("start", "-F", "499", "--cblocks", "2", "--drain-ms", "50",
              "--direct-tail-ms", "100")
        spin_kill9_salvage(d)


def test_a_refused_padded_tail_never_lands_after_its_block():
    """Issue 40 item 8: a padded tail that glibc refuses (EAGAIN) waits to
    be offered again; if the stream's next request rewrites its block
    meanwhile, the pad must not be written after it (zeros over records).
    The test hook PERFSPILL_TEST_PAD_EAGAIN=N refuses the Nth pad for as
    long as it is its file's current one: the pad is offered again (status
    counts it under pool, or other_requests for a pad alone) and dropped
    once its block is taken (a pad with stream bytes before it writes
    those alone),
    and perf reads every sample of the file."""
    with Daemon(env={"PERFSPILL_TEST_PAD_EAGAIN": "3",
                     "PERFSPILL_TEST_PAD_REQUESTS": "1"}) as d:
        need_direct(d)
        d.ctl("start", "-F", "999", "-g", "--cblocks", "2",
              "--direct-tail-ms", "20")
        harness.spinner(2.0).wait()
        st = d.status()
        # a pad rides on the pool's request when the file has an open
        # block, and goes by a request of its own when it has none
        pool, other = st["pool"], st["other_requests"]
        assert pool["aio_resubmitted"] + other["aio_resubmitted"] > 0, st
        assert pool["aio_failed"] + other["aio_failed"] == 0, st
        rc, rep = d.ctl("stop")
        path = rep["data"]["path"]
        n = perf_valid(path)
        assert n == d.status()["last_totals"]["samples"], n
        assert n > 500, n
        out = harness.perf("script", "-F", "comm", "-i", path).stdout
        assert "spinner" in out


def requests(st):
    """The requests a recording queued: the pool's and the one-off
    ones (preambles, pads of a file without an open block)."""
    return st["pool"]["aio_submitted"] + st["other_requests"]["aio_submitted"]


def pads_and_requests(d):
    """Frame-pointer stacks at 999 Hz add some KiB a period, never a
    slice: the pads of a window, the blocks it filled and the
    requests it queued."""
    d.ctl("start", "-e", "cpu-clock", "-F", "999", "-g", "--cblocks",
          "2", "--direct-tail-ms", "100")
    sp = harness.spinner(30.0)
    try:
        a = wait_for(lambda: (lambda st: st if st["pool"]["pads"] >= 3
                              else None)(d.status()), what="3 pads")
        b = wait_for(lambda: (lambda st: st if st["pool"]["pads"] >=
                              a["pool"]["pads"] + 10 else None)(
                                  d.status()), what="10 pads more")
    finally:
        sp.kill()
        sp.wait()
    assert b["pool"]["aio_failed"] == 0, b["pool"]
    rc, rep = d.ctl("stop")
    path = rep["data"]["path"]
    assert perf_valid(path) == d.status()["last_totals"]["samples"]
    return (b["pool"]["pads"] - a["pool"]["pads"],
            b["pool"]["blocks_filled"] - a["pool"]["blocks_filled"],
            requests(b) - requests(a))


def test_a_pad_makes_no_request():
    """Issue 38: a pad puts the open block's unsent bytes in the page
    cache from the drain thread (and starts their writeback), so that
    glibc's AIO thread neither wakes for it nor sleeps on the disk each
    period: the window's requests are its filled blocks' alone, and
    perf reads the stopped file whole."""
    with Daemon() as d:
        need_direct(d)
        pads, filled, n = pads_and_requests(d)
        assert pads >= 10, pads
        assert n <= filled, \
            "%d requests for %d pads and %d blocks filled" % (n, pads, filled)


def test_a_pad_is_one_request():
    """Issue 38: where a pad is a request (PERFSPILL_TEST_PAD_REQUESTS:
    see test_kill9_tail_padded_by_requests), it puts the open block's
    unsent bytes and the stream's tail, padded with zeros, on disk by
    one request, not two (a slice, then the tail): every request of the
    window is a pad's or a filled block's."""
    with Daemon(env={"PERFSPILL_TEST_PAD_REQUESTS": "1"}) as d:
        need_direct(d)
        pads, filled, n = pads_and_requests(d)
        assert n <= pads + filled, \
            "%d requests for %d pads and %d blocks filled" % (n, pads, filled)
        assert n >= pads, (n, pads)


class Ext4:
    """A small ext4 on a loop device: a file system that takes O_DIRECT
    and fills up."""

    def __init__(self, mb):
        self.top = tempfile.mkdtemp(prefix="perfspill-ext4-")
        self.img = self.top + ".img"
        with open(self.img, "wb") as f:
            f.truncate(mb << 20)
        if subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", self.img],
                          capture_output=True).returncode != 0:
            self.cleanup()
            raise Skip("mkfs.ext4 failed (e2fsprogs missing?)")
        if subprocess.run(["mount", "-o", "loop", self.img, self.top],
                          capture_output=True).returncode != 0:
            self.cleanup(mounted=False)
            raise Skip("cannot mount a loop device here")

    def cleanup(self, mounted=True):
        if mounted:
            subprocess.run(["umount", "-l", self.top])
        os.rmdir(self.top)
        os.unlink(self.img)


def test_disk_full_on_the_direct_path():
    """A full disk under direct writes: paused, the file cut at a whole
    record and finished, recording resumed when space returns."""
    need_tp()
    fs = Ext4(24)
    try:
        if not takes_direct(fs.top):
            raise Skip("the loop-mounted ext4 takes no O_DIRECT")
        with Daemon(outdir=os.path.join(fs.top, "out")) as d:
            d.ctl("start", "-e", TP, "--no-callgraph", "--rotate-size", "4M",
                  "--max-files", "0", "--max-size", "0", "--min-free", "0",
                  "-m", "256", "--cblocks", "3")
            assert d.status()["write_path"] == "direct"
            for _ in range(60):
                syscalls(40000)
                if d.status().get("paused"):
                    break
            st = d.status()
            assert st.get("paused") == "disk full", st
            try:
                wait_for(lambda: not [f for f in os.listdir(d.out)
                                      if f.endswith(".partial")] or
                         "cannot write the header" in d.read_log(),
                         what="the files open at the pause finished")
            except AssertionError as e:
                raise AssertionError("%s: %s; status %s; log: %s" % (
                    e, sorted(os.listdir(d.out)), d.status(),
                    d.read_log()[-3000:])) from None
            for f in d.finished_files():
                perf_valid(f, allow_lost=True)
            for f in d.finished_files():
                os.unlink(f)
            wait_for(lambda: "resumed" in d.read_log(),
                     what="resume after space returned")
            syscalls(2000)
            d.ctl("stop", check=False)
            assert not [f for f in os.listdir(d.out)
                        if f.endswith(".partial")], os.listdir(d.out)
            for f in d.finished_files():
                perf_valid(f, allow_lost=True)
            assert d.alive()
    finally:
        fs.cleanup()


if __name__ == "__main__":
    harness.main(globals())
