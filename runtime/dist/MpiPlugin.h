//===- MpiPlugin.h - The C interface of libxlnetc-mpi.so -------*- C++ -*-===//
//
// The plugin wraps the few MPI calls a data-parallel run makes
// (Transport.h), so that only it links libmpi. Every function returns 0 on
// success or an MPI error code (MPI's default handler aborts the job first
// on communication errors). Counts are in elements and fit an int; the
// caller splits larger transfers.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DIST_MPIPLUGIN_H
#define XLNETC_RUNTIME_DIST_MPIPLUGIN_H

#ifdef __cplusplus
extern "C" {
#endif

/// The interface version the runtime expects (checked when loaded).
#define XLNETC_MPI_PLUGIN_VERSION 1

int xlnetc_mpi_version(void);
/// MPI_Init (once), then this rank, the world's size and the library's
/// version string (MPI_Get_library_version, first line).
int xlnetc_mpi_init(int *rank, int *size, char *library, int libraryBytes);
int xlnetc_mpi_alltoallv_f32(const float *send, const int *sendCounts, const int *sendDispls,
                             float *recv, const int *recvCounts, const int *recvDispls);
int xlnetc_mpi_allgatherv_f32(const float *send, int count, float *recv, const int *counts,
                              const int *displs);
int xlnetc_mpi_allgather_bytes(const void *send, int bytes, void *recv);
int xlnetc_mpi_bcast_bytes(void *data, int bytes, int root);
void xlnetc_mpi_abort(int code);
int xlnetc_mpi_finalize(void);

#ifdef __cplusplus
}
#endif

#endif // XLNETC_RUNTIME_DIST_MPIPLUGIN_H
