! SPDX-License-Identifier: BSD-3-Clause
! The bind(c) types and constants of module haloshift_c against haloshift.h as the C compiler
! sees it (layout.c): each struct's size, each member's offset and size, each enumerator's value,
! by name; and as many of each as the C tables hold, so that a member or enumerator added to the
! header without its Fortran twin fails here. One process, no MPI.
program test_layout
  use, intrinsic :: iso_c_binding, only: c_int, c_long, c_size_t, c_char, c_ptr, c_loc, c_sizeof, c_intptr_t, &
                                         c_null_char
  use, intrinsic :: iso_fortran_env, only: output_unit
  use haloshift_c
  implicit none
  interface
    function layout_members() bind(c) result(n)
      import :: c_int
      integer(c_int) :: n
    end function
    function layout_constants() bind(c) result(n)
      import :: c_int
      integer(c_int) :: n
    end function
    function layout_member(type, name, offset, size) bind(c) result(found)
      import :: c_int, c_char, c_size_t
      character(kind=c_char), intent(in) :: type(*), name(*)
      integer(c_size_t), intent(out) :: offset, size
      integer(c_int) :: found
    end function
    function layout_constant(name, value) bind(c) result(found)
      import :: c_int, c_char, c_long
      character(kind=c_char), intent(in) :: name(*)
      integer(c_long), intent(out) :: value
      integer(c_int) :: found
    end function
  end interface
  type(hs_grid_options), target :: go
  type(hs_field_spec), target :: fs
  type(hs_field_array), target :: fa
  type(hs_positions), target :: po
  type(hs_column), target :: co
  type(hs_domain), target :: do
  type(hs_prediction), target :: pr
  integer :: failures, members, constants

  failures = 0
  members = 0
  constants = 0
  call whole('hs_grid_options', c_sizeof(go))
  call member('hs_grid_options', 'ndims', c_loc(go), c_loc(go%ndims), c_sizeof(go%ndims))
  call member('hs_grid_options', 'dims', c_loc(go), c_loc(go%dims), c_sizeof(go%dims))
  call member('hs_grid_options', 'periodic', c_loc(go), c_loc(go%periodic), c_sizeof(go%periodic))
  call member('hs_grid_options', 'lengths', c_loc(go), c_loc(go%lengths), c_sizeof(go%lengths))
  call member('hs_grid_options', 'first_fastest', c_loc(go), c_loc(go%first_fastest), c_sizeof(go%first_fastest))
  call member('hs_grid_options', 'remainder', c_loc(go), c_loc(go%remainder), c_sizeof(go%remainder))
  call whole('hs_field_spec', c_sizeof(fs))
  call member('hs_field_spec', 'global', c_loc(fs), c_loc(fs%global), c_sizeof(fs%global))
  call member('hs_field_spec', 'cuts', c_loc(fs), c_loc(fs%cuts), c_sizeof(fs%cuts))
  call member('hs_field_spec', 'ghost_low', c_loc(fs), c_loc(fs%ghost_low), c_sizeof(fs%ghost_low))
  call member('hs_field_spec', 'ghost_high', c_loc(fs), c_loc(fs%ghost_high), c_sizeof(fs%ghost_high))
  call member('hs_field_spec', 'pattern', c_loc(fs), c_loc(fs%pattern), c_sizeof(fs%pattern))
  call member('hs_field_spec', 'element_size', c_loc(fs), c_loc(fs%element_size), c_sizeof(fs%element_size))
  call whole('hs_field_array', c_sizeof(fa))
  call member('hs_field_array', 'data', c_loc(fa), c_loc(fa%data), c_sizeof(fa%data))
  call member('hs_field_array', 'type', c_loc(fa), c_loc(fa%type), c_sizeof(fa%type))
  call member('hs_field_array', 'order', c_loc(fa), c_loc(fa%order), c_sizeof(fa%order))
  call member('hs_field_array', 'ghost_low', c_loc(fa), c_loc(fa%ghost_low), c_sizeof(fa%ghost_low))
  call member('hs_field_array', 'ghost_high', c_loc(fa), c_loc(fa%ghost_high), c_sizeof(fa%ghost_high))
  call member('hs_field_array', 'padding', c_loc(fa), c_loc(fa%padding), c_sizeof(fa%padding))
  call whole('hs_positions', c_sizeof(po))
  call member('hs_positions', 'x', c_loc(po), c_loc(po%x), c_sizeof(po%x))
  call member('hs_positions', 'y', c_loc(po), c_loc(po%y), c_sizeof(po%y))
  call member('hs_positions', 'z', c_loc(po), c_loc(po%z), c_sizeof(po%z))
  call member('hs_positions', 'type', c_loc(po), c_loc(po%type), c_sizeof(po%type))
  call member('hs_positions', 'stride', c_loc(po), c_loc(po%stride), c_sizeof(po%stride))
  call whole('hs_column', c_sizeof(co))
  call member('hs_column', 'data', c_loc(co), c_loc(co%data), c_sizeof(co%data))
  call member('hs_column', 'type', c_loc(co), c_loc(co%type), c_sizeof(co%type))
  call member('hs_column', 'components', c_loc(co), c_loc(co%components), c_sizeof(co%components))
  call member('hs_column', 'stride', c_loc(co), c_loc(co%stride), c_sizeof(co%stride))
  call whole('hs_domain', c_sizeof(do))
  call member('hs_domain', 'lo', c_loc(do), c_loc(do%lo), c_sizeof(do%lo))
  call member('hs_domain', 'hi', c_loc(do), c_loc(do%hi), c_sizeof(do%hi))
  call whole('hs_prediction', c_sizeof(pr))
  call member('hs_prediction', 'strategy', c_loc(pr), c_loc(pr%strategy), c_sizeof(pr%strategy))
  call member('hs_prediction', 'team', c_loc(pr), c_loc(pr%team), c_sizeof(pr%team))
  call member('hs_prediction', 'shared_memory', c_loc(pr), c_loc(pr%shared_memory), c_sizeof(pr%shared_memory))
  call member('hs_prediction', 'seconds', c_loc(pr), c_loc(pr%seconds), c_sizeof(pr%seconds))
  if (members /= layout_members()) call fail('haloshift.h has members this test does not check', members)

  call constant('HS_OK', HS_OK)
  call constant('HS_ERR_ARGUMENT', HS_ERR_ARGUMENT)
  call constant('HS_ERR_NULL', HS_ERR_NULL)
  call constant('HS_ERR_MPI', HS_ERR_MPI)
  call constant('HS_ERR_MEMORY', HS_ERR_MEMORY)
  call constant('HS_ERR_INTERNAL', HS_ERR_INTERNAL)
  call constant('HS_FLOAT', HS_FLOAT)
  call constant('HS_DOUBLE', HS_DOUBLE)
  call constant('HS_INT32', HS_INT32)
  call constant('HS_INT64', HS_INT64)
  call constant('HS_X_FASTEST', HS_X_FASTEST)
  call constant('HS_Z_FASTEST', HS_Z_FASTEST)
  call constant('HS_SUM', HS_SUM)
  call constant('HS_MIN', HS_MIN)
  call constant('HS_MAX', HS_MAX)
  call constant('HS_PATTERN_FULL', HS_PATTERN_FULL)
  call constant('HS_PATTERN_FACES', HS_PATTERN_FACES)
  call constant('HS_PATTERN_FACES_AND_EDGES', HS_PATTERN_FACES_AND_EDGES)
  call constant('HS_MAX_COLUMNS', HS_MAX_COLUMNS)
  if (constants /= layout_constants()) call fail('haloshift.h has enumerators this test does not check', constants)

  write (output_unit, '("fortran layout test: ", i0, " members, ", i0, " constants, ", i0, " failures")') &
      members, constants, failures
  if (failures /= 0) error stop 1

contains

  subroutine fail(what, value)
    character(*), intent(in) :: what
    integer, intent(in) :: value
    write (output_unit, '("FAIL ", a, " (", i0, ")")') what, value
    failures = failures + 1
  end subroutine

  subroutine whole(type, size)
    character(*), intent(in) :: type
    integer(c_size_t), intent(in) :: size
    integer(c_size_t) :: c_offset, c_size
    members = members + 1
    if (layout_member(type // c_null_char, c_null_char, c_offset, c_size) == 0) then
      call fail(type // ': no such struct in layout.c', 0)
    else if (c_size /= size) then
      call fail(type // ': sizeof in C differs from c_sizeof in Fortran', int(size))
    end if
  end subroutine

  subroutine member(type, name, base, address, size)
    character(*), intent(in) :: type, name
    type(c_ptr), intent(in) :: base, address
    integer(c_size_t), intent(in) :: size
    integer(c_size_t) :: c_offset, c_size, offset
    members = members + 1
    offset = int(transfer(address, 0_c_intptr_t) - transfer(base, 0_c_intptr_t), c_size_t)
    if (layout_member(type // c_null_char, name // c_null_char, c_offset, c_size) == 0) then
      call fail(type // '%' // name // ': no such member in layout.c', 0)
    else if (c_offset /= offset .or. c_size /= size) then
      call fail(type // '%' // name // ': offset or size differs from C (Fortran offset)', int(offset))
    end if
  end subroutine

  subroutine constant(name, value)
    character(*), intent(in) :: name
    integer(c_int), intent(in) :: value
    integer(c_long) :: c_value
    constants = constants + 1
    if (layout_constant(name // c_null_char, c_value) == 0) then
      call fail(name // ': no such enumerator in layout.c', 0)
    else if (c_value /= value) then
      call fail(name // ': the Fortran value differs from C', int(value))
    end if
  end subroutine
end program test_layout
