#!/usr/bin/env python3
"""Fails when a build read a header or library that a fresh Debian 12 machine would not have after
`bash scripts/setup.sh`: a package installed by hand on the build machine hides a missing install
step, and CI on that machine cannot see it (issue 12: oneDNN's CMake config needed OpenCL).

  usage: check_build_packages.py BUILD_DIR [--setup scripts/setup.sh]

What the build read: the compiler's dependency files (*.d, compiler_depend.make, depend.make; for a
Ninja build, `ninja -t deps`), the link lines (link.txt, build.ninja) and the library/header paths
CMake cached. Each file under /usr is
mapped to its Debian package through dpkg's file lists. Allowed: the packages setup.sh's
`packages=( ... )` array names, their dependencies (recursively, without Recommends, as setup.sh
installs), and the essential ones (Essential: yes or Priority: required). Anything else is printed
as `package: file` (or `(no package): file`) and the exit code is 1; 2 for a bad invocation.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

LIBRARY_OR_HEADER = re.compile(r"\.(so(\.[0-9.]+)?|a|h|hh|hpp|hxx|inc|tcc|ipp)$|/include/c\+\+/")
PATH_IN_TEXT = re.compile(r"/usr/[^\s:;\"'\\()]+")


def setup_packages(setup_path):
    """The words of setup.sh's packages=( ... ) array, comments dropped."""
    with open(setup_path) as f:
        text = f.read()
    match = re.search(r"packages=\((.*?)\n\)", text, re.S)
    if not match:
        raise SystemExit(f"check_build_packages: no packages=( ... ) array in {setup_path}")
    words = []
    for line in match.group(1).splitlines():
        words += line.split("#", 1)[0].split()
    return sorted(set(words))


def dependency_closure(packages):
    """The packages and everything they depend on (Depends and Pre-Depends, recursively)."""
    out = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                          "--no-breaks", "--no-replaces", "--no-enhances", *packages],
                         capture_output=True, text=True, check=False).stdout
    closure = set()
    for line in out.splitlines():
        if not line.startswith(" "):
            closure.add(line.strip().strip("<>").split(":")[0])
    return closure


def essential_packages():
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Essential} ${Priority}\n"],
                         capture_output=True, text=True, check=False).stdout
    return {f[0] for f in (line.split() for line in out.splitlines()) if len(f) == 3 and (f[1] == "yes" or f[2] == "required")}


def file_owners():
    """Every path dpkg installed, mapped to its package (from /var/lib/dpkg/info/*.list)."""
    owners = {}
    for listing in glob.glob("/var/lib/dpkg/info/*.list"):
        package = os.path.basename(listing)[: -len(".list")].split(":")[0]
        with open(listing, errors="replace") as f:
            for path in f:
                owners.setdefault(path.rstrip("\n"), package)
    return owners


def files_read(build_dir):
    """Headers and libraries under /usr named by the build's dependency files, link lines and cache."""
    texts = [os.path.join(build_dir, "CMakeCache.txt"), os.path.join(build_dir, "build.ninja")]
    for pattern in ("**/*.d", "**/compiler_depend.make", "**/depend.make", "**/link.txt"):
        texts += glob.glob(os.path.join(build_dir, pattern), recursive=True)
    blobs = []
    for path in texts:
        try:
            with open(path, errors="replace") as f:
                blobs.append(f.read())
        except OSError:
            continue
    if os.path.isfile(os.path.join(build_dir, ".ninja_deps")):  # Ninja keeps the compilers' dependency lists here
        blobs.append(subprocess.run(["ninja", "-C", build_dir, "-t", "deps"], capture_output=True, text=True, check=False).stdout)
    found = set()
    for text in blobs:
        for raw in PATH_IN_TEXT.findall(text):
            p = os.path.normpath(raw)
            if LIBRARY_OR_HEADER.search(p) and os.path.isfile(p):
                found.add(p)
    return sorted(found)


def owner_of(path, owners):
    """The package owning `path`, trying it as written, merged-/usr spellings and its real path."""
    real = os.path.realpath(path)
    for candidate in (path, real):
        for spelling in (candidate, candidate.replace("/usr/lib/", "/lib/", 1), candidate.replace("/usr/bin/", "/bin/", 1)):
            if spelling in owners:
                return owners[spelling]
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("--setup", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "setup.sh"))
    args = parser.parse_args()
    if not os.path.isfile(os.path.join(args.build_dir, "CMakeCache.txt")):
        print(f"check_build_packages: {args.build_dir} is not a configured build directory (no CMakeCache.txt)", file=sys.stderr)
        return 2
    wanted = setup_packages(args.setup)
    allowed = dependency_closure(wanted) | essential_packages() | set(wanted)
    owners = file_owners()
    unexpected = {}
    files = files_read(args.build_dir)
    for path in files:
        package = owner_of(path, owners)
        if package not in allowed:
            unexpected.setdefault(package or "(no package)", []).append(path)
    if not unexpected:
        return 0
    print(f"The build in {args.build_dir} read files that a fresh machine would not have after {args.setup}:")
    for package in sorted(unexpected):
        paths = unexpected[package]
        print(f"  {package}: {paths[0]}" + (f" (and {len(paths) - 1} more)" if len(paths) > 1 else ""))
    print("Add the packages to the packages=( ... ) array of scripts/setup.sh (or stop using them).")
    return 1


if __name__ == "__main__":
    sys.exit(main())
