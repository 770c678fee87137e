! SPDX-License-Identifier: BSD-3-Clause
! Particles through the Fortran module, against an oracle from particle ids alone: particle i sits
! at position(i) in the periodic unit cube. Rank r starts with the ids r, r+P, ...; after
! hs_migrate every rank owns exactly the particles inside its box, with their velocity and id
! columns; hs_particle_forward_positions brings as ghosts exactly the periodic images within the
! cutoff of the box (docs/particles.md: the box grown by the cutoff, closed), each at position(i)
! shifted by its image and with its id; a split-phase forward brings their velocities; a reverse
! sum of 1 per ghost gives each owned particle the number of its copies on all ranks.
module particle_oracle
  use, intrinsic :: iso_fortran_env, only: real64, int64
  implicit none
  integer, parameter :: total = 600
  real(real64), parameter :: cutoff = 0.15_real64

contains

  !> Where particle i is: a low-discrepancy sequence in [0, 1)^3.
  pure function position(i) result(x)
    integer(int64), intent(in) :: i
    real(real64) :: x(3)
    x = modulo(real(i, real64) * [0.6180339887498949_real64, 0.7548776662466927_real64, 0.5698402909980532_real64], &
               1.0_real64)
  end function

  pure function velocity(i) result(v)
    integer(int64), intent(in) :: i
    real(real64) :: v(3)
    v = real(i, real64) * [1, 2, 3]
  end function

  !> Box c (from 0) of the even split into dims boxes along each dimension: [lo, hi).
  pure subroutine box(c, dims, lo, hi)
    integer, intent(in) :: c(3), dims(3)
    real(real64), intent(out) :: lo(3), hi(3)
    lo = real(c, real64) / dims
    hi = real(c + 1, real64) / dims
  end subroutine

  !> Whether image p (particle i shifted by k) is a ghost of box c.
  pure logical function ghost_of(i, k, c, dims)
    integer(int64), intent(in) :: i
    integer, intent(in) :: k(3), c(3), dims(3)
    real(real64) :: p(3), lo(3), hi(3)
    call box(c, dims, lo, hi)
    p = position(i) + k
    ghost_of = all(lo - p <= cutoff .and. p - hi <= cutoff)
    if (all(k == 0)) ghost_of = ghost_of .and. .not. all(p >= lo .and. p < hi)
  end function

  !> The key of image k (each entry -1, 0 or 1) of particle i.
  pure integer function key(i, k)
    integer(int64), intent(in) :: i
    integer, intent(in) :: k(3)
    key = int(i) * 27 + 9 * (k(1) + 1) + 3 * (k(2) + 1) + k(3) + 1
  end function

  !> The copies of particle i that are ghosts of some box.
  integer function copies(i, dims)
    integer(int64), intent(in) :: i
    integer, intent(in) :: dims(3)
    integer :: c1, c2, c3, k1, k2, k3
    copies = 0
    do c3 = 0, dims(3) - 1
      do c2 = 0, dims(2) - 1
        do c1 = 0, dims(1) - 1
          do k3 = -1, 1
            do k2 = -1, 1
              do k1 = -1, 1
                if (ghost_of(i, [k1, k2, k3], [c1, c2, c3], dims)) copies = copies + 1
              end do
            end do
          end do
        end do
      end do
    end do
  end function
end module particle_oracle

program test_particles
  use, intrinsic :: iso_fortran_env, only: real64, int64, output_unit
  use mpi_f08, only: MPI_Init, MPI_Allreduce, MPI_IN_PLACE, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD
  use haloshift
  use fortran_test_support, only: conclude
  use particle_oracle
  implicit none
  integer, parameter :: capacity = 4 * total
  real(real64), parameter :: lo(3) = 0, hi(3) = 1
  real(real64), allocatable, target :: x(:, :), v(:, :), f(:)
  integer(int64), allocatable, target :: id(:)
  type(hs_grid) :: grid
  type(hs_particle_plan) :: plan
  integer :: rank, ranks, dims(3), coords(3), nlocal, owned, ghosts, failures, held
  real(real64) :: box_lo(3), box_hi(3)

  call MPI_Init()
  allocate (x(3, capacity), v(3, capacity), f(capacity), id(capacity))
  call hs_grid_create(grid, MPI_COMM_WORLD)
  call hs_grid_info(grid, rank=rank, size=ranks, dims=dims, coords=coords)
  call box(coords, dims, box_lo, box_hi)
  failures = 0

  nlocal = 0
  do held = rank, total - 1, ranks
    nlocal = nlocal + 1
    id(nlocal) = held
    x(:, nlocal) = position(id(nlocal))
    v(:, nlocal) = velocity(id(nlocal))
  end do
  call hs_migrate(grid, lo, hi, x, nlocal, columns=[hs_column_of(v), hs_column_of(id)])
  call check_migrated()

  call hs_particle_plan_create(plan, grid, lo, hi, [cutoff, cutoff, cutoff], x, nlocal)
  call hs_particle_plan_sizes(plan, owned, ghosts)
  call hs_particle_forward_positions(plan, x, columns=[hs_column_of(id)])
  call check_ghosts()
  v(:, owned + 1:owned + ghosts) = -1
  call hs_particle_forward(plan, [hs_column_of(v)], start=.true.)
  call hs_wait(plan)
  call check_velocities()
  f(1:owned) = 0
  f(owned + 1:owned + ghosts) = 1
  call hs_particle_reverse(plan, hs_column_of(f), HS_SUM)
  call check_copies()
  call check_misuse()

  call hs_free(plan)
  call hs_free(grid)
  call conclude('fortran particle test', failures)

contains

  subroutine fail(what, how_many)
    character(*), intent(in) :: what
    integer, intent(in) :: how_many
    if (how_many == 0) return
    write (output_unit, '("FAIL rank ", i0, ": ", a, ": ", i0)') rank, what, how_many
    failures = failures + 1
  end subroutine

  !> Every particle once, on the rank whose box holds it, with its columns.
  subroutine check_migrated()
    integer :: i, all_count, wrong
    wrong = 0
    do i = 1, nlocal
      if (any(x(:, i) /= position(id(i))) .or. any(v(:, i) /= velocity(id(i))) .or. &
          .not. all(x(:, i) >= box_lo .and. x(:, i) < box_hi)) wrong = wrong + 1
    end do
    call fail('particles after migrate not in the box or with wrong columns', wrong)
    all_count = nlocal
    call MPI_Allreduce(MPI_IN_PLACE, all_count, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call fail('particles lost or made by migrate', abs(all_count - total))
  end subroutine

  !> The ghosts are exactly the images the oracle names, each once, at its shifted position.
  subroutine check_ghosts()
    integer, allocatable :: expected(:), got(:)
    integer(int64) :: i
    integer :: j, k1, k2, k3, k(3), wrong
    allocate (expected(0:27 * total - 1), got(0:27 * total - 1))
    expected = 0
    got = 0
    do i = 0, total - 1
      do k3 = -1, 1
        do k2 = -1, 1
          do k1 = -1, 1
            if (ghost_of(i, [k1, k2, k3], coords, dims)) expected(key(i, [k1, k2, k3])) = 1
          end do
        end do
      end do
    end do
    wrong = 0
    do j = owned + 1, owned + ghosts
      k = nint(x(:, j) - position(id(j)))
      if (any(x(:, j) /= position(id(j)) + k) .or. any(abs(k) > 1)) then
        wrong = wrong + 1
      else
        got(key(id(j), k)) = got(key(id(j), k)) + 1
      end if
    end do
    call fail('ghosts not at an image of their particle', wrong)
    call fail('ghosts missing, extra or repeated', count(got /= expected))
  end subroutine

  subroutine check_velocities()
    integer :: j, wrong
    wrong = 0
    do j = owned + 1, owned + ghosts
      if (any(v(:, j) /= velocity(id(j)))) wrong = wrong + 1
    end do
    call fail('ghost velocities after a split-phase forward', wrong)
  end subroutine

  subroutine check_copies()
    integer :: i, wrong
    wrong = 0
    do i = 1, owned
      if (f(i) /= copies(id(i), dims)) wrong = wrong + 1
    end do
    call fail('owned particles whose reverse sum is not their number of copies', wrong)
  end subroutine

  !> Arrays too short for the ghosts, too many columns, a strided column: an error on every rank.
  subroutine check_misuse()
    integer :: status
    character(len=300) :: message
    message = ''
    call hs_particle_forward_positions(plan, x(:, 1:owned), stat=status, errmsg=message)
    call expect(ghosts == 0 .or. index(message, 'needed') > 0, 'positions without room for the ghosts', message)
    call hs_particle_forward(plan, [(hs_column_of(v), held = 1, HS_MAX_COLUMNS + 1)], stat=status, errmsg=message)
    call expect(index(message, 'HS_MAX_COLUMNS') > 0, 'more than HS_MAX_COLUMNS columns', message)
    call hs_particle_reverse(plan, hs_column_of(v(1, :)), stat=status, errmsg=message)
    call expect(index(message, 'not contiguous') > 0, 'a strided column', message)
  end subroutine

  subroutine expect(ok, what, message)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    character(*), intent(inout) :: message
    if (.not. ok) call fail(what // ': ' // trim(message), 1)
    message = ''
  end subroutine
end program test_particles
