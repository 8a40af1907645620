"""A Debian 12 container that boots systemd, for tests of the real units.

The root is debootstrapped once (minbase with systemd, dbus, and what the
package and ship-example.sh need, so that nothing inside needs a network)
and kept under CACHE for the next run; each run boots an overlay of it,
so that the cached root never changes:

    systemd-nspawn --register=no --keep-unit -D ROOT --boot
        --console=pipe --capability=all
        --system-call-filter=perf_event_open --private-network

--private-network: the container has its own loopback and no way out;
its HTTP receiver listens there. Commands run inside with nsenter into
every namespace of its systemd.
"""
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time

CACHE = os.environ.get("PERFSPILL_NSPAWN_CACHE",
                       "/var/cache/perfspill/nspawn")
SUITE = "bookworm"
# what dpkg -i of the package needs (its shlibs), and curl for the
# on_finish upload; no procps: the units must do without it
PACKAGES = ["systemd", "systemd-sysv", "dbus", "curl", "libevent-2.1-7",
            "libjson-c5", "libzstd1", "libsystemd0",
            # perfspill-flame: elfutils symbolizes, zlib writes pprof
            "libdw1", "libelf1", "libdebuginfod1", "zlib1g"]
ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
       "LANG": "C.UTF-8"}


def log(msg):
    print("container: " + msg, flush=True)


def cached_root():
    """The debootstrapped root for PACKAGES, built once (under a lock, so
    that two runs at once build it once)."""
    key = hashlib.sha256((SUITE + " " + ",".join(sorted(PACKAGES)))
                         .encode()).hexdigest()[:12]
    base = os.path.join(CACHE, "%s-%s" % (SUITE, key))
    root = os.path.join(base, "root")
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(base, "complete")):
            log("cached root %s" % root)
            return root
        shutil.rmtree(root, ignore_errors=True)
        log("debootstrap %s into %s (once; about a minute or two)" %
            (SUITE, root))
        t0 = time.monotonic()
        p = subprocess.run(["debootstrap", "--variant=minbase",
                            "--include=" + ",".join(PACKAGES), SUITE, root],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("debootstrap failed:\n" + p.stdout[-3000:] +
                               p.stderr[-3000:])
        # nothing of the host's: a machine-id of its own at first boot
        open(os.path.join(root, "etc", "machine-id"), "w").close()
        open(os.path.join(base, "complete"), "w").close()
        log("debootstrap took %.0fs" % (time.monotonic() - t0))
        return root


class Container:
    def __init__(self, name="perfspill-ci"):
        self.name = name
        self.work = tempfile.mkdtemp(prefix="perfspill-nspawn-")
        self.root = os.path.join(self.work, "root")
        self.proc = None
        self.pid = None
        self.mounted = False

    def boot(self):
        lower = cached_root()
        upper = os.path.join(self.work, "upper")
        wd = os.path.join(self.work, "overlay-work")
        for d in (upper, wd, self.root):
            os.mkdir(d)
        p = subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                            "lowerdir=%s,upperdir=%s,workdir=%s" %
                            (lower, upper, wd), self.root],
                           capture_output=True, text=True)
        if p.returncode == 0:
            self.mounted = True
        else:
            # no overlayfs here: a copy does as well, more slowly
            log("no overlay (%s); copying the root" % p.stderr.strip())
            os.rmdir(self.root)
            subprocess.run(["cp", "-a", "--reflink=auto", lower, self.root],
                           check=True)
        self.console = open(os.path.join(self.work, "console.log"), "wb")
        self.proc = subprocess.Popen(
            ["systemd-nspawn", "--register=no", "--keep-unit", "-D",
             self.root, "--machine=" + self.name, "--boot",
             "--console=pipe", "--capability=all",
             "--system-call-filter=perf_event_open", "--private-network"],
            stdin=subprocess.DEVNULL, stdout=self.console,
            stderr=subprocess.STDOUT)
        end = time.monotonic() + 120
        while self.pid is None:
            if self.proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError("systemd-nspawn did not boot:\n" +
                                   self.console_text())
            self.pid = self._init_pid()
            time.sleep(0.1)
        # the boot is over (running, or degraded: a unit we do not use);
        # until systemd listens, systemctl cannot ask it
        while True:
            p = self.run(["systemctl", "is-system-running", "--wait"],
                         check=False, timeout=180)
            if p.stdout.strip() or time.monotonic() > end:
                break
            time.sleep(0.2)
        log("booted (pid %d): %s" % (self.pid, p.stdout.strip()))
        return self

    def _init_pid(self):
        """The container's systemd: a descendant of nspawn named systemd
        in a PID namespace of its own."""
        mine = os.readlink("/proc/self/ns/pid")
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/comm" % d) as f:
                    if f.read().strip() != "systemd":
                        continue
                if os.readlink("/proc/%s/ns/pid" % d) == mine:
                    continue
                with open("/proc/%s/status" % d) as f:
                    st = dict(l.split(":", 1) for l in f if ":" in l)
                # NSpid: its pid here, then 1 in the container
                if st.get("NSpid", "").split()[-1:] != ["1"]:
                    continue
                if self._descends(int(d), self.proc.pid):
                    return int(d)
            except OSError:
                continue
        return None

    @staticmethod
    def _descends(pid, ancestor):
        while pid > 1:
            if pid == ancestor:
                return True
            try:
                with open("/proc/%d/stat" % pid) as f:
                    pid = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                return False
        return False

    def console_text(self):
        with open(os.path.join(self.work, "console.log"), "rb") as f:
            return f.read().decode(errors="replace")[-3000:]

    def run(self, argv, check=True, timeout=120, input=None, user=None):
        """Run argv inside the container, with a plain environment."""
        if user:
            argv = ["runuser", "-u", user, "--"] + list(argv)
        p = subprocess.run(["nsenter", "-t", str(self.pid), "-a", "env",
                            "-i"] + ["%s=%s" % kv for kv in ENV.items()] +
                           list(argv), capture_output=True, text=True,
                           timeout=timeout, input=input)
        if check and p.returncode != 0:
            raise AssertionError("in the container: %s failed (%d):\n%s%s" %
                                 (" ".join(argv), p.returncode, p.stdout,
                                  p.stderr))
        return p

    def sh(self, script, check=True, timeout=120):
        return self.run(["/bin/sh", "-ec", script], check=check,
                        timeout=timeout)

    def path(self, p):
        """A path of the container's root file system, seen from here
        (not /tmp, /run: the container mounts its own there)."""
        assert not p.startswith(("/tmp", "/run")), p
        return os.path.join(self.root, p.lstrip("/"))

    def net(self, argv, **kw):
        """Start argv here, in the container's network namespace only."""
        return subprocess.Popen(["nsenter", "-t", str(self.pid), "-n"] +
                                list(argv), **kw)

    def shutdown(self):
        if self.proc is not None and self.proc.poll() is None:
            # SIGTERM: nspawn asks the container's systemd to power off
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(90)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.mounted:
            subprocess.run(["umount", "-l", self.root], check=False)
        shutil.rmtree(self.work, ignore_errors=True)


if __name__ == "__main__":
    # scripts/run-tests builds the cached root ahead, in the background,
    # while other stages compile: the stage that boots it then finds it
    # (or waits on its lock)
    cached_root()
