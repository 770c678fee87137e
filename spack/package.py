# SPDX-License-Identifier: BSD-3-Clause
# Spack recipe for haloshift. Use it from a local repository:
#   spack repo create ~/spack-haloshift && mkdir -p ~/spack-haloshift/packages/haloshift
#   cp spack/package.py ~/spack-haloshift/packages/haloshift/ && spack repo add ~/spack-haloshift
#   spack install haloshift            # or: spack install haloshift ~auto  (the MPI-only core)
#   spack test run haloshift           # compiles and runs a tiny consumer against the install

from spack.package import *


class Haloshift(CMakePackage):
    """Header-only C++20 MPI library of halo and neighbourhood exchange
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
    variant("tests", default=False, description="Build the tests (run by --test=root)")
    variant(
        "examples",
        default=False,
        description="Build and install the examples and tools (haloshift-calibrate, -advise, -md)",
    )

    conflicts("~auto", when="+tests", msg="haloshift's tests use the model layer (+auto)")
    conflicts("~auto", when="+examples", msg="haloshift's examples use the model layer (+auto)")

    depends_on("cxx", type="build")
    depends_on("cmake@3.21:", type="build")
    depends_on("mpi")
    depends_on("nlohmann-json@3:", when="+auto")
    depends_on("catch2@2", type=("build", "test"), when="+tests")
    depends_on("cli11", type="build", when="+examples")

    def cmake_args(self):
        return [
            self.define_from_variant("HALOSHIFT_AUTO", "auto"),
            self.define_from_variant("HALOSHIFT_BUILD_TESTS", "tests"),
            self.define_from_variant("HALOSHIFT_BUILD_EXAMPLES", "examples"),
            self.define("HALOSHIFT_BUILD_BENCHMARKS", False),
            self.define("HALOSHIFT_INSTALL", True),
            self.define("MPI_CXX_COMPILER", self.spec["mpi"].mpicxx),
        ]

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
