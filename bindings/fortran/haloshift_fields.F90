! SPDX-License-Identifier: BSD-3-Clause
!> haloshift_fields: field plans and their exchanges over the caller's Fortran arrays. Part of
!> module haloshift (use haloshift).
!>
!> An array is a(1-gl:n+gh, ...) along each dimension: its interior is 1..n, the plan's interior
!> cells on this rank (hs_field_plan_shape), with at least the plan's ghost layers gl below and
!> gh above (more are allowed and left alone). Order: x fastest, as Fortran stores a(x, y, z).
!> Element types real32, real64, int32, int64; ranks 1, 2, 3 (a rank-r array for a grid of r
!> dimensions). The array needs TARGET or POINTER (see haloshift_field_ops.inc).
module haloshift_fields
  use, intrinsic :: iso_c_binding, only: c_int, c_size_t, c_ptr, c_null_ptr, c_associated, c_loc
  use, intrinsic :: iso_fortran_env, only: real32, real64, int32, int64
  use haloshift_core, only: hs_grid, hs_strategy_time, finish, fortran_error, c_text, strategy_times, test_with, &
                            strategy_or_auto
  use haloshift_c, only: HS_OK, HS_FLOAT, HS_DOUBLE, HS_INT32, HS_INT64, HS_X_FASTEST, HS_SUM, HS_PATTERN_FULL, &
                         hs_field_spec, hs_field_spec_init, hs_field_array, hs_prediction, &
                         c_plan_create => hs_field_plan_create, c_plan_free => hs_field_plan_free, &
                         c_plan_shape => hs_field_plan_shape, c_plan_strategy => hs_field_plan_strategy, &
                         c_forward => hs_field_forward, c_reverse => hs_field_reverse, &
                         c_start_forward => hs_field_start_forward, c_start_reverse => hs_field_start_reverse, &
                         c_test => hs_field_test, c_wait => hs_field_wait, c_explain => hs_explain_field
  implicit none
  private

  !> A field plan (the C handle hs_field_plan) with this rank's shape, kept for the bounds checks.
  type, public :: hs_field_plan
    type(c_ptr) :: handle = c_null_ptr
    integer, private :: first(3) = 1, interior(3) = 0, ghost_low(3) = 0, ghost_high(3) = 0
  end type

  !> An array as an exchange sees it (made by view_<rank>_<type>, haloshift_field_ops.inc).
  type :: array_view
    type(c_ptr) :: data = c_null_ptr
    integer(c_int) :: type = HS_DOUBLE
    integer :: rank = 0
    integer :: lb(3) = 1, ub(3) = 1
    logical :: contiguous = .false., associated = .false.
  end type

  integer, parameter :: FORWARD = 1, REVERSE = 2, START_FORWARD = 3, START_REVERSE = 4
  character(*), parameter :: call_names(4) = [character(16) :: 'hs_forward', 'hs_reverse', 'hs_start_forward', &
                                                                'hs_start_reverse']

  interface hs_forward
    module procedure forward_1_r32, forward_2_r32, forward_3_r32, forward_1_r64, forward_2_r64, forward_3_r64, &
                     forward_1_i32, forward_2_i32, forward_3_i32, forward_1_i64, forward_2_i64, forward_3_i64
  end interface
  interface hs_reverse
    module procedure reverse_1_r32, reverse_2_r32, reverse_3_r32, reverse_1_r64, reverse_2_r64, reverse_3_r64, &
                     reverse_1_i32, reverse_2_i32, reverse_3_i32, reverse_1_i64, reverse_2_i64, reverse_3_i64
  end interface
  interface hs_start_forward
    module procedure start_forward_1_r32, start_forward_2_r32, start_forward_3_r32, start_forward_1_r64, &
                     start_forward_2_r64, start_forward_3_r64, start_forward_1_i32, start_forward_2_i32, &
                     start_forward_3_i32, start_forward_1_i64, start_forward_2_i64, start_forward_3_i64
  end interface
  interface hs_start_reverse
    module procedure start_reverse_1_r32, start_reverse_2_r32, start_reverse_3_r32, start_reverse_1_r64, &
                     start_reverse_2_r64, start_reverse_3_r64, start_reverse_1_i32, start_reverse_2_i32, &
                     start_reverse_3_i32, start_reverse_1_i64, start_reverse_2_i64, start_reverse_3_i64
  end interface
  interface hs_field_plan_create
    module procedure field_plan_create
  end interface
  interface hs_field_plan_shape
    module procedure field_plan_shape
  end interface
  interface hs_field_plan_strategy
    module procedure field_plan_strategy
  end interface
  interface hs_explain_field
    module procedure explain_field
  end interface
  interface hs_test
    module procedure field_test
  end interface
  interface hs_wait
    module procedure field_wait
  end interface
  interface hs_free
    module procedure field_plan_free
  end interface

  public :: hs_field_plan_create, hs_field_plan_shape, hs_field_plan_strategy, hs_explain_field, hs_forward, &
            hs_reverse, hs_start_forward, hs_start_reverse, hs_test, hs_wait, hs_free

contains

  !> A field plan over `grid` (collective): global cells per dimension (size(global) = the grid's
  !> dimensions), `ghost` layers on every side (default 1) or ghost_low/ghost_high per dimension,
  !> a strategy by name (default "Auto"), a pattern (HS_PATTERN_*, default full) and the bytes per
  !> cell Auto prices (default 8).
  subroutine field_plan_create(plan, grid, global, ghost, ghost_low, ghost_high, strategy, pattern, &
                                  element_bytes, stat, errmsg)
    type(hs_field_plan), intent(inout) :: plan
    type(hs_grid), intent(in) :: grid
    integer, intent(in) :: global(:)
    integer, intent(in), optional :: ghost, ghost_low(:), ghost_high(:), pattern, element_bytes
    character(*), intent(in), optional :: strategy
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(hs_field_spec) :: spec
    integer(c_int) :: code, lo(3)
    if (.not. field_spec(global, ghost, ghost_low, ghost_high, pattern, element_bytes, spec, stat, errmsg)) return
    code = c_plan_create(grid%handle, strategy_or_auto(strategy), spec, plan%handle)
    if (code == HS_OK) code = c_plan_shape(plan%handle, lo, plan%interior, plan%ghost_low, plan%ghost_high)
    plan%first = lo + 1
    call finish(code, stat, errmsg)
  end subroutine

  !> The spec of hs_field_plan_create's arguments; .false. (and the error finished) when they disagree.
  logical function field_spec(global, ghost, ghost_low, ghost_high, pattern, element_bytes, spec, stat, errmsg)
    integer, intent(in) :: global(:)
    integer, intent(in), optional :: ghost, ghost_low(:), ghost_high(:), pattern, element_bytes
    type(hs_field_spec), intent(out) :: spec
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer :: n
    n = size(global)
    field_spec = n >= 1 .and. n <= 3
    if (present(ghost_low)) field_spec = field_spec .and. size(ghost_low) == n
    if (present(ghost_high)) field_spec = field_spec .and. size(ghost_high) == n
    if (.not. field_spec) then
      call fortran_error('hs_field_plan_create: global must have 1, 2 or 3 entries, and ghost_low and ' // &
                         'ghost_high as many as global', stat, errmsg)
      return
    end if
    call hs_field_spec_init(spec)
    spec%global = 1
    spec%global(1:n) = global
    spec%ghost_low = 0
    spec%ghost_high = 0
    spec%ghost_low(1:n) = 1
    if (present(ghost)) spec%ghost_low(1:n) = ghost
    spec%ghost_high = spec%ghost_low
    if (present(ghost_low)) spec%ghost_low(1:n) = ghost_low
    if (present(ghost_high)) spec%ghost_high(1:n) = ghost_high
    spec%pattern = HS_PATTERN_FULL
    if (present(pattern)) spec%pattern = pattern
    if (present(element_bytes)) spec%element_size = int(element_bytes, c_size_t)
  end function

  !> Releases the plan (collective); a plan never created is ignored.
  subroutine field_plan_free(plan, stat, errmsg)
    type(hs_field_plan), intent(inout) :: plan
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call finish(c_plan_free(plan%handle), stat, errmsg)
    plan%interior = 0
  end subroutine

  !> This rank's box: interior cell i along dimension d is global cell first(d) + i - 1 (global
  !> cells numbered from 1 here); interior cells and the plan's ghost layers per dimension.
  subroutine field_plan_shape(plan, first, interior, ghost_low, ghost_high)
    type(hs_field_plan), intent(in) :: plan
    integer, intent(out), optional :: first(3), interior(3), ghost_low(3), ghost_high(3)
    if (present(first)) first = plan%first
    if (present(interior)) interior = plan%interior
    if (present(ghost_low)) ghost_low = plan%ghost_low
    if (present(ghost_high)) ghost_high = plan%ghost_high
  end subroutine

  !> The strategy that runs (Auto's choice after Auto).
  function field_plan_strategy(plan) result(name)
    type(hs_field_plan), intent(in) :: plan
    character(:), allocatable :: name
    name = c_text(c_plan_strategy(plan%handle))
  end function

  !> The strategies Auto ranks for a field plan of these arguments, fastest first (collective).
  subroutine explain_field(grid, global, ranking, ghost, ghost_low, ghost_high, pattern, element_bytes, &
                              stat, errmsg)
    type(hs_grid), intent(in) :: grid
    integer, intent(in) :: global(:)
    type(hs_strategy_time), allocatable, intent(out) :: ranking(:)
    integer, intent(in), optional :: ghost, ghost_low(:), ghost_high(:), pattern, element_bytes
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(hs_field_spec) :: spec
    type(hs_prediction) :: predictions(64)
    integer(c_int) :: code, count
    allocate (ranking(0))
    if (.not. field_spec(global, ghost, ghost_low, ghost_high, pattern, element_bytes, spec, stat, errmsg)) return
    count = 0
    code = c_explain(grid%handle, spec, predictions, size(predictions, kind=c_int), count)
    if (code == HS_OK) ranking = strategy_times(predictions, int(min(count, size(predictions, kind=c_int))))
    call finish(code, stat, errmsg)
  end subroutine

  !> Split phase: done is .true. once the exchange begun by hs_start_* has finished.
  subroutine field_test(plan, done, stat, errmsg)
    type(hs_field_plan), intent(in) :: plan
    logical, intent(out) :: done
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call test_with(c_test, plan%handle, done, stat, errmsg)
  end subroutine

  !> Split phase: completes the exchange begun by hs_start_*.
  subroutine field_wait(plan, stat, errmsg)
    type(hs_field_plan), intent(in) :: plan
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call finish(c_wait(plan%handle), stat, errmsg)
  end subroutine

  !> The hs_op of an optional `op` (default sum).
  integer(c_int) function reduction(op)
    integer, intent(in), optional :: op
    reduction = HS_SUM
    if (present(op)) reduction = int(op, c_int)
  end function

  !> Runs one exchange of `view` after checking it against the plan's shape.
  subroutine exchange(plan, view, what, op, stat, errmsg)
    type(hs_field_plan), intent(in) :: plan
    type(array_view), intent(in) :: view
    integer, intent(in) :: what
    integer(c_int), intent(in) :: op
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(hs_field_array) :: array
    integer(c_int) :: code
    if (.not. fits(plan, view, what, array, stat, errmsg)) return
    select case (what)
    case (FORWARD)
      code = c_forward(plan%handle, array)
    case (REVERSE)
      code = c_reverse(plan%handle, array, op)
    case (START_FORWARD)
      code = c_start_forward(plan%handle, array)
    case default
      code = c_start_reverse(plan%handle, array, op)
    end select
    call finish(code, stat, errmsg)
  end subroutine

  !> The C description of `view` for `plan`; .false. (and the error finished) when the plan was
  !> not made, or the array is not associated, not contiguous, or lacks room for the ghosts.
  logical function fits(plan, view, what, array, stat, errmsg)
    type(hs_field_plan), intent(in) :: plan
    type(array_view), intent(in) :: view
    integer, intent(in) :: what  ! which exchange, named in the messages
    type(hs_field_array), intent(out) :: array
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    fits = .false.
    if (.not. c_associated(plan%handle)) then
      call fortran_error(trim(call_names(what)) // ': the field plan was not created (or was freed)', stat, errmsg)
    else if (.not. view%associated) then
      call fortran_error(trim(call_names(what)) // ': the array is not allocated (or the pointer not associated)', stat, errmsg)
    else if (.not. view%contiguous) then
      call fortran_error(trim(call_names(what)) // ': the array is not contiguous (a section with strides?): the library ' // &
                         'exchanges the array in place, so pass the whole, contiguous array', stat, errmsg)
    else
      fits = ghost_room(plan, view, what, stat, errmsg)
    end if
    if (.not. fits) return
    array%data = view%data
    array%type = view%type
    array%order = HS_X_FASTEST
    array%ghost_low = 1 - view%lb
    array%ghost_high = view%ub - plan%interior
    array%padding = 0
  end function

  !> Whether `view` spans the plan's interior 1..n and its ghost layers along every dimension.
  logical function ghost_room(plan, view, what, stat, errmsg)
    type(hs_field_plan), intent(in) :: plan
    type(array_view), intent(in) :: view
    integer, intent(in) :: what
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(320) :: message
    integer :: d
    do d = 1, 3
      ghost_room = 1 - view%lb(d) >= plan%ghost_low(d) .and. view%ub(d) - plan%interior(d) >= plan%ghost_high(d)
      if (.not. ghost_room) exit
    end do
    if (ghost_room) return
    if (d > view%rank) then
      write (message, '(a, ": a rank-", i0, " array, but the plan has ", i0, " cells and ", i0, "+", i0, &
                        &" ghost layers along dimension ", i0)') &
          trim(call_names(what)), view%rank, plan%interior(d), plan%ghost_low(d), plan%ghost_high(d), d
    else
      write (message, '(a, ": the array spans ", i0, ":", i0, " along dimension ", i0, ", but the plan''s ", &
                        &"interior is 1:", i0, " with ", i0, " ghost layers below and ", i0, " above: declare ", &
                        &"it with at least ", i0, ":", i0)') &
          trim(call_names(what)), view%lb(d), view%ub(d), d, plan%interior(d), plan%ghost_low(d), plan%ghost_high(d), &
          1 - plan%ghost_low(d), plan%interior(d) + plan%ghost_high(d)
    end if
    call fortran_error(trim(message), stat, errmsg)
  end function

  ! The specific procedures of hs_forward, hs_reverse, hs_start_forward and hs_start_reverse,
  ! named <generic>_<rank>_<type> (haloshift_field_ranks.inc).
#define HS_TYPE_NAME(y) y/**/_r32
#define HS_ELEMENT real(real32)
#define HS_CODE HS_FLOAT
#include "haloshift_field_ranks.inc"
#define HS_TYPE_NAME(y) y/**/_r64
#define HS_ELEMENT real(real64)
#define HS_CODE HS_DOUBLE
#include "haloshift_field_ranks.inc"
#define HS_TYPE_NAME(y) y/**/_i32
#define HS_ELEMENT integer(int32)
#define HS_CODE HS_INT32
#include "haloshift_field_ranks.inc"
#define HS_TYPE_NAME(y) y/**/_i64
#define HS_ELEMENT integer(int64)
#define HS_CODE HS_INT64
#include "haloshift_field_ranks.inc"
end module haloshift_fields
