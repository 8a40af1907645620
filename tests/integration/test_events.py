"""perf record's event and target syntax: every -e form this kernel takes
is recorded and named as perf itself names it (perf record with the same
-e is the oracle), a form it refuses gets a clear error, -C records those
CPUs only, --all-user leaves the kernel out, and a session with -p, -t or
-u records those tasks and what they start, and nothing else (perf
script's pids)."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Daemon, Skip, main, need_tp, perf, perf_valid,  # noqa
                     wait_for, SPINNER)

PMUS = "/sys/bus/event_source/devices"


def names_by_perf(ev):
    """The event names of a perf record -e ev file, perf evlist's."""
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "p.data")
        p = perf("record", "-q", "-o", out, "-e", ev, "-a", "--", "sleep",
                 "0.2", check=False)
        if p.returncode != 0:
            return None
        return [n for n in perf("evlist", "-i", out).stdout.split()
                if not n.startswith("dummy")]


def names_in(path):
    return [n for n in perf("evlist", "-i", path).stdout.split()
            if not n.startswith("dummy")]


def attrs_in(path):
    """{name: attr text} from perf evlist -v."""
    out = {}
    for line in perf("evlist", "-v", "-i", path).stdout.splitlines():
        name, _, rest = line.partition(": ")
        out[name] = rest
    return out


def record(d, *args, secs=0.5):
    d.ctl("start", "-F", "499", *args)
    time.sleep(secs)
    d.ctl("stop")
    return d.finished_files()[-1]


def test_forms_perf_takes_are_recorded_and_named_as_perf_names_them():
    need_tp()
    forms = ["cpu-clock:u", "cpu-clock:k", "task-clock:ukh", "cs:ppp",
             "cpu-clock:P", "software/config=0,period=100000/k",
             "{cpu-clock,task-clock}:u", "{cpu-clock,task-clock:k}",
             "sched:sched_switch:k", "cs,sched:sched_switch",
             "software/config=1,name=tc/"]
    checked = 0
    with Daemon() as d:
        for ev in forms:
            want = names_by_perf(ev)
            if want is None:
                continue        # this kernel refuses it to perf as well
            f = record(d, "-e", ev)
            perf_valid(f)
            assert names_in(f) == want, (ev, names_in(f), want)
            checked += 1
    assert checked >= len(forms) - 2, checked


def test_modifiers_and_terms_reach_the_attr():
    with Daemon() as d:
        f = record(d, "-e", "cpu-clock:u,software/config=1,period=100000/k",
                   "-e", "cs:pp")
        a = attrs_in(f)
        assert "exclude_kernel: 1" in a["cpu-clock:u"], a
        assert "exclude_hv: 1" in a["cpu-clock:u"], a
        assert "exclude_user" not in a["cpu-clock:u"], a
        k = a["software/config=1,period=100000/k"]
        assert "config: 0x1" in k and "exclude_user: 1" in k, k
        assert "sample_period, sample_freq }: 100000" in k and \
            "freq: 1" not in k, k
        # an explicit precision is asked for as is, never lowered
        assert "precise_ip: 2" in a["cs:pp"], a


def test_a_group_is_one_group_in_the_kernel():
    """Members of a group are scheduled with their leader: both count
    over the same time, so on a group of two clocks perf script shows
    samples of both."""
    with Daemon() as d:
        f = record(d, "-e", "{cpu-clock,task-clock}", secs=1)
        perf_valid(f)
        s = perf("script", "-F", "event", "-i", f).stdout.split()
        assert "cpu-clock:" in s and "task-clock:" in s, set(s)
        # the file's HEADER_GROUP_DESC: perf evlist -g shows the group
        # as it shows the one in perf record's own file
        f = record(d, "-e", "cs,{cpu-clock,task-clock:u}")
        ours = perf("evlist", "-g", "-i", f).stdout.split()
        with tempfile.TemporaryDirectory() as t:
            out = os.path.join(t, "p.data")
            perf("record", "-q", "-o", out, "-e",
                 "cs,{cpu-clock,task-clock:u}", "-a", "--", "sleep", "0.2")
            theirs = perf("evlist", "-g", "-i", out).stdout.split()
        assert "{cpu-clock,task-clock:u}" in ours, ours
        assert [x for x in ours if not x.startswith("dummy")] == \
            [x for x in theirs if not x.startswith("dummy")], (ours, theirs)


def test_refused_forms_say_why():
    cases = [("cpu-clock:x", "bad modifier 'x'"),
             ("cpu-clock:pppp", "at most ppp"),
             ("software/cpu-clock/", "unknown term 'cpu-clock' for pmu "
              "'software'"),
             ("nopmu/config=1/", "no PMU named 'nopmu'"),
             ("{cpu-clock,task-clock", "a group ends in '}'"),
             ("sched:no_such_tracepoint", "no such tracepoint")]
    if not os.path.exists(os.path.join(PMUS, "cpu")):
        cases.append(("r1a8", "has none"))
        cases.append(("cycles:u", "no hardware PMU"))
    if os.path.exists(os.path.join(PMUS, "msr")):
        # the msr PMU counts but never samples
        cases.append(("msr/tsc/", "the kernel refuses it"))
    with Daemon() as d:
        for ev, why in cases:
            rc, rep = d.ctl("start", "-e", ev, check=False)
            assert rc == 1, (ev, rep)
            assert why in rep["error"]["message"], (ev, rep)
            assert rep["error"]["code"] == "bad-event", rep
        # configure checks the syntax too, before any start
        rc, rep = d.ctl("configure", "events=cpu-clock:q", check=False)
        assert rc == 1 and "bad modifier 'q'" in rep["error"]["message"]
        assert d.status()["state"] == "idle"


def test_cpu_list_records_those_cpus_only():
    if os.cpu_count() < 2:
        raise Skip("one CPU: -C cannot leave one out")
    with Daemon() as d:
        f = record(d, "-C", "1", "-e", "cpu-clock", secs=1)
        perf_valid(f)
        cpus = set(perf("script", "-F", "cpu", "-i", f).stdout.split())
        assert cpus == {"[001]"}, cpus
        rc, rep = d.ctl("start", "-C", "4095", check=False)
        assert rc == 1 and "none of 4095 is online" in \
            rep["error"]["message"], rep
        rc, rep = d.ctl("start", "-C", "1-x", check=False)
        assert rc == 1 and rep["error"]["key"] == "cpus", rep


def test_all_user_leaves_the_kernel_out():
    spin = subprocess.Popen([SPINNER, "2"], stdout=subprocess.DEVNULL)
    try:
        with Daemon() as d:
            f = record(d, "--all-user", "-e", "cpu-clock", secs=1)
            a = attrs_in(f)
            assert "exclude_kernel: 1" in a["cpu-clock"], a
            # no sample in the kernel: perf script's ips are all user's
            ips = perf("script", "-F", "ip", "-G", "-i", f).stdout.split()
            ips = [int(x, 16) for x in ips if x]
            assert ips and all(x < 0xffff800000000000 for x in ips), \
                hex(max(ips))
            rc, rep = d.ctl("start", "--all-user", "--all-kernel",
                            check=False)
            assert rc == 1 and "exclude each other" in \
                rep["error"]["message"], rep
    finally:
        spin.wait()


def session_file(d, name):
    return [f for f in d.finished_files() if "-%s-" % name in f][-1]


def sample_pids(path):
    """{pid: comm} of every sample, perf script's."""
    out = {}
    for line in perf("script", "-F", "pid,comm", "-i",
                     path).stdout.splitlines():
        p = line.split()
        if len(p) >= 2:
            out[int(p[-1])] = " ".join(p[:-1])
    return out


def descendants(path, root):
    """root and every task it forked, by the file's FORK records as perf
    script shows them (an ASan build's spinner forks LeakSanitizer's
    task at its exit: a child too)."""
    tree = {root}
    for line in perf("script", "--show-task-events", "-i",
                     path).stdout.splitlines():
        if "PERF_RECORD_FORK(" not in line:
            continue
        child, parent = line.split("PERF_RECORD_FORK(")[1].split(":(")
        if int(parent.split(":")[0]) in tree:
            tree.add(int(child.split(":")[0]))
    return tree


def test_session_with_pid_records_that_process_and_its_children_only():
    """-p PID: the process's samples and its children's, forked after the
    start (inherit), and no other process's: an unrelated spinner runs
    beside it all the time."""
    other = subprocess.Popen([SPINNER, "6"], stdout=subprocess.DEVNULL)
    parent = subprocess.Popen(
        ["sh", "-c", "read x; %s 1 & %s 1; wait" % (SPINNER, SPINNER)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    kids = set()
    try:
        with Daemon() as d:
            # the default recording is the machine's: no target there
            rc, rep = d.ctl("start", "-p", str(parent.pid), check=False)
            assert rc == 1 and "for a session" in \
                rep["error"]["message"], rep
            d.ctl("start", "--session", "dive", "-p", str(parent.pid),
                  "-F", "499", "-e", "cpu-clock")
            parent.stdin.write(b"go\n")
            parent.stdin.flush()
            path = "/proc/%d/task/%d/children" % (parent.pid, parent.pid)

            def seen():
                try:
                    with open(path) as f:
                        kids.update(int(x) for x in f.read().split())
                except OSError:
                    pass
                return parent.poll() is not None
            wait_for(seen, timeout=120, what="the children to finish")
            d.ctl("stop", "--session", "dive")
            f = session_file(d, "dive")
            perf_valid(f)
            pids = sample_pids(f)
            tree = descendants(f, parent.pid)
    finally:
        parent.wait()
        other.kill()
        other.wait()
    assert other.pid not in pids, pids
    assert kids <= tree, (kids, tree)
    assert set(pids) <= tree, (pids, tree, parent.pid)
    assert len(set(pids) & kids) >= 1, (pids, kids)
    assert "spinner" in pids.values(), pids


def test_session_with_tid_and_user():
    """-t TID records that thread; -u USER the processes of USER."""
    uid = 65534
    mine = subprocess.Popen(["setpriv", "--reuid", str(uid), "--regid",
                             str(uid), "--clear-groups", SPINNER, "3"],
                            stdout=subprocess.DEVNULL)
    root = subprocess.Popen([SPINNER, "3"], stdout=subprocess.DEVNULL)
    try:
        with Daemon() as d:
            d.ctl("start", "--session", "t", "-t", str(root.pid), "-F",
                  "499", "-e", "cpu-clock")
            d.ctl("start", "--session", "u", "-u", str(uid), "-F", "499",
                  "-e", "cpu-clock")
            time.sleep(1)
            d.ctl("stop", "--session", "t")
            d.ctl("stop", "--session", "u")
            t = sample_pids(session_file(d, "t"))
            ttree = descendants(session_file(d, "t"), root.pid)
            u = sample_pids(session_file(d, "u"))
            rc, rep = d.ctl("start", "--session", "x", "-p", "999999999",
                            check=False)
            assert rc == 1 and "no process" in rep["error"]["message"], rep
            rc, rep = d.ctl("start", "--session", "x", "-u",
                            "no-such-user-x", check=False)
            assert rc == 1 and "no user" in rep["error"]["message"], rep
    finally:
        mine.wait()
        root.wait()
    assert root.pid in t and set(t) <= ttree, (t, ttree)
    assert mine.pid in u and root.pid not in u, (u, mine.pid)


if __name__ == "__main__":
    main(globals())
