! SPDX-License-Identifier: BSD-3-Clause
! The 3D heat equation with the Fortran module haloshift: a 7-point stencil on a grid of boxes over
! MPI_COMM_WORLD, one ghost layer filled by hs_forward before each step; zero (Dirichlet) borders
! along x and y, periodic along z. Every rank also runs the same global problem serially and
! checks its box against it bit for bit; the program exits nonzero on any difference.
!
! Usage: mpiexec -n 4 haloshift_fortran_heat [strategy]   (default Auto; Shift, SingleHop, ...)
module heat_problem
  use, intrinsic :: iso_fortran_env, only: real64
  implicit none
  integer, parameter :: global(3) = [24, 20, 16], steps = 40
  logical, parameter :: periodic(3) = [.false., .false., .true.]
  real(real64), parameter :: alpha = 0.1_real64  ! diffusion number, below 1/6 for stability

contains

  !> The initial temperature of global cell g (numbered from 1).
  pure real(real64) function initial(g)
    integer, intent(in) :: g(3)
    initial = real(mod(7 * g(1) + 13 * g(2) + 29 * g(3), 17), real64) / 17
  end function

  !> One explicit step on the n(1) x n(2) x n(3) interior of u (ghost layers filled) into v: the
  !> same code for the distributed and the serial run, so that both compute the same bits.
  subroutine step(u, v, n)
    integer, intent(in) :: n(3)
    real(real64), intent(in) :: u(0:, 0:, 0:)
    real(real64), intent(inout) :: v(0:, 0:, 0:)
    integer :: i, j, k
    do k = 1, n(3)
      do j = 1, n(2)
        do i = 1, n(1)
          v(i, j, k) = u(i, j, k) + alpha * (u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + u(i, j + 1, k) + &
                                             u(i, j, k - 1) + u(i, j, k + 1) - 6 * u(i, j, k))
        end do
      end do
    end do
  end subroutine

  !> A field of n cells from global cell `first` on, with one zero ghost layer around it.
  subroutine start(u, first, n)
    real(real64), allocatable, intent(out) :: u(:, :, :)
    integer, intent(in) :: first(3), n(3)
    integer :: i, j, k
    allocate (u(0:n(1) + 1, 0:n(2) + 1, 0:n(3) + 1))
    u = 0
    do concurrent (k = 1:n(3), j = 1:n(2), i = 1:n(1))
      u(i, j, k) = initial(first - 1 + [i, j, k])
    end do
  end subroutine

  !> The whole problem on one rank: the periodic ghosts copied from the opposite faces.
  subroutine serial(u)
    real(real64), allocatable, intent(out) :: u(:, :, :)
    real(real64), allocatable :: v(:, :, :)
    integer :: s
    call start(u, [1, 1, 1], global)
    allocate (v, mold=u)
    v = 0
    do s = 1, steps
      u(:, :, 0) = u(:, :, global(3))
      u(:, :, global(3) + 1) = u(:, :, 1)
      call step(u, v, global)
      call swap(u, v)
    end do
  end subroutine

  subroutine swap(u, v)
    real(real64), allocatable, intent(inout) :: u(:, :, :), v(:, :, :)
    real(real64), allocatable :: t(:, :, :)
    call move_alloc(u, t)
    call move_alloc(v, u)
    call move_alloc(t, v)
  end subroutine
end module heat_problem

program heat
  use, intrinsic :: iso_fortran_env, only: real64, output_unit, error_unit
  use mpi_f08, only: MPI_Init, MPI_Finalize, MPI_Allreduce, MPI_IN_PLACE, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                     MPI_Comm_size
  use haloshift
  use heat_problem
  implicit none
  type(hs_grid) :: grid
  type(hs_field_plan) :: plan
  real(real64), allocatable, target :: u(:, :, :), v(:, :, :)
  real(real64), allocatable :: reference(:, :, :)
  character(len=64) :: strategy
  character(len=256) :: message
  integer :: first(3), n(3), s, rank, ranks, wrong, status

  call MPI_Init()
  call MPI_Comm_size(MPI_COMM_WORLD, ranks)
  strategy = 'Auto'
  if (command_argument_count() >= 1) call get_command_argument(1, strategy)

  call hs_grid_create(grid, MPI_COMM_WORLD, periodic=periodic)
  call hs_grid_info(grid, rank=rank)
  call hs_field_plan_create(plan, grid, global, ghost=1, strategy=strategy, stat=status, errmsg=message)
  if (status /= HS_OK) then  ! e.g. an unknown strategy: the same error on every rank
    if (rank == 0) write (error_unit, '(a)') trim(message)
    call MPI_Finalize()
    error stop 2
  end if
  call hs_field_plan_shape(plan, first=first, interior=n)

  ! u(0:n+1, ...): the interior 1..n and one ghost layer, as hs_forward expects.
  call start(u, first, n)
  allocate (v, mold=u)
  v = 0
  do s = 1, steps
    call hs_forward(plan, u)
    call step(u, v, n)
    call swap(u, v)
  end do

  call serial(reference)
  wrong = count(u(1:n(1), 1:n(2), 1:n(3)) /= reference(first(1):first(1) + n(1) - 1, first(2):first(2) + n(2) - 1, &
                                                       first(3):first(3) + n(3) - 1))
  call MPI_Allreduce(MPI_IN_PLACE, wrong, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) write (output_unit, '("heat: ", i0, " ranks, ", i0, " steps, strategy ", a, ": ", i0, &
                                       &" cells differ from the serial run")') ranks, steps, &
                                       hs_field_plan_strategy(plan), wrong
  call hs_free(plan)
  call hs_free(grid)
  call MPI_Finalize()
  if (wrong /= 0) error stop 1
end program heat
