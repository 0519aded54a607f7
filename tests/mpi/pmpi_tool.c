/* pmpi_tool: a profiling tool in the style of mpiP, TAU or Score-P, for
 * pmpi_check. It defines some MPI_ functions itself; each one counts the
 * call and forwards it to the library's PMPI_ twin (MPI-4 section 15.2).
 * Linked before the MPI library, statically (its MPI_ names are weak there)
 * or as a shared library ahead of it. pmpi_tool_count() reads the counts. */
#include <mpi.h>
#include <string.h>

enum {
  kInit, kFinalize, kSend, kRsend, kIsend, kIrsend, kRecv, kWait, kAllreduce,
  kAllgather, kAllgatherv, kBarrier, kComm_rank, kNumCounted
};
static const char* const kNames[kNumCounted] = {
    "MPI_Init",      "MPI_Finalize",  "MPI_Send",      "MPI_Rsend",
    "MPI_Isend",     "MPI_Irsend",    "MPI_Recv",      "MPI_Wait",
    "MPI_Allreduce", "MPI_Allgather", "MPI_Allgatherv", "MPI_Barrier",
    "MPI_Comm_rank"};
static long counts[kNumCounted];

long pmpi_tool_count(const char* name) {
  for (int i = 0; i < kNumCounted; ++i)
    if (strcmp(name, kNames[i]) == 0) return counts[i];
  return -1;
}

int MPI_Init(int* argc, char*** argv) {
  ++counts[kInit];
  return PMPI_Init(argc, argv);
}
int MPI_Finalize(void) {
  ++counts[kFinalize];
  return PMPI_Finalize();
}
int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag,
             MPI_Comm comm) {
  ++counts[kSend];
  return PMPI_Send(buf, count, type, dest, tag, comm);
}
int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest,
              int tag, MPI_Comm comm) {
  ++counts[kRsend];
  return PMPI_Rsend(buf, count, type, dest, tag, comm);
}
int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest,
              int tag, MPI_Comm comm, MPI_Request* request) {
  ++counts[kIsend];
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}
int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest,
               int tag, MPI_Comm comm, MPI_Request* request) {
  ++counts[kIrsend];
  return PMPI_Irsend(buf, count, type, dest, tag, comm, request);
}
int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag,
             MPI_Comm comm, MPI_Status* status) {
  ++counts[kRecv];
  return PMPI_Recv(buf, count, type, source, tag, comm, status);
}
int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  ++counts[kWait];
  return PMPI_Wait(request, status);
}
int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                  MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ++counts[kAllreduce];
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}
int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm) {
  ++counts[kAllgather];
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm);
}
int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int displs[],
                   MPI_Datatype recvtype, MPI_Comm comm) {
  ++counts[kAllgatherv];
  return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                         displs, recvtype, comm);
}
int MPI_Barrier(MPI_Comm comm) {
  ++counts[kBarrier];
  return PMPI_Barrier(comm);
}
int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  ++counts[kComm_rank];
  return PMPI_Comm_rank(comm, rank);
}
