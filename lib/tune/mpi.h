/* mpi.h - starting and stopping MPI for `tcx tune` under mpirun (mpi.c,
 * built when CMake's TCX_WITH_MPI is on).  Without MPI support the
 * functions say so. */
#ifndef TCX_TUNE_MPI_H
#define TCX_TUNE_MPI_H

#include <stdbool.h>

#include "tune/exec.h"

#ifdef TCX_WITH_MPI
/* True when this process was started by mpirun (or another PMI launcher). */
bool tune_mpi_requested(void);
/* MPI_Init, rank, size and node-local rank. */
enum tcx_status tune_mpi_start(int *argc, char ***argv, struct tune_mpi **out,
			       struct tcx_error *err);
/* MPI_Finalize, or MPI_Abort when a rank fails alone. */
void tune_mpi_stop(bool abort_job);
/* The largest of every rank's value (statuses: any failure is everyone's). */
int tune_mpi_agree_status(int st);
#else
static inline bool tune_mpi_requested(void)
{
	return false;
}
#endif

#endif /* TCX_TUNE_MPI_H */
