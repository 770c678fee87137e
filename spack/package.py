# SPDX-License-Identifier: BSD-3-Clause
# Spack recipe for haloshift. Use it from a local repository:
#   spack repo create ~/spack-haloshift && mkdir -p ~/spack-haloshift/packages/haloshift
#   cp spack/package.py ~/spack-haloshift/packages/haloshift/ && spack repo add ~/spack-haloshift
#   spack install haloshift            # or: spack install haloshift ~auto  (the MPI-only core)
#   spack install haloshift +c +fortran +python   # the compiled bindings (docs/bindings.md)
#   spack test run haloshift           # compiles and runs a tiny consumer against the install

from spack.package import *


class Haloshift(CMakePackage):
    """C++20 MPI library (headers, and libhaloshift for faster builds) of halo and neighbourhood exchange
    strategies for codes on Cartesian grids of boxes (molecular dynamics,
    stencils): Shift, TeamShift, SingleHop, TTL multi-hop and neighbourhood
    collectives, for blocks, particles and grid fields. The optional model
    layer (+auto) adds a Hockney cost model, machine calibration files and
    Auto, which runs the strategy predicted fastest."""

    homepage = "https://github.com/haloshift/haloshift"
    url = "https://github.com/haloshift/haloshift/archive/refs/tags/v0.1.0.tar.gz"
    git = "https://github.com/haloshift/haloshift.git"

    license("BSD-3-Clause")

    version("main", branch="main")
    # Fetched from git by tag (no tarball checksum is published yet).
    version("0.1.0", tag="v0.1.0")

    variant(
        "auto",
        default=True,
        description="Model layer haloshift::auto: cost model, calibration files, Auto "
        "(needs nlohmann-json)",
    )
    variant(
        "compiled",
        default=True,
        description="libhaloshift, target haloshift::compiled: the builders compiled once, so code using "
        "the library compiles in a third of the time",
    )
    variant("tests", default=False, description="Build the tests (run by --test=root)")
    variant(
        "examples",
        default=False,
        description="Build and install the examples and tools (haloshift-calibrate, -advise, -md)",
    )

    variant(
        "c",
        default=False,
        description="The C interface haloshift::c (libhaloshift_c, haloshift.h, haloshift-c.pc)",
    )
    variant("fortran", default=False, description="The Fortran 2008 module haloshift, on the C interface")
    variant(
        "python",
        default=False,
        description="The Python package haloshift (pybind11, mpi4py, numpy), on the C interface",
    )

    conflicts("~auto", when="+tests", msg="haloshift's tests use the model layer (+auto)")
    conflicts("~auto", when="+examples", msg="haloshift's examples use the model layer (+auto)")
    for _binding in ("+c", "+fortran", "+python"):
        # Fortran and Python are built on the C interface, whose Auto and explain need the model layer.
        conflicts("~auto", when=_binding, msg="the C interface (and Fortran, Python on it) needs +auto")
        depends_on("c", type="build", when=_binding)

    depends_on("cxx", type="build")
    depends_on("cmake@3.21:", type="build")
    depends_on("mpi")
    depends_on("nlohmann-json@3:", when="+auto")
    depends_on("catch2@2", type=("build", "test"), when="+tests")
    depends_on("cli11", type="build", when="+examples")
    depends_on("fortran", type="build", when="+fortran")
    depends_on("python@3:", type=("build", "run"), when="+python")
    depends_on("py-pybind11", type="build", when="+python")
    depends_on("py-mpi4py", type=("build", "run"), when="+python")
    depends_on("py-numpy", type=("build", "run"), when="+python")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("HALOSHIFT_AUTO", "auto"),
            self.define_from_variant("HALOSHIFT_COMPILED", "compiled"),
            self.define_from_variant("HALOSHIFT_BUILD_TESTS", "tests"),
            self.define_from_variant("HALOSHIFT_BUILD_EXAMPLES", "examples"),
            self.define_from_variant("HALOSHIFT_C", "c"),
            self.define_from_variant("HALOSHIFT_FORTRAN", "fortran"),
            self.define_from_variant("HALOSHIFT_PYTHON", "python"),
            self.define("HALOSHIFT_BUILD_BENCHMARKS", False),
            self.define("HALOSHIFT_INSTALL", True),
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
        ]
        if spec.satisfies("+c") or spec.satisfies("+fortran") or spec.satisfies("+python"):
            args.append(self.define("MPI_C_COMPILER", spec["mpi"].mpicc))
        if spec.satisfies("+fortran"):
            args.append(self.define("MPI_Fortran_COMPILER", spec["mpi"].mpifc))
        return args

    def test_consumer(self):
        """compile a tiny MPI program against the installed headers and run it on one rank"""
        with open("haloshift_consumer.cpp", "w") as source:
            source.write(CONSUMER_SOURCE)
        mpicxx = Executable(self.spec["mpi"].mpicxx)
        mpicxx("-std=c++20", "-I" + self.prefix.include, "haloshift_consumer.cpp", "-o", "hs")
        mpiexec = which("mpiexec", "mpirun", path=self.spec["mpi"].prefix.bin, required=True)
        out = mpiexec("-n", "1", join_path(".", "hs"), output=str, error=str)
        assert "26 blocks" in out, out


# The smoke test's consumer: the halo of one rank on a periodic 3D grid has 26 blocks.
CONSUMER_SOURCE = r"""#include <haloshift/haloshift.hpp>
#include <cstdio>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    haloshift::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0},
                                                    .periodic = {true, true, true}});
    std::vector<double> mine{1.0 * grid.rank()};
    const auto halo = haloshift::exchange<haloshift::Shift>(grid, 1, mine);
    status = halo.size() == 26 ? 0 : 1;
    std::printf("haloshift %d.%d.%d: %zu blocks\n", HALOSHIFT_VERSION_MAJOR,
                HALOSHIFT_VERSION_MINOR, HALOSHIFT_VERSION_PATCH, halo.size());
  }
  MPI_Finalize();
  return status;
}
"""
