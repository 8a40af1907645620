"""Crafted files that say costly things (issue 40, made by hostile.py):
perfspill-flame reads each, or refuses it by name, within 512 MiB
resident (the child's ru_maxrss from wait4) and never with a signal; a
CPU-time limit of 60 s stands in as the guard on a hang. No wall-clock
threshold: a loaded machine gives the same verdict as an idle one.
"""
import ctypes
import os
import resource
import select
import stat
import struct
import subprocess
import tempfile

import harness
import hostile

RSS_MAX_MIB = 512
CPU_MAX_S = 60


def _limits():
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_MAX_S, CPU_MAX_S))
    # the release build: a reader that runs away stops at 4 GiB, not at
    # the machine's end (the sanitizer's shadow needs more address space
    # than any limit leaves)
    if not harness.SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def run_flame(path, *args):
    """perfspill-flame on path: (exit code, stdout, stderr, peak RSS in
    MiB, CPU seconds) of that child alone."""
    p = subprocess.Popen([os.path.join(harness.BUILD, "perfspill-flame"),
                          "--no-companion", "-q"] + list(args) + [path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=_limits)
    out, err = b"", b""
    fds = {p.stdout.fileno(): "out", p.stderr.fileno(): "err"}
    while fds:
        for fd in select.select(list(fds), [], [])[0]:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                del fds[fd]
            elif fds[fd] == "out":
                out += chunk
            else:
                err += chunk
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stdout.close()
    p.stderr.close()
    rss = ru.ru_maxrss / 1024
    cpu = ru.ru_utime + ru.ru_stime
    err = err.decode(errors="replace")
    print("  %s: exit %d, %.1f MiB resident, %.2f s CPU" % (
        os.path.basename(path), p.returncode, rss, cpu), flush=True)
    assert p.returncode >= 0, "killed by signal %d: %s" % (
        -p.returncode, err[-2000:])
    assert "runtime error" not in err and "Sanitizer" not in err, err[-4000:]
    assert rss <= RSS_MAX_MIB, "%.1f MiB resident reading %s" % (rss, path)
    return p.returncode, out.decode(errors="replace"), err, rss, cpu


def crafted(name, data):
    d = tempfile.mkdtemp(prefix="perfspill-hostile-")
    path = os.path.join(d, name + ".data")
    with open(path, "wb") as f:
        f.write(data)
    return path


def cleanup(path):
    os.unlink(path)
    os.rmdir(os.path.dirname(path))


def total(folded_text):
    return sum(harness.folded(folded_text).values())


def test_compressed_records_decode_to_at_most_256_times_their_bytes():
    """64 MiB of 8-byte samples from 5.6 KB of zstd is refused by name;
    records at the floor (64 KiB from a few bytes, 24 KB of them, no
    FINISHED_ROUND) are read whole within the bound."""
    path = crafted("big", hostile.compressed_big())
    try:
        rc, _, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 1, err
        assert path in err and "more than 256 times its bytes" in err, err
    finally:
        cleanup(path)
    path = crafted("small", hostile.compressed_small())
    try:
        rc, out, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 0, err
        assert total(out) == 700 * (64 << 10) // 8, total(out)
    finally:
        cleanup(path)


def test_records_without_rounds_wait_in_a_bounded_queue():
    """48 MB of 8-byte samples and no FINISHED_ROUND: 6 Mi records, read
    in halves of the queue's bound."""
    path = crafted("norounds", hostile.no_rounds(48 << 20))
    try:
        rc, out, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 0, err
        assert total(out) == (48 << 20) // 8, total(out)
    finally:
        cleanup(path)


def test_attr_ids_are_checked_before_they_are_copied():
    """2,000 attrs whose id sections each span the file: refused at
    once, nothing copied."""
    path = crafted("ids", hostile.attr_ids())
    try:
        rc, _, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 1, err
        assert path in err and "its attrs cannot be read" in err, err
    finally:
        cleanup(path)


def test_forked_children_share_their_parents_maps():
    """10,000 maps, then 40,000 children that fork and map once each
    (7.5 MB; 3.2 GB before): each child sees its parent's maps and its
    own, the parent none of its children's."""
    path = crafted("fork", hostile.fork_maps())
    try:
        rc, out, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 0, err
        assert harness.folded(out) == {
            "parent;[lib0.so]": 2,          # the parent, the last child
            "parent;[own39999.so]": 1,      # the last child's own map
            "parent;[unknown]": 1,          # the parent there: not its
        }, out
    finally:
        cleanup(path)


def test_build_ids_and_cgroups_are_found_by_hash():
    """200,000 build-ids and a mapping of each (34 MB: a linear search
    per mapping took 100 s of CPU, past the guard); 100,000 cgroups and a
    sample in each: every sample under its own cgroup."""
    path = crafted("bids", hostile.build_ids(200000))
    try:
        rc, out, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 0, err
        assert harness.folded(out) == {"many;[file0]": 1}, out
    finally:
        cleanup(path)
    path = crafted("cgroups", hostile.cgroups())
    try:
        rc, out, err, _, _ = run_flame(path, "--roots", "cgroup", "-f", "-")
        assert rc == 0, err
        got = harness.folded(out)
        assert len(got) == 100000 and set(got.values()) == {1}, len(got)
        assert got["/cg/0;[unknown]"] == 1 and \
            got["/cg/99999;[unknown]"] == 1
    finally:
        cleanup(path)


def test_times_near_2_63_and_a_file_without_mappings():
    """Sample times past 2^63 (the wall clock saturates) and a pprof of
    samples with no mapping: clean under UBSan in the sanitizer build."""
    for name, data, n in (("late", hostile.huge_times(), 2),
                          ("nomap", hostile.no_mappings(), 3)):
        path = crafted(name, data)
        pb = path + ".pb.gz"
        try:
            rc, out, err, _, _ = run_flame(path, "-f", "-", "-P", pb)
            assert rc == 0, err
            assert total(out) == n, out
            assert os.path.getsize(pb) > 0
        finally:
            os.unlink(pb)
            cleanup(path)


IN_OPEN = 0x20


def watch_opens(d):
    """An inotify descriptor that sees every open of a file in d (an
    O_PATH descriptor or a stat is no open: it shows nothing)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    assert fd >= 0 and libc.inotify_add_watch(fd, d.encode(), IN_OPEN) >= 0
    return fd


def opened(fd):
    """The names of the files opened since the last call."""
    names = []
    while True:
        try:
            buf = os.read(fd, 65536)
        except BlockingIOError:
            return names
        off = 0
        while off < len(buf):
            _, _, _, n = struct.unpack_from("<iIII", buf, off)
            names.append(buf[off + 16:off + 16 + n].rstrip(b"\0").decode())
            off += 16 + n


def test_mappings_of_fifos_and_devices_are_never_opened():
    """MMAP2 records naming FIFOs (one with a build-id, one without) and
    a device node, with samples in each: the reader looks at them and
    opens none (inotify sees no open; an open of the first FIFO without
    O_NONBLOCK would hang the reader)."""
    d = tempfile.mkdtemp(prefix="perfspill-hostile-")
    fifo, fifo_bid = os.path.join(d, "fifo"), os.path.join(d, "fifo-bid")
    dev = os.path.join(d, "null")
    os.mkfifo(fifo)
    os.mkfifo(fifo_bid)
    if os.geteuid() == 0:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        dev = "/dev/null"
    path = os.path.join(d, "special.data")
    with open(path, "wb") as f:
        f.write(hostile.special_files(fifo, fifo_bid, dev))
    ino = watch_opens(d)
    try:
        opened(ino)
        rc, out, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 0, err
        assert harness.folded(out) == {"special;[fifo]": 1,
                                       "special;[fifo-bid]": 1,
                                       "special;[null]": 1}, out
        names = opened(ino)
        assert "special.data" in names, names     # the watch works
        for n in ("fifo", "fifo-bid", "null"):
            assert n not in names, "the reader opened %s: %s" % (n, names)
    finally:
        os.close(ino)
        for n in os.listdir(d):
            os.unlink(os.path.join(d, n))
        os.rmdir(d)


if __name__ == "__main__":
    harness.main(globals())
