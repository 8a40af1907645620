"""Bash completion for perfspillctl and perfspill-flame: installed where
bash-completion loads it (meson install, so the .deb too), registered
(complete -p), and what a TAB offers: commands, start's options as
--help lists them, a setting's name for configure, perfspill-flame's
options and files."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import BUILD, main  # noqa

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "completions")


def bash(script):
    env = dict(os.environ)
    env["PATH"] = os.path.abspath(BUILD) + ":" + env["PATH"]
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p
    return p.stdout


def offered(cmd, words):
    """What a TAB after words offers (the last word being completed)."""
    fn = "_perfspillctl" if cmd == "perfspillctl" else "_perfspill_flame"
    quoted = " ".join("'%s'" % w for w in [cmd] + words)
    out = bash("source %s/%s; COMP_WORDS=(%s); COMP_CWORD=%d; %s; "
               "printf '%%s\\n' \"${COMPREPLY[@]}\"" %
               (SRC, cmd, quoted, len(words), fn))
    return out.split()


def test_meson_installs_both_where_bash_completion_looks():
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild",
                            "--quiet", "--destdir", d],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        # the build's prefix: /usr for the .deb (dh), so
        # /usr/share/bash-completion/completions
        comp = [r for r, _, _ in os.walk(d)
                if r.endswith("/share/bash-completion/completions")][0]
        assert sorted(os.listdir(comp)) == ["perfspill-flame",
                                            "perfspillctl"], comp
        for name in ("perfspillctl", "perfspill-flame"):
            out = bash("source %s/%s; complete -p %s" % (comp, name, name))
            assert out.startswith("complete ") and name in out, out


def test_perfspillctl_completes_commands_options_and_settings():
    assert sorted(offered("perfspillctl", ["sta"])) == ["start", "status"]
    assert "--all-user" in offered("perfspillctl", ["start", "--all-u"])
    assert offered("perfspillctl", ["-s", "/x", "rot"]) == ["rotate"]
    assert offered("perfspillctl", ["configure", "max_f"]) == \
        ["max_files="]
    assert "flight" in offered("perfspillctl", ["start", "--mode", "f"])


def test_perfspill_flame_completes_options_and_files():
    assert offered("perfspill-flame", ["--sin"]) == ["--since"]
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "a.data"), "w").close()
        assert offered("perfspill-flame", ["-i", d + "/a"]) == \
            [d + "/a.data"]


if __name__ == "__main__":
    main(globals())
