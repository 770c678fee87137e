! SPDX-License-Identifier: BSD-3-Clause
! Field plans through the Fortran module, against an oracle from global coordinates alone: grids
! of 1, 2 and 3 dimensions, periodic, not and mixed, ghost widths 1 and 2 and one per side, several
! strategies; each plan on arrays of rank = the grid's dimensions (real64 and int32 for 2 and 3,
! real32 and int64 for 1) with bounds 1-gl:n+gh; forward (blocking and split phase) and reverse
! sum (blocking and split phase). A cell's value is a function of its global index; after a
! forward each ghost holds the value of its wrapped global cell (beyond a border that does not
! wrap: untouched); after a reverse sum each interior cell holds its value times one plus the
! number of ghost cells, on every rank, that wrap onto it. Also: explain ranks fastest first and
! Auto runs the first; the grid options first_fastest (rank order) and remainder (which boxes
! take a field's leftover cells), from the dims and coordinates alone.
module field_cases
  use, intrinsic :: iso_fortran_env, only: real32, real64, int32, int64, output_unit
  use mpi_f08, only: MPI_COMM_WORLD, MPI_INTEGER, MPI_Allgather, MPI_Comm_size
  use haloshift
  implicit none

  integer, parameter :: FORWARD = 1, SPLIT_FORWARD = 2, REVERSE = 3, SPLIT_REVERSE = 4
  real(real64), parameter :: sentinel = -7

  type :: field_case
    character(len=24) :: strategy
    integer :: ndims
    logical :: periodic(3)
    integer :: global(3), ghost_low(3), ghost_high(3)
    type(hs_grid) :: grid
    type(hs_field_plan) :: plan
    integer :: first(3), interior(3), lb(3), ub(3)
  end type

contains

  !> value(g): the field's value at global cell g (numbered from 0).
  pure real(real64) function value_at(g)
    integer, intent(in) :: g(3)
    value_at = 1 + g(1) + 100 * g(2) + 10000 * g(3)
  end function

  !> The global cell (from 0) that local cell i wraps onto, and whether there is one.
  logical function wrapped(c, i, g)
    type(field_case), intent(in) :: c
    integer, intent(in) :: i(3)
    integer, intent(out) :: g(3)
    integer :: d
    g = c%first - 1 + i - 1
    wrapped = .true.
    do d = 1, 3
      if (c%periodic(d)) g(d) = modulo(g(d), c%global(d))
      wrapped = wrapped .and. g(d) >= 0 .and. g(d) < c%global(d)
    end do
  end function

  pure logical function inside(c, i)
    type(field_case), intent(in) :: c
    integer, intent(in) :: i(3)
    inside = all(i >= 1 .and. i <= c%interior)
  end function

  !> The case's grid and plan, and the array bounds 1-gl:n+gh.
  subroutine make(c, strategy, ndims, periodic, global, ghost_low, ghost_high)
    type(field_case), intent(out) :: c
    character(*), intent(in) :: strategy
    integer, intent(in) :: ndims, global(:), ghost_low(:), ghost_high(:)
    logical, intent(in) :: periodic(:)
    c%strategy = strategy
    c%ndims = ndims
    c%periodic = .false.
    c%periodic(1:ndims) = periodic
    c%global = 1
    c%global(1:ndims) = global
    call hs_grid_create(c%grid, MPI_COMM_WORLD, periodic=periodic)
    call hs_field_plan_create(c%plan, c%grid, global, ghost_low=ghost_low, ghost_high=ghost_high, strategy=strategy)
    call hs_field_plan_shape(c%plan, c%first, c%interior, c%ghost_low, c%ghost_high)
    c%lb = 1 - c%ghost_low
    c%ub = c%interior + c%ghost_high
  end subroutine

  !> The cells before `mode`: the interior its values; ghosts the sentinel (forward) or the value
  !> of the cell they wrap onto (reverse).
  subroutine initial(c, mode, a)
    type(field_case), intent(in) :: c
    integer, intent(in) :: mode
    real(real64), intent(out) :: a(c%lb(1):, c%lb(2):, c%lb(3):)
    integer :: i, j, k, g(3)
    do k = c%lb(3), c%ub(3)
      do j = c%lb(2), c%ub(2)
        do i = c%lb(1), c%ub(1)
          a(i, j, k) = sentinel
          if (.not. wrapped(c, [i, j, k], g)) cycle
          if (mode == REVERSE .or. mode == SPLIT_REVERSE) a(i, j, k) = value_at(g)
          if (inside(c, [i, j, k])) a(i, j, k) = value_at(g)
        end do
      end do
    end do
  end subroutine

  !> How many ghost cells of every rank's box wrap onto each interior cell of this rank's.
  subroutine copies_onto(c, copies)
    type(field_case), intent(in) :: c
    integer, intent(out) :: copies(:, :, :)
    integer, allocatable :: boxes(:, :)
    integer :: ranks, b, i, j, k, g(3)
    type(field_case) :: other
    call MPI_Comm_size(MPI_COMM_WORLD, ranks)
    allocate (boxes(6, ranks))
    call MPI_Allgather([c%first, c%interior], 6, MPI_INTEGER, boxes, 6, MPI_INTEGER, MPI_COMM_WORLD)
    copies = 0
    other = c
    do b = 1, ranks
      other%first = boxes(1:3, b)
      other%interior = boxes(4:6, b)
      do k = 1 - c%ghost_low(3), other%interior(3) + c%ghost_high(3)
        do j = 1 - c%ghost_low(2), other%interior(2) + c%ghost_high(2)
          do i = 1 - c%ghost_low(1), other%interior(1) + c%ghost_high(1)
            if (inside(other, [i, j, k])) cycle
            if (.not. wrapped(other, [i, j, k], g)) cycle
            g = g + 2 - c%first  ! the local index on this rank
            if (inside(c, g)) copies(g(1), g(2), g(3)) = copies(g(1), g(2), g(3)) + 1
          end do
        end do
      end do
    end do
  end subroutine

  !> The cells after `mode` as the oracle has them.
  subroutine expected(c, mode, before, a)
    type(field_case), intent(in) :: c
    integer, intent(in) :: mode
    real(real64), intent(in) :: before(c%lb(1):, c%lb(2):, c%lb(3):)
    real(real64), intent(out) :: a(c%lb(1):, c%lb(2):, c%lb(3):)
    integer :: copies(c%interior(1), c%interior(2), c%interior(3))
    integer :: i, j, k, g(3)
    a = before
    if (mode == REVERSE .or. mode == SPLIT_REVERSE) then
      call copies_onto(c, copies)
      a(1:c%interior(1), 1:c%interior(2), 1:c%interior(3)) = &
          before(1:c%interior(1), 1:c%interior(2), 1:c%interior(3)) * (1 + copies)
      return
    end if
    do k = c%lb(3), c%ub(3)
      do j = c%lb(2), c%ub(2)
        do i = c%lb(1), c%ub(1)
          if (wrapped(c, [i, j, k], g)) a(i, j, k) = value_at(g)
        end do
      end do
    end do
  end subroutine

  !> The cells that differ from the oracle (after a reverse: interior cells only, ghosts are unspecified).
  integer function mismatches(c, mode, got, want)
    type(field_case), intent(in) :: c
    integer, intent(in) :: mode
    real(real64), intent(in) :: got(c%lb(1):, c%lb(2):, c%lb(3):), want(c%lb(1):, c%lb(2):, c%lb(3):)
    if (mode == REVERSE .or. mode == SPLIT_REVERSE) then
      mismatches = count(got(1:c%interior(1), 1:c%interior(2), 1:c%interior(3)) /= &
                         want(1:c%interior(1), 1:c%interior(2), 1:c%interior(3)))
    else
      mismatches = count(got /= want)
    end if
  end function

#define HS_NAME(x) x/**/_r64_3
#define HS_ELEMENT real(real64)
#define HS_SHAPE (:, :, :)
#define HS_REMAP p => s
#define HS_CONVERT(x) x
#include "test_field_ops.inc"
#define HS_NAME(x) x/**/_i32_3
#define HS_ELEMENT integer(int32)
#define HS_SHAPE (:, :, :)
#define HS_REMAP p => s
#define HS_CONVERT(x) int(x, int32)
#include "test_field_ops.inc"
#define HS_NAME(x) x/**/_r64_2
#define HS_ELEMENT real(real64)
#define HS_SHAPE (:, :)
#define HS_REMAP p(c%lb(1):c%ub(1), c%lb(2):c%ub(2)) => s
#define HS_CONVERT(x) x
#include "test_field_ops.inc"
#define HS_NAME(x) x/**/_i32_2
#define HS_ELEMENT integer(int32)
#define HS_SHAPE (:, :)
#define HS_REMAP p(c%lb(1):c%ub(1), c%lb(2):c%ub(2)) => s
#define HS_CONVERT(x) int(x, int32)
#include "test_field_ops.inc"
#define HS_NAME(x) x/**/_r32_1
#define HS_ELEMENT real(real32)
#define HS_SHAPE (:)
#define HS_REMAP p(c%lb(1):c%ub(1)) => s
#define HS_CONVERT(x) real(x, real32)
#include "test_field_ops.inc"
#define HS_NAME(x) x/**/_i64_1
#define HS_ELEMENT integer(int64)
#define HS_SHAPE (:)
#define HS_REMAP p(c%lb(1):c%ub(1)) => s
#define HS_CONVERT(x) int(x, int64)
#include "test_field_ops.inc"

  !> Every mode on every array type of the case's rank; returns the failures.
  integer function check(c)
    type(field_case), intent(in) :: c
    real(real64), allocatable :: before(:, :, :), got(:, :, :), want(:, :, :)
    character(len=*), parameter :: types(2, 3) = reshape([character(6) :: 'real32', 'int64', 'real64', 'int32', &
                                                          'real64', 'int32'], [2, 3])
    integer :: mode, t, wrong
    allocate (before(c%lb(1):c%ub(1), c%lb(2):c%ub(2), c%lb(3):c%ub(3)))
    allocate (got, want, mold=before)
    check = 0
    do mode = FORWARD, SPLIT_REVERSE
      call initial(c, mode, before)
      call expected(c, mode, before, want)
      do t = 1, 2
        select case (10 * c%ndims + t)
        case (11); call exchange_r32_1(c, mode, before, got)
        case (12); call exchange_i64_1(c, mode, before, got)
        case (21); call exchange_r64_2(c, mode, before, got)
        case (22); call exchange_i32_2(c, mode, before, got)
        case (31); call exchange_r64_3(c, mode, before, got)
        case default; call exchange_i32_3(c, mode, before, got)
        end select
        wrong = mismatches(c, mode, got, want)
        if (wrong > 0) write (output_unit, '("FAIL ", a, " ndims ", i0, " periodic ", 3l2, " ", a, " mode ", i0, &
                                           &": ", i0, " cells differ")') &
            trim(c%strategy), c%ndims, c%periodic, trim(types(t, c%ndims)), mode, wrong
        check = check + wrong
      end do
    end do
  end function
end module field_cases

program test_field
  use, intrinsic :: iso_fortran_env, only: output_unit
  use mpi_f08, only: MPI_Init, MPI_COMM_WORLD
  use fortran_test_support, only: conclude
  use haloshift, only: hs_free, hs_strategy_time, hs_explain_field, hs_field_plan_strategy, hs_grid_create, &
                       hs_grid_info, hs_field_plan_create, hs_field_plan_shape
  use field_cases
  implicit none
  type(field_case) :: c
  integer :: failures, cases
  character(len=100) :: summary
  call MPI_Init()
  failures = 0
  cases = 0
  call run('Auto', 3, [.true., .true., .true.], [10, 9, 7], [1, 1, 1], [1, 1, 1])
  call run('Shift', 3, [.false., .false., .false.], [10, 9, 7], [2, 1, 1], [1, 2, 1])
  call run('SingleHop', 3, [.true., .false., .true.], [10, 9, 7], [2, 2, 2], [2, 2, 2])
  call run('NeighborAlltoall', 2, [.true., .true.], [13, 11], [2, 2], [2, 2])
  call run('TtlMultiHop', 2, [.false., .false.], [13, 11], [1, 1], [1, 1])
  call run('Auto', 2, [.false., .true.], [13, 11], [1, 2], [2, 1])
  call run('Auto', 1, [.true.], [13], [2], [2])
  call run('Shift', 1, [.false.], [13], [1], [2])
  call explain_agrees()
  call grid_options_agree()
  write (summary, '("fortran field test, ", i0, " cases, explain, grid options (failures: cells or checks wrong)")') &
      cases
  call conclude(trim(summary), failures)

contains

  !> hs_explain_field ranks the strategies fastest first, and Auto runs the first.
  subroutine explain_agrees()
    type(hs_strategy_time), allocatable :: ranking(:)
    character(:), allocatable :: chosen
    call make(c, 'Auto', 3, [.true., .true., .true.], [10, 9, 7], [1, 1, 1], [1, 1, 1])
    call hs_explain_field(c%grid, [10, 9, 7], ranking, ghost=1)
    chosen = hs_field_plan_strategy(c%plan)
    if (size(ranking) < 1) then
      write (output_unit, '("FAIL explain: no strategy ranked")')
      failures = failures + 1
    else if (any(ranking(2:)%seconds < ranking(:size(ranking) - 1)%seconds) .or. ranking(1)%strategy /= chosen) then
      write (output_unit, '("FAIL explain: first ", a, " (", es9.2, " s) of ", i0, ", Auto ran ", a)') &
          trim(ranking(1)%strategy), ranking(1)%seconds, size(ranking), chosen
      failures = failures + 1
    end if
    call hs_free(c%plan)
    call hs_free(c%grid)
  end subroutine

  !> The rank order (first_fastest) and who takes a field's leftover cells (remainder), against
  !> the grid's dims and this rank's coordinates alone.
  subroutine grid_options_agree()
    integer, parameter :: global(3) = [13, 11, 7]
    integer :: order, rule, rank, dims(3), coords(3), want(3), interior(3), wrong
    wrong = 0
    do order = 0, 1
      call hs_grid_create(c%grid, MPI_COMM_WORLD, first_fastest=order == 1)
      call hs_grid_info(c%grid, rank=rank, dims=dims, coords=coords)
      if (order == 1) then
        want = [mod(rank, dims(1)), mod(rank / dims(1), dims(2)), rank / (dims(1) * dims(2))]
      else
        want = [rank / (dims(2) * dims(3)), mod(rank / dims(3), dims(2)), mod(rank, dims(3))]
      end if
      if (any(coords /= want)) wrong = wrong + 1
      call hs_free(c%grid)
    end do
    do rule = 1, 2
      call hs_grid_create(c%grid, MPI_COMM_WORLD, remainder=rule)
      call hs_grid_info(c%grid, dims=dims, coords=coords)
      call hs_field_plan_create(c%plan, c%grid, global)
      call hs_field_plan_shape(c%plan, interior=interior)
      if (rule == 1) then
        want = global / dims + merge(1, 0, coords < mod(global, dims))
      else
        want = global / dims + merge(1, 0, coords >= dims - mod(global, dims))
      end if
      if (any(interior /= want)) wrong = wrong + 1
      call hs_free(c%plan)
      call hs_free(c%grid)
    end do
    if (wrong > 0) write (output_unit, '("FAIL grid options: ", i0, " of 4 grids")') wrong
    failures = failures + wrong
  end subroutine

  subroutine run(strategy, ndims, periodic, global, ghost_low, ghost_high)
    character(*), intent(in) :: strategy
    integer, intent(in) :: ndims, global(:), ghost_low(:), ghost_high(:)
    logical, intent(in) :: periodic(:)
    call make(c, strategy, ndims, periodic, global, ghost_low, ghost_high)
    failures = failures + check(c)
    cases = cases + 1
    call hs_free(c%plan)
    call hs_free(c%grid)
  end subroutine
end program test_field
