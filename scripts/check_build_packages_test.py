#!/usr/bin/env python3
"""Tests of check_build_packages.py on made-up build directories (run by CTest)."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_build_packages.py")


def run(build_dir, setup=None):
    args = [sys.executable, CHECK, build_dir] + (["--setup", setup] if setup else [])
    p = subprocess.run(args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def make_build(root, dep_lines):
    os.makedirs(os.path.join(root, "CMakeFiles", "t.dir"), exist_ok=True)
    open(os.path.join(root, "CMakeCache.txt"), "w").close()
    with open(os.path.join(root, "CMakeFiles", "t.dir", "a.cpp.o.d"), "w") as f:
        f.write("a.cpp.o: a.cpp \\\n " + " \\\n ".join(dep_lines) + "\n")


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        # lmdb.h belongs to liblmdb-dev, which scripts/setup.sh installs: clean with the real list.
        build = os.path.join(tmp, "build")
        make_build(build, ["/usr/include/lmdb.h", "/usr/include/x86_64-linux-gnu/../stdio.h"])
        code, out = run(build)
        if code != 0:
            failures.append(f"real setup.sh: expected exit 0, got {code}: {out}")
        # The same build against a setup.sh that installs only cmake: liblmdb-dev is named with its file.
        setup = os.path.join(tmp, "setup.sh")
        with open(setup, "w") as f:
            f.write("packages=(\n  cmake   # only this\n)\n")
        code, out = run(build, setup)
        if code != 1 or "liblmdb-dev: /usr/include/lmdb.h" not in out:
            failures.append(f"reduced setup.sh: expected exit 1 naming liblmdb-dev and lmdb.h, got {code}: {out}")
        # Not a build directory: a usage error.
        code, out = run(os.path.join(tmp, "nothing"))
        if code != 2 or "CMakeCache.txt" not in out:
            failures.append(f"missing build dir: expected exit 2, got {code}: {out}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
