"""perfspill-flame reading the trace files itself (issue 31), tested as
an attacker would and against perf report.

The attacks: a process running as nobody that names itself like a line of
perf script; a function whose name holds a newline (a patched .strtab);
the same samples through --from/--to; a host name that leaves the output
directory through %h; companions that are forged, a FIFO, a symlink to
/dev/zero; one corrupt file among good ones. Each failed on the perf
script reader (main 057188d).

Fidelity: function shares within 1 point of perf report --no-children
--sort sym on the same file: flametarget (known proportions), a stripped
copy of it whose debug file only a local debuginfod serves, generated code
named in /tmp/perf-PID.map, and a kernel-heavy load."""
import collections
import glob
import json
import os
import re
import shutil
import stat
import subprocess

import harness
from harness import (Daemon, Skip, flame, folded, iso, manifest, perf,
                     utc_ns, wait_for)

FLAME = os.path.join(harness.BUILD, "perfspill-flame")
TARGET = os.path.join(harness.BUILD, "tests", "flametarget")
EVIL = os.path.join(harness.BUILD, "tests", "evilname")
JIT = os.path.join(harness.BUILD, "tests", "jitload")
EVIL_COMM = "a 1/1 5.000000:"
EVIL_FN = b"evil_fnQINJECTED_ROOTZINJECTED_KERNEL_FN"

_work = harness.workdir("perfspill-flame-native-")
os.chmod(_work, 0o755)
_cache = {}


def perf_pid_samples(path, pid):
    """The samples of pid, as perf script prints its pid alone (no comm:
    the number can be trusted)."""
    out = perf("script", "-i", path, "-F", "pid").stdout
    return sum(1 for l in out.split() if l == str(pid))


def keep(path, name):
    d = os.path.join(_work, name)
    os.makedirs(d)
    for p in (path, path + ".json"):
        if os.path.exists(p):
            shutil.copy2(p, d)
    return os.path.join(d, os.path.basename(path))


def record(run, secs_hz=(999,), events=("cpu-clock",), name="rec",
           extra=()):
    """Files of a recording (cpu-clock at 999 Hz with callchains) of what
    run(d) starts; run returns the pids to wait for."""
    with Daemon() as d:
        args = ["start", "-F", str(secs_hz[0]), "-g"] + list(extra)
        for e in events:
            args += ["-e", e]
        d.ctl(*args)
        info = run(d)
        d.ctl("stop")
        files = d.finished_files()
        assert len(files) == 1, files
        return keep(files[0], name), info


def evil_binary():
    """A copy of evilname whose function name holds a newline and a ';'
    (its .strtab patched: the build-id stays, so it is found by it)."""
    if "evilbin" not in _cache:
        d = os.path.join(_work, "evilbin")
        os.makedirs(d)
        os.chmod(d, 0o755)
        dst = os.path.join(d, "evilname")
        data = open(EVIL, "rb").read()
        assert data.count(EVIL_FN) == 1, data.count(EVIL_FN)
        data = data.replace(EVIL_FN, EVIL_FN.replace(b"Q", b"\n").replace(
            b"Z", b";"))
        with open(dst, "wb") as f:
            f.write(data)
        os.chmod(dst, 0o755)
        _cache["evilbin"] = dst
    return _cache["evilbin"]


def evil_recording():
    """evilname under nobody, named EVIL_COMM, in the patched binary,
    beside flametarget: 2 s of CPU each."""
    if "evil" not in _cache:
        binary = evil_binary()

        def run(d):
            e = subprocess.Popen(["setpriv", "--reuid", "nobody", "--regid",
                                  "nogroup", "--clear-groups", binary,
                                  EVIL_COMM, "2"], stdout=subprocess.PIPE)
            assert e.stdout.readline().strip() == b"ready"
            t = subprocess.Popen([TARGET, "2"], stdout=subprocess.PIPE)
            assert t.stdout.readline().strip() == b"ready"
            assert e.wait() == 0 and t.wait() == 0
            return e.pid, t.pid
        _cache["evil"] = record(run, name="evil")
    return _cache["evil"]


def test_forged_comm_counts_under_its_pid():
    """A process of nobody named "a 1/1 5.000000:" (perf script's own
    header shape): all its samples are its own, under its pid and its comm
    as data; no sample is attributed to pid 1; --pid finds every one
    (the perf script reader found 3 of 1,025)."""
    path, (epid, tpid) = evil_recording()
    want = perf_pid_samples(path, epid)
    assert want > 500, want
    stacks = folded(flame("-q", "--no-companion", "--roots", "pid", "-f",
                          "-", path).stdout)
    # every sample of the pid, whatever comm it had when (before its
    # prctl it was evilname), and nearly all under the forged one
    mine = sum(n for s, n in stacks.items()
               if s.split(";")[0].endswith(" [%d]" % epid))
    forged = sum(n for s, n in stacks.items()
                 if s.startswith("%s [%d];" % (EVIL_COMM, epid)))
    assert mine == want, (mine, want, list(stacks)[:10])
    assert forged > 0.95 * want, (forged, want)
    assert not any(s.startswith(EVIL_COMM[:1] + " [1];") or
                   re.match(r".* \[1\];", s.split(";")[0]) for s in stacks)
    got = folded(flame("-q", "--no-companion", "--pid", str(epid), "-f",
                       "-", path).stdout)
    assert sum(got.values()) == want, (sum(got.values()), want)
    assert sum(n for s, n in got.items() if s.startswith(EVIL_COMM + ";")) \
        > 0.95 * want, list(got)[:5]


def test_newline_in_a_symbol_injects_nothing():
    """A function name with a newline and a ';' is one frame, escaped: no
    folded line starts inside it, no stack gets frames of its choosing."""
    path, (epid, _) = evil_recording()
    out = flame("-q", "--no-companion", "-f", "-", path).stdout
    for line in out.splitlines():
        assert not line.startswith("INJECTED"), line
        assert ";INJECTED_KERNEL_FN" not in line, line
    stacks = folded(out)
    evil = "evil_fn\\x0aINJECTED_ROOT:INJECTED_KERNEL_FN"
    n = sum(c for s, c in stacks.items() if s.split(";")[-1] == evil)
    assert n > 0.9 * perf_pid_samples(path, epid), (n, list(stacks)[:10])


def test_time_range_hides_nothing():
    """--from/--to around the whole recording (the part-of-a-file path)
    keeps every sample of the forged process, as the whole file does."""
    path, (epid, _) = evil_recording()
    m = manifest(path)
    wall = utc_ns(m["first_sample_utc_approx"]) - m["first_sample_time"]
    lo = iso(m["first_sample_time"] + wall + 1)   # cuts the first sample
    hi = iso(m["last_sample_time"] + wall + 10**9)
    p = flame("-q", "-v", "--no-companion", "--pid", str(epid), "-f", "-",
              "--from", lo, "--to", hi, path)
    got = sum(folded(p.stdout).values())
    want = perf_pid_samples(path, epid)
    assert want - 1 <= got <= want and got > 500, (got, want, p.stderr)
    assert "not understood" not in p.stderr, p.stderr


def target_recording():
    if "target" not in _cache:
        def run(d):
            t = subprocess.Popen([TARGET, "2"], stdout=subprocess.PIPE)
            assert t.stdout.readline().strip() == b"ready"
            assert t.wait() == 0
            return t.pid
        _cache["target"] = record(run, name="target")
    return _cache["target"]


def test_host_cannot_leave_the_output_directory():
    """A manifest whose host is "../../escaped-h1": --per-host -o
    graphs/%h.svg refuses that host by name and writes nothing outside
    graphs/ (the old code wrote graphs/../../escaped-h1.svg)."""
    path, _ = target_recording()
    d = os.path.join(_work, "h-attack", "a", "b")
    os.makedirs(d)
    src = os.path.join(d, os.path.basename(path))
    shutil.copy2(path, src)
    m = manifest(path)
    m["host"] = "../../escaped-h1"
    with open(src + ".json", "w") as f:
        json.dump(m, f)
    out = os.path.join(d, "graphs")
    os.makedirs(out)
    p = flame("-q", "--no-companion", "--per-host", "-o",
              os.path.join(out, "%h.svg"), src, check=False)
    assert p.returncode != 0 and "escaped-h1" in p.stderr, p.stderr
    found = glob.glob(os.path.join(_work, "h-attack", "**", "*escaped*"),
                      recursive=True)
    assert found == [], found
    assert os.listdir(out) == [], os.listdir(out)
    # a plain name is fine
    m["host"] = "web-01.example_a"
    with open(src + ".json", "w") as f:
        json.dump(m, f)
    flame("-q", "--no-companion", "--per-host", "-o",
          os.path.join(out, "%h.svg"), src)
    assert os.listdir(out) == ["web-01.example_a.svg"], os.listdir(out)


def companion_copy(name):
    path, pid = target_recording()
    d = os.path.join(_work, name)
    os.makedirs(d)
    dst = os.path.join(d, os.path.basename(path))
    shutil.copy2(path, dst)
    shutil.copy2(path + ".json", dst + ".json")
    return dst, pid


def test_forged_companion_is_not_drawn():
    """A companion made by another user, even one that matches the file's
    size, mtime and head and adds up, is ignored and the file folded
    again; so is one whose head names another file."""
    path, pid = companion_copy("forged")
    truth = flame("-q", "--no-companion", "-f", "-", path).stdout
    flame("-q", "-f", os.devnull, path)         # the real companion
    real = open(path + ".folded").read().splitlines()
    forged = []
    for line in real:
        if line.startswith("samples "):
            line = "samples 999999"
        elif line.startswith("c "):
            continue
        elif line.startswith("end "):
            forged.append("c 999999 0 1 2 -1 1 " + " ".join(
                str(i) for i in range(3, 6)))
            line = "end 1"
        forged.append(line)
    with open(path + ".folded", "w") as f:
        f.write("\n".join(forged) + "\n")
    os.chown(path + ".folded", 65534, 65534)    # nobody's
    p = flame("-v", "-f", "-", path)
    assert p.stdout == truth, p.stdout[:300]
    assert "999999" not in p.stdout
    assert "ignored" in p.stderr and path + ".folded" in p.stderr, p.stderr
    # root's, but made from another file (its head): stale
    with open(path + ".folded", "w") as f:
        f.write("\n".join(forged).replace(
            forged[1], forged[1].rsplit(" ", 1)[0] + " 0123456789abcdef") +
            "\n")
    os.chown(path + ".folded", 0, 0)
    p = flame("-v", "-f", "-", path)
    assert p.stdout == truth and "another version" in p.stderr, p.stderr


def test_fifo_companion_does_not_hang():
    path, _ = companion_copy("fifo")
    truth = flame("-q", "--no-companion", "-f", "-", path).stdout
    os.mkfifo(path + ".folded")
    p = flame("-f", "-", path, timeout=60)
    assert p.stdout == truth
    assert "ignored" in p.stderr, p.stderr
    # and the FIFO made way for a real companion
    assert stat.S_ISREG(os.lstat(path + ".folded").st_mode)


def test_symlink_to_dev_zero_companion_is_not_read():
    path, _ = companion_copy("zero")
    truth = flame("-q", "--no-companion", "-f", "-", path).stdout
    os.symlink("/dev/zero", path + ".folded")
    p = flame("-f", "-", "--no-companion", path)
    p = flame("-f", "-", path, timeout=60)
    assert p.stdout == truth
    assert "ignored" in p.stderr, p.stderr


def test_one_corrupt_file_among_good_ones():
    """Three files, the middle one's records overwritten: the other two
    are drawn, the bad one named in a warning and counted in the title
    (the perf script reader drew nothing: perf exit 242)."""
    path, pid = target_recording()
    d = os.path.join(_work, "fleet3")
    os.makedirs(d)
    names = []
    for i in range(3):
        dst = os.path.join(d, "perfspill-h-20260101T00000%dZ-00000%d.data"
                           % (i, i))
        shutil.copy2(path, dst)
        names.append(dst)
    size = os.path.getsize(names[1])
    with open(names[1], "r+b") as f:
        f.seek(size // 2)
        f.write(b"\xff" * 4096)
    one = sum(folded(flame("-q", "--no-companion", "-f", "-",
                           path).stdout).values())
    svg = os.path.join(d, "g.svg")
    p = flame("--no-companion", "-f", "-", "-o", svg, d)
    assert sum(folded(p.stdout).values()) == 2 * one, p.stderr
    assert names[1] in p.stderr and "skipped" in p.stderr, p.stderr
    assert "1 file skipped" in open(svg).read()


def test_corrupt_bytes_never_crash():
    """A file is data from whoever made it (a fleet store takes other
    hosts' files): 60 copies of a recording, each with bytes changed at
    random in its head, its features or anywhere (a fixed seed), are read
    or refused with a message, never a crash (the sanitizer build aborts
    on any bad access)."""
    import random
    path, _ = target_recording()
    data = open(path, "rb").read()
    rng = random.Random(31)
    d = os.path.join(_work, "mutants")
    os.makedirs(d)
    bad = os.path.join(d, "m.data")
    for i in range(60):
        b = bytearray(data)
        for _ in range(rng.choice((1, 4, 32))):
            where = rng.choice((rng.randrange(0, 4096),
                                rng.randrange(len(b) - 8192, len(b)),
                                rng.randrange(len(b))))
            b[where] = rng.randrange(256)
        with open(bad, "wb") as f:
            f.write(b)
        p = flame("-q", "--no-companion", "-f", os.devnull, bad,
                  check=False)
        assert p.returncode in (0, 1), (i, p.returncode, p.stderr[-2000:])
        assert "Sanitizer" not in p.stderr and \
            "runtime error" not in p.stderr, (i, p.stderr[-2000:])
        assert p.returncode == 0 or bad in p.stderr, (i, p.stderr)


# ---------------------------------------------------------------------
# fidelity against perf report

def perf_shares(path, pid, env=None):
    """{function: percent} of perf report --no-children --sort pid,sym,
    of pid's rows (the machine is shared: others' programs of the same
    names may be sampled too; perf report's own --pid filter gave other
    shares than its rows of that pid)."""
    # perf reads the JIT's live map, in its private /tmp (harness.perf)
    out = perf("report", "-i", path, "--stdio", "--no-children", "--sort",
               "pid,sym", "-q", "-n", "-g", "none", env=env,
               tmp=("perf-%d.map" % pid,)).stdout
    # perf's "pid" rows are threads: those of the process
    tids = set()
    for line in perf("script", "-i", path, "-G", "-F",
                     "pid,tid").stdout.splitlines():
        p, _, t = line.strip().partition("/")
        if p == str(pid):
            tids.add(int(t))
    counts = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+(\d+):.*?\s\[([.k])\]\s+"
                     r"(.*\S)\s*$", line)
        if m and int(m.group(2)) in tids:
            counts[m.group(4)] += int(m.group(1))
            if m.group(3) == "k":
                counts[KERNEL] += int(m.group(1))
    total = sum(v for k, v in counts.items() if k != KERNEL)
    assert total > 0, out[:2000]
    return {k: 100.0 * v / total for k, v in counts.items()}


KERNEL = " kernel"     # no function's name: their [k] share


def our_shares(path, pid, env=None):
    """{leaf function: percent} of our folded stacks of pid."""
    stacks = folded(flame("-q", "--no-companion", "--roots", "none", "-f",
                          "-", "--pid", str(pid), path, env=env).stdout)
    total = sum(stacks.values())
    leaf = collections.Counter()
    for s, n in stacks.items():
        leaf[s.split(";")[-1]] += n
    return {k: 100.0 * v / total for k, v in leaf.items()}


def assert_faithful(path, pid, names, env=None, perf_env=None,
                    before_perf=None):
    ours = our_shares(path, pid, env)
    if before_perf:
        before_perf()
    theirs = perf_shares(path, pid, perf_env)
    print("perf:", sorted(theirs.items(), key=lambda x: -x[1])[:8])
    print("ours:", sorted(ours.items(), key=lambda x: -x[1])[:8])
    for n in names:
        assert theirs.get(n, 0) > 5, (n, theirs)
        assert abs(ours.get(n, 0) - theirs[n]) <= 1.0, (n, ours.get(n),
                                                        theirs[n])
    # and every function perf gives 2 % or more
    for n, v in theirs.items():
        if v >= 2 and not n.startswith("0x") and n != KERNEL:
            assert abs(ours.get(n, 0) - v) <= 1.0, (n, ours.get(n), v)


def test_faithful_flametarget():
    path, pid = target_recording()
    assert_faithful(path, pid, ["leaf_seventy", "leaf_thirty"])


def test_faithful_compressed_file():
    """A recording with zstd (-z): the records decoded from COMPRESSED
    ones are read as the others, every sample counted as perf counts."""
    def run(d):
        t = subprocess.Popen([TARGET, "2"], stdout=subprocess.PIPE)
        assert t.stdout.readline().strip() == b"ready"
        assert t.wait() == 0
        return t.pid
    path, pid = record(run, name="zstd", extra=("-z", "3"))
    out = perf("report", "-i", path, "--stats").stdout
    assert "COMPRESSED" in out, out
    total = len(perf("script", "-i", path, "-G", "-F", "pid").stdout.split())
    ours = folded(flame("-q", "--no-companion", "-f", "-", path).stdout)
    assert sum(ours.values()) == total, (sum(ours.values()), total)
    assert_faithful(path, pid, ["leaf_seventy", "leaf_thirty"])


def test_faithful_kernel_heavy():
    """dd copying /dev/zero to /dev/null a byte at a time: most samples in
    the kernel, named from /proc/kallsyms as perf names them."""
    def run(d):
        p = subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", "bs=1",
                              "count=1500000"], stderr=subprocess.DEVNULL)
        assert p.wait() == 0
        return p.pid
    path, pid = record(run, name="kernel")
    theirs = perf_shares(path, pid)
    assert theirs.get(KERNEL, 0) > 50, theirs  # a kernel-heavy load
    top = max((v, n) for n, v in theirs.items() if not n.startswith("0x")
              and n != KERNEL)
    assert top[0] > 5, theirs
    assert_faithful(path, pid, [top[1]])


def test_faithful_jit_map():
    """Generated code named in /tmp/perf-PID.map: jit_hot and jit_cold at
    the shares perf gives them."""
    def run(d):
        p = subprocess.Popen([JIT, "2"], stdout=subprocess.PIPE)
        line = p.stdout.readline().strip()
        assert p.wait() in (0, 77), line
        if line != b"ready":
            raise Skip("jitload: x86-64 only")
        return p.pid
    path, pid = record(run, name="jit")
    jmap = "/tmp/perf-%d.map" % pid
    try:
        assert_faithful(path, pid, ["jit_hot", "jit_cold"])
        # anyone may write in /tmp: a map that is not ours or root's
        # names nothing (as perf ignores it), nor does a symlink
        os.chown(jmap, 65534, 65534)
        p = flame("-f", "-", "--no-companion", "--pid", str(pid), path)
        assert "jit_hot" not in p.stdout and jmap in p.stderr, p.stderr
        os.rename(jmap, jmap + ".real")
        os.chown(jmap + ".real", 0, 0)
        os.symlink(jmap + ".real", jmap)
        p = flame("-f", "-", "--no-companion", "--pid", str(pid), path)
        assert "jit_hot" not in p.stdout and jmap in p.stderr, p.stderr
        os.unlink(jmap + ".real")
    finally:
        for p in (jmap, jmap + ".real"):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass


def test_faithful_stripped_binary_from_debuginfod():
    """A stripped flametarget, gone from this host after the recording
    (as a binary of another host is): its names come from a debuginfod on
    127.0.0.1 that serves its debug file, at the shares perf report gives
    of the same file given the unstripped binary (the same build-id) where
    the stripped one was."""
    harness.need_debuginfod()
    d = os.path.join(_work, "stripped")
    os.makedirs(os.path.join(d, "srv"))
    os.chmod(d, 0o755)
    binary = os.path.join(d, "flametarget-stripped")
    dbg = os.path.join(d, "srv", "flametarget.debug")
    subprocess.run(["objcopy", "--only-keep-debug", TARGET, dbg], check=True)
    subprocess.run(["strip", "-s", "-o", binary, TARGET], check=True)

    def run(dm):
        t = subprocess.Popen([binary, "2"], stdout=subprocess.PIPE)
        assert t.stdout.readline().strip() == b"ready"
        assert t.wait() == 0
        return t.pid
    path, pid = record(run, name="stripped-rec")
    os.unlink(binary)
    # perf's build-id cache (~/.debug) is one of the places perfspill-flame
    # looks: any `perf record -a` run on this machine while the unstripped
    # flametarget ran (same build-id) put a copy there, so the reading has
    # a home of its own
    home = os.path.join(d, "home")
    os.mkdir(home)
    # without a server: no names for it
    plain = our_shares(path, pid, env={"DEBUGINFOD_URLS": "", "HOME": home})
    assert "leaf_seventy" not in plain, plain
    with harness.debuginfod(os.path.join(d, "srv"), d) as url:
        env = {"DEBUGINFOD_URLS": url, "HOME": home,
               "DEBUGINFOD_CACHE_PATH": os.path.join(d, "cache")}
        assert_faithful(path, pid, ["leaf_seventy", "leaf_thirty"],
                        env=env, before_perf=lambda: shutil.copy2(TARGET,
                                                                  binary))


if __name__ == "__main__":
    harness.main(globals())
