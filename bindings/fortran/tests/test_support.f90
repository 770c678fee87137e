! SPDX-License-Identifier: BSD-3-Clause
! What the Fortran test programs share: how they end.
module fortran_test_support
  use, intrinsic :: iso_fortran_env, only: output_unit
  use mpi_f08, only: MPI_Allreduce, MPI_Comm_rank, MPI_Finalize, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD
  implicit none
  private
  public :: conclude

contains

  !> Ends a test program: the failures of every rank summed and printed after `summary` by rank 0,
  !> MPI finalized, exit status 1 (error stop) when any rank failed.
  subroutine conclude(summary, failures)
    character(*), intent(in) :: summary
    integer, intent(in) :: failures
    integer :: total, rank
    call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    if (rank == 0) write (output_unit, '(a, ": ", i0, " failures")') summary, total
    call MPI_Finalize()
    if (total /= 0) error stop 1
  end subroutine
end module fortran_test_support
