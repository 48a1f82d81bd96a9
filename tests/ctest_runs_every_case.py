#!/usr/bin/env python3
"""Every doctest case of tilebank_tests is one CTest entry under its own name, and each entry's
command selects exactly that one case; a filter that selects none fails the run.

usage: ctest_runs_every_case.py TILEBANK_TESTS BUILD_DIR
Reads `ctest --show-only=json-v1` (the entries and their commands) in BUILD_DIR."""
import json
import os
import subprocess
import sys


def listed_cases(binary):
    out = subprocess.run([binary, "--list-test-cases", "--no-colors=true"], capture_output=True, text=True, check=True).stdout
    return [l for l in out.split("\n") if l and not l.startswith("[doctest]") and not set(l) <= {"="}]


def selected(binary, args):
    """How many cases the entry's arguments select (doctest's --count)."""
    out = subprocess.run([binary] + args + ["--count", "--no-colors=true"], capture_output=True, text=True).stdout
    for line in out.split("\n"):
        if "passing the current filters:" in line:
            return int(line.rsplit(":", 1)[1])
    raise SystemExit(f"cannot count the cases of {args}: {out}")


def main():
    binary, build = os.path.realpath(sys.argv[1]), sys.argv[2]
    cases = listed_cases(binary)
    shown = json.loads(subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True, text=True, check=True).stdout)
    entries = {t["name"]: t["command"] for t in shown["tests"] if t.get("command") and os.path.realpath(t["command"][0]) == binary}
    problems = [] if cases else ["tilebank_tests lists no test case"]
    duplicates = sorted({c for c in cases if cases.count(c) > 1})
    problems += [f"two test cases are named '{c}'" for c in duplicates]
    problems += [f"the case '{c}' has no CTest entry of its own" for c in cases if c not in entries]
    problems += [f"the CTest entry '{e}' is no case's name" for e in entries if e not in cases]
    for name, command in entries.items():
        n = selected(binary, command[1:])
        if n != 1:
            problems.append(f"the CTest entry '{name}' selects {n} test cases, not 1")
    # The guard itself: a filter that matches nothing fails.
    rc = subprocess.run([binary, "--test-case=no case is named so"], capture_output=True).returncode
    if rc == 0:
        problems.append("tilebank_tests passed a run that selected no test case")
    for p in problems:
        print("ctest_runs_every_case:", p)
    print(f"ctest_runs_every_case: {len(cases)} cases, {len(entries)} entries, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
