! SPDX-License-Identifier: BSD-3-Clause
! The cost of the Fortran module: a forward of a real64 field with one ghost layer (global n^3
! cells, default 128) through hs_forward and through the C function hs_field_forward called
! directly (module haloshift_c, the array described once), in rounds on the same plan and array,
! the order alternating. Prints the median and the fastest round's time per call of each and
! their ratios (rank 0).
!
! Usage: mpiexec -n 2 haloshift_fortran_bench_forward [n] [rounds] [calls per round] [strategy]
program bench_forward
  use, intrinsic :: iso_c_binding, only: c_loc
  use, intrinsic :: iso_fortran_env, only: real64, output_unit
  use mpi_f08, only: MPI_Init, MPI_Finalize, MPI_Barrier, MPI_Wtime, MPI_COMM_WORLD, MPI_Comm_size
  use haloshift
  use haloshift_c, only: hs_field_array, hs_field_array_init, c_forward => hs_field_forward, HS_DOUBLE, &
                         c_last_error => hs_last_error
  use haloshift_core, only: c_text
  implicit none
  type(hs_grid) :: grid
  type(hs_field_plan) :: plan
  type(hs_field_array) :: described
  real(real64), allocatable, target :: u(:, :, :)
  real(real64), allocatable :: fortran_times(:), c_times(:)
  character(len=32) :: arg, strategy
  integer :: n, rounds, calls, r, i, first(3), interior(3), rank, ranks
  real(real64) :: t, fortran_median, c_median

  call MPI_Init()
  call MPI_Comm_size(MPI_COMM_WORLD, ranks)
  n = 128
  rounds = 15
  calls = 20
  strategy = 'Auto'
  if (command_argument_count() >= 1) call read_int(1, n)
  if (command_argument_count() >= 2) call read_int(2, rounds)
  if (command_argument_count() >= 3) call read_int(3, calls)
  if (command_argument_count() >= 4) call get_command_argument(4, strategy)

  call hs_grid_create(grid, MPI_COMM_WORLD)
  call hs_grid_info(grid, rank=rank)
  call hs_field_plan_create(plan, grid, [n, n, n], ghost=1, strategy=strategy)
  call hs_field_plan_shape(plan, first, interior)
  allocate (u(0:interior(1) + 1, 0:interior(2) + 1, 0:interior(3) + 1))
  u = 1
  call hs_field_array_init(described, c_loc(u), HS_DOUBLE)
  allocate (fortran_times(rounds), c_times(rounds))

  do i = 1, calls  ! warm up both paths
    call hs_forward(plan, u)
    if (c_forward(plan%handle, described) /= HS_OK) call failed()
  end do
  do r = 1, rounds  ! the order alternates, so that neither path always runs second
    if (mod(r, 2) == 1) fortran_times(r) = fortran_round()
    c_times(r) = c_round()
    if (mod(r, 2) == 0) fortran_times(r) = fortran_round()
  end do
  fortran_median = median(fortran_times)
  c_median = median(c_times)
  if (rank == 0) write (output_unit, '("forward of ", i0, "^3 real64, ghost 1, ", i0, " ranks, ", a, ", ", i0, &
                                       &" rounds of ", i0, ": Fortran ", f9.2, " us, C ", f9.2, " us per call (median), ", &
                                       &"ratio ", f6.4, "; fastest rounds ", f9.2, " and ", f9.2, " us, ratio ", f6.4)') &
      n, ranks, hs_field_plan_strategy(plan), rounds, calls, fortran_median * 1e6, c_median * 1e6, &
      fortran_median / c_median, minval(fortran_times) * 1e6, minval(c_times) * 1e6, &
      minval(fortran_times) / minval(c_times)
  call hs_free(plan)
  call hs_free(grid)
  call MPI_Finalize()

contains

  !> Seconds per call of `calls` forwards through the module.
  real(real64) function fortran_round()
    call MPI_Barrier(MPI_COMM_WORLD)
    t = MPI_Wtime()
    do i = 1, calls
      call hs_forward(plan, u)
    end do
    fortran_round = (MPI_Wtime() - t) / calls
  end function

  !> Seconds per call of `calls` forwards through the C function.
  real(real64) function c_round()
    call MPI_Barrier(MPI_COMM_WORLD)
    t = MPI_Wtime()
    do i = 1, calls
      if (c_forward(plan%handle, described) /= HS_OK) call failed()
    end do
    c_round = (MPI_Wtime() - t) / calls
  end function

  subroutine failed()
    write (output_unit, '(a)') c_text(c_last_error())
    error stop 1
  end subroutine

  subroutine read_int(position, value)
    integer, intent(in) :: position
    integer, intent(inout) :: value
    call get_command_argument(position, arg)
    read (arg, *) value
  end subroutine

  real(real64) function median(times)
    real(real64), intent(in) :: times(:)
    real(real64) :: sorted(size(times)), x
    integer :: a, b
    sorted = times
    do a = 2, size(sorted)  ! insertion sort: a handful of rounds
      x = sorted(a)
      b = a - 1
      do while (b >= 1)
        if (sorted(b) <= x) exit
        sorted(b + 1) = sorted(b)
        b = b - 1
      end do
      sorted(b + 1) = x
    end do
    median = sorted((size(sorted) + 1) / 2)
  end function
end program bench_forward
