"""Salvage keeps only what perf reads: .partial files a crash left,
real ones (kill -9 while recording), damaged at random offsets inside
their data (random bytes, zero runs, foreign text, bit flips, a torn
end), are cut before the first record perf would refuse, and every file
salvage makes passes perf report --stats and perf script without a
"failed to process"; nothing else in the directory changes. A -z file's
salvage reads inside its compressed records: the finished file has
sample_time and its manifest counts what perf counts."""
import concurrent.futures
import hashlib
import json
import os
import random
import re
import struct
import subprocess
import time

import harness
from harness import Daemon, perf

# the three kinds of data a file holds: one event with callchains, two
# events (ids tell them apart) one of them a tracepoint with raw data,
# and the same compressed
KINDS = {
    "callchain": ["-e", "cpu-clock", "-F", "499", "-g"],
    "tracepoint": ["-e", "cpu-clock", "-e", "raw_syscalls:sys_enter",
                   "-F", "499"],
    "zstd": ["-e", "cpu-clock", "-F", "499", "-g", "-z", "3"],
}
# cases per kind; a few hundred in all, well inside CI's time
CASES = 70
SEED = int(os.environ.get("SALVAGE_FUZZ_SEED", "0")) or random.randrange(
    1 << 30)
# data kept of a template (from the start of its data section)
KEEP = 384 * 1024
# no retention, no minimum free space: every file must stay to be read
CONFIG = {"max_files": 0, "min_free": 0}

FOREIGN = (b"Lorem ipsum dolor sit amet, consectetur adipiscing elit; "
           b"PERFILE2 {\"v\": 1, \"cmd\": \"status\"}\n") * 160


def head_of(data):
    """data.offset of a perf.data head (perf_file_header: data at 40)."""
    return struct.unpack_from("<Q", data, 40)[0]


def crash_partial(args, load, keep=KEEP):
    """A .partial as kill -9 leaves it, from a real recording of args:
    its head and keep bytes of its data (None: all of it)."""
    with Daemon(config=CONFIG) as d:
        d.ctl("start", *args)
        load()
        # the drain tick (and a wakeup) has written part of the file
        time.sleep(1.2)
        d.proc.kill()
        d.proc.wait()
        partial = [f for f in os.listdir(d.out) if f.endswith(".partial")]
        assert len(partial) == 1, os.listdir(d.out)
        with open(os.path.join(d.out, partial[0]), "rb") as f:
            data = f.read()
    # a busy machine's tracepoints fill megabytes: a crash may as well
    # have come earlier, and every case is a copy of this
    return data if keep is None else data[:head_of(data) + keep]


def load_spin():
    harness.spinner(0.3).wait()


def load_syscalls():
    harness.syscalls(5000)
    harness.spinner(0.3).wait()


def mutate(rng, data, lo, hi):
    """One kind of damage at a random offset in data[lo:hi]."""
    b = bytearray(data)
    kind = rng.choice(["random16", "random4k", "zeros", "text", "flips",
                       "torn"])
    off = rng.randrange(lo, hi)
    if kind == "random4k":
        off = max(lo, off & ~4095)
        b[off:off + 4096] = bytes(rng.getrandbits(8) for _ in range(4096))
    elif kind == "random16":
        b[off:off + 16] = bytes(rng.getrandbits(8) for _ in range(16))
    elif kind == "zeros":
        n = rng.choice([8, 24, 64, 512, 4096])
        b[off:off + n] = bytes(n)
    elif kind == "text":
        b[off:off + 8192] = FOREIGN[:8192]
    elif kind == "flips":
        for _ in range(rng.randrange(1, 9)):
            o = rng.randrange(lo, hi)
            b[o] ^= 1 << rng.randrange(8)
    else:
        del b[off:]
    return kind, off, bytes(b[:len(data)])


def snapshot(path):
    """Every file of a directory with a digest of its contents."""
    out = {}
    for n in os.listdir(path):
        with open(os.path.join(path, n), "rb") as f:
            out[n] = hashlib.sha256(f.read()).hexdigest()
    return out


def perf_reads(path, nosym):
    """perf report --stats and perf script read path whole: exit 0 and no
    'failed to process'. Returns (problem or None, SAMPLE count). perf
    script prints its default fields (callchains, tracepoint fields) but
    finds no symbols to load (nosym: an empty kallsyms and symfs), which
    is most of its time on a small file and nothing of the file's."""
    st = perf("report", "--stats", "-i", path, check=False)
    if st.returncode != 0 or "failed to process" in st.stderr:
        return "perf report --stats: %d %s" % (st.returncode,
                                                st.stderr[-600:]), 0
    # its output is long and of no interest here: not through a pipe
    argv, extra = harness.perf_argv(["script", "--kallsyms",
                                     os.path.join(nosym, "kallsyms"),
                                     "--symfs", nosym, "-i", path])
    sc = subprocess.run(argv, stdout=subprocess.DEVNULL,
                        stderr=subprocess.PIPE, text=True, timeout=300,
                        env=dict(os.environ, **extra))
    if sc.returncode != 0 or "failed to process" in sc.stderr:
        return "perf script: %d %s" % (sc.returncode, sc.stderr[-600:]), 0
    return None, harness._parse_stats(st.stdout).get("SAMPLE", 0)


def test_fuzzed_partials_salvage_to_files_perf_reads():
    harness.need_tp()
    rng = random.Random(SEED)
    print("seed %d (SALVAGE_FUZZ_SEED=%d repeats this run)" % (SEED, SEED),
          flush=True)
    templates = {
        "callchain": crash_partial(KINDS["callchain"], load_spin),
        "tracepoint": crash_partial(KINDS["tracepoint"], load_syscalls),
        "zstd": crash_partial(KINDS["zstd"], load_spin),
    }
    with Daemon(config=CONFIG, start=False) as d:
        os.makedirs(d.out, mode=0o750)
        cases = {}
        seq = 0
        for kind, data in templates.items():
            lo = head_of(data)
            assert len(data) > lo + 4096, (kind, len(data), lo)
            # the real crash itself, undamaged
            name = "perfspill-fuzz-20260101T000000Z-%06d.data" % seq
            cases[name] = (kind, "none", len(data), data)
            seq += 1
            for _ in range(CASES):
                what, off, bad = mutate(rng, data, lo, len(data))
                name = "perfspill-fuzz-20260101T000000Z-%06d.data" % seq
                cases[name] = (kind, what, off, bad)
                seq += 1
        for name, (_, _, _, bad) in cases.items():
            with open(os.path.join(d.out, name + ".partial"), "wb") as f:
                f.write(bad)
        # what salvage must not touch: a finished file with its manifest,
        # files of other programs
        keep = {"perfspill-kept-20250101T000000Z-000001.data":
                templates["callchain"],
                "perfspill-kept-20250101T000000Z-000001.data.json": b"{}\n",
                "notes.txt": FOREIGN[:100], "perfspill-x.data.partial.bak":
                b"x" * 100}
        for n, content in keep.items():
            with open(os.path.join(d.out, n), "wb") as f:
                f.write(content)
        before = snapshot(d.out)
        d.start()
        d.ctl("ping")
        log = d.read_log()
        after = snapshot(d.out)

        # nothing but the .partial files changed
        for n in keep:
            assert after.get(n) == before[n], (n, sorted(after))
        expected = set(keep) | {".perfspilld.lock"}
        for name in cases:
            if name in after:
                expected |= {name, name + ".json"}
            else:
                expected.add(name + ".damaged")
        assert set(after) == expected, sorted(set(after) ^ expected)

        jobs = sorted(n for n in cases if n in after)
        nosym = os.path.join(d.dir, "nosym")
        os.mkdir(nosym)
        open(os.path.join(nosym, "kallsyms"), "w").close()
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            results = dict(zip(jobs, ex.map(
                lambda n: perf_reads(os.path.join(d.out, n), nosym), jobs)))
        bad_files = ["%s (%s %s at %d): %s" % (n, cases[n][0], cases[n][1],
                                               cases[n][2], results[n][0])
                     for n in jobs if results[n][0] is not None]
        assert not bad_files, "seed %d: %d of %d salvaged files fail:\n%s" % (
            SEED, len(bad_files), len(jobs), "\n".join(bad_files[:10]))
        # every cut is logged with what it removed
        cuts = dict(re.findall(r"salvage: (\S+)\.partial: cut at byte "
                               r"(\d+) of \d+", log))
        for name, (kind, what, off, bad) in cases.items():
            path = os.path.join(d.out, name)
            if not os.path.exists(path):
                continue
            end = head_of(open(path, "rb").read())
            size = struct.unpack_from("<Q", open(path, "rb").read(), 48)[0]
            if end + size < len(bad):
                assert cuts.get(name) == str(end + size), (name, cuts.get(
                    name), end + size)
        # the manifest counts what perf counts, compressed or not
        for n in jobs:
            with open(os.path.join(d.out, n + ".json")) as f:
                m = json.load(f)
            assert m["samples"] == results[n][1], (n, cases[n][:3], m[
                "samples"], results[n][1])
        # the undamaged crashes lose nothing but their torn end
        for name, (kind, what, _, _) in cases.items():
            if what == "none":
                assert name in after and results[name][1] > 0, (kind, log)
                m = re.search(re.escape(name) + r"\.partial: cut at .*first "
                              r"removed: (.*)", log)
                assert m is None or re.search(
                    r"zeros|cut by the end|fewer than a record header|"
                    r"half decoded", m.group(1)), (kind, m.group(0))
        print("%d cases, %d salvaged, %d kept as .damaged, %d cut" % (
            len(cases), len(jobs), len(cases) - len(jobs), len(cuts)))
        assert d.alive()


def test_compressed_partial_salvage_counts_inside_the_zstd_records():
    """A -z .partial left by kill -9 is salvaged with the sample_time
    feature and a manifest counting samples and first/last sample times
    as perf report --stats and perf script -F time see them (before,
    samples 0 and no times: the samples are inside zstd records)."""
    with Daemon(config=CONFIG) as d:
        d.ctl("start", *KINDS["zstd"])
        harness.spinner(1.0).wait()
        harness.wait_for(lambda: d.status()["file"]["samples"] > 0, 30,
                         "samples in the file")
        d.proc.kill()
        d.proc.wait()
        os.unlink(d.sock)
        d.start()
        assert "salvage: recovered" in d.read_log(), d.read_log()
        files = d.finished_files()
        assert len(files) == 1, os.listdir(d.out)
        st = perf("report", "--stats", "-i", files[0])
        assert "failed to process" not in st.stderr, st.stderr
        counts = harness._parse_stats(st.stdout)
        assert counts.get("COMPRESSED", 0) > 0, counts
        out = perf("script", "-F", "time", "--ns", "-i", files[0]).stdout
        ts = [int(round(float(t.rstrip(":")) * 1e9))
              for t in out.split() if re.match(r"^\d+\.\d+:?$", t)]
        with open(files[0] + ".json") as f:
            m = json.load(f)
        assert m["salvaged"] is True, m
        assert m["samples"] == counts.get("SAMPLE", 0) == len(ts) > 0, (
            m, counts, len(ts))
        assert (m["first_sample_time"], m["last_sample_time"]) == \
            (min(ts), max(ts)), (m, min(ts), max(ts))
        hdr = perf("report", "--header-only", "-I", "-i", files[0]).stdout
        t = re.search(r"time of first sample : ([\d.]+)\n# time of last "
                      r"sample : ([\d.]+)", hdr)
        assert t, hdr
        # the header prints whole microseconds
        usec = [("%d.%06d" % (x // 10**9, x % 10**9 // 1000))
                for x in (min(ts), max(ts))]
        assert list(t.groups()) == usec, (t.groups(), usec)
        # and the compression ratio from the same records (0 before)
        r = re.search(r"# compressed : Zstd, level = \d+, ratio = (\d+)", hdr)
        assert r and int(r.group(1)) > 0, hdr


def test_socket_answers_while_a_leftover_is_salvaged():
    """Salvage reads a leftover whole (a second a gigabyte), on the file
    worker, not on the event loop: while it is held before reading the
    file (the test hook PERFSPILL_TEST_SALVAGE_HOLD, so that no timing
    decides), the control socket answers status and ping, status counts
    the leftover in salvaging, and nothing of it is finished yet; once
    let go, it is salvaged as before: a .data perf reads, its manifest
    (salvaged) and 0 salvaging. Before, salvage ran before the socket
    was opened, and the daemon answered nothing until it was done."""
    data = crash_partial(KINDS["callchain"], load_spin, keep=None)
    with Daemon(config=CONFIG, start=False) as d:
        hold = os.path.join(d.dir, "hold")
        d.env = {"PERFSPILL_TEST_SALVAGE_HOLD": hold}
        os.makedirs(d.out)
        name = "perfspill-leftover-20250101T000000Z-000000.data"
        with open(os.path.join(d.out, name + ".partial"), "wb") as f:
            f.write(data)
        d.start(salvaged=False)
        try:
            harness.wait_for(lambda: os.path.exists(hold), 60,
                             "the salvage held by the test hook")
            st = d.status()
            assert st["salvaging"] == 1, st
            assert d.ctl("ping")[0] == 0
            # (the directory's lock aside)
            assert [f for f in os.listdir(d.out) if f[0] != "."] == \
                [name + ".partial"], os.listdir(d.out)
            assert "salvage: recovered" not in d.read_log()
        finally:
            # let it go either way: the daemon's exit waits for it
            if os.path.exists(hold):
                os.unlink(hold)
        harness.wait_for(lambda: d.status()["salvaging"] == 0, 300,
                         "the salvage let go")
        assert "salvage: recovered " + name in d.read_log(), d.read_log()
        path = os.path.join(d.out, name)
        assert d.finished_files() == [path], os.listdir(d.out)
        with open(path + ".json") as f:
            m = json.load(f)
        assert m["salvaged"] is True and m["samples"] > 0, m
        st = perf("report", "--stats", "-i", path)
        assert "failed to process" not in st.stderr, st.stderr
        assert harness._parse_stats(st.stdout).get("SAMPLE", 0) == \
            m["samples"], (st.stdout, m)


if __name__ == "__main__":
    harness.main(globals())
