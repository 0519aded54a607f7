/* mpi.h: Rondo's MadMPI layer, the MPI-3.1 subset C programs use.
 *
 * A C API over Rondo's C++ core (nmad/mpi/ sources): point-to-point goes to
 * nmad sessions, collectives are nmad/coll schedules run by engine tasks, so
 * nonblocking operations progress in the background (progress threads, the
 * timer trigger) and not only inside MPI calls. Compile and link with
 * `rondo-mpicc` / `rondo-mpicxx` (installed by `bazel run //:install`), run
 * with `rondo-run -n N prog` or under mpirun/srun/prterun (PMIx).
 *
 * Handles are ints (as in MPICH and MadMPI): predefined ones are constants
 * usable in static initialisers. Error handling follows the standard: every
 * function returns MPI_SUCCESS or an error code whose class is one of the
 * MPI_ERR_* below; with MPI_ERRORS_ARE_FATAL (the default on
 * MPI_COMM_WORLD) an error prints its message and aborts the job, with
 * MPI_ERRORS_RETURN the code is returned and MPI_Error_string describes the
 * last error of that class (naming the offending argument).
 *
 * Not implemented (documented in docs/mpi.md): intercommunicators
 * (MPI_Intercomm_*), dynamic processes, MPI-IO, Fortran bindings (the
 * handle conversion functions are there), partitioned communication and
 * the MPI_T tool interface. */
#ifndef RONDO_MPI_H_
#define RONDO_MPI_H_

#include <stddef.h>
#include <stdint.h>

#define RONDO_MPI 1
#define MPI_VERSION 3
#define MPI_SUBVERSION 1

#ifdef __cplusplus
extern "C" {
#endif

typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Win;
typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Message;
typedef int MPI_Session;
#define MPI_SESSION_NULL ((MPI_Session)0)
#define MPI_MESSAGE_NULL ((MPI_Message)0)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)-1)
typedef int MPI_Fint;

typedef struct MPI_Status {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  int rondo_cancelled; /* private: use MPI_Test_cancelled */
  long long rondo_bytes; /* private: use MPI_Get_count */
} MPI_Status;

/* ---- Null and predefined handles ---- */
#define MPI_COMM_NULL ((MPI_Comm)0)
#define MPI_COMM_WORLD ((MPI_Comm)1)
#define MPI_COMM_SELF ((MPI_Comm)2)
#define MPI_GROUP_NULL ((MPI_Group)0)
#define MPI_GROUP_EMPTY ((MPI_Group)1)
#define MPI_REQUEST_NULL ((MPI_Request)0)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)1)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)2)
#define MPI_INFO_NULL ((MPI_Info)0)
#define MPI_WIN_NULL ((MPI_Win)0)
#define MPI_OP_NULL ((MPI_Op)0)
#define MPI_DATATYPE_NULL ((MPI_Datatype)0)

/* ---- Datatypes (1 .. 63 are predefined) ---- */
#define MPI_CHAR ((MPI_Datatype)1)
#define MPI_SIGNED_CHAR ((MPI_Datatype)2)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)3)
#define MPI_BYTE ((MPI_Datatype)4)
#define MPI_SHORT ((MPI_Datatype)5)
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)6)
#define MPI_INT ((MPI_Datatype)7)
#define MPI_UNSIGNED ((MPI_Datatype)8)
#define MPI_LONG ((MPI_Datatype)9)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)10)
#define MPI_LONG_LONG_INT ((MPI_Datatype)11)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)12)
#define MPI_FLOAT ((MPI_Datatype)13)
#define MPI_DOUBLE ((MPI_Datatype)14)
#define MPI_LONG_DOUBLE ((MPI_Datatype)15)
#define MPI_WCHAR ((MPI_Datatype)16)
#define MPI_C_BOOL ((MPI_Datatype)17)
#define MPI_INT8_T ((MPI_Datatype)18)
#define MPI_INT16_T ((MPI_Datatype)19)
#define MPI_INT32_T ((MPI_Datatype)20)
#define MPI_INT64_T ((MPI_Datatype)21)
#define MPI_UINT8_T ((MPI_Datatype)22)
#define MPI_UINT16_T ((MPI_Datatype)23)
#define MPI_UINT32_T ((MPI_Datatype)24)
#define MPI_UINT64_T ((MPI_Datatype)25)
#define MPI_AINT ((MPI_Datatype)26)
#define MPI_OFFSET ((MPI_Datatype)27)
#define MPI_COUNT ((MPI_Datatype)28)
#define MPI_PACKED ((MPI_Datatype)29)
#define MPI_C_FLOAT_COMPLEX ((MPI_Datatype)30)
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX ((MPI_Datatype)31)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)32)
/* pair types, for MPI_MAXLOC and MPI_MINLOC */
#define MPI_FLOAT_INT ((MPI_Datatype)33)
#define MPI_DOUBLE_INT ((MPI_Datatype)34)
#define MPI_LONG_INT ((MPI_Datatype)35)
#define MPI_2INT ((MPI_Datatype)36)
#define MPI_SHORT_INT ((MPI_Datatype)37)
#define MPI_LONG_DOUBLE_INT ((MPI_Datatype)38)
#define RONDO_MPI_LAST_PREDEFINED_DATATYPE 38

/* ---- Reduction operations (1 .. 31 are predefined) ---- */
#define MPI_MAX ((MPI_Op)1)
#define MPI_MIN ((MPI_Op)2)
#define MPI_SUM ((MPI_Op)3)
#define MPI_PROD ((MPI_Op)4)
#define MPI_LAND ((MPI_Op)5)
#define MPI_BAND ((MPI_Op)6)
#define MPI_LOR ((MPI_Op)7)
#define MPI_BOR ((MPI_Op)8)
#define MPI_LXOR ((MPI_Op)9)
#define MPI_BXOR ((MPI_Op)10)
#define MPI_MAXLOC ((MPI_Op)11)
#define MPI_MINLOC ((MPI_Op)12)
#define MPI_REPLACE ((MPI_Op)13)
#define MPI_NO_OP ((MPI_Op)14)

/* ---- Special values ---- */
#define MPI_ANY_SOURCE (-1)
#define MPI_ANY_TAG (-1)
#define MPI_PROC_NULL (-2)
#define MPI_ROOT (-3)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID (-1)
#define MPI_BOTTOM ((void*)0)
#define MPI_IN_PLACE ((void*)1)
#define MPI_STATUS_IGNORE ((MPI_Status*)0)
#define MPI_STATUSES_IGNORE ((MPI_Status*)0)
#define MPI_ERRCODES_IGNORE ((int*)0)
#define MPI_UNWEIGHTED ((int*)2)
#define MPI_WEIGHTS_EMPTY ((int*)3)

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 64
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_LIBRARY_VERSION_STRING 256

/* thread levels */
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* results of MPI_Comm_compare and MPI_Group_compare */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* topologies */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

/* predefined attribute keys (MPI_Comm_get_attr on MPI_COMM_WORLD) */
#define MPI_TAG_UB 1
#define MPI_HOST 2
#define MPI_IO 3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE 5
#define MPI_APPNUM 6
#define MPI_LASTUSEDCODE 7

/* MPI_Comm_split_type */
#define MPI_COMM_TYPE_SHARED 1

/* datatype combiners (MPI_Type_get_envelope) */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR 5
#define MPI_COMBINER_INDEXED 6
#define MPI_COMBINER_HINDEXED 7
#define MPI_COMBINER_INDEXED_BLOCK 8
#define MPI_COMBINER_HINDEXED_BLOCK 9
#define MPI_COMBINER_STRUCT 10
#define MPI_COMBINER_SUBARRAY 11
#define MPI_COMBINER_DARRAY 12 /* (MPI_Type_create_darray is not there) */
#define MPI_COMBINER_RESIZED 17

/* array storage orders (MPI_Type_create_subarray) */
#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57

/* ---- Error classes ---- */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_KEYVAL 20
#define MPI_ERR_NO_MEM 21
#define MPI_ERR_BASE 22
#define MPI_ERR_INFO_KEY 23
#define MPI_ERR_INFO_VALUE 24
#define MPI_ERR_INFO_NOKEY 25
#define MPI_ERR_SPAWN 26
#define MPI_ERR_PORT 27
#define MPI_ERR_SERVICE 28
#define MPI_ERR_NAME 29
#define MPI_ERR_WIN 30
#define MPI_ERR_SIZE 31
#define MPI_ERR_DISP 32
#define MPI_ERR_INFO 33
#define MPI_ERR_LOCKTYPE 34
#define MPI_ERR_ASSERT 35
#define MPI_ERR_RMA_CONFLICT 36
#define MPI_ERR_RMA_SYNC 37
#define MPI_ERR_UNSUPPORTED_OPERATION 44
#define MPIX_ERR_PROC_FAILED 54 /* a peer process died (ULFM's name) */
#define MPI_ERR_SESSION 55
#define MPI_ERR_RMA_RANGE 56
#define MPI_ERR_RMA_ATTACH 57
#define MPI_ERR_RMA_SHARED 58
#define MPI_ERR_RMA_FLAVOR 59
#define MPI_ERR_LASTCODE 63

/* ---- Callback types ---- */
typedef void MPI_User_function(void* invec, void* inoutvec, int* len,
                               MPI_Datatype* datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm* comm, int* error_code,
                                          ...);
/* Attribute callbacks (MPI_Comm_create_keyval). */
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval,
                                        void* extra_state,
                                        void* attribute_val_in,
                                        void* attribute_val_out, int* flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval,
                                          void* attribute_val,
                                          void* extra_state);
/* The predefined callbacks: NULL_COPY does not copy (flag = 0), DUP copies
 * the value (flag = 1), NULL_DELETE does nothing; all return MPI_SUCCESS. */
int rondo_mpi_comm_null_copy_fn(MPI_Comm oldcomm, int comm_keyval,
                                void* extra_state, void* attribute_val_in,
                                void* attribute_val_out, int* flag);
int rondo_mpi_comm_dup_fn(MPI_Comm oldcomm, int comm_keyval,
                          void* extra_state, void* attribute_val_in,
                          void* attribute_val_out, int* flag);
int rondo_mpi_comm_null_delete_fn(MPI_Comm comm, int comm_keyval,
                                  void* attribute_val, void* extra_state);
#define MPI_COMM_NULL_COPY_FN rondo_mpi_comm_null_copy_fn
#define MPI_COMM_DUP_FN rondo_mpi_comm_dup_fn
#define MPI_COMM_NULL_DELETE_FN rondo_mpi_comm_null_delete_fn

/* ---- Environment ---- */
int MPI_Init(int* argc, char*** argv);
int MPI_Init_thread(int* argc, char*** argv, int required, int* provided);
int MPI_Initialized(int* flag);
int MPI_Finalize(void);
int MPI_Finalized(int* flag);
int MPI_Abort(MPI_Comm comm, int errorcode);
double MPI_Wtime(void);
double MPI_Wtick(void);
int MPI_Get_processor_name(char* name, int* resultlen);
int MPI_Get_version(int* version, int* subversion);
int MPI_Get_library_version(char* version, int* resultlen);
int MPI_Query_thread(int* provided);
int MPI_Is_thread_main(int* flag);
/* Profiling control (MPI-4 §15.2.4): accepted at any level, does nothing
 * (Rondo has no profiling of its own; a PMPI tool may define it). */
int MPI_Pcontrol(const int level, ...);

/* ---- Errors ---- */
int MPI_Error_string(int errorcode, char* string, int* resultlen);
int MPI_Error_class(int errorcode, int* errorclass);
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler);
int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function,
                               MPI_Errhandler* errhandler);
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
int MPI_Errhandler_free(MPI_Errhandler* errhandler);
/* User error classes and codes (MPI-4 §9.5): values above
 * MPI_ERR_LASTCODE, known to MPI_Error_class and MPI_Error_string; the
 * MPI_LASTUSEDCODE attribute of MPI_COMM_WORLD is the largest one. */
int MPI_Add_error_class(int* errorclass);
int MPI_Add_error_code(int errorclass, int* errorcode);
int MPI_Add_error_string(int errorcode, const char* string);

/* ---- Point-to-point ---- */
int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest,
             int tag, MPI_Comm comm);
int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm);
int MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm);
#define MPI_BSEND_OVERHEAD 64
int MPI_Buffer_attach(void* buffer, int size);
int MPI_Buffer_detach(void* buffer_addr, int* size);
int MPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm);
int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source,
             int tag, MPI_Comm comm, MPI_Status* status);
int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source,
              int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 int dest, int sendtag, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status);
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype,
                         int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status);
/* MPI-4: one request for a send and a receive; it completes when both have
 * (its status is the receive's). The replace form sends a copy of buf
 * made by the call. MPI_Cancel does not cancel them. */
int MPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  int dest, int sendtag, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Request* request);
int MPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype,
                          int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Request* request);
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag,
               MPI_Status* status);
int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype,
                  int* count);
int MPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype,
                     int* count);
int MPI_Wait(MPI_Request* request, MPI_Status* status);
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int MPI_Waitany(int count, MPI_Request requests[], int* index,
                MPI_Status* status);
int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]);
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status);
int MPI_Testall(int count, MPI_Request requests[], int* flag,
                MPI_Status statuses[]);
int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                MPI_Status* status);
int MPI_Testsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]);
int MPI_Request_free(MPI_Request* request);
int MPI_Request_get_status(MPI_Request request, int* flag,
                           MPI_Status* status);
int MPI_Cancel(MPI_Request* request);

/* Persistent point-to-point: an inactive request, started by MPI_Start or
 * MPI_Startall, completed by the wait and test calls (which leave it
 * inactive, its handle kept), freed by MPI_Request_free. */
int MPI_Send_init(const void* buf, int count, MPI_Datatype datatype,
                  int dest, int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source,
                  int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Start(MPI_Request* request);
int MPI_Startall(int count, MPI_Request requests[]);
int MPI_Test_cancelled(const MPI_Status* status, int* flag);
int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag,
                MPI_Message* message, MPI_Status* status);
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
               MPI_Status* status);
int MPI_Mrecv(void* buf, int count, MPI_Datatype datatype,
              MPI_Message* message, MPI_Status* status);
int MPI_Imrecv(void* buf, int count, MPI_Datatype datatype,
               MPI_Message* message, MPI_Request* request);
int MPI_Status_set_cancelled(MPI_Status* status, int flag);
int MPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype,
                            int count);
int MPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype,
                              MPI_Count count);
int MPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype,
                       MPI_Count* count);

/* ---- Collectives, blocking ---- */
int MPI_Barrier(MPI_Comm comm);
int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root,
              MPI_Comm comm);
int MPI_Reduce(const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
               MPI_Comm comm);
int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, const int recvcounts[], const int displs[],
                MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype,
                int root, MPI_Comm comm);
int MPI_Scatterv(const void* sendbuf, const int sendcounts[],
                 const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm);
int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm);
int MPI_Allgatherv(const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[],
                   MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm);
int MPI_Alltoallv(const void* sendbuf, const int sendcounts[],
                  const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallw(const void* sendbuf, const int sendcounts[],
                  const int sdispls[], const MPI_Datatype sendtypes[],
                  void* recvbuf, const int recvcounts[], const int rdispls[],
                  const MPI_Datatype recvtypes[], MPI_Comm comm);
int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf,
                       const int recvcounts[], MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf,
                             int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm);
int MPI_Scan(const void* sendbuf, void* recvbuf, int count,
             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Exscan(const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Reduce_local(const void* inbuf, void* inoutbuf, int count,
                     MPI_Datatype datatype, MPI_Op op);

/* ---- Collectives, nonblocking (they progress in the background) ---- */
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request);
int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root,
               MPI_Comm comm, MPI_Request* request);
int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* request);
int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request);
int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype,
                int root, MPI_Comm comm, MPI_Request* request);
int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request);
int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm, MPI_Request* request);
int MPI_Iscatterv(const void* sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request);
int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request* request);
int MPI_Iallgatherv(const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request);
int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm, MPI_Request* request);
int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int rdispls[],
                   MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request);
int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm, MPI_Request* request);
int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf,
                        const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Request* request);
int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf,
                              int recvcount, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm,
                              MPI_Request* request);
int MPI_Iscan(const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request* request);
int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                MPI_Request* request);

/* Persistent collectives (MPI-4): each *_init is a collective call that
 * checks the arguments and prepares the schedule once; MPI_Start runs it
 * (in the background, as a nonblocking collective), and the request is
 * inactive again once completed. The buffers and arrays must stay valid
 * until MPI_Request_free. `info` is accepted and ignored. */
int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request);
int MPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root,
                   MPI_Comm comm, MPI_Info info, MPI_Request* request);
int MPI_Reduce_init(const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, int root,
                    MPI_Comm comm, MPI_Info info, MPI_Request* request);
int MPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                       MPI_Info info, MPI_Request* request);
int MPI_Scan_init(const void* sendbuf, void* recvbuf, int count,
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                  MPI_Info info, MPI_Request* request);
int MPI_Exscan_init(const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Info info, MPI_Request* request);
int MPI_Gather_init(const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request* request);
int MPI_Gatherv_init(const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[],
                     MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request* request);
int MPI_Allgather_init(const void* sendbuf, int sendcount,
                       MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request);
int MPI_Allgatherv_init(const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf,
                        const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request);
int MPI_Scatter_init(const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request* request);
int MPI_Scatterv_init(const void* sendbuf, const int sendcounts[],
                      const int displs[], MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request* request);
int MPI_Alltoall_init(const void* sendbuf, int sendcount,
                      MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request* request);
int MPI_Alltoallv_init(const void* sendbuf, const int sendcounts[],
                       const int sdispls[], MPI_Datatype sendtype,
                       void* recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request);
int MPI_Alltoallw_init(const void* sendbuf, const int sendcounts[],
                       const int sdispls[], const MPI_Datatype sendtypes[],
                       void* recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[],
                       MPI_Comm comm, MPI_Info info, MPI_Request* request);
int MPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf,
                            const int recvcounts[], MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request* request);
int MPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf,
                                  int recvcount, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request);

/* ---- Neighbourhood collectives (MPI-3; the _init forms MPI-4) ----
 * On a communicator with a cartesian, graph or distributed graph topology:
 * each rank sends one block to each out-neighbour and receives one block
 * from each in-neighbour, in the order MPI_Cart_shift (for each dimension,
 * the -1 then the +1 neighbour), MPI_Graph_neighbors or
 * MPI_Dist_graph_neighbors gives them. MPI_PROC_NULL neighbours of a
 * non-periodic grid leave their block untouched. MPI_IN_PLACE is not
 * allowed. The nonblocking and persistent forms progress in the
 * background like the other nonblocking collectives. */
int MPI_Neighbor_allgather(const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype,
                           MPI_Comm comm);
int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount,
                          MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype,
                           void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm);
int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                           const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf,
                           const int recvcounts[], const MPI_Aint rdispls[],
                           const MPI_Datatype recvtypes[], MPI_Comm comm);
int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request* request);
int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount,
                             MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request);
int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Request* request);
int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                            const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request* request);
int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf,
                            const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request* request);
int MPI_Neighbor_allgather_init(const void* sendbuf, int sendcount,
                                MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Info info,
                                MPI_Request* request);
int MPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount,
                                 MPI_Datatype sendtype, void* recvbuf,
                                 const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request);
int MPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount,
                               MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Info info,
                               MPI_Request* request);
int MPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[],
                                const int sdispls[], MPI_Datatype sendtype,
                                void* recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Info info,
                                MPI_Request* request);
int MPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf,
                                const int recvcounts[],
                                const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm comm,
                                MPI_Info info, MPI_Request* request);

/* ---- Communicators and groups ---- */
int MPI_Comm_rank(MPI_Comm comm, int* rank);
int MPI_Comm_size(MPI_Comm comm, int* size);
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm);
/* The new communicator is made at once: the request is complete. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request);
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                            MPI_Request* request);
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm);
/* Hints are kept, not interpreted: MPI_Comm_get_info gives back the ones
 * set (MPI_Comm_set_info adds to them; MPI_Comm_dup copies them). */
int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info);
int MPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used);
/* No dynamic processes: always MPI_COMM_NULL. */
int MPI_Comm_get_parent(MPI_Comm* parent);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm);
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key,
                        MPI_Info info, MPI_Comm* newcomm);
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm);
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                          MPI_Comm* newcomm);
int MPI_Comm_free(MPI_Comm* comm);
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result);
int MPI_Comm_group(MPI_Comm comm, MPI_Group* group);
int MPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen);
int MPI_Comm_set_name(MPI_Comm comm, const char* comm_name);
int MPI_Comm_test_inter(MPI_Comm comm, int* flag);
int MPI_Comm_remote_size(MPI_Comm comm, int* size);
int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val,
                      int* flag);
/* Attributes with user keys: MPI_Comm_dup runs the copy callbacks,
 * MPI_Comm_free, MPI_Comm_delete_attr and a new value for a key the delete
 * callback; MPI_Finalize deletes MPI_COMM_SELF's attributes, then
 * MPI_COMM_WORLD's, each in the reverse order they were set. */
int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function* comm_delete_attr_fn,
                           int* comm_keyval, void* extra_state);
int MPI_Comm_free_keyval(int* comm_keyval);
int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val);
int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval);
int MPI_Group_size(MPI_Group group, int* size);
int MPI_Group_rank(MPI_Group group, int* rank);
int MPI_Group_incl(MPI_Group group, int n, const int ranks[],
                   MPI_Group* newgroup);
int MPI_Group_excl(MPI_Group group, int n, const int ranks[],
                   MPI_Group* newgroup);
int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
                         MPI_Group* newgroup);
int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
                         MPI_Group* newgroup);
/* Order (MPI-4 §7.3.2): union is group1 then the rest of group2 in
 * group2's order; intersection and difference keep group1's order. */
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup);
int MPI_Group_intersection(MPI_Group group1, MPI_Group group2,
                           MPI_Group* newgroup);
int MPI_Group_difference(MPI_Group group1, MPI_Group group2,
                         MPI_Group* newgroup);
int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
                              MPI_Group group2, int ranks2[]);
int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result);
int MPI_Group_free(MPI_Group* group);

/* ---- Process topologies (minimal but correct) ---- */
int MPI_Dims_create(int nnodes, int ndims, int dims[]);
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                    const int periods[], int reorder, MPI_Comm* comm_cart);
int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
int MPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank);
int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
                 int coords[]);
int MPI_Cartdim_get(MPI_Comm comm, int* ndims);
int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source,
                   int* rank_dest);
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm);
int MPI_Topo_test(MPI_Comm comm, int* status);
int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
                     const int edges[], int reorder, MPI_Comm* comm_graph);
int MPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges);
int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[],
                  int edges[]);
int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors);
int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors,
                        int neighbors[]);
int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                   const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[],
                                   const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph);
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                          const int degrees[], const int destinations[],
                          const int weights[], MPI_Info info, int reorder,
                          MPI_Comm* comm_dist_graph);
int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree,
                                   int* outdegree, int* weighted);
int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                             int sourceweights[], int maxoutdegree,
                             int destinations[], int destweights[]);

/* ---- Datatypes ---- */
int MPI_Type_contiguous(int count, MPI_Datatype oldtype,
                        MPI_Datatype* newtype);
int MPI_Type_vector(int count, int blocklength, int stride,
                    MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                            MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_indexed(int count, const int blocklengths[],
                     const int displacements[], MPI_Datatype oldtype,
                     MPI_Datatype* newtype);
int MPI_Type_create_hindexed(int count, const int blocklengths[],
                             const MPI_Aint displacements[],
                             MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_create_indexed_block(int count, int blocklength,
                                  const int displacements[],
                                  MPI_Datatype oldtype,
                                  MPI_Datatype* newtype);
int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[],
                                   MPI_Datatype oldtype,
                                   MPI_Datatype* newtype);
int MPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                             const int array_of_subsizes[],
                             const int array_of_starts[], int order,
                             MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_create_struct(int count, const int blocklengths[],
                           const MPI_Aint displacements[],
                           const MPI_Datatype types[],
                           MPI_Datatype* newtype);
int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb,
                            MPI_Aint extent, MPI_Datatype* newtype);
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_commit(MPI_Datatype* datatype);
int MPI_Type_free(MPI_Datatype* datatype);
int MPI_Type_size(MPI_Datatype datatype, int* size);
int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size);
int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb,
                        MPI_Aint* extent);
int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb,
                          MPI_Count* extent);
int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb,
                               MPI_Count* true_extent);
int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
                          int max_addresses, int max_datatypes,
                          int array_of_integers[],
                          MPI_Aint array_of_addresses[],
                          MPI_Datatype array_of_datatypes[]);
int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb,
                             MPI_Aint* true_extent);
int MPI_Type_get_name(MPI_Datatype datatype, char* type_name,
                      int* resultlen);
int MPI_Type_set_name(MPI_Datatype datatype, const char* type_name);
int MPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers,
                          int* num_addresses, int* num_datatypes,
                          int* combiner);
int MPI_Get_address(const void* location, MPI_Aint* address);
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype,
             void* outbuf, int outsize, int* position, MPI_Comm comm);
int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
               int outcount, MPI_Datatype datatype, MPI_Comm comm);
int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm,
                  int* size);

/* ---- Reduction operations ---- */
int MPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op);
int MPI_Op_free(MPI_Op* op);
int MPI_Op_commutative(MPI_Op op, int* commute);

/* ---- Info (kept, not interpreted; keys in the order they were set) ---- */
int MPI_Info_create(MPI_Info* info);
int MPI_Info_set(MPI_Info info, const char* key, const char* value);
int MPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value,
                 int* flag);
int MPI_Info_free(MPI_Info* info);
int MPI_Info_dup(MPI_Info info, MPI_Info* newinfo);
int MPI_Info_delete(MPI_Info info, const char* key);
int MPI_Info_get_nkeys(MPI_Info info, int* nkeys);
/* Keys are numbered in the order they were first set. */
int MPI_Info_get_nthkey(MPI_Info info, int n, char* key);
int MPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen,
                          int* flag);
/* MPI-4: *buflen in: the room at value (terminator included); out: the
 * room the whole value needs. A longer value is cut to *buflen - 1. */
int MPI_Info_get_string(MPI_Info info, const char* key, int* buflen,
                        char* value, int* flag);

/* ---- Handle conversion (for Fortran bindings and layers such as
 * mpi4py). Handles are ints, so c2f is the identity; f2c gives the handle
 * back when it names a live object of that kind and the kind's null
 * handle otherwise (no error is raised, as MPI-4 §19.3.4 asks). ---- */
MPI_Fint MPI_Comm_c2f(MPI_Comm comm);
MPI_Comm MPI_Comm_f2c(MPI_Fint comm);
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype);
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype);
MPI_Fint MPI_Group_c2f(MPI_Group group);
MPI_Group MPI_Group_f2c(MPI_Fint group);
MPI_Fint MPI_Request_c2f(MPI_Request request);
MPI_Request MPI_Request_f2c(MPI_Fint request);
MPI_Fint MPI_Op_c2f(MPI_Op op);
MPI_Op MPI_Op_f2c(MPI_Fint op);
MPI_Fint MPI_Info_c2f(MPI_Info info);
MPI_Info MPI_Info_f2c(MPI_Fint info);
MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler errhandler);
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint errhandler);
MPI_Fint MPI_Message_c2f(MPI_Message message);
MPI_Message MPI_Message_f2c(MPI_Fint message);
MPI_Fint MPI_Session_c2f(MPI_Session session);
MPI_Session MPI_Session_f2c(MPI_Fint session);
MPI_Fint MPI_Win_c2f(MPI_Win win);
MPI_Win MPI_Win_f2c(MPI_Fint win);

/* ---- MPI-4 sessions (ch. 11.3; docs/mpi.md "Sessions") ----
 * Process sets: "mpi://WORLD" and "mpi://SELF". A program may use
 * sessions without MPI_Init, and both together. */
#define MPI_MAX_PSET_NAME_LEN 256
#define MPI_MAX_STRINGTAG_LEN 256
typedef void MPI_Session_errhandler_function(MPI_Session* session,
                                             int* error_code, ...);
int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler,
                     MPI_Session* session);
int MPI_Session_finalize(MPI_Session* session);
int MPI_Session_get_num_psets(MPI_Session session, MPI_Info info,
                              int* npset_names);
int MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n,
                             int* pset_len, char* pset_name);
int MPI_Session_get_pset_info(MPI_Session session, const char* pset_name,
                              MPI_Info* info);
int MPI_Session_get_info(MPI_Session session, MPI_Info* info_used);
int MPI_Group_from_session_pset(MPI_Session session, const char* pset_name,
                                MPI_Group* newgroup);
int MPI_Comm_create_from_group(MPI_Group group, const char* stringtag,
                               MPI_Info info, MPI_Errhandler errhandler,
                               MPI_Comm* newcomm);
int MPI_Session_create_errhandler(
    MPI_Session_errhandler_function* session_errhandler_fn,
    MPI_Errhandler* errhandler);
int MPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler);
int MPI_Session_get_errhandler(MPI_Session session,
                               MPI_Errhandler* errhandler);
int MPI_Session_call_errhandler(MPI_Session session, int errorcode);

/* ---- One-sided communication (MPI-4.1 ch. 12; docs/mpi.md "One-sided")
 * Every operation is an active message that the target's engine serves in
 * the background (passive-target progress without MPI calls there). ---- */
#define MPI_WIN_BASE 8
#define MPI_WIN_SIZE 9
#define MPI_WIN_DISP_UNIT 10
#define MPI_WIN_CREATE_FLAVOR 11
#define MPI_WIN_MODEL 12
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED 235
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOSTORE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384
typedef void MPI_Win_errhandler_function(MPI_Win* win, int* error_code, ...);
int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                   MPI_Comm comm, MPI_Win* win);
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                     MPI_Comm comm, void* baseptr, MPI_Win* win);
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                            MPI_Comm comm, void* baseptr, MPI_Win* win);
int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size,
                         int* disp_unit, void* baseptr);
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win);
int MPI_Win_attach(MPI_Win win, void* base, MPI_Aint size);
int MPI_Win_detach(MPI_Win win, const void* base);
int MPI_Win_free(MPI_Win* win);
int MPI_Win_get_group(MPI_Win win, MPI_Group* group);
int MPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val,
                     int* flag);
int MPI_Win_set_name(MPI_Win win, const char* win_name);
int MPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen);
int MPI_Win_set_info(MPI_Win win, MPI_Info info);
int MPI_Win_get_info(MPI_Win win, MPI_Info* info_used);
int MPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn,
                              MPI_Errhandler* errhandler);
int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler);
int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler);
int MPI_Win_call_errhandler(MPI_Win win, int errorcode);
int MPI_Put(const void* origin_addr, int origin_count,
            MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win);
int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win);
int MPI_Accumulate(const void* origin_addr, int origin_count,
                   MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int MPI_Get_accumulate(const void* origin_addr, int origin_count,
                       MPI_Datatype origin_datatype, void* result_addr,
                       int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype,
                       MPI_Op op, MPI_Win win);
int MPI_Fetch_and_op(const void* origin_addr, void* result_addr,
                     MPI_Datatype datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win);
int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr,
                         void* result_addr, MPI_Datatype datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Win win);
int MPI_Rput(const void* origin_addr, int origin_count,
             MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request);
int MPI_Rget(void* origin_addr, int origin_count,
             MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request);
int MPI_Raccumulate(const void* origin_addr, int origin_count,
                    MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request* request);
int MPI_Rget_accumulate(const void* origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype,
                        MPI_Op op, MPI_Win win, MPI_Request* request);
int MPI_Win_fence(int assert, MPI_Win win);
int MPI_Win_post(MPI_Group group, int assert, MPI_Win win);
int MPI_Win_start(MPI_Group group, int assert, MPI_Win win);
int MPI_Win_complete(MPI_Win win);
int MPI_Win_wait(MPI_Win win);
int MPI_Win_test(MPI_Win win, int* flag);
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win);
int MPI_Win_unlock(int rank, MPI_Win win);
int MPI_Win_lock_all(int assert, MPI_Win win);
int MPI_Win_unlock_all(MPI_Win win);
int MPI_Win_flush(int rank, MPI_Win win);
int MPI_Win_flush_all(MPI_Win win);
int MPI_Win_flush_local(int rank, MPI_Win win);
int MPI_Win_flush_local_all(MPI_Win win);
int MPI_Win_sync(MPI_Win win);
/* Memory: plain malloc/free (no registration needed by the drivers). */
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr);
int MPI_Free_mem(void* base);

/* ---- Rondo extensions: split-tree collectives (docs/mpi.md) ----
 * The nonblocking bcast, reduce, gather, scatter and allreduce of a
 * communicator may run as split binomial trees: tree levels 1..S on the
 * application thread (inside the call for reduce/gather, inside
 * MPI_Wait/MPI_Test for bcast/scatter), the others on the progress threads
 * of the communication cores. Blocking collectives are never split. */
#define MPIX_SPLIT_DEFAULT (-3) /* follow RONDO_SPLIT_S (default auto) */
#define MPIX_SPLIT_OFF (-2)     /* no split: the default algorithms */
#define MPIX_SPLIT_AUTO (-1)    /* S from the model when the node has
                                   dedicated communication cores, else off */
/* s: MPIX_SPLIT_DEFAULT, MPIX_SPLIT_OFF, MPIX_SPLIT_AUTO or a level 0..31
 * (0: the whole tree on the communication cores). Local to the calling
 * process: every rank of the communicator must set the same value. */
int MPIX_Comm_set_split(MPI_Comm comm, int s);
/* The level S the next nonblocking collective on comm will use, for
 * constant-size trees (bcast, reduce, allreduce; doubling = 0) or
 * size-doubling ones (gather, scatter; doubling = 1); MPIX_SPLIT_OFF when it
 * will not be split. */
int MPIX_Comm_get_split(MPI_Comm comm, int doubling, int* s);

/* ---- Rondo extension: dynamic broadcast (docs/mpi.md) ----
 * Sends count elements of datatype at buf with tag to the n ranks of comm
 * in ranks[] (priorities[i], higher first, or NULL for all 0) along a
 * binomial tree unrolled by active messages; only this rank (the root) knows
 * the list. Every recipient receives the data with an ordinary
 * MPI_Recv/MPI_Irecv(source = the root, tag, comm), posted before or after
 * the data arrives; broadcasts and sends from the root to a recipient match
 * in the order the root issued them. The request completes when buf may be
 * reused. Errors: an empty list, a rank listed twice or the root itself
 * (MPI_ERR_RANK / MPI_ERR_ARG, with the offending entry named). */
int MPIX_Dynamic_bcast(const void* buf, int count, MPI_Datatype datatype,
                       int tag, const int ranks[], const int priorities[],
                       int n, MPI_Comm comm, MPI_Request* request);

/* ---- BEGIN PMPI: generated by tools/mpi_pmpi.py --write ---- */
/* The profiling interface (MPI-4 section 15.2): the same
 * functions under their PMPI_ names. */
int PMPI_Init(int* argc, char*** argv);
int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided);
int PMPI_Initialized(int* flag);
int PMPI_Finalize(void);
int PMPI_Finalized(int* flag);
int PMPI_Abort(MPI_Comm comm, int errorcode);
double PMPI_Wtime(void);
double PMPI_Wtick(void);
int PMPI_Get_processor_name(char* name, int* resultlen);
int PMPI_Get_version(int* version, int* subversion);
int PMPI_Get_library_version(char* version, int* resultlen);
int PMPI_Query_thread(int* provided);
int PMPI_Is_thread_main(int* flag);
int PMPI_Pcontrol(const int level, ...);
int PMPI_Error_string(int errorcode, char* string, int* resultlen);
int PMPI_Error_class(int errorcode, int* errorclass);
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler);
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function,
                                MPI_Errhandler* errhandler);
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
int PMPI_Errhandler_free(MPI_Errhandler* errhandler);
int PMPI_Add_error_class(int* errorclass);
int PMPI_Add_error_code(int errorclass, int* errorcode);
int PMPI_Add_error_string(int errorcode, const char* string);
int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm);
int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm);
int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm);
int PMPI_Buffer_attach(void* buffer, int size);
int PMPI_Buffer_detach(void* buffer_addr, int* size);
int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest,
                int tag, MPI_Comm comm, MPI_Request* request);
int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm);
int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source,
              int tag, MPI_Comm comm, MPI_Status* status);
int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request* request);
int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest,
                int tag, MPI_Comm comm, MPI_Request* request);
int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest,
                int tag, MPI_Comm comm, MPI_Request* request);
int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source,
               int tag, MPI_Comm comm, MPI_Request* request);
int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  int dest, int sendtag, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status);
int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype,
                          int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Status* status);
int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   int dest, int sendtag, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request* request);
int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype,
                           int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Request* request);
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag,
                MPI_Status* status);
int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype,
                   int* count);
int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype,
                      int* count);
int PMPI_Wait(MPI_Request* request, MPI_Status* status);
int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int PMPI_Waitany(int count, MPI_Request requests[], int* index,
                 MPI_Status* status);
int PMPI_Waitsome(int incount, MPI_Request requests[], int* outcount,
                  int indices[], MPI_Status statuses[]);
int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status);
int PMPI_Testall(int count, MPI_Request requests[], int* flag,
                 MPI_Status statuses[]);
int PMPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                 MPI_Status* status);
int PMPI_Testsome(int incount, MPI_Request requests[], int* outcount,
                  int indices[], MPI_Status statuses[]);
int PMPI_Request_free(MPI_Request* request);
int PMPI_Request_get_status(MPI_Request request, int* flag,
                            MPI_Status* status);
int PMPI_Cancel(MPI_Request* request);
int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Request* request);
int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Request* request);
int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Request* request);
int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Request* request);
int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source,
                   int tag, MPI_Comm comm, MPI_Request* request);
int PMPI_Start(MPI_Request* request);
int PMPI_Startall(int count, MPI_Request requests[]);
int PMPI_Test_cancelled(const MPI_Status* status, int* flag);
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag,
                 MPI_Message* message, MPI_Status* status);
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
                MPI_Status* status);
int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype,
               MPI_Message* message, MPI_Status* status);
int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype,
                MPI_Message* message, MPI_Request* request);
int PMPI_Status_set_cancelled(MPI_Status* status, int flag);
int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype,
                             int count);
int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype,
                               MPI_Count count);
int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype,
                        MPI_Count* count);
int PMPI_Barrier(MPI_Comm comm);
int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root,
               MPI_Comm comm);
int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm);
int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm);
int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm);
int PMPI_Scatterv(const void* sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm comm);
int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm);
int PMPI_Allgatherv(const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm);
int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int rdispls[],
                   MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm);
int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf,
                        const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm);
int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf,
                              int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm);
int PMPI_Scan(const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count,
                      MPI_Datatype datatype, MPI_Op op);
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request);
int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root,
                MPI_Comm comm, MPI_Request* request);
int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                 MPI_Request* request);
int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request* request);
int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm, MPI_Request* request);
int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int displs[],
                  MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request);
int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request* request);
int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[],
                   const int displs[], MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root,
                   MPI_Comm comm, MPI_Request* request);
int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, int recvcount, MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request);
int PMPI_Iallgatherv(const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[],
                     MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request);
int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request* request);
int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[],
                    const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int rdispls[],
                    MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request);
int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[],
                    const int sdispls[], const MPI_Datatype sendtypes[],
                    void* recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm comm, MPI_Request* request);
int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf,
                         const int recvcounts[], MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request* request);
int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf,
                               int recvcount, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm,
                               MPI_Request* request);
int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request* request);
int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request);
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request);
int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root,
                    MPI_Comm comm, MPI_Info info, MPI_Request* request);
int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request* request);
int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                        MPI_Info info, MPI_Request* request);
int PMPI_Scan_init(const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Info info, MPI_Request* request);
int PMPI_Exscan_init(const void* sendbuf, void* recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     MPI_Info info, MPI_Request* request);
int PMPI_Gather_init(const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request* request);
int PMPI_Gatherv_init(const void* sendbuf, int sendcount,
                      MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request* request);
int PMPI_Allgather_init(const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request);
int PMPI_Allgatherv_init(const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request* request);
int PMPI_Scatter_init(const void* sendbuf, int sendcount,
                      MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request* request);
int PMPI_Scatterv_init(const void* sendbuf, const int sendcounts[],
                       const int displs[], MPI_Datatype sendtype,
                       void* recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request);
int PMPI_Alltoall_init(const void* sendbuf, int sendcount,
                       MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request);
int PMPI_Alltoallv_init(const void* sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request);
int PMPI_Alltoallw_init(const void* sendbuf, const int sendcounts[],
                        const int sdispls[], const MPI_Datatype sendtypes[],
                        void* recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[],
                        MPI_Comm comm, MPI_Info info, MPI_Request* request);
int PMPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf,
                             const int recvcounts[], MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request* request);
int PMPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf,
                                   int recvcount, MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request);
int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm);
int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount,
                             MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                            const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm);
int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf,
                            const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm);
int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount,
                             MPI_Datatype sendtype, void* recvbuf,
                             int recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request);
int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount,
                              MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request* request);
int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request* request);
int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                             const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request);
int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                             const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf,
                             const int recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request* request);
int PMPI_Neighbor_allgather_init(const void* sendbuf, int sendcount,
                                 MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request);
int PMPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount,
                                  MPI_Datatype sendtype, void* recvbuf,
                                  const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Info info, MPI_Request* request);
int PMPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount,
                                MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Info info,
                                MPI_Request* request);
int PMPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[],
                                 const int sdispls[], MPI_Datatype sendtype,
                                 void* recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request);
int PMPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void* recvbuf,
                                 const int recvcounts[],
                                 const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request);
int PMPI_Comm_rank(MPI_Comm comm, int* rank);
int PMPI_Comm_size(MPI_Comm comm, int* size);
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm);
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request);
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                             MPI_Request* request);
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm);
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info);
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used);
int PMPI_Comm_get_parent(MPI_Comm* parent);
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm);
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key,
                         MPI_Info info, MPI_Comm* newcomm);
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm);
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                           MPI_Comm* newcomm);
int PMPI_Comm_free(MPI_Comm* comm);
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result);
int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group);
int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen);
int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name);
int PMPI_Comm_test_inter(MPI_Comm comm, int* flag);
int PMPI_Comm_remote_size(MPI_Comm comm, int* size);
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val,
                       int* flag);
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function* comm_delete_attr_fn,
                            int* comm_keyval, void* extra_state);
int PMPI_Comm_free_keyval(int* comm_keyval);
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val);
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval);
int PMPI_Group_size(MPI_Group group, int* size);
int PMPI_Group_rank(MPI_Group group, int* rank);
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[],
                    MPI_Group* newgroup);
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[],
                    MPI_Group* newgroup);
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
                          MPI_Group* newgroup);
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
                          MPI_Group* newgroup);
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup);
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2,
                            MPI_Group* newgroup);
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2,
                          MPI_Group* newgroup);
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
                               MPI_Group group2, int ranks2[]);
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result);
int PMPI_Group_free(MPI_Group* group);
int PMPI_Dims_create(int nnodes, int ndims, int dims[]);
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                     const int periods[], int reorder, MPI_Comm* comm_cart);
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank);
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
                  int coords[]);
int PMPI_Cartdim_get(MPI_Comm comm, int* ndims);
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source,
                    int* rank_dest);
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm);
int PMPI_Topo_test(MPI_Comm comm, int* status);
int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
                      const int edges[], int reorder, MPI_Comm* comm_graph);
int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges);
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[],
                   int edges[]);
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors);
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors,
                         int neighbors[]);
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                    const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[],
                                    const int destweights[], MPI_Info info,
                                    int reorder, MPI_Comm* comm_dist_graph);
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                           const int degrees[], const int destinations[],
                           const int weights[], MPI_Info info, int reorder,
                           MPI_Comm* comm_dist_graph);
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree,
                                    int* outdegree, int* weighted);
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                              int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[]);
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype,
                         MPI_Datatype* newtype);
int PMPI_Type_vector(int count, int blocklength, int stride,
                     MPI_Datatype oldtype, MPI_Datatype* newtype);
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                             MPI_Datatype oldtype, MPI_Datatype* newtype);
int PMPI_Type_indexed(int count, const int blocklengths[],
                      const int displacements[], MPI_Datatype oldtype,
                      MPI_Datatype* newtype);
int PMPI_Type_create_hindexed(int count, const int blocklengths[],
                              const MPI_Aint displacements[],
                              MPI_Datatype oldtype, MPI_Datatype* newtype);
int PMPI_Type_create_indexed_block(int count, int blocklength,
                                   const int displacements[],
                                   MPI_Datatype oldtype,
                                   MPI_Datatype* newtype);
int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype,
                                    MPI_Datatype* newtype);
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                              const int array_of_subsizes[],
                              const int array_of_starts[], int order,
                              MPI_Datatype oldtype, MPI_Datatype* newtype);
int PMPI_Type_create_struct(int count, const int blocklengths[],
                            const MPI_Aint displacements[],
                            const MPI_Datatype types[],
                            MPI_Datatype* newtype);
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb,
                             MPI_Aint extent, MPI_Datatype* newtype);
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype);
int PMPI_Type_commit(MPI_Datatype* datatype);
int PMPI_Type_free(MPI_Datatype* datatype);
int PMPI_Type_size(MPI_Datatype datatype, int* size);
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size);
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb,
                         MPI_Aint* extent);
int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb,
                           MPI_Count* extent);
int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb,
                                MPI_Count* true_extent);
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
                           int max_addresses, int max_datatypes,
                           int array_of_integers[],
                           MPI_Aint array_of_addresses[],
                           MPI_Datatype array_of_datatypes[]);
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb,
                              MPI_Aint* true_extent);
int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name,
                       int* resultlen);
int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name);
int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers,
                           int* num_addresses, int* num_datatypes,
                           int* combiner);
int PMPI_Get_address(const void* location, MPI_Aint* address);
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype,
              void* outbuf, int outsize, int* position, MPI_Comm comm);
int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
                int outcount, MPI_Datatype datatype, MPI_Comm comm);
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm,
                   int* size);
int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op);
int PMPI_Op_free(MPI_Op* op);
int PMPI_Op_commutative(MPI_Op op, int* commute);
int PMPI_Info_create(MPI_Info* info);
int PMPI_Info_set(MPI_Info info, const char* key, const char* value);
int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value,
                  int* flag);
int PMPI_Info_free(MPI_Info* info);
int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo);
int PMPI_Info_delete(MPI_Info info, const char* key);
int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys);
int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key);
int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen,
                           int* flag);
int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen,
                         char* value, int* flag);
MPI_Fint PMPI_Comm_c2f(MPI_Comm comm);
MPI_Comm PMPI_Comm_f2c(MPI_Fint comm);
MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype);
MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype);
MPI_Fint PMPI_Group_c2f(MPI_Group group);
MPI_Group PMPI_Group_f2c(MPI_Fint group);
MPI_Fint PMPI_Request_c2f(MPI_Request request);
MPI_Request PMPI_Request_f2c(MPI_Fint request);
MPI_Fint PMPI_Op_c2f(MPI_Op op);
MPI_Op PMPI_Op_f2c(MPI_Fint op);
MPI_Fint PMPI_Info_c2f(MPI_Info info);
MPI_Info PMPI_Info_f2c(MPI_Fint info);
MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler);
MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler);
MPI_Fint PMPI_Message_c2f(MPI_Message message);
MPI_Message PMPI_Message_f2c(MPI_Fint message);
MPI_Fint PMPI_Session_c2f(MPI_Session session);
MPI_Session PMPI_Session_f2c(MPI_Fint session);
MPI_Fint PMPI_Win_c2f(MPI_Win win);
MPI_Win PMPI_Win_f2c(MPI_Fint win);
int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler,
                      MPI_Session* session);
int PMPI_Session_finalize(MPI_Session* session);
int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info,
                               int* npset_names);
int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n,
                              int* pset_len, char* pset_name);
int PMPI_Session_get_pset_info(MPI_Session session, const char* pset_name,
                               MPI_Info* info);
int PMPI_Session_get_info(MPI_Session session, MPI_Info* info_used);
int PMPI_Group_from_session_pset(MPI_Session session, const char* pset_name,
                                 MPI_Group* newgroup);
int PMPI_Comm_create_from_group(MPI_Group group, const char* stringtag,
                                MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm* newcomm);
int PMPI_Session_create_errhandler(
     MPI_Session_errhandler_function* session_errhandler_fn,
     MPI_Errhandler* errhandler);
int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler);
int PMPI_Session_get_errhandler(MPI_Session session,
                                MPI_Errhandler* errhandler);
int PMPI_Session_call_errhandler(MPI_Session session, int errorcode);
int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                    MPI_Comm comm, MPI_Win* win);
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                      MPI_Comm comm, void* baseptr, MPI_Win* win);
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                             MPI_Comm comm, void* baseptr, MPI_Win* win);
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size,
                          int* disp_unit, void* baseptr);
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win);
int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size);
int PMPI_Win_detach(MPI_Win win, const void* base);
int PMPI_Win_free(MPI_Win* win);
int PMPI_Win_get_group(MPI_Win win, MPI_Group* group);
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val,
                      int* flag);
int PMPI_Win_set_name(MPI_Win win, const char* win_name);
int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen);
int PMPI_Win_set_info(MPI_Win win, MPI_Info info);
int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used);
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn,
                               MPI_Errhandler* errhandler);
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler);
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler);
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode);
int PMPI_Put(const void* origin_addr, int origin_count,
             MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win);
int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win);
int PMPI_Accumulate(const void* origin_addr, int origin_count,
                    MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int PMPI_Get_accumulate(const void* origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype,
                        MPI_Op op, MPI_Win win);
int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr,
                      MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win);
int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr,
                          void* result_addr, MPI_Datatype datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Win win);
int PMPI_Rput(const void* origin_addr, int origin_count,
              MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request);
int PMPI_Rget(void* origin_addr, int origin_count,
              MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request);
int PMPI_Raccumulate(const void* origin_addr, int origin_count,
                     MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request* request);
int PMPI_Rget_accumulate(const void* origin_addr, int origin_count,
                         MPI_Datatype origin_datatype, void* result_addr,
                         int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype,
                         MPI_Op op, MPI_Win win, MPI_Request* request);
int PMPI_Win_fence(int assert, MPI_Win win);
int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win);
int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win);
int PMPI_Win_complete(MPI_Win win);
int PMPI_Win_wait(MPI_Win win);
int PMPI_Win_test(MPI_Win win, int* flag);
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win);
int PMPI_Win_unlock(int rank, MPI_Win win);
int PMPI_Win_lock_all(int assert, MPI_Win win);
int PMPI_Win_unlock_all(MPI_Win win);
int PMPI_Win_flush(int rank, MPI_Win win);
int PMPI_Win_flush_all(MPI_Win win);
int PMPI_Win_flush_local(int rank, MPI_Win win);
int PMPI_Win_flush_local_all(MPI_Win win);
int PMPI_Win_sync(MPI_Win win);
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr);
int PMPI_Free_mem(void* base);
int PMPIX_Comm_set_split(MPI_Comm comm, int s);
int PMPIX_Comm_get_split(MPI_Comm comm, int doubling, int* s);
int PMPIX_Dynamic_bcast(const void* buf, int count, MPI_Datatype datatype,
                        int tag, const int ranks[], const int priorities[],
                        int n, MPI_Comm comm, MPI_Request* request);
/* ---- END PMPI ---- */

#ifdef __cplusplus
}
#endif

#endif /* RONDO_MPI_H_ */
