! SPDX-License-Identifier: BSD-3-Clause
!> haloshift_c: the C interface (bindings/c/haloshift.h) as Fortran sees it, one to one: the
!> bind(c) types that mirror the C structs, the enumerators, and an interface block per function,
!> under the C names. Module haloshift builds the Fortran procedures on it; a code may use this
!> module directly where it wants the C calls themselves (renaming on use keeps both apart:
!> use haloshift_c, only: c_forward => hs_field_forward).
module haloshift_c
  use, intrinsic :: iso_c_binding, only: c_int, c_double, c_size_t, c_char, c_ptr, c_funptr
  implicit none
  private

  ! hs_status
  integer(c_int), parameter, public :: HS_OK = 0, HS_ERR_ARGUMENT = 1, HS_ERR_NULL = 2, HS_ERR_MPI = 3, &
                                       HS_ERR_MEMORY = 4, HS_ERR_INTERNAL = 5
  ! hs_type, hs_order, hs_op, hs_pattern
  integer(c_int), parameter, public :: HS_FLOAT = 0, HS_DOUBLE = 1, HS_INT32 = 2, HS_INT64 = 3
  integer(c_int), parameter, public :: HS_X_FASTEST = 0, HS_Z_FASTEST = 1
  integer(c_int), parameter, public :: HS_SUM = 0, HS_MIN = 1, HS_MAX = 2
  integer(c_int), parameter, public :: HS_PATTERN_FULL = 0, HS_PATTERN_FACES = 1, HS_PATTERN_FACES_AND_EDGES = 2
  !> The most columns one particle forward moves.
  integer(c_int), parameter, public :: HS_MAX_COLUMNS = 8

  type, bind(c), public :: hs_grid_options
    integer(c_int) :: ndims
    integer(c_int) :: dims(3)
    integer(c_int) :: periodic(3)
    real(c_double) :: lengths(3)
    integer(c_int) :: first_fastest
    integer(c_int) :: remainder
  end type

  type, bind(c), public :: hs_field_spec
    integer(c_int) :: global(3)
    type(c_ptr) :: cuts(3)
    integer(c_int) :: ghost_low(3)
    integer(c_int) :: ghost_high(3)
    integer(c_int) :: pattern
    integer(c_size_t) :: element_size
  end type

  type, bind(c), public :: hs_field_array
    type(c_ptr) :: data
    integer(c_int) :: type
    integer(c_int) :: order
    integer(c_int) :: ghost_low(3)
    integer(c_int) :: ghost_high(3)
    integer(c_int) :: padding(3)
  end type

  type, bind(c), public :: hs_positions
    type(c_ptr) :: x
    type(c_ptr) :: y
    type(c_ptr) :: z
    integer(c_int) :: type
    integer(c_size_t) :: stride
  end type

  type, bind(c), public :: hs_column
    type(c_ptr) :: data
    integer(c_int) :: type
    integer(c_int) :: components
    integer(c_size_t) :: stride
  end type

  type, bind(c), public :: hs_domain
    real(c_double) :: lo(3)
    real(c_double) :: hi(3)
  end type

  type, bind(c), public :: hs_prediction
    character(kind=c_char) :: strategy(32)
    integer(c_int) :: team(3)
    integer(c_int) :: shared_memory
    real(c_double) :: seconds
  end type

  public :: hs_last_error, hs_version, hs_grid_options_init, hs_grid_create_f, hs_grid_free, hs_grid_info, &
            hs_grid_comm_f, hs_field_spec_init, hs_field_plan_create, hs_field_plan_free, hs_field_plan_shape, &
            hs_field_plan_strategy, hs_field_array_init, hs_field_forward, hs_field_reverse, &
            hs_field_start_forward, hs_field_start_reverse, hs_field_test, hs_field_progress, hs_field_wait, &
            hs_particle_plan_create, hs_particle_plan_rebuild, hs_particle_plan_free, hs_particle_plan_sizes, &
            hs_particle_plan_strategy, hs_particle_forward_positions, hs_particle_forward, hs_particle_reverse, &
            hs_particle_start_forward_positions, hs_particle_start_forward, hs_particle_start_reverse, &
            hs_particle_test, hs_particle_wait, hs_resize_fn, hs_migrate, hs_explain_field, hs_explain_particles, &
            hs_use_calibration, c_strlen, test_fn

  abstract interface
    !> hs_resize_fn: make every array hold `count` particles, keeping the first `kept`, and store
    !> the new addresses into x and columns(1:ncolumns); 0 on success.
    function hs_resize_fn(count, kept, x, columns, ncolumns, user) bind(c) result(status)
      import :: c_size_t, c_int, c_ptr, hs_positions, hs_column
      integer(c_size_t), value :: count, kept
      type(hs_positions), intent(inout) :: x
      type(hs_column), intent(inout) :: columns(*)
      integer(c_int), value :: ncolumns
      type(c_ptr), value :: user
      integer(c_int) :: status
    end function
    !> hs_*_test: done nonzero once the exchange in flight has finished.
    function test_fn(handle, done) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: done
      integer(c_int) :: status
    end function
  end interface

  ! One interface block per function, even where two share a signature: gfortran 12 drops the
  ! VALUE attribute from the second call of a procedure declared procedure(abstract), bind(c)
  ! and used from another module (it passes the handle's address, not the handle).
  interface
    function hs_last_error() bind(c) result(text)
      import :: c_ptr
      type(c_ptr) :: text
    end function
    function hs_version() bind(c) result(text)
      import :: c_ptr
      type(c_ptr) :: text
    end function
    function hs_grid_free(handle) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: handle
      integer(c_int) :: status
    end function
    function hs_grid_comm_f(grid, comm) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: grid
      integer(c_int), intent(out) :: comm
      integer(c_int) :: status
    end function
    function hs_field_plan_free(handle) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: handle
      integer(c_int) :: status
    end function
    function hs_field_plan_strategy(handle) bind(c) result(text)
      import :: c_ptr
      type(c_ptr), value :: handle
      type(c_ptr) :: text
    end function
    function hs_field_forward(plan, array) bind(c) result(status)
      import :: c_int, c_ptr, hs_field_array
      type(c_ptr), value :: plan
      type(hs_field_array), intent(in) :: array
      integer(c_int) :: status
    end function
    function hs_field_start_forward(plan, array) bind(c) result(status)
      import :: c_int, c_ptr, hs_field_array
      type(c_ptr), value :: plan
      type(hs_field_array), intent(in) :: array
      integer(c_int) :: status
    end function
    function hs_field_reverse(plan, array, op) bind(c) result(status)
      import :: c_int, c_ptr, hs_field_array
      type(c_ptr), value :: plan
      type(hs_field_array), intent(in) :: array
      integer(c_int), value :: op
      integer(c_int) :: status
    end function
    function hs_field_start_reverse(plan, array, op) bind(c) result(status)
      import :: c_int, c_ptr, hs_field_array
      type(c_ptr), value :: plan
      type(hs_field_array), intent(in) :: array
      integer(c_int), value :: op
      integer(c_int) :: status
    end function
    function hs_field_test(handle, done) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: done
      integer(c_int) :: status
    end function
    function hs_field_progress(handle) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int) :: status
    end function
    function hs_field_wait(handle) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int) :: status
    end function
    function hs_particle_plan_free(handle) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: handle
      integer(c_int) :: status
    end function
    function hs_particle_plan_strategy(handle) bind(c) result(text)
      import :: c_ptr
      type(c_ptr), value :: handle
      type(c_ptr) :: text
    end function
    function hs_particle_forward_positions(plan, x, ncolumns, columns) bind(c) result(status)
      import :: c_int, c_ptr, hs_positions, hs_column
      type(c_ptr), value :: plan
      type(hs_positions), intent(in) :: x
      integer(c_int), value :: ncolumns
      type(hs_column), intent(in) :: columns(*)
      integer(c_int) :: status
    end function
    function hs_particle_start_forward_positions(plan, x, ncolumns, columns) bind(c) result(status)
      import :: c_int, c_ptr, hs_positions, hs_column
      type(c_ptr), value :: plan
      type(hs_positions), intent(in) :: x
      integer(c_int), value :: ncolumns
      type(hs_column), intent(in) :: columns(*)
      integer(c_int) :: status
    end function
    function hs_particle_forward(plan, ncolumns, columns) bind(c) result(status)
      import :: c_int, c_ptr, hs_column
      type(c_ptr), value :: plan
      integer(c_int), value :: ncolumns
      type(hs_column), intent(in) :: columns(*)
      integer(c_int) :: status
    end function
    function hs_particle_start_forward(plan, ncolumns, columns) bind(c) result(status)
      import :: c_int, c_ptr, hs_column
      type(c_ptr), value :: plan
      integer(c_int), value :: ncolumns
      type(hs_column), intent(in) :: columns(*)
      integer(c_int) :: status
    end function
    function hs_particle_reverse(plan, column, op) bind(c) result(status)
      import :: c_int, c_ptr, hs_column
      type(c_ptr), value :: plan
      type(hs_column), intent(in) :: column
      integer(c_int), value :: op
      integer(c_int) :: status
    end function
    function hs_particle_start_reverse(plan, column, op) bind(c) result(status)
      import :: c_int, c_ptr, hs_column
      type(c_ptr), value :: plan
      type(hs_column), intent(in) :: column
      integer(c_int), value :: op
      integer(c_int) :: status
    end function
    function hs_particle_test(handle, done) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: done
      integer(c_int) :: status
    end function
    function hs_particle_wait(handle) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int) :: status
    end function
    function c_strlen(s) bind(c, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
    subroutine hs_grid_options_init(options) bind(c)
      import :: hs_grid_options
      type(hs_grid_options), intent(out) :: options
    end subroutine
    function hs_grid_create_f(comm, options, grid) bind(c) result(status)
      import :: c_int, c_ptr, hs_grid_options
      integer(c_int), value :: comm  ! MPI_Fint
      type(hs_grid_options), intent(in) :: options
      type(c_ptr), intent(out) :: grid
      integer(c_int) :: status
    end function
    function hs_grid_info(grid, ndims, rank, size, dims, coords, periodic) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: grid
      integer(c_int), intent(out) :: ndims, rank, size, dims(3), coords(3), periodic(3)
      integer(c_int) :: status
    end function
    subroutine hs_field_spec_init(spec) bind(c)
      import :: hs_field_spec
      type(hs_field_spec), intent(out) :: spec
    end subroutine
    function hs_field_plan_create(grid, strategy, spec, plan) bind(c) result(status)
      import :: c_int, c_ptr, c_char, hs_field_spec
      type(c_ptr), value :: grid
      character(kind=c_char), intent(in) :: strategy(*)
      type(hs_field_spec), intent(in) :: spec
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function
    function hs_field_plan_shape(plan, lo, interior, ghost_low, ghost_high) bind(c) result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), intent(out) :: lo(3), interior(3), ghost_low(3), ghost_high(3)
      integer(c_int) :: status
    end function
    subroutine hs_field_array_init(array, data, type) bind(c)
      import :: c_int, c_ptr, hs_field_array
      type(hs_field_array), intent(out) :: array
      type(c_ptr), value :: data
      integer(c_int), value :: type
    end subroutine
    function hs_particle_plan_create(grid, strategy, domain, cutoff, x, count, plan) bind(c) result(status)
      import :: c_int, c_ptr, c_char, c_double, c_size_t, hs_domain, hs_positions
      type(c_ptr), value :: grid
      character(kind=c_char), intent(in) :: strategy(*)
      type(hs_domain), intent(in) :: domain
      real(c_double), intent(in) :: cutoff(3)
      type(hs_positions), intent(in) :: x
      integer(c_size_t), value :: count
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function
    function hs_particle_plan_rebuild(plan, x, count) bind(c) result(status)
      import :: c_int, c_ptr, c_size_t, hs_positions
      type(c_ptr), value :: plan
      type(hs_positions), intent(in) :: x
      integer(c_size_t), value :: count
      integer(c_int) :: status
    end function
    function hs_particle_plan_sizes(plan, owned, ghosts) bind(c) result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: plan
      integer(c_size_t), intent(out) :: owned, ghosts
      integer(c_int) :: status
    end function
    function hs_migrate(grid, domain, x, ncolumns, columns, count, capacity, keep_order, resize, user) &
        bind(c) result(status)
      import :: c_int, c_ptr, c_funptr, c_size_t, hs_domain, hs_positions, hs_column
      type(c_ptr), value :: grid
      type(hs_domain), intent(in) :: domain
      type(hs_positions), intent(inout) :: x
      integer(c_int), value :: ncolumns
      type(hs_column), intent(inout) :: columns(*)
      integer(c_size_t), intent(inout) :: count
      integer(c_size_t), value :: capacity
      integer(c_int), value :: keep_order
      type(c_funptr), value :: resize
      type(c_ptr), value :: user
      integer(c_int) :: status
    end function
    function hs_explain_field(grid, spec, out, capacity, count) bind(c) result(status)
      import :: c_int, c_ptr, hs_field_spec, hs_prediction
      type(c_ptr), value :: grid
      type(hs_field_spec), intent(in) :: spec
      type(hs_prediction), intent(out) :: out(*)
      integer(c_int), value :: capacity
      integer(c_int), intent(out) :: count
      integer(c_int) :: status
    end function
    function hs_explain_particles(grid, domain, cutoff, count, out, capacity, written) bind(c) result(status)
      import :: c_int, c_ptr, c_double, c_size_t, hs_domain, hs_prediction
      type(c_ptr), value :: grid
      type(hs_domain), intent(in) :: domain
      real(c_double), intent(in) :: cutoff(3)
      integer(c_size_t), value :: count
      type(hs_prediction), intent(out) :: out(*)
      integer(c_int), value :: capacity
      integer(c_int), intent(out) :: written
      integer(c_int) :: status
    end function
    function hs_use_calibration(path) bind(c) result(status)
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int) :: status
    end function
  end interface
end module haloshift_c
