! SPDX-License-Identifier: BSD-3-Clause
! Bad input through the Fortran module: each call returns a nonzero stat and an errmsg naming the
! problem, on every rank, and never crashes or hangs; a correct exchange afterwards still works.
! Arrays without ghost room (low side, high side), of the wrong rank, not contiguous, not
! allocated; a plan never created; a reverse with no such operation; an unknown strategy, a grid
! of impossible dims (collective: every rank gets the error), grids over MPI_COMM_NULL and a
! calibration file that does not exist.
program test_misuse
  use, intrinsic :: iso_fortran_env, only: real64, int32, output_unit
  use mpi_f08, only: MPI_Init, MPI_COMM_WORLD, MPI_COMM_NULL, MPI_Comm_rank, MPI_Comm_size
  use haloshift
  use fortran_test_support, only: conclude
  implicit none
  type(hs_grid) :: grid, bad_grid
  type(hs_field_plan) :: plan, never_made, bad_plan
  real(real64), allocatable, target :: no_low(:, :, :), no_high(:, :, :), good(:, :, :), flat(:, :), wide(:, :, :)
  real(real64), allocatable, target :: unallocated(:, :, :), roomy(:, :, :)
  integer(int32), allocatable, target :: ints(:, :, :)
  integer :: n(3), rank, ranks, failures, status
  character(len=400) :: message

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks)
  failures = 0
  call hs_grid_create(grid, MPI_COMM_WORLD)
  call hs_field_plan_create(plan, grid, [8, 8, 8], ghost=1, strategy='Shift')
  call hs_field_plan_shape(plan, interior=n)

  allocate (no_low(1:n(1) + 1, 0:n(2) + 1, 0:n(3) + 1), no_high(0:n(1) + 1, 0:n(2) + 1, 0:n(3)))
  allocate (good(0:n(1) + 1, 0:n(2) + 1, 0:n(3) + 1), flat(0:n(1) + 1, 0:n(2) + 1))
  allocate (wide(0:2 * n(1) + 3, 0:n(2) + 1, 0:n(3) + 1), ints(0:n(1) + 1, 0:n(2) + 1, 0:n(3) + 1))

  call hs_forward(plan, no_low, stat=status, errmsg=message)
  call expect('no room below', 'spans 1:')
  call hs_reverse(plan, no_high, HS_SUM, stat=status, errmsg=message)
  call expect('no room above', 'along dimension 3')
  call hs_start_forward(plan, flat, stat=status, errmsg=message)
  call expect('rank 2 for 3 dimensions', 'rank-2 array')
  call hs_forward(plan, wide(0:2 * n(1) + 3:2, :, :), stat=status, errmsg=message)
  call expect('a strided section', 'not contiguous')
  call hs_forward(plan, unallocated, stat=status, errmsg=message)
  call expect('an unallocated array', 'not allocated')
  call hs_forward(never_made, good, stat=status, errmsg=message)
  call expect('a plan never created', 'not created')
  call hs_reverse(plan, ints, 7, stat=status, errmsg=message)
  call expect('no such reduction', '7')
  call hs_field_plan_create(bad_plan, grid, [8, 8, 8], strategy='NoSuchStrategy', stat=status, errmsg=message)
  call expect('an unknown strategy', 'NoSuchStrategy')
  call hs_grid_create(bad_grid, MPI_COMM_WORLD, dims=[ranks + 1, 1, 1], stat=status, errmsg=message)
  call expect('dims that do not fit the ranks', 'dims')
  call hs_grid_create(bad_grid, MPI_COMM_WORLD, dims=[1, 1], periodic=[.true.], stat=status, errmsg=message)
  call expect('dims and periodic of different sizes', 'must agree')
  call hs_use_calibration('/nonexistent/calibration.json', stat=status, errmsg=message)
  call expect('a calibration file that does not exist', '/nonexistent/calibration.json')
  call hs_grid_create(bad_grid, MPI_COMM_NULL, stat=status, errmsg=message)
  call expect('mpi_f08 MPI_COMM_NULL', 'MPI_COMM_NULL')
  call hs_grid_create(bad_grid, MPI_COMM_NULL%MPI_VAL, stat=status, errmsg=message)
  call expect('integer MPI_COMM_NULL', 'MPI_COMM_NULL')

  ! The plan still works: a forward of a correct array fills the ghosts (from a wrapped neighbour).
  good = -1
  good(1:n(1), 1:n(2), 1:n(3)) = rank
  call hs_forward(plan, good, stat=status)
  if (status /= HS_OK .or. any(good(0, 1:n(2), 1:n(3)) < 0)) then
    write (output_unit, '("FAIL rank ", i0, ": a correct forward after the errors: stat ", i0)') rank, status
    failures = failures + 1
  end if

  ! More ghost room than the plan's: the plan's layer is filled, the extra one left alone.
  allocate (roomy(-1:n(1) + 2, -1:n(2) + 2, -1:n(3) + 2))
  roomy = -1
  roomy(1:n(1), 1:n(2), 1:n(3)) = rank
  call hs_forward(plan, roomy, stat=status)
  if (status /= HS_OK .or. any(roomy(0, 1:n(2), 1:n(3)) < 0) .or. any(roomy(-1, :, :) /= -1) .or. &
      any(roomy(n(1) + 2, :, :) /= -1)) then
    write (output_unit, '("FAIL rank ", i0, ": a forward of an array with two ghost layers: stat ", i0)') rank, status
    failures = failures + 1
  end if

  call hs_free(plan)
  call hs_free(grid)
  call conclude('fortran misuse test', failures)

contains

  !> The last call failed with a message containing `part`.
  subroutine expect(what, part)
    character(*), intent(in) :: what, part
    if (status /= HS_OK .and. index(message, part) > 0) then
      if (rank == 0) write (output_unit, '("ok   ", a, ": ", a)') what, trim(message)
    else
      write (output_unit, '("FAIL rank ", i0, ", ", a, ": stat ", i0, ", errmsg ", a)') rank, what, status, &
          trim(message)
      failures = failures + 1
    end if
    message = ''
  end subroutine
end program test_misuse
