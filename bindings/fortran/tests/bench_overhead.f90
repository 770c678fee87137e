! SPDX-License-Identifier: BSD-3-Clause
! What the Fortran module adds to an exchange: a forward of a real64 field (global n^3 cells,
! default 128, ghost 1) and a forward_positions of 16k particles per rank (boxes 20 wide, cutoff
! 2.5, as bindings/c/bench_overhead.cpp), each through the module (hs_forward,
! hs_particle_forward_positions) and through the C function called directly (module
! haloshift_c, the arrays described once) on the same plan and arrays, in rounds whose order
! alternates. Prints, per exchange, the median and the fastest round's time per call of each
! path and their ratios (rank 0).
!
! Usage: mpiexec -n 2 haloshift_fortran_bench_overhead [n] [rounds] [calls per round] [strategy]
module overhead_cases
  use, intrinsic :: iso_c_binding, only: c_loc, c_int
  use, intrinsic :: iso_fortran_env, only: real64, output_unit
  use mpi_f08, only: MPI_Barrier, MPI_Wtime, MPI_COMM_WORLD
  use haloshift
  use haloshift_c, only: hs_field_array, hs_field_array_init, hs_positions, hs_column, HS_DOUBLE, &
                         c_forward => hs_field_forward, c_forward_positions => hs_particle_forward_positions, &
                         c_last_error => hs_last_error
  use haloshift_core, only: c_text
  implicit none
  type(hs_field_plan) :: field
  type(hs_particle_plan) :: particles
  type(hs_field_array) :: field_described
  type(hs_positions) :: positions_described
  type(hs_column) :: no_columns(1)
  real(real64), allocatable, target :: u(:, :, :), x(:, :)
  integer :: calls, rank

  abstract interface
    subroutine path()
    end subroutine
  end interface

contains

  subroutine field_fortran()
    integer :: i
    do i = 1, calls
      call hs_forward(field, u)
    end do
  end subroutine

  subroutine field_c()
    integer :: i
    do i = 1, calls
      call check(c_forward(field%handle, field_described))
    end do
  end subroutine

  subroutine particles_fortran()
    integer :: i
    do i = 1, calls
      call hs_particle_forward_positions(particles, x)
    end do
  end subroutine

  subroutine particles_c()
    integer :: i
    do i = 1, calls
      call check(c_forward_positions(particles%handle, positions_described, 0_c_int, no_columns))
    end do
  end subroutine

  subroutine check(status)
    integer(c_int), intent(in) :: status
    if (status == HS_OK) return
    write (output_unit, '(a)') c_text(c_last_error())
    error stop 1
  end subroutine

  !> Seconds per call of `calls` calls of one path, after a barrier.
  real(real64) function round(timed)
    procedure(path) :: timed
    real(real64) :: t
    call MPI_Barrier(MPI_COMM_WORLD)
    t = MPI_Wtime()
    call timed()
    round = (MPI_Wtime() - t) / calls
  end function

  !> Times both paths in `rounds` rounds (the order alternating, after one warm-up round of each)
  !> and prints the medians, the fastest rounds and their ratios.
  subroutine compare(what, fortran_path, c_path, rounds)
    character(*), intent(in) :: what
    procedure(path) :: fortran_path, c_path
    integer, intent(in) :: rounds
    real(real64) :: f(rounds), c(rounds), warm
    integer :: r
    warm = round(fortran_path) + round(c_path)
    do r = 1, rounds  ! neither path always runs second
      if (mod(r, 2) == 1) f(r) = round(fortran_path)
      c(r) = round(c_path)
      if (mod(r, 2) == 0) f(r) = round(fortran_path)
    end do
    if (rank == 0) write (output_unit, '(a, ", ", i0, " rounds of ", i0, ": Fortran ", f9.2, " us, C ", f9.2, &
                                         &" us per call (median), ratio ", f6.4, "; fastest rounds ", f9.2, " and ", &
                                         &f9.2, " us, ratio ", f6.4, " (warm-up ", es8.1, " s)")') &
        what, rounds, calls, median(f) * 1e6, median(c) * 1e6, median(f) / median(c), minval(f) * 1e6, &
        minval(c) * 1e6, minval(f) / minval(c), warm
  end subroutine

  real(real64) function median(times)
    real(real64), intent(in) :: times(:)
    real(real64) :: sorted(size(times)), v
    integer :: a, b
    sorted = times
    do a = 2, size(sorted)  ! insertion sort: a few dozen rounds
      v = sorted(a)
      b = a - 1
      do while (b >= 1)
        if (sorted(b) <= v) exit
        sorted(b + 1) = sorted(b)
        b = b - 1
      end do
      sorted(b + 1) = v
    end do
    median = sorted((size(sorted) + 1) / 2)
  end function
end module overhead_cases

program bench_overhead
  use, intrinsic :: iso_c_binding, only: c_loc, c_null_ptr, c_size_t
  use, intrinsic :: iso_fortran_env, only: real64
  use mpi_f08, only: MPI_Init, MPI_Finalize, MPI_COMM_WORLD
  use haloshift
  use haloshift_c, only: hs_field_array_init, hs_positions, HS_DOUBLE
  use overhead_cases
  implicit none
  integer, parameter :: per_rank = 16384
  real(real64), parameter :: width = 20, cutoff = 2.5
  type(hs_grid) :: grid
  character(len=32) :: arg, strategy
  character(len=80) :: what
  integer :: n, rounds, ranks, dims(3), coords(3), first(3), interior(3), owned, ghosts, seed_size
  integer, allocatable :: seed(:)

  call MPI_Init()
  n = 128
  rounds = 41
  calls = 20
  strategy = 'Shift'
  if (command_argument_count() >= 1) call read_int(1, n)
  if (command_argument_count() >= 2) call read_int(2, rounds)
  if (command_argument_count() >= 3) call read_int(3, calls)
  if (command_argument_count() >= 4) call get_command_argument(4, strategy)
  call hs_grid_create(grid, MPI_COMM_WORLD)
  call hs_grid_info(grid, rank=rank, size=ranks, dims=dims, coords=coords)

  call hs_field_plan_create(field, grid, [n, n, n], ghost=1, strategy=strategy)
  call hs_field_plan_shape(field, first, interior)
  allocate (u(0:interior(1) + 1, 0:interior(2) + 1, 0:interior(3) + 1))
  u = 1
  call hs_field_array_init(field_described, c_loc(u), HS_DOUBLE)
  write (what, '(i0, "^3 real64 field, ", a)') n, trim(hs_field_plan_strategy(field))
  call compare(trim(what) // ', forward', field_fortran, field_c, rounds)

  call random_seed(size=seed_size)
  allocate (seed(seed_size))
  seed = 17 + rank
  call random_seed(put=seed)
  allocate (x(3, per_rank))
  call random_number(x)
  x = width * (spread(coords, 2, per_rank) + x)
  call hs_particle_plan_create(particles, grid, [0, 0, 0] * width, dims * width, [cutoff, cutoff, cutoff], x, &
                               per_rank, strategy=strategy)
  call hs_particle_plan_sizes(particles, owned, ghosts)
  x = reshape([x, spread([0.0_real64, 0.0_real64, 0.0_real64], 2, ghosts)], [3, owned + ghosts])
  positions_described = hs_positions(c_loc(x), c_null_ptr, c_null_ptr, HS_DOUBLE, 3_c_size_t)
  write (what, '("16k particles per rank, ", i0, " ghosts")') ghosts
  call compare(trim(what) // ', forward_positions', particles_fortran, particles_c, 4 * rounds)

  call hs_free(particles)
  call hs_free(field)
  call hs_free(grid)
  call MPI_Finalize()

contains

  subroutine read_int(position, value)
    integer, intent(in) :: position
    integer, intent(inout) :: value
    call get_command_argument(position, arg)
    read (arg, *) value
  end subroutine
end program bench_overhead
