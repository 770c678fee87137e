! SPDX-License-Identifier: BSD-3-Clause
!> haloshift_core: errors as Fortran codes expect them (optional stat and errmsg) and grids.
!> Part of module haloshift (use haloshift); the procedures here are its grid procedures.
module haloshift_core
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_ptr, c_null_ptr, c_associated, c_f_pointer
  use, intrinsic :: iso_fortran_env, only: error_unit, real64
  use mpi_f08, only: MPI_Comm
  use haloshift_c, only: HS_OK, HS_ERR_ARGUMENT, hs_grid_options, hs_grid_options_init, c_strlen, &
                         c_last_error => hs_last_error, c_version => hs_version, c_grid_create => hs_grid_create_f, &
                         c_grid_free => hs_grid_free, c_grid_info => hs_grid_info, c_grid_comm => hs_grid_comm_f, hs_prediction, &
                         c_use_calibration => hs_use_calibration, test_fn
  implicit none
  private

  !> A grid of boxes over a communicator (the C handle hs_grid). hs_free releases it; there is no
  !> final procedure, since freeing calls MPI (collectively), which a compiler-chosen moment, after
  !> MPI_Finalize say, could not.
  type, public :: hs_grid
    type(c_ptr) :: handle = c_null_ptr
  end type

  !> One strategy's predicted time for an exchange (hs_explain_field, hs_explain_particles), fastest first.
  type, public :: hs_strategy_time
    character(len=32) :: strategy = ''
    integer :: team(3) = 0
    real(real64) :: seconds = 0
  end type

  interface hs_grid_create
    module procedure grid_create_int, grid_create_f08
  end interface
  interface hs_grid_info
    module procedure grid_info
  end interface
  interface hs_use_calibration
    module procedure use_calibration
  end interface
  interface hs_version
    module procedure version
  end interface
  interface hs_grid_comm
    module procedure grid_comm
  end interface
  interface hs_free
    module procedure grid_free
  end interface

  public :: hs_grid_create, hs_free, hs_grid_info, hs_grid_comm, hs_version, hs_use_calibration
  ! for the other parts of module haloshift, not re-exported by it
  public :: finish, c_string, c_text, fortran_error, strategy_times, test_with, strategy_or_auto

contains

  !> Ends a call: stat present, the code (and errmsg the text on failure); stat absent and a
  !> failure, the text on error_unit and error stop. `message` is a Fortran-side error's text;
  !> absent, the C library's hs_last_error().
  subroutine finish(code, stat, errmsg, message)
    integer(c_int), intent(in) :: code
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(*), intent(in), optional :: message
    if (present(stat)) stat = code
    if (code == HS_OK) return
    if (present(stat)) then
      if (present(errmsg)) then
        if (present(message)) then
          errmsg = message
        else
          errmsg = c_text(c_last_error())
        end if
      end if
      return
    end if
    if (present(message)) then
      write (error_unit, '(a)') 'haloshift: ' // message
    else
      write (error_unit, '(a)') 'haloshift: ' // c_text(c_last_error())
    end if
    error stop 'haloshift: error (pass stat= to handle it)'
  end subroutine

  !> A Fortran-side argument error: finish with HS_ERR_ARGUMENT and `message`.
  subroutine fortran_error(message, stat, errmsg)
    character(*), intent(in) :: message
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call finish(HS_ERR_ARGUMENT, stat, errmsg, message)
  end subroutine

  !> The C string at `text` as a Fortran string ("" for NULL).
  function c_text(text) result(out)
    type(c_ptr), intent(in) :: text
    character(:), allocatable :: out
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(text)) then
      out = ''
      return
    end if
    n = int(c_strlen(text))
    call c_f_pointer(text, chars, [n])
    allocate (character(n) :: out)
    do i = 1, n
      out(i:i) = chars(i)
    end do
  end function

  !> `text` without trailing blanks, NUL-terminated, for a `const char*`.
  function c_string(text) result(out)
    character(*), intent(in) :: text
    character(kind=c_char) :: out(len_trim(text) + 1)
    integer :: i
    do i = 1, len_trim(text)
      out(i) = text(i:i)
    end do
    out(len_trim(text) + 1) = achar(0, c_char)
  end function

  !> The C string of an optional strategy name, "Auto" when absent.
  function strategy_or_auto(strategy) result(out)
    character(*), intent(in), optional :: strategy
    character(kind=c_char), allocatable :: out(:)
    if (present(strategy)) then
      out = c_string(strategy)
    else
      out = c_string('Auto')
    end if
  end function

  !> The library's version, "major.minor.patch".
  function version() result(text)
    character(:), allocatable :: text
    text = c_text(c_version())
  end function

  !> A grid over `comm` (a Fortran integer handle; duplicated; collective). dims: boxes per
  !> dimension (0: chosen), its size the number of dimensions (default 3, or ndims); periodic:
  !> which dimensions wrap (default all); lengths: the domain's, all > 0, for the dims with the
  !> smallest surface (MD codes; default MPI_Dims_create's); first_fastest: ranks numbered with x
  !> varying fastest (PETSc, LAMMPS; default the last dimension, as MPI_Cart_create); remainder:
  !> who takes a field's cells left over, 0 spread (default), 1 the first boxes (PETSc), 2 the last.
  subroutine grid_create_int(grid, comm, dims, periodic, ndims, lengths, first_fastest, remainder, stat, errmsg)
    type(hs_grid), intent(inout) :: grid
    integer, intent(in) :: comm
    integer, intent(in), optional :: dims(:)
    logical, intent(in), optional :: periodic(:)
    integer, intent(in), optional :: ndims
    real(real64), intent(in), optional :: lengths(:)
    logical, intent(in), optional :: first_fastest
    integer, intent(in), optional :: remainder
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(hs_grid_options) :: options
    integer :: n
    call hs_grid_options_init(options)
    n = options%ndims
    if (present(dims)) n = size(dims)
    if (present(periodic)) n = size(periodic)
    if (present(lengths)) n = size(lengths)
    if (present(ndims)) n = ndims
    if (.not. agree(n, dims, periodic, lengths)) then
      call fortran_error('hs_grid_create: ndims, size(dims), size(periodic) and size(lengths) must agree and be ' // &
                         '1, 2 or 3', stat, errmsg)
      return
    end if
    options%ndims = n
    if (present(dims)) options%dims(1:n) = dims
    if (present(periodic)) options%periodic(1:n) = merge(1, 0, periodic)
    if (present(lengths)) options%lengths(1:n) = lengths
    if (present(first_fastest)) options%first_fastest = merge(1, 0, first_fastest)
    if (present(remainder)) options%remainder = remainder
    call finish(c_grid_create(int(comm, c_int), options, grid%handle), stat, errmsg)
  end subroutine

  !> Whether the sizes of the optional per-dimension arguments are all n, and n is 1, 2 or 3.
  logical function agree(n, dims, periodic, lengths)
    integer, intent(in) :: n
    integer, intent(in), optional :: dims(:)
    logical, intent(in), optional :: periodic(:)
    real(real64), intent(in), optional :: lengths(:)
    agree = n >= 1 .and. n <= 3
    if (present(dims)) agree = agree .and. size(dims) == n
    if (present(periodic)) agree = agree .and. size(periodic) == n
    if (present(lengths)) agree = agree .and. size(lengths) == n
  end function

  !> The same from mpi_f08's type(MPI_Comm).
  subroutine grid_create_f08(grid, comm, dims, periodic, ndims, lengths, first_fastest, remainder, stat, errmsg)
    type(hs_grid), intent(inout) :: grid
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in), optional :: dims(:)
    logical, intent(in), optional :: periodic(:)
    integer, intent(in), optional :: ndims
    real(real64), intent(in), optional :: lengths(:)
    logical, intent(in), optional :: first_fastest
    integer, intent(in), optional :: remainder
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call grid_create_int(grid, comm%MPI_VAL, dims, periodic, ndims, lengths, first_fastest, remainder, stat, errmsg)
  end subroutine

  !> Releases the grid (its communicator; collective); a grid never created is ignored.
  subroutine grid_free(grid, stat, errmsg)
    type(hs_grid), intent(inout) :: grid
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call finish(c_grid_free(grid%handle), stat, errmsg)
  end subroutine

  !> This rank, the ranks, boxes per dimension, this box's coordinates (from 0), which dimensions wrap.
  subroutine grid_info(grid, ndims, rank, size, dims, coords, periodic, stat, errmsg)
    type(hs_grid), intent(in) :: grid
    integer, intent(out), optional :: ndims, rank, size, dims(3), coords(3)
    logical, intent(out), optional :: periodic(3)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int) :: n, r, s, d(3), c(3), p(3), code
    code = c_grid_info(grid%handle, n, r, s, d, c, p)
    if (present(ndims)) ndims = n
    if (present(rank)) rank = r
    if (present(size)) size = s
    if (present(dims)) dims = d
    if (present(coords)) coords = c
    if (present(periodic)) periodic = p /= 0
    call finish(code, stat, errmsg)
  end subroutine

  !> The grid's own (duplicated) communicator, as mpi_f08's type(MPI_Comm).
  subroutine grid_comm(grid, comm, stat, errmsg)
    type(hs_grid), intent(in) :: grid
    type(MPI_Comm), intent(out) :: comm
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int) :: handle
    handle = 0
    call finish(c_grid_comm(grid%handle, handle), stat, errmsg)
    comm%MPI_VAL = handle
  end subroutine

  !> Makes Auto read the calibration file at `path` (written by haloshift-calibrate), checked now.
  subroutine use_calibration(path, stat, errmsg)
    character(*), intent(in) :: path
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call finish(c_use_calibration(c_string(path)), stat, errmsg)
  end subroutine

  !> hs_test of a field or particle plan: `test` on its handle, the flag as a logical.
  subroutine test_with(test, handle, done, stat, errmsg)
    procedure(test_fn) :: test
    type(c_ptr), intent(in) :: handle
    logical, intent(out) :: done
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int) :: flag
    flag = 0
    call finish(test(handle, flag), stat, errmsg)
    done = flag /= 0
  end subroutine

  !> The first `count` predictions as Fortran values.
  function strategy_times(predictions, count) result(times)
    type(hs_prediction), intent(in) :: predictions(:)
    integer, intent(in) :: count
    type(hs_strategy_time) :: times(count)
    integer :: i, j
    do i = 1, count
      do j = 1, size(predictions(i)%strategy)
        if (predictions(i)%strategy(j) == achar(0, c_char)) exit
        times(i)%strategy(j:j) = predictions(i)%strategy(j)
      end do
      times(i)%team = predictions(i)%team
      times(i)%seconds = predictions(i)%seconds
    end do
  end function
end module haloshift_core
