"""Test cgroups for the integration tests: made with mkdir under this
machine's cgroup2 mount (found in mountinfo: /sys/fs/cgroup on a unified
system, /sys/fs/cgroup/unified on a hybrid one), loads moved in through
cgroup.procs, removed afterwards."""
import os
import subprocess
import time

import harness
from harness import Skip


def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            if post.split()[0] == "cgroup2":
                return pre.split()[4]
    return None


def into(path):
    """A command prefix (a harness.Daemon or harness.syscalls wrapper):
    the shell moves itself into the cgroup at path, then execs the
    command."""
    return ["sh", "-c", 'echo $$ > "$0" && exec "$@"',
            os.path.join(path, "cgroup.procs")]


class Cgroups:
    """Fresh test cgroups below the cgroup2 mount, removed on exit."""

    def __init__(self, *names):
        self.mount = cgroup2_mount()
        if self.mount is None:
            raise Skip("no cgroup2 hierarchy mounted")
        tag = "perfspill-test-%d" % os.getpid()
        self.rel = {n: "%s-%s" % (tag, n) for n in names}
        self.made = []
        try:
            for n in names:
                p = os.path.join(self.mount, self.rel[n])
                os.mkdir(p)
                self.made.append(p)
        except OSError as e:
            self.close()
            raise Skip("cannot make a cgroup under %s: %s" % (self.mount, e))

    def path(self, name):
        return os.path.join(self.mount, self.rel[name])

    def wrapper(self, name):
        """A command prefix that moves the command into cgroup name before
        it execs."""
        return into(self.path(name))

    def spinner(self, name, secs, cpu=None):
        """A spinner that runs inside cgroup name from its first instruction:
        the shell moves itself in, then becomes the spinner (pinned to
        cpu, when given)."""
        procs = os.path.join(self.path(name), "cgroup.procs")
        pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
        p = subprocess.Popen(pin + ["sh", "-c",
                                    'echo $$ > "$1" && exec "$2" "$3"',
                                    "sh", procs, harness.SPINNER, str(secs)],
                             stdout=subprocess.PIPE)
        assert p.stdout.readline().strip() == b"ready"
        return p

    def close(self):
        for p in reversed(self.made):
            # a task that has just exited may still count for a moment
            for _ in range(200):
                try:
                    os.rmdir(p)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)
        self.made = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def memory_v1_mount():
    """Where the v1 memory controller is mounted, or None (a unified
    system has its memory controller on cgroup2)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            p = post.split()
            if p[0] == "cgroup" and "memory" in p[2].split(","):
                return pre.split()[4]
    return None


class MemoryCgroup:
    """A fresh cgroup with a memory limit for a daemon to run in: cgroup2's
    memory.max where the memory controller is on the unified hierarchy,
    else the v1 controller's memory.limit_in_bytes. wrapper() is a
    harness.Daemon wrapper that moves the daemon in before it execs."""

    def __init__(self, limit):
        name = "perfspill-test-mem-%d" % os.getpid()
        v1 = memory_v1_mount()
        if v1 is not None:
            self.path = os.path.join(v1, name)
            knob = "memory.limit_in_bytes"
        else:
            m = cgroup2_mount()
            if m is None:
                raise Skip("no memory cgroup controller mounted")
            with open(os.path.join(m, "cgroup.controllers")) as f:
                if "memory" not in f.read().split():
                    raise Skip("the memory controller is not available "
                               "on %s" % m)
            try:
                with open(os.path.join(m, "cgroup.subtree_control"),
                          "w") as f:
                    f.write("+memory")
            except OSError as e:
                raise Skip("cannot enable the memory controller: %s" % e)
            self.path = os.path.join(m, name)
            knob = "memory.max"
        self.knob = os.path.join(self.path, knob)
        try:
            os.mkdir(self.path)
            with open(self.knob, "w") as f:
                f.write(str(limit))
        except OSError as e:
            self.close()
            raise Skip("cannot make a memory cgroup %s: %s" % (self.path, e))

    def wrapper(self):
        return into(self.path)

    def close(self):
        for _ in range(200):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
