! SPDX-License-Identifier: BSD-3-Clause
! The module allocates nothing per exchange: after a warm-up, forwards, reverses and split-phase
! exchanges of rank-3 arrays of each type, and a particle plan's forward_positions with a column,
! forward of columns (split phase) and reverse, call malloc zero times (malloc_count.c counts them
! for the whole process). One rank, where MPI itself allocates nothing per message either.
program test_no_allocation
  use, intrinsic :: iso_c_binding, only: c_long
  use, intrinsic :: iso_fortran_env, only: real32, real64, int32, int64, output_unit
  use mpi_f08, only: MPI_Init, MPI_Finalize, MPI_COMM_WORLD
  use haloshift
  implicit none
  interface
    function malloc_count() bind(c) result(n)
      import :: c_long
      integer(c_long) :: n
    end function
  end interface
  type(hs_grid) :: grid
  type(hs_field_plan) :: plan
  type(hs_particle_plan) :: particles
  real(real64), allocatable, target :: x(:, :), q(:), f(:, :)
  integer :: owned, ghosts
  real(real32), allocatable, target :: a(:, :, :)
  real(real64), allocatable, target :: b(:, :, :)
  integer(int32), allocatable, target :: c(:, :, :)
  integer(int64), allocatable, target :: d(:, :, :)
  integer :: n(3), round, status
  integer(c_long) :: before, allocations
  logical :: done

  before = 0

  call MPI_Init()
  call hs_grid_create(grid, MPI_COMM_WORLD)
  call hs_field_plan_create(plan, grid, [12, 10, 8], ghost=2)
  call hs_field_plan_shape(plan, interior=n)
  allocate (a(-1:n(1) + 2, -1:n(2) + 2, -1:n(3) + 2), b(-1:n(1) + 2, -1:n(2) + 2, -1:n(3) + 2), &
            c(-1:n(1) + 2, -1:n(2) + 2, -1:n(3) + 2), d(-1:n(1) + 2, -1:n(2) + 2, -1:n(3) + 2))
  a = 1
  b = 1
  c = 1
  d = 1
  allocate (x(3, 2000), q(2000), f(3, 2000))
  call random_number(x(:, 1:500))
  call hs_particle_plan_create(particles, grid, [0, 0, 0] * 1.0_real64, [1, 1, 1] * 1.0_real64, &
                               [0.2_real64, 0.2_real64, 0.2_real64], x, 500)
  call hs_particle_plan_sizes(particles, owned, ghosts)
  q = 1
  f = 1
  do round = 0, 20
    if (round == 1) before = malloc_count()  ! round 0 warms up (first messages, lazy setup)
    call hs_particle_forward_positions(particles, x, columns=[hs_column_of(q)])
    call hs_particle_forward(particles, [hs_column_of(q), hs_column_of(f)], start=.true.)
    call hs_wait(particles)
    call hs_particle_reverse(particles, hs_column_of(f), HS_SUM)
    call hs_forward(plan, a)
    call hs_reverse(plan, b, HS_SUM, stat=status)
    call hs_start_forward(plan, c)
    done = .false.
    do while (.not. done)
      call hs_test(plan, done)
    end do
    call hs_start_reverse(plan, d, HS_MAX)
    call hs_wait(plan)
  end do
  allocations = malloc_count() - before
  write (output_unit, '("fortran no-allocation test: ", i0, " mallocs in 80 field and 60 particle exchanges ", &
                       &"(", i0, " particles, ", i0, " ghosts)")') allocations, owned, ghosts
  call hs_free(particles)
  call hs_free(plan)
  call hs_free(grid)
  call MPI_Finalize()
  if (allocations /= 0) error stop 1
end program test_no_allocation
