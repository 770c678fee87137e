! SPDX-License-Identifier: BSD-3-Clause
!> Module haloshift: haloshift for Fortran 2008 (use haloshift), on the C interface
!> bindings/c/haloshift.h (module haloshift_c mirrors it one to one). Grids from an integer or
!> mpi_f08 communicator, field plans and their exchanges over arrays whose bounds include the
!> ghosts, particle plans and migrate over x(3, capacity), strategies by name (Auto included)
!> with their predicted times, the calibration file. Every procedure takes optional stat and
!> errmsg: absent, an error prints its text on error_unit and stops (error stop); present, stat
!> gets the hs_status (HS_OK, 0, on success) and errmsg the text. bindings/fortran/README.md.
module haloshift
  use haloshift_c, only: HS_OK, HS_ERR_ARGUMENT, HS_ERR_NULL, HS_ERR_MPI, HS_ERR_MEMORY, HS_ERR_INTERNAL, HS_SUM, &
                         HS_MIN, HS_MAX, HS_PATTERN_FULL, HS_PATTERN_FACES, HS_PATTERN_FACES_AND_EDGES, &
                         HS_MAX_COLUMNS
  use haloshift_core, only: hs_grid, hs_strategy_time, hs_grid_create, hs_grid_info, hs_grid_comm, hs_version, &
                            hs_use_calibration, hs_free
  use haloshift_fields, only: hs_field_plan, hs_field_plan_create, hs_field_plan_shape, hs_field_plan_strategy, &
                              hs_explain_field, hs_forward, hs_reverse, hs_start_forward, hs_start_reverse, hs_test, &
                              hs_wait, hs_free
  use haloshift_particles, only: hs_particle_plan, hs_particle_column, hs_column_of, hs_particle_plan_create, &
                                 hs_particle_plan_rebuild, hs_particle_plan_sizes, hs_particle_plan_strategy, &
                                 hs_particle_forward_positions, hs_particle_forward, hs_particle_reverse, hs_migrate, &
                                 hs_explain_particles, hs_test, hs_wait, hs_free
  implicit none
  public
end module haloshift
