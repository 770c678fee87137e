#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks spack/package.py without Spack.

Stubs the part of the spack.package API the recipe uses, imports the recipe and
checks its license, versions, variants and dependencies, and that cmake_args()
maps every variant to a real option of the project (each -D name of the
HALOSHIFT_ family must be an option() or cache variable in CMakeLists.txt).
With --prefix (an installed haloshift) and --mpicxx/--mpiexec-dir it also runs
the recipe's test_* methods for real, in a temporary directory.
"""
import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types

directives = []  # (name, args, kwargs) in the order the recipe calls them


def _directive(name):
    def record(*args, **kwargs):
        directives.append((name, args, kwargs))
    record.__name__ = name
    return record


class Prefix(str):
    """Spack's prefix: a path whose attributes are subdirectories."""
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Prefix(os.path.join(self, name))


class ProcessError(Exception):
    pass


class Executable:
    def __init__(self, path):
        self.path = str(path)

    def __call__(self, *args, output=None, error=None, fail_on_error=True):
        cmd = [self.path, *map(str, args)]
        print("+", " ".join(cmd), flush=True)
        result = subprocess.run(cmd, stdout=subprocess.PIPE if output else None,
                                stderr=subprocess.STDOUT if error and output else (subprocess.PIPE if error else None),
                                text=True, check=False)
        if fail_on_error and result.returncode != 0:
            raise ProcessError(f"{cmd} exited with {result.returncode}: {result.stdout or ''}")
        text = (result.stdout or "") + ((result.stderr or "") if error and not output else "")
        if output or error:
            print(text, end="", flush=True)
            return text
        return None


def which(*names, path=None, required=False):
    search = path if isinstance(path, str) or path is None else os.pathsep.join(path)
    for name in names:
        found = shutil.which(name, path=search)
        if found:
            return Executable(found)
    if required:
        raise ProcessError(f"none of {names} found in {search}")
    return None


class VariantValue:
    def __init__(self, value):
        self.value = value


class Spec:
    def __init__(self, variants, deps):
        self.variants = {k: VariantValue(v) for k, v in variants.items()}
        self._deps = deps

    def __getitem__(self, name):
        return self._deps[name]

    def satisfies(self, constraint):
        for m in re.finditer(r"([+~])(\w+)", constraint):
            if self.variants[m.group(2)].value != (m.group(1) == "+"):
                return False
        return True

    __contains__ = satisfies


def _cmake_value(value):
    if isinstance(value, bool):
        return "BOOL", "ON" if value else "OFF"
    if isinstance(value, (list, tuple)):
        return "STRING", ";".join(map(str, value))
    return "STRING", str(value)


class CMakePackage:
    def __init__(self, spec, prefix):
        self.spec = spec
        self.prefix = Prefix(prefix)

    def define(self, name, value):
        kind, text = _cmake_value(value)
        return f"-D{name}:{kind}={text}"

    def define_from_variant(self, name, variant=None):
        variant = variant or name.lower()
        if variant not in self.spec.variants:
            raise KeyError(f"define_from_variant: no variant '{variant}'")
        return self.define(name, self.spec.variants[variant].value)


def stub_spack():
    package = types.ModuleType("spack.package")
    for name in ("version", "variant", "depends_on", "conflicts", "license", "maintainers", "requires", "provides",
                 "patch", "resource", "extends"):
        setattr(package, name, _directive(name))
    for name, value in dict(CMakePackage=CMakePackage, Executable=Executable, which=which, Prefix=Prefix,
                            ProcessError=ProcessError, join_path=os.path.join, mkdirp=os.makedirs).items():
        setattr(package, name, value)
    package.__all__ = [n for n in vars(package) if not n.startswith("_")]
    spack = types.ModuleType("spack")
    spack.package = package
    sys.modules["spack"] = spack
    sys.modules["spack.package"] = package


def load_recipe(path):
    stub_spack()
    sys.dont_write_bytecode = True  # no __pycache__ next to the recipe
    spec = importlib.util.spec_from_file_location("haloshift_spack_recipe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Haloshift


failures = []


def check(condition, what, quiet=False):
    if not condition or not quiet:
        print(("ok:   " if condition else "FAIL: ") + what, flush=True)
    if not condition:
        failures.append(what)


def calls(name):
    return [(a, k) for n, a, k in directives if n == name]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipe", required=True)
    parser.add_argument("--cmakelists", required=True)
    parser.add_argument("--prefix", help="an installed haloshift: also run the recipe's test_* methods against it")
    parser.add_argument("--mpicxx")
    parser.add_argument("--mpiexec-dir")
    opts = parser.parse_args()

    recipe = load_recipe(opts.recipe)
    cmakelists = open(opts.cmakelists, encoding="utf-8").read()
    project = re.search(r"project\(haloshift\s+VERSION\s+([0-9.]+)", cmakelists)
    cmake_min = re.search(r"cmake_minimum_required\(VERSION\s+([0-9.]+)", cmakelists)

    check(issubclass(recipe, CMakePackage), "Haloshift is a CMakePackage")
    check(all(getattr(recipe, a, "").startswith("https://") for a in ("homepage", "url", "git")),
          "homepage, url and git are set")
    check(bool(recipe.__doc__ and recipe.__doc__.strip()), "the recipe has a description")
    check([a for a, _ in calls("license")] == [("BSD-3-Clause",)], 'license("BSD-3-Clause")')
    versions = {a[0]: k for a, k in calls("version")}
    check(versions.get("main", {}).get("branch") == "main", 'version("main", branch="main")')
    check(project is not None and project.group(1) in versions,
          f"a version for project(VERSION) {project and project.group(1)}")
    check(all(k.get("tag") or k.get("commit") or k.get("branch") or k.get("sha256") for k in versions.values()),
          "every version has a tag, commit, branch or checksum")

    variants = {a[0]: k for a, k in calls("variant")}
    check(set(variants) == {"auto", "compiled", "tests", "examples", "c", "fortran", "python"},
          f"variants auto, compiled, tests, examples, c, fortran, python ({sorted(variants)})")
    check(variants.get("auto", {}).get("default") is True, "variant auto defaults to True")
    check(all(isinstance(k.get("default"), bool) and k.get("description") for k in variants.values()),
          "every variant is boolean and described")

    deps = [(a[0], k) for a, k in calls("depends_on")]
    check(("mpi", {}) in deps, 'depends_on("mpi") unconditionally')
    check(any(n.startswith("nlohmann-json") and k.get("when") == "+auto" for n, k in deps),
          'depends_on("nlohmann-json", when="+auto")')
    check(any(n.startswith("catch2") and "test" in (k.get("type") if isinstance(k.get("type"), (tuple, list))
                                                   else (k.get("type"),)) for n, k in deps),
          'depends_on("catch2", type includes "test")')
    cmake_dep = [n for n, k in deps if n.startswith("cmake@") and k.get("type") == "build"]
    check(bool(cmake_dep) and cmake_min is not None and cmake_dep[0] == f"cmake@{cmake_min.group(1)}:",
          f'depends_on("cmake@{cmake_min and cmake_min.group(1)}:", type="build") matches cmake_minimum_required')

    # cmake_args: every HALOSHIFT_ name is a real option, every variant maps to its option, both ways.
    expected = {"auto": "HALOSHIFT_AUTO", "compiled": "HALOSHIFT_COMPILED", "tests": "HALOSHIFT_BUILD_TESTS",
                "examples": "HALOSHIFT_BUILD_EXAMPLES", "c": "HALOSHIFT_C", "fortran": "HALOSHIFT_FORTRAN", "python": "HALOSHIFT_PYTHON"}
    known_outside = {"MPI_CXX_COMPILER", "MPI_C_COMPILER", "MPI_Fortran_COMPILER"}  # FindMPI's
    mpi = types.SimpleNamespace(mpicxx="/spack/mpi/bin/mpicxx", mpicc="/spack/mpi/bin/mpicc",
                                mpifc="/spack/mpi/bin/mpif90", prefix=Prefix("/spack/mpi"))
    defaults = {name: k["default"] for name, k in variants.items()}
    for flipped in [None, *defaults]:
        values = dict(defaults)
        if flipped:
            values[flipped] = not values[flipped]
        package = recipe(Spec(values, {"mpi": mpi}), "/spack/haloshift")
        args = package.cmake_args()
        failed_before = len(failures)
        parsed = {}
        for arg in args:
            m = re.fullmatch(r"-D([A-Za-z0-9_]+)(?::([A-Z]+))?=(.*)", arg)
            check(m is not None, f"cmake argument {arg} is -DNAME[:TYPE]=VALUE", quiet=True)
            if m:
                parsed[m.group(1)] = m.group(3)
        print(f"      {' '.join(args)}", flush=True)
        label = f"cmake_args() with {'defaults' if not flipped else flipped + '=' + str(values[flipped])}"
        for name in parsed:
            if name.startswith("HALOSHIFT_"):
                check(re.search(r"(option|set)\(\s*" + name + r"\s", cmakelists) is not None,
                      f"{label}: -D{name} is an option() or cache variable of CMakeLists.txt", quiet=True)
            else:
                check(name in known_outside, f"{label}: -D{name} is a known CMake/FindMPI variable", quiet=True)
        for variant, option in expected.items():
            want = "ON" if values.get(variant) else "OFF"
            check(parsed.get(option) == want, f"{label}: {variant}={values.get(variant)} gives -D{option}={want}",
                  quiet=True)
        check(len(failures) == failed_before,
              f"{label}: every -D name is an option of CMakeLists.txt (or FindMPI's), each variant sets its own")

    tests = [n for n, f in vars(recipe).items() if n.startswith("test_") and callable(f)]
    check(bool(tests) and all(getattr(recipe, n).__doc__ for n in tests), f"documented test_* methods ({tests})")

    if opts.prefix:
        mpi = types.SimpleNamespace(mpicxx=opts.mpicxx, prefix=Prefix(os.path.dirname(opts.mpiexec_dir.rstrip("/"))))
        package = recipe(Spec(defaults, {"mpi": mpi}), os.path.abspath(opts.prefix))
        for name in tests:
            with tempfile.TemporaryDirectory(prefix="haloshift-spack-test-") as work:
                old = os.getcwd()
                os.chdir(work)
                try:
                    getattr(package, name)()
                    check(True, f"{name}() against {opts.prefix}")
                except Exception as e:  # noqa: BLE001 - report every failure alike
                    check(False, f"{name}() against {opts.prefix}: {e}")
                finally:
                    os.chdir(old)

    if failures:
        print(f"{len(failures)} check(s) failed", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
