"""pytest options of the Python API tests: --build names the build whose extension is tested."""
import os
import sys

import pytest


def pytest_addoption(parser):
    parser.addoption("--build", default=os.environ.get("TILEBANK_BUILD", "build"), help="the CMake build directory")


@pytest.fixture(scope="session")
def build_dir(request):
    return os.path.abspath(request.config.getoption("--build"))


def pytest_configure(config):
    build = os.path.abspath(config.getoption("--build"))
    sys.path.insert(0, os.path.join(build, "python"))
