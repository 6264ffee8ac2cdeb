//===- MpiPlugin.cpp - libxlnetc-mpi.so: MPI behind a C interface ---------===//

#include "runtime/dist/MpiPlugin.h"

#include <mpi.h>

#include <cstring>

extern "C" {

int xlnetc_mpi_version(void) { return XLNETC_MPI_PLUGIN_VERSION; }

int xlnetc_mpi_init(int *rank, int *size, char *library, int libraryBytes) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    if (int rc = MPI_Init(nullptr, nullptr); rc != MPI_SUCCESS)
      return rc;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  if (library && libraryBytes > 0) {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(text, &length);
    const char *end = std::strpbrk(text, ",\n");
    const int n = int(end ? end - text : std::strlen(text));
    std::strncpy(library, text, size_t(libraryBytes - 1));
    library[n < libraryBytes - 1 ? n : libraryBytes - 1] = '\0';
  }
  return MPI_SUCCESS;
}

int xlnetc_mpi_alltoallv_f32(const float *send, const int *sendCounts, const int *sendDispls,
                             float *recv, const int *recvCounts, const int *recvDispls) {
  return MPI_Alltoallv(send, sendCounts, sendDispls, MPI_FLOAT, recv, recvCounts, recvDispls,
                       MPI_FLOAT, MPI_COMM_WORLD);
}

int xlnetc_mpi_allgatherv_f32(const float *send, int count, float *recv, const int *counts,
                              const int *displs) {
  return MPI_Allgatherv(send, count, MPI_FLOAT, recv, counts, displs, MPI_FLOAT,
                        MPI_COMM_WORLD);
}

int xlnetc_mpi_allgather_bytes(const void *send, int bytes, void *recv) {
  return MPI_Allgather(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, MPI_COMM_WORLD);
}

int xlnetc_mpi_bcast_bytes(void *data, int bytes, int root) {
  return MPI_Bcast(data, bytes, MPI_BYTE, root, MPI_COMM_WORLD);
}

void xlnetc_mpi_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

int xlnetc_mpi_finalize(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized ? MPI_SUCCESS : MPI_Finalize();
}

} // extern "C"
