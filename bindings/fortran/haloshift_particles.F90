! SPDX-License-Identifier: BSD-3-Clause
!> haloshift_particles: particle plans, ghost exchanges and migrate over the caller's Fortran arrays.
!> Part of module haloshift (use haloshift).
!>
!> Positions are x(3, capacity) (or x(4, capacity), padded), real64; per-particle arrays
!> ("columns": velocities v(3, capacity), charges q(capacity), ids ...) go in through hs_column_of.
!> Arrays are sized for a capacity, as Fortran MD codes keep them (nmax): a plan writes the ghosts
!> after the owned particles, and every array must hold owned + ghosts (checked, an error
!> otherwise); migrate fails, on every rank, when the arrivals exceed the arrays. The arrays need
!> TARGET (or POINTER): the library keeps their addresses between a start and its wait.
module haloshift_particles
  use, intrinsic :: iso_c_binding, only: c_int, c_size_t, c_double, c_ptr, c_null_ptr, c_null_funptr, c_loc, &
                                         c_associated
  use, intrinsic :: iso_fortran_env, only: real32, real64, int32, int64
  use haloshift_core, only: hs_grid, hs_strategy_time, finish, fortran_error, c_text, strategy_times, test_with, &
                            strategy_or_auto
  use haloshift_c, only: HS_OK, HS_FLOAT, HS_DOUBLE, HS_INT32, HS_INT64, HS_SUM, HS_MAX_COLUMNS, hs_positions, &
                         hs_column, hs_domain, &
                         hs_prediction, c_create => hs_particle_plan_create, c_rebuild => hs_particle_plan_rebuild, &
                         c_free => hs_particle_plan_free, c_sizes => hs_particle_plan_sizes, &
                         c_strategy => hs_particle_plan_strategy, c_forward_positions => hs_particle_forward_positions, &
                         c_forward => hs_particle_forward, c_reverse => hs_particle_reverse, &
                         c_start_forward_positions => hs_particle_start_forward_positions, &
                         c_start_forward => hs_particle_start_forward, c_start_reverse => hs_particle_start_reverse, &
                         c_test => hs_particle_test, c_wait => hs_particle_wait, c_migrate => hs_migrate, &
                         c_explain => hs_explain_particles
  implicit none
  private

  !> A particle plan (the C handle hs_particle_plan).
  type, public :: hs_particle_plan
    type(c_ptr) :: handle = c_null_ptr
  end type

  !> A per-particle array as hs_column_of describes it: the C column and how many particles it holds.
  type, public :: hs_particle_column
    type(hs_column) :: column = hs_column(c_null_ptr, HS_DOUBLE, 0, 0_c_size_t)
    integer(int64) :: capacity = 0
  end type

  !> Columns per forward at most (HS_MAX_COLUMNS; their C array lives on the stack: no allocation per call).
  integer, parameter :: max_columns = HS_MAX_COLUMNS

  interface hs_column_of
    module procedure column_of_1_r32, column_of_2_r32, column_of_1_r64, column_of_2_r64, column_of_1_i32, &
                     column_of_2_i32, column_of_1_i64, column_of_2_i64
  end interface
  interface hs_particle_plan_create
    module procedure particle_plan_create
  end interface
  interface hs_particle_plan_rebuild
    module procedure particle_plan_rebuild
  end interface
  interface hs_particle_plan_sizes
    module procedure particle_plan_sizes
  end interface
  interface hs_particle_plan_strategy
    module procedure particle_plan_strategy
  end interface
  interface hs_particle_forward_positions
    module procedure particle_forward_positions
  end interface
  interface hs_particle_forward
    module procedure particle_forward
  end interface
  interface hs_particle_reverse
    module procedure particle_reverse
  end interface
  interface hs_migrate
    module procedure migrate
  end interface
  interface hs_explain_particles
    module procedure explain_particles
  end interface
  interface hs_test
    module procedure particle_test
  end interface
  interface hs_wait
    module procedure particle_wait
  end interface
  interface hs_free
    module procedure particle_plan_free
  end interface

  public :: hs_column_of, hs_particle_plan_create, hs_particle_plan_rebuild, hs_particle_plan_sizes, &
            hs_particle_plan_strategy, hs_particle_forward_positions, hs_particle_forward, hs_particle_reverse, &
            hs_migrate, hs_explain_particles, hs_test, hs_wait, hs_free

contains

  !> A plan for the ghosts within `cutoff` of this rank's box in the domain [lo, hi) (collective):
  !> `count` owned particles at x(:, 1:count), each inside this rank's box (after hs_migrate).
  subroutine particle_plan_create(plan, grid, lo, hi, cutoff, x, count, strategy, stat, errmsg)
    type(hs_particle_plan), intent(inout) :: plan
    type(hs_grid), intent(in) :: grid
    real(real64), intent(in) :: lo(3), hi(3), cutoff(3)
    real(real64), pointer, intent(in) :: x(:, :)
    integer, intent(in) :: count
    character(*), intent(in), optional :: strategy
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(hs_positions) :: positions
    integer(c_int) :: code
    if (.not. positions_of(x, int(count, int64), 'hs_particle_plan_create', positions, stat, errmsg)) return
    code = c_create(grid%handle, strategy_or_auto(strategy), hs_domain(lo, hi), real(cutoff, c_double), positions, &
                    int(count, c_size_t), plan%handle)
    call finish(code, stat, errmsg)
  end subroutine

  !> Re-neighbours with new positions (collective).
  subroutine particle_plan_rebuild(plan, x, count, stat, errmsg)
    type(hs_particle_plan), intent(in) :: plan
    real(real64), pointer, intent(in) :: x(:, :)
    integer, intent(in) :: count
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(hs_positions) :: positions
    if (.not. positions_of(x, int(count, int64), 'hs_particle_plan_rebuild', positions, stat, errmsg)) return
    call finish(c_rebuild(plan%handle, positions, int(count, c_size_t)), stat, errmsg)
  end subroutine

  !> Releases the plan; a plan never created is ignored.
  subroutine particle_plan_free(plan, stat, errmsg)
    type(hs_particle_plan), intent(inout) :: plan
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call finish(c_free(plan%handle), stat, errmsg)
  end subroutine

  !> Owned particles and ghosts: the arrays the plan writes hold owned + ghosts entries.
  subroutine particle_plan_sizes(plan, owned, ghosts, stat, errmsg)
    type(hs_particle_plan), intent(in) :: plan
    integer, intent(out) :: owned, ghosts
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: o, g
    o = 0
    g = 0
    call finish(c_sizes(plan%handle, o, g), stat, errmsg)
    owned = int(o)
    ghosts = int(g)
  end subroutine

  !> The strategy that runs (Auto's choice after Auto).
  function particle_plan_strategy(plan) result(name)
    type(hs_particle_plan), intent(in) :: plan
    character(:), allocatable :: name
    name = c_text(c_strategy(plan%handle))
  end function

  !> Ghost positions (shifted across periodic borders) into x(:, owned+1:owned+ghosts), with the
  !> columns' ghost values in the same messages. start: split phase (hs_test, hs_wait).
  subroutine particle_forward_positions(plan, x, columns, start, stat, errmsg)
    type(hs_particle_plan), intent(in) :: plan
    real(real64), pointer, intent(in) :: x(:, :)
    type(hs_particle_column), intent(in), optional :: columns(:)
    logical, intent(in), optional :: start
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(hs_positions) :: positions
    type(hs_column) :: list(max_columns)
    integer(c_int) :: n
    integer(int64) :: needed
    if (.not. room(plan, 'hs_particle_forward_positions', columns, needed, list, n, stat, errmsg)) return
    if (.not. positions_of(x, needed, 'hs_particle_forward_positions', positions, stat, errmsg)) return
    if (is_start(start)) then
      call finish(c_start_forward_positions(plan%handle, positions, n, list), stat, errmsg)
    else
      call finish(c_forward_positions(plan%handle, positions, n, list), stat, errmsg)
    end if
  end subroutine

  !> Ghost values of the columns, unshifted, in one message per neighbour. start: split phase.
  subroutine particle_forward(plan, columns, start, stat, errmsg)
    type(hs_particle_plan), intent(in) :: plan
    type(hs_particle_column), intent(in) :: columns(:)
    logical, intent(in), optional :: start
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(hs_column) :: list(max_columns)
    integer(c_int) :: n
    integer(int64) :: needed
    if (.not. room(plan, 'hs_particle_forward', columns, needed, list, n, stat, errmsg)) return
    if (is_start(start)) then
      call finish(c_start_forward(plan%handle, n, list), stat, errmsg)
    else
      call finish(c_forward(plan%handle, n, list), stat, errmsg)
    end if
  end subroutine

  !> Each ghost's values combined onto its owner with op (HS_SUM, default; HS_MIN, HS_MAX). start: split phase.
  subroutine particle_reverse(plan, column, op, start, stat, errmsg)
    type(hs_particle_plan), intent(in) :: plan
    type(hs_particle_column), intent(in) :: column
    integer, intent(in), optional :: op
    logical, intent(in), optional :: start
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(hs_column) :: list(max_columns)
    integer(c_int) :: n, reduction
    integer(int64) :: needed
    if (.not. room(plan, 'hs_particle_reverse', [column], needed, list, n, stat, errmsg)) return
    reduction = HS_SUM
    if (present(op)) reduction = int(op, c_int)
    if (is_start(start)) then
      call finish(c_start_reverse(plan%handle, list(1), reduction), stat, errmsg)
    else
      call finish(c_reverse(plan%handle, list(1), reduction), stat, errmsg)
    end if
  end subroutine

  !> Moves every particle to the rank whose box in [lo, hi) holds it, with its columns (collective).
  !> count: owned particles before and after. The arrivals must fit the arrays (capacity mode:
  !> grow them before, e.g. to twice the count, when they may not). keep_order (default .true.):
  !> the survivors keep their order; .false.: holes are filled from the end.
  subroutine migrate(grid, lo, hi, x, count, columns, keep_order, stat, errmsg)
    type(hs_grid), intent(in) :: grid
    real(real64), intent(in) :: lo(3), hi(3)
    real(real64), pointer, intent(in) :: x(:, :)
    integer, intent(inout) :: count
    type(hs_particle_column), intent(in), optional :: columns(:)
    logical, intent(in), optional :: keep_order
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(hs_positions) :: positions
    type(hs_column), allocatable :: list(:)
    integer(c_int) :: n, order
    integer(c_size_t) :: moved
    integer(int64) :: capacity
    if (.not. positions_of(x, int(count, int64), 'hs_migrate', positions, stat, errmsg)) return
    capacity = size(x, 2, kind=int64)
    allocate (list(1))  ! any number of columns (a migrate allocates anyway)
    if (present(columns)) then
      deallocate (list)
      allocate (list(max(1, size(columns))))
    end if
    if (.not. listed(columns, 'hs_migrate', int(count, int64), list, n, capacity, stat, errmsg)) return
    order = 1
    if (present(keep_order)) order = merge(1, 0, keep_order)
    moved = int(count, c_size_t)
    call finish(c_migrate(grid%handle, hs_domain(lo, hi), positions, n, list, moved, int(capacity, c_size_t), &
                          order, c_null_funptr, c_null_ptr), stat, errmsg)
    count = int(moved)
  end subroutine

  !> The strategies Auto ranks for a particle plan of these arguments, fastest first (collective):
  !> `count` owned particles at most per rank.
  subroutine explain_particles(grid, lo, hi, cutoff, count, ranking, stat, errmsg)
    type(hs_grid), intent(in) :: grid
    real(real64), intent(in) :: lo(3), hi(3), cutoff(3)
    integer, intent(in) :: count
    type(hs_strategy_time), allocatable, intent(out) :: ranking(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(hs_prediction) :: predictions(64)
    integer(c_int) :: code, written
    written = 0
    code = c_explain(grid%handle, hs_domain(lo, hi), real(cutoff, c_double), int(count, c_size_t), predictions, &
                     size(predictions, kind=c_int), written)
    allocate (ranking(0))
    if (code == HS_OK) ranking = strategy_times(predictions, int(min(written, size(predictions, kind=c_int))))
    call finish(code, stat, errmsg)
  end subroutine

  !> Split phase: done is .true. once the exchange begun with start=.true. has finished.
  subroutine particle_test(plan, done, stat, errmsg)
    type(hs_particle_plan), intent(in) :: plan
    logical, intent(out) :: done
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call test_with(c_test, plan%handle, done, stat, errmsg)
  end subroutine

  !> Split phase: completes the exchange begun with start=.true.
  subroutine particle_wait(plan, stat, errmsg)
    type(hs_particle_plan), intent(in) :: plan
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call finish(c_wait(plan%handle), stat, errmsg)
  end subroutine

  logical function is_start(start)
    logical, intent(in), optional :: start
    is_start = .false.
    if (present(start)) is_start = start
  end function

  !> Positions x(3 or 4, capacity) holding at least `needed` particles; .false. (error finished) if not.
  logical function positions_of(x, needed, caller, positions, stat, errmsg)
    real(real64), pointer, intent(in) :: x(:, :)
    integer(int64), intent(in) :: needed
    character(*), intent(in) :: caller
    type(hs_positions), intent(out) :: positions
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(200) :: message
    positions_of = .false.
    if (.not. associated(x)) then
      call fortran_error(caller // ': the positions x are not allocated (or the pointer not associated)', stat, errmsg)
    else if (.not. is_contiguous(x)) then
      call fortran_error(caller // ': the positions x are not contiguous (a section with strides?)', stat, errmsg)
    else if (size(x, 1) /= 3 .and. size(x, 1) /= 4) then
      write (message, '(a, ": x(", i0, ", :): positions are x(3, capacity) or x(4, capacity)")') caller, size(x, 1)
      call fortran_error(trim(message), stat, errmsg)
    else if (size(x, 2, kind=int64) < needed) then
      write (message, '(a, ": x holds ", i0, " particles, ", i0, " needed")') caller, size(x, 2), needed
      call fortran_error(trim(message), stat, errmsg)
    else
      positions_of = .true.
      positions = hs_positions(c_null_ptr, c_null_ptr, c_null_ptr, HS_DOUBLE, int(size(x, 1), c_size_t))
      if (size(x) > 0) positions%x = c_loc(x)
    end if
  end function

  !> The columns for a plan's ghost exchange, each holding owned + ghosts (`needed`).
  logical function room(plan, caller, columns, needed, list, n, stat, errmsg)
    type(hs_particle_plan), intent(in) :: plan
    character(*), intent(in) :: caller
    type(hs_particle_column), intent(in), optional :: columns(:)
    integer(int64), intent(out) :: needed
    type(hs_column), intent(out) :: list(max_columns)
    integer(c_int), intent(out) :: n
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: owned, ghosts
    integer(c_int) :: code
    integer(int64) :: unused
    owned = 0
    ghosts = 0
    code = c_sizes(plan%handle, owned, ghosts)
    room = code == HS_OK
    if (.not. room) then
      call finish(code, stat, errmsg)
      return
    end if
    needed = int(owned + ghosts, int64)
    unused = huge(unused)
    room = listed(columns, caller, needed, list, n, unused, stat, errmsg)
  end function

  !> The C columns of `columns` into `list`, each holding at least `needed` particles; capacity:
  !> lowered to the smallest column's. .false. (error finished) when one is too short or there are
  !> more than `list` holds.
  logical function listed(columns, caller, needed, list, n, capacity, stat, errmsg)
    type(hs_particle_column), intent(in), optional :: columns(:)
    character(*), intent(in) :: caller
    integer(int64), intent(in) :: needed
    type(hs_column), intent(out) :: list(:)
    integer(c_int), intent(out) :: n
    integer(int64), intent(inout) :: capacity
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(200) :: message
    integer :: i
    n = 0
    listed = .true.
    if (.not. present(columns)) return
    if (size(columns) > size(list)) then
      write (message, '(a, ": ", i0, " columns, at most HS_MAX_COLUMNS = ", i0, " per forward")') caller, &
          size(columns), size(list)
      listed = .false.
    end if
    do i = 1, min(size(columns), size(list))
      if (columns(i)%capacity < 0) then
        write (message, '(a, ": column ", i0, " is not allocated or not contiguous")') caller, i
        listed = .false.
      else if (columns(i)%capacity < needed) then
        write (message, '(a, ": column ", i0, " holds ", i0, " particles, ", i0, " needed")') caller, i, &
            columns(i)%capacity, needed
        listed = .false.
      end if
      list(i) = columns(i)%column
      capacity = min(capacity, columns(i)%capacity)
    end do
    if (.not. listed) then
      call fortran_error(trim(message), stat, errmsg)
      return
    end if
    n = int(size(columns), c_int)
  end function

  ! hs_column_of(v): v(n) one value per particle, v(k, n) k values per particle (x fastest).
#define HS_NAME(x) x/**/_r32
#define HS_ELEMENT real(real32)
#define HS_CODE HS_FLOAT
#include "haloshift_column_of.inc"
#define HS_NAME(x) x/**/_r64
#define HS_ELEMENT real(real64)
#define HS_CODE HS_DOUBLE
#include "haloshift_column_of.inc"
#define HS_NAME(x) x/**/_i32
#define HS_ELEMENT integer(int32)
#define HS_CODE HS_INT32
#include "haloshift_column_of.inc"
#define HS_NAME(x) x/**/_i64
#define HS_ELEMENT integer(int64)
#define HS_CODE HS_INT64
#include "haloshift_column_of.inc"
end module haloshift_particles
