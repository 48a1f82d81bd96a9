#!/usr/bin/python3
"""Runs ONNX Runtime's own Python API tests (onnxruntime/test/python/onnxruntime_test_python.py of a
checkout of the public onnxruntime repository, with the test models it opens) against
tilebank.onnxruntime, `import onnxruntime` mapped to it (install_as_onnxruntime). Nothing of ONNX
Runtime's is copied into this project: give the checkout's root.

  /usr/bin/python3 scripts/ort_python_tests.py ONNXRUNTIME_CHECKOUT [--build build] [--quiet] [TEST_FILE]

TEST_FILE (relative to the checkout) may also be onnxruntime/test/python/onnxruntime_test_python_backend.py
or onnx_backend_test_series.py (ONNX's backend tests through onnxruntime.backend, with ONNX Runtime's
own filters; it reads testdata/onnx_backend_test_series_*.jsonc beside it, which a build of ONNX
Runtime copies there from onnxruntime/test/testdata).

Prints one line per test: passed, failed or error, whether it reached tilebank.onnxruntime at all
(a test whose body runs only when CUDA, TensorRT, ROCm or a model the checkout lacks is there
passes having called nothing but get_available_providers: "not exercised"), and a failure's message. Exit status 0 when every
exercised test passed, 1 otherwise.
"""
import argparse
import os
import sys
import unittest


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", help="the root of an onnxruntime checkout")
    parser.add_argument("test_file", nargs="?", default="onnxruntime/test/python/onnxruntime_test_python.py")
    parser.add_argument("--build", default="build", help="tilebank's build directory (its python/ is imported)")
    parser.add_argument("--quiet", action="store_true", help="list only the tests that did not pass having reached the API")
    args = parser.parse_args()
    test_path = os.path.join(os.path.abspath(args.checkout), args.test_file)
    if not os.path.isfile(test_path):
        sys.exit(f"ort_python_tests: no {test_path}: give the root of an onnxruntime checkout")
    sys.path.insert(0, os.path.join(os.path.abspath(args.build), "python"))
    import tilebank.onnxruntime as ort
    ort.install_as_onnxruntime()
    api_dir = os.path.dirname(ort.__file__)
    test_dir = os.path.dirname(test_path)
    os.chdir(test_dir)  # the tests open testdata/ and write profiles relative to it
    sys.path.insert(0, test_dir)
    module = __import__(os.path.splitext(os.path.basename(test_path))[0])
    if hasattr(module, "create_backend_test"):  # onnx_backend_test_series.py: ONNX's backend tests through onnxruntime.backend
        module.create_backend_test()
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)

    calls = {"n": 0}

    # Asking which providers there are is how a test decides to skip its body: not a use of the API.
    skip_checks = {"get_available_providers", "get_all_providers"}

    def count(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(api_dir) and frame.f_code.co_name not in skip_checks:
            calls["n"] += 1

    rows = []

    class Result(unittest.TestResult):
        def startTest(self, test):
            calls["n"] = 0
            sys.setprofile(count)
            super().startTest(test)

        def stopTest(self, test):
            sys.setprofile(None)
            super().stopTest(test)

        def addSuccess(self, test):
            rows.append((test.id().split(".")[-1], "passed", calls["n"] > 0, ""))

        def _failed(self, test, err, kind):
            message = str(err[1]).strip().splitlines()
            rows.append((test.id().split(".")[-1], kind, calls["n"] > 0, f"{err[0].__name__}: {message[0] if message else ''}"))

        def addFailure(self, test, err):
            self._failed(test, err, "failed")

        def addError(self, test, err):
            self._failed(test, err, "error")

        def addSkip(self, test, reason):
            rows.append((test.id().split(".")[-1], "skipped", calls["n"] > 0, reason))

    suite.run(Result())
    width = max(len(r[0]) for r in rows)
    for name, outcome, exercised, message in rows:
        if not args.quiet or (exercised and outcome != "passed"):
            print(f"{name:{width}}  {outcome:7}  {'exercised' if exercised else 'not exercised':13}  {message}")
    exercised = [r for r in rows if r[2] and r[1] != "skipped"]
    passed = [r for r in exercised if r[1] == "passed"]
    skipped = sum(1 for r in rows if r[1] == "skipped")
    print(f"\n{len(rows)} tests: {len(exercised)} reach tilebank.onnxruntime, {len(passed)} of them pass; "
          f"{len(rows) - len(exercised) - skipped} pass or fail without reaching it; {skipped} skipped by the suite itself "
          "(another device, its own filters)")
    sys.exit(0 if len(passed) == len(exercised) else 1)


if __name__ == "__main__":
    main()
